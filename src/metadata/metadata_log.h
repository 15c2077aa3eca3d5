// MetadataLog: the durable, local metadata log of a single node.
//
// Location and format: <log.dirs>/__cluster_metadata-0/00000000000000000000.log, one segment
// holding Kafka RecordBatch v2 bytes (protocol/record/record_batch.h), as Kafka's KRaft log does:
//   - one batch per append(), uncompressed, CreateTime, no producer id, partitionLeaderEpoch =
//     Options::leader_epoch;
//   - base offsets consecutive from 0 (each batch starts where the previous one ended);
//   - each record: null key, value = one framed metadata record (metadata_record.h).
// So `kafka-dump-log --cluster-metadata-decoder --files .../00000000000000000000.log` reads it.
//
// Durability: append() returns success only after the batch is written and fdatasync'd. If a
// write or sync fails the log cuts the file back to where the batch began and syncs it; the
// append fails and the next one may succeed (a full disk that frees up). If the cut itself
// fails, what reached the disk is unknown: the log refuses further appends
// (StoreErrc::log_failed), and the process should restart and recover. open() replays every batch into an image and, at the first batch that is incomplete,
// fails its CRC or breaks the offset sequence (a write torn by kill -9 or power loss), cuts the
// file there and syncs. A batch that passes its CRC but holds a record this build cannot decode
// or that contradicts the image is not a torn write: open() fails with corrupt_log and changes
// nothing.
//
// All file access goes through LogFile, a four-call interface, so the log can move onto the
// storage layer's partition log later and tests can inject faults.
//
// Thread safety: none; one owner (the controller's executor).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"
#include "metadata/errc.h"
#include "metadata/image.h"
#include "metadata/metadata_record.h"

namespace weir::metadata {

inline constexpr std::string_view kMetadataLogDirName = "__cluster_metadata-0";
inline constexpr std::string_view kMetadataSegmentName = "00000000000000000000.log";
// Kafka's KRaft limit on one batch (KafkaRaftClient MAX_BATCH_SIZE_BYTES).
inline constexpr std::size_t kMaxMetadataBatchBytes = std::size_t{8} * 1024 * 1024;

// The file under the log: whole-file read, append + sync, truncate + sync.
class LogFile {
 public:
  virtual ~LogFile() = default;
  [[nodiscard]] virtual Result<std::vector<std::byte>, StoreErrc> read_all() = 0;
  // Writes bytes at the end of the file and makes them durable (fdatasync) before returning.
  [[nodiscard]] virtual Status<StoreErrc> append_and_sync(ByteSpan bytes) = 0;
  // Cuts the file to size bytes and makes that durable.
  [[nodiscard]] virtual Status<StoreErrc> truncate_and_sync(std::uint64_t size) = 0;
};

// A LogFile on a POSIX file descriptor.
class PosixLogFile final : public LogFile {
 public:
  // Opens (creating if needed) the file. When it is created, the parent directory is synced so
  // the new name survives a crash.
  [[nodiscard]] static Result<std::unique_ptr<PosixLogFile>, StoreErrc> open(const std::filesystem::path& path);
  ~PosixLogFile() override;
  PosixLogFile(const PosixLogFile&) = delete;
  PosixLogFile& operator=(const PosixLogFile&) = delete;

  [[nodiscard]] Result<std::vector<std::byte>, StoreErrc> read_all() override;
  [[nodiscard]] Status<StoreErrc> append_and_sync(ByteSpan bytes) override;
  [[nodiscard]] Status<StoreErrc> truncate_and_sync(std::uint64_t size) override;

 private:
  PosixLogFile(int fd, std::filesystem::path path) : fd_(fd), path_(std::move(path)) {}
  int fd_;
  std::filesystem::path path_;
};

class MetadataLog {
 public:
  struct Options {
    std::int32_t leader_epoch = 0;  // partitionLeaderEpoch of written batches
    std::size_t max_batch_bytes = kMaxMetadataBatchBytes;
  };

  // What open() found.
  struct Recovery {
    std::int64_t batches = 0;
    std::int64_t records = 0;
    std::uint64_t truncated_bytes = 0;  // torn tail cut off
  };

  // Opens <log_dir>/__cluster_metadata-0/00000000000000000000.log (creating the directory and
  // file when absent) and replays it into `image`, which should be empty.
  [[nodiscard]] static Result<MetadataLog, StoreErrc> open(const std::filesystem::path& log_dir, MetadataImage& image,
                                                           Options options);
  [[nodiscard]] static Result<MetadataLog, StoreErrc> open(const std::filesystem::path& log_dir, MetadataImage& image) {
    return open(log_dir, image, Options{});
  }
  // The same over any LogFile.
  [[nodiscard]] static Result<MetadataLog, StoreErrc> open(std::unique_ptr<LogFile> file, MetadataImage& image,
                                                           Options options);

  // Appends the records as one batch stamped with timestamp_ms (wall clock) and syncs it.
  // records must not be empty. batch_too_large (nothing written) above max_batch_bytes.
  [[nodiscard]] Status<StoreErrc> append(std::span<const MetadataRecord> records, std::int64_t timestamp_ms);

  // The offset the next record will get (= records in the log).
  [[nodiscard]] std::int64_t next_offset() const noexcept { return next_offset_; }
  [[nodiscard]] std::uint64_t size_bytes() const noexcept { return size_bytes_; }
  [[nodiscard]] const Recovery& recovery() const noexcept { return recovery_; }
  [[nodiscard]] bool failed() const noexcept { return failed_; }

 private:
  MetadataLog(std::unique_ptr<LogFile> file, Options options) : file_(std::move(file)), options_(options) {}

  std::unique_ptr<LogFile> file_;
  Options options_;
  std::int64_t next_offset_ = 0;
  std::uint64_t size_bytes_ = 0;
  Recovery recovery_;
  bool failed_ = false;
};

}  // namespace weir::metadata
