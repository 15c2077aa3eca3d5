#include "storage/flusher.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <set>

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
  std::uint64_t generation = 0;
  {
    std::lock_guard pool(pool_mutex_);
    pool_stopping_ = false;
    generation = pool_generation_;  // a restarted flusher's helpers must not take an old list for new work
  }
  open_syncfs_dirs();
  for (std::size_t i = 1; i < options_.sync_threads; ++i) {
    helpers_.emplace_back([this, generation] { helper_loop(generation); });
  }
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
  {
    std::lock_guard pool(pool_mutex_);
    pool_stopping_ = true;
  }
  pool_wake_.notify_all();
  for (auto& h : helpers_) h.join();
  helpers_.clear();
  for (int fd : syncfs_fds_) ::close(fd);
  syncfs_fds_.clear();
  std::lock_guard lock(mutex_);
  running_ = false;
}

void Flusher::open_syncfs_dirs() {
  std::set<dev_t> devices;
  for (const auto& dir : options_.syncfs_dirs) {
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct stat st {};
    if (fd < 0 || ::fstat(fd, &st) != 0) {
      const int error = errno;
      if (fd >= 0) ::close(fd);
      // Without every file system covered a syncfs could miss files: sync file by file.
      log::get("storage")->warn("event=syncfs_unavailable {} {}", log::kv("dir", dir.string()),
                                log::kv("error", std::strerror(error)));
      for (int open_fd : syncfs_fds_) ::close(open_fd);
      syncfs_fds_.clear();
      return;
    }
    if (devices.insert(st.st_dev).second) {
      syncfs_fds_.push_back(fd);
    } else {
      ::close(fd);
    }
  }
}

bool Flusher::sync_filesystems() {
  for (int fd : syncfs_fds_) {
    const int rc = options_.syncfs ? options_.syncfs(fd) : ::syncfs(fd);
    {
      std::lock_guard lock(mutex_);
      ++stats_.filesystem_syncs;
    }
    if (rc != 0) {
      const int error = errno;
      log::get("storage")->error("event=syncfs_failed {} action=sync_each_file_from_now_on",
                                 log::kv("error", std::strerror(error)));
      syncfs_failed_ = true;
      return false;
    }
  }
  return true;
}

void Flusher::helper_loop(std::uint64_t seen) {
  for (;;) {
    std::vector<FileSync*>* work = nullptr;
    {
      std::unique_lock lock(pool_mutex_);
      pool_wake_.wait(lock, [&] { return pool_stopping_ || pool_generation_ != seen; });
      if (pool_stopping_) return;
      seen = pool_generation_;
      work = pool_work_;
    }
    sync_some(*work);
    {
      std::lock_guard lock(pool_mutex_);
      --pool_busy_;
    }
    pool_done_.notify_all();
  }
}

void Flusher::sync_some(std::vector<FileSync*>& list) {
  for (std::size_t i = next_sync_++; i < list.size(); i = next_sync_++) {
    FileSync& f = *list[i];
    if (auto ok = f.file->sync(); !ok) {
      f.ok = false;
      ++failed_syncs_in_cycle_;
      log::get("storage")->error("event=fdatasync_failed {} {}", log::kv("fd", f.file->fd()),
                                 log::kv("error", to_string(ok.error())));
    }
  }
}

void Flusher::sync_files(std::vector<FileSync*>& list) {
  next_sync_ = 0;
  if (helpers_.empty() || list.size() < options_.parallel_min_files) {
    sync_some(list);
    return;
  }
  {
    std::lock_guard lock(pool_mutex_);
    pool_work_ = &list;
    pool_busy_ = helpers_.size();
    ++pool_generation_;
  }
  pool_wake_.notify_all();
  sync_some(list);  // the flusher thread works too
  std::unique_lock lock(pool_mutex_);
  pool_done_.wait(lock, [&] { return pool_busy_ == 0; });
  pool_work_ = nullptr;
}

bool Flusher::submit(SyncToken token, Callback done) {
  {
    std::lock_guard lock(mutex_);
    if (!running_ || stopping_ || queue_.size() >= options_.max_queued_requests) {
      ++stats_.rejected;
      return false;
    }
    queue_.push_back(Request{std::move(token), std::move(done), std::chrono::steady_clock::now()});
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
  // Each distinct file and directory once; remember how each went. (By File, not by descriptor:
  // a FileCache file has none while it is closed.)
  std::map<const File*, FileSync> files;
  std::map<std::filesystem::path, bool> directories;
  for (const Request& r : requests) {
    for (const SyncToken::FileEntry& e : r.token.files) files.emplace(e.file.get(), FileSync{e.file.get()});
    for (const auto& d : r.token.directories) directories.emplace(d, true);
  }
  const auto started = std::chrono::steady_clock::now();
  std::vector<FileSync*> list;
  list.reserve(files.size());
  for (auto& [file, entry] : files) list.push_back(&entry);
  failed_syncs_in_cycle_ = 0;
  // syncfs makes file data and directory entries durable alike.
  const bool whole_filesystems = !syncfs_fds_.empty() && !syncfs_failed_ &&
                                 list.size() >= options_.syncfs_min_files && sync_filesystems();
  if (!whole_filesystems) sync_files(list);
  std::int64_t failed = failed_syncs_in_cycle_;
  for (auto& [dir, ok_flag] : directories) {
    if (whole_filesystems) break;
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
  if (options_.observe) {
    const auto us = [](auto d) { return std::chrono::duration_cast<std::chrono::microseconds>(d).count(); };
    const std::int64_t cycle_us = us(std::chrono::steady_clock::now() - started);
    for (const Request& r : requests) options_.observe(us(started - r.submitted), cycle_us);
  }
  for (Request& r : requests) {
    bool ok = true;
    for (const SyncToken::FileEntry& e : r.token.files) ok = ok && files.at(e.file.get()).ok;
    for (const auto& d : r.token.directories) ok = ok && directories.at(d);
    r.done(ok ? Status<Errc>() : Status<Errc>(unexpected(Errc::kStorageError)));
  }
}

}  // namespace weir::storage
