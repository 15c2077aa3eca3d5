#include "storage/file_cache.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <future>
#include <string>
#include <vector>

#include "storage/fault_file_system.h"
#include "storage/flusher.h"
#include "storage/log_manager.h"
#include "test_util.h"

namespace weir::storage {
namespace {

using testing::TempDir;

std::string read_all(const File& f) {
  std::string out(static_cast<std::size_t>(f.size()), '\0');
  auto n = f.pread(0, std::as_writable_bytes(std::span(out)));
  EXPECT_TRUE(n.has_value());
  if (n) out.resize(*n);
  return out;
}

// Whether the process has fd open (fcntl F_GETFD succeeds).
bool is_open(int fd) { return fd >= 0 && ::fcntl(fd, F_GETFD) != -1; }

class FileCacheTest : public ::testing::Test {
 protected:
  TempDir tmp;
  FaultInjectingFileSystem base;

  std::shared_ptr<File> create(FileCache& cache, const std::string& name, std::string_view content) {
    auto f = cache.open(tmp.path() / name, OpenMode::kCreateTruncate);
    EXPECT_TRUE(f.has_value());
    EXPECT_TRUE((*f)->append(as_bytes(content)).has_value());
    return *f;
  }
};

TEST_F(FileCacheTest, LeastRecentlyUsedFileIsClosedFirst) {
  auto cache = FileCache::create(base, 2);
  auto a = create(*cache, "a", "aaa");
  auto b = create(*cache, "b", "bbb");
  EXPECT_EQ(cache->stats().open, 2u);
  ASSERT_EQ(read_all(*a), "aaa");  // a is now the most recently used
  auto c = create(*cache, "c", "ccc");
  EXPECT_EQ(cache->stats().open, 2u);
  EXPECT_EQ(cache->stats().evictions, 1u);
  EXPECT_GE(a->fd(), 0);
  EXPECT_EQ(b->fd(), -1);  // b was the least recently used
  EXPECT_GE(c->fd(), 0);
}

TEST_F(FileCacheTest, EvictedFileReopensWithTheSameBytesAndKeepsAppending) {
  auto cache = FileCache::create(base, 1);
  auto a = create(*cache, "a", "first ");
  auto b = create(*cache, "b", "other");
  ASSERT_EQ(a->fd(), -1);
  EXPECT_EQ(a->size(), 6);
  EXPECT_EQ(read_all(*a), "first ");
  ASSERT_TRUE(a->append(as_bytes(std::string_view("second"))).has_value());
  ASSERT_TRUE(a->sync().has_value());
  EXPECT_EQ(read_all(*b), "other");
  EXPECT_EQ(read_all(*a), "first second");
  EXPECT_GE(cache->stats().opens, 4u);  // two creations, then reopens
  EXPECT_EQ(cache->stats().open, 1u);
}

TEST_F(FileCacheTest, ReferencedDescriptorSurvivesEviction) {
  auto cache = FileCache::create(base, 1);
  auto a = create(*cache, "a", "zero-copy bytes");
  auto handle = a->open_handle();
  ASSERT_TRUE(handle.has_value());
  const int fd = (*handle)->fd();
  // The only slot is held by the handle: another file may still be used (past the capacity) ...
  auto b = create(*cache, "b", "b");
  EXPECT_EQ(read_all(*b), "b");
  // ... but a's descriptor stays open and readable, and b's closes once b is idle again.
  EXPECT_TRUE(is_open(fd));
  EXPECT_EQ(a->fd(), fd);
  std::string out(15, '\0');
  ASSERT_EQ(::pread(fd, out.data(), out.size(), 0), 15);
  EXPECT_EQ(out, "zero-copy bytes");
  // A handle that would need one more descriptor than allowed, all of them held, is refused,
  // whether the file is open at the moment (b, just read) or not (c).
  auto b_handle = b->open_handle();
  ASSERT_FALSE(b_handle.has_value());
  EXPECT_EQ(b_handle.error().code, EMFILE);
  auto c = create(*cache, "c", "c");
  auto d = create(*cache, "d", "d");  // closes c, the only idle file
  ASSERT_EQ(c->fd(), -1);
  auto refused = c->open_handle();
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, EMFILE);
  EXPECT_EQ(cache->stats().refused_handles, 2u);
  EXPECT_EQ(read_all(*c), "c");  // a plain read still works
  // Released: the next open evicts down to the capacity and closes a's descriptor.
  handle = unexpected(IoError{0});
  auto e = create(*cache, "e", "e");
  EXPECT_EQ(cache->stats().open, 1u);
  EXPECT_EQ(a->fd(), -1);
  EXPECT_EQ(read_all(*a), "zero-copy bytes");
}

// A Fetch over many partitions reads each partition's file (which opens it, past the capacity
// if need be) and then asks for a handle to send it from: the handles held at once stay within
// the capacity, so descriptors do not grow with the partitions of one response.
TEST_F(FileCacheTest, HandlesOfFilesJustReadStayWithinTheCapacity) {
  auto cache = FileCache::create(base, 4);
  std::vector<std::shared_ptr<File>> files;
  for (int i = 0; i < 20; ++i) files.push_back(create(*cache, "f" + std::to_string(i), "bytes"));
  std::vector<std::shared_ptr<const File>> handles;
  int refused = 0;
  for (auto& f : files) {
    ASSERT_EQ(read_all(*f), "bytes");
    auto h = f->open_handle();
    if (h) {
      handles.push_back(std::move(*h));
    } else {
      EXPECT_EQ(h.error().code, EMFILE);
      ++refused;
    }
    EXPECT_LE(cache->stats().open, 5u);  // the capacity, and the one being read
  }
  EXPECT_EQ(handles.size(), 4u);
  EXPECT_EQ(refused, 16);
  handles.clear();
  for (auto& f : files) EXPECT_EQ(read_all(*f), "bytes");
  EXPECT_LE(cache->stats().open, 4u);
}

TEST_F(FileCacheTest, HandleKeepsTheFileReadableAfterTheFileIsGone) {
  auto cache = FileCache::create(base, 4);
  auto a = create(*cache, "a", "still here");
  auto handle = a->open_handle();
  ASSERT_TRUE(handle.has_value());
  ASSERT_TRUE(cache->remove(tmp.path() / "a").has_value());
  a.reset();
  std::string out(10, '\0');
  auto n = (*handle)->pread(0, std::as_writable_bytes(std::span(out)));
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(out, "still here");
}

TEST_F(FileCacheTest, RenamedFilesReopenUnderTheirNewNames) {
  auto cache = FileCache::create(base, 1);
  ASSERT_TRUE(cache->create_directory(tmp.path() / "dir").has_value());
  auto a = create(*cache, "dir/a.log", "in a dir");
  auto b = create(*cache, "b.log", "renamed file");
  ASSERT_EQ(a->fd(), -1);
  ASSERT_TRUE(cache->rename(tmp.path() / "dir", tmp.path() / "dir.moved").has_value());
  ASSERT_TRUE(cache->rename(tmp.path() / "b.log", tmp.path() / "b.log.deleted").has_value());
  EXPECT_EQ(read_all(*a), "in a dir");  // evicted b
  EXPECT_EQ(read_all(*b), "renamed file");
  EXPECT_TRUE(std::filesystem::exists(tmp.path() / "dir.moved" / "a.log"));
  // A removed file that was closed cannot come back.
  ASSERT_TRUE(cache->remove(tmp.path() / "dir.moved" / "a.log").has_value());
  ASSERT_EQ(a->fd(), -1);
  std::string one(1, ' ');
  auto n = a->pread(0, std::as_writable_bytes(std::span(one)));
  ASSERT_FALSE(n.has_value());
  EXPECT_TRUE(n.error().not_found());
}

TEST_F(FileCacheTest, FilesKeepTheirPathsThroughNestedDirectoryRenamesAndReplacements) {
  auto cache = FileCache::create(base, 1);  // every other use reopens a file by its path
  for (const char* d : {"p", "p/sub", "x", "y"}) ASSERT_TRUE(cache->create_directory(tmp.path() / d).has_value());
  auto top = create(*cache, "p/top", "top");
  auto deep = create(*cache, "p/sub/deep", "deep");
  // Registered unopened, the three at once (a segment restored from the log dir's summary); the
  // recorded sizes cut what was appended since.
  for (const char* name : {"a.log", "a.index", "a.timeindex"}) {
    (void)create(*cache, std::string("p/sub/") + name, std::string(name) + "+tail");
  }
  const std::array<FileSystem::KnownFile, 3> known{{{"a.log", OpenMode::kReadWrite, 5},
                                                    {"a.index", OpenMode::kReadWrite, 7},
                                                    {"a.timeindex", OpenMode::kReadWrite, 11}}};
  auto restored = cache->open_known_in(tmp.path() / "p" / "sub", known);
  ASSERT_TRUE(restored.has_value());
  ASSERT_EQ(restored->size(), 3u);
  ASSERT_TRUE(cache->rename(tmp.path() / "p", tmp.path() / "p2").has_value());
  EXPECT_EQ(read_all(*top), "top");
  EXPECT_EQ(read_all(*deep), "deep");
  EXPECT_EQ(read_all(*(*restored)[0]), "a.log");
  EXPECT_EQ(read_all(*(*restored)[1]), "a.index");
  EXPECT_EQ(read_all(*(*restored)[2]), "a.timeindex");
  // A file renamed over a live one: the one replaced cannot reopen, the renamed one reads.
  ASSERT_TRUE(cache->rename(tmp.path() / "p2" / "top", tmp.path() / "p2" / "sub" / "deep").has_value());
  EXPECT_EQ(read_all(*top), "top");
  std::string one(1, ' ');
  auto gone = deep->pread(0, std::as_writable_bytes(std::span(one)));
  ASSERT_FALSE(gone.has_value());
  EXPECT_TRUE(gone.error().not_found());
  // A directory renamed onto the path of one that was emptied and removed while a file of it
  // lives on: both files share the directory's entry, each with its own fate.
  auto old = create(*cache, "x/f", "old");
  auto fresh = create(*cache, "y/f", "fresh");
  ASSERT_TRUE(cache->remove(tmp.path() / "x" / "f").has_value());
  ASSERT_TRUE(cache->remove(tmp.path() / "x").has_value());
  ASSERT_TRUE(cache->rename(tmp.path() / "y", tmp.path() / "x").has_value());
  EXPECT_EQ(read_all(*top), "top");  // closes fresh
  EXPECT_EQ(read_all(*fresh), "fresh");
  ASSERT_EQ(old->fd(), -1);
  auto removed = old->pread(0, std::as_writable_bytes(std::span(one)));
  ASSERT_FALSE(removed.has_value());
  EXPECT_TRUE(removed.error().not_found());
  // The same one level down: a directory whose subdirectory's entry is still there (an unlinked
  // file of it lives on) is replaced by one with a subdirectory of the same name.
  for (const char* d : {"m", "m/s", "n", "n/s"}) ASSERT_TRUE(cache->create_directory(tmp.path() / d).has_value());
  auto older = create(*cache, "m/s/f", "older");
  auto newer = create(*cache, "n/s/f", "newer");
  ASSERT_TRUE(cache->remove(tmp.path() / "m" / "s" / "f").has_value());
  ASSERT_TRUE(cache->remove(tmp.path() / "m" / "s").has_value());
  ASSERT_TRUE(cache->remove(tmp.path() / "m").has_value());
  ASSERT_TRUE(cache->rename(tmp.path() / "n", tmp.path() / "m").has_value());
  EXPECT_EQ(read_all(*top), "top");  // closes newer
  EXPECT_EQ(read_all(*newer), "newer");
  ASSERT_EQ(older->fd(), -1);
  auto replaced = older->pread(0, std::as_writable_bytes(std::span(one)));
  ASSERT_FALSE(replaced.has_value());
  EXPECT_TRUE(replaced.error().not_found());
  // A failure names the file's current path.
  ASSERT_TRUE(cache->rename(tmp.path() / "x", tmp.path() / "z").has_value());
  std::filesystem::remove(tmp.path() / "z" / "f");
  EXPECT_EQ(read_all(*top), "top");  // closes fresh
  FileCache::clear_last_failure();
  ASSERT_FALSE(fresh->pread(0, std::as_writable_bytes(std::span(one))).has_value());
  auto failure = FileCache::take_last_failure();
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->path, tmp.path() / "z" / "f");
}

TEST_F(FileCacheTest, BytesOfAFailedAppendAreCutOffOnReopen) {
  auto cache = FileCache::create(base, 1);
  auto a = create(*cache, "a", "kept");
  base.set_free_bytes(2);
  ASSERT_FALSE(a->append(as_bytes(std::string_view("lost bytes"))).has_value());  // "lo" reach the file
  base.set_free_bytes(std::nullopt);
  EXPECT_EQ(a->size(), 4);
  auto b = create(*cache, "b", "b");  // evicts a
  ASSERT_EQ(a->fd(), -1);
  ASSERT_TRUE(a->append(as_bytes(std::string_view("+more"))).has_value());
  EXPECT_EQ(read_all(*a), "kept+more");
  EXPECT_EQ(std::filesystem::file_size(tmp.path() / "a"), 9u);
}

TEST_F(FileCacheTest, FailureIsRememberedWithItsPathAndErrno) {
  auto cache = FileCache::create(base, 4);
  FileCache::clear_last_failure();
  // Created in a directory that does not exist.
  auto missing = cache->open(tmp.path() / "no" / "such", OpenMode::kCreate);
  ASSERT_FALSE(missing.has_value());
  auto failure = FileCache::take_last_failure();
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->op, "open");
  EXPECT_EQ(failure->path, tmp.path() / "no" / "such");
  EXPECT_EQ(failure->error.code, ENOENT);
  EXPECT_FALSE(FileCache::take_last_failure().has_value());
  EXPECT_EQ(cache->stats().failures, 1u);
}

TEST(DiskFailure, EveryErrnoButAbsenceDescriptorsAndRetriesIsADiskFailure) {
  for (int code : {EIO, ENOSPC, EDQUOT, EROFS, EACCES, ENOTDIR, EBADF}) {
    EXPECT_TRUE(is_disk_failure(IoError{code})) << code;
  }
  for (int code : {0, ENOENT, EMFILE, ENFILE, EINTR, EAGAIN}) {
    EXPECT_FALSE(is_disk_failure(IoError{code})) << code;
  }
}

// The observer hears of a full disk and a failing sync (each with its operation, path and
// errno), not of a missing file, and the failed operation still returns its error.
TEST_F(FileCacheTest, DiskFailuresReachTheObserver) {
  std::vector<IoFailure> seen;
  auto cache = FileCache::create(base, 4, [&seen](const IoFailure& f) { seen.push_back(f); });
  auto a = create(*cache, "a", "kept");
  ASSERT_FALSE(cache->open(tmp.path() / "no" / "such", OpenMode::kCreate).has_value());  // ENOENT
  EXPECT_TRUE(seen.empty());

  base.set_free_bytes(0);
  auto appended = a->append(as_bytes(std::string_view("more")));
  ASSERT_FALSE(appended.has_value());
  EXPECT_TRUE(appended.error().no_space());
  base.set_free_bytes(std::nullopt);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].op, "append");
  EXPECT_EQ(seen[0].path, tmp.path() / "a");
  EXPECT_EQ(seen[0].error.code, ENOSPC);

  base.fail_syncs(true);
  ASSERT_FALSE(a->sync().has_value());
  base.fail_syncs(false);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[1].op, "sync");
  EXPECT_EQ(seen[1].error.code, EIO);
  EXPECT_EQ(cache->stats().failures, 3u);
}

// A LogManager passes its observer to the cache its logs' files go through.
TEST_F(FileCacheTest, LogManagerReportsItsLogsDiskFailures) {
  ManualClock clock;
  std::vector<IoFailure> seen;
  LogManagerOptions options;
  options.on_disk_failure = [&seen](const IoFailure& f) { seen.push_back(f); };
  auto lm = LogManager::open(base, tmp.path() / "logs", clock, options);
  ASSERT_TRUE(lm.has_value());
  base.set_free_bytes(0);
  auto created = (*lm)->create(TopicPartition{"t", 0}, Uuid(1, 2), LogConfig{});
  base.set_free_bytes(std::nullopt);
  EXPECT_FALSE(created.has_value());
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.front().error.code, ENOSPC);
  EXPECT_EQ(seen.front().path.parent_path().filename(), "t-0");
}

// The broker's Flusher syncs directories through the LogManager's cache (file_cache()), so a
// failed directory sync reaches the observer as a failed file sync does.
TEST_F(FileCacheTest, DirectorySyncsThroughTheLogManagersCacheReachTheObserver) {
  ManualClock clock;
  std::vector<IoFailure> seen;
  LogManagerOptions options;
  options.on_disk_failure = [&seen](const IoFailure& f) { seen.push_back(f); };
  auto lm = LogManager::open(base, tmp.path() / "logs", clock, options);
  ASSERT_TRUE(lm.has_value());
  ASSERT_TRUE((*lm)->create(TopicPartition{"t", 0}, Uuid(1, 2), LogConfig{}).has_value());
  auto cache = (*lm)->file_cache();
  ASSERT_NE(cache, nullptr);
  Flusher flusher(*cache);
  flusher.start();
  SyncToken token;
  token.directories.push_back(tmp.path() / "logs" / "t-0");
  std::promise<bool> done;
  base.fail_syncs(true);
  ASSERT_TRUE(flusher.submit(std::move(token), [&done](Status<Errc> s) { done.set_value(s.has_value()); }));
  EXPECT_FALSE(done.get_future().get());
  base.fail_syncs(false);
  flusher.stop();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].op, "sync_directory");
  EXPECT_EQ(seen[0].error.code, EIO);
  EXPECT_EQ(seen[0].path.filename(), "t-0");
}

// Opening a file that does not exist as an existing one is an answer (a new directory's
// checkpoints), not an I/O failure: nothing is counted, remembered or logged.
TEST_F(FileCacheTest, MissingFileOpenedAsExistingIsNotAFailure) {
  auto cache = FileCache::create(base, 4);
  FileCache::clear_last_failure();
  for (auto mode : {OpenMode::kRead, OpenMode::kReadWrite}) {
    auto missing = cache->open(tmp.path() / "absent", mode);
    ASSERT_FALSE(missing.has_value());
    EXPECT_TRUE(missing.error().not_found());
  }
  EXPECT_FALSE(FileCache::take_last_failure().has_value());
  EXPECT_EQ(cache->stats().failures, 0u);
}

// Partition logs through the cache: many more files than descriptors, and every byte comes back
// after evictions and a reopen of the whole directory.
TEST_F(FileCacheTest, ManyPartitionsShareFewDescriptors) {
  ManualClock clock;
  LogManagerOptions options;
  options.max_open_files = 8;
  const Uuid id(1, 2);
  constexpr int kPartitions = 40;
  {
    auto manager = LogManager::open(base, tmp.path() / "data", clock, options);
    ASSERT_TRUE(manager.has_value());
    for (int p = 0; p < kPartitions; ++p) {
      auto log = (*manager)->create({"t", p}, id, LogConfig{});
      ASSERT_TRUE(log.has_value()) << p;
      auto batch = testing::make_batch(p + 1, clock.wall_ms());
      ASSERT_TRUE((*log)->append_as_leader(batch, 0).has_value()) << p;
      EXPECT_LE((*manager)->file_stats().open, options.max_open_files);
    }
    for (int p = 0; p < kPartitions; ++p) {
      auto read = (*manager)->get({"t", p})->read(0, 1 << 20, std::numeric_limits<std::int64_t>::max(), true);
      ASSERT_TRUE(read.has_value());
      std::vector<std::uint8_t> bytes;
      ASSERT_TRUE(read->append_to(bytes).has_value());
      auto batches = testing::split(bytes);
      ASSERT_EQ(batches.size(), 1u);
      EXPECT_EQ(batches[0].last_offset, p);
    }
    EXPECT_GT((*manager)->file_stats().evictions, 0u);
    ASSERT_TRUE((*manager)->close().has_value());
  }
  auto manager = LogManager::open(base, tmp.path() / "data", clock, options);
  ASSERT_TRUE(manager.has_value());
  EXPECT_LE((*manager)->file_stats().open, options.max_open_files);
  for (int p = 0; p < kPartitions; ++p) EXPECT_EQ((*manager)->get({"t", p})->log_end_offset(), p + 1);
}

TEST(FileCacheDefaults, CapacityIsThreeEighthsOfTheSoftDescriptorLimit) {
  struct rlimit limit{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &limit), 0);
  if (limit.rlim_cur == RLIM_INFINITY) {
    EXPECT_EQ(FileCache::default_capacity(), std::size_t{1} << 20);
  } else {
    EXPECT_EQ(FileCache::default_capacity(),
              std::max<std::size_t>(FileCache::kMinCapacity, static_cast<std::size_t>(limit.rlim_cur / 8 * 3)));
  }
}

}  // namespace
}  // namespace weir::storage
