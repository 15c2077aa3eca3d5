// The partition service's own logic: the produce purgatory answering acks=all appends once a
// flush covers them, a partition's appends (idempotence, high watermark, waking the fetches that
// watch it), and the service answering acks=all only after the group-commit flush.
#include "broker/partition.h"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <optional>
#include <vector>

#include "base/clock.h"
#include "broker/errors.h"
#include "broker/partition_service.h"
#include "broker/produce_purgatory.h"
#include "broker/shards.h"
#include "storage/flusher.h"
#include "test_util.h"

namespace weir::broker {
namespace {

namespace asio = boost::asio;
using storage::testing::make_batch;
using storage::testing::TempDir;

TEST(ProducePurgatoryTest, AcksWaitUntilTheWatermarkCoversAllTheirOffsets) {
  ProducePurgatory purgatory;
  std::vector<std::pair<int, std::int16_t>> answered;
  purgatory.add(5, [&](std::int16_t e) { answered.emplace_back(1, e); });
  purgatory.add(10, [&](std::int16_t e) { answered.emplace_back(2, e); });
  EXPECT_EQ(purgatory.complete_through(7), 1u);
  ASSERT_EQ(answered.size(), 1u);
  EXPECT_EQ(answered[0], std::make_pair(1, std::int16_t{0}));
  EXPECT_EQ(purgatory.complete_through(9), 0u);
  EXPECT_EQ(purgatory.complete_through(10), 1u);
  ASSERT_EQ(answered.size(), 2u);
  EXPECT_EQ(answered[1], std::make_pair(2, std::int16_t{0}));
  EXPECT_EQ(purgatory.waiting(), 0u);
}

TEST(ProducePurgatoryTest, FailedFlushAnswersTheWaitersItCoveredWithItsError) {
  ProducePurgatory purgatory;
  std::vector<std::int16_t> errors;
  for (std::int64_t end : {5, 10, 15}) purgatory.add(end, [&](std::int16_t e) { errors.push_back(e); });
  const std::int16_t storage_error = code(ErrorCode::kKafkaStorageError);
  EXPECT_EQ(purgatory.fail_through(10, storage_error), 2u);
  EXPECT_EQ(errors, (std::vector<std::int16_t>{storage_error, storage_error}));
  EXPECT_EQ(purgatory.complete_through(15), 1u);
  EXPECT_EQ(errors.back(), 0);
}

class PartitionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = storage::PartitionLog::open(storage::PosixFileSystem::instance(), tmp.path() / "t-0", {}, clock, {});
    ASSERT_TRUE(opened.has_value());
    log = std::move(*opened);
    partition = std::make_unique<Partition>("t", Uuid::random(), 0, 3, log.get());
  }
  void TearDown() override {
    partition.reset();
    ASSERT_TRUE(log->close().has_value());
  }

  TempDir tmp;
  ManualClock clock;
  std::unique_ptr<storage::PartitionLog> log;
  std::unique_ptr<Partition> partition;
};

TEST_F(PartitionTest, AppendMovesTheHighWatermarkAndWakesTheWatchersOnce) {
  int woken = 0;
  std::int64_t seen_high_watermark = -1;
  partition->watch([&] {
    ++woken;
    seen_high_watermark = partition->high_watermark();
  });
  auto batch = make_batch(3, clock.wall_ms());
  const PartitionAppend first = partition->append(batch, AppendOrigin::kClient);
  ASSERT_EQ(first.error, 0);
  EXPECT_TRUE(first.appended);
  EXPECT_EQ(first.base_offset, 0);
  EXPECT_EQ(first.end_offset, 3);
  EXPECT_EQ(woken, 1);
  EXPECT_EQ(seen_high_watermark, 3);
  EXPECT_EQ(log->high_watermark(), 3);
  EXPECT_EQ(partition->traffic().messages_in, 3u);

  auto second_batch = make_batch(2, clock.wall_ms());
  EXPECT_EQ(partition->append(second_batch, AppendOrigin::kClient).base_offset, 3);
  EXPECT_EQ(woken, 1) << "a watch is used once";
}

TEST_F(PartitionTest, RetriedIdempotentBatchIsAnsweredWithItsFirstOffsetsAndNotWrittenAgain) {
  const record::BatchOptions producer{.producer_id = 7, .producer_epoch = 0, .base_sequence = 0};
  auto batch = make_batch(2, clock.wall_ms(), 16, producer);
  auto retry = batch;
  ASSERT_EQ(partition->append(batch, AppendOrigin::kClient).error, 0);
  int woken = 0;
  partition->watch([&] { ++woken; });
  const PartitionAppend again = partition->append(retry, AppendOrigin::kClient);
  EXPECT_EQ(again.error, 0);
  EXPECT_FALSE(again.appended);
  EXPECT_EQ(again.base_offset, 0);
  EXPECT_EQ(log->log_end_offset(), 2);
  EXPECT_EQ(woken, 0) << "nothing new to read";
}

TEST_F(PartitionTest, StaleOrFutureLeaderEpochsAreRefused) {
  EXPECT_EQ(partition->leader_epoch_error(-1), 0);
  EXPECT_EQ(partition->leader_epoch_error(3), 0);
  EXPECT_EQ(partition->leader_epoch_error(2), code(ErrorCode::kFencedLeaderEpoch));
  EXPECT_EQ(partition->leader_epoch_error(4), code(ErrorCode::kUnknownLeaderEpoch));
  const PartitionRead read = partition->read(0, 1024, 2, ReadBound::kHighWatermark, true);
  EXPECT_EQ(read.error, code(ErrorCode::kFencedLeaderEpoch));
  EXPECT_EQ(read.high_watermark, -1);
}

// The service with one shard and a running flusher: acks=all is answered once the append is
// durable (the recovery point covers it); acks=1 at once.
class PartitionServiceTest : public PartitionTest {
 protected:
  void SetUp() override {
    PartitionTest::SetUp();
    shards = std::make_unique<ShardSet>(std::vector<asio::any_io_executor>{io.get_executor()});
    shards->table(0).add(std::move(partition));
    flusher.start();
    service = std::make_unique<PartitionService>(*shards);
    service->start(flusher, /*durable_acks_all=*/true);
  }
  void TearDown() override {
    service->stop();
    flusher.stop();
    shards.reset();
    ASSERT_TRUE(log->close().has_value());
  }

  // Appends a batch with `acks`; returns the outcome and the log's recovery point when answered.
  std::pair<PartitionAppend, std::int64_t> produce(Acks acks) {
    std::vector<std::byte> batch = make_batch(4, clock.wall_ms());
    std::optional<std::pair<PartitionAppend, std::int64_t>> out;
    asio::co_spawn(
        io,
        [&]() -> asio::awaitable<void> {
          std::vector<ProduceSpec> specs{ProduceSpec{PartitionRef{"t", 0}, batch}};
          auto outcomes = co_await service->append(std::move(specs), acks);
          out.emplace(outcomes.at(0), log->recovery_point());
        },
        asio::detached);
    io.restart();
    io.run();
    EXPECT_TRUE(out.has_value());
    return out.value_or(std::pair<PartitionAppend, std::int64_t>{});
  }

  asio::io_context io;
  storage::Flusher flusher{storage::PosixFileSystem::instance()};
  std::unique_ptr<ShardSet> shards;
  std::unique_ptr<PartitionService> service;
};

TEST_F(PartitionServiceTest, AcksAllIsAnsweredOnlyOnceTheFlushCoversTheAppend) {
  const auto [leader_only, recovery_after_leader] = produce(Acks::kLeader);
  EXPECT_EQ(leader_only.error, 0);
  EXPECT_EQ(leader_only.base_offset, 0);
  EXPECT_EQ(recovery_after_leader, 0) << "acks=1 does not wait for a flush";

  const auto [all, recovery_after_all] = produce(Acks::kAll);
  EXPECT_EQ(all.error, 0);
  EXPECT_EQ(all.base_offset, 4);
  EXPECT_EQ(recovery_after_all, 8) << "acks=all is answered after the flush covering offsets 4..7";
  EXPECT_EQ(shards->table(0).find("t", 0)->purgatory()->waiting(), 0u);
}

TEST_F(PartitionServiceTest, ListOffsetsOfAPartitionNotHostedHereIsUnknown) {
  std::optional<std::vector<OffsetLookup>> found;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        std::vector<OffsetQuery> queries{OffsetQuery{PartitionRef{"t", 0}, -1, -1},
                                         OffsetQuery{PartitionRef{"t", 1}, -1, -1}};
        found = co_await service->list_offsets(queries);
      },
      asio::detached);
  io.run();
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ((*found)[0].error, 0);
  EXPECT_EQ((*found)[0].offset, 0);
  EXPECT_EQ((*found)[1].error, code(ErrorCode::kUnknownTopicOrPartition));
}

}  // namespace
}  // namespace weir::broker
