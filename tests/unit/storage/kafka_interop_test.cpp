// Both directions of on-disk compatibility with Apache Kafka 4.3.1:
//  - a partition directory written by Kafka (testdata/kafka-4.3.1, made by a real broker: three
//    segments rolled by segment.ms, a committed and an aborted transaction, a gzip batch) is
//    opened, recovered and served by weir, and weir's index rule rebuilds Kafka's index files
//    byte for byte;
//  - segments written by weir are read by Kafka's kafka-dump-log (when the Kafka tools of
//    tests/kafka are set up; skipped otherwise).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "protocol/record/control_record.h"
#include "storage/log_manager.h"
#include "test_util.h"

namespace weir::storage {
namespace {

using testing::file_bytes;
using testing::make_batch;
using testing::read_all;
using testing::TempDir;

namespace fs = std::filesystem;

const fs::path kFixture = fs::path(WEIR_STORAGE_TESTDATA) / "kafka-4.3.1";
const TopicPartition kTopic{"fix-topic.v1", 0};
constexpr std::int64_t kBaseTs = 1'700'000'000'000;  // the fixture's record timestamps start here

LogManagerOptions fixture_options() {
  LogManagerOptions options;
  options.config_for = [](std::string_view) {
    LogConfig c;
    c.index_interval_bytes = 200;  // the topic's config in the fixture
    c.segment_ms = 60'000;
    c.retention_ms = -1;
    return c;
  };
  return options;
}

class KafkaDirectoryTest : public ::testing::Test {
 protected:
  TempDir tmp;
  ManualClock clock;
  fs::path data() const { return tmp.path() / "data"; }
  fs::path partition() const { return data() / "fix-topic.v1-0"; }

  void SetUp() override { fs::copy(kFixture, data(), fs::copy_options::recursive); }

  std::unique_ptr<LogManager> open() {
    auto manager = LogManager::open(PosixFileSystem::instance(), data(), clock, fixture_options());
    EXPECT_TRUE(manager.has_value());
    return manager ? std::move(*manager) : nullptr;
  }
};

TEST_F(KafkaDirectoryTest, ServesAPartitionWrittenByKafka) {
  auto manager = open();
  ASSERT_NE(manager, nullptr);
  EXPECT_TRUE(manager->had_clean_shutdown());
  ASSERT_EQ(manager->partitions(), std::vector<TopicPartition>{kTopic});
  EXPECT_EQ(manager->topic_id(kTopic)->to_string(), "iL9bFyJfT-mAr6NemyYHqw");
  PartitionLog& log = *manager->get(kTopic);
  EXPECT_EQ(log.log_start_offset(), 0);
  EXPECT_EQ(log.log_end_offset(), 147);
  EXPECT_EQ(log.high_watermark(), 147);
  EXPECT_EQ(log.segment_count(), 5u);

  const auto batches = read_all(log);
  std::int64_t next = 0;
  for (const auto& b : batches) {
    EXPECT_EQ(b.base_offset, next);
    next = b.last_offset + 1;
  }
  EXPECT_EQ(next, 147);
  EXPECT_EQ(testing::values(batches[0].bytes)[0], "value-0-value-0-value-0-");

  auto inside = testing::read_batches(log, 41, 1);
  ASSERT_TRUE(inside.has_value());
  ASSERT_EQ(inside->size(), 1u);
  EXPECT_LE((*inside)[0].base_offset, 41);
  EXPECT_GE((*inside)[0].last_offset, 41);

  EXPECT_EQ(log.find_offset_by_timestamp(kBaseTs + 600'000), (TimestampOffset{kBaseTs + 600'000, 40, 0}));
  EXPECT_EQ(log.find_offset_by_timestamp(kBaseTs + 600'005), (TimestampOffset{kBaseTs + 600'010, 41, 0}));
  EXPECT_EQ(log.find_offset_by_timestamp(kBaseTs + 1'200'395), (TimestampOffset{kBaseTs + 1'800'000, 120, 0}));
  // The largest timestamp is the abort marker's (markers carry the broker's clock).
  const auto max = log.max_timestamp();
  ASSERT_TRUE(max.has_value());
  EXPECT_EQ(max->offset, 134);

  auto aborted = log.collect_aborted_transactions(0, 147);
  ASSERT_TRUE(aborted.has_value());
  EXPECT_EQ(*aborted, (std::vector<AbortedTxn>{{1, 126, 134, 135}}));
  EXPECT_EQ(log.end_offset_for_epoch(0), (std::pair<std::int32_t, std::int64_t>{0, 147}));

  // And weir goes on appending where Kafka stopped.
  auto batch = make_batch(3, clock.wall_ms());
  auto info = log.append_as_leader(batch, 1);
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->first_offset, 147);
  EXPECT_EQ(log.epoch_entries(), (std::vector<EpochEntry>{{0, 0}, {1, 147}}));
  ASSERT_TRUE(manager->close().has_value());
  EXPECT_TRUE(fs::exists(partition() / "00000000000000000147.snapshot")) << "producer snapshots are left alone";
}

TEST_F(KafkaDirectoryTest, FullRecoveryKeepsEveryKafkaBatchAndRebuildsKafkasIndexesByteForByte) {
  std::map<std::string, std::vector<std::byte>> kafka_indexes;
  for (const auto& e : fs::directory_iterator(partition())) {
    const auto ext = e.path().extension();
    if (ext == ".index" || ext == ".timeindex") kafka_indexes[e.path().filename().string()] = file_bytes(e.path());
  }
  ASSERT_EQ(kafka_indexes.size(), 10u);
  fs::remove(data() / ".kafka_cleanshutdown");
  fs::remove(data() / "recovery-point-offset-checkpoint");  // recover everything
  auto manager = open();
  ASSERT_NE(manager, nullptr);
  EXPECT_FALSE(manager->had_clean_shutdown());
  PartitionLog& log = *manager->get(kTopic);
  EXPECT_EQ(log.log_end_offset(), 147) << "every Kafka batch (control, transactional, gzip) passes recovery";
  for (const auto& [name, bytes] : kafka_indexes) {
    EXPECT_EQ(file_bytes(partition() / name), bytes) << name;
  }
}

// ------------------------------------------------------------------------- weir -> kafka-dump-log

// Runs a command, returning its exit status and standard output.
std::pair<int, std::string> run(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return {-1, out};
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, pipe)) out.append(buf, n);
  const int status = ::pclose(pipe);
  return {status, out};
}

TEST(KafkaDumpLogTest, ReadsSegmentsWrittenByWeir) {
  const fs::path root = fs::path(WEIR_SOURCE_DIR);
  const fs::path tool = root / "tests" / "kafka" / "bin" / "kafka-dump-log";
  if (!fs::exists(root / ".cache" / "kafka" / "cp.txt") || std::system("command -v java > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "Kafka tools not set up (scripts/setup-kafka.sh)";
  }
  TempDir tmp;
  ManualClock clock;
  LogConfig config;
  config.segment_bytes = 4000;
  config.index_interval_bytes = 300;
  const fs::path dir = tmp.path() / "interop-0";
  {
    auto log = PartitionLog::open(PosixFileSystem::instance(), dir, config, clock, {.clean_shutdown = true});
    ASSERT_TRUE(log.has_value());
    for (int i = 0; i < 40; ++i) {
      auto batch = make_batch(1 + i % 4, clock.wall_ms() + i * 7, 40 + (i * 13) % 90,
                              {.producer_id = 5, .producer_epoch = 0, .base_sequence = 0});
      ASSERT_TRUE((*log)->append_as_leader(batch, 2).has_value());
    }
    auto marker = record::build_end_txn_marker_batch({.producer_id = 5,
                                                      .producer_epoch = 0,
                                                      .commit = false,
                                                      .timestamp_ms = clock.wall_ms() + 500,
                                                      .base_offset = (*log)->log_end_offset(),
                                                      .partition_leader_epoch = 2});
    ASSERT_TRUE((*log)->append_with_offsets(marker).has_value());
    ASSERT_TRUE((*log)->append_aborted_transaction({5, 90, (*log)->log_end_offset() - 1, 0}).has_value());
    ASSERT_GE((*log)->segment_count(), 3u);
    ASSERT_TRUE((*log)->close().has_value());
  }
  std::string files;
  int segments = 0;
  std::vector<fs::path> sorted;
  for (const auto& e : fs::directory_iterator(dir)) sorted.push_back(e.path());
  std::sort(sorted.begin(), sorted.end());
  for (const auto& p : sorted) {
    const auto ext = p.extension();
    if (ext != ".log" && ext != ".index" && ext != ".timeindex" && ext != ".txnindex") continue;
    files += (files.empty() ? "" : ",") + p.string();
    segments += ext == ".log";
  }
  const auto [status, out] = run(tool.string() + " --files " + files + " --print-data-log 2>&1");
  ASSERT_EQ(status, 0) << out;
  EXPECT_EQ(out.find("isvalid: false"), std::string::npos) << out;
  EXPECT_EQ(out.find("Mismatches"), std::string::npos) << out;
  EXPECT_EQ(out.find("mismatch"), std::string::npos) << out;
  EXPECT_EQ(out.find("Exception"), std::string::npos) << out;
  EXPECT_NE(out.find("endTxnMarker: ABORT"), std::string::npos) << out;
  EXPECT_NE(out.find("| offset: 0 CreateTime"), std::string::npos) << out;
  EXPECT_NE(out.find("version: 0 producerId: 5 firstOffset: 90"), std::string::npos) << out;
  const auto [sanity_status, sanity] = run(tool.string() + " --files " + files + " --index-sanity-check 2>&1");
  ASSERT_EQ(sanity_status, 0) << sanity;
  EXPECT_EQ(sanity.find("Exception"), std::string::npos) << sanity;
  EXPECT_EQ(sanity.find("corrupt"), std::string::npos) << sanity;
  std::size_t passed = 0;
  for (std::size_t at = sanity.find("passed sanity check"); at != std::string::npos;
       at = sanity.find("passed sanity check", at + 1)) {
    ++passed;
  }
  EXPECT_EQ(passed, static_cast<std::size_t>(2 * segments)) << sanity;  // .index and .timeindex of each
  if (const char* keep = std::getenv("WEIR_STORAGE_INTEROP_OUT")) {
    std::ofstream(fs::path(keep) / "dump-log.txt") << out << "\n----\n" << sanity;
    fs::copy(dir, fs::path(keep) / "interop-0", fs::copy_options::recursive | fs::copy_options::overwrite_existing);
  }
}

}  // namespace
}  // namespace weir::storage
