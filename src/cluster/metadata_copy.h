// MetadataCopy: a broker's local copy of `__cluster_metadata`, kept where a Kafka broker keeps
// its own (<log dir>/__cluster_metadata-0/) and in the same files, so that a restarted broker
// resumes fetching from where it stopped instead of from offset 0, and Kafka's tools read it
// (`kafka-dump-log --cluster-metadata-decoder`):
//   <base offset, 20 digits>.log                    RecordBatch v2 bytes exactly as the leader sent them
//   <end offset, 20 digits>-<epoch, 10 digits>.checkpoint   a snapshot exactly as FetchSnapshot sent it
//
// What is written: only what the follower delivered (records below the quorum's high watermark),
// so the copy never holds a record the quorum could still drop. A snapshot replaces the files
// before it. Batches go through the page cache and are synced by sync() (the caller syncs after
// each group it applies; the quorum keeps the log anyway, so a batch lost in a power failure is
// fetched again). The copy stays bounded: once its segment passes `max_bytes` (Kafka's
// metadata.max.retention.bytes default) the files are removed and writing stops until the next
// snapshot; the next start fetches from the quorum (whose answer then names its snapshot).
//
// open() reads the newest snapshot and the segments after it, in base-offset order. A batch
// that is incomplete, fails its CRC or breaks the offset sequence ends the copy: the file is cut
// there and later segments are removed (a write torn by kill -9, or a directory a Kafka broker
// left with a tail it had not committed; MetadataFollowerState::restore() holds the batches as
// uncommitted until the leader's high watermark covers them, so such a tail is cut like any
// fetched one). An unreadable snapshot removes the copy: the broker fetches everything again.
// Leftover `*.checkpoint.part` files and the index files of the segment written to (a Kafka
// broker's, which would no longer match) are removed.
//
// Thread safety: none; one owner (the quorum link's executor).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"
#include "cluster/metadata_follower_state.h"

namespace weir::cluster {

struct MetadataCopyOptions {
  std::filesystem::path log_dir;
  std::uint64_t max_bytes = std::uint64_t{100} * 1024 * 1024;  // Kafka's metadata.max.retention.bytes default
};

class MetadataCopy {
 public:
  struct Loaded {
    std::optional<MetadataBatch> snapshot;
    std::vector<MetadataBatch> batches;  // consecutive, from the snapshot's end (or offset 0)
    std::vector<RecordError> record_errors;
    std::uint64_t dropped_bytes = 0;  // cut from a segment's end
    std::vector<std::string> notes;   // what open() removed and why, for the log
  };

  // Opens (creating the directory when absent) and reads the copy into `loaded`. An error only
  // when the directory cannot be used at all.
  [[nodiscard]] static Result<std::unique_ptr<MetadataCopy>, std::string> open(MetadataCopyOptions options,
                                                                               Loaded& loaded);
  ~MetadataCopy();
  MetadataCopy(const MetadataCopy&) = delete;
  MetadataCopy& operator=(const MetadataCopy&) = delete;

  // A delivered batch: appended when it starts at next_offset(), ignored when the copy holds it
  // already; a snapshot replaces the copy. A gap (or a batch without its bytes) stops the copy
  // (its files are removed) until the next snapshot. An error is an I/O failure; the copy is
  // then stopped too.
  [[nodiscard]] Status<std::string> append(const MetadataBatch& batch);
  // The leader cut the log at end_offset: the copy drops what it holds from there.
  [[nodiscard]] Status<std::string> truncate(std::int64_t end_offset);
  // Makes what append() wrote durable (fdatasync of the segment, when anything was written).
  [[nodiscard]] Status<std::string> sync();

  [[nodiscard]] bool active() const noexcept { return fd_ >= 0; }
  [[nodiscard]] std::int64_t next_offset() const noexcept { return next_offset_; }
  [[nodiscard]] std::uint64_t segment_bytes() const noexcept { return segment_bytes_; }
  [[nodiscard]] const std::filesystem::path& dir() const noexcept { return dir_; }
  // Why the copy stopped or what it removed since the last call, for the log.
  [[nodiscard]] std::vector<std::string> take_notes() { return std::exchange(notes_, {}); }

 private:
  explicit MetadataCopy(MetadataCopyOptions options);
  Status<std::string> start_segment(std::int64_t base_offset);
  Status<std::string> write_snapshot(const MetadataBatch& snapshot);
  // Removes every file of the copy and stops writing; `why` is kept for take_notes().
  void stop(const std::string& why);

  MetadataCopyOptions options_;
  std::filesystem::path dir_;
  std::filesystem::path segment_path_;
  int fd_ = -1;
  std::int64_t next_offset_ = 0;
  std::uint64_t segment_bytes_ = 0;
  bool dirty_ = false;
  std::vector<std::string> notes_;
};

// Kafka's names: "00000000000000000042.log", "00000000000000000042-0000000003.checkpoint".
[[nodiscard]] std::string metadata_segment_name(std::int64_t base_offset);
[[nodiscard]] std::string metadata_snapshot_name(std::int64_t end_offset, std::int32_t epoch);

}  // namespace weir::cluster
