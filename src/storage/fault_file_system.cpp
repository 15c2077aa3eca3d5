#include "storage/fault_file_system.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include "base/assert.h"

namespace weir::storage {

namespace fs = std::filesystem;

class FaultFile final : public File {
 public:
  FaultFile(FaultInjectingFileSystem* owner, std::shared_ptr<FaultInjectingFileSystem::FileState> state, int fd,
            std::int64_t size) noexcept
      : owner_(owner), state_(std::move(state)), fd_(fd), size_(size) {}
  ~FaultFile() override { ::close(fd_); }

  IoResult<std::size_t> pread(std::int64_t position, MutableByteSpan out) const override {
    return detail::pread_fd(fd_, position, out);
  }

  Status<IoError> append(ByteSpan data) override {
    std::lock_guard lock(owner_->mutex_);
    if (!owner_->allow_operation()) return unexpected(IoError{EIO});
    if (int e = owner_->path_fault("append", state_->path)) return unexpected(IoError{e});
    const auto n = static_cast<std::int64_t>(data.size());
    const std::int64_t growth = std::max<std::int64_t>(0, size_ + n - state_->physical_size);
    std::int64_t allowed = n;
    if (owner_->free_bytes_ && growth > *owner_->free_bytes_) allowed = n - (growth - *owner_->free_bytes_);
    std::size_t written = 0;
    auto ok = detail::pwrite_fd(fd_, size_, data.first(static_cast<std::size_t>(allowed)), &written);
    const std::int64_t end = size_ + static_cast<std::int64_t>(written);
    if (owner_->free_bytes_) *owner_->free_bytes_ -= std::max<std::int64_t>(0, end - state_->physical_size);
    state_->physical_size = std::max(state_->physical_size, end);
    state_->last_write_position = size_;
    state_->last_write_size = static_cast<std::int64_t>(written);
    if (!ok) return ok;
    if (allowed < n) return unexpected(IoError{ENOSPC});
    size_ += n;
    return {};
  }

  Status<IoError> sync() override {
    std::function<void()> hook;
    {
      std::lock_guard lock(owner_->mutex_);
      hook = owner_->sync_hook_;
    }
    if (hook) hook();
    std::lock_guard lock(owner_->mutex_);
    if (owner_->fail_syncs_ || !owner_->allow_operation()) return unexpected(IoError{EIO});
    if (int e = owner_->path_fault("sync", state_->path)) return unexpected(IoError{e});
    ++owner_->file_syncs_;
    state_->synced_size = state_->physical_size;
    return {};
  }

  Status<IoError> truncate(std::int64_t size) override {
    WEIR_ASSERT(size >= 0);
    std::lock_guard lock(owner_->mutex_);
    if (!owner_->allow_operation()) return unexpected(IoError{EIO});
    if (int e = owner_->path_fault("truncate", state_->path)) return unexpected(IoError{e});
    const std::int64_t growth = size - state_->physical_size;
    if (owner_->free_bytes_ && growth > *owner_->free_bytes_) return unexpected(IoError{ENOSPC});
    if (::ftruncate(fd_, static_cast<off_t>(size)) != 0) return unexpected(detail::last_error());
    if (owner_->free_bytes_) *owner_->free_bytes_ -= growth;
    state_->physical_size = size;
    state_->synced_size = std::min(state_->synced_size, size);
    if (state_->last_write_position >= size) state_->last_write_position = -1;
    size_ = size;
    return {};
  }

  std::int64_t size() const noexcept override { return size_; }
  int fd() const noexcept override { return fd_; }
  IoResult<std::int64_t> modified_time_ms() const override { return detail::fd_mtime_ms(fd_); }
  Status<IoError> set_modified_time_ms(std::int64_t time_ms) override {
    std::lock_guard lock(owner_->mutex_);
    if (!owner_->allow_operation()) return unexpected(IoError{EIO});
    if (int e = owner_->path_fault("set_mtime", state_->path)) return unexpected(IoError{e});
    return detail::fd_set_mtime_ms(fd_, time_ms);
  }

 private:
  FaultInjectingFileSystem* owner_;
  std::shared_ptr<FaultInjectingFileSystem::FileState> state_;
  const int fd_;
  std::int64_t size_;
};

class FaultFileSystemSync final : public FileSystemSync {
 public:
  FaultFileSystemSync(FaultInjectingFileSystem* owner, std::string dir) : owner_(owner), dir_(std::move(dir)) {}

  Status<IoError> sync() override {
    std::lock_guard lock(owner_->mutex_);
    if (owner_->fail_syncs_ || !owner_->allow_operation()) return unexpected(IoError{EIO});
    if (int e = owner_->path_fault("syncfs", dir_)) return unexpected(IoError{e});
    ++owner_->filesystem_syncs_;
    owner_->sync_everything();
    return {};
  }

 private:
  FaultInjectingFileSystem* owner_;
  const std::string dir_;
};

FaultInjectingFileSystem::FaultInjectingFileSystem() = default;
FaultInjectingFileSystem::~FaultInjectingFileSystem() = default;

std::string FaultInjectingFileSystem::key(const fs::path& p) {
  std::string k = p.lexically_normal().string();
  while (k.size() > 1 && k.back() == '/') k.pop_back();
  return k;
}

std::shared_ptr<FaultInjectingFileSystem::FileState> FaultInjectingFileSystem::state_for(const std::string& path,
                                                                                         std::int64_t size) {
  auto& slot = files_[path];
  if (!slot) {
    slot = std::make_shared<FileState>();
    slot->path = path;
    slot->synced_size = size;
    slot->physical_size = size;
  }
  return slot;
}

int FaultInjectingFileSystem::path_fault(std::string_view op, const std::string& path) const {
  return path_fault_ ? path_fault_(op, path) : 0;
}

void FaultInjectingFileSystem::fail_paths(PathFault fn) {
  std::lock_guard lock(mutex_);
  path_fault_ = std::move(fn);
}

bool FaultInjectingFileSystem::allow_operation() {
  ++mutating_operations_;
  if (!operations_left_) return true;
  if (*operations_left_ == 0) return false;
  --*operations_left_;
  return true;
}

IoResult<std::shared_ptr<File>> FaultInjectingFileSystem::open(const fs::path& path, OpenMode mode) {
  const std::string k = key(path);
  std::lock_guard lock(mutex_);
  if ((mode == OpenMode::kCreate || mode == OpenMode::kCreateTruncate) && !allow_operation()) {
    return unexpected(IoError{EIO});
  }
  if (mode == OpenMode::kCreate || mode == OpenMode::kCreateTruncate) {
    if (int e = path_fault("create", k)) return unexpected(IoError{e});
  }
  const bool existed = ::access(k.c_str(), F_OK) == 0;
  auto fd = detail::open_fd(k, mode);
  if (!fd) return unexpected(fd.error());
  auto size = detail::fd_size(*fd);
  if (!size) {
    ::close(*fd);
    return unexpected(size.error());
  }
  auto state = state_for(k, *size);
  if (*size < state->physical_size) {  // opened with O_TRUNC
    if (free_bytes_) *free_bytes_ += state->physical_size - *size;
    state->physical_size = *size;
    state->synced_size = std::min(state->synced_size, *size);
    state->last_write_position = -1;
  }
  if (!existed) created_unsynced_.insert(k);
  return std::shared_ptr<File>(std::make_shared<FaultFile>(this, std::move(state), *fd, *size));
}

Status<IoError> FaultInjectingFileSystem::rename(const fs::path& from, const fs::path& to) {
  const std::string f = key(from);
  const std::string t = key(to);
  std::lock_guard lock(mutex_);
  if (!allow_operation()) return unexpected(IoError{EIO});
  if (int e = path_fault("rename", f)) return unexpected(IoError{e});
  if (int e = path_fault("rename", t)) return unexpected(IoError{e});
  const bool target_existed = ::access(t.c_str(), F_OK) == 0;
  if (::rename(f.c_str(), t.c_str()) != 0) return unexpected(detail::last_error());
  if (auto it = files_.find(t); it != files_.end()) {
    if (free_bytes_) *free_bytes_ += it->second->physical_size;
    files_.erase(it);
  }
  // Re-key the file itself and, for a directory, everything below it.
  std::vector<std::pair<std::string, std::shared_ptr<FileState>>> moved;
  for (auto it = files_.begin(); it != files_.end();) {
    if (it->first == f || it->first.starts_with(f + "/")) {
      it->second->path = t + it->first.substr(f.size());
      moved.emplace_back(it->second->path, it->second);
      it = files_.erase(it);
    } else {
      ++it;
    }
  }
  for (auto& [k, state] : moved) files_[k] = std::move(state);
  std::vector<std::string> unsynced;
  for (auto it = created_unsynced_.begin(); it != created_unsynced_.end();) {
    if (*it == f || it->starts_with(f + "/")) {
      unsynced.push_back(t + it->substr(f.size()));
      it = created_unsynced_.erase(it);
    } else {
      ++it;
    }
  }
  for (auto& k : unsynced) {
    if (k == t && target_existed) continue;  // replacing a durable file: old or new survives
    created_unsynced_.insert(k);
  }
  return {};
}

Status<IoError> FaultInjectingFileSystem::remove(const fs::path& path) {
  const std::string k = key(path);
  std::lock_guard lock(mutex_);
  if (!allow_operation()) return unexpected(IoError{EIO});
  if (::remove(k.c_str()) != 0) return unexpected(detail::last_error());
  if (auto it = files_.find(k); it != files_.end()) {
    if (free_bytes_) *free_bytes_ += it->second->physical_size;
    files_.erase(it);
  }
  created_unsynced_.erase(k);
  return {};
}

Status<IoError> FaultInjectingFileSystem::create_directory(const fs::path& path) {
  const std::string k = key(path);
  std::lock_guard lock(mutex_);
  if (!allow_operation()) return unexpected(IoError{EIO});
  if (int e = path_fault("mkdir", k)) return unexpected(IoError{e});
  if (::mkdir(k.c_str(), 0755) == 0) {
    created_unsynced_.insert(k);
    return {};
  }
  const IoError error = detail::last_error();
  if (error.code == EEXIST && fs::is_directory(k)) return {};
  return unexpected(error);
}

IoResult<std::vector<DirEntry>> FaultInjectingFileSystem::list(const fs::path& dir) {
  return PosixFileSystem::instance().list(dir);
}

Status<IoError> FaultInjectingFileSystem::sync_directory(const fs::path& dir) {
  const std::string k = key(dir);
  std::lock_guard lock(mutex_);
  if (fail_syncs_ || !allow_operation()) return unexpected(IoError{EIO});
  if (int e = path_fault("sync_dir", k)) return unexpected(IoError{e});
  ++directory_syncs_;
  std::erase_if(created_unsynced_, [&](const std::string& p) { return fs::path(p).parent_path().string() == k; });
  return {};
}

IoResult<std::unique_ptr<FileSystemSync>> FaultInjectingFileSystem::open_filesystem_sync(const fs::path& dir) {
  const std::string k = key(dir);
  if (!fs::is_directory(k)) return unexpected(IoError{ENOENT});
  return std::unique_ptr<FileSystemSync>(std::make_unique<FaultFileSystemSync>(this, k));
}

void FaultInjectingFileSystem::sync_everything() {
  for (auto& [k, state] : files_) state->synced_size = state->physical_size;
  created_unsynced_.clear();
}

IoResult<bool> FaultInjectingFileSystem::exists(const fs::path& path) {
  return PosixFileSystem::instance().exists(path);
}

IoResult<FileIdentity> FaultInjectingFileSystem::identity(const fs::path& path) {
  return PosixFileSystem::instance().identity(path);
}

void FaultInjectingFileSystem::crash(CrashMode mode) {
  std::lock_guard lock(mutex_);
  for (auto& [k, state] : files_) {
    if (created_unsynced_.contains(k)) continue;
    std::int64_t keep = state->synced_size;
    const std::int64_t last_end = state->last_write_position + state->last_write_size;
    if (mode == CrashMode::kTearLastWrite && state->last_write_position >= 0 && last_end > keep) {
      keep = std::max(keep, state->last_write_position + state->last_write_size / 2);
    }
    keep = std::min(keep, state->physical_size);
    if (::truncate(k.c_str(), static_cast<off_t>(keep)) == 0) {
      if (free_bytes_) *free_bytes_ += state->physical_size - keep;
      state->physical_size = keep;
    }
    state->synced_size = state->physical_size;
    state->last_write_position = -1;
  }
  // Longest paths first, so files go before the directories holding them.
  std::vector<std::string> lost(created_unsynced_.begin(), created_unsynced_.end());
  std::sort(lost.begin(), lost.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
  for (const auto& k : lost) {
    std::error_code ec;
    fs::remove_all(k, ec);
    std::erase_if(files_, [&](const auto& entry) { return entry.first == k || entry.first.starts_with(k + "/"); });
  }
  created_unsynced_.clear();
}

void FaultInjectingFileSystem::set_free_bytes(std::optional<std::int64_t> bytes) {
  std::lock_guard lock(mutex_);
  free_bytes_ = bytes;
}

void FaultInjectingFileSystem::fail_syncs(bool fail) {
  std::lock_guard lock(mutex_);
  fail_syncs_ = fail;
}

void FaultInjectingFileSystem::set_sync_hook(std::function<void()> hook) {
  std::lock_guard lock(mutex_);
  sync_hook_ = std::move(hook);
}

void FaultInjectingFileSystem::fail_after(std::optional<std::int64_t> operations) {
  std::lock_guard lock(mutex_);
  operations_left_ = operations;
}

std::int64_t FaultInjectingFileSystem::mutating_operations() const {
  std::lock_guard lock(mutex_);
  return mutating_operations_;
}

std::int64_t FaultInjectingFileSystem::file_syncs() const {
  std::lock_guard lock(mutex_);
  return file_syncs_;
}

std::int64_t FaultInjectingFileSystem::directory_syncs() const {
  std::lock_guard lock(mutex_);
  return directory_syncs_;
}

std::int64_t FaultInjectingFileSystem::filesystem_syncs() const {
  std::lock_guard lock(mutex_);
  return filesystem_syncs_;
}

}  // namespace weir::storage
