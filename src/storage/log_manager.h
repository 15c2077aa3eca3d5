// LogManager: the partition logs of one log directory (an entry of log.dirs).
//
//   <log dir>/
//     <topic>-<partition>/                 one PartitionLog each (topic names may hold '-' and '.')
//     <topic>-<partition>.<hex>-delete/    a deleted partition not yet removed: removed on open
//     <topic>-<partition>.<hex>-future/    (Kafka's replica movement; skipped)
//     recovery-point-offset-checkpoint     offsets below which each log is durable
//     log-start-offset-checkpoint          each log's start offset
//     replication-offset-checkpoint        each log's high watermark
//     .kafka_cleanshutdown                 present only between a clean shutdown and the next open
//
// Checkpoint formats in checkpoint.h. open() looks for the clean-shutdown marker: with it, logs
// are not rescanned; without it, each log recovers from its checkpointed recovery point. The
// marker is removed once every log is open, and written again by close() after all logs are
// flushed and the checkpoints written. Kafka's __cluster_metadata-0 directory is not a
// partition log of this manager and is left alone.
//
// Threading: used from one thread, like the logs it owns.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/result.h"
#include "base/uuid.h"
#include "storage/checkpoint.h"
#include "storage/errc.h"
#include "storage/file.h"
#include "storage/partition_log.h"

namespace weir::storage {

struct LogManagerOptions {
  LogConfig default_config;
  // The config of a topic found on disk (metadata knows it); default_config if empty.
  std::function<LogConfig(std::string_view topic)> config_for;
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
  [[nodiscard]] const std::filesystem::path& dir() const noexcept { return dir_; }

  // Creates the partition's directory, partition.metadata and an empty log; returns the existing
  // log if there is one.
  [[nodiscard]] Result<PartitionLog*, Errc> create(const TopicPartition& tp, const Uuid& topic_id, LogConfig config);
  // Deletes the partition (PartitionLog::remove). kNotFound if there is none.
  [[nodiscard]] Result<void, Errc> remove(const TopicPartition& tp);

  // Rewrites the three offset checkpoints from the logs' current state (run periodically).
  [[nodiscard]] Result<void, Errc> write_checkpoints();
  // Clean shutdown: closes every log, writes the checkpoints, then the clean-shutdown marker.
  [[nodiscard]] Result<void, Errc> close();

 private:
  struct Entry {
    std::unique_ptr<PartitionLog> log;
    std::optional<Uuid> topic_id;
  };

  LogManager(FileSystem& fs, std::filesystem::path dir, const Clock& clock, LogManagerOptions options);
  [[nodiscard]] Status<Errc> load();
  [[nodiscard]] LogConfig config_for(std::string_view topic) const;

  FileSystem& fs_;
  std::filesystem::path dir_;
  const Clock& clock_;
  LogManagerOptions options_;
  std::map<TopicPartition, Entry> logs_;
  bool had_clean_shutdown_ = false;
  bool closed_ = false;
};

}  // namespace weir::storage
