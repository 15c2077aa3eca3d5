// LeaderEpochCache: for each leader epoch of a partition, the first offset written in it; kept
// in the partition's `leader-epoch-checkpoint` (format in checkpoint.h). OffsetForLeaderEpoch and
// the clients' offset validation read it; batches carry their epoch in partitionLeaderEpoch.
//
// Entries are strictly increasing in both epoch and start offset. Rules follow Kafka's
// LeaderEpochFileCache: assign() of a new epoch, or of a known epoch at a smaller offset, drops
// every later entry that would break the order; truncating the log removes entries past its end
// or moves the first one up to the log start.
//
// The checkpoint is rewritten (atomically) whenever the entries change. Single-threaded.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "storage/checkpoint.h"
#include "storage/errc.h"
#include "storage/file.h"

namespace weir::storage {

class LeaderEpochCache {
 public:
  LeaderEpochCache(FileSystem& fs, std::filesystem::path path) noexcept;

  // Reads the checkpoint. A missing file is an empty cache; a malformed one is dropped with a
  // warning (recovery re-learns epochs from the batches it scans).
  [[nodiscard]] Status<Errc> load();
  // The entries as the checkpoint holds them, known without reading it (the log dir's
  // clean-shutdown summary, log_summary.h); not dirty.
  void restore(std::vector<EpochEntry> entries) noexcept {
    entries_ = std::move(entries);
    dirty_ = false;
  }

  // Records that `epoch` starts at `start_offset` (epoch, offset >= 0). True if the entries changed.
  bool assign(std::int32_t epoch, std::int64_t start_offset);
  // Removes entries starting at or after end_offset. True if changed.
  bool truncate_from_end(std::int64_t end_offset);
  // Drops entries wholly before start_offset; the last of them stays, moved to start_offset.
  bool truncate_from_start(std::int64_t start_offset);
  void clear() noexcept {
    dirty_ = dirty_ || !entries_.empty();
    entries_.clear();
  }

  // Kafka's endOffsetFor: for the latest epoch, the log end offset; for an older one, the start
  // of the next larger epoch, reported with the largest known epoch <= the requested one (or the
  // requested one when it is below them all). nullopt for an unknown epoch beyond the latest or
  // an empty cache (Kafka's UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET).
  [[nodiscard]] std::optional<std::pair<std::int32_t, std::int64_t>> end_offset_for(std::int32_t epoch,
                                                                                    std::int64_t log_end_offset) const;

  [[nodiscard]] std::optional<EpochEntry> latest() const noexcept;
  [[nodiscard]] const std::vector<EpochEntry>& entries() const noexcept { return entries_; }

  // Writes the checkpoint if the entries changed since the last write.
  [[nodiscard]] Status<Errc> write_if_dirty();
  [[nodiscard]] bool dirty() const noexcept { return dirty_; }
  void set_path(const std::filesystem::path& path) { path_ = path.native(); }

 private:
  FileSystem& fs_;
  // A string, not a std::filesystem::path: a path keeps each of its components as a path of its
  // own (hundreds of bytes a partition, at 100,000 partitions tens of MiB).
  std::string path_;
  std::vector<EpochEntry> entries_;
  bool dirty_ = false;
};

}  // namespace weir::storage
