#include "storage/flusher.h"

#include <map>

#include "base/assert.h"
#include "base/log.h"

namespace weir::storage {

Flusher::Flusher(FileSystem& fs, Options options) : fs_(fs), options_(options) {}

Flusher::~Flusher() { stop(); }

void Flusher::start() {
  std::lock_guard lock(mutex_);
  WEIR_ASSERT(!running_ && !thread_.joinable(), "flusher started twice");
  running_ = true;
  stopping_ = false;
  thread_ = std::thread([this] { run(); });
}

void Flusher::stop() {
  {
    std::lock_guard lock(mutex_);
    if (!running_) return;
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
  std::lock_guard lock(mutex_);
  running_ = false;
}

bool Flusher::submit(SyncToken token, Callback done) {
  {
    std::lock_guard lock(mutex_);
    if (!running_ || stopping_ || queue_.size() >= options_.max_queued_requests) {
      ++stats_.rejected;
      return false;
    }
    queue_.push_back(Request{std::move(token), std::move(done)});
  }
  wake_.notify_one();
  return true;
}

Flusher::Stats Flusher::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

void Flusher::run() {
  std::vector<Request> batch;
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and nothing left
      batch.swap(queue_);
    }
    run_cycle(batch);
    batch.clear();
  }
}

void Flusher::run_cycle(std::vector<Request>& requests) {
  // Each distinct descriptor and directory once; remember how each went.
  std::map<int, std::pair<File*, bool>> files;
  std::map<std::filesystem::path, bool> directories;
  for (const Request& r : requests) {
    for (const SyncToken::FileEntry& e : r.token.files) files.emplace(e.file->fd(), std::pair{e.file.get(), true});
    for (const auto& d : r.token.directories) directories.emplace(d, true);
  }
  std::int64_t failed = 0;
  for (auto& [fd, entry] : files) {
    if (auto ok = entry.first->sync(); !ok) {
      entry.second = false;
      ++failed;
      log::get("storage")->error("event=fdatasync_failed {} {}", log::kv("fd", fd),
                                 log::kv("error", to_string(ok.error())));
    }
  }
  for (auto& [dir, ok_flag] : directories) {
    if (auto ok = fs_.sync_directory(dir); !ok) {
      ok_flag = false;
      ++failed;
      log::get("storage")->error("event=directory_fsync_failed {} {}", log::kv("dir", dir.string()),
                                 log::kv("error", to_string(ok.error())));
    }
  }
  {
    std::lock_guard lock(mutex_);
    ++stats_.cycles;
    stats_.requests += static_cast<std::int64_t>(requests.size());
    stats_.file_syncs += static_cast<std::int64_t>(files.size());
    stats_.directory_syncs += static_cast<std::int64_t>(directories.size());
    stats_.failed_syncs += failed;
    stats_.largest_cycle = std::max(stats_.largest_cycle, static_cast<std::int64_t>(requests.size()));
  }
  for (Request& r : requests) {
    bool ok = true;
    for (const SyncToken::FileEntry& e : r.token.files) ok = ok && files.at(e.file->fd()).second;
    for (const auto& d : r.token.directories) ok = ok && directories.at(d);
    r.done(ok ? Status<Errc>() : Status<Errc>(unexpected(Errc::kStorageError)));
  }
}

}  // namespace weir::storage
