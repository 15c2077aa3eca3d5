// LogManager: the partition logs of one log directory (an entry of log.dirs).
//
//   <log dir>/
//     <topic>-<partition>/                 one PartitionLog each (topic names may hold '-' and '.')
//     <topic>-<partition>.<hex>-delete/    a deleted partition not yet removed: removed on open
//     <topic>-<partition>.<hex>-future/    (Kafka's replica movement; skipped)
//     recovery-point-offset-checkpoint     offsets below which each log is durable
//     log-start-offset-checkpoint          each log's start offset
//     replication-offset-checkpoint        each log's high watermark
//     cleaner-offset-checkpoint            each cleaned log's first dirty offset (log compaction)
//     .kafka_cleanshutdown                 present only between a clean shutdown and the next open
//     weir-log-summary                     likewise: every log as the clean shutdown left it (log_summary.h)
//
// Checkpoint formats in checkpoint.h. open() looks for the clean-shutdown marker: with it, logs
// are not rescanned, and a log whose directory is as the summary recorded it is built from the
// summary without reading its directory or files (its files open on first use); without it, each
// log recovers from its checkpointed recovery point. The summary and the marker are removed once
// every log is open, and written again by close() after all logs are flushed and the checkpoints
// written (the summary last, naming the marker it belongs to). Kafka's __cluster_metadata-0 directory is not a
// partition log of this manager and is left alone.
//
// Log compaction: the broker asks cleanable() on a timer and calls clean() for one partition at
// a time with a byte budget (log.cleaner.io.max.bytes.per.second, paced by the caller, e.g. with
// an IoThrottle); a partition with an unfinished clean comes first, so one offset map is alive at
// a time if the caller finishes it before starting another.
//
// Files: every partition log of the directory does its I/O through one FileCache over the given
// file system, so at most LogManagerOptions::max_open_files descriptors are held open however
// many partitions there are (active segments of idle partitions included).
//
// Threading: used from one thread, like the logs it owns (the file cache is thread-safe, so logs
// may live on other threads).
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/result.h"
#include "base/uuid.h"
#include "storage/checkpoint.h"
#include "storage/errc.h"
#include "storage/file.h"
#include "storage/file_cache.h"
#include "storage/log_cleaner.h"
#include "storage/partition_log.h"

namespace weir::storage {

struct LogManagerOptions {
  LogConfig default_config;
  // The config of a topic found on disk (metadata knows it); default_config if empty.
  std::function<LogConfig(std::string_view topic)> config_for;
  CleanerConfig cleaner = {};  // log.cleaner.dedupe.buffer.size and its load factor
  // Descriptors the partition logs' files may hold open together (file_cache.h);
  // 0: FileCache::default_capacity() (3/8 of the soft RLIMIT_NOFILE).
  std::size_t max_open_files = 0;
  // Told of every disk failure (file_cache.h: is_disk_failure()) of the logs' file operations,
  // on the thread that saw it; none if empty. The failed operation still returns its error.
  DiskFailureObserver on_disk_failure;
  // Threads that open the partition logs found at start (Kafka's num.recovery.threads.per.data.dir).
  std::size_t load_threads = 1;
  // prepare() of at least this many new partitions makes their files durable with syncfs(2)
  // (FileSystem::open_filesystem_sync) rather than per-file and per-directory fsyncs; after a
  // failed syncfs, never again.
  std::size_t syncfs_min_partitions = 64;
};

class LogManager {
 public:
  // Opens (creating if missing) the log directory and every partition log in it.
  [[nodiscard]] static Result<std::unique_ptr<LogManager>, Errc> open(FileSystem& fs, std::filesystem::path dir,
                                                                      const Clock& clock, LogManagerOptions options);
  ~LogManager();  // like PartitionLog: writes nothing; call close() for a clean shutdown
  LogManager(const LogManager&) = delete;
  LogManager& operator=(const LogManager&) = delete;

  [[nodiscard]] PartitionLog* get(const TopicPartition& tp) const;
  [[nodiscard]] std::optional<Uuid> topic_id(const TopicPartition& tp) const;
  [[nodiscard]] std::vector<TopicPartition> partitions() const;
  [[nodiscard]] bool had_clean_shutdown() const noexcept { return had_clean_shutdown_; }
  // How many logs open() built from the clean-shutdown summary (the others were read from their files).
  [[nodiscard]] std::size_t loaded_from_summary() const noexcept { return loaded_from_summary_; }
  // The broker epoch the clean-shutdown marker held (-1: none, or the last stop was not clean).
  [[nodiscard]] std::int64_t clean_shutdown_broker_epoch() const noexcept { return clean_shutdown_broker_epoch_; }
  [[nodiscard]] const std::filesystem::path& dir() const noexcept { return dir_; }
  // The descriptors held by the logs' files; thread-safe.
  [[nodiscard]] FileCache::Stats file_stats() const { return files_->stats(); }
  // The cache every log's I/O goes through (and its disk-failure observer): the Flusher syncs the
  // logs' directories through it too, so a failed directory sync is a disk failure like any other.
  [[nodiscard]] std::shared_ptr<FileCache> file_cache() const noexcept { return files_; }

  // Creates the partition's directory, partition.metadata and an empty log; returns the existing
  // log if there is one. All or nothing: on failure the directory is removed again (if this call
  // made it) and one `event=partition_create_failed` line names the operation, path and errno.
  [[nodiscard]] Result<PartitionLog*, Errc> create(const TopicPartition& tp, const Uuid& topic_id, LogConfig config);
  // Ahead of the metadata change that creates a partition: its directory and partition.metadata,
  // made durable, so that a failing or full disk refuses a CreateTopics before anything is
  // recorded; create() then opens the log there. On failure nothing is left behind and one
  // `event=partition_create_failed` line is logged. kNotFound-free: an existing log is fine.
  [[nodiscard]] Result<void, Errc> prepare(const TopicPartition& tp, const Uuid& topic_id);
  // prepare() for many partitions at once (one CreateTopics' or CreatePartitions'), their syncs
  // overlapping (parallel.h) and the log dir synced once: one result per partition, in order,
  // each failed one with the file operation that failed (if one did). A partition that failed
  // left nothing behind; the others are prepared.
  struct Prepared {
    std::optional<Errc> error;
    std::optional<IoFailure> failure;
    [[nodiscard]] bool ok() const noexcept { return !error.has_value(); }
  };
  // With leader_epochs (one per partition, -1 for none): a new partition this broker will lead
  // starts that leader epoch at offset 0 in its leader-epoch-checkpoint, as Kafka's new leader
  // does before any record arrives, so the first append has no checkpoint to write.
  [[nodiscard]] std::vector<Prepared> prepare(const std::vector<std::pair<TopicPartition, Uuid>>& partitions,
                                              const std::vector<std::int32_t>& leader_epochs = {});
  // Removes a directory prepare() made for a partition that was not created after all (no log
  // is open there).
  void discard_prepared(const TopicPartition& tp);
  // What made the last failed create() fail, when a file operation did (for error messages).
  [[nodiscard]] const std::optional<IoFailure>& last_create_failure() const noexcept { return last_create_failure_; }
  // Deletes the partition (PartitionLog::remove). kNotFound if there is none.
  [[nodiscard]] Result<void, Errc> remove(const TopicPartition& tp);

  // Log compaction (log_cleaner.h). The partitions whose cleanup.policy includes compact and that
  // need cleaning at now_ms (wall clock), the one with an unfinished clean first, then the
  // dirtiest first. Partitions whose cleaning failed are left out until the next open, as Kafka
  // leaves "uncleanable" partitions alone.
  [[nodiscard]] std::vector<TopicPartition> cleanable(std::int64_t now_ms);
  // Cleans tp for about budget_bytes of I/O (LogCleaner::clean: result.stats.io_bytes() says how
  // much was done) and writes cleaner-offset-checkpoint when a round completes. `producers`: the
  // partition's active producers, if the caller knows them. kNotFound if there is no such
  // partition; after any other error tp is uncleanable.
  [[nodiscard]] Result<CleanResult, Errc> clean(const TopicPartition& tp, std::int64_t now_ms,
                                                std::int64_t budget_bytes, const ActiveProducers* producers = nullptr);
  [[nodiscard]] bool is_uncleanable(const TopicPartition& tp) const { return uncleanable_.contains(tp); }

  // Rewrites the offset checkpoints from the logs' current state (run periodically); each file
  // only if what it would hold changed.
  [[nodiscard]] Result<void, Errc> write_checkpoints();
  // The same from values the logs' owner threads gathered (the broker, whose logs live on
  // several threads, writes its periodic checkpoints this way); touches no log. Not concurrently
  // with itself, write_checkpoints() or close().
  struct CheckpointValues {
    OffsetCheckpoint recovery_points;
    OffsetCheckpoint log_starts;
    OffsetCheckpoint high_watermarks;
    OffsetCheckpoint cleaner;  // logs cleaned at least once
  };
  [[nodiscard]] Result<void, Errc> write_checkpoints(CheckpointValues values);
  // Clean shutdown: closes every log, writes the checkpoints, then the clean-shutdown marker.
  // broker_epoch: the broker's epoch in its controller quorum (-1 without one), kept in the
  // clean-shutdown marker as Kafka does for the next registration's PreviousBrokerEpoch.
  [[nodiscard]] Result<void, Errc> close(std::int64_t broker_epoch = -1);

 private:
  // A failed create() or prepare(): removes the directory if this call made it, logs one
  // `event=partition_create_failed` line, remembers the failure.
  void create_failed(const TopicPartition& tp, const std::filesystem::path& dir, bool made_dir, Errc error);
  void create_failed(const TopicPartition& tp, const std::filesystem::path& dir, bool made_dir, Errc error,
                     const std::optional<IoFailure>& failure);
  // Partitions whose directory prepare() made and create() has not opened yet.
  std::set<TopicPartition> prepared_;
  // prepare()'s helpers: where a file is written before it is renamed into place; a file written
  // without a sync (removed again if that fails); a syncfs, which on failure logs it and sets
  // syncfs_failed_.
  [[nodiscard]] static std::filesystem::path temporary_path(const std::filesystem::path& path);
  [[nodiscard]] Status<Errc> write_unsynced(const std::filesystem::path& path, std::string_view content);
  [[nodiscard]] bool sync_filesystem(FileSystemSync& whole);
  bool syncfs_failed_ = false;
  struct Entry {
    std::unique_ptr<PartitionLog> log;
    std::optional<Uuid> topic_id;
  };

  LogManager(std::shared_ptr<FileCache> files, std::filesystem::path dir, const Clock& clock,
             LogManagerOptions options);
  [[nodiscard]] Status<Errc> load();
  [[nodiscard]] LogConfig config_for(std::string_view topic) const;
  [[nodiscard]] OffsetCheckpoint cleaner_checkpoints() const;  // of the logs cleaned at least once
  [[nodiscard]] Status<Errc> write_cleaner_checkpoint(OffsetCheckpoint checkpoints);
  [[nodiscard]] std::optional<LogSummary> read_summary(const std::filesystem::path& path);
  void write_summary(const std::filesystem::path& path, const LogSummary& summary);

  std::shared_ptr<FileCache> files_;
  FileSystem& fs_;  // *files_
  std::filesystem::path dir_;
  const Clock& clock_;
  LogManagerOptions options_;
  std::map<TopicPartition, Entry> logs_;
  LogCleaner cleaner_;
  std::set<TopicPartition> uncleanable_;
  OffsetCheckpoint cleaner_checkpoint_written_;  // what cleaner-offset-checkpoint holds
  // The three offset checkpoint files are rewritten only when their text changes (see
  // write_if_changed): the hash of the text each holds, once written by this process.
  struct WrittenText {
    std::size_t hash = 0;
    std::size_t size = 0;
    bool operator==(const WrittenText&) const = default;
  };
  [[nodiscard]] Status<Errc> write_if_changed(const std::filesystem::path& path, const OffsetCheckpoint& offsets,
                                              std::optional<WrittenText>& written);
  std::optional<WrittenText> recovery_points_written_;
  std::optional<WrittenText> log_starts_written_;
  std::optional<WrittenText> high_watermarks_written_;
  std::optional<IoFailure> last_create_failure_;
  bool had_clean_shutdown_ = false;
  std::size_t loaded_from_summary_ = 0;
  std::int64_t clean_shutdown_broker_epoch_ = -1;
  bool closed_ = false;
};

}  // namespace weir::storage
