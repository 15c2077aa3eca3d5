// PartitionLog::append_as_follower: the leader's batches copied as they are.
#include <gtest/gtest.h>

#include "storage/partition_log.h"
#include "test_util.h"

namespace weir::storage {
namespace {

using testing::make_batch;
using testing::read_all;
using testing::TempDir;

class FollowerAppendTest : public ::testing::Test {
 protected:
  TempDir tmp;
  PosixFileSystem fs;
  ManualClock clock;
  std::unique_ptr<PartitionLog> leader;
  std::unique_ptr<PartitionLog> follower;

  void SetUp() override {
    auto l = PartitionLog::open(fs, tmp.path() / "t-0", LogConfig{}, clock, {.clean_shutdown = true});
    auto f = PartitionLog::open(fs, tmp.path() / "f-0", LogConfig{}, clock, {.clean_shutdown = true});
    ASSERT_TRUE(l.has_value() && f.has_value());
    leader = std::move(*l);
    follower = std::move(*f);
  }
  // The bytes the leader stored from `from` on.
  std::vector<std::byte> leader_bytes(std::int64_t from) {
    auto read = leader->read(from, 1 << 20, leader->log_end_offset(), true);
    EXPECT_TRUE(read.has_value());
    std::vector<std::uint8_t> out;
    EXPECT_TRUE(read->append_to(out).has_value());
    std::vector<std::byte> bytes(out.size());
    std::memcpy(bytes.data(), out.data(), out.size());
    return bytes;
  }
};

TEST_F(FollowerAppendTest, KeepsOffsetsAndEpochsAndLeavesTheHighWatermark) {
  auto b1 = make_batch(3, clock.wall_ms());
  auto b2 = make_batch(2, clock.wall_ms());
  ASSERT_TRUE(leader->append_as_leader(b1, 4).has_value());
  ASSERT_TRUE(leader->append_as_leader(b2, 7).has_value());
  auto info = follower->append_as_follower(leader_bytes(0));
  ASSERT_TRUE(info.has_value()) << info.error();
  EXPECT_EQ(info->first_offset, 0);
  EXPECT_EQ(info->last_offset, 4);
  EXPECT_EQ(follower->log_end_offset(), 5);
  EXPECT_EQ(follower->high_watermark(), 0) << "an append does not move the HW";
  EXPECT_EQ(follower->epoch_entries(), leader->epoch_entries());
  EXPECT_EQ(follower->epoch_entries().back(), (EpochEntry{7, 3}));
  EXPECT_EQ(read_all(*follower).size(), 2U);
  follower->update_high_watermark(100);
  EXPECT_EQ(follower->high_watermark(), 5) << "clamped to the LEO";
}

TEST_F(FollowerAppendTest, RefusesBatchesBelowTheLogEndAndCorruptBytes) {
  auto b1 = make_batch(3, clock.wall_ms());
  ASSERT_TRUE(leader->append_as_leader(b1, 1).has_value());
  auto bytes = leader_bytes(0);
  ASSERT_TRUE(follower->append_as_follower(bytes).has_value());
  EXPECT_EQ(follower->append_as_follower(bytes).error(), Errc::kInvalidRecord) << "UNEXPECTED_APPEND_OFFSET";
  auto b2 = make_batch(1, clock.wall_ms());
  ASSERT_TRUE(leader->append_as_leader(b2, 1).has_value());
  auto next = leader_bytes(3);
  next.back() ^= std::byte{1};
  EXPECT_FALSE(follower->append_as_follower(next).has_value()) << "CRC";
  EXPECT_EQ(follower->log_end_offset(), 3) << "all or nothing";
}

TEST_F(FollowerAppendTest, TruncateToCutsTheEpochCache) {
  auto b1 = make_batch(3, clock.wall_ms());
  auto b2 = make_batch(2, clock.wall_ms());
  ASSERT_TRUE(leader->append_as_leader(b1, 1).has_value());
  ASSERT_TRUE(leader->append_as_leader(b2, 2).has_value());
  ASSERT_TRUE(follower->append_as_follower(leader_bytes(0)).has_value());
  ASSERT_TRUE(follower->truncate_to(3).has_value());
  EXPECT_EQ(follower->log_end_offset(), 3);
  ASSERT_EQ(follower->epoch_entries().size(), 1U);
  EXPECT_EQ(follower->epoch_entries().back(), (EpochEntry{1, 0}));
}

// A former leader that appended nothing in its epoch has that epoch's entry at its log end; a
// truncation to (or past) the log end drops it, as Kafka's truncateTo, or the next fetch would
// name it as the last fetched epoch again and diverge forever.
TEST_F(FollowerAppendTest, TruncateToTheLogEndDropsAnEpochWithoutRecords) {
  auto b1 = make_batch(3, clock.wall_ms());
  ASSERT_TRUE(follower->append_as_leader(b1, 0).has_value());
  follower->assign_leader_epoch(1);
  ASSERT_EQ(follower->epoch_entries().back(), (EpochEntry{1, 3}));
  ASSERT_TRUE(follower->truncate_to(3).has_value());
  EXPECT_EQ(follower->log_end_offset(), 3);
  ASSERT_EQ(follower->epoch_entries().size(), 1U);
  EXPECT_EQ(follower->epoch_entries().back(), (EpochEntry{0, 0}));
  EXPECT_EQ(follower->latest_epoch(), 0);
  ASSERT_TRUE(follower->truncate_to(10).has_value());  // past the end: nothing else changes
  EXPECT_EQ(follower->log_end_offset(), 3);
  EXPECT_EQ(follower->epoch_entries().size(), 1U);
}

}  // namespace
}  // namespace weir::storage
