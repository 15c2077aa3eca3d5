#include "storage/dir_lock.h"

#include <gtest/gtest.h>

#include <fstream>
#include <optional>

#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"

namespace weir::storage {
namespace {

using testing::TempDir;

// POSIX locks belong to a process, so the second locker has to be another process: a child
// that tries the lock and reports through its exit status (0 locked, 1 refused).
int lock_in_child(const std::filesystem::path& dir) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    auto lock = DirLock::acquire(dir);
    const bool refused_by_holder =
        !lock && lock.error().find("in use by another process") != std::string::npos &&
        lock.error().find((dir / ".lock").string()) != std::string::npos;
    ::_exit(lock ? 0 : (refused_by_holder ? 1 : 2));
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(DirLockTest, SecondProcessIsRefusedWhileTheLockIsHeld) {
  TempDir dir;
  auto lock = DirLock::acquire(dir.path());
  ASSERT_TRUE(lock.has_value()) << lock.error();
  EXPECT_EQ(lock->path(), dir.path() / ".lock");
  EXPECT_EQ(lock_in_child(dir.path()), 1);
}

TEST(DirLockTest, ReleasedLockCanBeTakenAgain) {
  TempDir dir;
  {
    auto lock = DirLock::acquire(dir.path());
    ASSERT_TRUE(lock.has_value()) << lock.error();
  }
  EXPECT_EQ(lock_in_child(dir.path()), 0);
}

TEST(DirLockTest, MovedLockStaysHeldUntilItsLastOwnerGoes) {
  TempDir dir;
  std::optional<DirLock> moved;
  {
    auto lock = DirLock::acquire(dir.path());
    ASSERT_TRUE(lock.has_value());
    moved.emplace(std::move(*lock));
  }  // the moved-from DirLock is destroyed here
  EXPECT_EQ(lock_in_child(dir.path()), 1);
  moved.reset();
  EXPECT_EQ(lock_in_child(dir.path()), 0);
}

TEST(DirLockTest, MissingDirIsCreatedAndLocked) {
  TempDir dir;
  const auto fresh = dir.path() / "a" / "b";
  auto lock = DirLock::acquire(fresh);
  ASSERT_TRUE(lock.has_value()) << lock.error();
  EXPECT_TRUE(std::filesystem::exists(fresh / ".lock"));
}

TEST(DirLockTest, UncreatableDirIsAnErrorNamingIt) {
  TempDir dir;
  const auto file = dir.path() / "plain";
  std::ofstream(file) << "not a directory";
  auto lock = DirLock::acquire(file / "sub");
  ASSERT_FALSE(lock.has_value());
  EXPECT_NE(lock.error().find((file / "sub").string()), std::string::npos) << lock.error();
}

}  // namespace
}  // namespace weir::storage
