// Log compaction through LogManager (cleanable(), clean(), cleaner-offset-checkpoint), and Kafka's
// kafka-dump-log reading a cleaned segment.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "cleaner_test_util.h"
#include "storage/log_manager.h"

namespace weir::storage {
namespace {

using testing::data_records;
using testing::Kv;
using testing::kv_batch;
using testing::latest_values;
using testing::TempDir;

namespace fs = std::filesystem;

LogConfig compacted() {
  LogConfig c;
  c.cleanup_compact = true;
  c.cleanup_delete = false;
  c.index_interval_bytes = 100;
  return c;
}

class LogManagerCleanerTest : public ::testing::Test {
 protected:
  TempDir tmp;
  ManualClock clock;
  std::unique_ptr<LogManager> manager;
  const TopicPartition compacted_tp{"compacted", 0};
  const TopicPartition plain_tp{"plain", 0};

  fs::path dir() const { return tmp.path() / "data"; }

  void open() {
    manager.reset();
    LogManagerOptions options;
    options.config_for = [](std::string_view topic) { return topic == "compacted" ? compacted() : LogConfig{}; };
    auto opened = LogManager::open(PosixFileSystem::instance(), dir(), clock, options);
    ASSERT_TRUE(opened.has_value()) << opened.error();
    manager = std::move(*opened);
  }

  void SetUp() override {
    open();
    ASSERT_TRUE(manager->create(compacted_tp, Uuid(1, 2), compacted()).has_value());
    ASSERT_TRUE(manager->create(plain_tp, Uuid(3, 4), LogConfig{}).has_value());
  }

  void put(const TopicPartition& tp, const std::vector<Kv>& records,
           record::Compression codec = record::Compression::none) {
    PartitionLog& log = *manager->get(tp);
    auto batch = kv_batch(records, clock.wall_ms(), {}, codec);
    ASSERT_TRUE(log.append_as_leader(batch, 0).has_value());
    log.update_high_watermark(log.log_end_offset());
  }

  void fill_with_duplicates() {
    for (const TopicPartition& tp : {compacted_tp, plain_tp}) {
      for (int i = 0; i < 20; ++i) put(tp, {{"k" + std::to_string(i % 4), std::to_string(i)}});
      ASSERT_TRUE(manager->get(tp)->roll().has_value());
    }
  }

  std::string checkpoint_text() const {
    return std::string(as_string_view(testing::file_bytes(dir() / "cleaner-offset-checkpoint")));
  }
};

TEST_F(LogManagerCleanerTest, CleansCompactedPartitionsAndKeepsTheirCheckpoint) {
  fill_with_duplicates();
  EXPECT_EQ(manager->cleanable(clock.wall_ms()), std::vector<TopicPartition>{compacted_tp});
  CleanResult result;
  int calls = 0;
  do {
    auto step = manager->clean(compacted_tp, clock.wall_ms(), 500);
    ASSERT_TRUE(step.has_value());
    result = *step;
    ++calls;
    if (result.state == CleanState::kInProgress) {
      EXPECT_EQ(manager->cleanable(clock.wall_ms()), std::vector<TopicPartition>{compacted_tp}) << "unfinished first";
    }
  } while (result.state == CleanState::kInProgress);
  EXPECT_GT(calls, 1);
  EXPECT_EQ(result.state, CleanState::kCompleted);
  EXPECT_EQ(result.checkpoint, 20);
  EXPECT_EQ(checkpoint_text(), "0\n1\ncompacted 0 20\n");
  EXPECT_EQ(data_records(*manager->get(compacted_tp)).size(), 4u);
  EXPECT_EQ(data_records(*manager->get(plain_tp)).size(), 20u) << "cleanup.policy=delete: never cleaned";
  EXPECT_TRUE(manager->cleanable(clock.wall_ms()).empty());
  EXPECT_EQ(manager->clean(compacted_tp, clock.wall_ms(), 500)->state, CleanState::kIdle);
  EXPECT_EQ(manager->clean({"nope", 0}, clock.wall_ms(), 500).error(), Errc::kNotFound);

  ASSERT_TRUE(manager->close().has_value());
  open();
  EXPECT_EQ(manager->get(compacted_tp)->cleaner_checkpoint(), 20);
  EXPECT_EQ(manager->get(plain_tp)->cleaner_checkpoint(), std::nullopt);
  EXPECT_TRUE(manager->cleanable(clock.wall_ms()).empty());
  put(compacted_tp, {{"k1", "new"}});
  ASSERT_TRUE(manager->get(compacted_tp)->roll().has_value());
  EXPECT_TRUE(manager->cleanable(clock.wall_ms()).empty()) << "1 dirty batch out of 5 is below the ratio";
}

TEST_F(LogManagerCleanerTest, APartitionWhoseCleanFailsIsLeftAlone) {
  fill_with_duplicates();
  // A gzip batch whose CRC is right but whose records do not decompress.
  PartitionLog& log = *manager->get(compacted_tp);
  auto batch = kv_batch({{"x", std::string(100, 'x')}}, clock.wall_ms(), {.base_offset = log.log_end_offset()},
                        record::Compression::gzip);
  auto view = record::MutableRecordBatchView::from(batch);
  for (std::size_t i = record::kHeaderSize + 10; i < batch.size(); ++i) batch[i] = std::byte{0x55};
  view->update_crc();
  ASSERT_TRUE(log.append_with_offsets(batch).has_value());
  ASSERT_TRUE(log.roll().has_value());
  log.update_high_watermark(log.log_end_offset());
  auto failed = manager->clean(compacted_tp, clock.wall_ms(), 1 << 30);
  ASSERT_FALSE(failed.has_value());
  EXPECT_EQ(failed.error(), Errc::kCorruptMessage);
  EXPECT_TRUE(manager->is_uncleanable(compacted_tp));
  EXPECT_TRUE(manager->cleanable(clock.wall_ms()).empty());
  EXPECT_FALSE(log.cleaning_in_progress());
  EXPECT_EQ(testing::read_all(log).size(), 21u) << "nothing changed";
}

// ------------------------------------------------------------------ kafka-dump-log reads it

std::pair<int, std::string> run(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return {-1, out};
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, pipe)) out.append(buf, n);
  return {::pclose(pipe), out};
}

TEST(KafkaDumpLogCleanedTest, ReadsASegmentCleanedByWeir) {
  const fs::path root = fs::path(WEIR_SOURCE_DIR);
  const fs::path tool = root / "tests" / "kafka" / "bin" / "kafka-dump-log";
  if (!fs::exists(root / ".cache" / "kafka" / "cp.txt") || std::system("command -v java > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "Kafka tools not set up (scripts/setup-kafka.sh)";
  }
  TempDir tmp;
  ManualClock clock;
  LogConfig config = compacted();
  config.index_interval_bytes = 300;
  const fs::path dir = tmp.path() / "cleaned-0";
  auto opened = PartitionLog::open(PosixFileSystem::instance(), dir, config, clock, {.clean_shutdown = true});
  ASSERT_TRUE(opened.has_value());
  PartitionLog& log = **opened;
  auto put = [&](const std::vector<Kv>& records, record::BatchOptions options = {},
                 record::Compression codec = record::Compression::none) {
    auto batch = kv_batch(records, clock.wall_ms(), options, codec);
    ASSERT_TRUE(log.append_as_leader(batch, 2).has_value());
  };
  for (int i = 0; i < 60; ++i) {
    const record::Compression codec = i % 3 == 0 ? record::Compression::gzip : record::Compression::none;
    put({{"key-" + std::to_string(i % 9), "value-" + std::to_string(i) + std::string(40, 'v')},
         {"other-" + std::to_string(i % 5), std::string(30, 'o')}},
        {}, codec);
    if (i % 10 == 4) put({{"key-" + std::to_string(i % 9), std::nullopt}});
    if (i % 7 == 0) put({{"prod", std::to_string(i)}}, {.producer_id = 11, .producer_epoch = 0, .base_sequence = i});
    if (i % 20 == 19) {
      ASSERT_TRUE(log.roll().has_value());
    }
  }
  put({{"key-1", "aborted"}}, {.producer_id = 12, .producer_epoch = 0, .base_sequence = 0, .transactional = true});
  auto marker = record::build_end_txn_marker_batch({.producer_id = 12,
                                                    .producer_epoch = 0,
                                                    .commit = false,
                                                    .timestamp_ms = clock.wall_ms(),
                                                    .base_offset = log.log_end_offset(),
                                                    .partition_leader_epoch = 2});
  ASSERT_TRUE(log.append_with_offsets(marker).has_value());
  ASSERT_TRUE(log.append_aborted_transaction({12, log.log_end_offset() - 2, log.log_end_offset() - 1, 0}).has_value());
  put({{"key-1", "last"}});
  ASSERT_TRUE(log.roll().has_value());
  log.update_high_watermark(log.log_end_offset());
  LogCleaner cleaner;
  const CleanResult result = testing::clean_fully(cleaner, log, clock.wall_ms());
  ASSERT_EQ(result.state, CleanState::kCompleted);
  ASSERT_GT(result.stats.batches_rewritten, 0);
  ASSERT_GT(result.stats.batches_removed, 0);
  ASSERT_TRUE(log.close().has_value());

  std::vector<fs::path> sorted;
  for (const auto& e : fs::directory_iterator(dir)) sorted.push_back(e.path());
  std::sort(sorted.begin(), sorted.end());
  std::string files;
  int segments = 0;
  for (const auto& p : sorted) {
    const auto ext = p.extension();
    if (ext != ".log" && ext != ".index" && ext != ".timeindex" && ext != ".txnindex") continue;
    files += (files.empty() ? "" : ",") + p.string();
    segments += ext == ".log";
  }
  const auto [status, out] = run(tool.string() + " --files " + files + " --print-data-log --deep-iteration 2>&1");
  ASSERT_EQ(status, 0) << out;
  EXPECT_EQ(out.find("isvalid: false"), std::string::npos) << out;
  EXPECT_EQ(out.find("Exception"), std::string::npos) << out;
  EXPECT_EQ(out.find("mismatch"), std::string::npos) << out;
  EXPECT_NE(out.find("compresscodec: gzip"), std::string::npos) << out;
  EXPECT_NE(out.find("count: 0"), std::string::npos) << "an empty batch kept for producer 11\n" << out;
  EXPECT_NE(out.find("endTxnMarker: ABORT"), std::string::npos) << out;
  EXPECT_NE(out.find("payload: last"), std::string::npos) << out;
  EXPECT_EQ(out.find("payload: aborted"), std::string::npos) << out;
  const auto [sanity_status, sanity] = run(tool.string() + " --files " + files + " --index-sanity-check 2>&1");
  ASSERT_EQ(sanity_status, 0) << sanity;
  EXPECT_EQ(sanity.find("Exception"), std::string::npos) << sanity;
  EXPECT_EQ(sanity.find("corrupt"), std::string::npos) << sanity;
  std::size_t checked = 0;  // each .index and .timeindex passes, or is empty (the active segment's)
  for (std::string_view verdict : {"passed sanity check", "is empty"}) {
    for (std::size_t at = sanity.find(verdict); at != std::string::npos; at = sanity.find(verdict, at + 1)) ++checked;
  }
  EXPECT_EQ(checked, static_cast<std::size_t>(2 * segments)) << sanity;
  if (const char* keep = std::getenv("WEIR_STORAGE_INTEROP_OUT")) {
    std::ofstream(fs::path(keep) / "dump-cleaned-log.txt") << out << "\n----\n" << sanity;
  }
}

}  // namespace
}  // namespace weir::storage
