// Kafka's checkpoint files: small text files rewritten atomically (write `<name>.tmp`, fsync,
// rename over `<name>`, fsync the directory), so a crash leaves the old or the new version.
//
// Offset checkpoints, one per log directory: recovery-point-offset-checkpoint,
// log-start-offset-checkpoint, replication-offset-checkpoint (high watermarks),
// cleaner-offset-checkpoint (the log cleaner's first dirty offsets, compacted logs only):
//
//   0                      version
//   2                      number of entries
//   my-topic 0 1234        topic, partition, offset (single spaces)
//   other.topic 3 0
//
// leader-epoch-checkpoint, one per partition directory:
//
//   0                      version
//   2                      number of entries
//   0 0                    leader epoch, its start offset
//   3 150
//
// partition.metadata, one per partition directory (no trailing newline, as Kafka writes it):
//
//   version: 0
//   topic_id: iL9bFyJfT-mAr6NemyYHqw
//
// Every line ends in '\n' except where noted. Readers are strict about structure (version 0, the
// entry count matching the entries) but accept any whitespace between fields, as Kafka does.
#pragma once

#include <compare>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "base/uuid.h"
#include "storage/errc.h"
#include "storage/file.h"

namespace weir::storage {

struct TopicPartition {
  std::string topic;
  std::int32_t partition = 0;

  friend auto operator<=>(const TopicPartition&, const TopicPartition&) = default;
  friend bool operator==(const TopicPartition&, const TopicPartition&) = default;
};

// "<topic>-<partition>", the partition directory name.
[[nodiscard]] std::string to_string(const TopicPartition& tp);
// Parses a partition directory name: the partition follows the last '-' (topic names may hold
// '-' and '.'). nullopt if it does not have that form.
[[nodiscard]] std::optional<TopicPartition> parse_partition_dir_name(std::string_view name);

using OffsetCheckpoint = std::map<TopicPartition, std::int64_t>;

struct EpochEntry {
  std::int32_t epoch = 0;
  std::int64_t start_offset = 0;
  friend bool operator==(const EpochEntry&, const EpochEntry&) = default;
};

inline constexpr std::string_view kRecoveryPointCheckpointFile = "recovery-point-offset-checkpoint";
inline constexpr std::string_view kLogStartOffsetCheckpointFile = "log-start-offset-checkpoint";
inline constexpr std::string_view kReplicationOffsetCheckpointFile = "replication-offset-checkpoint";
inline constexpr std::string_view kCleanerOffsetCheckpointFile = "cleaner-offset-checkpoint";
inline constexpr std::string_view kLeaderEpochCheckpointFile = "leader-epoch-checkpoint";
inline constexpr std::string_view kPartitionMetadataFile = "partition.metadata";
inline constexpr std::string_view kCleanShutdownFile = ".kafka_cleanshutdown";

// Largest checkpoint file read (a guard against reading something that is not one).
inline constexpr std::size_t kMaxCheckpointBytes = 64 * 1024 * 1024;

[[nodiscard]] std::string encode_offset_checkpoint(const OffsetCheckpoint& offsets);
[[nodiscard]] Result<OffsetCheckpoint, Errc> decode_offset_checkpoint(std::string_view text);  // kCorruptMessage

[[nodiscard]] std::string encode_leader_epoch_checkpoint(const std::vector<EpochEntry>& entries);
[[nodiscard]] Result<std::vector<EpochEntry>, Errc> decode_leader_epoch_checkpoint(std::string_view text);

[[nodiscard]] std::string encode_partition_metadata(const Uuid& topic_id);
[[nodiscard]] Result<Uuid, Errc> decode_partition_metadata(std::string_view text);

// File helpers: write atomically (kStorageError on failure); read (kNotFound if the file does
// not exist, kCorruptMessage if it does not parse, kStorageError on I/O failure).
[[nodiscard]] Status<Errc> write_offset_checkpoint(FileSystem& fs, const std::filesystem::path& path,
                                                   const OffsetCheckpoint& offsets);
// The same with the text already encoded (encode_offset_checkpoint).
[[nodiscard]] Status<Errc> write_offset_checkpoint_text(FileSystem& fs, const std::filesystem::path& path,
                                                        std::string_view text);
[[nodiscard]] Result<OffsetCheckpoint, Errc> read_offset_checkpoint(FileSystem& fs, const std::filesystem::path& path);
[[nodiscard]] Status<Errc> write_leader_epoch_checkpoint(FileSystem& fs, const std::filesystem::path& path,
                                                         const std::vector<EpochEntry>& entries);
[[nodiscard]] Result<std::vector<EpochEntry>, Errc> read_leader_epoch_checkpoint(FileSystem& fs,
                                                                                 const std::filesystem::path& path);
[[nodiscard]] Status<Errc> write_partition_metadata(FileSystem& fs, const std::filesystem::path& path,
                                                    const Uuid& topic_id);
[[nodiscard]] Result<Uuid, Errc> read_partition_metadata(FileSystem& fs, const std::filesystem::path& path);

}  // namespace weir::storage

template <>
struct fmt::formatter<weir::storage::TopicPartition> : fmt::formatter<std::string_view> {
  template <class FormatContext>
  auto format(const weir::storage::TopicPartition& tp, FormatContext& ctx) const {
    return fmt::formatter<std::string_view>::format(weir::storage::to_string(tp), ctx);
  }
};
