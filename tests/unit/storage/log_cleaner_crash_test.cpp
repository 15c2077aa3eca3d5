// The cleaner's swap is atomic: a crash at any step of a clean leaves the old segments or the new
// ones once the log is reopened (PartitionLog's recovery of .cleaned/.swap/.deleted files), never a
// mix, and nothing is lost.
#include <gtest/gtest.h>

#include "cleaner_test_util.h"
#include "storage/fault_file_system.h"

namespace weir::storage {
namespace {

using testing::clean_fully;
using testing::data_records;
using testing::Kv;
using testing::kv_batch;
using testing::latest_values;
using testing::read_all;
using testing::Stored;
using testing::TempDir;

namespace fs = std::filesystem;

std::vector<std::vector<std::byte>> batch_bytes(const PartitionLog& log) {
  std::vector<std::vector<std::byte>> out;
  for (auto& b : read_all(log)) out.push_back(std::move(b.bytes));
  return out;
}

std::vector<std::string> leftovers(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.ends_with(".cleaned") || name.ends_with(".swap") || name.ends_with(".deleted")) out.push_back(name);
  }
  return out;
}

class CleanerCrashTest : public ::testing::Test {
 protected:
  TempDir tmp;
  ManualClock clock;
  LogConfig config;
  LogCleaner cleaner;

  void SetUp() override {
    config.cleanup_compact = true;
    config.cleanup_delete = false;
    config.index_interval_bytes = 100;
  }

  // The same log every time: duplicates, a tombstone, a compressed batch, an idempotent producer,
  // an aborted transaction; five segments; all of it durable.
  std::unique_ptr<PartitionLog> build(FileSystem& fs, const fs::path& dir) {
    auto opened = PartitionLog::open(fs, dir, config, clock, {.clean_shutdown = true});
    EXPECT_TRUE(opened.has_value());
    if (!opened) return nullptr;
    PartitionLog& log = **opened;
    auto put = [&](const std::vector<Kv>& records, record::BatchOptions options = {},
                   record::Compression codec = record::Compression::none) {
      auto batch = kv_batch(records, clock.wall_ms(), options, codec);
      EXPECT_TRUE(log.append_as_leader(batch, 1).has_value());
    };
    for (int round = 0; round < 5; ++round) {
      put({{"a", "a" + std::to_string(round)}, {"b", "b" + std::to_string(round)}});
      put({{"c" + std::to_string(round % 2), "c"}, {"d", std::string(200, 'd')}}, {}, record::Compression::zstd);
      put({{"p", "p" + std::to_string(round)}},
          {.producer_id = 4, .producer_epoch = 0, .base_sequence = round});
      if (round == 2) put({{"b", std::nullopt}});
      if (round == 3) {
        put({{"a", "aborted"}}, {.producer_id = 6, .producer_epoch = 0, .base_sequence = 0, .transactional = true});
        auto marker = record::build_end_txn_marker_batch({.producer_id = 6,
                                                          .producer_epoch = 0,
                                                          .commit = false,
                                                          .timestamp_ms = clock.wall_ms(),
                                                          .base_offset = log.log_end_offset()});
        EXPECT_TRUE(log.append_with_offsets(marker).has_value());
        EXPECT_TRUE(
            log.append_aborted_transaction({6, log.log_end_offset() - 2, log.log_end_offset() - 1, 0}).has_value());
      }
      EXPECT_TRUE(log.roll().has_value());
    }
    log.update_high_watermark(log.log_end_offset());
    EXPECT_TRUE(log.flush().has_value());
    return std::move(*opened);
  }

  struct Outcome {
    std::vector<std::vector<std::byte>> batches;
    std::vector<Stored> records;
    bool clean_failed = false;
    std::vector<std::string> leftovers;
    std::vector<std::vector<std::byte>> batches_cleaned_again;
  };

  // Builds the log, lets the file system fail from its n-th mutating operation of the clean on,
  // crashes, and reopens.
  Outcome crash_after(std::int64_t n, CrashMode mode, const fs::path& dir) {
    FaultInjectingFileSystem fs;
    auto log = build(fs, dir);
    fs.fail_after(n);
    Outcome outcome;
    for (int calls = 0; calls < 1000; ++calls) {
      auto result = cleaner.clean(*log, clock.wall_ms(), std::int64_t{1} << 40);
      if (!result) {
        outcome.clean_failed = true;
        break;
      }
      if (result->state != CleanState::kInProgress) break;
    }
    const std::int64_t recovery_point = log->recovery_point();
    log.reset();  // the process dies
    fs.crash(mode);
    fs.fail_after(std::nullopt);
    auto reopened =
        PartitionLog::open(fs, dir, config, clock, {.clean_shutdown = false, .recovery_point = recovery_point});
    EXPECT_TRUE(reopened.has_value()) << n;
    if (!reopened) return outcome;
    outcome.batches = batch_bytes(**reopened);
    outcome.records = data_records(**reopened);
    outcome.leftovers = leftovers(dir);
    // And the log goes on: cleaning it now finishes the job.
    (*reopened)->update_high_watermark((*reopened)->log_end_offset());
    clean_fully(cleaner, **reopened, clock.wall_ms());
    outcome.batches_cleaned_again = batch_bytes(**reopened);
    return outcome;
  }
};

TEST_F(CleanerCrashTest, ACrashAtAnyStepLeavesTheOldSegmentsOrTheNew) {
  auto reference = build(PosixFileSystem::instance(), tmp.path() / "reference-0");
  const auto before = batch_bytes(*reference);
  const auto latest_before = latest_values(data_records(*reference));
  ASSERT_EQ(clean_fully(cleaner, *reference, clock.wall_ms()).stats.segments_written, 1) << "one group";
  const auto after = batch_bytes(*reference);
  ASSERT_NE(before, after);
  ASSERT_EQ(latest_values(data_records(*reference)), latest_before);

  std::int64_t operations = 0;
  {
    FaultInjectingFileSystem fs;
    auto log = build(fs, tmp.path() / "count-0");
    const std::int64_t start = fs.mutating_operations();
    clean_fully(cleaner, *log, clock.wall_ms());
    operations = fs.mutating_operations() - start;
    ASSERT_EQ(batch_bytes(*log), after);
  }
  ASSERT_GT(operations, 15);

  int old_seen = 0;
  int new_seen = 0;
  int completed_by_recovery = 0;
  for (CrashMode mode : {CrashMode::kDropUnsynced, CrashMode::kTearLastWrite}) {
    for (std::int64_t n = 0; n <= operations; ++n) {
      SCOPED_TRACE(::testing::Message() << "failing from operation " << n << " mode " << static_cast<int>(mode));
      const fs::path dir = tmp.path() / fmt::format("crash{}x{}-0", static_cast<int>(mode), n);
      const Outcome outcome = crash_after(n, mode, dir);
      EXPECT_TRUE(outcome.leftovers.empty()) << outcome.leftovers.front();
      EXPECT_TRUE(outcome.batches_cleaned_again == after) << "cleaning again ends where the reference did";
      if (outcome.batches == before) {
        ++old_seen;
      } else if (outcome.batches == after) {
        ++new_seen;
        completed_by_recovery += outcome.clean_failed;
      } else {
        ADD_FAILURE() << "neither the old segments nor the new ones";
      }
    }
  }
  EXPECT_GT(old_seen, 0);
  EXPECT_GT(new_seen, 0);
  EXPECT_GT(completed_by_recovery, 0) << "some crashes came after the .swap renames: the open finished the swap";
}

TEST_F(CleanerCrashTest, WithManyGroupsEachSwapIsAtomicAndNothingIsLost) {
  config.segment_bytes = 700;  // several groups
  auto reference = build(PosixFileSystem::instance(), tmp.path() / "reference-0");
  const auto records_before = data_records(*reference);
  const auto latest_before = latest_values(records_before);
  ASSERT_GT(clean_fully(cleaner, *reference, clock.wall_ms()).stats.segments_written, 1);

  std::int64_t operations = 0;
  {
    FaultInjectingFileSystem fs;
    auto log = build(fs, tmp.path() / "count-0");
    const std::int64_t start = fs.mutating_operations();
    clean_fully(cleaner, *log, clock.wall_ms());
    operations = fs.mutating_operations() - start;
  }
  for (std::int64_t n = 0; n <= operations; ++n) {
    SCOPED_TRACE(::testing::Message() << "failing from operation " << n);
    const Outcome outcome = crash_after(n, CrashMode::kDropUnsynced, tmp.path() / fmt::format("crash{}-0", n));
    EXPECT_TRUE(outcome.leftovers.empty());
    EXPECT_EQ(latest_values(outcome.records), latest_before);
    std::int64_t previous = -1;
    for (const Stored& s : outcome.records) {
      EXPECT_GT(s.offset, previous);
      previous = s.offset;
      EXPECT_NE(std::find(records_before.begin(), records_before.end(), s), records_before.end())
          << s << " was not in the log";
    }
  }
}

TEST_F(CleanerCrashTest, SwapFilesOfAnUnfinishedRenameAreRolledBack) {
  FaultInjectingFileSystem fs;
  const fs::path dir = tmp.path() / "swap-0";
  auto log = build(fs, dir);
  const auto before = batch_bytes(*log);
  ASSERT_TRUE(log->close().has_value());
  log.reset();
  // A .log already renamed to .swap, its indexes still .cleaned: the rename never finished.
  const auto name = [&](std::string_view kind, std::string_view suffix) {
    return dir / (Segment::file_name(0, kind) + std::string(suffix));
  };
  fs::copy_file(name(".log", ""), name(".log", ".swap"));
  fs::copy_file(name(".index", ""), name(".index", ".cleaned"));
  auto reopened = PartitionLog::open(fs, dir, config, clock, {.clean_shutdown = true});
  ASSERT_TRUE(reopened.has_value());
  EXPECT_TRUE(leftovers(dir).empty());
  EXPECT_EQ(batch_bytes(**reopened), before);
}

}  // namespace
}  // namespace weir::storage
