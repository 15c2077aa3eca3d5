#include "storage/file.h"

#include <gtest/gtest.h>

#include <cerrno>

#include "storage/fault_file_system.h"
#include "test_util.h"

namespace weir::storage {
namespace {

using testing::TempDir;

std::string read_all_text(FileSystem& fs, const std::filesystem::path& p) {
  auto text = read_file(fs, p, 1 << 20);
  EXPECT_TRUE(text.has_value());
  return text ? *text : std::string();
}

TEST(PosixFileSystemTest, AppendReadTruncateAndRename) {
  TempDir dir;
  PosixFileSystem fs;
  auto file = fs.open(dir.path() / "a", OpenMode::kCreate);
  ASSERT_TRUE(file.has_value());
  ASSERT_TRUE((*file)->append(as_bytes("hello ")).has_value());
  ASSERT_TRUE((*file)->append(as_bytes("world")).has_value());
  EXPECT_EQ((*file)->size(), 11);
  ASSERT_TRUE((*file)->sync().has_value());
  std::byte buf[32];
  auto n = (*file)->pread(6, buf);
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(as_string_view(ByteSpan(buf, *n)), "world");
  ASSERT_TRUE((*file)->truncate(5).has_value());
  EXPECT_EQ((*file)->size(), 5);
  ASSERT_TRUE(fs.rename(dir.path() / "a", dir.path() / "b").has_value());
  EXPECT_EQ(read_all_text(fs, dir.path() / "b"), "hello");
  EXPECT_FALSE(*fs.exists(dir.path() / "a"));
}

TEST(PosixFileSystemTest, OpenModes) {
  TempDir dir;
  PosixFileSystem fs;
  auto missing = fs.open(dir.path() / "none", OpenMode::kReadWrite);
  ASSERT_FALSE(missing.has_value());
  EXPECT_TRUE(missing.error().not_found());
  ASSERT_TRUE(write_file_atomically(fs, dir.path() / "f", "abc").has_value());
  auto kept = fs.open(dir.path() / "f", OpenMode::kCreate);
  ASSERT_TRUE(kept.has_value());
  EXPECT_EQ((*kept)->size(), 3);
  auto emptied = fs.open(dir.path() / "f", OpenMode::kCreateTruncate);
  ASSERT_TRUE(emptied.has_value());
  EXPECT_EQ((*emptied)->size(), 0);
}

TEST(PosixFileSystemTest, ListAndRemoveAll) {
  TempDir dir;
  PosixFileSystem fs;
  ASSERT_TRUE(fs.create_directory(dir.path() / "d").has_value());
  ASSERT_TRUE(fs.create_directory(dir.path() / "d").has_value()) << "creating an existing directory is fine";
  ASSERT_TRUE(fs.create_directory(dir.path() / "d" / "e").has_value());
  ASSERT_TRUE(write_file_atomically(fs, dir.path() / "d" / "e" / "x", "1").has_value());
  ASSERT_TRUE(write_file_atomically(fs, dir.path() / "d" / "y", "2").has_value());
  auto entries = fs.list(dir.path() / "d");
  ASSERT_TRUE(entries.has_value());
  ASSERT_EQ(entries->size(), 2u);
  int dirs = 0;
  for (const auto& e : *entries) dirs += e.is_directory ? 1 : 0;
  EXPECT_EQ(dirs, 1);
  ASSERT_TRUE(remove_all(fs, dir.path() / "d").has_value());
  EXPECT_FALSE(*fs.exists(dir.path() / "d"));
}

TEST(PosixFileSystemTest, WriteFileAtomicallyReplacesAndLeavesNoTemporary) {
  TempDir dir;
  PosixFileSystem fs;
  ASSERT_TRUE(write_file_atomically(fs, dir.path() / "cp", "one").has_value());
  ASSERT_TRUE(write_file_atomically(fs, dir.path() / "cp", "two").has_value());
  EXPECT_EQ(read_all_text(fs, dir.path() / "cp"), "two");
  EXPECT_FALSE(*fs.exists(dir.path() / "cp.tmp"));
}

TEST(PosixFileSystemTest, ReadFileRefusesLargerThanLimit) {
  TempDir dir;
  PosixFileSystem fs;
  ASSERT_TRUE(write_file_atomically(fs, dir.path() / "big", std::string(100, 'x')).has_value());
  auto text = read_file(fs, dir.path() / "big", 99);
  ASSERT_FALSE(text.has_value());
  EXPECT_EQ(text.error().code, EFBIG);
}

class FaultFileSystemTest : public ::testing::Test {
 protected:
  TempDir dir;
  FaultInjectingFileSystem fs;
  std::filesystem::path path(const char* name) const { return dir.path() / name; }

  void write_synced_dir_file(const char* name, std::string_view synced, std::string_view unsynced) {
    auto file = fs.open(path(name), OpenMode::kCreate);
    ASSERT_TRUE(file.has_value());
    ASSERT_TRUE(fs.sync_directory(dir.path()).has_value());
    ASSERT_TRUE((*file)->append(as_bytes(synced)).has_value());
    ASSERT_TRUE((*file)->sync().has_value());
    if (!unsynced.empty()) {
      ASSERT_TRUE((*file)->append(as_bytes(unsynced)).has_value());
    }
  }
};

TEST_F(FaultFileSystemTest, CrashDropsUnsyncedBytes) {
  write_synced_dir_file("f", "durable", "-lost");
  fs.crash();
  EXPECT_EQ(read_all_text(fs, path("f")), "durable");
}

TEST_F(FaultFileSystemTest, CrashTearsTheLastWrite) {
  write_synced_dir_file("f", "durable", "0123456789");
  fs.crash(CrashMode::kTearLastWrite);
  EXPECT_EQ(read_all_text(fs, path("f")), "durable01234");
}

TEST_F(FaultFileSystemTest, FileCreatedWithoutDirectorySyncIsLostInACrash) {
  auto file = fs.open(path("new"), OpenMode::kCreate);
  ASSERT_TRUE(file.has_value());
  ASSERT_TRUE((*file)->append(as_bytes("data")).has_value());
  ASSERT_TRUE((*file)->sync().has_value());
  file->reset();
  fs.crash();
  EXPECT_FALSE(*fs.exists(path("new")));
}

TEST_F(FaultFileSystemTest, DirectoryCreatedWithoutParentSyncIsLostInACrash) {
  ASSERT_TRUE(fs.create_directory(path("d")).has_value());
  ASSERT_TRUE(write_file_atomically(fs, path("d") / "x", "1").has_value());
  fs.crash();
  EXPECT_FALSE(*fs.exists(path("d")));
}

TEST_F(FaultFileSystemTest, AtomicWriteSurvivesACrash) {
  ASSERT_TRUE(write_file_atomically(fs, path("cp"), "one").has_value());
  ASSERT_TRUE(write_file_atomically(fs, path("cp"), "two").has_value());
  fs.crash();
  EXPECT_EQ(read_all_text(fs, path("cp")), "two");
}

TEST_F(FaultFileSystemTest, FailingSyncMakesNothingDurable) {
  write_synced_dir_file("f", "durable", "");
  auto file = fs.open(path("f"), OpenMode::kReadWrite);
  ASSERT_TRUE(file.has_value());
  ASSERT_TRUE((*file)->append(as_bytes("-more")).has_value());
  fs.fail_syncs(true);
  auto synced = (*file)->sync();
  ASSERT_FALSE(synced.has_value());
  EXPECT_EQ(synced.error().code, EIO);
  EXPECT_FALSE(fs.sync_directory(dir.path()).has_value());
  file->reset();
  fs.crash();
  EXPECT_EQ(read_all_text(fs, path("f")), "durable");
}

TEST_F(FaultFileSystemTest, FullDiskWritesWhatFitsAndFailsWithEnospc) {
  write_synced_dir_file("f", "", "");
  auto file = fs.open(path("f"), OpenMode::kReadWrite);
  ASSERT_TRUE(file.has_value());
  fs.set_free_bytes(4);
  auto appended = (*file)->append(as_bytes("abcdefgh"));
  ASSERT_FALSE(appended.has_value());
  EXPECT_TRUE(appended.error().no_space());
  EXPECT_EQ((*file)->size(), 0) << "a failed append does not count";
  // The next append overwrites the partial bytes.
  ASSERT_TRUE((*file)->append(as_bytes("wxyz")).has_value());
  EXPECT_FALSE((*file)->append(as_bytes("!")).has_value());
  ASSERT_TRUE((*file)->truncate(2).has_value()) << "shrinking frees space";
  ASSERT_TRUE((*file)->append(as_bytes("12")).has_value());
  fs.set_free_bytes(std::nullopt);
  ASSERT_TRUE((*file)->append(as_bytes("more")).has_value());
  EXPECT_EQ(read_all_text(fs, path("f")), "wx12more");
}

TEST_F(FaultFileSystemTest, SyncHookRunsOnEverySync) {
  write_synced_dir_file("f", "x", "");
  int calls = 0;
  fs.set_sync_hook([&] { ++calls; });
  auto file = fs.open(path("f"), OpenMode::kReadWrite);
  ASSERT_TRUE((*file)->sync().has_value());
  EXPECT_EQ(calls, 1);
  EXPECT_GE(fs.file_syncs(), 2);
}

}  // namespace
}  // namespace weir::storage
