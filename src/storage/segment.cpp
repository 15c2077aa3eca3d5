#include "storage/segment.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <limits>
#include <optional>
#include <vector>

#include "base/assert.h"
#include "base/log.h"
#include "protocol/record/record.h"
#include "protocol/record/record_batch.h"
#include "storage/batch_filter.h"

namespace weir::storage {

namespace fs = std::filesystem;

namespace {

constexpr std::int64_t kMaxRelativeOffset = std::numeric_limits<std::int32_t>::max();

Errc scan_error(ScanStop stop) { return stop == ScanStop::kIo ? Errc::kStorageError : Errc::kCorruptMessage; }

Result<TrackedFile, Errc> open_tracked(FileSystem& fs, const fs::path& path, OpenMode mode) {
  auto file = fs.open(path, mode);
  if (!file) return unexpected(file.error().not_found() ? Errc::kNotFound : Errc::kStorageError);
  return TrackedFile(std::move(*file));
}

std::int32_t epoch_or_unknown(std::int32_t epoch) { return epoch >= 0 ? epoch : -1; }

}  // namespace

std::string Segment::file_name(std::int64_t base_offset, std::string_view suffix) {
  return fmt::format("{:020}{}", base_offset, suffix);
}

std::optional<std::int64_t> Segment::parse_file_name(std::string_view name, std::string_view suffix) {
  if (!name.ends_with(suffix) || name.size() == suffix.size()) return std::nullopt;
  const std::string_view digits = name.substr(0, name.size() - suffix.size());
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) return std::nullopt;
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return value;
}

Segment::Segment(FileSystem& fs, const fs::path& dir, std::int64_t base_offset, const SegmentConfig& config,
                 std::int64_t created_ms, std::string_view suffix, TrackedFile log, TrackedFile index,
                 TrackedFile time_index)
    : fs_(fs),
      dir_(dir.native()),
      base_offset_(base_offset),
      config_(config),
      created_ms_(created_ms),
      suffix_(suffix),
      log_(std::move(log)),
      offset_index_(std::move(index), base_offset, max_index_entries(OffsetIndex::kEntrySize)),
      time_index_(std::move(time_index), base_offset, max_index_entries(TimeIndex::kEntrySize)),
      // A string joined here: a std::filesystem::path would be taken apart into its components
      // twice for every segment at start.
      txn_index_(fs, dir_ + (dir_.ends_with('/') ? "" : "/") + file_name(base_offset_, kTxnIndexSuffix) + suffix_) {}

Segment::~Segment() = default;

std::int64_t Segment::max_index_entries(std::size_t entry_size) const noexcept {
  return std::max<std::int64_t>(1, config_.segment_index_bytes / static_cast<std::int64_t>(entry_size));
}

fs::path Segment::path(std::string_view suffix) const {
  return fs::path(dir_) / (file_name(base_offset_, suffix) + suffix_);
}

Result<std::unique_ptr<Segment>, Errc> Segment::create(FileSystem& fs, const fs::path& dir, std::int64_t base_offset,
                                                       const SegmentConfig& config, std::int64_t created_ms,
                                                       std::string_view file_suffix) {
  WEIR_ASSERT(base_offset >= 0);
  auto name = [&](std::string_view kind) { return dir / (file_name(base_offset, kind) + std::string(file_suffix)); };
  auto log = open_tracked(fs, name(kLogSuffix), OpenMode::kCreateTruncate);
  if (!log) return unexpected(log.error());
  auto index = open_tracked(fs, name(kIndexSuffix), OpenMode::kCreateTruncate);
  if (!index) return unexpected(index.error());
  auto time = open_tracked(fs, name(kTimeIndexSuffix), OpenMode::kCreateTruncate);
  if (!time) return unexpected(time.error());
  if (auto removed = fs.remove(name(kTxnIndexSuffix)); !removed && !removed.error().not_found()) {
    return unexpected(Errc::kStorageError);
  }
  std::unique_ptr<Segment> segment(new Segment(fs, dir, base_offset, config, created_ms, file_suffix, std::move(*log),
                                               std::move(*index), std::move(*time)));
  if (!segment->offset_index_.reset({}) || !segment->time_index_.reset({})) return unexpected(Errc::kStorageError);
  segment->next_offset_ = base_offset;
  segment->max_timestamp_ = TimestampOffsetEntry{-1, base_offset};
  return segment;
}

Result<std::unique_ptr<Segment>, Errc> Segment::open(FileSystem& fs, const fs::path& dir, std::int64_t base_offset,
                                                     const SegmentConfig& config, std::int64_t created_ms,
                                                     IndexFiles present) {
  auto log = open_tracked(fs, dir / file_name(base_offset, kLogSuffix), OpenMode::kReadWrite);
  if (!log) return unexpected(log.error());
  bool missing = false;
  // An index the listing showed is opened as it is; one it did not (or that went since) is created.
  const auto open_index = [&](std::string_view suffix, bool listed) -> Result<TrackedFile, Errc> {
    const fs::path path = dir / file_name(base_offset, suffix);
    if (listed) {
      auto file = open_tracked(fs, path, OpenMode::kReadWrite);
      if (file || file.error() != Errc::kNotFound) return file;
    }
    missing = true;
    return open_tracked(fs, path, OpenMode::kCreate);
  };
  auto index = open_index(kIndexSuffix, present.offset_index);
  if (!index) return unexpected(index.error());
  auto time = open_index(kTimeIndexSuffix, present.time_index);
  if (!time) return unexpected(time.error());
  std::unique_ptr<Segment> segment(
      new Segment(fs, dir, base_offset, config, created_ms, {}, std::move(*log), std::move(*index), std::move(*time)));
  segment->indexes_missing_ = missing;
  if (present.txn_index) {
    if (auto ok = segment->txn_index_.open_existing(); !ok) return unexpected(ok.error());
  }
  return segment;
}

Result<std::unique_ptr<Segment>, Errc> Segment::restore(FileSystem& fs, const fs::path& dir,
                                                        const SegmentConfig& config, std::int64_t created_ms,
                                                        const SegmentSummary& summary) {
  const std::int64_t base_offset = summary.base_offset;
  const std::string log_name = file_name(base_offset, kLogSuffix);
  const std::string index_name = file_name(base_offset, kIndexSuffix);
  const std::string time_name = file_name(base_offset, kTimeIndexSuffix);
  const std::array<FileSystem::KnownFile, 3> known{{{log_name, OpenMode::kReadWrite, summary.log_bytes},
                                                    {index_name, OpenMode::kReadWrite, summary.offset_index_bytes},
                                                    {time_name, OpenMode::kReadWrite, summary.time_index_bytes}}};
  auto files = fs.open_known_in(dir, known);
  if (!files) return unexpected(files.error().not_found() ? Errc::kNotFound : Errc::kStorageError);
  std::unique_ptr<Segment> segment(new Segment(fs, dir, base_offset, config, created_ms, {},
                                               TrackedFile(std::move((*files)[0])), TrackedFile(std::move((*files)[1])),
                                               TrackedFile(std::move((*files)[2]))));
  if (summary.txn_index_bytes >= 0) {
    if (auto ok = segment->txn_index_.open_known(summary.txn_index_bytes); !ok) return unexpected(ok.error());
  }
  constexpr std::int64_t kUnknown = SegmentSummary::kUnknown;
  if (summary.next_offset != kUnknown) segment->next_offset_ = summary.next_offset;
  if (summary.max_timestamp != kUnknown && summary.max_timestamp_offset != kUnknown) {
    segment->max_timestamp_ = TimestampOffsetEntry{summary.max_timestamp, summary.max_timestamp_offset};
  }
  if (summary.first_batch_timestamp != kUnknown) segment->rolling_timestamp_ = summary.first_batch_timestamp;
  if (summary.bytes_since_index_entry >= 0) segment->bytes_since_last_index_entry_ = summary.bytes_since_index_entry;
  segment->unchanged_since_restore_ = true;
  return segment;
}

SegmentSummary Segment::summary() const {
  constexpr std::int64_t kUnknown = SegmentSummary::kUnknown;
  SegmentSummary s;
  s.base_offset = base_offset_;
  s.log_bytes = size_bytes();
  s.offset_index_bytes = offset_index_.file().file().size();
  s.time_index_bytes = time_index_.file().file().size();
  s.txn_index_bytes = txn_index_.exists() ? txn_index_.file().file().size() : -1;
  s.next_offset = next_offset_.value_or(kUnknown);
  if (max_timestamp_) {
    s.max_timestamp = max_timestamp_->timestamp;
    s.max_timestamp_offset = max_timestamp_->offset;
  }
  s.first_batch_timestamp = rolling_timestamp_.value_or(kUnknown);
  s.bytes_since_index_entry = next_offset_ ? bytes_since_last_index_entry_ : -1;
  return s;
}

Status<Errc> Segment::ensure_indexes() {
  if (offset_index_.loaded() && time_index_.loaded()) return {};
  if (!indexes_missing_) {
    auto loaded = offset_index_.load(size_bytes());
    if (loaded) loaded = time_index_.load();
    if (loaded) return {};
    if (loaded.error() != Errc::kCorruptMessage) return loaded;
    log::get("storage")->warn("event=index_corrupt {} action=rebuild", log::kv("segment", log_path().string()));
  } else {
    log::get("storage")->info("event=index_missing {} action=rebuild", log::kv("segment", log_path().string()));
  }
  auto recovered = recover();
  if (!recovered) return unexpected(recovered.error());
  return {};
}

Result<const OffsetIndex*, Errc> Segment::offset_index() {
  if (auto ok = ensure_indexes(); !ok) return unexpected(ok.error());
  return &offset_index_;
}

Result<const TimeIndex*, Errc> Segment::time_index() {
  if (auto ok = ensure_indexes(); !ok) return unexpected(ok.error());
  return &time_index_;
}

Result<std::int64_t, Errc> Segment::recover(const std::function<void(const BatchHeader&)>& on_batch) {
  BatchScanner scanner(log_.file(), 0, size_bytes(), BatchScanner::Mode::kVerify);
  std::vector<OffsetPosition> offsets;
  std::vector<TimestampOffsetEntry> times;
  TimestampOffsetEntry max{-1, base_offset_};
  std::int64_t since = 0;
  std::int64_t next = base_offset_;
  std::int64_t valid_end = 0;
  std::optional<std::int64_t> rolling;
  std::optional<ScanStop> stop;
  for (;;) {
    auto batch = scanner.next();
    if (!batch) {
      stop = batch.error();
      break;
    }
    if (!*batch) break;
    const BatchHeader& h = **batch;
    if (h.base_offset < next || h.last_offset() - base_offset_ > kMaxRelativeOffset) {
      stop = ScanStop::kCorrupt;
      break;
    }
    if (h.max_timestamp > max.timestamp) max = {h.max_timestamp, h.last_offset()};
    if (since > config_.index_interval_bytes) {
      offsets.push_back({h.last_offset(), h.position});
      if (max.timestamp > (times.empty() ? -1 : times.back().timestamp)) times.push_back(max);
      since = 0;
    }
    since += h.size;
    if (!rolling) rolling = h.max_timestamp;
    next = h.next_offset();
    valid_end = scanner.position();
    if (on_batch) on_batch(h);
  }
  if (stop == ScanStop::kIo) return unexpected(Errc::kStorageError);
  const std::int64_t cut = size_bytes() - valid_end;
  if (cut > 0) {
    log::get("storage")->warn("event=segment_truncated_on_recovery {} {} {} {}",
                              log::kv("segment", log_path().string()), log::kv("valid_bytes", valid_end),
                              log::kv("dropped_bytes", cut),
                              log::kv("reason", stop == ScanStop::kPartial ? "partial_batch" : "invalid_batch"));
    if (!log_.truncate(valid_end)) return unexpected(Errc::kStorageError);
  }
  // A cleanly closed segment ends with an entry for its largest timestamp; so does a recovered one.
  if (max.timestamp > (times.empty() ? -1 : times.back().timestamp)) times.push_back(max);
  if (!offset_index_.reset(offsets) || !time_index_.reset(times)) return unexpected(Errc::kStorageError);
  if (!txn_index_.truncate_to(next)) return unexpected(Errc::kStorageError);
  next_offset_ = next;
  max_timestamp_ = max;
  bytes_since_last_index_entry_ = since;
  rolling_timestamp_ = rolling;
  indexes_missing_ = false;
  unchanged_since_restore_ = false;
  return cut;
}

Status<Errc> Segment::scan_tail(std::int64_t from_position) {
  BatchScanner scanner(log_.file(), from_position, size_bytes(), BatchScanner::Mode::kHeaders);
  TimestampOffsetEntry max = max_timestamp_.value_or(TimestampOffsetEntry{-1, base_offset_});
  std::int64_t next = base_offset_;
  const std::optional<OffsetPosition> entry = offset_index_.last_entry();
  for (bool first = true;; first = false) {
    auto batch = scanner.next();
    if (!batch) return unexpected(scan_error(batch.error()));
    if (!*batch) break;
    const BatchHeader& h = **batch;
    if (h.base_offset < next || h.last_offset() - base_offset_ > kMaxRelativeOffset) {
      return unexpected(Errc::kCorruptMessage);
    }
    if (first && entry && from_position == entry->position && h.last_offset() != entry->offset) {
      return unexpected(Errc::kCorruptMessage);  // the index does not match the log
    }
    if (h.max_timestamp > max.timestamp) max = {h.max_timestamp, h.last_offset()};
    next = h.next_offset();
  }
  next_offset_ = next;
  max_timestamp_ = max;
  bytes_since_last_index_entry_ = size_bytes() - (entry ? entry->position : 0);
  return {};
}

Status<Errc> Segment::load_tail() {
  if (auto ok = ensure_indexes(); !ok) return ok;
  if (next_offset_) return {};  // ensure_indexes() recovered the segment
  max_timestamp_ = time_index_.last_entry();
  const std::optional<OffsetPosition> entry = offset_index_.last_entry();
  if (auto ok = scan_tail(entry ? entry->position : 0); !ok) return ok;
  return load_rolling_timestamp();
}

Status<Errc> Segment::load_rolling_timestamp() {
  rolling_timestamp_.reset();
  if (empty()) return {};
  BatchScanner first(log_.file(), 0, size_bytes(), BatchScanner::Mode::kHeaders);
  auto h = first.next();
  if (!h || !*h) return unexpected(Errc::kCorruptMessage);
  rolling_timestamp_ = (*h)->max_timestamp;
  return {};
}

Status<Errc> Segment::append(ByteSpan bytes, std::span<const BatchHeader> batches) {
  WEIR_ASSERT(next_offset_.has_value() && offset_index_.loaded() && time_index_.loaded(),
              "append to segment {} that is not active", base_offset_);
  WEIR_ASSERT(!batches.empty());
  const std::int64_t start = size_bytes();
  TimestampOffsetEntry max = max_timestamp_.value_or(TimestampOffsetEntry{-1, base_offset_});
  std::int64_t since = bytes_since_last_index_entry_;
  std::int64_t next = *next_offset_;
  std::vector<OffsetPosition> offsets;
  std::vector<TimestampOffsetEntry> times;
  for (const BatchHeader& h : batches) {
    WEIR_ASSERT(h.base_offset >= next, "batch at {} below next offset {}", h.base_offset, next);
    WEIR_ASSERT(h.last_offset() - base_offset_ <= kMaxRelativeOffset);
    if (h.max_timestamp > max.timestamp) max = {h.max_timestamp, h.last_offset()};
    if (since > config_.index_interval_bytes) {
      offsets.push_back({h.last_offset(), start + h.position});
      if (time_index_.would_append(max.timestamp, times)) times.push_back(max);
      since = 0;
    }
    since += h.size;
    next = h.next_offset();
  }
  unchanged_since_restore_ = false;
  if (!log_.append(bytes)) {
    append_failed_ = true;
    (void)log_.truncate(start);
    return unexpected(Errc::kStorageError);
  }
  if (!offset_index_.append(offsets)) {
    append_failed_ = true;
    (void)log_.truncate(start);
    return unexpected(Errc::kStorageError);
  }
  if (!time_index_.append(times)) {
    append_failed_ = true;
    (void)log_.truncate(start);
    if (!offsets.empty()) (void)offset_index_.truncate_to(offsets.front().offset);
    return unexpected(Errc::kStorageError);
  }
  if (start == 0) rolling_timestamp_ = batches.front().max_timestamp;
  max_timestamp_ = max;
  bytes_since_last_index_entry_ = since;
  next_offset_ = next;
  return {};
}

bool Segment::should_roll(const RollCheck& check) const {
  const std::int64_t size = size_bytes();
  if (size > 0 && size > check.segment_bytes - check.messages_bytes) return true;
  if (size > 0) {
    const std::int64_t waited = rolling_timestamp_ && *rolling_timestamp_ >= 0
                                    ? check.max_timestamp_in_messages - *rolling_timestamp_
                                    : check.now_ms - created_ms_;
    if (waited > check.segment_ms) return true;
  }
  if (offset_index_.full() || time_index_.full()) return true;
  return check.max_offset_in_messages - base_offset_ > kMaxRelativeOffset;
}

Status<Errc> Segment::on_roll() {
  if (auto ok = ensure_indexes(); !ok) return ok;
  if (!max_timestamp_ || !time_index_.would_append(max_timestamp_->timestamp, {})) return {};
  const TimestampOffsetEntry last = *max_timestamp_;
  return time_index_.append(std::span(&last, 1), /*ignore_full=*/true);
}

Result<std::optional<BatchHeader>, Errc> Segment::find_from(std::int64_t position, std::int64_t offset) {
  BatchScanner scanner(log_.file(), position, size_bytes(), BatchScanner::Mode::kHeaders);
  for (;;) {
    auto batch = scanner.next();
    if (!batch) return unexpected(scan_error(batch.error()));
    if (!*batch || (*batch)->last_offset() >= offset) return *batch;
  }
}

namespace {

// Reads the header of the batch at position; nullopt if there is none or it is not valid.
std::optional<BatchHeader> header_at(const File& file, std::int64_t position, std::int64_t end) {
  BatchScanner scanner(file, position, end, BatchScanner::Mode::kHeaders);
  auto batch = scanner.next();
  if (!batch || !*batch) return std::nullopt;
  return **batch;
}

}  // namespace

Result<Segment::ReadStart, Errc> Segment::start_for(std::int64_t offset) {
  if (auto ok = ensure_indexes(); !ok) return unexpected(ok.error());
  OffsetPosition entry = offset_index_.lookup(offset);
  if (entry.position == 0) return ReadStart{0};
  // Kafka's invariant: the batch an entry points at has the entry's offset as its last offset.
  const std::optional<BatchHeader> h = header_at(log_.file(), entry.position, size_bytes());
  if (h && h->last_offset() == entry.offset) return ReadStart{entry.position};
  log::get("storage")->warn("event=index_mismatch {} {} action=rebuild", log::kv("segment", log_path().string()),
                            log::kv("entry_offset", entry.offset));
  auto recovered = recover();
  if (!recovered) return unexpected(recovered.error());
  return ReadStart{offset_index_.lookup(offset).position};
}

Result<std::optional<BatchHeader>, Errc> Segment::find_batch(std::int64_t offset) {
  auto start = start_for(offset);
  if (!start) return unexpected(start.error());
  return find_from(start->position, offset);
}

Result<Segment::ReadRange, Errc> Segment::read(std::int64_t offset, std::int64_t max_bytes, std::int64_t max_offset,
                                               bool min_one_batch) {
  auto start = start_for(offset);
  if (!start) return unexpected(start.error());
  BatchScanner scanner(log_.file(), start->position, size_bytes(), BatchScanner::Mode::kHeaders);
  ReadRange range;
  std::optional<BatchHeader> first;
  while (!first) {
    auto batch = scanner.next();
    if (!batch) return unexpected(Errc::kStorageError);
    if (!*batch) {
      range.end_of_segment = true;
      return range;
    }
    if ((*batch)->last_offset() >= offset) first = **batch;
  }
  if (first->base_offset >= max_offset) return range;
  if (first->size > max_bytes && !min_one_batch) return range;
  range.position = first->position;
  range.size = first->size;
  range.next_offset = first->next_offset();
  if (first->size > max_bytes) return range;
  // The batches up to the last one the index shows to fit wholly are in the range without reading
  // their headers (a 1 MiB read of 16 KiB batches read 64 of them, one 8 KiB read each); the
  // scan resumes after it. Its header is read to check the entry, as start_for does.
  const std::int64_t limit = max_bytes > std::numeric_limits<std::int64_t>::max() - first->position
                                 ? std::numeric_limits<std::int64_t>::max()
                                 : first->position + max_bytes;
  std::optional<BatchScanner> skipped;
  if (auto entry = offset_index_.last_whole_within(limit, max_offset, size_bytes());
      entry && entry->position > first->position) {
    const std::optional<BatchHeader> h = header_at(log_.file(), entry->position, size_bytes());
    if (h && h->last_offset() == entry->offset && h->end_position() <= limit && h->base_offset < max_offset) {
      range.size = h->end_position() - first->position;
      range.next_offset = h->next_offset();
      skipped.emplace(log_.file(), h->end_position(), size_bytes(), BatchScanner::Mode::kHeaders);
    }
  }
  BatchScanner& rest = skipped ? *skipped : scanner;
  for (;;) {
    auto batch = rest.next();
    if (!batch) {
      log::get("storage")->warn("event=read_stopped_at_bad_batch {} {}", log::kv("segment", log_path().string()),
                                log::kv("position", rest.position()));
      return range;
    }
    if (!*batch) {
      range.end_of_segment = true;
      return range;
    }
    const BatchHeader& h = **batch;
    if (h.base_offset >= max_offset || range.size + h.size > max_bytes) return range;
    range.size += h.size;
    range.next_offset = h.next_offset();
  }
}

Result<std::optional<TimestampOffset>, Errc> Segment::find_offset_by_timestamp(std::int64_t timestamp,
                                                                               std::int64_t start_offset) {
  if (auto ok = ensure_indexes(); !ok) return unexpected(ok.error());
  const TimestampOffsetEntry entry = time_index_.lookup(timestamp);
  auto start = start_for(std::max(entry.offset, start_offset));
  if (!start) return unexpected(start.error());
  BatchScanner scanner(log_.file(), start->position, size_bytes(), BatchScanner::Mode::kHeaders);
  std::vector<std::byte> bytes;
  for (;;) {
    auto batch = scanner.next();
    if (!batch) return unexpected(scan_error(batch.error()));
    if (!*batch) return std::optional<TimestampOffset>();
    const BatchHeader& h = **batch;
    if (h.max_timestamp < timestamp || h.last_offset() < start_offset) continue;
    bytes.resize(static_cast<std::size_t>(h.size));
    auto n = log_.file().pread(h.position, bytes);
    if (!n || *n != bytes.size()) return unexpected(Errc::kStorageError);
    auto view = record::RecordBatchView::from(bytes);
    if (!view) return unexpected(Errc::kCorruptMessage);
    const std::int32_t epoch = epoch_or_unknown(h.partition_leader_epoch);
    if (view->is_compressed()) {
      // Records of compressed batches cannot be read without the codecs: the batch's first
      // offset (at or after start_offset) and its max timestamp stand in for the record.
      return std::optional<TimestampOffset>(
          TimestampOffset{h.max_timestamp, std::max(h.base_offset, start_offset), epoch});
    }
    std::optional<TimestampOffset> found;
    auto walked = record::for_each_record(*view, [&](const record::RecordView& r) {
      if (found) return;
      const std::int64_t ts = view->record_timestamp(r);
      const std::int64_t off = view->record_offset(r);
      if (ts >= timestamp && off >= start_offset) found = TimestampOffset{ts, off, epoch};
    });
    if (!walked) return unexpected(Errc::kCorruptMessage);
    if (found) return found;
  }
}

Result<TimestampOffsetEntry, Errc> Segment::max_timestamp_so_far() {
  if (max_timestamp_) return *max_timestamp_;
  auto last = time_index_.read_last_entry();
  if (!last && last.error() == Errc::kCorruptMessage) {
    if (auto ok = ensure_indexes(); !ok) return unexpected(ok.error());
    if (max_timestamp_) return *max_timestamp_;
    last = time_index_.last_entry();
  }
  if (!last) return unexpected(last.error());
  max_timestamp_ = last->value_or(TimestampOffsetEntry{-1, base_offset_});
  return *max_timestamp_;
}

Result<std::optional<TimestampOffset>, Errc> Segment::max_timestamp_record() {
  auto max = max_timestamp_so_far();
  if (!max) return unexpected(max.error());
  if (max->timestamp < 0) return std::optional<TimestampOffset>();
  auto start = start_for(max->offset);
  if (!start) return unexpected(start.error());
  BatchScanner scanner(log_.file(), start->position, size_bytes(), BatchScanner::Mode::kHeaders);
  std::vector<std::byte> bytes;
  for (;;) {
    auto batch = scanner.next();
    if (!batch) return unexpected(scan_error(batch.error()));
    if (!*batch) return std::optional<TimestampOffset>();
    const BatchHeader& h = **batch;
    if (h.max_timestamp != max->timestamp) continue;
    const std::int32_t epoch = epoch_or_unknown(h.partition_leader_epoch);
    TimestampOffset result{h.max_timestamp, h.base_offset, epoch};
    bytes.resize(static_cast<std::size_t>(h.size));
    auto n = log_.file().pread(h.position, bytes);
    if (!n || *n != bytes.size()) return unexpected(Errc::kStorageError);
    auto view = record::RecordBatchView::from(bytes);
    if (!view) return unexpected(Errc::kCorruptMessage);
    // The first record carrying the max timestamp, decompressing if needed (Kafka's
    // offsetOfMaxTimestamp); the batch's base offset if its records cannot be read.
    bool found = false;
    (void)for_each_stored_record(*view, kMaxDecompressedBatchBytes, [&](const record::RecordView& r) {
      if (!found && view->record_timestamp(r) == h.max_timestamp) {
        result.offset = view->record_offset(r);
        found = true;
      }
    });
    return std::optional<TimestampOffset>(result);
  }
}

Result<std::int64_t, Errc> Segment::largest_timestamp() {
  auto max = max_timestamp_so_far();
  if (!max) return unexpected(max.error());
  if (max->timestamp >= 0) return max->timestamp;
  auto mtime = log_.file().modified_time_ms();
  if (!mtime) return unexpected(Errc::kStorageError);
  return *mtime;
}

Result<std::int64_t, Errc> Segment::first_batch_timestamp() {
  if (rolling_timestamp_) return *rolling_timestamp_;
  if (empty()) return std::int64_t{-1};
  BatchScanner first(log_.file(), 0, size_bytes(), BatchScanner::Mode::kHeaders);
  auto h = first.next();
  if (!h) return unexpected(scan_error(h.error()));
  if (!*h) return std::int64_t{-1};
  rolling_timestamp_ = (*h)->max_timestamp;
  return *rolling_timestamp_;
}

Result<std::int64_t, Errc> Segment::last_modified_ms() const {
  auto mtime = log_.file().modified_time_ms();
  if (!mtime) return unexpected(Errc::kStorageError);
  return *mtime;
}

Status<Errc> Segment::set_last_modified_ms(std::int64_t time_ms) {
  if (!log_.file().set_modified_time_ms(time_ms)) return unexpected(Errc::kStorageError);
  return {};
}

Result<std::int64_t, Errc> Segment::truncate_to(std::int64_t offset) {
  auto batch = find_batch(offset);
  if (!batch) return unexpected(batch.error());
  if (!*batch) return std::int64_t{0};
  const std::int64_t position = (*batch)->position;
  const std::int64_t removed = size_bytes() - position;
  unchanged_since_restore_ = false;
  if (!log_.truncate(position)) return unexpected(Errc::kStorageError);
  if (!offset_index_.truncate_to(offset) || !time_index_.truncate_to(offset) || !txn_index_.truncate_to(offset)) {
    return unexpected(Errc::kStorageError);
  }
  max_timestamp_ = time_index_.last_entry();
  const std::optional<OffsetPosition> entry = offset_index_.last_entry();
  if (auto ok = scan_tail(entry ? entry->position : 0); !ok) return unexpected(ok.error());
  if (auto ok = load_rolling_timestamp(); !ok) return unexpected(ok.error());
  return removed;
}

void Segment::collect_dirty(SyncToken& token, bool include_indexes) const {
  auto add = [&](const TrackedFile& f) {
    if (f && f.dirty()) token.files.push_back(SyncToken::FileEntry{f.shared(), f.write_generation()});
  };
  add(log_);
  if (!include_indexes) return;
  add(offset_index_.file());
  add(time_index_.file());
  add(txn_index_.file());
}

bool Segment::mark_synced(const File* file, std::uint64_t generation) noexcept {
  for (TrackedFile* f : {&log_, &offset_index_.file(), &time_index_.file(), &txn_index_.file()}) {
    if (*f && &f->file() == file) {
      f->mark_synced(generation);
      return true;
    }
  }
  return false;
}

Status<Errc> Segment::sync_all() {
  for (TrackedFile* f : {&log_, &offset_index_.file(), &time_index_.file(), &txn_index_.file()}) {
    if (*f && f->dirty() && !f->sync()) return unexpected(Errc::kStorageError);
  }
  return {};
}

Status<Errc> Segment::close() {
  // The active segment (the only one appended to): bytes of a failed append go, and the time
  // index gets its final entry, unless a clean shutdown gave it that and nothing came since.
  if (next_offset_ && !unchanged_since_restore_) {
    if (append_failed_ && !log_.truncate(size_bytes())) return unexpected(Errc::kStorageError);
    append_failed_ = false;
    if (auto ok = on_roll(); !ok) return ok;
  }
  return sync_all();
}

Status<Errc> Segment::rename_for_deletion() {
  WEIR_ASSERT(suffix_ != kDeletedSuffix);
  return change_file_suffix(kDeletedSuffix);
}

Status<Errc> Segment::change_file_suffix(std::string_view suffix) {
  std::vector<std::string_view> kinds{kLogSuffix, kIndexSuffix, kTimeIndexSuffix};
  if (txn_index_.exists()) kinds.push_back(kTxnIndexSuffix);
  auto named = [&](std::string_view kind, std::string_view with) {
    return fs::path(dir_) / (file_name(base_offset_, kind) + std::string(with));
  };
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    if (auto ok = fs_.rename(named(kinds[i], suffix_), named(kinds[i], suffix)); !ok) {
      for (std::size_t j = 0; j < i; ++j) (void)fs_.rename(named(kinds[j], suffix), named(kinds[j], suffix_));
      return unexpected(Errc::kStorageError);
    }
  }
  suffix_ = std::string(suffix);
  txn_index_.set_path(path(kTxnIndexSuffix));
  return {};
}

Status<Errc> Segment::remove_files() {
  bool ok = true;
  for (std::string_view suffix : {kLogSuffix, kIndexSuffix, kTimeIndexSuffix, kTxnIndexSuffix}) {
    auto removed = fs_.remove(path(suffix));
    if (!removed && !removed.error().not_found()) ok = false;
  }
  return ok ? Status<Errc>() : unexpected(Errc::kStorageError);
}

}  // namespace weir::storage
