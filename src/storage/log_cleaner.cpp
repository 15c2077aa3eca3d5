#include "storage/log_cleaner.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "base/assert.h"
#include "base/log.h"
#include "protocol/record/record.h"
#include "protocol/record/record_batch.h"
#include "storage/batch_filter.h"
#include "storage/batch_scanner.h"

namespace weir::storage {

namespace {

using record::RecordBatchView;
using record::RecordView;
using Segments = std::vector<std::unique_ptr<Segment>>;

constexpr std::int64_t kMaxRelativeOffset = std::numeric_limits<std::int32_t>::max();

std::int64_t saturating_sub(std::int64_t a, std::int64_t b) {
  std::int64_t out = 0;
  if (!__builtin_sub_overflow(a, b, &out)) return out;
  return b > 0 ? std::numeric_limits<std::int64_t>::min() : std::numeric_limits<std::int64_t>::max();
}

Errc scan_error(ScanStop stop) { return stop == ScanStop::kIo ? Errc::kStorageError : Errc::kCorruptMessage; }

// [begin, end) of the segments overlapping [from, to): from the one holding `from` (the first if
// `from` precedes them all) to the last one starting before `to` (Kafka's logSegments(from, to)).
std::pair<std::size_t, std::size_t> overlapping(const Segments& segments, std::int64_t from, std::int64_t to) {
  if (from >= to) return {0, 0};
  auto holder = std::upper_bound(segments.begin(), segments.end(), from,
                                 [](std::int64_t v, const auto& s) { return v < s->base_offset(); });
  const auto begin = holder == segments.begin() ? 0 : static_cast<std::size_t>(holder - segments.begin()) - 1;
  auto after = std::lower_bound(segments.begin(), segments.end(), to,
                                [](const auto& s, std::int64_t v) { return s->base_offset() < v; });
  return {begin, std::max(begin, static_cast<std::size_t>(after - segments.begin()))};
}

std::int64_t bytes_of(const Segments& segments, std::pair<std::size_t, std::size_t> range) {
  std::int64_t total = 0;
  for (std::size_t i = range.first; i < range.second; ++i) total += segments[i]->size_bytes();
  return total;
}

std::size_t index_of(const Segments& segments, const Segment* segment) {
  auto it = std::find_if(segments.begin(), segments.end(), [&](const auto& s) { return s.get() == segment; });
  WEIR_ASSERT(it != segments.end());
  return static_cast<std::size_t>(it - segments.begin());
}

struct IndexSizes {
  std::int64_t offset_index_bytes = 0;
  std::int64_t time_index_bytes = 0;
};

Result<IndexSizes, Errc> index_sizes(Segment& segment) {
  auto offsets = segment.offset_index();
  if (!offsets) return unexpected(offsets.error());
  auto times = segment.time_index();
  if (!times) return unexpected(times.error());
  return IndexSizes{static_cast<std::int64_t>((*offsets)->entries() * OffsetIndex::kEntrySize),
                    static_cast<std::int64_t>((*times)->entries() * TimeIndex::kEntrySize)};
}

// Kafka's Cleaner.groupSegmentsBySize over segments [begin, end).
Result<std::vector<std::vector<Segment*>>, Errc> group_segments(const Segments& segments,
                                                                std::pair<std::size_t, std::size_t> range,
                                                                const LogConfig& config, std::int64_t upper_bound) {
  const std::int64_t max_size = std::min<std::int64_t>(config.segment_bytes, kMaxRelativeOffset);
  const std::int64_t max_index_size = config.segment_index_bytes;
  std::vector<std::vector<Segment*>> groups;
  std::size_t i = range.first;
  while (i < range.second) {
    std::vector<Segment*> group{segments[i].get()};
    auto sizes = index_sizes(*segments[i]);
    if (!sizes) return unexpected(sizes.error());
    std::int64_t log_size = segments[i]->size_bytes();
    IndexSizes total = *sizes;
    for (++i; i < range.second; ++i) {
      Segment& next = *segments[i];
      auto next_sizes = index_sizes(next);
      if (!next_sizes) return unexpected(next_sizes.error());
      // The next segment's last offset, at worst: just before the following one (or the bound).
      const std::int64_t last_offset =
          (i + 1 < range.second ? segments[i + 1]->base_offset() : upper_bound) - 1;
      const bool fits = log_size + next.size_bytes() <= max_size &&
                        total.offset_index_bytes + next_sizes->offset_index_bytes <= max_index_size &&
                        total.time_index_bytes + next_sizes->time_index_bytes <= max_index_size &&
                        (next.size_bytes() == 0 || last_offset - group.front()->base_offset() <= kMaxRelativeOffset);
      if (!fits) break;
      group.push_back(&next);
      log_size += next.size_bytes();
      total.offset_index_bytes += next_sizes->offset_index_bytes;
      total.time_index_bytes += next_sizes->time_index_bytes;
    }
    groups.push_back(std::move(group));
  }
  return groups;
}

// True if the segments the round has yet to read are still in the log (not the active one), and
// no truncation happened.
bool round_still_valid(const Segments& segments, std::uint64_t truncations, const CleanJob& job) {
  if (truncations != job.truncations) return false;
  std::unordered_map<const Segment*, std::int64_t> live;
  for (std::size_t i = 0; i + 1 < segments.size(); ++i) live.emplace(segments[i].get(), segments[i]->base_offset());
  auto still_there = [&](const Segment* s) {
    auto it = live.find(s);
    return it != live.end() && it->second == job.base_offsets.at(s);
  };
  if (job.phase == CleanJob::Phase::kClean) {
    for (std::size_t g = job.group; g < job.groups.size(); ++g) {
      if (!std::all_of(job.groups[g].begin(), job.groups[g].end(), still_there)) return false;
    }
    return true;
  }
  return std::all_of(job.scan.begin() + static_cast<std::ptrdiff_t>(job.segment), job.scan.end(), still_there);
}

}  // namespace

CleanStats& CleanStats::operator+=(const CleanStats& o) noexcept {
  bytes_read += o.bytes_read;
  bytes_written += o.bytes_written;
  records_read += o.records_read;
  records_retained += o.records_retained;
  records_without_key += o.records_without_key;
  tombstones_retained += o.tombstones_retained;
  batches_read += o.batches_read;
  batches_rewritten += o.batches_rewritten;
  batches_removed += o.batches_removed;
  keys_mapped += o.keys_mapped;
  segments_replaced += o.segments_replaced;
  segments_written += o.segments_written;
  return *this;
}

// One call's work on a round: runs its phases until the budget is spent or the round is done.
class LogCleaner::Round {
 public:
  Round(PartitionLog& log, CleanJob& job, std::int64_t budget_bytes, CleanStats& stats)
      : log_(log), job_(job), budget_bytes_(budget_bytes), stats_(stats) {}

  // True once the round is finished.
  Result<bool, Errc> run() {
    while (budget_left()) {
      Result<bool, Errc> phase_done = false;
      switch (job_.phase) {
        case CleanJob::Phase::kProducers:
          phase_done = scan_producers();
          if (phase_done && *phase_done) {
            if (auto ok = begin_map(); !ok) return unexpected(ok.error());
          }
          break;
        case CleanJob::Phase::kMap:
          phase_done = build_map();
          if (phase_done && *phase_done) {
            if (auto ok = begin_clean(); !ok) return unexpected(ok.error());
          }
          break;
        case CleanJob::Phase::kClean:
          phase_done = clean_groups();
          if (phase_done && *phase_done) return true;
          break;
      }
      if (!phase_done) return unexpected(phase_done.error());
    }
    return false;
  }

  Status<Errc> begin(const CleanableInfo& info, std::int64_t now_ms, const ActiveProducers* producers) {
    job_.now_ms = now_ms;
    job_.first_dirty_offset = info.first_dirty_offset;
    job_.upper_bound_offset = info.first_uncleanable_offset;
    job_.truncations = log_.truncations_;
    if (producers != nullptr) {
      job_.producers = *producers;
      return begin_map();
    }
    job_.phase = CleanJob::Phase::kProducers;
    set_scan(log_.log_start_offset_);
    return {};
  }

 private:
  [[nodiscard]] bool budget_left() const noexcept { return stats_.io_bytes() < budget_bytes_; }

  void set_scan(std::int64_t from) {
    const auto range = overlapping(log_.segments_, from, job_.upper_bound_offset);
    job_.scan.clear();
    for (std::size_t i = range.first; i < range.second; ++i) {
      job_.scan.push_back(log_.segments_[i].get());
      job_.base_offsets[log_.segments_[i].get()] = log_.segments_[i]->base_offset();
    }
    job_.segment = 0;
    job_.position = 0;
  }

  // ------------------------------------------------------------------------------ producers

  // The last batch of each producer id in [log start, upper bound), from batch headers.
  Result<bool, Errc> scan_producers() {
    for (; job_.segment < job_.scan.size(); ++job_.segment, job_.position = 0) {
      Segment& segment = *job_.scan[job_.segment];
      BatchScanner scanner(*segment.log_file(), job_.position, segment.size_bytes(), BatchScanner::Mode::kHeaders);
      for (;;) {
        if (!budget_left()) return false;
        auto batch = scanner.next();
        if (!batch) return unexpected(scan_error(batch.error()));
        if (!*batch) break;
        const BatchHeader& h = **batch;
        stats_.bytes_read += static_cast<std::int64_t>(record::kHeaderSize);
        if (h.producer_id >= 0) {
          ProducerLastRecord& last = job_.producers[h.producer_id];
          if (!h.is_control()) last.last_data_offset = h.last_offset();
          last.epoch = h.producer_epoch;
        }
        job_.position = scanner.position();
      }
    }
    return true;
  }

  // ------------------------------------------------------------------------------------ map

  Status<Errc> begin_map() {
    job_.phase = CleanJob::Phase::kMap;
    set_scan(job_.first_dirty_offset);
    if (!job_.scan.empty()) {  // start at the index entry for the first dirty offset, as Kafka
      auto index = job_.scan.front()->offset_index();
      if (!index) return unexpected(index.error());
      job_.position = (*index)->lookup(job_.first_dirty_offset).position;
    }
    auto aborted = log_.collect_aborted_transactions(job_.first_dirty_offset, job_.upper_bound_offset);
    if (!aborted) return unexpected(aborted.error());
    job_.map_transactions.add_aborted(*aborted);
    return {};
  }

  Result<bool, Errc> build_map() {
    for (; job_.segment < job_.scan.size(); ++job_.segment, job_.position = 0) {
      Segment& segment = *job_.scan[job_.segment];
      const std::int64_t next_base =
          job_.segment + 1 < job_.scan.size() ? job_.scan[job_.segment + 1]->base_offset() : job_.upper_bound_offset;
      BatchScanner scanner(*segment.log_file(), job_.position, segment.size_bytes(), BatchScanner::Mode::kVerify);
      for (;;) {
        if (!budget_left()) return false;
        auto batch = scanner.next();
        if (!batch) return unexpected(scan_error(batch.error()));
        if (!*batch) break;
        const BatchHeader& h = **batch;
        stats_.bytes_read += h.size;
        auto full = map_batch(*RecordBatchView::from(scanner.batch()));
        if (!full) return unexpected(full.error());
        if (*full) return true;  // the round ends before this batch
        if (h.last_offset() >= job_.first_dirty_offset) job_.map.update_latest_offset(h.last_offset());
        job_.position = scanner.position();
      }
      job_.map.update_latest_offset(next_base - 1);  // offsets missing at the end of the segment
    }
    return true;
  }

  // Puts the keys of one batch in the map; true if the map filled up.
  Result<bool, Errc> map_batch(const RecordBatchView& batch) {
    if (batch.is_control()) {
      auto discardable = job_.map_transactions.on_control_batch(batch, kMaxDecompressedBatchBytes);
      if (!discardable) return unexpected(discardable.error());
      return false;
    }
    if (job_.map_transactions.on_data_batch(batch)) return false;  // aborted: its keys do not count
    bool full = false;
    auto walked = for_each_stored_record(batch, kMaxDecompressedBatchBytes, [&](const RecordView& r) {
      const std::int64_t offset = batch.record_offset(r);
      if (full || !r.key || offset < job_.first_dirty_offset) return;
      full = !job_.map.put(*r.key, offset);
    });
    if (!walked) return unexpected(walked.error());
    return full;
  }

  // ---------------------------------------------------------------------------------- clean

  Status<Errc> begin_clean() {
    job_.end_offset = job_.map.latest_offset() + 1;
    stats_.keys_mapped += static_cast<std::int64_t>(job_.map.size());
    if (job_.end_offset <= job_.first_dirty_offset) {
      log::get("storage")->error("event=clean_failed {} reason=offset_map_too_small {}", log::kv("dir", log_.dir_),
                                 log::kv("map_bytes", job_.map.max_bytes()));
      return unexpected(Errc::kMessageTooLarge);
    }
    auto groups = group_segments(log_.segments_, overlapping(log_.segments_, -1, job_.end_offset), log_.config_,
                                 job_.upper_bound_offset);
    if (!groups) return unexpected(groups.error());
    job_.groups = std::move(*groups);
    for (const auto& group : job_.groups) {
      for (const Segment* s : group) job_.base_offsets[s] = s->base_offset();
    }
    job_.group = 0;
    job_.segment = 0;
    job_.position = 0;
    job_.segment_started = false;
    job_.phase = CleanJob::Phase::kClean;
    log::get("storage")->info("event=clean_map_built {} {} {} {} {}", log::kv("dir", log_.dir_),
                              log::kv("first_dirty_offset", job_.first_dirty_offset),
                              log::kv("end_offset", job_.end_offset), log::kv("keys", job_.map.size()),
                              log::kv("groups", job_.groups.size()));
    return {};
  }

  Result<bool, Errc> clean_groups() {
    while (job_.group < job_.groups.size()) {
      const std::vector<Segment*>& group = job_.groups[job_.group];
      if (!job_.cleaned) {
        auto cleaned = Segment::create(log_.fs_, log_.dir_, group.front()->base_offset(), log_.segment_config(),
                                       log_.clock_.wall_ms(), Segment::kCleanedSuffix);
        if (!cleaned) return unexpected(cleaned.error());
        job_.cleaned = std::move(*cleaned);
        job_.segment = 0;
        job_.position = 0;
        job_.segment_started = false;
      }
      job_.clean_transactions.set_cleaned_index(&job_.cleaned->txn_index());
      for (; job_.segment < group.size(); ++job_.segment, job_.position = 0, job_.segment_started = false) {
        auto done = clean_segment(*group[job_.segment], job_.segment + 1 == group.size());
        if (!done) return unexpected(done.error());
        if (!*done) {
          if (auto ok = flush(); !ok) return unexpected(ok.error());
          return false;
        }
      }
      if (auto ok = flush(); !ok) return unexpected(ok.error());
      if (auto ok = swap_group(group); !ok) return unexpected(ok.error());
      ++job_.group;
    }
    return true;
  }

  // Filters one source segment into the cleaned one; false if the budget ran out first.
  Result<bool, Errc> clean_segment(Segment& segment, bool last_of_group) {
    if (!job_.segment_started) {
      // The transactions this segment's batches may belong to (the next segment exists: the
      // active one is never cleaned).
      const std::size_t at = index_of(log_.segments_, &segment);
      auto aborted =
          log_.collect_aborted_transactions(segment.base_offset(), log_.segments_[at + 1]->base_offset());
      if (!aborted) return unexpected(aborted.error());
      job_.clean_transactions.add_aborted(*aborted);
      job_.segment_started = true;
    }
    const FilterContext context{job_.now_ms, log_.config_.delete_retention_ms, kMaxDecompressedBatchBytes};
    BatchScanner scanner(*segment.log_file(), job_.position, segment.size_bytes(), BatchScanner::Mode::kVerify);
    for (;;) {
      if (!budget_left()) return false;
      auto batch = scanner.next();
      if (!batch) return unexpected(scan_error(batch.error()));
      if (!*batch) return true;
      const BatchHeader& h = **batch;
      stats_.bytes_read += h.size;
      const RecordBatchView view = *RecordBatchView::from(scanner.batch());
      auto decision = decide(view, last_of_group && h.end_position() == segment.size_bytes());
      if (!decision) return unexpected(decision.error());
      const bool discard_records = decision->discard_records;
      auto retain = [&](const RecordBatchView& b, const RecordView& r) { return retain_record(b, r, discard_records); };
      auto filtered = filter_batch(view, decision->batch, retain, context, output_);
      if (!filtered) return unexpected(filtered.error());
      count(*filtered);
      job_.position = scanner.position();
      if (output_.size() >= kOutputFlushBytes) {
        if (auto ok = flush(); !ok) return unexpected(ok.error());
      }
    }
  }

  struct Decision {
    BatchDecision batch;
    bool discard_records = false;
  };

  // Kafka's checkBatchRetention in Cleaner.cleanInto.
  Result<Decision, Errc> decide(const RecordBatchView& batch, bool last_of_group) {
    bool can_discard = false;
    Decision d;
    if (batch.is_control()) {
      auto discardable = job_.clean_transactions.on_control_batch(batch, kMaxDecompressedBatchBytes);
      if (!discardable) return unexpected(discardable.error());
      can_discard = *discardable;
      // Markers are delayed like tombstones: until their own delete horizon.
      const auto horizon = batch.delete_horizon_ms();
      d.discard_records = can_discard && horizon && *horizon <= job_.now_ms;
    } else {
      can_discard = job_.clean_transactions.on_data_batch(batch);
      d.discard_records = can_discard;
    }
    bool last_of_producer = false;
    if (batch.has_producer_id()) {
      if (auto it = job_.producers.find(batch.producer_id()); it != job_.producers.end()) {
        const ProducerLastRecord& last = it->second;
        last_of_producer = last.last_data_offset ? batch.last_offset() == *last.last_data_offset
                                                 : batch.is_control() && batch.producer_epoch() == last.epoch;
      }
    }
    if (last_of_producer || batch.next_offset() == job_.upper_bound_offset || last_of_group) {
      d.batch.retention = BatchRetention::kRetainEmpty;
    } else {
      d.batch.retention = d.discard_records ? BatchRetention::kDelete : BatchRetention::kDeleteEmpty;
    }
    d.batch.marker_of_empty_transaction = can_discard && batch.is_control();
    return d;
  }

  // Kafka's Cleaner.shouldRetainRecord (message format v2).
  bool retain_record(const RecordBatchView& batch, const RecordView& r, bool discard_records) {
    if (discard_records) return false;
    if (batch.is_control()) return true;
    const std::int64_t offset = batch.record_offset(r);
    if (offset > job_.map.latest_offset()) return true;
    if (!r.key) {
      ++stats_.records_without_key;
      return false;
    }
    const bool latest_for_key = offset >= job_.map.get(*r.key);
    const auto horizon = batch.delete_horizon_ms();
    const bool keep_tombstone = !horizon || job_.now_ms < *horizon;
    return latest_for_key && (r.value.has_value() || keep_tombstone);
  }

  void count(const BatchFilterResult& filtered) {
    ++stats_.batches_read;
    stats_.records_read += filtered.records_read;
    stats_.records_retained += filtered.records_retained;
    stats_.tombstones_retained += filtered.tombstones_retained;
    switch (filtered.output) {
      case BatchFilterResult::Output::kNone:
        ++stats_.batches_removed;
        break;
      case BatchFilterResult::Output::kRewritten:
      case BatchFilterResult::Output::kEmptyHeader:
        ++stats_.batches_rewritten;
        break;
      case BatchFilterResult::Output::kOriginal:
        break;
    }
  }

  // Appends the output batched so far to the cleaned segment, and syncs it: the swap's own sync
  // then has little left to do (these calls run on the log's owner thread).
  Status<Errc> flush() {
    if (output_.empty()) return {};
    if (job_.cleaned->size_bytes() + static_cast<std::int64_t>(output_.size()) > kMaxRelativeOffset) {
      log::get("storage")->error("event=clean_failed {} reason=cleaned_segment_too_large", log::kv("dir", log_.dir_));
      return unexpected(Errc::kRecordListTooLarge);
    }
    std::vector<BatchHeader> headers;
    for (std::size_t at = 0; at < output_.size();) {
      headers.push_back(BatchHeader::parse(ByteSpan(output_).subspan(at), static_cast<std::int64_t>(at)));
      at += static_cast<std::size_t>(headers.back().size);
    }
    if (auto ok = job_.cleaned->append(output_, headers); !ok) return ok;
    stats_.bytes_written += static_cast<std::int64_t>(output_.size());
    output_.clear();
    return job_.cleaned->sync_all();
  }

  Status<Errc> swap_group(const std::vector<Segment*>& group) {
    if (auto ok = job_.cleaned->on_roll(); !ok) return ok;
    // Kafka keeps the replaced segments' modification time (retention by time falls back to it).
    if (auto modified = group.back()->last_modified_ms()) (void)job_.cleaned->set_last_modified_ms(*modified);
    job_.clean_transactions.set_cleaned_index(nullptr);
    const std::size_t first = index_of(log_.segments_, group.front());
    const std::int64_t cleaned_bytes = job_.cleaned->size_bytes();
    std::int64_t old_bytes = 0;
    for (const Segment* s : group) old_bytes += s->size_bytes();
    log::get("storage")->info("event=clean_swap {} {} {} {} {}", log::kv("dir", log_.dir_),
                              log::kv("base_offset", group.front()->base_offset()), log::kv("segments", group.size()),
                              log::kv("bytes_before", old_bytes), log::kv("bytes_after", cleaned_bytes));
    stats_.segments_replaced += static_cast<std::int64_t>(group.size());
    ++stats_.segments_written;
    return log_.replace_segments(std::move(job_.cleaned), first, group.size());
  }

  PartitionLog& log_;
  CleanJob& job_;
  std::int64_t budget_bytes_;
  CleanStats& stats_;
  std::vector<std::byte> output_;
};

LogCleaner::LogCleaner(CleanerConfig config) : config_(config) {
  WEIR_ASSERT(config_.dedupe_buffer_load_factor > 0 && config_.dedupe_buffer_load_factor <= 1);
}

Result<CleanableInfo, Errc> LogCleaner::examine(PartitionLog& log, std::int64_t now_ms) {
  const Segments& segments = log.segments_;
  const LogConfig& config = log.config_;
  const std::size_t active = segments.size() - 1;
  CleanableInfo info;
  std::int64_t dirty = log.cleaner_checkpoint_.value_or(log.log_start_offset_);
  if (dirty < log.log_start_offset_ || dirty > log.log_end_offset_) {
    dirty = log.log_start_offset_;
    info.checkpoint_reset = true;
  }
  info.first_dirty_offset = dirty;

  std::int64_t uncleanable = std::min(log.last_stable_offset(), segments[active]->base_offset());
  const std::int64_t min_lag_ms = std::max<std::int64_t>(config.min_compaction_lag_ms, 0);
  if (min_lag_ms > 0) {
    for (std::size_t i = log.segment_index_for(dirty); i < active; ++i) {
      auto largest = segments[i]->largest_timestamp();
      if (!largest) return unexpected(largest.error());
      if (*largest > saturating_sub(now_ms, min_lag_ms)) {
        uncleanable = std::min(uncleanable, segments[i]->base_offset());
        break;
      }
    }
  }
  // Down to the base offset of the segment holding it (cleaning works on whole segments).
  const std::size_t first_uncleanable = std::min(log.segment_index_for(std::max(dirty, uncleanable)), active);
  info.first_uncleanable_offset = segments[first_uncleanable]->base_offset();
  info.cleanable_bytes = bytes_of(
      segments, overlapping(segments, std::min(dirty, info.first_uncleanable_offset), info.first_uncleanable_offset));
  info.clean_bytes = bytes_of(segments, overlapping(segments, -1, dirty));
  info.dirty_ratio = info.total_bytes() > 0 ? static_cast<double>(info.cleanable_bytes) /
                                                  static_cast<double>(info.total_bytes())
                                            : 0.0;

  // Kafka's maxCompactionDelay: the oldest first-batch timestamp of the dirty non-active segments.
  std::int64_t earliest = std::numeric_limits<std::int64_t>::max();
  for (std::size_t i = log.segment_index_for(dirty); i < active; ++i) {
    auto first = segments[i]->first_batch_timestamp();
    if (!first) return unexpected(first.error());
    if (*first > 0) earliest = std::min(earliest, *first);
  }
  const std::int64_t max_lag_ms = std::max<std::int64_t>(config.max_compaction_lag_ms, 0);
  info.max_compaction_lag_passed = earliest < saturating_sub(now_ms, max_lag_ms);
  info.needs_cleaning = config.cleanup_compact && info.total_bytes() > 0 &&
                        ((info.max_compaction_lag_passed && info.cleanable_bytes > 0) ||
                         info.dirty_ratio > config.min_cleanable_dirty_ratio);
  return info;
}

void LogCleaner::abort(PartitionLog& log) {
  if (!log.clean_job_) return;
  if (log.clean_job_->cleaned) (void)log.clean_job_->cleaned->remove_files();
  log.clean_job_.reset();
}

Result<CleanResult, Errc> LogCleaner::clean(PartitionLog& log, std::int64_t now_ms, std::int64_t budget_bytes,
                                            const ActiveProducers* producers) {
  WEIR_ASSERT(!log.closed_, "cleaning a closed log");
  CleanResult result;
  if (log.failed_) {
    abort(log);
    return unexpected(Errc::kStorageError);
  }
  if (!log.config_.cleanup_compact) {
    abort(log);
    return result;
  }
  if (log.clean_job_ && !round_still_valid(log.segments_, log.truncations_, *log.clean_job_)) {
    log::get("storage")->info("event=clean_abandoned {} reason=log_changed", log::kv("dir", log.dir_));
    abort(log);
    result.state = CleanState::kAborted;
    return result;
  }
  if (!log.clean_job_) {
    auto info = examine(log, now_ms);
    if (!info) return unexpected(info.error());
    if (info->checkpoint_reset) log.cleaner_checkpoint_ = info->first_dirty_offset;
    if (!info->needs_cleaning) return result;
    const auto map_bytes =
        static_cast<std::int64_t>(static_cast<double>(config_.dedupe_buffer_bytes) * config_.dedupe_buffer_load_factor);
    log.clean_job_ = std::make_unique<CleanJob>(map_bytes);
    if (auto ok = Round(log, *log.clean_job_, budget_bytes, result.stats).begin(*info, now_ms, producers); !ok) {
      abort(log);
      return unexpected(ok.error());
    }
    log::get("storage")->info("event=clean_started {} {} {} {}", log::kv("dir", log.dir_),
                              log::kv("first_dirty_offset", info->first_dirty_offset),
                              log::kv("first_uncleanable_offset", info->first_uncleanable_offset),
                              log::kv("dirty_ratio", info->dirty_ratio));
  }
  CleanJob& job = *log.clean_job_;
  auto finished = Round(log, job, budget_bytes, result.stats).run();
  job.stats += result.stats;
  if (!finished) {
    log::get("storage")->error("event=clean_failed {} {}", log::kv("dir", log.dir_),
                               log::kv("error", to_string(finished.error())));
    abort(log);
    return unexpected(finished.error());
  }
  if (!*finished) {
    result.state = CleanState::kInProgress;
    return result;
  }
  log.cleaner_checkpoint_ = job.end_offset;
  result.state = CleanState::kCompleted;
  result.checkpoint = job.end_offset;
  log::get("storage")->info(
      "event=clean_completed {} {} {} {} {} {}", log::kv("dir", log.dir_), log::kv("checkpoint", job.end_offset),
      log::kv("bytes_read", job.stats.bytes_read), log::kv("bytes_written", job.stats.bytes_written),
      log::kv("records_retained", job.stats.records_retained), log::kv("records_read", job.stats.records_read));
  log.clean_job_.reset();
  return result;
}

}  // namespace weir::storage
