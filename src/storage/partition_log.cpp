#include "storage/partition_log.h"

#include <algorithm>
#include <cerrno>
#include <limits>
#include <map>

#include "base/assert.h"
#include "base/log.h"
#include "base/uuid.h"
#include "protocol/record/record.h"
#include "protocol/record/record_batch.h"
#include "storage/batch_filter.h"
#include "storage/checkpoint.h"
#include "storage/log_cleaner.h"
#include "storage/producer_snapshot.h"

namespace weir::storage {

namespace fs = std::filesystem;

namespace {

constexpr std::int64_t kMaxRelativeOffset = std::numeric_limits<std::int32_t>::max();

std::int64_t saturating_add(std::int64_t a, std::int64_t b) {
  std::int64_t out = 0;
  if (__builtin_add_overflow(a, b, &out))
    return b > 0 ? std::numeric_limits<std::int64_t>::max() : std::numeric_limits<std::int64_t>::min();
  return out;
}

std::int64_t saturating_sub(std::int64_t a, std::int64_t b) {
  std::int64_t out = 0;
  if (__builtin_sub_overflow(a, b, &out))
    return b > 0 ? std::numeric_limits<std::int64_t>::min() : std::numeric_limits<std::int64_t>::max();
  return out;
}

// Splits input into batches by their framing. A batchLength below the minimum, or a batch that
// runs past the end, makes the whole input corrupt.
Result<std::vector<std::pair<std::size_t, std::size_t>>, Errc> frame_batches(ByteSpan input) {
  std::vector<std::pair<std::size_t, std::size_t>> batches;  // (position, size)
  std::size_t position = 0;
  while (position < input.size()) {
    auto size = record::peek_batch_size(input.subspan(position));
    if (!size || *size > input.size() - position) return unexpected(Errc::kCorruptMessage);
    batches.emplace_back(position, *size);
    position += *size;
  }
  return batches;
}

// Kafka's produce-time timestamp rule for one record (LogValidator.validateTimestamp).
struct TimestampRule {
  bool log_append_time;
  std::int64_t lower_ms;
  std::int64_t upper_ms;

  [[nodiscard]] bool ok(std::int64_t timestamp, record::TimestampType batch_type) const noexcept {
    if (!log_append_time && timestamp != record::kNoTimestamp) return timestamp >= lower_ms && timestamp <= upper_ms;
    return batch_type != record::TimestampType::log_append_time;
  }
};

// Checks one producer batch beyond its framing; returns its largest record timestamp. Records of
// compressed batches are checked as well, as Kafka's LogValidator does (their timestamps, keys on
// compacted topics), from their summary (read here, streaming, unless the caller has it), and
// their largest timestamp replaces the header's.
Result<std::int64_t, Errc> check_producer_batch(const record::RecordBatchView& batch, const LogConfig& config,
                                                const TimestampRule& rule, const RecordsSummary* summary) {
  if (batch.magic() == record::kMagicV2 && batch.base_offset() != 0) return unexpected(Errc::kInvalidRecord);
  if (batch.size_bytes() > static_cast<std::size_t>(std::max(0, config.max_message_bytes))) {
    return unexpected(Errc::kMessageTooLarge);
  }
  if (auto ok = batch.validate(record::BatchOrigin::client); !ok) return unexpected(from_record_errc(ok.error()));
  const record::TimestampType type = batch.timestamp_type();
  std::int64_t max_timestamp = record::kNoTimestamp;
  bool timestamps_ok = true;
  bool keyless = false;
  if (batch.is_compressed()) {
    RecordsSummary read_here;
    if (summary == nullptr) {
      read_here = summarize_records(batch, config.decompression);
      summary = &read_here;
    }
    if (summary->error) return unexpected(*summary->error);
    // Every record passes the rule iff its extremes do (records without a timestamp aside).
    const bool timestamped = summary->min_timestamp <= summary->max_timestamp_set;
    if (timestamped) {
      timestamps_ok = rule.ok(summary->min_timestamp, type) && rule.ok(summary->max_timestamp_set, type);
    }
    if (summary->any_without_timestamp) timestamps_ok = timestamps_ok && rule.ok(record::kNoTimestamp, type);
    max_timestamp = summary->max_timestamp;
    keyless = summary->keyless;
  } else {
    auto visit = [&](const record::RecordView& r) {
      const std::int64_t ts = batch.record_timestamp(r);
      timestamps_ok = timestamps_ok && rule.ok(ts, type);
      max_timestamp = std::max(max_timestamp, ts);
      keyless = keyless || !r.key;
    };
    if (auto walked = record::for_each_record(batch, visit); !walked)
      return unexpected(from_record_errc(walked.error()));
  }
  if (!timestamps_ok) return unexpected(Errc::kInvalidTimestamp);
  if (config.cleanup_compact && keyless)
    return unexpected(Errc::kInvalidRecord);  // "Compacted topic cannot accept message without key"
  return max_timestamp;
}

std::string delete_dir_name(const fs::path& dir) {
  const std::string name = dir.filename().string();
  const Uuid id = Uuid::random();
  const std::string unique = fmt::format("{:016x}{:016x}", id.msb(), id.lsb());
  std::string prefix = name;
  std::string suffix = fmt::format(".{}-delete", unique);
  if (auto tp = parse_partition_dir_name(name)) {
    prefix = tp->topic;
    suffix = fmt::format("-{}{}", tp->partition, suffix);
  }
  constexpr std::size_t kMaxName = 255;  // Kafka shortens the topic part to fit a file name
  prefix.resize(std::min(prefix.size(), kMaxName - std::min(kMaxName, suffix.size())));
  return prefix + suffix;
}

}  // namespace

// ---------------------------------------------------------------------------------------- reads

Result<void, Errc> ReadResult::append_to(std::vector<std::uint8_t>& out) const {
  const std::size_t start = out.size();
  out.resize(start + static_cast<std::size_t>(size_bytes));
  std::size_t at = start;
  for (const FileSlice& slice : slices) {
    auto n = slice.file->pread(slice.position, std::as_writable_bytes(std::span(out.data() + at, slice.size)));
    if (!n || *n != static_cast<std::size_t>(slice.size)) {
      out.resize(start);
      return unexpected(Errc::kStorageError);
    }
    at += static_cast<std::size_t>(slice.size);
  }
  return {};
}

// ---------------------------------------------------------------------------------- open / load

PartitionLog::PartitionLog(FileSystem& fs, const fs::path& dir, LogConfig config, const Clock& clock)
    : fs_(fs),
      dir_(dir.native()),
      config_(config),
      clock_(clock),
      epochs_(fs, dir / kLeaderEpochCheckpointFile),
      last_flush_ms_(clock.now_ms()) {}

PartitionLog::~PartitionLog() = default;

SegmentConfig PartitionLog::segment_config() const noexcept {
  return SegmentConfig{config_.index_interval_bytes, config_.segment_index_bytes};
}

Result<std::unique_ptr<PartitionLog>, Errc> PartitionLog::open(FileSystem& fs, fs::path dir, LogConfig config,
                                                               const Clock& clock, RecoveryHint hint) {
  // A summarized directory was just found to exist (its identity was checked).
  auto exists = hint.summary != nullptr ? IoResult<bool>(true) : fs.exists(dir);
  if (!exists) return unexpected(Errc::kStorageError);
  if (!*exists) {
    if (!fs.create_directory(dir) ||
        !fs.sync_directory(dir.parent_path().empty() ? fs::path(".") : dir.parent_path())) {
      return unexpected(Errc::kStorageError);
    }
  }
  std::unique_ptr<PartitionLog> log(new PartitionLog(fs, dir, config, clock));
  if (hint.summary != nullptr) {
    auto restored = log->restore(hint, *hint.summary);
    if (restored) return log;
    // The summary and the directory disagree: read the directory after all.
    log::get("storage")->warn("event=log_summary_not_used {} {}", log::kv("dir", dir.string()),
                              log::kv("error", to_string(restored.error())));
    log.reset(new PartitionLog(fs, std::move(dir), config, clock));
  }
  RecoveryHint files_hint = hint;
  files_hint.summary = nullptr;
  if (auto ok = log->load(files_hint); !ok) return unexpected(ok.error());
  return log;
}

Status<Errc> PartitionLog::load_segments(const RecoveryHint& hint, std::vector<std::int64_t>& bases) {
  auto entries = fs_.list(dir_);
  if (!entries) return unexpected(Errc::kStorageError);
  auto swapped = finish_interrupted_swap(*entries);
  if (!swapped) return unexpected(swapped.error());
  if (*swapped) {  // it renamed and removed files: list again
    entries = fs_.list(dir_);
    if (!entries) return unexpected(Errc::kStorageError);
  }
  std::vector<std::string> index_files;
  std::vector<std::int64_t> snapshots;
  for (const DirEntry& e : *entries) {
    if (e.is_directory) continue;
    const std::string_view name = e.name;
    if (name.ends_with(Segment::kDeletedSuffix) || name.ends_with(".tmp")) {
      (void)fs_.remove(dir() / e.name);  // an interrupted deletion or checkpoint write
      continue;
    }
    if (auto base = Segment::parse_file_name(name, Segment::kLogSuffix)) {
      bases.push_back(*base);
    } else if (name.ends_with(Segment::kIndexSuffix) || name.ends_with(Segment::kTimeIndexSuffix) ||
               name.ends_with(Segment::kTxnIndexSuffix)) {
      index_files.push_back(e.name);
    } else if (auto offset = parse_snapshot_file_name(name)) {
      snapshots.push_back(*offset);
    }
  }
  std::sort(bases.begin(), bases.end());
  std::map<std::int64_t, Segment::IndexFiles> present;  // per segment base offset
  for (const std::string& name : index_files) {
    std::optional<std::int64_t> base;
    bool* seen = nullptr;
    if ((base = Segment::parse_file_name(name, Segment::kIndexSuffix))) {
      seen = &present[*base].offset_index;
    } else if ((base = Segment::parse_file_name(name, Segment::kTimeIndexSuffix))) {
      seen = &present[*base].time_index;
    } else if ((base = Segment::parse_file_name(name, Segment::kTxnIndexSuffix))) {
      seen = &present[*base].txn_index;
    }
    if (!base) continue;
    if (std::binary_search(bases.begin(), bases.end(), *base)) {
      *seen = true;
    } else {
      (void)fs_.remove(dir() / name);  // an index whose log is gone
    }
  }
  snapshot_offsets_ = std::move(snapshots);
  const std::int64_t now_ms = clock_.wall_ms();
  for (std::int64_t base : bases) {
    const auto it = present.find(base);
    auto segment = Segment::open(fs_, dir_, base, segment_config(), now_ms,
                                 it == present.end() ? Segment::IndexFiles{} : it->second);
    if (!segment) return unexpected(segment.error());
    segments_.push_back(std::move(*segment));
  }
  if (segments_.empty()) {
    auto segment =
        Segment::create(fs_, dir_, std::max<std::int64_t>(0, hint.log_start_offset), segment_config(), now_ms);
    if (!segment) return unexpected(segment.error());
    segments_.push_back(std::move(*segment));
    ++directory_writes_;
  }
  return {};
}

Status<Errc> PartitionLog::load(const RecoveryHint& hint) {
  std::vector<std::int64_t> bases;
  if (auto ok = load_segments(hint, bases); !ok) return ok;
  if (auto ok = epochs_.load(); !ok) return ok;

  bool recovered = false;
  std::size_t scanned = 0;  // segments checked batch by batch
  if (hint.clean_shutdown) {
    auto tail = active().load_tail();
    if (!tail && tail.error() != Errc::kCorruptMessage) return tail;
    if (!tail) {
      log::get("storage")->warn("event=unclean_tail_after_clean_shutdown {}", log::kv("dir", dir_));
      if (auto ok = recover_from(segments_.size() - 1, hint.cleaner_checkpoint.value_or(-1)); !ok) return ok;
      recovered = true;
      scanned = 1;
    }
  } else {
    const std::size_t first = segment_index_for(hint.recovery_point);
    scanned = segments_.size() - first;
    if (auto ok = recover_from(first, hint.cleaner_checkpoint.value_or(-1)); !ok) return ok;
    recovered = true;
  }
  for (auto& segment : segments_) {  // rebuild missing indexes now rather than on first read
    if (segment->indexes_missing() && !segment->offset_index()) return unexpected(Errc::kStorageError);
  }
  return finish_load(hint, recovered, scanned);
}

Status<Errc> PartitionLog::restore(const RecoveryHint& hint, const PartitionSummary& summary) {
  // The active segment's end must be known (a summary weir wrote always knows it).
  if (summary.segments.empty() || summary.segments.back().next_offset < summary.segments.back().base_offset) {
    return unexpected(Errc::kCorruptMessage);
  }
  const std::int64_t now_ms = clock_.wall_ms();
  const fs::path dir = this->dir();
  for (const SegmentSummary& s : summary.segments) {
    auto segment = Segment::restore(fs_, dir, segment_config(), now_ms, s);
    if (!segment) return unexpected(segment.error());
    segments_.push_back(std::move(*segment));
  }
  epochs_.restore(summary.epochs);
  if (summary.producers) {
    snapshot_offsets_ = summary.producers->snapshot_offsets;
    carried_producers_ = summary.producers;
  }
  auto ok = finish_load(hint, false, 0);
  carried_log_end_ = log_end_offset_;
  return ok;
}

Status<Errc> PartitionLog::finish_load(const RecoveryHint& hint, bool recovered, std::size_t scanned) {
  log_end_offset_ = *active().next_offset();
  log_start_offset_ = std::max(hint.log_start_offset, segments_.front()->base_offset());
  // Offsets recovery cut off come back as new data: they must count as dirty.
  if (hint.cleaner_checkpoint) cleaner_checkpoint_ = std::min(*hint.cleaner_checkpoint, log_end_offset_);
  if (log_start_offset_ > log_end_offset_) {
    // The checkpointed log start is past the data that survived: start over there, as Kafka does.
    if (auto ok = truncate_fully_and_start_at(log_start_offset_); !ok) return ok;
  }
  // Entries past the data recovery kept go. After a clean shutdown nothing was lost, and an
  // epoch starting at the log end is one a leader began before its first record (Kafka writes
  // it when the partition becomes leader; weir when the partition is made): it stays.
  epochs_.truncate_from_end(hint.clean_shutdown && !recovered ? log_end_offset_ + 1 : log_end_offset_);
  epochs_.truncate_from_start(log_start_offset_);
  if (auto ok = epochs_.write_if_dirty(); !ok) return ok;
  if (recovered) {
    // Whatever recovery kept may still be only in the page cache: make it durable, so the
    // recovery point can move to the end.
    if (auto ok = flush(); !ok) return unexpected(ok.error());
  }
  recovery_point_ = log_end_offset_;
  high_watermark_ = std::clamp(hint.high_watermark, log_start_offset_, log_end_offset_);
  purge_deleted_files(true);
  // A clean load of each of many thousands of partitions is not news: only recovery is at info.
  log::get("storage")->log(recovered || scanned > 0 ? spdlog::level::info : spdlog::level::debug,
                           "event=log_loaded {} {} {} {} {} {}", log::kv("dir", dir_),
                           log::kv("segments", segments_.size()), log::kv("log_start_offset", log_start_offset_),
                           log::kv("log_end_offset", log_end_offset_), log::kv("recovered", recovered),
                           log::kv("scanned_segments", scanned));
  return {};
}

Status<Errc> PartitionLog::recover_from(std::size_t first_index, std::int64_t cleaned_below) {
  for (std::size_t i = first_index; i < segments_.size(); ++i) {
    Segment& segment = *segments_[i];
    auto cut = segment.recover([&](const BatchHeader& h) {
      // Only epochs newer than the checkpoint's latest (Kafka's LogSegment.recover): a scan that
      // starts inside an epoch must not move that epoch's start up to the first batch it sees
      // (which would drop the epoch's real start, and every later epoch with it).
      const auto latest = epochs_.latest();
      if (h.partition_leader_epoch >= 0 && (!latest || h.partition_leader_epoch > latest->epoch)) {
        epochs_.assign(h.partition_leader_epoch, h.base_offset);
      }
    });
    if (!cut) return unexpected(cut.error());
    const bool overlaps_next = i + 1 < segments_.size() && *segment.next_offset() > segments_[i + 1]->base_offset();
    const bool short_of_next = i + 1 < segments_.size() && *segment.next_offset() < segments_[i + 1]->base_offset() &&
                               segments_[i + 1]->base_offset() > cleaned_below;
    if (short_of_next) {
      log::get("storage")->warn("event=segment_tail_lost_on_recovery {} {} {}",
                                log::kv("segment", segment.log_path().string()),
                                log::kv("next_offset", *segment.next_offset()),
                                log::kv("next_segment_base_offset", segments_[i + 1]->base_offset()));
    }
    if (*cut > 0 || overlaps_next || short_of_next) {
      // Everything after the first invalid batch (or lost tail) is gone, later segments included.
      for (std::size_t j = i + 1; j < segments_.size(); ++j) {
        log::get("storage")->warn("event=segment_deleted_on_recovery {}",
                                  log::kv("segment", segments_[j]->log_path().string()));
        if (!segments_[j]->remove_files()) return unexpected(Errc::kStorageError);
      }
      segments_.resize(i + 1);
      break;
    }
  }
  return {};
}

std::size_t PartitionLog::segment_index_for(std::int64_t offset) const noexcept {
  auto it = std::upper_bound(segments_.begin(), segments_.end(), offset,
                             [](std::int64_t value, const auto& s) { return value < s->base_offset(); });
  if (it == segments_.begin()) return 0;
  return static_cast<std::size_t>(it - segments_.begin()) - 1;
}

std::int64_t PartitionLog::size_bytes() const noexcept {
  std::int64_t total = 0;
  for (const auto& s : segments_) total += s->size_bytes();
  return total;
}

// -------------------------------------------------------------------------------------- appends

Result<AppendInfo, Errc> PartitionLog::append_as_leader(std::span<std::byte> batches, std::int32_t leader_epoch,
                                                        const RecordsSummaries* summaries) {
  WEIR_ASSERT(!closed_, "append to a closed log");
  AppendInfo info;
  info.log_start_offset = log_start_offset_;
  if (failed_) return unexpected(Errc::kStorageError);
  if (batches.empty()) return info;
  auto framed = frame_batches(batches);
  if (!framed) return unexpected(framed.error());

  const std::int64_t now_ms = clock_.wall_ms();
  const TimestampRule rule{config_.log_append_time, saturating_sub(now_ms, config_.timestamp_before_max_ms),
                           saturating_add(now_ms, config_.timestamp_after_max_ms)};
  std::vector<std::int64_t> record_max_timestamps;
  for (std::size_t i = 0; i < framed->size(); ++i) {
    const auto [position, size] = (*framed)[i];
    auto view = record::RecordBatchView::from(ByteSpan(batches.subspan(position, size)));
    WEIR_ASSERT(view.has_value());
    const RecordsSummary* summary = nullptr;
    if (summaries != nullptr && i < summaries->size() && (*summaries)[i]) summary = &*(*summaries)[i];
    auto max_ts = check_producer_batch(*view, config_, rule, summary);
    if (!max_ts) return unexpected(max_ts.error());
    record_max_timestamps.push_back(*max_ts);
  }
  if (static_cast<std::int64_t>(batches.size()) > config_.segment_bytes) return unexpected(Errc::kRecordListTooLarge);

  // Everything checked: stamp offsets, epoch and timestamps in place.
  std::vector<BatchHeader> headers;
  std::int64_t next = log_end_offset_;
  info.max_timestamp_ms = record::kNoTimestamp;
  for (std::size_t i = 0; i < framed->size(); ++i) {
    const auto [position, size] = (*framed)[i];
    auto view = record::MutableRecordBatchView::from(batches.subspan(position, size));
    view->set_base_offset(next);
    view->set_partition_leader_epoch(leader_epoch);
    if (config_.log_append_time) {
      view->set_max_timestamp(record::TimestampType::log_append_time, now_ms);
    } else {
      view->set_max_timestamp(record::TimestampType::create_time, record_max_timestamps[i]);
    }
    headers.push_back(BatchHeader::parse(view->bytes(), static_cast<std::int64_t>(position)));
    info.max_timestamp_ms = std::max(info.max_timestamp_ms, headers.back().max_timestamp);
    next = headers.back().next_offset();
  }
  info.first_offset = log_end_offset_;
  info.last_offset = next - 1;
  info.batches = static_cast<std::int32_t>(headers.size());
  info.log_append_time_ms = config_.log_append_time ? now_ms : -1;
  if (auto ok = write(batches, headers, info.first_offset, info.max_timestamp_ms); !ok) return unexpected(ok.error());
  if (leader_epoch >= 0) assign_epoch(leader_epoch, info.first_offset);
  return info;
}

Result<AppendInfo, Errc> PartitionLog::append_with_offsets(std::span<const std::byte> batches) {
  WEIR_ASSERT(!closed_, "append to a closed log");
  AppendInfo info;
  info.log_start_offset = log_start_offset_;
  if (failed_) return unexpected(Errc::kStorageError);
  if (batches.empty()) return info;
  auto framed = frame_batches(batches);
  if (!framed) return unexpected(framed.error());
  std::vector<BatchHeader> headers;
  std::int64_t next = log_end_offset_;
  for (const auto& [position, size] : *framed) {
    auto view = record::RecordBatchView::from(batches.subspan(position, size));
    WEIR_ASSERT(view.has_value());
    if (auto ok = view->validate(record::BatchOrigin::log); !ok) return unexpected(from_record_errc(ok.error()));
    if (!view->is_compressed()) {
      if (auto ok = record::validate_records(*view); !ok) return unexpected(from_record_errc(ok.error()));
    }
    if (view->base_offset() < next) return unexpected(Errc::kInvalidRecord);
    headers.push_back(BatchHeader::parse(view->bytes(), static_cast<std::int64_t>(position)));
    next = headers.back().next_offset();
  }
  if (headers.back().last_offset() - headers.front().base_offset > kMaxRelativeOffset) {
    return unexpected(Errc::kInvalidRecord);
  }
  if (static_cast<std::int64_t>(batches.size()) > config_.segment_bytes) return unexpected(Errc::kRecordListTooLarge);
  info.first_offset = headers.front().base_offset;
  info.last_offset = headers.back().last_offset();
  info.batches = static_cast<std::int32_t>(headers.size());
  info.max_timestamp_ms = record::kNoTimestamp;
  for (const BatchHeader& h : headers) info.max_timestamp_ms = std::max(info.max_timestamp_ms, h.max_timestamp);
  if (auto ok = write(batches, headers, info.first_offset, info.max_timestamp_ms); !ok) return unexpected(ok.error());
  for (const BatchHeader& h : headers) assign_epoch(h.partition_leader_epoch, h.base_offset);
  return info;
}

Status<Errc> PartitionLog::write(ByteSpan bytes, const std::vector<BatchHeader>& headers, std::int64_t first_offset,
                                 std::int64_t max_timestamp) {
  if (auto ok = maybe_roll(static_cast<std::int64_t>(bytes.size()), max_timestamp, first_offset,
                           headers.back().last_offset());
      !ok) {
    return ok;
  }
  Segment& segment = active();
  const std::int64_t size_before = segment.size_bytes();
  if (auto ok = segment.append(bytes, headers); !ok) {
    if (segment.size_bytes() != size_before) {
      failed_ = true;  // the rollback failed: the file holds bytes the log does not account for
      log::get("storage")->error("event=log_failed {} reason=append_rollback_failed", log::kv("dir", dir_));
    }
    return ok;
  }
  log_end_offset_ = headers.back().next_offset();
  return {};
}

Status<Errc> PartitionLog::maybe_roll(std::int64_t messages_bytes, std::int64_t max_timestamp,
                                      std::int64_t first_offset, std::int64_t last_offset) {
  // Positions in the offset index are 32-bit: no segment may pass 2 GiB.
  const std::int64_t segment_bytes = std::min<std::int64_t>(config_.segment_bytes, kMaxRelativeOffset);
  const RollCheck check{segment_bytes, config_.segment_ms, messages_bytes,
                        max_timestamp, last_offset,        clock_.wall_ms()};
  Segment& segment = active();
  // A segment restored from the log dir's summary loads its indexes on its first append.
  const std::optional<std::int64_t> segment_end = segment.next_offset();
  if (auto ok = segment.load_indexes(); !ok) return ok;
  if (segment.next_offset() != segment_end) {
    // The index was unusable and the rebuild from the log found another end than the summary
    // said: the file changed while the broker was down. Appending would leave a hole or overlap.
    failed_ = true;
    log::get("storage")->error("event=log_failed {} reason=active_segment_changed {} {}", log::kv("dir", dir_),
                               log::kv("log_end_offset", log_end_offset_),
                               log::kv("segment_end_offset", segment.next_offset().value_or(-1)));
    return unexpected(Errc::kStorageError);
  }
  if (!segment.should_roll(check)) return {};
  if (segment.empty()) {
    if (segment.base_offset() == first_offset) return {};
    // An empty active segment that cannot hold these offsets (a jump past 2^31 of them): replace it.
    auto replacement = Segment::create(fs_, dir_, first_offset, segment_config(), clock_.wall_ms());
    if (!replacement) return unexpected(replacement.error());
    ++directory_writes_;
    (void)segment.remove_files();
    segments_.back() = std::move(*replacement);
    return {};
  }
  return roll_at(std::max(first_offset, log_end_offset_));
}

Status<Errc> PartitionLog::roll_at(std::int64_t base_offset) {
  if (!segments_.empty()) {
    if (auto ok = active().on_roll(); !ok) return ok;
  }
  auto segment = Segment::create(fs_, dir_, base_offset, segment_config(), clock_.wall_ms());
  if (!segment) return unexpected(segment.error());
  segments_.push_back(std::move(*segment));
  ++directory_writes_;
  log::get("storage")->debug("event=segment_rolled {} {}", log::kv("dir", dir_), log::kv("base_offset", base_offset));
  notify([&](LogListener& l) { l.on_roll(*this, base_offset); });
  return {};
}

Result<void, Errc> PartitionLog::roll() {
  WEIR_ASSERT(!closed_);
  if (active().empty()) return {};
  return roll_at(log_end_offset_);
}

void PartitionLog::assign_epoch(std::int32_t epoch, std::int64_t start_offset) {
  if (epoch < 0 || !epochs_.assign(epoch, start_offset)) return;
  if (!epochs_.write_if_dirty()) {
    // Recovery re-learns epochs from batches after the recovery point; retried on flush/close.
    log::get("storage")->warn("event=leader_epoch_checkpoint_deferred {}", log::kv("dir", dir_));
  }
}

// ------------------------------------------------------------------------------------- reading

Result<ReadResult, Errc> PartitionLog::read(std::int64_t offset, std::int32_t max_bytes, std::int64_t max_offset,
                                            bool min_one_batch) const {
  WEIR_ASSERT(!closed_);
  if (offset < log_start_offset_ || offset > log_end_offset_) return unexpected(Errc::kOffsetOutOfRange);
  ReadResult result;
  if (offset == log_end_offset_ || offset >= max_offset) return result;
  std::int64_t remaining = std::max(0, max_bytes);
  std::int64_t next = offset;
  for (std::size_t i = segment_index_for(offset); i < segments_.size(); ++i) {
    Segment& segment = *segments_[i];
    auto range = segment.read(next, remaining, max_offset, min_one_batch && result.slices.empty());
    if (!range) {
      if (result.slices.empty()) return unexpected(range.error());
      break;
    }
    if (range->size > 0) {
      // A handle keeps the descriptor open until the slice is sent. The file cache refuses one
      // (EMFILE) when every descriptor it may open is held: the read returns what it has, and
      // the client asks again for the rest.
      auto handle = segment.log_file()->open_handle();
      if (!handle) {
        if (!result.slices.empty() || handle.error().code == EMFILE) break;
        return unexpected(Errc::kStorageError);
      }
      result.slices.push_back(FileSlice{std::move(*handle), range->position, static_cast<std::int32_t>(range->size)});
      result.size_bytes += range->size;
      remaining -= range->size;
      next = range->next_offset;
      result.next_offset = next;
    }
    if (!range->end_of_segment) break;
  }
  return result;
}

Result<void, Errc> PartitionLog::scan_batches(std::int64_t from, const BatchVisitor& on_batch) const {
  WEIR_ASSERT(!closed_);
  from = std::max(from, log_start_offset_);
  if (from >= log_end_offset_) return {};
  std::vector<std::byte> control;
  const std::size_t first = segment_index_for(from);
  for (std::size_t i = first; i < segments_.size(); ++i) {
    Segment& segment = *segments_[i];
    std::int64_t position = 0;
    if (i == first) {
      auto found = segment.find_batch(from);
      if (!found) return unexpected(found.error());
      if (!*found) continue;
      position = (*found)->position;
    }
    BatchScanner scanner(*segment.log_file(), position, segment.size_bytes(), BatchScanner::Mode::kHeaders);
    for (;;) {
      auto batch = scanner.next();
      if (!batch) return unexpected(batch.error() == ScanStop::kIo ? Errc::kStorageError : Errc::kCorruptMessage);
      if (!*batch) break;
      const BatchHeader& h = **batch;
      if (h.base_offset >= log_end_offset_) return {};
      ByteSpan body;
      if (h.is_control() && h.size <= kMaxScannedControlBatchBytes) {
        control.resize(static_cast<std::size_t>(h.size));
        auto n = segment.log_file()->pread(h.position, control);
        if (!n || *n != control.size()) return unexpected(Errc::kStorageError);
        body = control;
      }
      on_batch(h, body);
    }
  }
  return {};
}

Result<std::optional<TimestampOffset>, Errc> PartitionLog::lookup_offset_by_timestamp(std::int64_t timestamp_ms) const {
  for (const auto& segment : segments_) {
    auto largest = segment->max_timestamp_so_far();
    if (!largest) return unexpected(largest.error());
    if (largest->timestamp < timestamp_ms) continue;
    auto found = segment->find_offset_by_timestamp(timestamp_ms, log_start_offset_);
    if (!found || *found) return found;
  }
  return std::optional<TimestampOffset>();
}

Result<std::optional<TimestampOffset>, Errc> PartitionLog::lookup_max_timestamp() const {
  std::int64_t best = -1;
  Segment* holder = nullptr;
  for (const auto& segment : segments_) {
    auto largest = segment->max_timestamp_so_far();
    if (!largest) return unexpected(largest.error());
    if (largest->timestamp > best) {
      best = largest->timestamp;
      holder = segment.get();
    }
  }
  if (holder == nullptr) return std::optional<TimestampOffset>();
  return holder->max_timestamp_record();
}

std::optional<TimestampOffset> PartitionLog::find_offset_by_timestamp(std::int64_t timestamp_ms) const {
  auto found = lookup_offset_by_timestamp(timestamp_ms);
  if (found) return *found;
  log::get("storage")->error("event=timestamp_lookup_failed {} {}", log::kv("dir", dir_),
                             log::kv("error", to_string(found.error())));
  return std::nullopt;
}

std::optional<TimestampOffset> PartitionLog::max_timestamp() const {
  auto found = lookup_max_timestamp();
  if (found) return *found;
  log::get("storage")->error("event=max_timestamp_lookup_failed {} {}", log::kv("dir", dir_),
                             log::kv("error", to_string(found.error())));
  return std::nullopt;
}

std::optional<std::pair<std::int32_t, std::int64_t>> PartitionLog::end_offset_for_epoch(std::int32_t epoch) const {
  return epochs_.end_offset_for(epoch, log_end_offset_);
}

std::optional<std::int32_t> PartitionLog::latest_epoch() const {
  if (auto latest = epochs_.latest()) return latest->epoch;
  return std::nullopt;
}

Result<void, Errc> PartitionLog::append_aborted_transaction(const AbortedTxn& txn) {
  WEIR_ASSERT(!closed_);
  return segments_[segment_index_for(txn.last_offset)]->txn_index().append(txn);
}

Result<std::vector<AbortedTxn>, Errc> PartitionLog::collect_aborted_transactions(
    std::int64_t start_offset, std::int64_t upper_bound_offset) const {
  std::vector<AbortedTxn> out;
  for (std::size_t i = segment_index_for(start_offset); i < segments_.size(); ++i) {
    auto found = segments_[i]->txn_index().collect(start_offset, upper_bound_offset);
    if (!found) return unexpected(found.error());
    out.insert(out.end(), found->aborted.begin(), found->aborted.end());
    if (found->complete) break;
  }
  return out;
}

// ------------------------------------------------------------------ deletion, truncation, retention

void PartitionLog::update_high_watermark(std::int64_t offset) noexcept {
  high_watermark_ = std::clamp(offset, log_start_offset_, log_end_offset_);
}

std::int64_t PartitionLog::last_stable_offset() const noexcept {
  if (first_unstable_offset_) return std::min(*first_unstable_offset_, high_watermark_);
  return high_watermark_;
}

Status<Errc> PartitionLog::delete_oldest_segments(std::size_t n) {
  WEIR_ASSERT(n < segments_.size(), "the active segment is never deleted");
  const std::int64_t due_ms = clock_.now_ms() + std::max<std::int64_t>(0, config_.file_delete_delay_ms);
  std::size_t renamed = 0;
  Status<Errc> result;
  for (; renamed < n; ++renamed) {
    if (result = segments_[renamed]->rename_for_deletion(); !result) break;
  }
  for (std::size_t i = 0; i < renamed; ++i) {
    log::get("storage")->info("event=segment_deleted {} {}", log::kv("dir", dir_),
                              log::kv("base_offset", segments_[i]->base_offset()));
    pending_deletions_.push_back(PendingDeletion{std::move(segments_[i]), due_ms});
  }
  segments_.erase(segments_.begin(), segments_.begin() + static_cast<std::ptrdiff_t>(renamed));
  if (log_start_offset_ < segments_.front()->base_offset()) {
    log_start_offset_ = segments_.front()->base_offset();
    high_watermark_ = std::max(high_watermark_, log_start_offset_);
    if (epochs_.truncate_from_start(log_start_offset_)) (void)epochs_.write_if_dirty();
  }
  if (renamed > 0) notify([&](LogListener& l) { l.on_segments_deleted(*this); });
  return result;
}

void PartitionLog::purge_deleted_files(bool all) {
  const std::int64_t now_ms = clock_.now_ms();
  std::erase_if(pending_deletions_, [&](PendingDeletion& p) {
    if (!all && p.due_ms > now_ms) return false;
    if (!p.segment->remove_files()) {
      log::get("storage")->warn("event=segment_file_removal_failed {}", log::kv("dir", dir_));
    }
    return true;
  });
}

Result<void, Errc> PartitionLog::delete_records_before(std::int64_t offset) {
  WEIR_ASSERT(!closed_);
  if (offset > log_end_offset_) return unexpected(Errc::kOffsetOutOfRange);
  if (offset <= log_start_offset_) return {};
  log_start_offset_ = offset;
  high_watermark_ = std::max(high_watermark_, log_start_offset_);
  if (epochs_.truncate_from_start(offset)) (void)epochs_.write_if_dirty();
  std::size_t n = 0;
  while (n + 1 < segments_.size() && segments_[n + 1]->base_offset() <= offset) ++n;
  if (n == 0) return {};
  return delete_oldest_segments(n);
}

Status<Errc> PartitionLog::truncate_fully_and_start_at(std::int64_t offset) {
  auto segment = Segment::create(fs_, dir_, offset, segment_config(), clock_.wall_ms());
  if (!segment) return unexpected(segment.error());
  ++directory_writes_;
  std::vector<std::unique_ptr<Segment>> old = std::move(segments_);
  segments_.clear();
  segments_.push_back(std::move(*segment));
  bool ok = true;
  for (auto& s : old) ok = s->remove_files() && ok;
  ++truncations_;
  if (cleaner_checkpoint_) cleaner_checkpoint_ = std::min(*cleaner_checkpoint_, offset);
  log_start_offset_ = offset;
  log_end_offset_ = offset;
  recovery_point_ = std::min(recovery_point_, offset);
  high_watermark_ = offset;
  epochs_.clear();
  (void)epochs_.write_if_dirty();
  return ok ? Status<Errc>() : unexpected(Errc::kStorageError);
}

Result<void, Errc> PartitionLog::truncate_to(std::int64_t offset) {
  WEIR_ASSERT(!closed_);
  if (offset < 0) return unexpected(Errc::kOffsetOutOfRange);
  if (offset >= log_end_offset_) {
    // No record goes, but an epoch this log started as leader without appending anything in it
    // (an entry at the log end) would conflict with the new leader's epochs: it goes, as in
    // Kafka's truncateTo. Else the follower keeps naming it as its last fetched epoch.
    if (epochs_.truncate_from_end(log_end_offset_)) (void)epochs_.write_if_dirty();
    return {};
  }
  log::get("storage")->info("event=log_truncated {} {} {}", log::kv("dir", dir_), log::kv("offset", offset),
                            log::kv("log_end_offset", log_end_offset_));
  if (offset < segments_.front()->base_offset()) {
    auto restarted = truncate_fully_and_start_at(offset);
    notify([&](LogListener& l) { l.on_truncated(*this); });
    return restarted;
  }
  ++truncations_;
  const std::size_t keep = segment_index_for(offset);
  for (std::size_t j = keep + 1; j < segments_.size(); ++j) {
    if (!segments_[j]->remove_files()) return unexpected(Errc::kStorageError);
  }
  segments_.resize(keep + 1);
  auto cut = active().truncate_to(offset);
  if (!cut) {
    failed_ = true;
    return unexpected(cut.error());
  }
  if (active().empty()) active().set_created_ms(clock_.wall_ms());  // as Kafka does
  // Kafka's maybeTruncateCheckpoint: what follows the truncation point is new, hence dirty.
  if (cleaner_checkpoint_) cleaner_checkpoint_ = std::min(*cleaner_checkpoint_, active().base_offset());
  log_end_offset_ = offset;
  log_start_offset_ = std::min(log_start_offset_, offset);
  recovery_point_ = std::min(recovery_point_, offset);
  high_watermark_ = std::min(high_watermark_, offset);
  if (epochs_.truncate_from_end(offset)) (void)epochs_.write_if_dirty();
  notify([&](LogListener& l) { l.on_truncated(*this); });
  return {};
}

Result<void, Errc> PartitionLog::truncate_fully_and_restart_at(std::int64_t offset) {
  WEIR_ASSERT(!closed_);
  if (offset < 0) return unexpected(Errc::kOffsetOutOfRange);
  log::get("storage")->info("event=log_restarted {} {} {}", log::kv("dir", dir_), log::kv("offset", offset),
                            log::kv("log_end_offset", log_end_offset_));
  auto restarted = truncate_fully_and_start_at(offset);
  notify([&](LogListener& l) { l.on_truncated(*this); });
  return restarted;
}

int PartitionLog::apply_retention(std::int64_t now_ms) {
  WEIR_ASSERT(!closed_);
  purge_deleted_files(false);
  return delete_expired_segments(now_ms);
}

int PartitionLog::delete_expired_segments(std::int64_t now_ms) {
  // Kafka's deletableSegments(): a prefix of segments matching the predicate; an empty active
  // segment is never worth deleting.
  auto deletable = [&](auto&& predicate) -> std::size_t {
    std::size_t n = 0;
    for (; n < segments_.size(); ++n) {
      Segment& segment = *segments_[n];
      const bool last = n + 1 == segments_.size();
      if ((last && segment.empty()) || !predicate(segment, last)) break;
    }
    return n;
  };
  int deleted = 0;
  // (Kafka's UnifiedLog.deleteOldSegments: time and size retention only with cleanup.policy delete.)
  auto remove_prefix = [&](std::size_t n) {
    if (n == 0) return;
    if (n == segments_.size()) {
      if (!roll_at(log_end_offset_)) return;  // keep an (empty) active segment
    }
    const std::size_t before = segments_.size();
    (void)delete_oldest_segments(n);
    deleted += static_cast<int>(before - segments_.size());
  };
  if (config_.cleanup_delete && config_.retention_ms >= 0) {
    remove_prefix(deletable([&](Segment& s, bool) {
      auto largest = s.largest_timestamp();
      return largest && now_ms - *largest > config_.retention_ms;
    }));
  }
  if (config_.cleanup_delete && config_.retention_bytes >= 0) {
    std::int64_t excess = size_bytes() - config_.retention_bytes;
    remove_prefix(deletable([&](Segment& s, bool) {
      if (excess - s.size_bytes() < 0) return false;
      excess -= s.size_bytes();
      return true;
    }));
  }
  std::size_t below_start = 0;
  while (below_start + 1 < segments_.size() && segments_[below_start + 1]->base_offset() <= log_start_offset_) {
    ++below_start;
  }
  remove_prefix(below_start);
  return deleted;
}

void PartitionLog::set_config(LogConfig config) {
  config_ = config;
  for (auto& segment : segments_) segment->set_config(segment_config());
}

// ------------------------------------------------------------------------ the log cleaner's swap

namespace {

// The base offset of a segment file ("<digits>.log" / .index / .timeindex / .txnindex) whose name
// ends with `suffix` after that; nullopt for any other file.
std::optional<std::int64_t> segment_file_base(std::string_view name, std::string_view suffix) {
  if (!name.ends_with(suffix)) return std::nullopt;
  name.remove_suffix(suffix.size());
  for (std::string_view kind :
       {Segment::kLogSuffix, Segment::kIndexSuffix, Segment::kTimeIndexSuffix, Segment::kTxnIndexSuffix}) {
    if (auto base = Segment::parse_file_name(name, kind)) return base;
  }
  return std::nullopt;
}

// The offset after the last whole, well-framed batch of a log file (base if there is none).
Result<std::int64_t, Errc> next_offset_of(FileSystem& fs, const fs::path& path, std::int64_t base) {
  auto file = fs.open(path, OpenMode::kRead);
  if (!file) return unexpected(Errc::kStorageError);
  BatchScanner scanner(**file, 0, (*file)->size(), BatchScanner::Mode::kHeaders);
  std::int64_t next = base;
  for (;;) {
    auto batch = scanner.next();
    if (!batch && batch.error() == ScanStop::kIo) return unexpected(Errc::kStorageError);
    if (!batch || !*batch) return next;
    next = (*batch)->next_offset();
  }
}

}  // namespace

Result<bool, Errc> PartitionLog::finish_interrupted_swap(const std::vector<DirEntry>& entries) {
  std::vector<std::string> cleaned;
  std::vector<std::string> swaps;
  std::int64_t min_cleaned = std::numeric_limits<std::int64_t>::max();
  for (const DirEntry& e : entries) {
    if (e.is_directory) continue;
    if (auto base = segment_file_base(e.name, Segment::kCleanedSuffix)) {
      cleaned.push_back(e.name);
      min_cleaned = std::min(min_cleaned, *base);
    } else if (segment_file_base(e.name, Segment::kSwapSuffix)) {
      swaps.push_back(e.name);
    }
  }
  if (cleaned.empty() && swaps.empty()) return false;
  auto remove = [&](const std::string& name) -> Status<Errc> {
    auto removed = fs_.remove(dir() / name);
    if (!removed && !removed.error().not_found()) return unexpected(Errc::kStorageError);
    return Status<Errc>{};
  };
  // Files are renamed .cleaned -> .swap only once all of them are complete; a .cleaned file left
  // means that renaming never finished, so the swap files at or above it go too (Kafka's rule).
  std::vector<std::string> valid;
  for (const std::string& name : swaps) {
    if (*segment_file_base(name, Segment::kSwapSuffix) < min_cleaned) {
      valid.push_back(name);
    } else if (auto ok = remove(name); !ok) {
      return unexpected(ok.error());
    }
  }
  for (const std::string& name : cleaned) {
    if (auto ok = remove(name); !ok) return unexpected(ok.error());
  }
  // The swap was complete: its segments replace whatever lies in the offsets they cover.
  std::int64_t low = std::numeric_limits<std::int64_t>::max();
  std::int64_t high = std::numeric_limits<std::int64_t>::min();
  for (const std::string& name : valid) {
    const std::string plain = name.substr(0, name.size() - Segment::kSwapSuffix.size());
    auto base = Segment::parse_file_name(plain, Segment::kLogSuffix);
    if (!base) continue;
    auto next = next_offset_of(fs_, dir() / name, *base);
    if (!next) return unexpected(next.error());
    low = std::min(low, *base);
    high = std::max(high, *next);
  }
  for (const DirEntry& e : entries) {
    auto base = e.is_directory ? std::nullopt : segment_file_base(e.name, "");
    if (!base || *base < low || *base >= high) continue;
    if (auto ok = remove(e.name); !ok) return unexpected(ok.error());
  }
  for (const std::string& name : valid) {
    const std::string plain = name.substr(0, name.size() - Segment::kSwapSuffix.size());
    if (!fs_.rename(dir() / name, dir() / plain)) return unexpected(Errc::kStorageError);
  }
  if (!fs_.sync_directory(dir_)) return unexpected(Errc::kStorageError);
  log::get("storage")->warn("event=interrupted_clean_recovered {} {} {}", log::kv("dir", dir_),
                            log::kv("swap_files_completed", valid.size()),
                            log::kv("files_rolled_back", cleaned.size() + swaps.size() - valid.size()));
  return true;
}

Status<Errc> PartitionLog::replace_segments(std::unique_ptr<Segment> cleaned, std::size_t first, std::size_t count) {
  WEIR_ASSERT(count > 0 && first + count < segments_.size(), "the active segment is never replaced");
  WEIR_ASSERT(cleaned->base_offset() == segments_[first]->base_offset());
  WEIR_ASSERT(cleaned->file_suffix() == Segment::kCleanedSuffix);
  auto give_up = [&](std::string_view step) -> Status<Errc> {
    log::get("storage")->error("event=clean_swap_failed {} {} {}", log::kv("dir", dir_),
                               log::kv("base_offset", cleaned->base_offset()), log::kv("step", step));
    if (!cleaned->remove_files()) failed_ = true;  // leftovers are resolved by the next open
    return unexpected(Errc::kStorageError);
  };
  if (!cleaned->sync_all() || !fs_.sync_directory(dir_)) return give_up("sync_cleaned");
  if (!cleaned->change_file_suffix(Segment::kSwapSuffix)) return give_up("rename_to_swap");
  if (!fs_.sync_directory(dir_)) return give_up("sync_swap");

  // From here on the swap is complete on disk: a crash ends with the cleaned segment in place.
  bool renamed = true;
  for (std::size_t i = first; renamed && i < first + count; ++i) {
    renamed = segments_[i]->rename_for_deletion().has_value();
  }
  Status<Errc> result;
  if (!renamed || !cleaned->change_file_suffix("") || !fs_.sync_directory(dir_)) {
    log::get("storage")->error("event=clean_swap_unfinished {} {} action=complete_on_next_open", log::kv("dir", dir_),
                               log::kv("base_offset", cleaned->base_offset()));
    failed_ = true;
    result = unexpected(Errc::kStorageError);
  }
  const std::int64_t due_ms = clock_.now_ms() + std::max<std::int64_t>(0, config_.file_delete_delay_ms);
  for (std::size_t i = first; i < first + count; ++i) {
    pending_deletions_.push_back(PendingDeletion{std::move(segments_[i]), due_ms});
  }
  const auto at = segments_.begin() + static_cast<std::ptrdiff_t>(first);
  segments_.erase(at + 1, at + static_cast<std::ptrdiff_t>(count));
  segments_[first] = std::move(cleaned);
  return result;
}

// ------------------------------------------------------------------------------------ durability

SyncToken PartitionLog::prepare_sync() {
  SyncToken token;
  token.log = this;
  token.log_epoch = truncations_;
  token.end_offset = log_end_offset_;
  for (std::size_t i = 0; i < segments_.size(); ++i) {
    segments_[i]->collect_dirty(token, /*include_indexes=*/i + 1 < segments_.size());
  }
  if (directory_writes_ > directory_synced_) {
    token.directories.push_back(dir_);
    token.directory_generation = directory_writes_;
  }
  return token;
}

void PartitionLog::mark_synced(const SyncToken& token) {
  WEIR_ASSERT(token.log == this, "a sync token of another log");
  for (const SyncToken::FileEntry& entry : token.files) {
    for (auto& segment : segments_) {
      if (segment->mark_synced(entry.file.get(), entry.generation)) break;
    }
  }
  if (!token.directories.empty()) directory_synced_ = std::max(directory_synced_, token.directory_generation);
  if (token.log_epoch == truncations_) {
    recovery_point_ = std::max(recovery_point_, std::min(token.end_offset, log_end_offset_));
  }
  last_flush_ms_ = clock_.now_ms();
}

std::int64_t PartitionLog::active_segment_base_offset() const noexcept { return active().base_offset(); }

Result<void, Errc> PartitionLog::flush() {
  SyncToken token = prepare_sync();
  active().collect_dirty(token, /*include_indexes=*/true);
  for (const SyncToken::FileEntry& entry : token.files) {
    if (!entry.file->sync()) return unexpected(Errc::kStorageError);
  }
  for (const fs::path& d : token.directories) {
    if (!fs_.sync_directory(d)) return unexpected(Errc::kStorageError);
  }
  mark_synced(token);
  if (auto ok = epochs_.write_if_dirty(); !ok) return ok;
  return {};
}

std::optional<PartitionSummary> PartitionLog::summary() const {
  // A log in an unknown state, or holding a segment whose swap did not finish, is read from its
  // files next time.
  if (failed_ || std::ranges::any_of(segments_, [](const auto& s) { return !s->file_suffix().empty(); })) {
    return std::nullopt;
  }
  PartitionSummary out;
  out.epochs = epochs_.entries();
  out.segments.reserve(segments_.size());
  for (const auto& segment : segments_) out.segments.push_back(segment->summary());
  // Handed over at this shutdown, or restored and never taken (no producer state was loaded): the
  // producer files are as they were then, if the log did not move since.
  if (carried_producers_ && carried_log_end_ == log_end_offset_) out.producers = carried_producers_;
  return out;
}

std::optional<std::vector<std::byte>> PartitionLog::take_carried_snapshot(std::int64_t offset) {
  if (!carried_producers_ || carried_producers_->carried_offset != offset) return std::nullopt;
  std::vector<std::byte> bytes = std::move(carried_producers_->carried_bytes);
  carried_producers_.reset();
  return bytes;
}

Result<void, Errc> PartitionLog::close() {
  if (closed_) return {};
  LogCleaner::abort(*this);  // an unfinished clean starts over after the restart
  if (auto ok = active().close(); !ok) return ok;
  if (auto ok = flush(); !ok) return ok;
  purge_deleted_files(true);
  closed_ = true;
  return {};
}

Result<void, Errc> PartitionLog::remove() {
  WEIR_ASSERT(!closed_);
  const fs::path parent = dir().parent_path().empty() ? fs::path(".") : dir().parent_path();
  const fs::path doomed = parent / delete_dir_name(dir_);
  clean_job_.reset();  // its files go with the directory
  segments_.clear();   // close our descriptors (readers holding slices keep theirs)
  pending_deletions_.clear();
  closed_ = true;
  if (!fs_.rename(dir_, doomed) || !fs_.sync_directory(parent)) return unexpected(Errc::kStorageError);
  if (!remove_all(fs_, doomed)) return unexpected(Errc::kStorageError);
  log::get("storage")->info("event=partition_deleted {}", log::kv("dir", dir_));
  return {};
}

}  // namespace weir::storage
