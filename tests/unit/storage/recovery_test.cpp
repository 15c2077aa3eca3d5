// Recovery after crashes and disk faults, driven by the fault-injecting file system.
#include <gtest/gtest.h>

#include <random>

#include "storage/fault_file_system.h"
#include "storage/partition_log.h"
#include "test_util.h"

namespace weir::storage {
namespace {

using testing::file_bytes;
using testing::make_batch;
using testing::read_all;
using testing::TempDir;

class RecoveryTest : public ::testing::Test {
 protected:
  TempDir tmp;
  FaultInjectingFileSystem fs;
  ManualClock clock;
  LogConfig config;
  std::unique_ptr<PartitionLog> log;

  std::filesystem::path dir() const { return tmp.path() / "events-0"; }
  std::filesystem::path file(std::int64_t base, std::string_view suffix) const {
    return dir() / Segment::file_name(base, suffix);
  }

  void SetUp() override { open({.clean_shutdown = true}); }

  void open(RecoveryHint hint) {
    log.reset();
    auto opened = PartitionLog::open(fs, dir(), config, clock, hint);
    ASSERT_TRUE(opened.has_value()) << opened.error();
    log = std::move(*opened);
  }

  // The process dies (nothing more is written), the machine loses power, and the log restarts
  // from the recovery point a checkpoint would have recorded.
  void crash_and_reopen(CrashMode mode = CrashMode::kDropUnsynced, std::optional<std::int64_t> recovery_point = {}) {
    const std::int64_t checkpointed = recovery_point.value_or(log->recovery_point());
    log.reset();
    fs.crash(mode);
    open({.clean_shutdown = false, .recovery_point = checkpointed});
  }

  void close_and_reopen_clean() {
    ASSERT_TRUE(log->close().has_value());
    const std::int64_t leo = log->log_end_offset();
    log.reset();
    open({.clean_shutdown = true, .recovery_point = leo});
  }

  // Appends and makes durable the way the broker does for acks=all.
  AppendInfo append_durably(int records, std::size_t value_bytes = 16) {
    AppendInfo info = append(records, value_bytes);
    SyncToken token = log->prepare_sync();
    for (auto& f : token.files) EXPECT_TRUE(f.file->sync().has_value());
    for (auto& d : token.directories) EXPECT_TRUE(fs.sync_directory(d).has_value());
    log->mark_synced(token);
    return info;
  }

  AppendInfo append(int records, std::size_t value_bytes = 16, std::int32_t epoch = 0) {
    auto batch = make_batch(records, clock.wall_ms(), value_bytes);
    auto info = log->append_as_leader(batch, epoch);
    EXPECT_TRUE(info.has_value()) << info.error();
    return info.value_or(AppendInfo{});
  }
};

TEST_F(RecoveryTest, UnsyncedAppendsAreLostSyncedOnesSurvive) {
  append_durably(3);
  append(2);
  crash_and_reopen();
  EXPECT_EQ(log->log_end_offset(), 3);
  EXPECT_EQ(read_all(*log).size(), 1u);
  EXPECT_EQ(append(1).first_offset, 3);
}

TEST_F(RecoveryTest, TruncatedTailIsDroppedOnRecovery) {
  const AppendInfo first = append_durably(3);
  const std::int64_t durable_size = log->size_bytes();
  append(4, 200);
  crash_and_reopen(CrashMode::kTearLastWrite);
  EXPECT_EQ(log->log_end_offset(), first.last_offset + 1);
  EXPECT_EQ(log->size_bytes(), durable_size);
  EXPECT_EQ(static_cast<std::int64_t>(file_bytes(file(0, ".log")).size()), durable_size) << "cut on disk too";
  EXPECT_EQ(append(1).first_offset, 3);
}

TEST_F(RecoveryTest, CorruptedCrcMidSegmentTruncatesTheLogThere) {
  config.segment_bytes = 3000;
  log->set_config(config);
  for (int i = 0; i < 20; ++i) append(2, 200);  // several segments
  ASSERT_GT(log->segment_count(), 2u);
  const auto batches = read_all(*log);
  const std::int64_t batch_size = static_cast<std::int64_t>(batches[0].bytes.size());
  const std::int64_t segments_before = static_cast<std::int64_t>(log->segment_count());
  ASSERT_TRUE(log->close().has_value());
  log.reset();
  // Flip a byte inside the third batch of the first segment (in its records, under the CRC).
  testing::write_bytes_at(file(0, ".log"), 2 * batch_size + 70, as_bytes("X"));
  open({.clean_shutdown = false, .recovery_point = 0});
  EXPECT_EQ(log->log_end_offset(), 4);
  EXPECT_EQ(log->segment_count(), 1u);
  EXPECT_EQ(read_all(*log).size(), 2u);
  int log_files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir())) log_files += e.path().extension() == ".log";
  EXPECT_EQ(log_files, 1) << "the " << segments_before - 1 << " later segments are gone";
  EXPECT_EQ(static_cast<std::int64_t>(file_bytes(file(0, ".log")).size()), 2 * batch_size);
}

TEST_F(RecoveryTest, CleanRestartDoesNotRescanButUncleanRestartDoes) {
  for (int i = 0; i < 4; ++i) append(2);
  ASSERT_TRUE(log->roll().has_value());
  append(2);
  const auto batch_size = static_cast<std::int64_t>(read_all(*log)[0].bytes.size());
  ASSERT_TRUE(log->close().has_value());
  log.reset();
  testing::write_bytes_at(file(0, ".log"), batch_size + 70, as_bytes("X"));

  open({.clean_shutdown = true, .recovery_point = 10});
  EXPECT_EQ(log->log_end_offset(), 10) << "after a clean shutdown nothing before the tail is read";
  log.reset();

  open({.clean_shutdown = false, .recovery_point = 10});
  EXPECT_EQ(log->log_end_offset(), 10) << "the damage is below the recovery point";
  log.reset();

  open({.clean_shutdown = false, .recovery_point = 0});
  EXPECT_EQ(log->log_end_offset(), 2) << "scanned from the recovery point, cut at the bad batch";
  EXPECT_EQ(log->segment_count(), 1u);
}

TEST_F(RecoveryTest, CleanShutdownWithADamagedTailFallsBackToRecovery) {
  append(3);
  close_and_reopen_clean();
  ASSERT_TRUE(log->close().has_value());
  log.reset();
  const auto size = static_cast<std::int64_t>(file_bytes(file(0, ".log")).size());
  testing::write_bytes_at(file(0, ".log"), size, as_bytes("garbage after the last batch"));
  open({.clean_shutdown = true, .recovery_point = 3});
  EXPECT_EQ(log->log_end_offset(), 3);
  EXPECT_EQ(log->size_bytes(), size);
}

TEST_F(RecoveryTest, MissingIndexesAreRebuiltIdentically) {
  config.index_interval_bytes = 200;
  log->set_config(config);
  for (int i = 0; i < 20; ++i) append(2, 60);
  ASSERT_TRUE(log->roll().has_value());
  append(1);
  ASSERT_TRUE(log->close().has_value());
  log.reset();
  const auto index = file_bytes(file(0, ".index"));
  const auto time_index = file_bytes(file(0, ".timeindex"));
  ASSERT_GT(index.size(), 0u);
  std::filesystem::remove(file(0, ".index"));
  std::filesystem::remove(file(0, ".timeindex"));
  open({.clean_shutdown = true, .recovery_point = 41});
  EXPECT_EQ(file_bytes(file(0, ".index")), index);
  EXPECT_EQ(file_bytes(file(0, ".timeindex")), time_index);
  EXPECT_EQ(read_all(*log).size(), 21u);
}

TEST_F(RecoveryTest, CorruptIndexIsRebuiltWhenFirstUsed) {
  config.index_interval_bytes = 200;
  log->set_config(config);
  for (int i = 0; i < 20; ++i) append(2, 60);
  ASSERT_TRUE(log->roll().has_value());
  append(1);
  ASSERT_TRUE(log->close().has_value());
  log.reset();
  const auto index = file_bytes(file(0, ".index"));
  std::vector<std::byte> garbage(index.size(), std::byte{0x7f});
  testing::write_bytes_at(file(0, ".index"), 0, garbage);
  open({.clean_shutdown = true, .recovery_point = 41});
  auto batches = testing::read_batches(*log, 25, 100);
  ASSERT_TRUE(batches.has_value());
  EXPECT_EQ((*batches)[0].base_offset, 24);
  EXPECT_EQ(file_bytes(file(0, ".index")), index);
}

TEST_F(RecoveryTest, IndexEntryNotMatchingTheLogIsDetectedAndRebuilt) {
  config.index_interval_bytes = 200;
  log->set_config(config);
  for (int i = 0; i < 20; ++i) append(2, 60);
  ASSERT_TRUE(log->roll().has_value());
  append(1);
  ASSERT_TRUE(log->close().has_value());
  log.reset();
  const auto index = file_bytes(file(0, ".index"));
  ASSERT_GE(index.size(), 16u);
  // Keep the entries ordered, but make the second one claim a different offset.
  std::vector<std::byte> entry(index.begin() + 8, index.begin() + 16);
  store_be<std::int32_t>(entry.data(), load_be<std::int32_t>(entry.data()) - 1);
  testing::write_bytes_at(file(0, ".index"), 8, entry);
  open({.clean_shutdown = true, .recovery_point = 41});
  const std::int64_t target = load_be<std::int32_t>(index.data() + 8);
  auto batches = testing::read_batches(*log, target, 100);
  ASSERT_TRUE(batches.has_value());
  ASSERT_FALSE(batches->empty());
  EXPECT_LE((*batches)[0].base_offset, target);
  EXPECT_GE((*batches)[0].last_offset, target);
  EXPECT_EQ(file_bytes(file(0, ".index")), index);
}

TEST_F(RecoveryTest, NewSegmentLostWithItsDirectoryEntry) {
  append_durably(3);
  ASSERT_TRUE(log->roll().has_value());
  append(2);
  crash_and_reopen();
  EXPECT_EQ(log->log_end_offset(), 3);
  EXPECT_EQ(log->segment_count(), 1u);
  EXPECT_FALSE(std::filesystem::exists(file(3, ".log")));
}

TEST_F(RecoveryTest, LeaderEpochsAreRelearnedFromBatches) {
  append(2, 16, 1);
  append(2, 16, 4);
  ASSERT_TRUE(log->flush().has_value());
  log.reset();
  std::filesystem::remove(dir() / "leader-epoch-checkpoint");
  open({.clean_shutdown = false, .recovery_point = 0});
  EXPECT_EQ(log->epoch_entries(), (std::vector<EpochEntry>{{1, 0}, {4, 2}}));
}

// Found by tests/sim: a roll's new segment can reach the disk (a directory sync of the
// partition, e.g. the leader-epoch checkpoint's, or the kernel's writeback) while the old
// segment's last writes do not. The log must not come back with a hole between the two.
TEST_F(RecoveryTest, ASegmentThatLostItsTailDropsTheSegmentsAfterIt) {
  append_durably(3);
  append(2);  // offsets 3-4: written, not synced
  ASSERT_TRUE(log->roll().has_value());
  ASSERT_TRUE(fs.sync_directory(dir()).has_value());  // the new segment's entry is durable
  append_durably(1);                                  // offset 5 in the new segment: its sync also covers 3-4 ...
  log.reset();
  // ... so lose the old segment's tail by hand: the disk kept the new segment's file only.
  std::filesystem::resize_file(file(0, ".log"),
                               std::filesystem::file_size(file(0, ".log")) - (make_batch(2, clock.wall_ms()).size()));
  open({.clean_shutdown = false, .recovery_point = 3});
  EXPECT_EQ(log->log_end_offset(), 3) << "no hole at 3-4 under a segment at 5";
  EXPECT_EQ(log->segment_count(), 1u);
  EXPECT_FALSE(std::filesystem::exists(file(5, ".log")));
}

// Compaction leaves gaps between segments below the cleaner's checkpoint; those are kept.
TEST_F(RecoveryTest, AGapBelowTheCleanerCheckpointIsKept) {
  append_durably(3);
  ASSERT_TRUE(log->roll().has_value());
  append_durably(2);
  log.reset();
  // Segment 0 ends at 3; rename the second one to start at 5, as cleaning would leave it.
  for (const char* suffix : {".log", ".index", ".timeindex"}) {
    if (std::filesystem::exists(file(3, suffix))) std::filesystem::rename(file(3, suffix), file(5, suffix));
  }
  open({.clean_shutdown = false, .recovery_point = 0, .cleaner_checkpoint = 7});
  EXPECT_EQ(log->segment_count(), 2u);
}

// Found by tests/sim: recovery that starts inside an epoch keeps the epoch's start from the
// checkpoint (Kafka's LogSegment.recover assigns only newer epochs). It used to move epoch 5's
// start up to the first batch it scanned, dropping every later epoch with it, so a follower's
// next truncation went below its high watermark.
TEST_F(RecoveryTest, RecoveryInsideAnEpochKeepsTheEpochsCheckpointedStart) {
  config.segment_bytes = 1 << 20;
  append(2, 16, 3);
  append(2, 16, 5);  // epoch 5 starts at 2
  ASSERT_TRUE(log->flush().has_value());
  ASSERT_TRUE(log->roll().has_value());
  append(2, 16, 5);  // 4-5, in the next segment
  append(1, 16, 6);  // epoch 6 at 6
  ASSERT_TRUE(log->flush().has_value());
  ASSERT_EQ(log->epoch_entries(), (std::vector<EpochEntry>{{3, 0}, {5, 2}, {6, 6}}));
  log.reset();
  open({.clean_shutdown = false, .recovery_point = 4});  // scans the segment at 4 only
  EXPECT_EQ(log->epoch_entries(), (std::vector<EpochEntry>{{3, 0}, {5, 2}, {6, 6}}));
}

TEST_F(RecoveryTest, LeftoversOfInterruptedOperationsAreRemoved) {
  append(1);
  ASSERT_TRUE(log->close().has_value());
  log.reset();
  for (const char* name : {"00000000000000000007.log.deleted", "00000000000000000009.index",
                           "00000000000000000009.timeindex", "leader-epoch-checkpoint.tmp"}) {
    testing::write_bytes_at(dir() / name, 0, as_bytes("x"));
  }
  open({.clean_shutdown = true, .recovery_point = 1});
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir())) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"00000000000000000000.index", "00000000000000000000.log",
                                             "00000000000000000000.timeindex", "leader-epoch-checkpoint"}));
}

TEST_F(RecoveryTest, FullDiskFailsAppendsKeepsReadsAndRecovers) {
  config.index_interval_bytes = 100;
  log->set_config(config);
  for (int i = 0; i < 5; ++i) append_durably(2, 50);
  const std::int64_t leo = log->log_end_offset();
  const std::int64_t size = log->size_bytes();
  const auto before = read_all(*log);

  fs.set_free_bytes(40);  // less than one batch
  auto batch = make_batch(2, clock.wall_ms(), 50);
  auto failed = log->append_as_leader(batch, 0);
  ASSERT_FALSE(failed.has_value());
  EXPECT_EQ(failed.error(), Errc::kStorageError);
  EXPECT_EQ(log->log_end_offset(), leo);
  EXPECT_EQ(log->size_bytes(), size);
  EXPECT_FALSE(log->failed());
  EXPECT_EQ(read_all(*log).size(), before.size()) << "reads keep being served";

  // Room for the batch but not for its index entry: the log write is rolled back too.
  fs.set_free_bytes(static_cast<std::int64_t>(batch.size()) + 4);
  failed = log->append_as_leader(batch, 0);
  ASSERT_FALSE(failed.has_value());
  EXPECT_EQ(log->log_end_offset(), leo);
  EXPECT_EQ(log->size_bytes(), size);

  fs.set_free_bytes(std::nullopt);  // space is back
  EXPECT_EQ(append_durably(2, 50).first_offset, leo);
  crash_and_reopen(CrashMode::kDropUnsynced, 0);
  EXPECT_EQ(log->log_end_offset(), leo + 2);
  const auto after = read_all(*log);
  ASSERT_EQ(after.size(), before.size() + 1);
  for (std::size_t i = 0; i < before.size(); ++i) EXPECT_EQ(after[i].bytes, before[i].bytes);
}

TEST_F(RecoveryTest, FullDiskDuringRollFailsTheAppendOnly) {
  config.segment_bytes = 400;
  log->set_config(config);
  append_durably(2, 100);
  fs.set_free_bytes(0);
  auto batch = make_batch(2, clock.wall_ms(), 100);
  EXPECT_EQ(log->append_as_leader(batch, 0).error(), Errc::kStorageError);
  fs.set_free_bytes(std::nullopt);
  EXPECT_EQ(append_durably(2, 100).first_offset, 2);
  EXPECT_EQ(read_all(*log).size(), 2u);
}

TEST_F(RecoveryTest, FailedSyncDoesNotAdvanceTheRecoveryPoint) {
  append_durably(2);
  append(2);
  fs.fail_syncs(true);
  EXPECT_EQ(log->flush().error(), Errc::kStorageError);
  EXPECT_EQ(log->recovery_point(), 2);
  fs.fail_syncs(false);
  ASSERT_TRUE(log->flush().has_value());
  EXPECT_EQ(log->recovery_point(), 4);
}

TEST_F(RecoveryTest, AcknowledgedDurableAppendsSurviveRepeatedCrashes) {
  std::mt19937 rng(7);
  config.segment_bytes = 2000;
  log->set_config(config);
  std::vector<std::vector<std::byte>> acked;
  for (int round = 0; round < 20; ++round) {
    const int appends = 1 + static_cast<int>(rng() % 6);
    for (int i = 0; i < appends; ++i) {
      if (rng() % 2 == 0) {
        append_durably(1 + static_cast<int>(rng() % 3), 20 + rng() % 200);
        acked = {};
        for (auto& b : read_all(*log)) acked.push_back(b.bytes);
      } else {
        append(1 + static_cast<int>(rng() % 3), 20 + rng() % 200);
      }
    }
    crash_and_reopen(rng() % 2 == 0 ? CrashMode::kDropUnsynced : CrashMode::kTearLastWrite);
    const auto now = read_all(*log);
    ASSERT_GE(now.size(), acked.size()) << "round " << round;
    for (std::size_t i = 0; i < acked.size(); ++i) ASSERT_EQ(now[i].bytes, acked[i]) << "round " << round;
    acked.clear();
    for (auto& b : now) acked.push_back(b.bytes);  // what survived is durable now (recovery syncs it)
  }
}

}  // namespace
}  // namespace weir::storage
