// SyncToken: what a flush must make durable for a log to count everything appended before the
// token was prepared as synced. Made by PartitionLog::prepare_sync() on the log's owner thread,
// carried to the Flusher (which syncs the files and directories on its thread), and handed back
// to PartitionLog::mark_synced() on the owner thread once the flush succeeded.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <vector>

#include "storage/file.h"

namespace weir::storage {

struct SyncToken {
  struct FileEntry {
    std::shared_ptr<File> file;    // kept open until the sync is done
    std::uint64_t generation = 0;  // writes to it covered by this sync
  };

  const void* log = nullptr;                       // the PartitionLog that prepared it
  std::uint64_t log_epoch = 0;                     // its truncation count then: a truncation voids the token's offset
  std::int64_t end_offset = -1;                    // log end offset covered
  std::vector<FileEntry> files;                    // fdatasync each
  std::vector<std::filesystem::path> directories;  // fsync each (new segments)
  std::uint64_t directory_generation = 0;

  [[nodiscard]] bool empty() const noexcept { return files.empty() && directories.empty(); }
};

}  // namespace weir::storage
