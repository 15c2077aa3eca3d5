// PartitionLog: the log of one topic partition, in Kafka's on-disk format, in its directory
// `<log dir>/<topic>-<partition>/`:
//
//   00000000000000000000.log/.index/.timeindex[/.txnindex]   segments (segment.h)
//   00000000000000004711.log/...                              the last one is the active segment
//   leader-epoch-checkpoint                                   leader_epoch_cache.h, checkpoint.h
//   partition.metadata                                        topic id (written by LogManager)
//   *.snapshot                                                producer state (transactions layer; left alone,
//                                                             kept in step through a LogListener)
//
// Offsets: log_start_offset() <= every readable offset < log_end_offset() (LEO). Batches are
// appended at the active segment; a new segment is rolled when the active one would pass
// segment.bytes, is older than segment.ms (by record timestamps, as Kafka measures it), has a
// full index, or cannot hold the offsets as 32-bit deltas.
//
// Durability: appends are written (page cache) at once; prepare_sync() names what must be
// synced for everything appended so far, the Flusher syncs it, mark_synced() records it and
// advances recovery_point(): every offset below it is durable. flush() does all of that inline.
//
// Recovery (open): first an interrupted swap of the log cleaner is finished or rolled back, as
// Kafka's LogLoader does: `.cleaned` files are removed, and so are `.swap` files at or above the
// lowest `.cleaned` base offset (their renaming never completed); the remaining `.swap` files
// replace the segment files whose base offsets lie in [lowest `.log.swap` base, highest
// `.log.swap` next offset) and lose their suffix. Then, after an unclean shutdown every segment
// that may hold offsets at or after the recovery point is checked batch by batch (magic, CRC,
// offsets); the log is cut at the first invalid or partial batch, later segments are deleted,
// indexes rebuilt. After a clean shutdown only the active segment's tail (after its last index
// entry) is read. Missing or corrupt indexes of any segment are rebuilt when found.
//
// Compaction (cleanup.policy=compact) is done by LogCleaner (log_cleaner.h), which keeps the state
// of an unfinished clean here and swaps cleaned segments in with replace_segments().
//
// Threading: a PartitionLog has one owner thread; call every method there. The only things that
// leave it are FileSlice (its file may be read and sent from any thread, and keeps the file open
// even after the segment is deleted) and SyncToken (synced on the flusher thread).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/result.h"
#include "storage/errc.h"
#include "storage/file.h"
#include "storage/leader_epoch_cache.h"
#include "storage/log_summary.h"
#include "storage/records_summary.h"
#include "storage/segment.h"
#include "storage/sync_token.h"
#include "storage/transaction_index.h"

namespace weir::storage {

struct CleanJob;
class LogCleaner;

// Topic-level configs, with Kafka's names and defaults.
struct LogConfig {
  std::int64_t segment_bytes = 1073741824;      // segment.bytes
  std::int64_t segment_ms = 604800000;          // segment.ms
  std::int32_t index_interval_bytes = 4096;     // index.interval.bytes
  std::int32_t segment_index_bytes = 10485760;  // segment.index.bytes
  std::int64_t retention_ms = 604800000;        // retention.ms; -1: keep forever
  std::int64_t retention_bytes = -1;            // retention.bytes; -1: no limit
  std::int32_t max_message_bytes = 1048588;     // max.message.bytes (per batch)
  bool log_append_time = false;                 // message.timestamp.type=LogAppendTime
  std::int64_t timestamp_before_max_ms = std::numeric_limits<std::int64_t>::max();  // message.timestamp.before.max.ms
  std::int64_t timestamp_after_max_ms = 3600000;                                    // message.timestamp.after.max.ms
  std::int64_t file_delete_delay_ms = 60000;                                        // file.delete.delay.ms
  // cleanup.policy: "delete" (retention.ms and retention.bytes apply), "compact" (LogCleaner), or
  // both.
  bool cleanup_delete = true;
  bool cleanup_compact = false;
  std::int64_t delete_retention_ms = 86400000;                                    // delete.retention.ms
  std::int64_t min_compaction_lag_ms = 0;                                         // min.compaction.lag.ms
  std::int64_t max_compaction_lag_ms = std::numeric_limits<std::int64_t>::max();  // max.compaction.lag.ms
  double min_cleanable_dirty_ratio = 0.5;                                         // min.cleanable.dirty.ratio
  // Periodic flushes (the broker acts on them): after this many unflushed messages, and when the
  // last flush is this old. Kafka's defaults: never.
  std::int64_t flush_messages = std::numeric_limits<std::int64_t>::max();  // flush.messages
  std::int64_t flush_ms = std::numeric_limits<std::int64_t>::max();        // flush.ms
  // Broker-wide (weir.produce.max.decompressed.batch.bytes, weir.produce.max.compression.ratio):
  // how far a compressed producer batch may decompress (records_summary.h).
  record::DecompressionLimits decompression = {kDefaultMaxDecompressedBatchBytes, kDefaultMaxCompressionRatio};
  // min.insync.replicas: the replication layer reads it (acks=all needs this many in-sync
  // replicas; the high watermark moves only while the ISR has them), as Kafka's LogConfig holds it.
  std::int32_t min_insync_replicas = 1;
};

// What the log directory's checkpoint files say about this partition.
struct RecoveryHint {
  bool clean_shutdown = false;        // the log dir had its clean-shutdown marker
  std::int64_t recovery_point = 0;    // recovery-point-offset-checkpoint (0 if absent)
  std::int64_t log_start_offset = 0;  // log-start-offset-checkpoint (0 if absent)
  std::int64_t high_watermark = 0;    // replication-offset-checkpoint (0 if absent)
  std::optional<std::int64_t> cleaner_checkpoint = std::nullopt;  // cleaner-offset-checkpoint (none if absent)
  // The clean-shutdown summary's entry for this partition, when the log dir's is trusted
  // (log_summary.h) and the directory was found to be the one it describes (so it exists): the
  // log is built from it without reading its directory or files. If the directory turns out not
  // to match it, the log is loaded from its files.
  const PartitionSummary* summary = nullptr;
};

struct AppendInfo {
  std::int64_t first_offset = -1;
  std::int64_t last_offset = -1;
  std::int64_t log_append_time_ms = -1;  // -1 unless the topic uses LogAppendTime
  std::int64_t log_start_offset = 0;
  std::int32_t batches = 0;
  std::int64_t max_timestamp_ms = -1;
};

// A byte range of a segment file holding whole batches. Keeps the file open (even if the
// segment is deleted meanwhile), so it can be sent with sendfile(2) from any thread.
struct FileSlice {
  std::shared_ptr<const File> file;
  std::int64_t position = 0;
  std::int32_t size = 0;
  [[nodiscard]] int fd() const noexcept { return file->fd(); }
};

struct ReadResult {
  std::vector<FileSlice> slices;
  std::int64_t size_bytes = 0;
  std::int64_t next_offset = -1;  // the offset after the last batch read (-1 when nothing was read)
  // Copies the slices' bytes (pread) to the end of out. kStorageError on a read error or if a
  // file is shorter than its slice (truncated since).
  [[nodiscard]] Result<void, Errc> append_to(std::vector<std::uint8_t>& out) const;
};

class PartitionLog;

// Told about changes to a log's segments, so that a layer above can keep files of its own in step
// with them (the transactions layer writes producer state snapshots at segment rolls and drops
// them with their segments). Called on the log's owner thread, after the change, from inside the
// log's method: a listener may read the log (log_end_offset(), scan_batches()) but not modify it.
class LogListener {
 public:
  virtual ~LogListener() = default;
  // A new active segment, still empty, starts at base_offset (the log end offset, or above it).
  virtual void on_roll(PartitionLog& log, std::int64_t base_offset) = 0;
  // Segments below the log start were deleted (retention, DeleteRecords).
  virtual void on_segments_deleted(PartitionLog& log) = 0;
  // truncate_to() removed batches from the end: the log end offset is lower than before.
  virtual void on_truncated(PartitionLog& log) = 0;
};

class PartitionLog {
 public:
  // Opens (creating if missing) the partition directory `dir` and recovers it as the hint says.
  // fs and clock must outlive the log.
  [[nodiscard]] static Result<std::unique_ptr<PartitionLog>, Errc> open(FileSystem& fs, std::filesystem::path dir,
                                                                        LogConfig config, const Clock& clock,
                                                                        RecoveryHint hint);
  // Does not flush or write anything (as if the process died); call close() for a clean shutdown.
  ~PartitionLog();
  PartitionLog(const PartitionLog&) = delete;
  PartitionLog& operator=(const PartitionLog&) = delete;

  // Producer batches (one or more concatenated v2 batches as a client sent them). Each batch is
  // validated: framing, magic 2, CRC32C, record count vs lastOffsetDelta, client rules (base
  // offset 0, no control batch, sequence with producer id), every record (uncompressed batches),
  // size <= max.message.bytes, timestamps within message.timestamp.{before,after}.max.ms of now
  // (CreateTime), and on compacted topics a key on every record (Kafka 4 refuses keyless records
  // there with INVALID_RECORD; compressed batches are decompressed to check, streaming, within
  // config().decompression, or `summaries` says what their records hold -- see
  // records_summary.h; a compressed batch without a summary is read here). Then offsets are
  // assigned from the log end offset, the partition leader epoch stamped, and maxTimestamp set
  // (to the records' largest timestamp, or to now and the LogAppendTime bit when the topic says
  // so), in place in `batches`. All or nothing: on any error the log is unchanged. Empty input
  // appends nothing (batches = 0, offsets -1).
  [[nodiscard]] Result<AppendInfo, Errc> append_as_leader(std::span<std::byte> batches, std::int32_t leader_epoch,
                                                          const RecordsSummaries* summaries = nullptr);

  // Batches that already carry their offsets (control markers written by the broker,
  // replication later): checked like stored batches (framing, magic, CRC, counts, records) and
  // appended as they are. Offsets must start at or after the log end offset and increase
  // (kInvalidRecord otherwise). All or nothing.
  [[nodiscard]] Result<AppendInfo, Errc> append_with_offsets(std::span<const std::byte> batches);

  // A follower replica's append (Kafka's UnifiedLog.appendAsFollower): batches exactly as the
  // leader wrote them (offsets, partition leader epochs, timestamps kept), validated as stored
  // batches. The first batch must start at or after the log end offset (an offset below it is
  // Kafka's UNEXPECTED_APPEND_OFFSET: kInvalidRecord here; a gap above it is accepted, as Kafka
  // does, since compaction on the leader removes whole batches) and offsets must increase. Each
  // batch's epoch is assigned in the leader epoch cache at its base offset. The high watermark is
  // not moved (update_high_watermark()). Control batches are stored like any batch: the caller
  // (the transactions layer) updates producer state and the .txnindex from them, as it does for
  // markers it writes. All or nothing.
  [[nodiscard]] Result<AppendInfo, Errc> append_as_follower(std::span<const std::byte> batches) {
    return append_with_offsets(batches);
  }

  // Whole batches from the one containing `offset`: at most max_bytes unless min_one_batch and
  // the first batch alone is larger (then exactly that batch); never a batch whose base offset is
  // at or after max_offset (the high watermark or last stable offset). May span segments.
  // offset < log start or > LEO: kOffsetOutOfRange. offset == LEO or >= max_offset: empty result.
  [[nodiscard]] Result<ReadResult, Errc> read(std::int64_t offset, std::int32_t max_bytes, std::int64_t max_offset,
                                              bool min_one_batch) const;

  // The first record (at or after the log start) with timestamp >= timestamp_ms; nullopt if none.
  [[nodiscard]] Result<std::optional<TimestampOffset>, Errc> lookup_offset_by_timestamp(
      std::int64_t timestamp_ms) const;
  // The record with the largest timestamp (ListOffsets MAX_TIMESTAMP); nullopt if the log has none.
  [[nodiscard]] Result<std::optional<TimestampOffset>, Errc> lookup_max_timestamp() const;
  // The same, with an I/O error logged and reported as "none" (the shape the broker codes against).
  [[nodiscard]] std::optional<TimestampOffset> find_offset_by_timestamp(std::int64_t timestamp_ms) const;
  [[nodiscard]] std::optional<TimestampOffset> max_timestamp() const;

  [[nodiscard]] std::int64_t log_start_offset() const noexcept { return log_start_offset_; }
  [[nodiscard]] std::int64_t log_end_offset() const noexcept { return log_end_offset_; }
  [[nodiscard]] std::int64_t size_bytes() const noexcept;
  [[nodiscard]] std::size_t segment_count() const noexcept { return segments_.size(); }
  [[nodiscard]] std::filesystem::path dir() const { return dir_; }
  [[nodiscard]] const LogConfig& config() const noexcept { return config_; }
  // What the log does its I/O with and reads the time from (for files kept beside it).
  [[nodiscard]] FileSystem& file_system() const noexcept { return fs_; }
  // The offsets of the producer snapshot files the load found in the directory (or the log dir's
  // summary recorded), unsorted, once: the first call takes them, later ones get nullopt. The
  // producer state's first load takes them here instead of listing the directory again.
  [[nodiscard]] std::optional<std::vector<std::int64_t>> take_snapshot_offsets() noexcept {
    return std::exchange(snapshot_offsets_, std::nullopt);
  }
  [[nodiscard]] const Clock& clock() const noexcept { return clock_; }

  // The producer state's files, handed over by the transactions layer at a clean shutdown
  // (after its last snapshot), for the log dir's summary. After a load from a summary, the bytes
  // of the snapshot file at `offset` if the summary carried them (once; nullopt otherwise).
  void carry_producer_state(CarriedProducerState state) {
    carried_producers_ = std::move(state);
    carried_log_end_ = log_end_offset_;
  }
  [[nodiscard]] std::optional<std::vector<std::byte>> take_carried_snapshot(std::int64_t offset);
  // What the log dir's summary records of this log (the directory's name, identity and topic id
  // are the LogManager's to fill in), after close(); nullopt for a log that must be read from its
  // files next time (failed, or with an unfinished cleaner swap).
  [[nodiscard]] std::optional<PartitionSummary> summary() const;

  // The listener told about rolls, segment deletions and truncations; held weakly: once it is
  // gone, nothing is called. One at a time (a new one replaces the old).
  void set_listener(std::weak_ptr<LogListener> listener) { listener_ = std::move(listener); }

  // Rebuilding state kept outside the log (the producer state of the transactions layer): every
  // batch whose last offset is >= max(from, log start), in offset order, up to the log end.
  // on_batch gets each batch's header (base sequence included) and, for a control batch of at
  // most kMaxScannedControlBatchBytes, the whole batch's bytes (its records are the transaction
  // marker); data batches are not read beyond their headers (control_batch is empty). The bytes
  // are valid during the call only. kStorageError on a read error, kCorruptMessage on a batch
  // that cannot be framed.
  static constexpr std::int32_t kMaxScannedControlBatchBytes = 4096;
  using BatchVisitor = std::function<void(const BatchHeader& header, ByteSpan control_batch)>;
  [[nodiscard]] Result<void, Errc> scan_batches(std::int64_t from, const BatchVisitor& on_batch) const;

  // The high watermark, kept here for replication-offset-checkpoint (LogManager writes it and
  // passes it back in RecoveryHint); the broker advances it. Clamped to [log start, LEO].
  [[nodiscard]] std::int64_t high_watermark() const noexcept { return high_watermark_; }
  void update_high_watermark(std::int64_t offset) noexcept;
  // The first offset of the oldest open transaction, set by the transactions layer (nullopt: none
  // open). The last stable offset is the lower of it and the high watermark; the log cleaner
  // never cleans at or past it.
  void set_first_unstable_offset(std::optional<std::int64_t> offset) noexcept { first_unstable_offset_ = offset; }
  [[nodiscard]] std::int64_t last_stable_offset() const noexcept;

  // The log cleaner's checkpoint (cleaner-offset-checkpoint): the first offset not yet cleaned;
  // nullopt if the log was never cleaned. A truncation lowers it.
  [[nodiscard]] std::optional<std::int64_t> cleaner_checkpoint() const noexcept { return cleaner_checkpoint_; }
  // True while a clean started by LogCleaner::clean() has not finished.
  [[nodiscard]] bool cleaning_in_progress() const noexcept { return clean_job_ != nullptr; }

  // DeleteRecords: moves the log start up to offset (kOffsetOutOfRange if beyond LEO) and deletes
  // the segments wholly below it. A smaller offset is a no-op.
  [[nodiscard]] Result<void, Errc> delete_records_before(std::int64_t offset);
  // Removes every batch with last offset >= offset; the LEO becomes offset (no-op if offset >=
  // LEO). Below the log start, the whole log is dropped and restarted at offset.
  [[nodiscard]] Result<void, Errc> truncate_to(std::int64_t offset);
  // A follower whose fetch offset the leader no longer has (below its log start; Kafka's
  // truncateFullyAndStartAt): every segment is removed and the log restarts, empty, at offset.
  [[nodiscard]] Result<void, Errc> truncate_fully_and_restart_at(std::int64_t offset);
  // A new leader's epoch starts at the log end offset (Kafka's maybeAssignEpochStartOffset), so
  // that followers asking for the end of an older epoch learn where this one began.
  void assign_leader_epoch(std::int32_t epoch) { assign_epoch(epoch, log_end_offset_); }
  // With cleanup.policy delete: retention.ms (segments whose largest timestamp is older than
  // now_ms - retention.ms) and retention.bytes (oldest segments while the log stays at or above
  // the limit without them), whole segments; with any policy, segments wholly below the log
  // start. (Kafka also keeps segments that reach past the high watermark; with one replica the
  // broker's HW is the LEO, so that check waits for replication.)
  // The active segment is never deleted while active: if it has expired it is rolled first, as
  // Kafka does. Also removes files deleted more than file.delete.delay.ms ago. Returns the
  // number of segments deleted.
  int apply_retention(std::int64_t now_ms);
  // Starts a new active segment at the LEO (no-op if the active segment is empty).
  [[nodiscard]] Result<void, Errc> roll();
  void set_config(LogConfig config);

  // Leader epochs (leader-epoch-checkpoint) for OffsetForLeaderEpoch: (epoch, end offset) as
  // Kafka computes it; nullopt for UNDEFINED_EPOCH / UNDEFINED_EPOCH_OFFSET.
  [[nodiscard]] std::optional<std::pair<std::int32_t, std::int64_t>> end_offset_for_epoch(std::int32_t epoch) const;
  [[nodiscard]] std::optional<std::int32_t> latest_epoch() const;
  [[nodiscard]] const std::vector<EpochEntry>& epoch_entries() const noexcept { return epochs_.entries(); }

  // Aborted transactions (filled by the transactions layer). append_aborted_transaction() puts
  // the entry in the segment holding txn.last_offset (the abort marker).
  [[nodiscard]] Result<void, Errc> append_aborted_transaction(const AbortedTxn& txn);
  // Entries overlapping [start_offset, upper_bound_offset), from the segment holding start_offset on.
  [[nodiscard]] Result<std::vector<AbortedTxn>, Errc> collect_aborted_transactions(
      std::int64_t start_offset, std::int64_t upper_bound_offset) const;

  // Durability. prepare_sync() names every file with unsynced writes (and the directory, after a
  // new segment); hand it to the Flusher, then call mark_synced() here once it succeeded.
  [[nodiscard]] SyncToken prepare_sync();
  void mark_synced(const SyncToken& token);
  // Syncs everything inline (all files, indexes included) and advances the recovery point.
  [[nodiscard]] Result<void, Errc> flush();
  [[nodiscard]] std::int64_t recovery_point() const noexcept { return recovery_point_; }
  // Messages appended but not yet durable (Kafka's unflushedMessages), for flush.messages.
  [[nodiscard]] std::int64_t unflushed_messages() const noexcept { return log_end_offset_ - recovery_point_; }
  // When the recovery point last advanced or a flush found nothing to do (clock().now_ms()), for flush.ms.
  [[nodiscard]] std::int64_t last_flush_ms() const noexcept { return last_flush_ms_; }
  // The base offset of the active segment: everything below it is in rolled segments, which
  // Kafka flushes soon after the roll.
  [[nodiscard]] std::int64_t active_segment_base_offset() const noexcept;

  // Clean shutdown: flush, final index entries, leader-epoch checkpoint, pending deletions. The
  // log cannot be used afterwards.
  [[nodiscard]] Result<void, Errc> close();
  // Deletes the partition: renames the directory to `<topic>-<partition>.<32 hex>-delete`
  // (Kafka's form), syncs its parent, then removes it. The log cannot be used afterwards.
  [[nodiscard]] Result<void, Errc> remove();

  // Set after an I/O failure left the files in an unknown state (a failed rollback): appends
  // fail with kStorageError until the log is reopened (which recovers it).
  [[nodiscard]] bool failed() const noexcept { return failed_; }

 private:
  friend class LogCleaner;

  struct PendingDeletion {
    std::unique_ptr<Segment> segment;
    std::int64_t due_ms;  // monotonic
  };

  PartitionLog(FileSystem& fs, const std::filesystem::path& dir, LogConfig config, const Clock& clock);

  [[nodiscard]] Status<Errc> load(const RecoveryHint& hint);
  // load() from a summary instead of the directory; reads nothing.
  [[nodiscard]] Status<Errc> restore(const RecoveryHint& hint, const PartitionSummary& summary);
  // The part of a load after the segments are known: offsets, epochs, recovery point.
  [[nodiscard]] Status<Errc> finish_load(const RecoveryHint& hint, bool recovered, std::size_t scanned);
  // From the directory's listing: completes or rolls back a compaction swap a crash interrupted
  // (Kafka's rules); true if it changed the directory.
  [[nodiscard]] Result<bool, Errc> finish_interrupted_swap(const std::vector<DirEntry>& entries);
  [[nodiscard]] Status<Errc> load_segments(const RecoveryHint& hint, std::vector<std::int64_t>& bases);
  // Recovers the segments from first_index on. A segment that ends short of the next one's base
  // lost its tail in a crash while the next segment's file survived (a directory sync, or the
  // kernel's own writeback, made it durable first): everything after the gap is dropped, as after
  // an invalid batch, so the log has no hole. Compaction leaves gaps between segments only up to
  // the cleaner's checkpoint (cleaned_below; -1 none), and those are kept.
  [[nodiscard]] Status<Errc> recover_from(std::size_t first_index, std::int64_t cleaned_below);
  [[nodiscard]] SegmentConfig segment_config() const noexcept;
  [[nodiscard]] Segment& active() const noexcept { return *segments_.back(); }
  // The index of the last segment with base offset <= offset (0 if offset is below them all).
  [[nodiscard]] std::size_t segment_index_for(std::int64_t offset) const noexcept;

  [[nodiscard]] Status<Errc> write(ByteSpan bytes, const std::vector<BatchHeader>& headers, std::int64_t first_offset,
                                   std::int64_t max_timestamp);
  [[nodiscard]] Status<Errc> maybe_roll(std::int64_t messages_bytes, std::int64_t max_timestamp,
                                        std::int64_t first_offset, std::int64_t last_offset);
  [[nodiscard]] Status<Errc> roll_at(std::int64_t base_offset);
  void assign_epoch(std::int32_t epoch, std::int64_t start_offset);
  // Removes the first n segments (renamed now, files removed after file.delete.delay.ms).
  [[nodiscard]] Status<Errc> delete_oldest_segments(std::size_t n);
  void purge_deleted_files(bool all);
  // The listener, if there is one still alive.
  template <class F>
  void notify(F&& f) {
    if (auto l = listener_.lock()) f(*l);
  }
  [[nodiscard]] Status<Errc> truncate_fully_and_start_at(std::int64_t offset);
  [[nodiscard]] int delete_expired_segments(std::int64_t now_ms);
  // The log cleaner's swap (Kafka's replaceSegments): `cleaned`, complete under the .cleaned
  // suffix and starting at the same base offset, replaces segments_[first, first + count), none
  // of them active. Made durable as .cleaned, renamed .swap (durable), the old segments renamed
  // .deleted (removed after file.delete.delay.ms), then .swap dropped. An error before the .swap
  // renames leaves the log as it was (the cleaned files are removed); an error after them still
  // swaps in memory, leaves the rest to the next open (which completes the swap) and marks the
  // log failed.
  [[nodiscard]] Status<Errc> replace_segments(std::unique_ptr<Segment> cleaned, std::size_t first, std::size_t count);

  FileSystem& fs_;
  // A string, not a std::filesystem::path: a path keeps each of its components as a path of its
  // own (hundreds of bytes a partition, at 100,000 partitions tens of MiB).
  std::string dir_;
  LogConfig config_;
  const Clock& clock_;
  std::vector<std::unique_ptr<Segment>> segments_;  // by base offset; back() is active
  LeaderEpochCache epochs_;
  std::int64_t log_start_offset_ = 0;
  std::int64_t log_end_offset_ = 0;
  std::int64_t recovery_point_ = 0;
  std::int64_t last_flush_ms_ = 0;
  std::int64_t high_watermark_ = 0;
  std::uint64_t truncations_ = 0;       // voids SyncTokens prepared before a truncation
  std::uint64_t directory_writes_ = 0;  // segment files created
  std::uint64_t directory_synced_ = 0;
  std::vector<PendingDeletion> pending_deletions_;
  std::optional<std::vector<std::int64_t>> snapshot_offsets_;  // take_snapshot_offsets()
  std::optional<CarriedProducerState> carried_producers_;
  std::int64_t carried_log_end_ = -1;  // the log end when carried_producers_ was set
  std::optional<std::int64_t> first_unstable_offset_;
  std::optional<std::int64_t> cleaner_checkpoint_;
  std::unique_ptr<CleanJob> clean_job_;  // an unfinished clean (LogCleaner)
  std::weak_ptr<LogListener> listener_;
  bool failed_ = false;
  bool closed_ = false;
};

}  // namespace weir::storage
