#include "storage/flusher.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>

#include "storage/fault_file_system.h"
#include "storage/partition_log.h"
#include "test_util.h"

namespace weir::storage {
namespace {

using testing::make_batch;
using testing::TempDir;

// Holds every sync until released, so a test can pile up requests behind a running cycle.
class SyncGate {
 public:
  void hold() {
    std::unique_lock lock(mutex_);
    ++waiting_;
    changed_.notify_all();
    changed_.wait(lock, [&] { return open_; });
  }
  void wait_until_held() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return waiting_ > 0; });
  }
  void release() {
    std::lock_guard lock(mutex_);
    open_ = true;
    changed_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int waiting_ = 0;
  bool open_ = false;
};

class FlusherTest : public ::testing::Test {
 protected:
  TempDir tmp;
  FaultInjectingFileSystem fs;
  ManualClock clock;
  std::vector<std::unique_ptr<PartitionLog>> logs;

  PartitionLog& make_log(int partition) {
    auto log = PartitionLog::open(fs, tmp.path() / fmt::format("t-{}", partition), LogConfig{}, clock,
                                  {.clean_shutdown = true});
    EXPECT_TRUE(log.has_value());
    logs.push_back(std::move(*log));
    return *logs.back();
  }
  void append(PartitionLog& log) {
    auto batch = make_batch(2, clock.wall_ms());
    ASSERT_TRUE(log.append_as_leader(batch, 0).has_value());
  }
  // n new logs (partitions from..from+n-1), each with one batch appended.
  std::vector<PartitionLog*> appended_logs(int n, int from = 0) {
    std::vector<PartitionLog*> out;
    for (int i = from; i < from + n; ++i) {
      out.push_back(&make_log(i));
      append(*out.back());
    }
    return out;
  }
};

TEST_F(FlusherTest, CallbackRunsAfterTheSyncAndTheLogMarksItDurable) {
  PartitionLog& log = make_log(0);
  append(log);
  Flusher flusher(fs);
  flusher.start();
  const std::int64_t syncs_before = fs.file_syncs();
  std::promise<Status<Errc>> done;
  SyncToken token = log.prepare_sync();
  ASSERT_FALSE(token.empty());
  ASSERT_TRUE(flusher.submit(token, [&](Status<Errc> result) {
    EXPECT_GT(fs.file_syncs(), syncs_before) << "synced before the callback";
    done.set_value(result);
  }));
  ASSERT_TRUE(done.get_future().get().has_value());
  log.mark_synced(token);  // on the owner thread, as the broker does
  EXPECT_EQ(log.recovery_point(), 2);
  EXPECT_GE(fs.directory_syncs(), 1) << "the new segment's directory";
  // Durable now: survives a crash.
  logs.clear();
  fs.crash();
  auto reopened = PartitionLog::open(fs, tmp.path() / "t-0", LogConfig{}, clock, {.recovery_point = 0});
  ASSERT_TRUE(reopened.has_value());
  EXPECT_EQ((*reopened)->log_end_offset(), 2);
}

TEST_F(FlusherTest, RequestsArrivingDuringACycleShareTheNextCycle) {
  PartitionLog& a = make_log(0);
  PartitionLog& b = make_log(1);
  append(a);  // (its first append also writes a's leader-epoch checkpoint, with a sync)
  SyncGate gate;
  std::atomic<bool> gate_armed{true};
  fs.set_sync_hook([&] {
    if (gate_armed.exchange(false)) gate.hold();
  });
  Flusher flusher(fs);
  flusher.start();
  std::atomic<int> completed{0};
  std::promise<void> all_done;
  auto callback = [&](Status<Errc> result) {
    EXPECT_TRUE(result.has_value());
    if (++completed == 4) all_done.set_value();
  };
  ASSERT_TRUE(flusher.submit(a.prepare_sync(), callback));
  gate.wait_until_held();  // cycle 1 is syncing a's file
  append(a);
  append(b);  // syncs b's leader-epoch checkpoint on this thread: the gate is no longer armed
  ASSERT_TRUE(flusher.submit(a.prepare_sync(), callback));
  ASSERT_TRUE(flusher.submit(b.prepare_sync(), callback));
  ASSERT_TRUE(flusher.submit(a.prepare_sync(), callback));  // the same file again: synced once
  gate.release();
  all_done.get_future().wait();
  const Flusher::Stats stats = flusher.stats();
  EXPECT_EQ(stats.cycles, 2);
  EXPECT_EQ(stats.requests, 4);
  EXPECT_EQ(stats.largest_cycle, 3);
  EXPECT_EQ(stats.file_syncs, 1 + 2) << "cycle 2: a's and b's log files, once each";
}

TEST_F(FlusherTest, TheObserverSeesTheWaitForARunningCycleAndEachCyclesDuration) {
  PartitionLog& a = make_log(0);
  append(a);
  SyncGate gate;
  std::atomic<bool> gate_armed{true};
  fs.set_sync_hook([&] {
    if (gate_armed.exchange(false)) gate.hold();
  });
  std::mutex mutex;
  std::vector<std::pair<std::int64_t, std::int64_t>> seen;  // (queued_us, cycle_us), in call order
  Flusher::Options options;
  options.observe = [&](std::int64_t queued_us, std::int64_t cycle_us) {
    std::lock_guard lock(mutex);
    seen.emplace_back(queued_us, cycle_us);
  };
  Flusher flusher(fs, std::move(options));
  flusher.start();
  std::atomic<int> completed{0};
  std::promise<void> all_done;
  auto callback = [&](Status<Errc>) {
    if (++completed == 3) all_done.set_value();
  };
  ASSERT_TRUE(flusher.submit(a.prepare_sync(), callback));
  gate.wait_until_held();  // cycle 1 is syncing
  append(a);
  ASSERT_TRUE(flusher.submit(a.prepare_sync(), callback));
  ASSERT_TRUE(flusher.submit(a.prepare_sync(), callback));
  // Cycle 1 cannot end, and cycle 2 cannot start, before the gate opens: both requests of cycle 2
  // queue for at least this long, and cycle 1 lasts at least this long.
  constexpr std::int64_t kHeldUs = 20'000;
  std::this_thread::sleep_for(std::chrono::microseconds(kHeldUs));
  gate.release();
  all_done.get_future().wait();
  std::lock_guard lock(mutex);
  ASSERT_EQ(seen.size(), 3U);
  EXPECT_GE(seen[0].second, kHeldUs) << "cycle 1 held its sync";
  EXPECT_GE(seen[1].first, kHeldUs) << "queued behind cycle 1";
  EXPECT_GE(seen[2].first, kHeldUs);
  EXPECT_EQ(seen[1].second, seen[2].second) << "one cycle served both";
}

TEST_F(FlusherTest, FailedSyncReportsStorageErrorToItsRequestsOnly) {
  PartitionLog& a = make_log(0);
  append(a);
  Flusher flusher(fs);
  flusher.start();
  fs.fail_syncs(true);
  std::promise<Status<Errc>> done;
  ASSERT_TRUE(flusher.submit(a.prepare_sync(), [&](Status<Errc> r) { done.set_value(r); }));
  auto result = done.get_future().get();
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error(), Errc::kStorageError);
  EXPECT_EQ(a.recovery_point(), 0);
  fs.fail_syncs(false);
  std::promise<Status<Errc>> retried;
  SyncToken token = a.prepare_sync();
  EXPECT_FALSE(token.empty()) << "still dirty: the failed sync did not count";
  ASSERT_TRUE(flusher.submit(token, [&](Status<Errc> r) { retried.set_value(r); }));
  EXPECT_TRUE(retried.get_future().get().has_value());
  EXPECT_EQ(flusher.stats().failed_syncs, 2) << "the file and the directory";
}

TEST_F(FlusherTest, ACycleWithManyFilesSyncsThemInParallel) {
  std::vector<PartitionLog*> many;
  for (int i = 0; i < 12; ++i) {
    many.push_back(&make_log(i));
    append(*many.back());
  }
  PartitionLog& first = make_log(99);
  append(first);
  SyncGate gate;
  std::atomic<bool> gate_armed{true};
  std::atomic<int> in_sync{0};
  std::atomic<int> most_at_once{0};
  fs.set_sync_hook([&] {
    if (gate_armed.exchange(false)) gate.hold();
    const int now = ++in_sync;
    int seen = most_at_once.load();
    while (now > seen && !most_at_once.compare_exchange_weak(seen, now)) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    --in_sync;
  });
  Flusher flusher(fs, Flusher::Options{.sync_threads = 4, .parallel_min_files = 3});
  flusher.start();
  std::promise<void> first_done;
  ASSERT_TRUE(flusher.submit(first.prepare_sync(), [&](Status<Errc> r) {
    EXPECT_TRUE(r.has_value());
    first_done.set_value();
  }));
  gate.wait_until_held();  // cycle 1 runs: the twelve below pile up for cycle 2
  std::atomic<int> completed{0};
  std::promise<void> all_done;
  std::vector<SyncToken> tokens;
  for (PartitionLog* log : many) {
    tokens.push_back(log->prepare_sync());
    ASSERT_TRUE(flusher.submit(tokens.back(), [&](Status<Errc> r) {
      EXPECT_TRUE(r.has_value());
      if (++completed == 12) all_done.set_value();
    }));
  }
  gate.release();
  first_done.get_future().wait();
  all_done.get_future().wait();
  EXPECT_GT(most_at_once.load(), 1) << "syncs of one cycle overlapped";
  EXPECT_LE(most_at_once.load(), 4);
  EXPECT_EQ(flusher.stats().cycles, 2);
  for (std::size_t i = 0; i < many.size(); ++i) {
    many[i]->mark_synced(tokens[i]);
    EXPECT_EQ(many[i]->recovery_point(), 2);
  }
}

TEST_F(FlusherTest, ARestartedFlusherStillSyncsManyFilesInParallel) {
  std::vector<PartitionLog*> many;
  for (int i = 0; i < 6; ++i) {
    many.push_back(&make_log(i));
    append(*many.back());
  }
  Flusher flusher(fs, Flusher::Options{.sync_threads = 4, .parallel_min_files = 3});
  for (int round = 0; round < 2; ++round) {
    flusher.start();
    for (PartitionLog* log : many) append(*log);
    // One request naming every log's files: a cycle with six files, synced by the pool.
    std::vector<SyncToken> tokens;
    for (PartitionLog* log : many) tokens.push_back(log->prepare_sync());
    std::atomic<int> completed{0};
    std::promise<void> done;
    for (const auto& t : tokens) {
      ASSERT_TRUE(flusher.submit(t, [&](Status<Errc> r) {
        EXPECT_TRUE(r.has_value());
        if (++completed == static_cast<int>(tokens.size())) done.set_value();
      }));
    }
    done.get_future().wait();
    for (std::size_t i = 0; i < many.size(); ++i) many[i]->mark_synced(tokens[i]);
    flusher.stop();
  }
  for (PartitionLog* log : many) EXPECT_EQ(log->recovery_point(), log->log_end_offset());
}

// Runs one cycle holding `first` (held at its sync until `many` are queued behind it), then one
// cycle with every log of `many`; returns when all callbacks ran, each expecting success.
void two_cycles(Flusher& flusher, FaultInjectingFileSystem& fs, PartitionLog& first,
                const std::vector<PartitionLog*>& many) {
  SyncGate gate;
  std::atomic<bool> gate_armed{true};
  fs.set_sync_hook([&] {
    if (gate_armed.exchange(false)) gate.hold();
  });
  std::promise<void> first_done;
  ASSERT_TRUE(flusher.submit(first.prepare_sync(), [&](Status<Errc> r) {
    EXPECT_TRUE(r.has_value());
    first_done.set_value();
  }));
  gate.wait_until_held();
  std::atomic<std::size_t> completed{0};
  std::promise<void> all_done;
  std::vector<SyncToken> tokens;
  for (PartitionLog* log : many) {
    tokens.push_back(log->prepare_sync());
    ASSERT_TRUE(flusher.submit(tokens.back(), [&](Status<Errc> r) {
      EXPECT_TRUE(r.has_value());
      if (++completed == many.size()) all_done.set_value();
    }));
  }
  gate.release();
  first_done.get_future().wait();
  all_done.get_future().wait();
  fs.set_sync_hook({});
  for (std::size_t i = 0; i < many.size(); ++i) {
    many[i]->mark_synced(tokens[i]);
    EXPECT_EQ(many[i]->recovery_point(), many[i]->log_end_offset());
  }
}

TEST_F(FlusherTest, ACycleWithManyFilesSyncsTheirFileSystemOnce) {
  const std::vector<PartitionLog*> many = appended_logs(6);
  PartitionLog& first = *appended_logs(1, 99).front();
  std::atomic<int> syncfs_calls{0};
  Flusher flusher(fs, Flusher::Options{.syncfs_dirs = {tmp.path(), tmp.path() / "t-0"},
                                       .syncfs_min_files = 4,
                                       .syncfs = [&](int fd) {
                                         ++syncfs_calls;
                                         return ::syncfs(fd);
                                       }});
  flusher.start();
  const std::int64_t before = fs.file_syncs();  // creating the logs synced files too
  two_cycles(flusher, fs, first, many);
  const std::int64_t per_file = fs.file_syncs() - before;
  EXPECT_GE(per_file, 1) << "the first cycle had one log: synced file by file";
  EXPECT_EQ(syncfs_calls.load(), 1) << "one file system, named twice";
  EXPECT_EQ(flusher.stats().filesystem_syncs, 1);
  EXPECT_EQ(flusher.stats().cycles, 2);
  append(first);
  for (PartitionLog* log : many) append(*log);
  two_cycles(flusher, fs, first, many);
  EXPECT_EQ(syncfs_calls.load(), 2);
  EXPECT_EQ(fs.file_syncs() - before, 2 * per_file) << "only the one-log cycles synced files";
}

TEST_F(FlusherTest, AFailedSyncfsSyncsEachFileAndIsNotUsedAgain) {
  const std::vector<PartitionLog*> many = appended_logs(6);
  PartitionLog& first = *appended_logs(1, 99).front();
  std::atomic<int> syncfs_calls{0};
  Flusher flusher(fs, Flusher::Options{.syncfs_dirs = {tmp.path()},
                                       .syncfs_min_files = 4,
                                       .syncfs = [&](int) {
                                         ++syncfs_calls;
                                         errno = EIO;
                                         return -1;
                                       }});
  flusher.start();
  const std::int64_t before = fs.file_syncs();
  two_cycles(flusher, fs, first, many);
  EXPECT_EQ(syncfs_calls.load(), 1);
  const std::int64_t after_first_round = fs.file_syncs();
  EXPECT_GE(after_first_round - before, 7) << "each log's file, synced after the failed syncfs";
  append(first);
  for (PartitionLog* log : many) append(*log);
  two_cycles(flusher, fs, first, many);
  EXPECT_EQ(syncfs_calls.load(), 1) << "syncfs is not tried again";
  EXPECT_GE(fs.file_syncs() - after_first_round, 7);
  EXPECT_EQ(flusher.stats().failed_syncs, 0) << "every file's own sync succeeded";
}

TEST_F(FlusherTest, QueueIsBoundedAndStopFinishesQueuedRequests) {
  PartitionLog& a = make_log(0);
  append(a);
  SyncGate gate;
  std::atomic<bool> gate_armed{true};
  fs.set_sync_hook([&] {
    if (gate_armed.exchange(false)) gate.hold();
  });
  Flusher flusher(fs, {.max_queued_requests = 2});
  EXPECT_FALSE(flusher.submit(a.prepare_sync(), [](Status<Errc>) {})) << "not started";
  flusher.start();
  std::atomic<int> completed{0};
  auto callback = [&](Status<Errc>) { ++completed; };
  ASSERT_TRUE(flusher.submit(a.prepare_sync(), callback));
  gate.wait_until_held();
  ASSERT_TRUE(flusher.submit(a.prepare_sync(), callback));
  ASSERT_TRUE(flusher.submit(a.prepare_sync(), callback));
  EXPECT_FALSE(flusher.submit(a.prepare_sync(), callback)) << "queue full";
  gate.release();
  flusher.stop();
  EXPECT_EQ(completed.load(), 3);
  EXPECT_FALSE(flusher.submit(a.prepare_sync(), callback)) << "stopped";
  EXPECT_EQ(flusher.stats().rejected, 3);
}

}  // namespace
}  // namespace weir::storage
