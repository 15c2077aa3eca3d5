// LogCleaner: log compaction for logs with cleanup.policy=compact, as Apache Kafka 4's
// LogCleaner, Cleaner and LogCleanerManager do it, without threads or sleeps: the owner of the log
// calls clean() with a budget of bytes and calls again until the round is done.
//
// What is cleanable (Kafka's LogCleanerManager.cleanableOffsets and LogToClean):
//   first dirty offset   the log's cleaner checkpoint (cleaner-offset-checkpoint), or the log
//                        start if there is none or it lies outside [log start, log end]
//   first uncleanable    the lowest of the last stable offset (PartitionLog::last_stable_offset),
//                        the active segment's base offset and, with min.compaction.lag.ms > 0, the
//                        base offset of the first dirty segment whose largest timestamp is newer
//                        than now - min.compaction.lag.ms; then moved down to the base offset of
//                        the segment holding it. The active segment is never cleaned.
//   dirty ratio          bytes of the segments overlapping [first dirty, first uncleanable) over
//                        those plus the bytes of the segments before the first dirty offset
//   needs cleaning       ratio > min.cleanable.dirty.ratio (strictly, as Kafka), or some dirty
//                        bytes and a dirty non-active segment whose first batch is older than
//                        now - max.compaction.lag.ms
//
// A round (Kafka's Cleaner.doClean), in three phases:
//   producers  (only if the caller does not pass the active producers) the batch headers of
//              [log start, first uncleanable) give every producer id's last batch, which is
//              kept (see below); producer ids never expire here, unlike Kafka's producer state.
//   map        the records of [first dirty, first uncleanable) go into an OffsetMap (key -> latest
//              offset); records of aborted transactions (per the .txnindex) and control batches do
//              not. When the map is full, the round ends at the last batch mapped. end offset =
//              the map's last offset + 1.
//   clean      the segments overlapping [log start, end offset) are grouped: consecutive segments
//              whose .log sizes sum to at most segment.bytes, whose .index and .timeindex sizes
//              each sum to at most segment.index.bytes and whose offsets fit 32-bit deltas from
//              the first base offset. Each group is rewritten into `<first base>.log.cleaned` by
//              filter_batch() (batch_filter.h) and swapped in atomically
//              (PartitionLog::replace_segments). A record stays if its offset is past the map's
//              last offset, or if it has a key, the map has no later offset for that key, and it
//              has a value or its batch's delete horizon has not passed; records without a key
//              go. Batches of aborted transactions go, their abort marker once none is left (its
//              .txnindex entry moves to the cleaned segment while it stays), a commit marker once
//              its transaction has no records left, each marker only after its delete horizon
//              (CleanedTransactions). A producer's last batch, the last batch of the round and (a
//              weir rule, so that recovery of an interrupted swap always knows which old segments
//              the cleaned one covers) the last batch of every group stay, at least as a header.
// The checkpoint then becomes the end offset.
//
// Work per call: clean() stops at the first batch boundary after `budget_bytes` were read plus
// written (reading batch headers counts 61 bytes each), keeping the round (the map, where it is,
// the half-written .cleaned segment) in the PartitionLog for the next call; a call always makes
// some progress when budget_bytes > 0. What a call writes it also syncs, so the swap (its fsyncs
// and renames, not counted) has little to wait for. A round is abandoned, its .cleaned files
// removed, if the log changes under it between calls: a truncation, a segment it has yet to read
// deleted (retention, DeleteRecords), compaction turned off. Memory: the offset map
// (dedupe_buffer_bytes), one batch and its decompressed records, up to kOutputFlushBytes of
// output.
//
// Threading: the log's owner thread, like PartitionLog.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "base/result.h"
#include "storage/cleaned_transactions.h"
#include "storage/errc.h"
#include "storage/offset_map.h"
#include "storage/partition_log.h"
#include "storage/segment.h"

namespace weir::storage {

struct CleanerConfig {
  // log.cleaner.dedupe.buffer.size (Kafka's default, shared there by the cleaner threads) times
  // log.cleaner.io.buffer.load.factor: the offset map's memory.
  std::int64_t dedupe_buffer_bytes = 128 * 1024 * 1024;
  double dedupe_buffer_load_factor = 0.9;
};

// What the producer state says about an active producer (Kafka's LastRecord): the last offset of
// its last data batch, if any, and its epoch. Its batch ending there is kept (as a header at
// least); with no data offset, its control batches of that epoch are.
struct ProducerLastRecord {
  std::optional<std::int64_t> last_data_offset;
  std::int16_t epoch = -1;
};
using ActiveProducers = std::unordered_map<std::int64_t, ProducerLastRecord>;

// Kafka's LogToClean, for one log now.
struct CleanableInfo {
  std::int64_t first_dirty_offset = 0;
  std::int64_t first_uncleanable_offset = 0;  // a segment base offset
  std::int64_t clean_bytes = 0;
  std::int64_t cleanable_bytes = 0;
  double dirty_ratio = 0;
  bool max_compaction_lag_passed = false;  // some dirty segment must be cleaned now
  bool checkpoint_reset = false;           // the checkpoint was outside the log: first dirty is the log start
  bool needs_cleaning = false;
  [[nodiscard]] std::int64_t total_bytes() const noexcept { return clean_bytes + cleanable_bytes; }
};

struct CleanStats {
  std::int64_t bytes_read = 0;  // batches (and batch headers) read
  std::int64_t bytes_written = 0;
  std::int64_t records_read = 0;  // by the clean phase
  std::int64_t records_retained = 0;
  std::int64_t records_without_key = 0;  // dropped
  std::int64_t tombstones_retained = 0;
  std::int64_t batches_read = 0;
  std::int64_t batches_rewritten = 0;  // rebuilt or cut down to their header
  std::int64_t batches_removed = 0;
  std::int64_t keys_mapped = 0;
  std::int64_t segments_replaced = 0;  // old segments swapped out
  std::int64_t segments_written = 0;   // cleaned segments swapped in

  [[nodiscard]] std::int64_t io_bytes() const noexcept { return bytes_read + bytes_written; }
  CleanStats& operator+=(const CleanStats& other) noexcept;
};

enum class CleanState : std::uint8_t {
  kIdle,        // nothing to clean now
  kInProgress,  // call again to go on
  kCompleted,   // a round finished in this call; the cleaner checkpoint moved
  kAborted,     // the log changed under an unfinished round, which was dropped
};

struct CleanResult {
  CleanState state = CleanState::kIdle;
  CleanStats stats;                        // this call's work
  std::optional<std::int64_t> checkpoint;  // kCompleted: the new cleaner checkpoint
};

// The state of an unfinished round, kept in the PartitionLog between calls.
struct CleanJob {
  enum class Phase : std::uint8_t { kProducers, kMap, kClean };

  explicit CleanJob(std::int64_t map_bytes) : map(map_bytes) {}

  Phase phase = Phase::kProducers;
  std::int64_t now_ms = 0;  // the round's clock, for delete horizons
  std::int64_t first_dirty_offset = 0;
  std::int64_t upper_bound_offset = 0;  // the first uncleanable offset
  std::int64_t end_offset = -1;         // known after the map phase
  std::uint64_t truncations = 0;        // the log's, when the round started
  ActiveProducers producers;
  OffsetMap map;
  CleanedTransactions map_transactions;
  CleanedTransactions clean_transactions;
  // Where the producers and map phases are: segments to read, which one, where in it.
  std::vector<Segment*> scan;
  std::size_t segment = 0;
  std::int64_t position = 0;
  bool segment_started = false;  // clean phase: the segment's aborted transactions were collected
  // The clean phase: groups of segments, which group, which of its segments, where in it.
  std::vector<std::vector<Segment*>> groups;
  std::size_t group = 0;
  std::unique_ptr<Segment> cleaned;  // the group's replacement, .cleaned files
  // The base offset of every segment the round has yet to read, recorded when it was chosen: a
  // later call checks that each pointer still names a live segment with that base offset (one
  // deleted since may have been freed and its address reused; a new segment with the same base
  // offset needs a truncation, which ends the round anyway).
  std::unordered_map<const Segment*, std::int64_t> base_offsets;
  CleanStats stats;  // the whole round so far
};

class LogCleaner {
 public:
  // Output batches are appended to the cleaned segment in writes of about this size.
  static constexpr std::size_t kOutputFlushBytes = 1024 * 1024;

  explicit LogCleaner(CleanerConfig config = {});

  // How dirty `log` is at now_ms (wall clock) and whether it needs cleaning (false unless its
  // cleanup.policy includes compact).
  [[nodiscard]] static Result<CleanableInfo, Errc> examine(PartitionLog& log, std::int64_t now_ms);

  // Goes on with the unfinished round of `log`, or starts one if examine() says it needs
  // cleaning, for about budget_bytes of I/O. now_ms is the wall clock; a round uses the time it
  // started at. `producers` (copied when a round starts) says which producers are active; without
  // it the log's batch headers are read for them (see above). On an error the round is dropped;
  // the caller should stop cleaning this log (Kafka marks it uncleanable).
  [[nodiscard]] Result<CleanResult, Errc> clean(PartitionLog& log, std::int64_t now_ms, std::int64_t budget_bytes,
                                                const ActiveProducers* producers = nullptr);

  // Drops the unfinished round of `log`, if any, removing its .cleaned files.
  static void abort(PartitionLog& log);

  [[nodiscard]] const CleanerConfig& config() const noexcept { return config_; }

 private:
  class Round;

  CleanerConfig config_;
};

}  // namespace weir::storage
