// Flusher: group commit. One thread runs flush cycles; a request (a SyncToken and a callback)
// that arrives while a cycle runs waits for the next cycle, so every request in a cycle shares
// its syncs:
//
//   cycle: take every queued request; fdatasync each distinct file they name (by File) and
//          fsync each distinct directory; then call every callback with success, or with
//          kStorageError if a file or directory of its token failed to sync.
//
// A cycle with at least Options::parallel_min_files files syncs them from Options::sync_threads
// threads at once (the flusher thread and helpers it keeps): on ext4 concurrent fdatasyncs share
// journal commits. A cycle with at least Options::syncfs_min_files files instead makes the file
// systems of Options::syncfs_dirs durable with one syncfs(2) each (every file the flusher syncs
// must lie on one of them): that also flushes unrelated dirty data (other partitions' acks=1
// writes, other programs), so it only pays with many files. bench/flush_bench.cpp on the
// project's 2-core virtio machine, 1 KiB appended per file and 4 MiB of unrelated dirty data per
// cycle (median ms): 16 files 1.5 from 8 threads / 8.4 syncfs; 64 files 4.8 / 4.5; 256 files
// 22.6 / 12.8; 1,024 files 92.5 / 27.8; 4,096 files 208 / 61.
//
// A failed syncfs cannot say which file lost data, and Linux reports a write-back error to each
// syncfs caller only once: the cycle is then synced file by file (each file reports its own
// error), and the flusher never uses syncfs again, so that a file whose error the failed syncfs
// consumed still finds it in its own fdatasync.
//
// Callbacks run on the flusher thread; the broker posts them back to the log's owner thread,
// which calls PartitionLog::mark_synced(token) on success. Keep them short.
//
// The queue is bounded (Options::max_queued_requests): submit() refuses a request when it is full
// or the flusher is not running. stop() finishes the requests already queued, then joins.
// Thread-safe: submit() from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "base/result.h"
#include "storage/errc.h"
#include "storage/file.h"
#include "storage/sync_token.h"

namespace weir::storage {

class Flusher {
 public:
  using Callback = std::move_only_function<void(Status<Errc>)>;

  // Called on the flusher thread once per request of a cycle, before its callback: how long the
  // request queued before its cycle started, and how long that cycle's syncs took (us). A request
  // that arrived while another cycle ran queued for the rest of it: that is the wait beyond the
  // sync it needs. Keep it short (a histogram's observe).
  using Observer = std::function<void(std::int64_t queued_us, std::int64_t cycle_us)>;

  struct Options {
    std::size_t max_queued_requests = 65536;
    std::size_t sync_threads = 16;       // threads syncing one cycle's files (1: sequential)
    std::size_t parallel_min_files = 3;  // fewer files than this are synced sequentially
    // Directories whose file systems hold every file and directory this flusher syncs; empty:
    // never syncfs. Opened at start(); one syncfs per distinct file system.
    std::vector<std::filesystem::path> syncfs_dirs{};
    std::size_t syncfs_min_files = 256;  // cycles with fewer files sync file by file
    std::function<int(int fd)> syncfs{};  // tests: stands in for syncfs(2) (0, or -1 and errno)
    Observer observe{};                   // optional
  };

  struct Stats {
    std::int64_t cycles = 0;
    std::int64_t requests = 0;
    std::int64_t file_syncs = 0;        // files made durable (by fdatasync or a syncfs)
    std::int64_t filesystem_syncs = 0;  // syncfs calls
    std::int64_t directory_syncs = 0;
    std::int64_t failed_syncs = 0;
    std::int64_t rejected = 0;       // queue full or not running
    std::int64_t largest_cycle = 0;  // most requests served by one cycle
  };

  explicit Flusher(FileSystem& fs) : Flusher(fs, Options{}) {}
  Flusher(FileSystem& fs, Options options);
  ~Flusher();  // stop()
  Flusher(const Flusher&) = delete;
  Flusher& operator=(const Flusher&) = delete;

  void start();
  void stop();

  // Queues a request for the next cycle. False (and `done` is not called) when the queue is full
  // or the flusher is not running.
  [[nodiscard]] bool submit(SyncToken token, Callback done);

  [[nodiscard]] Stats stats() const;

 private:
  struct Request {
    SyncToken token;
    Callback done;
    std::chrono::steady_clock::time_point submitted;
  };

  struct FileSync {
    File* file;
    bool ok = true;
  };

  void run();
  void run_cycle(std::vector<Request>& requests);
  // Syncs every file of the list (marking failures), in parallel when it is long enough.
  void sync_files(std::vector<FileSync*>& list);
  void sync_some(std::vector<FileSync*>& list);  // takes items off next_sync_ until none is left
  void helper_loop(std::uint64_t seen);  // seen: the generation already handled
  void open_syncfs_dirs();
  // One syncfs per file system of syncfs_dirs; false (and syncfs off for good) on a failure.
  bool sync_filesystems();

  FileSystem& fs_;
  Options options_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<Request> queue_;
  bool running_ = false;
  bool stopping_ = false;
  std::thread thread_;
  Stats stats_;

  // Helpers of parallel cycles, started with the flusher thread.
  std::vector<std::thread> helpers_;
  std::mutex pool_mutex_;
  std::condition_variable pool_wake_;
  std::condition_variable pool_done_;
  std::vector<FileSync*>* pool_work_ = nullptr;  // the current parallel list; guarded by pool_mutex_
  std::uint64_t pool_generation_ = 0;           // bumped per parallel list
  std::size_t pool_busy_ = 0;                   // helpers still working on it
  bool pool_stopping_ = false;
  std::atomic<std::size_t> next_sync_{0};
  std::atomic<std::int64_t> failed_syncs_in_cycle_{0};

  std::vector<int> syncfs_fds_;  // one descriptor per file system of syncfs_dirs; flusher thread
  bool syncfs_failed_ = false;
};

}  // namespace weir::storage
