#include "storage/file.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "base/assert.h"

namespace weir::storage {

namespace fs = std::filesystem;

bool IoError::not_found() const noexcept { return code == ENOENT; }
bool IoError::no_space() const noexcept { return code == ENOSPC || code == EDQUOT; }

std::string to_string(IoError e) {
  char buf[128];
  // GNU strerror_r returns the message (possibly not in buf).
  const char* msg = strerror_r(e.code, buf, sizeof buf);
  return fmt::format("{} (errno {})", msg, e.code);
}

namespace detail {

IoError last_error() noexcept { return IoError{errno}; }

IoResult<int> open_fd(const fs::path& path, OpenMode mode) {
  int flags = O_CLOEXEC;
  switch (mode) {
    case OpenMode::kRead:
      flags |= O_RDONLY;
      break;
    case OpenMode::kReadWrite:
      flags |= O_RDWR;
      break;
    case OpenMode::kCreate:
      flags |= O_RDWR | O_CREAT;
      break;
    case OpenMode::kCreateTruncate:
      flags |= O_RDWR | O_CREAT | O_TRUNC;
      break;
  }
  for (;;) {
    const int fd = ::open(path.c_str(), flags, 0644);
    if (fd >= 0) return fd;
    if (errno != EINTR) return unexpected(last_error());
  }
}

IoResult<std::size_t> pread_fd(int fd, std::int64_t position, MutableByteSpan out) {
  WEIR_ASSERT(position >= 0);
  std::size_t done = 0;
  while (done < out.size()) {
    const ssize_t n = ::pread(fd, out.data() + done, out.size() - done, static_cast<off_t>(position + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return unexpected(last_error());
    }
    if (n == 0) break;  // end of file
    done += static_cast<std::size_t>(n);
  }
  return done;
}

Status<IoError> pwrite_fd(int fd, std::int64_t position, ByteSpan data, std::size_t* written) {
  WEIR_ASSERT(position >= 0);
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::pwrite(fd, data.data() + done, data.size() - done, static_cast<off_t>(position + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      if (written != nullptr) *written = done;
      return unexpected(last_error());
    }
    done += static_cast<std::size_t>(n);
  }
  if (written != nullptr) *written = done;
  return {};
}

IoResult<std::int64_t> fd_size(int fd) {
  struct stat st{};
  if (::fstat(fd, &st) != 0) return unexpected(last_error());
  return static_cast<std::int64_t>(st.st_size);
}

IoResult<std::int64_t> fd_mtime_ms(int fd) {
  struct stat st{};
  if (::fstat(fd, &st) != 0) return unexpected(last_error());
  return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1'000'000;
}

IoResult<FileIdentity> path_identity(const fs::path& path) {
  struct stat st{};
  if (::lstat(path.c_str(), &st) != 0) return unexpected(last_error());
  return FileIdentity{static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino),
                      static_cast<std::int64_t>(st.st_ctim.tv_sec) * 1'000'000'000 + st.st_ctim.tv_nsec};
}

Status<IoError> fd_set_mtime_ms(int fd, std::int64_t time_ms) {
  struct timespec times[2]{};
  times[0].tv_nsec = UTIME_OMIT;  // access time unchanged
  times[1].tv_sec = static_cast<time_t>(time_ms / 1000);
  times[1].tv_nsec = static_cast<long>((time_ms % 1000) * 1'000'000);
  if (::futimens(fd, times) != 0) return unexpected(last_error());
  return {};
}

Status<IoError> sync_dir_path(const fs::path& dir) {
  auto fd = open_fd(dir, OpenMode::kRead);
  if (!fd) return unexpected(fd.error());
  Status<IoError> result;
  if (::fsync(*fd) != 0) result = unexpected(last_error());
  ::close(*fd);
  return result;
}

}  // namespace detail

namespace {

class PosixFile final : public File {
 public:
  PosixFile(int fd, std::int64_t size) noexcept : fd_(fd), size_(size) {}
  ~PosixFile() override { ::close(fd_); }

  IoResult<std::size_t> pread(std::int64_t position, MutableByteSpan out) const override {
    return detail::pread_fd(fd_, position, out);
  }

  Status<IoError> append(ByteSpan data) override {
    auto written = detail::pwrite_fd(fd_, size_, data, nullptr);
    if (!written) return written;
    size_ += static_cast<std::int64_t>(data.size());
    return {};
  }

  Status<IoError> sync() override {
    for (;;) {
      if (::fdatasync(fd_) == 0) return {};
      if (errno != EINTR) return unexpected(detail::last_error());
    }
  }

  Status<IoError> truncate(std::int64_t size) override {
    WEIR_ASSERT(size >= 0);
    for (;;) {
      if (::ftruncate(fd_, static_cast<off_t>(size)) == 0) break;
      if (errno != EINTR) return unexpected(detail::last_error());
    }
    size_ = size;
    return {};
  }

  std::int64_t size() const noexcept override { return size_; }
  int fd() const noexcept override { return fd_; }
  IoResult<std::int64_t> modified_time_ms() const override { return detail::fd_mtime_ms(fd_); }
  Status<IoError> set_modified_time_ms(std::int64_t time_ms) override { return detail::fd_set_mtime_ms(fd_, time_ms); }

 private:
  const int fd_;
  std::int64_t size_;
};

}  // namespace

IoResult<std::shared_ptr<File>> PosixFileSystem::open(const fs::path& path, OpenMode mode) {
  auto fd = detail::open_fd(path, mode);
  if (!fd) return unexpected(fd.error());
  auto size = detail::fd_size(*fd);
  if (!size) {
    ::close(*fd);
    return unexpected(size.error());
  }
  return std::make_shared<PosixFile>(*fd, *size);
}

Status<IoError> PosixFileSystem::rename(const fs::path& from, const fs::path& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) return unexpected(detail::last_error());
  return {};
}

Status<IoError> PosixFileSystem::remove(const fs::path& path) {
  if (::remove(path.c_str()) != 0) return unexpected(detail::last_error());
  return {};
}

Status<IoError> PosixFileSystem::create_directory(const fs::path& path) {
  if (::mkdir(path.c_str(), 0755) == 0) return {};
  const IoError error = detail::last_error();
  struct stat st{};
  if (error.code == EEXIST && ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return {};
  return unexpected(error);
}

IoResult<std::vector<DirEntry>> PosixFileSystem::list(const fs::path& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return unexpected(detail::last_error());
  std::vector<DirEntry> entries;
  for (;;) {
    errno = 0;
    const dirent* e = ::readdir(d);
    if (e == nullptr) break;
    const std::string_view name = e->d_name;
    if (name == "." || name == "..") continue;
    bool is_dir = e->d_type == DT_DIR;
    if (e->d_type == DT_UNKNOWN) {
      struct stat st{};
      is_dir = ::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
    }
    entries.push_back(DirEntry{std::string(name), is_dir});
  }
  const int read_errno = errno;
  ::closedir(d);
  if (read_errno != 0) return unexpected(IoError{read_errno});
  return entries;
}

Status<IoError> PosixFileSystem::sync_directory(const fs::path& dir) { return detail::sync_dir_path(dir); }

IoResult<bool> PosixFileSystem::exists(const fs::path& path) {
  struct stat st{};
  if (::lstat(path.c_str(), &st) == 0) return true;
  if (errno == ENOENT) return false;
  return unexpected(detail::last_error());
}

IoResult<FileIdentity> PosixFileSystem::identity(const fs::path& path) { return detail::path_identity(path); }

namespace {

class PosixFileSystemSync final : public FileSystemSync {
 public:
  explicit PosixFileSystemSync(int fd) noexcept : fd_(fd) {}
  ~PosixFileSystemSync() override { ::close(fd_); }
  Status<IoError> sync() override {
    if (::syncfs(fd_) != 0) return unexpected(detail::last_error());
    return {};
  }

 private:
  const int fd_;
};

}  // namespace

IoResult<std::unique_ptr<FileSystemSync>> PosixFileSystem::open_filesystem_sync(const fs::path& dir) {
  int fd = -1;
  do {
    fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return unexpected(detail::last_error());
  return std::unique_ptr<FileSystemSync>(std::make_unique<PosixFileSystemSync>(fd));
}

PosixFileSystem& PosixFileSystem::instance() noexcept {
  static PosixFileSystem fs;
  return fs;
}

Status<IoError> remove_all(FileSystem& fs, const fs::path& path) {
  auto entries = fs.list(path);
  if (!entries) {
    if (entries.error().code == ENOTDIR) return fs.remove(path);
    if (entries.error().not_found()) return {};
    return unexpected(entries.error());
  }
  for (const DirEntry& e : *entries) {
    auto removed = e.is_directory ? remove_all(fs, path / e.name) : fs.remove(path / e.name);
    if (!removed && !removed.error().not_found()) return removed;
  }
  auto removed = fs.remove(path);
  if (!removed && !removed.error().not_found()) return removed;
  return {};
}

IoResult<std::string> read_file(FileSystem& fs, const fs::path& path, std::size_t max_bytes) {
  auto file = fs.open(path, OpenMode::kRead);
  if (!file) return unexpected(file.error());
  const std::int64_t size = (*file)->size();
  if (size < 0 || static_cast<std::uint64_t>(size) > max_bytes) return unexpected(IoError{EFBIG});
  std::string text(static_cast<std::size_t>(size), '\0');
  auto n = (*file)->pread(0, std::as_writable_bytes(std::span(text)));
  if (!n) return unexpected(n.error());
  text.resize(*n);
  return text;
}

Status<IoError> write_file_atomically(FileSystem& fs, const fs::path& path, std::string_view content) {
  fs::path tmp = path;
  tmp += ".tmp";
  auto write_tmp = [&]() -> Status<IoError> {
    auto file = fs.open(tmp, OpenMode::kCreateTruncate);
    if (!file) return unexpected(file.error());
    if (auto ok = (*file)->append(as_bytes(content)); !ok) return ok;
    return (*file)->sync();
  };
  auto written = write_tmp();
  if (written) written = fs.rename(tmp, path);
  if (!written) {
    (void)fs.remove(tmp);  // best effort: do not leave a partial file holding space
    return written;
  }
  return fs.sync_directory(path.parent_path().empty() ? fs::path(".") : path.parent_path());
}

}  // namespace weir::storage
