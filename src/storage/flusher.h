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
// journal commits. bench/flush_bench.cpp measured it on the project's 2-core virtio machine: 64
// dirty files 8.8 ms sequential, 3.2 ms from 8 threads; 16 files 2.4 ms vs 1.2 ms. syncfs() was
// faster still on an otherwise idle file system but slower as soon as other (acks=1) data was
// dirty, which it flushes too (64 files with 4 MiB of such data: 5.1 ms), so it is not used.
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
    std::size_t sync_threads = 8;       // threads syncing one cycle's files (1: sequential)
    std::size_t parallel_min_files = 3;  // fewer files than this are synced sequentially
    Observer observe{};                  // optional
  };

  struct Stats {
    std::int64_t cycles = 0;
    std::int64_t requests = 0;
    std::int64_t file_syncs = 0;
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
};

}  // namespace weir::storage
