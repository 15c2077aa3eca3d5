#include "storage/dir_lock.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <system_error>
#include <utility>

#include <fcntl.h>
#include <unistd.h>

namespace weir::storage {

Result<DirLock, std::string> DirLock::acquire(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return std::unexpected(fmt::format("cannot create log dir {}: {}", dir.string(), ec.message()));
  std::filesystem::path path = dir / ".lock";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return std::unexpected(fmt::format("cannot open lock file {}: {}", path.string(), std::strerror(errno)));
  struct flock whole{};
  whole.l_type = F_WRLCK;
  whole.l_whence = SEEK_SET;  // l_start = 0, l_len = 0: the whole file
  if (::fcntl(fd, F_SETLK, &whole) == 0) return DirLock(std::move(path), fd);
  const int err = errno;
  std::string holder;
  if (err == EACCES || err == EAGAIN) {
    struct flock probe{};
    probe.l_type = F_WRLCK;
    probe.l_whence = SEEK_SET;
    if (::fcntl(fd, F_GETLK, &probe) == 0 && probe.l_type != F_UNLCK) holder = fmt::format(" (pid {})", probe.l_pid);
  }
  ::close(fd);
  if (err == EACCES || err == EAGAIN) {
    return std::unexpected(fmt::format(
        "log dir {} is in use by another process{}: cannot lock {}; is another broker running on it?", dir.string(),
        holder, path.string()));
  }
  return std::unexpected(fmt::format("cannot lock {}: {}", path.string(), std::strerror(err)));
}

DirLock::DirLock(DirLock&& other) noexcept : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)) {}

DirLock& DirLock::operator=(DirLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

DirLock::~DirLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor releases the lock
}

}  // namespace weir::storage
