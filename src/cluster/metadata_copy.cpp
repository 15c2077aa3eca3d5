#include "cluster/metadata_copy.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <system_error>

#include "protocol/record/batch_splitter.h"

namespace weir::cluster {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kDirName = "__cluster_metadata-0";
constexpr std::string_view kLogSuffix = ".log";
constexpr std::string_view kSnapshotSuffix = ".checkpoint";
constexpr std::string_view kPartSuffix = ".checkpoint.part";

std::string errno_text(std::string_view op, const fs::path& path) {
  return fmt::format("{} {}: {}", op, path.string(), std::strerror(errno));
}

// A whole string of decimal digits that fits T; nullopt otherwise (a file name is untrusted).
template <class T>
std::optional<T> parse_digits(std::string_view s) {
  if (s.empty() || !std::ranges::all_of(s, [](char c) { return c >= '0' && c <= '9'; })) return std::nullopt;
  T value{};
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc{} || end != s.data() + s.size()) return std::nullopt;
  return value;
}

// "<20 digits>.log" -> base offset.
std::optional<std::int64_t> parse_segment(const std::string& name) {
  if (name.size() != 20 + kLogSuffix.size() || !name.ends_with(kLogSuffix)) return std::nullopt;
  return parse_digits<std::int64_t>(std::string_view(name.data(), 20));
}

// "<20 digits>-<10 digits>.checkpoint" -> (end offset, epoch).
std::optional<std::pair<std::int64_t, std::int32_t>> parse_snapshot(const std::string& name) {
  if (name.size() != 31 + kSnapshotSuffix.size() || !name.ends_with(kSnapshotSuffix) || name[20] != '-') {
    return std::nullopt;
  }
  const auto offset = parse_digits<std::int64_t>(std::string_view(name.data(), 20));
  const auto epoch = parse_digits<std::int32_t>(std::string_view(name.data() + 21, 10));
  if (!offset || !epoch) return std::nullopt;
  return std::pair{*offset, *epoch};
}

Result<std::vector<std::uint8_t>, std::string> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return unexpected(errno_text("open", path));
  std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return unexpected(errno_text("read", path));
  return bytes;
}

Status<std::string> sync_dir(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return unexpected(errno_text("open", dir));
  const int rc = ::fsync(fd);
  const int saved = errno;
  ::close(fd);
  errno = saved;
  if (rc != 0) return unexpected(errno_text("fsync", dir));
  return {};
}

Status<std::string> write_all(int fd, const std::uint8_t* data, std::size_t size, const fs::path& path) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return unexpected(errno_text("write", path));
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return {};
}

// The index files Kafka keeps beside a segment.
std::vector<fs::path> index_files(const fs::path& segment) {
  std::vector<fs::path> out;
  for (const char* ext : {".index", ".timeindex", ".txnindex"}) {
    fs::path p = segment;
    p.replace_extension(ext);
    out.push_back(std::move(p));
  }
  return out;
}

// Removes the copy's files in `dir` (segments, snapshots, unfinished snapshots, index files),
// except `keep`; other files (a Kafka broker's quorum-state, ...) stay.
void remove_copy_files(const fs::path& dir, const fs::path& keep) {
  std::error_code ec;
  std::error_code ignored;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    const bool ours = parse_segment(name) || parse_snapshot(name) || name.ends_with(kPartSuffix) ||
                      name.ends_with(".index") || name.ends_with(".timeindex") || name.ends_with(".txnindex");
    if (ours && entry.path() != keep) fs::remove(entry.path(), ignored);
  }
}

ByteSpan as_bytes(const std::vector<std::uint8_t>& v) {
  return {reinterpret_cast<const std::byte*>(v.data()), v.size()};
}

}  // namespace

std::string metadata_segment_name(std::int64_t base_offset) { return fmt::format("{:020d}.log", base_offset); }

std::string metadata_snapshot_name(std::int64_t end_offset, std::int32_t epoch) {
  return fmt::format("{:020d}-{:010d}.checkpoint", end_offset, epoch);
}

MetadataCopy::MetadataCopy(MetadataCopyOptions options)
    : options_(std::move(options)), dir_(options_.log_dir / kDirName) {}

MetadataCopy::~MetadataCopy() {
  if (fd_ >= 0) ::close(fd_);
}

Result<std::unique_ptr<MetadataCopy>, std::string> MetadataCopy::open(MetadataCopyOptions options, Loaded& loaded) {
  std::unique_ptr<MetadataCopy> copy(new MetadataCopy(std::move(options)));
  const fs::path& dir = copy->dir_;
  std::error_code ec;
  std::error_code ignored;  // a leftover file that cannot be removed is left (it is never read)
  if (!fs::exists(dir, ec)) {
    fs::create_directories(dir, ec);
    if (ec) return unexpected(fmt::format("mkdir {}: {}", dir.string(), ec.message()));
    if (auto ok = sync_dir(copy->options_.log_dir); !ok) return unexpected(ok.error());
  }

  std::map<std::int64_t, fs::path> segments;
  std::map<std::pair<std::int64_t, std::int32_t>, fs::path> snapshots;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.ends_with(kPartSuffix)) {
      fs::remove(entry.path(), ignored);
      loaded.notes.push_back(fmt::format("removed the unfinished snapshot {}", name));
    } else if (auto base = parse_segment(name)) {
      segments.emplace(*base, entry.path());
    } else if (auto id = parse_snapshot(name)) {
      snapshots.emplace(*id, entry.path());
    }
  }
  if (ec) return unexpected(fmt::format("list {}: {}", dir.string(), ec.message()));

  auto remove_all = [&](const std::string& why) {
    for (const auto& [base, path] : segments) {
      fs::remove(path, ignored);
      for (const auto& idx : index_files(path)) fs::remove(idx, ignored);
    }
    for (const auto& [id, path] : snapshots) fs::remove(path, ignored);
    segments.clear();
    snapshots.clear();
    loaded.snapshot.reset();
    loaded.batches.clear();
    loaded.record_errors.clear();
    loaded.notes.push_back(why);
  };

  // The newest snapshot; older ones are not needed.
  std::int64_t expected = 0;
  if (!snapshots.empty()) {
    const auto [id, path] = *snapshots.rbegin();
    auto bytes = read_file(path);
    Result<MetadataBatch, client::Error> snap = unexpected(client::Error::protocol("unreadable"));
    if (bytes) snap = decode_metadata_snapshot(std::move(*bytes), id.first, id.second, loaded.record_errors);
    if (!snap) {
      remove_all(fmt::format("removed the local metadata copy: snapshot {} is unreadable ({})",
                             path.filename().string(), bytes ? snap.error().to_string() : bytes.error()));
    } else {
      loaded.snapshot = std::move(*snap);
      expected = id.first;
      for (auto it = snapshots.begin(); it != std::prev(snapshots.end());) {
        fs::remove(it->second, ignored);
        it = snapshots.erase(it);
      }
    }
  }
  // Segments wholly before the snapshot's end are covered by it.
  while (segments.size() > 1 && std::next(segments.begin())->first <= expected) {
    fs::remove(segments.begin()->second, ignored);
    for (const auto& idx : index_files(segments.begin()->second)) fs::remove(idx, ignored);
    segments.erase(segments.begin());
  }

  // The batches after the snapshot, up to the first that is torn or out of sequence.
  bool cut = false;
  for (auto it = segments.begin(); it != segments.end();) {
    if (cut) {
      loaded.notes.push_back(fmt::format("removed {} (after a cut)", it->second.filename().string()));
      fs::remove(it->second, ignored);
      for (const auto& idx : index_files(it->second)) fs::remove(idx, ignored);
      it = segments.erase(it);
      continue;
    }
    auto bytes = read_file(it->second);
    if (!bytes) return unexpected(bytes.error());
    record::BatchSplitter splitter(as_bytes(*bytes));
    std::size_t good = 0;
    std::string why;
    for (;;) {
      auto next = splitter.next();
      if (!next) {
        why = "corrupt batch framing";
        break;
      }
      if (!*next) {
        if (!splitter.remaining().empty()) why = "an incomplete batch";
        break;
      }
      const auto& view = **next;
      if (!view.validate(record::BatchOrigin::log)) {
        why = fmt::format("a bad CRC at offset {}", view.base_offset());
        break;
      }
      if (view.last_offset() < expected) {  // before the snapshot's end
        good = splitter.consumed_bytes();
        continue;
      }
      if (view.base_offset() != expected) {
        why = fmt::format("offset {} where {} was expected", view.base_offset(), expected);
        break;
      }
      std::vector<RecordError> errors;
      auto batch = decode_metadata_batch(view, errors);
      if (!batch) {
        why = batch.error().to_string();
        break;
      }
      for (auto& e : errors) loaded.record_errors.push_back(std::move(e));
      expected = view.next_offset();
      loaded.batches.push_back(std::move(*batch));
      good = splitter.consumed_bytes();
    }
    if (!why.empty() || good < bytes->size()) {
      cut = true;
      const std::uint64_t dropped = bytes->size() - good;
      loaded.dropped_bytes += dropped;
      loaded.notes.push_back(fmt::format("cut {} bytes from the end of {} ({})", dropped,
                                         it->second.filename().string(), why.empty() ? "a partial batch" : why));
      fs::resize_file(it->second, good, ec);
      if (ec) return unexpected(fmt::format("truncate {}: {}", it->second.string(), ec.message()));
    }
    ++it;
  }

  // Write on after the last segment (or start one where the copy ends). Segments holding nothing
  // after the snapshot (or an empty one not named where the copy ends) are replaced.
  if (loaded.batches.empty() && !segments.empty() && segments.rbegin()->first != expected) {
    for (const auto& [base, path] : segments) {
      fs::remove(path, ignored);
      for (const auto& idx : index_files(path)) fs::remove(idx, ignored);
    }
    segments.clear();
  }
  if (segments.empty()) {
    if (auto ok = copy->start_segment(expected); !ok) return unexpected(ok.error());
  } else {
    const auto& [base, path] = *segments.rbegin();
    for (const auto& idx : index_files(path)) fs::remove(idx, ignored);
    copy->segment_path_ = path;
    copy->fd_ = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    if (copy->fd_ < 0) return unexpected(errno_text("open", path));
    const auto size = fs::file_size(path, ec);
    copy->segment_bytes_ = ec ? 0 : size;
    if (cut) copy->dirty_ = true;  // the cut is made durable by the first sync
  }
  copy->next_offset_ = expected;
  return copy;
}

Status<std::string> MetadataCopy::start_segment(std::int64_t base_offset) {
  if (fd_ >= 0) ::close(fd_);
  segment_path_ = dir_ / metadata_segment_name(base_offset);
  fd_ = ::open(segment_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) return unexpected(errno_text("create", segment_path_));
  segment_bytes_ = 0;
  dirty_ = false;
  next_offset_ = base_offset;
  return sync_dir(dir_);
}

void MetadataCopy::stop(const std::string& why) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  remove_copy_files(dir_, {});
  notes_.push_back(why);
}

Status<std::string> MetadataCopy::write_snapshot(const MetadataBatch& snapshot) {
  const std::int64_t end = snapshot.last_offset + 1;
  const fs::path final_path = dir_ / metadata_snapshot_name(end, snapshot.epoch);
  fs::path part = final_path;
  part += ".part";
  const int fd = ::open(part.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return unexpected(errno_text("create", part));
  auto ok = write_all(fd, snapshot.raw.data(), snapshot.raw.size(), part);
  if (ok && ::fdatasync(fd) != 0) ok = unexpected(errno_text("fdatasync", part));
  ::close(fd);
  if (!ok) return ok;
  if (::rename(part.c_str(), final_path.c_str()) != 0) return unexpected(errno_text("rename", part));
  if (auto synced = sync_dir(dir_); !synced) return synced;
  // Everything before the snapshot goes; writing goes on in a segment starting at its end.
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  remove_copy_files(dir_, final_path);
  return start_segment(end);
}

Status<std::string> MetadataCopy::append(const MetadataBatch& batch) {
  if (batch.snapshot) {
    if (batch.raw.empty()) {
      stop("the local metadata copy stopped: a snapshot arrived without its bytes");
      return {};
    }
    if (auto ok = write_snapshot(batch); !ok) {
      stop(fmt::format("the local metadata copy stopped: {}", ok.error()));
      return ok;
    }
    return {};
  }
  if (fd_ < 0) return {};
  if (batch.last_offset < next_offset_) return {};  // held already (restored at start)
  if (batch.base_offset != next_offset_ || batch.raw.empty()) {
    stop(fmt::format("the local metadata copy stopped: batch at offset {} does not follow offset {}{}",
                     batch.base_offset, next_offset_, batch.raw.empty() ? " (cut by a truncation)" : ""));
    return {};
  }
  if (auto ok = write_all(fd_, batch.raw.data(), batch.raw.size(), segment_path_); !ok) {
    stop(fmt::format("the local metadata copy stopped: {}", ok.error()));
    return ok;
  }
  segment_bytes_ += batch.raw.size();
  next_offset_ = batch.last_offset + 1;
  dirty_ = true;
  if (segment_bytes_ > options_.max_bytes) {
    stop(fmt::format(
        "the local metadata copy stopped at {} bytes (limit {}): it is fetched from the quorum at the next start",
        segment_bytes_, options_.max_bytes));
  }
  return {};
}

Status<std::string> MetadataCopy::truncate(std::int64_t end_offset) {
  if (fd_ < 0 || end_offset >= next_offset_) return {};
  // Find the batch boundary at end_offset (rare: only a restored tail the quorum had not committed).
  auto bytes = read_file(segment_path_);
  if (!bytes) {
    stop(fmt::format("the local metadata copy stopped: {}", bytes.error()));
    return unexpected(bytes.error());
  }
  record::BatchSplitter splitter(as_bytes(*bytes));
  std::optional<std::size_t> at;
  for (;;) {
    const std::size_t position = splitter.consumed_bytes();
    auto next = splitter.next();
    if (!next || !*next) break;
    if ((**next).base_offset() == end_offset) {
      at = position;
      break;
    }
  }
  if (!at) {
    stop(fmt::format("the local metadata copy stopped: the quorum cut the log at offset {}, inside a batch",
                     end_offset));
    return {};
  }
  if (::ftruncate(fd_, static_cast<off_t>(*at)) != 0) {
    auto error = errno_text("ftruncate", segment_path_);
    stop(fmt::format("the local metadata copy stopped: {}", error));
    return unexpected(error);
  }
  segment_bytes_ = *at;
  next_offset_ = end_offset;
  dirty_ = true;
  return {};
}

Status<std::string> MetadataCopy::sync() {
  if (fd_ < 0 || !dirty_) return {};
  if (::fdatasync(fd_) != 0) {
    auto error = errno_text("fdatasync", segment_path_);
    stop(fmt::format("the local metadata copy stopped: {}", error));
    return unexpected(error);
  }
  dirty_ = false;
  return {};
}

}  // namespace weir::cluster
