// The file layer: every byte the storage layer reads or writes goes through File and FileSystem,
// so tests can swap the real POSIX implementation for one that injects faults
// (fault_file_system.h: lost unsynced data, torn writes, failing fsync, a full disk).
//
// Errors are values: IoError carries the errno of the failing system call.
//
// File model. A File has a logical size(). append() writes at size() and advances it only when
// the whole write succeeded; a failed append (ENOSPC, EIO) may leave some bytes past size() in the
// file, which the next append overwrites and truncate() removes. Writes become durable only after
// sync() (fdatasync); a file that was created or renamed also needs sync_directory() on its
// directory.
//
// Thread safety: a File is used by its owner thread, except sync() and pread(), which may run on
// another thread (the flusher, a network thread serving sendfile) concurrently with append().
// PosixFileSystem is stateless and thread-safe.
#pragma once

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"

namespace weir::storage {

struct IoError {
  int code = 0;  // errno

  [[nodiscard]] bool not_found() const noexcept;
  [[nodiscard]] bool no_space() const noexcept;
  friend bool operator==(const IoError&, const IoError&) = default;
};

// "No space left on device (errno 28)".
[[nodiscard]] std::string to_string(IoError e);

template <class T>
using IoResult = Result<T, IoError>;

class File : public std::enable_shared_from_this<File> {
 public:
  File() = default;
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  virtual ~File() = default;

  // Reads up to out.size() bytes at position; fewer only at the end of the file. Thread-safe.
  [[nodiscard]] virtual IoResult<std::size_t> pread(std::int64_t position, MutableByteSpan out) const = 0;
  // Writes data at size(); size() grows by data.size() only if all of it was written.
  [[nodiscard]] virtual Status<IoError> append(ByteSpan data) = 0;
  // fdatasync: everything written before the call is durable when it returns. Thread-safe.
  [[nodiscard]] virtual Status<IoError> sync() = 0;
  // Sets the file's length and size() (shrinking or zero-extending).
  [[nodiscard]] virtual Status<IoError> truncate(std::int64_t size) = 0;
  [[nodiscard]] virtual std::int64_t size() const noexcept = 0;
  // The descriptor, for sendfile(2). A file of a FileCache (file_cache.h) may close and reopen
  // it: -1 while closed.
  [[nodiscard]] virtual int fd() const noexcept = 0;
  // A file whose descriptor stays open while the returned pointer lives, for a reader on another
  // thread (sendfile). A plain file is its own handle; a FileCache file returns the open file
  // underneath it. Files are always owned by a shared_ptr (FileSystem::open).
  [[nodiscard]] virtual IoResult<std::shared_ptr<const File>> open_handle() const {
    return std::shared_ptr<const File>(shared_from_this());
  }
  // Last modification time in milliseconds since the Unix epoch.
  [[nodiscard]] virtual IoResult<std::int64_t> modified_time_ms() const = 0;
  // Sets the modification time (the log cleaner gives a cleaned segment the time of the newest
  // segment it replaces, as Kafka does). Not a write: durable with the file's next sync.
  [[nodiscard]] virtual Status<IoError> set_modified_time_ms(std::int64_t time_ms) = 0;
};

enum class OpenMode : std::uint8_t {
  kRead,            // an existing file, read only
  kReadWrite,       // an existing file
  kCreate,          // created if missing; existing contents kept
  kCreateTruncate,  // created if missing; emptied
};

struct DirEntry {
  std::string name;
  bool is_directory = false;
};

// What tells one state of a directory (or file) from another: its device and inode, and the
// time its inode last changed (in a directory: any entry created, removed or renamed). Two equal
// identities of a path mean it is the same inode and nothing was added to or removed from it in
// between.
struct FileIdentity {
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
  std::int64_t change_time_ns = 0;
  friend bool operator==(const FileIdentity&, const FileIdentity&) = default;
};

// syncfs(2) of one file system: sync() makes the written data of every file on it and the entries
// of every directory on it durable, however many there are (one call, where per-file fsyncs cost
// one journal commit each). Open it before the writes it must cover: Linux reports a write-back
// error to a syncfs only through a descriptor opened before the error. A failed sync() does not
// say which file lost data: sync each file instead. Used by one thread at a time.
class FileSystemSync {
 public:
  FileSystemSync() = default;
  FileSystemSync(const FileSystemSync&) = delete;
  FileSystemSync& operator=(const FileSystemSync&) = delete;
  virtual ~FileSystemSync() = default;
  [[nodiscard]] virtual Status<IoError> sync() = 0;
};

class FileSystem {
 public:
  FileSystem() = default;
  FileSystem(const FileSystem&) = delete;
  FileSystem& operator=(const FileSystem&) = delete;
  virtual ~FileSystem() = default;

  [[nodiscard]] virtual IoResult<std::shared_ptr<File>> open(const std::filesystem::path& path, OpenMode mode) = 0;
  // Atomically replaces `to` (if it exists) by `from`.
  [[nodiscard]] virtual Status<IoError> rename(const std::filesystem::path& from, const std::filesystem::path& to) = 0;
  // Removes a file or an empty directory.
  [[nodiscard]] virtual Status<IoError> remove(const std::filesystem::path& path) = 0;
  // Creates a directory unless it exists already (its parent must exist).
  [[nodiscard]] virtual Status<IoError> create_directory(const std::filesystem::path& path) = 0;
  // The entries of a directory except "." and "..", in no particular order.
  [[nodiscard]] virtual IoResult<std::vector<DirEntry>> list(const std::filesystem::path& dir) = 0;
  // fsync of a directory: makes creations, renames and removals in it durable. Thread-safe.
  [[nodiscard]] virtual Status<IoError> sync_directory(const std::filesystem::path& dir) = 0;
  [[nodiscard]] virtual IoResult<bool> exists(const std::filesystem::path& path) = 0;
  // The path's identity now; ENOTSUP where the file system cannot say (then nothing may rely on it).
  [[nodiscard]] virtual IoResult<FileIdentity> identity(const std::filesystem::path& /*path*/) {
    return unexpected(IoError{ENOTSUP});
  }
  // An existing file whose size the caller knows from a record it trusts (the log dir's
  // clean-shutdown summary, log_summary.h): a FileCache registers it without opening it (its
  // first use opens it); any other file system opens it now.
  [[nodiscard]] virtual IoResult<std::shared_ptr<File>> open_known(const std::filesystem::path& path, OpenMode mode,
                                                                   std::int64_t /*size*/) {
    return open(path, mode);
  }
  // open_known() of several files of one directory (a segment's log and indexes), in order.
  struct KnownFile {
    std::string_view name;  // a file name in `dir`
    OpenMode mode;
    std::int64_t size;
  };
  [[nodiscard]] virtual IoResult<std::vector<std::shared_ptr<File>>> open_known_in(const std::filesystem::path& dir,
                                                                                   std::span<const KnownFile> files) {
    std::vector<std::shared_ptr<File>> out;
    out.reserve(files.size());
    for (const KnownFile& f : files) {
      auto file = open_known(dir / f.name, f.mode, f.size);
      if (!file) return unexpected(file.error());
      out.push_back(std::move(*file));
    }
    return out;
  }
  // A FileSystemSync of the file system holding dir; ENOSYS where there is none (sync file by file).
  [[nodiscard]] virtual IoResult<std::unique_ptr<FileSystemSync>> open_filesystem_sync(
      const std::filesystem::path& dir) {
    (void)dir;
    return unexpected(IoError{ENOSYS});
  }
};

// The real thing: POSIX calls on the local file system.
class PosixFileSystem final : public FileSystem {
 public:
  IoResult<std::shared_ptr<File>> open(const std::filesystem::path& path, OpenMode mode) override;
  Status<IoError> rename(const std::filesystem::path& from, const std::filesystem::path& to) override;
  Status<IoError> remove(const std::filesystem::path& path) override;
  Status<IoError> create_directory(const std::filesystem::path& path) override;
  IoResult<std::vector<DirEntry>> list(const std::filesystem::path& dir) override;
  Status<IoError> sync_directory(const std::filesystem::path& dir) override;
  IoResult<bool> exists(const std::filesystem::path& path) override;
  IoResult<FileIdentity> identity(const std::filesystem::path& path) override;
  IoResult<std::unique_ptr<FileSystemSync>> open_filesystem_sync(const std::filesystem::path& dir) override;

  // A process-wide instance.
  static PosixFileSystem& instance() noexcept;
};

// Removes a directory and everything in it (not following symbolic links).
[[nodiscard]] Status<IoError> remove_all(FileSystem& fs, const std::filesystem::path& path);

// Reads a whole file of at most max_bytes; EFBIG if it is larger.
[[nodiscard]] IoResult<std::string> read_file(FileSystem& fs, const std::filesystem::path& path, std::size_t max_bytes);

// Writes content to path atomically and durably: path.tmp is written and synced, renamed over
// path, and the directory synced. A crash leaves either the old or the new file.
[[nodiscard]] Status<IoError> write_file_atomically(FileSystem& fs, const std::filesystem::path& path,
                                                    std::string_view content);

namespace detail {
// POSIX helpers shared by the real and the fault-injecting file systems; all retry EINTR.
IoResult<int> open_fd(const std::filesystem::path& path, OpenMode mode);
IoResult<std::size_t> pread_fd(int fd, std::int64_t position, MutableByteSpan out);
// Writes all of data at position; on failure *written says how many bytes did reach the file.
Status<IoError> pwrite_fd(int fd, std::int64_t position, ByteSpan data, std::size_t* written);
IoResult<std::int64_t> fd_size(int fd);
IoResult<std::int64_t> fd_mtime_ms(int fd);
IoResult<FileIdentity> path_identity(const std::filesystem::path& path);
Status<IoError> fd_set_mtime_ms(int fd, std::int64_t time_ms);
Status<IoError> sync_dir_path(const std::filesystem::path& dir);
IoError last_error() noexcept;
}  // namespace detail

}  // namespace weir::storage
