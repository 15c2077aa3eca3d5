// FileCache: a FileSystem over another one that bounds how many descriptors its files hold open,
// so that descriptors do not grow with partitions x 3 (segments, offset and time indexes).
//
// A File opened through the cache remembers its path and logical size and holds a descriptor
// only while the cache lets it: every operation takes the open file from the cache (opening it
// again, in its original mode minus creation and truncation, if it was evicted), and when more
// than `capacity` files are open the least recently used one that nobody is using is closed.
// A file in use is never closed under its user:
//
//   - an operation (pread, append, sync, ...) holds the open file for its duration;
//   - open_handle() returns the open file underneath, which keeps its descriptor while the handle
//     lives (a Fetch response sent with sendfile(2) from a network thread); the cache does not
//     evict a file with a handle outstanding. A handle that would need a descriptor beyond the
//     capacity, with every open file in use, is refused with EMFILE (the reader then returns
//     fewer bytes and the client fetches again).
//
// Operations may take the cache past its capacity when every open file is in use (briefly: they
// close again as soon as they are done). An open failing with EMFILE or ENFILE closes idle files
// and is tried once more. Closing a file that has unsynced writes is safe: fdatasync on a later
// descriptor of the same file makes them durable (Linux tracks dirty pages and write-back
// errors per file, not per descriptor).
//
// rename() and remove() through the cache keep its files' paths right: a renamed file (or one in
// a renamed directory) reopens under its new name, a removed or replaced one fails to reopen
// with ENOENT.
//
// Every failed operation writes one `event=storage_io_failed` line with the operation, the path
// and the errno text, at most kFailureLinesPerSecond a second (bursts of kFailureLineBurst),
// and is remembered per thread (take_last_failure()) so that a caller that only sees
// Errc::kStorageError can say what failed. A failure that is_disk_failure() counts is then
// passed to the cache's disk-failure observer, if it has one (a broker in a cluster halts on it,
// as a Kafka broker does when its last log directory goes offline).
//
// Thread safety: everything is thread-safe (one mutex guards the cache; I/O is done outside it
// except opening, closing, renaming and removing). The files' own rules are File's: append,
// truncate and set_modified_time_ms from the owner thread only.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/log.h"
#include "storage/file.h"

namespace weir::storage {

class CachedFile;

// A failed file-system operation: what, on which path, and the errno.
struct IoFailure {
  std::string op;  // "open", "append", "sync", "rename", ...
  std::filesystem::path path;
  IoError error;
};

// Whether a failed operation means the disk (or its file system) failed, where Kafka would take
// the log directory offline: every errno but a missing file (ENOENT: removed by retention or a
// deletion while in use), running out of descriptors (EMFILE, ENFILE: the cache closes idle
// files and callers retry) and an interrupted or would-block call (EINTR, EAGAIN). A full disk
// (ENOSPC, EDQUOT) counts, as an IOException does in Kafka.
[[nodiscard]] bool is_disk_failure(const IoError& error) noexcept;

// Called with each disk failure (is_disk_failure()) of a cache's operations, on the thread that
// saw it, with no lock of the cache held; it must be thread-safe. It may not return.
using DiskFailureObserver = std::function<void(const IoFailure&)>;

class FileCache final : public FileSystem, public std::enable_shared_from_this<FileCache> {
 public:
  static constexpr double kFailureLinesPerSecond = 5;
  static constexpr double kFailureLineBurst = 20;
  // The smallest capacity the default formula gives.
  static constexpr std::size_t kMinCapacity = 64;

  struct Stats {
    std::size_t capacity = 0;
    std::size_t open = 0;         // files holding a descriptor now
    std::uint64_t opens = 0;      // descriptors opened (first opens and reopens)
    std::uint64_t evictions = 0;  // descriptors closed to stay within the capacity
    std::uint64_t refused_handles = 0;
    std::uint64_t failures = 0;  // failed operations (each logged, rate-limited)
  };

  // `base` must outlive the cache and every file opened through it. capacity >= 1.
  [[nodiscard]] static std::shared_ptr<FileCache> create(FileSystem& base, std::size_t capacity,
                                                         DiskFailureObserver on_disk_failure = {});
  // The default capacity: 3/8 of the soft RLIMIT_NOFILE, at least kMinCapacity. Connections
  // take at most half by default (net::default_max_connections); the last eighth is left for the
  // metadata log, checkpoints being written, listeners and the event loops.
  [[nodiscard]] static std::size_t default_capacity();

  ~FileCache() override;

  IoResult<std::shared_ptr<File>> open(const std::filesystem::path& path, OpenMode mode) override;
  Status<IoError> rename(const std::filesystem::path& from, const std::filesystem::path& to) override;
  Status<IoError> remove(const std::filesystem::path& path) override;
  Status<IoError> create_directory(const std::filesystem::path& path) override;
  IoResult<std::vector<DirEntry>> list(const std::filesystem::path& dir) override;
  Status<IoError> sync_directory(const std::filesystem::path& dir) override;
  IoResult<bool> exists(const std::filesystem::path& path) override;
  IoResult<FileIdentity> identity(const std::filesystem::path& path) override;
  // Registers the file without opening it: its first operation opens it (as a reopen: a file
  // shorter than `size` then fails with EIO, a longer one is cut to `size`).
  IoResult<std::shared_ptr<File>> open_known(const std::filesystem::path& path, OpenMode mode,
                                             std::int64_t size) override;
  // The same for several files of a directory, registered under one lock.
  IoResult<std::vector<std::shared_ptr<File>>> open_known_in(const std::filesystem::path& dir,
                                                             std::span<const KnownFile> files) override;
  // The base file system's, not counted as a failure or told to the disk-failure observer when it
  // fails (to open or to sync): a failed syncfs is followed by per-file syncs, which report theirs.
  IoResult<std::unique_ptr<FileSystemSync>> open_filesystem_sync(const std::filesystem::path& dir) override;

  [[nodiscard]] Stats stats() const;
  [[nodiscard]] FileSystem& base() const noexcept { return base_; }

  // The last failure on the calling thread of an operation of any FileCache, and clears it.
  [[nodiscard]] static std::optional<IoFailure> take_last_failure();
  // Forgets the calling thread's last failure (before an operation whose failure is wanted).
  static void clear_last_failure();

 private:
  friend class CachedFile;
  FileCache(FileSystem& base, std::size_t capacity, DiskFailureObserver on_disk_failure);

  static std::string key(const std::filesystem::path& path);

  // Every live file by where it is (several may share one path), for rename() and remove(): by
  // its directory's parent (the path up to and with the '/' before the directory's name; ordered,
  // for the directories below a renamed one), then by its directory's name with its '/' (hashed),
  // then by its own name. The files of a partition share one directory entry, found with one
  // hash lookup; a directory rename moves entries, not files.
  using Names = std::multimap<std::string, CachedFile*, std::less<>>;
  struct NameHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  using Dirs = std::unordered_map<std::string, Names, NameHash, std::equal_to<>>;
  using Parents = std::map<std::string, Dirs, std::less<>>;
  // A directory's entry (an element's address stays put while it lives, rehashing or not).
  struct DirRef {
    Parents::iterator parent;
    Dirs::value_type* dir;
  };
  // A key() cut into its parts: parent + dir + name is the path (a path ending in '/' has no name).
  struct Place {
    std::string_view parent, dir, name;
  };
  static Place place_of(std::string_view path);
  DirRef dir_locked(std::string_view parent, std::string_view dir);  // found or added; mutex_ held
  // Registers f under `path` (a key()) or under `name` in `at`. mutex_ held.
  void link_locked(CachedFile& f, std::string_view path);
  void link_locked(CachedFile& f, DirRef at, std::string_view name);
  // Removes f from the index (and its directory's entry once empty). mutex_ held.
  void unlink_path_locked(CachedFile& f);
  // Moves every file of `from` (a directory entry taken out of the index) into `to`. mutex_ held.
  static void merge_names_locked(Names& from, DirRef to);
  // The live files at exactly `path` (a key()). mutex_ held.
  std::vector<CachedFile*> files_at_locked(std::string_view path);
  // The open file of f, (re)opening it and evicting as needed. mutex_ held.
  IoResult<std::shared_ptr<File>> acquire_locked(CachedFile& f, bool for_handle);
  IoResult<std::shared_ptr<File>> acquire(CachedFile& f, bool for_handle);
  // Closes idle files, least recently used first, until at most `target` are open. mutex_ held.
  void evict_locked(std::size_t target);
  void close_locked(CachedFile& f);
  void touch_locked(CachedFile& f);
  void unlink_lru_locked(CachedFile& f);
  void forget(CachedFile& f);  // f is being destroyed
  // Opens through base_, closing idle files and retrying once on EMFILE / ENFILE. mutex_ held.
  IoResult<std::shared_ptr<File>> open_base_locked(const std::string& path, OpenMode mode);
  // Counts, logs (rate-limited) and remembers a failure; of_file: the path is a file's. mutex_ not held.
  void fail(std::string_view op, const std::filesystem::path& path, IoError error, bool of_file);

  FileSystem& base_;
  const std::size_t capacity_;
  const DiskFailureObserver on_disk_failure_;
  mutable std::mutex mutex_;
  Parents by_parent_;
  // Open files, most recently used first (an intrusive list through CachedFile).
  CachedFile* lru_head_ = nullptr;
  CachedFile* lru_tail_ = nullptr;
  std::size_t open_ = 0;
  Stats stats_;
  std::mutex log_mutex_;
  log::RateLimiter failure_lines_{kFailureLinesPerSecond, kFailureLineBurst};
};

// A file of a FileCache (see there). Created only by FileCache::open().
class CachedFile final : public File {
 public:
  CachedFile(std::shared_ptr<FileCache> cache, OpenMode reopen_mode, std::int64_t size) noexcept;
  ~CachedFile() override;

  IoResult<std::size_t> pread(std::int64_t position, MutableByteSpan out) const override;
  Status<IoError> append(ByteSpan data) override;
  Status<IoError> sync() override;
  Status<IoError> truncate(std::int64_t size) override;
  std::int64_t size() const noexcept override { return size_.load(std::memory_order_relaxed); }
  // The descriptor while the file is open, else -1: it changes when the file is evicted and
  // reopened (use open_handle() for one that stays valid).
  int fd() const noexcept override;
  IoResult<std::int64_t> modified_time_ms() const override;
  Status<IoError> set_modified_time_ms(std::int64_t time_ms) override;
  IoResult<std::shared_ptr<const File>> open_handle() const override;

 private:
  friend class FileCache;
  IoResult<std::shared_ptr<File>> use(std::string_view op) const;
  [[nodiscard]] std::string path() const;

  std::shared_ptr<FileCache> cache_;
  // Logical size: written by the owner thread while it holds the open file, read by a reopen.
  std::atomic<std::int64_t> size_;
  // Guarded by cache_->mutex_ (the path is the directory's key and the name's):
  FileCache::DirRef at_{};
  FileCache::Names::iterator name_;
  bool linked_ = false;  // at_ and name_ are set
  OpenMode reopen_mode_;
  bool unlinked_ = false;
  std::shared_ptr<File> open_;   // null while closed
  bool in_lru_ = false;          // exactly while open_ is set
  CachedFile* newer_ = nullptr;  // LRU neighbours
  CachedFile* older_ = nullptr;
};

}  // namespace weir::storage
