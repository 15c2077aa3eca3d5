// Flusher: group commit. One thread runs flush cycles; a request (a SyncToken and a callback)
// that arrives while a cycle runs waits for the next cycle, so every request in a cycle shares
// its syncs:
//
//   cycle: take every queued request; fdatasync each distinct file they name (by descriptor) and
//          fsync each distinct directory; then call every callback with success, or with
//          kStorageError if a file or directory of its token failed to sync.
//
// Callbacks run on the flusher thread; the broker posts them back to the log's owner thread,
// which calls PartitionLog::mark_synced(token) on success. Keep them short.
//
// The queue is bounded (Options::max_queued_requests): submit() refuses a request when it is full
// or the flusher is not running. stop() finishes the requests already queued, then joins.
// Thread-safe: submit() from any thread.
#pragma once

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

  struct Options {
    std::size_t max_queued_requests = 65536;
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
  };

  void run();
  void run_cycle(std::vector<Request>& requests);

  FileSystem& fs_;
  Options options_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<Request> queue_;
  bool running_ = false;
  bool stopping_ = false;
  std::thread thread_;
  Stats stats_;
};

}  // namespace weir::storage
