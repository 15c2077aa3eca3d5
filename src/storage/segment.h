// Segment: one piece of a partition log, files named by the offset of its first batch:
//
//   <20-digit base offset>.log        record batches (RecordBatch v2, layout in
//                                     protocol/record/record_batch.h), back to back, exactly as
//                                     produced after offset assignment; nothing else in the file
//   <20-digit base offset>.index      sparse offset index (offset_index.h)
//   <20-digit base offset>.timeindex  sparse time index (time_index.h)
//   <20-digit base offset>.txnindex   aborted transactions (transaction_index.h), only if any
//
// e.g. 00000000000000001234.log. A file being deleted gets the suffix ".deleted" first. The log
// cleaner writes a replacement segment as "<name>.cleaned", renames it to "<name>.swap" once it
// is durable, and to "<name>" after the segments it replaces are renamed ".deleted" (Kafka's
// suffixes; PartitionLog's recovery completes or rolls back an interrupted swap).
//
// Invariants: batches in the .log are contiguous, their offsets strictly increase and all lie in
// [base offset, base offset + 2^31); every index entry points at a batch boundary.
//
// Index rule (Kafka's, so kafka-dump-log's index checks pass): while appending, before each
// batch, if more than index.interval.bytes of log were written since the last entry, the batch
// gets an offset-index entry (its last offset, its position) and the time index gets
// (largest timestamp so far, last offset of the batch holding it) if that timestamp grew.
//
// Indexes of a segment that is not active are loaded on first use (and rebuilt from the log if
// they are missing or fail their checks), so even the read methods are not const.
// Single-threaded: owned by a PartitionLog.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "base/bytes.h"
#include "base/result.h"
#include "storage/batch_scanner.h"
#include "storage/errc.h"
#include "storage/file.h"
#include "storage/log_summary.h"
#include "storage/offset_index.h"
#include "storage/sync_token.h"
#include "storage/time_index.h"
#include "storage/tracked_file.h"
#include "storage/transaction_index.h"

namespace weir::storage {

struct SegmentConfig {
  std::int32_t index_interval_bytes = 4096;
  std::int32_t segment_index_bytes = 10485760;
};

// A record found by timestamp (ListOffsets).
struct TimestampOffset {
  std::int64_t timestamp_ms = -1;
  std::int64_t offset = -1;
  std::int32_t leader_epoch = -1;  // of the batch holding it; -1 if unknown
  friend bool operator==(const TimestampOffset&, const TimestampOffset&) = default;
};

// What an append would add, for the roll decision.
struct RollCheck {
  std::int64_t segment_bytes = 0;
  std::int64_t segment_ms = 0;
  std::int64_t messages_bytes = 0;
  std::int64_t max_timestamp_in_messages = -1;
  std::int64_t max_offset_in_messages = 0;
  std::int64_t now_ms = 0;  // wall clock
};

class Segment {
 public:
  static constexpr std::string_view kLogSuffix = ".log";
  static constexpr std::string_view kIndexSuffix = ".index";
  static constexpr std::string_view kTimeIndexSuffix = ".timeindex";
  static constexpr std::string_view kTxnIndexSuffix = ".txnindex";
  static constexpr std::string_view kDeletedSuffix = ".deleted";
  static constexpr std::string_view kCleanedSuffix = ".cleaned";
  static constexpr std::string_view kSwapSuffix = ".swap";

  // "00000000000000001234.log".
  [[nodiscard]] static std::string file_name(std::int64_t base_offset, std::string_view suffix);
  // The base offset of a file name with that suffix ("<digits><suffix>"); nullopt otherwise.
  [[nodiscard]] static std::optional<std::int64_t> parse_file_name(std::string_view name, std::string_view suffix);

  // Creates the files of a new, empty segment (replacing leftovers with the same name). With a
  // file_suffix (kCleanedSuffix) every file name gets it appended.
  [[nodiscard]] static Result<std::unique_ptr<Segment>, Errc> create(FileSystem& fs, const std::filesystem::path& dir,
                                                                     std::int64_t base_offset,
                                                                     const SegmentConfig& config,
                                                                     std::int64_t created_ms,
                                                                     std::string_view file_suffix = {});
  // Which of a segment's index files its directory listing showed.
  struct IndexFiles {
    bool offset_index = false;
    bool time_index = false;
    bool txn_index = false;
  };
  // Opens the files of an existing segment without reading its batches. Missing index files are
  // created empty and the segment marked for an index rebuild (indexes_missing()). `present`
  // says which index files the caller's listing of the directory found (saving a lookup each).
  [[nodiscard]] static Result<std::unique_ptr<Segment>, Errc> open(FileSystem& fs, const std::filesystem::path& dir,
                                                                   std::int64_t base_offset,
                                                                   const SegmentConfig& config,
                                                                   std::int64_t created_ms, IndexFiles present);

  // A segment as a clean shutdown's summary describes it (log_summary.h), reading nothing: its
  // files come from the file system's open_known() (a FileCache opens them on first use), its
  // indexes load on first use (load_indexes() before appending), and what the summary knew of
  // its tail is known here.
  [[nodiscard]] static Result<std::unique_ptr<Segment>, Errc> restore(FileSystem& fs, const std::filesystem::path& dir,
                                                                      const SegmentConfig& config,
                                                                      std::int64_t created_ms,
                                                                      const SegmentSummary& summary);
  // What restore() needs to build this segment again (of a segment without a file suffix).
  [[nodiscard]] SegmentSummary summary() const;
  // Loads the indexes unless they are (rebuilding them if needed, as any first use does).
  [[nodiscard]] Status<Errc> load_indexes() { return ensure_indexes(); }

  Segment(const Segment&) = delete;
  Segment& operator=(const Segment&) = delete;
  ~Segment();

  [[nodiscard]] std::int64_t base_offset() const noexcept { return base_offset_; }
  [[nodiscard]] std::int64_t size_bytes() const noexcept { return log_.file().size(); }
  [[nodiscard]] bool empty() const noexcept { return size_bytes() == 0; }
  // Offset after the last batch. Known after create(), recover() and load_tail(); else nullopt.
  [[nodiscard]] std::optional<std::int64_t> next_offset() const noexcept { return next_offset_; }
  [[nodiscard]] bool indexes_missing() const noexcept { return indexes_missing_; }
  void set_config(const SegmentConfig& config) noexcept { config_ = config; }
  // segment.ms counts from here while the segment has no batch with a timestamp.
  void set_created_ms(std::int64_t created_ms) noexcept { created_ms_ = created_ms; }

  // Checks every batch from the start (magic, CRC, offsets increasing inside the segment's
  // range), truncates the log at the first invalid or partial batch, and rebuilds all indexes.
  // on_batch sees every valid batch. Returns the number of bytes cut off.
  [[nodiscard]] Result<std::int64_t, Errc> recover(const std::function<void(const BatchHeader&)>& on_batch = {});

  // For the active segment after a clean shutdown: loads the indexes and reads the batches after
  // the last index entry to learn the next offset and the largest timestamp. kCorruptMessage if
  // that tail does not read cleanly (the caller then recovers the segment).
  [[nodiscard]] Status<Errc> load_tail();

  // Appends whole batches whose offsets are assigned and that were validated. `batches` holds
  // their headers with positions relative to the start of `bytes`. All or nothing: on failure
  // (kStorageError) the files are cut back.
  [[nodiscard]] Status<Errc> append(ByteSpan bytes, std::span<const BatchHeader> batches);

  [[nodiscard]] bool should_roll(const RollCheck& check) const;
  // The segment stops being active: adds the final time-index entry (Kafka's onBecomeInactiveSegment).
  [[nodiscard]] Status<Errc> on_roll();

  struct ReadRange {
    std::int64_t position = 0;
    std::int64_t size = 0;          // bytes of whole batches from position
    std::int64_t next_offset = -1;  // after the last batch included; -1 if none
    bool end_of_segment = false;    // stopped because the segment has no more batches
  };
  // Whole batches from the first whose last offset >= offset (see PartitionLog::read).
  [[nodiscard]] Result<ReadRange, Errc> read(std::int64_t offset, std::int64_t max_bytes, std::int64_t max_offset,
                                             bool min_one_batch);
  // The first batch whose last offset >= offset; nullopt if none.
  [[nodiscard]] Result<std::optional<BatchHeader>, Errc> find_batch(std::int64_t offset);
  // The first record with timestamp >= timestamp and offset >= start_offset.
  [[nodiscard]] Result<std::optional<TimestampOffset>, Errc> find_offset_by_timestamp(std::int64_t timestamp,
                                                                                      std::int64_t start_offset);
  // Largest batch max timestamp and the last offset of the batch holding it ({-1, base} if none).
  [[nodiscard]] Result<TimestampOffsetEntry, Errc> max_timestamp_so_far();
  // The first record holding max_timestamp_so_far().
  [[nodiscard]] Result<std::optional<TimestampOffset>, Errc> max_timestamp_record();
  // For retention.ms: the largest timestamp, or the file's modification time if none.
  [[nodiscard]] Result<std::int64_t, Errc> largest_timestamp();
  // The first batch's max timestamp (what segment.ms and max.compaction.lag.ms count from); -1 if
  // the segment is empty.
  [[nodiscard]] Result<std::int64_t, Errc> first_batch_timestamp();
  // The log file's modification time, and setting it (on the log file only).
  [[nodiscard]] Result<std::int64_t, Errc> last_modified_ms() const;
  [[nodiscard]] Status<Errc> set_last_modified_ms(std::int64_t time_ms);

  // Removes the batches whose last offset >= offset. Returns the bytes removed.
  [[nodiscard]] Result<std::int64_t, Errc> truncate_to(std::int64_t offset);

  [[nodiscard]] TransactionIndex& txn_index() noexcept { return txn_index_; }
  [[nodiscard]] const TransactionIndex& txn_index() const noexcept { return txn_index_; }
  [[nodiscard]] const std::shared_ptr<File>& log_file() const noexcept { return log_.shared(); }
  [[nodiscard]] std::filesystem::path log_path() const { return path(kLogSuffix); }
  [[nodiscard]] Result<const OffsetIndex*, Errc> offset_index();  // loads it
  [[nodiscard]] Result<const TimeIndex*, Errc> time_index();      // loads it

  // Durability. collect_dirty() adds the files with unsynced writes (the log only, unless
  // include_indexes); mark_synced() records a completed sync of one of them.
  void collect_dirty(SyncToken& token, bool include_indexes) const;
  bool mark_synced(const File* file, std::uint64_t generation) noexcept;
  [[nodiscard]] Status<Errc> sync_all();
  // Cuts every file to its logical size (bytes of failed appends) and syncs (clean shutdown).
  [[nodiscard]] Status<Errc> close();

  // Deletion: first every file gets the ".deleted" suffix, later the files are removed.
  [[nodiscard]] Status<Errc> rename_for_deletion();
  [[nodiscard]] Status<Errc> remove_files();
  // Renames every file from its current suffix to `suffix` ("" for the plain names), the .log
  // first, then .index, .timeindex, .txnindex (Kafka's order). On failure the files already
  // renamed are put back (best effort) and kStorageError returned.
  [[nodiscard]] Status<Errc> change_file_suffix(std::string_view suffix);
  [[nodiscard]] const std::string& file_suffix() const noexcept { return suffix_; }

 private:
  Segment(FileSystem& fs, const std::filesystem::path& dir, std::int64_t base_offset, const SegmentConfig& config,
          std::int64_t created_ms, std::string_view suffix, TrackedFile log, TrackedFile index, TrackedFile time_index);

  [[nodiscard]] std::filesystem::path path(std::string_view suffix) const;
  [[nodiscard]] std::int64_t max_index_entries(std::size_t entry_size) const noexcept;
  // Loads both indexes, rebuilding them (a full recover) if missing or corrupt.
  [[nodiscard]] Status<Errc> ensure_indexes();
  // Scans batch headers from position to the end: next offset, max timestamp, bytes since entry.
  [[nodiscard]] Status<Errc> scan_tail(std::int64_t from_position);
  // Reads the first batch's max timestamp, which segment.ms rolls are measured from.
  [[nodiscard]] Status<Errc> load_rolling_timestamp();
  [[nodiscard]] Result<std::optional<BatchHeader>, Errc> find_from(std::int64_t position, std::int64_t offset);
  // Where to start scanning for offset: the index entry's position, after checking that entry
  // against the log (a mismatch rebuilds the indexes).
  struct ReadStart {
    std::int64_t position = 0;
  };
  [[nodiscard]] Result<ReadStart, Errc> start_for(std::int64_t offset);

  FileSystem& fs_;
  // A string, not a std::filesystem::path: a path keeps each of its components as a path of its
  // own (hundreds of bytes a partition, at 100,000 partitions tens of MiB).
  std::string dir_;
  std::int64_t base_offset_;
  SegmentConfig config_;
  std::int64_t created_ms_;
  std::string suffix_;  // appended to every file name: "", kCleanedSuffix, kSwapSuffix, kDeletedSuffix
  bool indexes_missing_ = false;
  // Nothing was written since restore(): a clean shutdown already gave it its final index entry.
  bool unchanged_since_restore_ = false;
  // An append failed: the log file may hold bytes past its logical size (close() cuts them).
  bool append_failed_ = false;

  TrackedFile log_;
  OffsetIndex offset_index_;
  TimeIndex time_index_;
  TransactionIndex txn_index_;

  // Known for the active segment (and after a lazy load): see next_offset().
  std::optional<std::int64_t> next_offset_;
  std::optional<TimestampOffsetEntry> max_timestamp_;
  std::int64_t bytes_since_last_index_entry_ = 0;
  std::optional<std::int64_t> rolling_timestamp_;  // the first batch's max timestamp
};

}  // namespace weir::storage
