// DirLock: one process at a time per data directory.
//
// A POSIX record lock (fcntl F_SETLK, whole file, exclusive) on `<dir>/.lock`, the file and the
// kind of lock Apache Kafka takes (FileChannel.tryLock is fcntl on Linux), so two weir
// processes, or a weir and a Kafka, refuse to share a log dir. The lock lives as long as the
// DirLock (the kernel drops it if the process dies, kill -9 included). POSIX locks belong to the
// process: a second DirLock on the same dir inside one process is not refused, and closing any
// other descriptor of `.lock` in this process would release it, so nothing else opens the file.
//
// The directory is created if missing (a fresh log dir is locked before anything is written).
#pragma once

#include <filesystem>
#include <string>

#include "base/result.h"

namespace weir::storage {

class DirLock {
 public:
  // Locks `dir`. The error message names the lock file and says why: another process holds it
  // (with its pid when the kernel reports one), or the errno text of what failed.
  [[nodiscard]] static Result<DirLock, std::string> acquire(const std::filesystem::path& dir);

  DirLock(DirLock&& other) noexcept;
  DirLock& operator=(DirLock&& other) noexcept;
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;
  ~DirLock();

  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }

 private:
  DirLock(std::filesystem::path path, int fd) noexcept : path_(std::move(path)), fd_(fd) {}

  std::filesystem::path path_;
  int fd_ = -1;
};

}  // namespace weir::storage
