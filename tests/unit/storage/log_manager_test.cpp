#include "storage/log_manager.h"

#include <gtest/gtest.h>

#include <fstream>

#include "storage/fault_file_system.h"
#include "test_util.h"

namespace weir::storage {
namespace {

using testing::make_batch;
using testing::read_all;
using testing::TempDir;

class LogManagerTest : public ::testing::Test {
 protected:
  TempDir tmp;
  FaultInjectingFileSystem fs;
  ManualClock clock;
  std::unique_ptr<LogManager> manager;
  LogManagerOptions manager_options;
  const Uuid topic_id = Uuid(0x1234, 0x5678);

  std::filesystem::path dir() const { return tmp.path() / "data"; }

  void open() {
    manager.reset();
    auto opened = LogManager::open(fs, dir(), clock, manager_options);
    ASSERT_TRUE(opened.has_value()) << opened.error();
    manager = std::move(*opened);
  }
  void SetUp() override { open(); }
  // The process dies (no log open), the disk loses what was not durable, the broker starts again.
  void crash_and_reopen() {
    manager.reset();
    fs.crash();
    open();
  }
  static std::vector<std::pair<TopicPartition, Uuid>> partitions_of(const std::string& topic, int count, Uuid id) {
    std::vector<std::pair<TopicPartition, Uuid>> out;
    for (int p = 0; p < count; ++p) out.emplace_back(TopicPartition{topic, p}, id);
    return out;
  }
  // Leader epoch `epoch` for every partition.
  static std::vector<std::int32_t> epochs(int count, std::int32_t epoch) {
    return std::vector<std::int32_t>(static_cast<std::size_t>(count), epoch);
  }
  // The partitions of topic whose directory exists, and whether any file is left half-written.
  int directories_of(const std::string& topic) const {
    int n = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir())) {
      if (e.path().filename().string().starts_with(topic + "-")) ++n;
    }
    return n;
  }
  bool temporary_files_left() const {
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir())) {
      if (e.path().extension() == ".tmp") return true;
    }
    return false;
  }

  PartitionLog& create(const TopicPartition& tp) {
    auto log = manager->create(tp, topic_id, LogConfig{});
    EXPECT_TRUE(log.has_value());
    return **log;
  }
  void append(PartitionLog& log, int records) {
    auto batch = make_batch(records, clock.wall_ms());
    ASSERT_TRUE(log.append_as_leader(batch, 0).has_value());
  }
  std::string text(std::string_view name) const {
    return std::string(as_string_view(testing::file_bytes(dir() / name)));
  }
};

TEST_F(LogManagerTest, CreateWritesPartitionMetadataAndReopens) {
  PartitionLog& log = create({"my-topic.v2", 3});
  append(log, 4);
  EXPECT_TRUE(std::filesystem::exists(dir() / "my-topic.v2-3" / "00000000000000000000.log"));
  EXPECT_EQ(std::string(as_string_view(testing::file_bytes(dir() / "my-topic.v2-3" / "partition.metadata"))),
            "version: 0\ntopic_id: " + topic_id.to_string());
  ASSERT_TRUE(manager->close().has_value());
  open();
  EXPECT_TRUE(manager->had_clean_shutdown());
  ASSERT_EQ(manager->partitions(), (std::vector<TopicPartition>{{"my-topic.v2", 3}}));
  EXPECT_EQ(manager->topic_id({"my-topic.v2", 3}), topic_id);
  EXPECT_EQ(manager->get({"my-topic.v2", 3})->log_end_offset(), 4);
  EXPECT_EQ(manager->get({"nope", 0}), nullptr);
}

TEST_F(LogManagerTest, CleanShutdownWritesCheckpointsAndTheMarker) {
  PartitionLog& a = create({"a", 0});
  PartitionLog& b = create({"b", 1});
  append(a, 3);
  append(b, 5);
  a.update_high_watermark(3);
  ASSERT_TRUE(b.delete_records_before(2).has_value());
  ASSERT_TRUE(manager->close().has_value());
  EXPECT_EQ(text("recovery-point-offset-checkpoint"), "0\n2\na 0 3\nb 1 5\n");
  EXPECT_EQ(text("log-start-offset-checkpoint"), "0\n2\na 0 0\nb 1 2\n");
  EXPECT_EQ(text("replication-offset-checkpoint"), "0\n2\na 0 3\nb 1 2\n");
  EXPECT_EQ(text(".kafka_cleanshutdown"), R"({"version":0,"brokerEpoch":-1})");
  open();
  EXPECT_TRUE(manager->had_clean_shutdown());
  EXPECT_FALSE(std::filesystem::exists(dir() / ".kafka_cleanshutdown")) << "removed once open";
  EXPECT_EQ(manager->get({"b", 1})->log_start_offset(), 2);
  EXPECT_EQ(manager->get({"a", 0})->high_watermark(), 3);
}

TEST_F(LogManagerTest, CleanShutdownKeepsTheBrokerEpochForTheNextRegistration) {
  EXPECT_EQ(manager->clean_shutdown_broker_epoch(), -1) << "a new dir had no shutdown";
  append(create({"a", 0}), 1);
  ASSERT_TRUE(manager->close(42).has_value());
  EXPECT_EQ(text(".kafka_cleanshutdown"), R"({"version":0,"brokerEpoch":42})");
  open();
  EXPECT_EQ(manager->clean_shutdown_broker_epoch(), 42);
  // A crash (no close) leaves no marker: no previous epoch.
  manager.reset();
  open();
  EXPECT_FALSE(manager->had_clean_shutdown());
  EXPECT_EQ(manager->clean_shutdown_broker_epoch(), -1);
  // Kafka's own file, as its CleanShutdownFileHandler writes it (spaces allowed).
  ASSERT_TRUE(manager->close().has_value());
  {
    std::ofstream f(dir() / ".kafka_cleanshutdown", std::ios::trunc);
    f << R"({"version": 0, "brokerEpoch": 17})";
  }
  open();
  EXPECT_EQ(manager->clean_shutdown_broker_epoch(), 17);
}

TEST_F(LogManagerTest, CrashWithoutCloseRecoversFromTheCheckpointedRecoveryPoint) {
  PartitionLog& a = create({"a", 0});
  append(a, 3);
  ASSERT_TRUE(a.flush().has_value());
  ASSERT_TRUE(manager->write_checkpoints().has_value());
  append(a, 2);  // not synced
  manager.reset();
  fs.crash();
  open();
  EXPECT_FALSE(manager->had_clean_shutdown());
  EXPECT_EQ(manager->get({"a", 0})->log_end_offset(), 3);
}

TEST_F(LogManagerTest, PeriodicCheckpointsRewriteOnlyTheFilesWhoseValuesChanged) {
  PartitionLog& a = create({"a", 0});
  append(a, 3);
  ASSERT_TRUE(a.flush().has_value());
  ASSERT_TRUE(manager->write_checkpoints().has_value());
  const auto recovery = dir() / "recovery-point-offset-checkpoint";
  const auto starts = dir() / "log-start-offset-checkpoint";
  const auto hws = dir() / "replication-offset-checkpoint";
  for (const auto& f : {recovery, starts, hws}) ASSERT_TRUE(std::filesystem::exists(f)) << f;
  // Removed behind the manager's back, to see which files a round writes.
  for (const auto& f : {recovery, starts, hws}) std::filesystem::remove(f);
  ASSERT_TRUE(manager->write_checkpoints().has_value());
  for (const auto& f : {recovery, starts, hws}) EXPECT_FALSE(std::filesystem::exists(f)) << f;
  // Records appended and flushed: the recovery point moved, the log start did not.
  append(a, 2);
  ASSERT_TRUE(a.flush().has_value());
  ASSERT_TRUE(manager->write_checkpoints().has_value());
  EXPECT_TRUE(std::filesystem::exists(recovery));
  EXPECT_FALSE(std::filesystem::exists(starts));
  // A crash now recovers from the recovery point just written.
  append(a, 1);  // not synced
  crash_and_reopen();
  EXPECT_EQ(manager->get({"a", 0})->log_end_offset(), 5);
  // A new manager knows nothing of what the files hold: its first round writes all of them.
  ASSERT_TRUE(manager->write_checkpoints().has_value());
  for (const auto& f : {recovery, starts, hws}) EXPECT_TRUE(std::filesystem::exists(f)) << f;
}

TEST_F(LogManagerTest, RemoveDeletesThePartitionDirectory) {
  PartitionLog& a = create({"a", 0});
  append(a, 1);
  ASSERT_TRUE(manager->remove({"a", 0}).has_value());
  EXPECT_FALSE(std::filesystem::exists(dir() / "a-0"));
  EXPECT_EQ(manager->remove({"a", 0}).error(), Errc::kNotFound);
  EXPECT_TRUE(manager->partitions().empty());
}

TEST_F(LogManagerTest, DeleteDirectoriesAreRemovedAndOthersSkippedOnOpen) {
  create({"a", 0});
  ASSERT_TRUE(manager->close().has_value());
  manager.reset();
  for (const char* d : {"a-1.0123456789abcdef0123456789abcdef-delete", "a-2.0123456789abcdef0123456789abcdef-future",
                        "__cluster_metadata-0", "not_a_partition"}) {
    std::filesystem::create_directories(dir() / d);
    testing::write_bytes_at(dir() / d / "00000000000000000000.log", 0, as_bytes(""));
  }
  open();
  EXPECT_EQ(manager->partitions(), (std::vector<TopicPartition>{{"a", 0}}));
  EXPECT_FALSE(std::filesystem::exists(dir() / "a-1.0123456789abcdef0123456789abcdef-delete"));
  EXPECT_TRUE(std::filesystem::exists(dir() / "a-2.0123456789abcdef0123456789abcdef-future"));
  EXPECT_TRUE(std::filesystem::exists(dir() / "__cluster_metadata-0"));
}

TEST_F(LogManagerTest, MalformedRecoveryCheckpointMeansFullRecovery) {
  PartitionLog& a = create({"a", 0});
  append(a, 2);
  ASSERT_TRUE(manager->close().has_value());
  manager.reset();
  testing::write_bytes_at(dir() / "recovery-point-offset-checkpoint", 0, as_bytes("garbage"));
  open();
  EXPECT_FALSE(manager->had_clean_shutdown());
  EXPECT_EQ(manager->get({"a", 0})->log_end_offset(), 2);
}

TEST_F(LogManagerTest, APreparedPartitionThisBrokerLeadsStartsItsLeaderEpochAtOffsetZero) {
  // Kafka's new leader writes "0 0" before any record: the first append has nothing to write.
  std::filesystem::create_directories(dir() / "c-0");  // left by a crash: not touched
  const auto prepared = manager->prepare({{{"a", 0}, topic_id}, {{"b", 0}, topic_id}, {{"c", 0}, topic_id}},
                                         std::vector<std::int32_t>{3, -1, 0});
  ASSERT_EQ(prepared.size(), 3u);
  for (const auto& p : prepared) EXPECT_TRUE(p.ok());
  EXPECT_EQ(text("a-0/leader-epoch-checkpoint"), "0\n1\n3 0\n");
  EXPECT_FALSE(std::filesystem::exists(dir() / "b-0" / "leader-epoch-checkpoint"));
  EXPECT_FALSE(std::filesystem::exists(dir() / "c-0" / "leader-epoch-checkpoint"));
  PartitionLog& a = create({"a", 0});  // before any record: the epoch began at the log end, it stays
  EXPECT_EQ(a.latest_epoch(), 3);
  EXPECT_EQ(text("a-0/leader-epoch-checkpoint"), "0\n1\n3 0\n");
  auto batch = make_batch(2, clock.wall_ms());
  ASSERT_TRUE(a.append_as_leader(batch, 3).has_value());
  EXPECT_EQ(text("a-0/leader-epoch-checkpoint"), "0\n1\n3 0\n");
  // A clean restart keeps it.
  ASSERT_TRUE(manager->close().has_value());
  open();
  EXPECT_EQ(manager->get({"a", 0})->latest_epoch(), 3);
  EXPECT_EQ(text("a-0/leader-epoch-checkpoint"), "0\n1\n3 0\n");
}

TEST_F(LogManagerTest, ANewPartitionsFirstSegmentIsDurableBeforeItsFirstWrite) {
  PartitionLog& log = create({"a", 0});
  for (const char* name : {"00000000000000000000.log", "00000000000000000000.index", "00000000000000000000.timeindex"}) {
    EXPECT_TRUE(std::filesystem::exists(dir() / "a-0" / name)) << name;
  }
  append(log, 3);
  const SyncToken token = log.prepare_sync();
  EXPECT_FALSE(token.files.empty());
  EXPECT_TRUE(token.directories.empty()) << "the directory was synced when the partition was made";
  // A partition whose directory a crash left behind (not made by prepare) still syncs it.
  std::filesystem::create_directories(dir() / "b-0");
  PartitionLog& b = create({"b", 0});
  append(b, 1);
  EXPECT_FALSE(b.prepare_sync().directories.empty());
}

TEST_F(LogManagerTest, LogsLoadedFromSeveralThreadsAreTheSameAsFromOne) {
  for (int i = 0; i < 40; ++i) append(create({"t", i}), i % 7 + 1);
  ASSERT_TRUE(manager->close().has_value());
  for (std::size_t threads : {std::size_t{1}, std::size_t{4}}) {
    manager.reset();
    LogManagerOptions options;
    options.load_threads = threads;
    auto opened = LogManager::open(fs, dir(), clock, options);
    ASSERT_TRUE(opened.has_value()) << opened.error();
    manager = std::move(*opened);
    ASSERT_EQ(manager->partitions().size(), 40u);
    for (int i = 0; i < 40; ++i) {
      const PartitionLog* log = manager->get({"t", i});
      ASSERT_NE(log, nullptr);
      EXPECT_EQ(log->log_end_offset(), i % 7 + 1) << "threads=" << threads << " partition " << i;
      EXPECT_EQ(manager->topic_id({"t", i}), topic_id);
    }
    ASSERT_TRUE(manager->close().has_value());
  }
}

TEST_F(LogManagerTest, APartitionThatCannotBeLoadedFailsTheLoadWhateverTheThreads) {
  for (int i = 0; i < 8; ++i) append(create({"t", i}), 1);
  ASSERT_TRUE(manager->close().has_value());
  manager.reset();
  // A directory where the segment file should be: the open fails.
  std::filesystem::create_directories(dir() / "t-9" / "00000000000000000000.log");
  LogManagerOptions options;
  options.load_threads = 3;
  auto opened = LogManager::open(fs, dir(), clock, options);
  EXPECT_FALSE(opened.has_value());
}

// Many new partitions at once: one syncfs instead of four fsyncs a partition.
TEST_F(LogManagerTest, ManyNewPartitionsAreMadeDurableBySyncfsAndSurviveACrash) {
  manager_options.syncfs_min_partitions = 8;
  open();
  const std::int64_t file_syncs = fs.file_syncs();
  const std::int64_t directory_syncs = fs.directory_syncs();
  const auto prepared = manager->prepare(partitions_of("a", 20, topic_id), epochs(20, 4));
  for (const auto& p : prepared) EXPECT_TRUE(p.ok());
  EXPECT_EQ(fs.filesystem_syncs(), 1);
  EXPECT_EQ(fs.file_syncs(), file_syncs);
  EXPECT_EQ(fs.directory_syncs(), directory_syncs);
  EXPECT_FALSE(temporary_files_left());
  manager.reset();
  fs.crash();
  for (int p = 0; p < 20; ++p) {
    EXPECT_EQ(text("a-" + std::to_string(p) + "/leader-epoch-checkpoint"), "0\n1\n4 0\n") << p;
  }
  open();
  for (int p = 0; p < 20; ++p) {
    ASSERT_NE(manager->get({"a", p}), nullptr) << p;
    EXPECT_EQ(manager->topic_id({"a", p}), topic_id);
  }
  // Fewer than syncfs_min_partitions: each partition's files synced on their own, as before.
  ASSERT_TRUE(manager->prepare(partitions_of("b", 3, topic_id)).front().ok());
  EXPECT_EQ(fs.filesystem_syncs(), 1);
  EXPECT_GT(fs.file_syncs(), file_syncs);
}

TEST_F(LogManagerTest, AFailedSyncfsFallsBackToSyncingEachFileForGood) {
  manager_options.syncfs_min_partitions = 8;
  open();
  int attempts = 0;
  fs.fail_paths([&](std::string_view op, const std::string&) {
    if (op != "syncfs") return 0;
    ++attempts;
    return EIO;
  });
  const std::int64_t file_syncs = fs.file_syncs();
  for (const auto& p : manager->prepare(partitions_of("a", 10, topic_id), epochs(10, 1))) EXPECT_TRUE(p.ok());
  EXPECT_EQ(attempts, 1);
  EXPECT_EQ(fs.file_syncs() - file_syncs, 20) << "partition.metadata and leader-epoch-checkpoint each";
  for (const auto& p : manager->prepare(partitions_of("b", 10, topic_id))) EXPECT_TRUE(p.ok());
  EXPECT_EQ(attempts, 1) << "no syncfs after one failed";
  EXPECT_FALSE(temporary_files_left());
  crash_and_reopen();
  for (const char* topic : {"a", "b"}) {
    for (int p = 0; p < 10; ++p) EXPECT_EQ(manager->topic_id({topic, p}), topic_id) << topic << p;
  }
}

// Directories a crash left (not made here) get their files written aside and renamed into place
// after the first syncfs; a second makes the renames durable.
TEST_F(LogManagerTest, ASyncfsFailingAfterTheRenamesSyncsEachDirectoryInstead) {
  manager_options.syncfs_min_partitions = 8;
  open();
  for (int p = 0; p < 5; ++p) std::filesystem::create_directories(dir() / ("a-" + std::to_string(p)));
  int attempts = 0;
  fs.fail_paths([&](std::string_view op, const std::string&) { return op == "syncfs" && ++attempts == 2 ? EIO : 0; });
  const std::int64_t file_syncs = fs.file_syncs();
  const std::int64_t directory_syncs = fs.directory_syncs();
  for (const auto& p : manager->prepare(partitions_of("a", 10, topic_id))) EXPECT_TRUE(p.ok());
  EXPECT_EQ(fs.file_syncs(), file_syncs) << "their data was durable by the first syncfs";
  EXPECT_EQ(attempts, 2);
  EXPECT_EQ(fs.directory_syncs() - directory_syncs, 11) << "each partition's, then the log dir";
  EXPECT_FALSE(temporary_files_left());
  crash_and_reopen();
  for (int p = 0; p < 10; ++p) EXPECT_EQ(manager->topic_id({"a", p}), topic_id) << p;
}

TEST_F(LogManagerTest, ABatchThatCannotBeSyncedLeavesNothingBehind) {
  manager_options.syncfs_min_partitions = 8;
  open();
  fs.fail_syncs(true);
  for (const auto& p : manager->prepare(partitions_of("a", 10, topic_id), epochs(10, 0))) {
    EXPECT_FALSE(p.ok());
    ASSERT_TRUE(p.failure.has_value());
    EXPECT_EQ(p.failure->error, IoError{EIO});
  }
  EXPECT_EQ(directories_of("a"), 0);
  fs.fail_syncs(false);
  for (const auto& p : manager->prepare(partitions_of("a", 10, topic_id), epochs(10, 0))) EXPECT_TRUE(p.ok());
  crash_and_reopen();
  for (int p = 0; p < 10; ++p) EXPECT_EQ(manager->topic_id({"a", p}), topic_id) << p;
}

TEST_F(LogManagerTest, ABatchOnAFullDiskKeepsThePartitionsThatFitAndNothingOfTheOthers) {
  manager_options.syncfs_min_partitions = 8;
  open();
  fs.set_free_bytes(1000);  // room for some partitions' files, not all
  const auto prepared = manager->prepare(partitions_of("a", 40, topic_id), epochs(40, 2));
  fs.set_free_bytes(std::nullopt);
  std::vector<int> kept;
  for (int p = 0; p < 40; ++p) {
    const std::string name = "a-" + std::to_string(p);
    if (prepared[static_cast<std::size_t>(p)].ok()) {
      kept.push_back(p);
    } else {
      EXPECT_FALSE(std::filesystem::exists(dir() / name)) << name;
    }
  }
  EXPECT_FALSE(kept.empty());
  EXPECT_LT(kept.size(), 40u);
  EXPECT_FALSE(temporary_files_left());
  crash_and_reopen();
  for (int p : kept) EXPECT_EQ(manager->topic_id({"a", p}), topic_id) << p;
  EXPECT_EQ(directories_of("a"), static_cast<int>(kept.size()));
}

// The process dies at every point of a batch: each partition it reported prepared survives.
TEST_F(LogManagerTest, ABatchCutShortAnywhereKeepsEveryPartitionItReported) {
  manager_options.syncfs_min_partitions = 4;
  open();
  const std::int64_t before = fs.mutating_operations();
  (void)manager->prepare(partitions_of("probe", 6, topic_id), epochs(6, 0));
  const std::int64_t operations = fs.mutating_operations() - before;
  ASSERT_GT(operations, 0);
  for (std::int64_t n = 0; n <= operations; ++n) {
    const std::string topic = "t" + std::to_string(n);
    fs.fail_after(n);
    const auto prepared = manager->prepare(partitions_of(topic, 6, topic_id), epochs(6, 0));
    fs.fail_after(std::nullopt);
    crash_and_reopen();
    for (int p = 0; p < 6; ++p) {
      if (!prepared[static_cast<std::size_t>(p)].ok()) continue;
      EXPECT_EQ(manager->topic_id({topic, p}), topic_id) << "after " << n << " operations: " << topic << "-" << p;
    }
  }
}

}  // namespace
}  // namespace weir::storage
