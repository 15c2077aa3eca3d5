// A FileSystem for tests that works on real files (so descriptors are real and sendfile works)
// but remembers what has been made durable, and can inject the failures disks have:
//
//  - crash(): simulates power loss. Every file goes back to the size it had at its last sync();
//    files (and directories) created since their directory was last synced disappear. With
//    CrashMode::kTearLastWrite, the last unsynced write of each file survives in part (its first
//    half), as a torn write would.
//  - set_free_bytes(n): the disk has n bytes left; a write that needs more writes what fits and
//    fails with ENOSPC (like a real full disk). nullopt: unlimited.
//  - fail_syncs(true): sync(), sync_directory() and a FileSystemSync's sync() fail with EIO and
//    make nothing durable.
//  - set_sync_hook(fn): fn runs at the start of every file sync() (outside any lock), so tests
//    can hold a flush cycle open.
//  - fail_after(n): the next n mutating operations (append, truncate, sync, set_modified_time_ms,
//    an open that may create, rename, remove, create_directory, sync_directory, a FileSystemSync's
//    sync) succeed, every
//    later one fails with EIO, as if the process had died there; crash() then drops what was not
//    durable. nullopt: no limit. mutating_operations() counts them, to find every n worth trying.
//  - fail_paths(fn): a mutating operation on a path (append, truncate, sync, set_modified_time_ms
//    and an open that may create on a file; rename from or to it; create_directory and
//    sync_directory on a directory; a FileSystemSync's sync on the directory it was opened for)
//    fails with errno fn(op, path) when that is not 0; op is "append", "truncate", "sync",
//    "set_mtime", "create", "rename", "mkdir", "sync_dir" or "syncfs".
//  - open_filesystem_sync(dir): its sync() (syncfs) makes every file and directory of this file
//    system durable.
//    Removals always work, so what a failed operation left can be cleaned up. Null: none.
//
// Simplifications: a truncate, rename or remove is durable at once (a renamed file that was not
// yet durable under its old name stays non-durable under the new one); data written before the
// FaultInjectingFileSystem opened a file counts as durable.
//
// crash() must be called with no File of this file system in use (drop the logs first, as the
// process would have died). Thread-safe otherwise.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "storage/file.h"

namespace weir::storage {

enum class CrashMode : std::uint8_t {
  kDropUnsynced,   // unsynced bytes are lost
  kTearLastWrite,  // unsynced bytes are lost except the first half of each file's last write
};

class FaultInjectingFileSystem final : public FileSystem {
 public:
  FaultInjectingFileSystem();
  ~FaultInjectingFileSystem() override;

  IoResult<std::shared_ptr<File>> open(const std::filesystem::path& path, OpenMode mode) override;
  Status<IoError> rename(const std::filesystem::path& from, const std::filesystem::path& to) override;
  Status<IoError> remove(const std::filesystem::path& path) override;
  Status<IoError> create_directory(const std::filesystem::path& path) override;
  IoResult<std::vector<DirEntry>> list(const std::filesystem::path& dir) override;
  Status<IoError> sync_directory(const std::filesystem::path& dir) override;
  IoResult<bool> exists(const std::filesystem::path& path) override;
  IoResult<FileIdentity> identity(const std::filesystem::path& path) override;
  IoResult<std::unique_ptr<FileSystemSync>> open_filesystem_sync(const std::filesystem::path& dir) override;

  void crash(CrashMode mode = CrashMode::kDropUnsynced);
  void set_free_bytes(std::optional<std::int64_t> bytes);
  void fail_syncs(bool fail);
  void set_sync_hook(std::function<void()> hook);
  void fail_after(std::optional<std::int64_t> operations);
  using PathFault = std::function<int(std::string_view op, const std::string& path)>;
  void fail_paths(PathFault fn);

  // Counters for tests.
  [[nodiscard]] std::int64_t file_syncs() const;
  [[nodiscard]] std::int64_t directory_syncs() const;
  [[nodiscard]] std::int64_t filesystem_syncs() const;
  [[nodiscard]] std::int64_t mutating_operations() const;

  // Per-file bookkeeping, shared with the open files of that path. Guarded by mutex_.
  struct FileState {
    std::string path;
    std::int64_t synced_size = 0;
    std::int64_t physical_size = 0;  // bytes in the real file
    std::int64_t last_write_position = -1;
    std::int64_t last_write_size = 0;
  };

 private:
  friend class FaultFile;
  friend class FaultFileSystemSync;
  // What a successful syncfs does: everything written and created so far is durable. mutex_ held.
  void sync_everything();
  static std::string key(const std::filesystem::path& p);
  std::shared_ptr<FileState> state_for(const std::string& path, std::int64_t size);  // mutex_ held
  // Counts one mutating operation; false if fail_after() says it must fail. mutex_ held.
  bool allow_operation();
  // The errno fail_paths() gives op on path, 0 if none. mutex_ held.
  int path_fault(std::string_view op, const std::string& path) const;

  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<FileState>> files_;
  std::set<std::string> created_unsynced_;  // files and directories not yet in a synced directory
  std::optional<std::int64_t> free_bytes_;
  bool fail_syncs_ = false;
  std::function<void()> sync_hook_;
  std::int64_t file_syncs_ = 0;
  std::int64_t directory_syncs_ = 0;
  std::int64_t filesystem_syncs_ = 0;
  std::int64_t mutating_operations_ = 0;
  std::optional<std::int64_t> operations_left_;
  PathFault path_fault_;
};

}  // namespace weir::storage
