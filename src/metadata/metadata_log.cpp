#include "metadata/metadata_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include "base/assert.h"
#include "base/log.h"
#include "protocol/record/batch_splitter.h"
#include "protocol/record/record.h"
#include "protocol/record/record_batch_builder.h"

namespace weir::metadata {
namespace {

auto logger() { return log::get("metadata"); }

Status<StoreErrc> io_failure(std::string_view what, const std::filesystem::path& path) {
  const int err = errno;
  logger()->error("event=metadata_log_io_error {} {} {}", log::kv("op", what), log::kv("path", path.string()),
                  log::kv("error", std::error_code(err, std::generic_category()).message()));
  return unexpected(StoreErrc::io_error);
}

// Makes a directory entry durable: fsync of the directory holding it.
Status<StoreErrc> sync_directory(const std::filesystem::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return io_failure("open_dir", dir);
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) return io_failure("fsync_dir", dir);
  return {};
}

// The decoded records of one batch; corrupt_log if any record cannot be read.
Result<std::vector<MetadataRecord>, StoreErrc> decode_batch(const record::RecordBatchView& batch) {
  std::vector<MetadataRecord> records;
  std::optional<StoreErrc> failure;
  auto status = record::for_each_record(batch, [&](const record::RecordView& r) {
    if (failure) return;
    if (!r.value) {
      failure = StoreErrc::corrupt_log;
      return;
    }
    auto decoded = decode_record(*r.value);
    if (!decoded) {
      logger()->error("event=metadata_record_undecodable {} {}", log::kv("offset", batch.record_offset(r)),
                      log::kv("error", to_string(decoded.error())));
      failure = StoreErrc::corrupt_log;
      return;
    }
    records.push_back(std::move(decoded->record));
  });
  if (!status || failure) return unexpected(StoreErrc::corrupt_log);
  return records;
}

}  // namespace

// ---- PosixLogFile ---------------------------------------------------------------------------

Result<std::unique_ptr<PosixLogFile>, StoreErrc> PosixLogFile::open(const std::filesystem::path& path) {
  bool created = false;
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) {
    fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    created = fd >= 0;
  }
  if (fd < 0) return unexpected(io_failure("open", path).error());
  auto file = std::unique_ptr<PosixLogFile>(new PosixLogFile(fd, path));
  if (created) {
    if (auto ok = sync_directory(path.parent_path()); !ok) return unexpected(ok.error());
  }
  return file;
}

PosixLogFile::~PosixLogFile() { ::close(fd_); }

Result<std::vector<std::byte>, StoreErrc> PosixLogFile::read_all() {
  struct stat st{};
  if (::fstat(fd_, &st) != 0) return unexpected(io_failure("fstat", path_).error());
  std::vector<std::byte> bytes(static_cast<std::size_t>(st.st_size));
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::pread(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return unexpected(io_failure("pread", path_).error());
    if (n == 0) break;  // shrank meanwhile: read what is there
    done += static_cast<std::size_t>(n);
  }
  bytes.resize(done);
  return bytes;
}

Status<StoreErrc> PosixLogFile::append_and_sync(ByteSpan bytes) {
  struct stat st{};
  if (::fstat(fd_, &st) != 0) return io_failure("fstat", path_);
  auto at = static_cast<off_t>(st.st_size);
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::pwrite(fd_, bytes.data() + done, bytes.size() - done, at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return io_failure("pwrite", path_);
    done += static_cast<std::size_t>(n);
    at += n;
  }
  if (::fdatasync(fd_) != 0) return io_failure("fdatasync", path_);
  return {};
}

Status<StoreErrc> PosixLogFile::truncate_and_sync(std::uint64_t size) {
  if (::ftruncate(fd_, static_cast<off_t>(size)) != 0) return io_failure("ftruncate", path_);
  if (::fsync(fd_) != 0) return io_failure("fsync", path_);
  return {};
}

// ---- MetadataLog ----------------------------------------------------------------------------

Result<MetadataLog, StoreErrc> MetadataLog::open(const std::filesystem::path& log_dir, MetadataImage& image,
                                                 Options options) {
  const std::filesystem::path dir = log_dir / kMetadataLogDirName;
  std::error_code ec;
  const bool existed = std::filesystem::exists(dir, ec);
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    logger()->error("event=metadata_log_io_error op=mkdir {} {}", log::kv("path", dir.string()),
                    log::kv("error", ec.message()));
    return unexpected(StoreErrc::io_error);
  }
  if (!existed) {
    if (auto ok = sync_directory(log_dir); !ok) return unexpected(ok.error());
  }
  auto file = PosixLogFile::open(dir / kMetadataSegmentName);
  if (!file) return unexpected(file.error());
  return open(std::move(*file), image, options);
}

Result<MetadataLog, StoreErrc> MetadataLog::open(std::unique_ptr<LogFile> file, MetadataImage& image, Options options) {
  WEIR_ASSERT(file != nullptr);
  MetadataLog log(std::move(file), options);
  auto bytes = log.file_->read_all();
  if (!bytes) return unexpected(bytes.error());

  record::BatchSplitter splitter(*bytes);
  for (;;) {
    auto next = splitter.next();
    if (!next || !*next) break;  // bad framing or an incomplete batch: the tail starts here
    const record::RecordBatchView& batch = **next;
    if (!batch.validate(record::BatchOrigin::log) || batch.base_offset() != log.next_offset_) {
      break;
    }
    if (!batch.is_control()) {
      auto records = decode_batch(batch);
      if (!records) return unexpected(records.error());
      for (const auto& r : *records) {
        if (auto ok = image.replay(r); !ok) {
          logger()->error("event=metadata_replay_failed {} {}", log::kv("offset", batch.base_offset()),
                          log::kv("record", record_name(r)));
          return unexpected(StoreErrc::corrupt_log);
        }
      }
      log.recovery_.records += static_cast<std::int64_t>(records->size());
    }
    ++log.recovery_.batches;
    log.next_offset_ = batch.next_offset();
    log.size_bytes_ += batch.size_bytes();
  }
  if (log.size_bytes_ < bytes->size()) {
    log.recovery_.truncated_bytes = bytes->size() - log.size_bytes_;
    logger()->warn("event=metadata_log_truncated {} {}", log::kv("valid_bytes", log.size_bytes_),
                   log::kv("dropped_bytes", log.recovery_.truncated_bytes));
    if (auto ok = log.file_->truncate_and_sync(log.size_bytes_); !ok) {
      return unexpected(ok.error());
    }
  }
  return log;
}

Status<StoreErrc> MetadataLog::append(std::span<const MetadataRecord> records, std::int64_t timestamp_ms) {
  WEIR_ASSERT(!records.empty(), "empty metadata append");
  if (failed_) return unexpected(StoreErrc::log_failed);
  record::RecordBatchBuilder builder({.base_offset = next_offset_, .partition_leader_epoch = options_.leader_epoch});
  protocol::Bytes value;
  for (const auto& r : records) {
    value.clear();
    encode_record(r, default_version(r), value);
    builder.append(timestamp_ms, std::nullopt, std::as_bytes(std::span(value)));
    if (builder.size_bytes() > options_.max_batch_bytes) {
      return unexpected(StoreErrc::batch_too_large);
    }
  }
  const std::vector<std::byte> batch = builder.build();
  if (auto ok = file_->append_and_sync(batch); !ok) {
    // Whatever part of the batch reached the file is cut off again. Once that is synced the
    // file is what the last successful append left (a full disk that frees up takes appends
    // again); if it cannot be cut, what the file holds is unknown and the log refuses appends.
    if (!file_->truncate_and_sync(size_bytes_)) {
      failed_ = true;
      logger()->error("event=metadata_log_failed {}", log::kv("size_bytes", size_bytes_));
    }
    return unexpected(ok.error());
  }
  next_offset_ += static_cast<std::int64_t>(records.size());
  size_bytes_ += batch.size();
  return {};
}

}  // namespace weir::metadata
