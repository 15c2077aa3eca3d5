// The partition service's own logic: the produce purgatory answering acks=all appends once a
// flush covers them, a partition's appends (idempotence, high watermark, waking the fetches that
// watch it), and the service answering acks=all only after the group-commit flush.
#include "broker/partition.h"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/clock.h"
#include "broker/errors.h"
#include "broker/partition_service.h"
#include "broker/produce_purgatory.h"
#include "broker/shards.h"
#include "broker/txn_verifier.h"
#include "protocol/record/control_record.h"
#include "protocol/record/record.h"
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

TEST(ProducePurgatoryTest, ManyWaitersAnsweredInPartsKeepOffsetOrderAcrossCompletionsThatAddMore) {
  // Waiters answered a few at a time (the answered prefix is dropped as it grows), a late waiter
  // with a lower end offset placed in order, and a completion adding a waiter: each is answered
  // once, in offset order.
  ProducePurgatory purgatory;
  std::vector<std::int64_t> answered;
  for (std::int64_t end = 1; end <= 200; ++end) {
    purgatory.add(end * 10, [&answered, end](std::int16_t e) {
      EXPECT_EQ(e, 0);
      answered.push_back(end * 10);
    });
  }
  purgatory.add(5, [&](std::int16_t) { answered.push_back(5); });
  for (std::int64_t w = 100; w <= 1500; w += 100) (void)purgatory.complete_through(w);
  purgatory.add(1495, [&](std::int16_t) { answered.push_back(1495); });  // below waiters still there
  EXPECT_EQ(purgatory.waiting(), 51u);
  // Answering 1510 adds a waiter the same pass covers (1505), and one it does not (3000).
  purgatory.add(1510, [&](std::int16_t) {
    answered.push_back(1510);
    purgatory.add(1505, [&](std::int16_t) { answered.push_back(1505); });
    purgatory.add(3000, [&](std::int16_t) { answered.push_back(3000); });
  });
  EXPECT_EQ(purgatory.complete_through(1510), 4u);  // 1495, both 1510s, 1505
  EXPECT_EQ(purgatory.complete_through(2000), 49u);
  EXPECT_EQ(purgatory.waiting(), 1u);
  EXPECT_EQ(purgatory.complete_through(3000), 1u);
  EXPECT_EQ(purgatory.waiting(), 0u);
  std::vector<std::int64_t> expected{5};
  for (std::int64_t end = 1; end <= 150; ++end) expected.push_back(end * 10);
  for (std::int64_t v : {1495, 1510, 1510, 1505}) expected.push_back(v);
  for (std::int64_t end = 152; end <= 200; ++end) expected.push_back(end * 10);
  expected.push_back(3000);
  EXPECT_EQ(answered, expected);
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

TEST_F(PartitionTest, AppendsPutTheLogOnTheFlushWatchOnlyWhenAPeriodicFlushMayBecomeDue) {
  FlushWatch watch;
  partition->attach_flush_watch(&watch);
  auto append = [&] {
    auto batch = make_batch(2, clock.wall_ms());
    ASSERT_EQ(partition->append(batch, AppendOrigin::kClient).error, 0);
  };
  // No roll and no flush.ms: nothing periodic can make this log due.
  append();
  EXPECT_EQ(watch.size(), 0u);
  // A rolled segment not yet flushed: watched, once however many appends follow.
  ASSERT_TRUE(log->roll().has_value());
  append();
  append();
  ASSERT_EQ(watch.size(), 1u);
  auto taken = watch.take();
  ASSERT_EQ(taken.size(), 1u);
  EXPECT_EQ(taken[0].topic, "t");
  EXPECT_EQ(taken[0].index, 0);
  EXPECT_TRUE(partition->take_flush_watch());
  EXPECT_FALSE(partition->take_flush_watch()) << "an entry is current once";
  // Flushed: appends to the same active segment leave it off the watch again.
  ASSERT_TRUE(log->flush().has_value());
  append();
  EXPECT_EQ(watch.size(), 0u);
  // A finite flush.ms: every log holding unflushed messages is watched.
  storage::LogConfig timed = log->config();
  timed.flush_ms = 1000;
  log->set_config(timed);
  append();
  EXPECT_EQ(watch.size(), 1u);
  // Taken and put back by hand (the check keeps a timed log that is not due yet).
  (void)watch.take();
  EXPECT_TRUE(partition->take_flush_watch());
  partition->watch_flush();
  partition->watch_flush();
  EXPECT_EQ(watch.size(), 1u);
}

TEST(PartitionTableTest, TheCompactedWalkVisitsOnlyCompactedPartitionsAndFollowsConfigChanges) {
  TempDir tmp;
  ManualClock clock;
  std::vector<std::unique_ptr<storage::PartitionLog>> logs;
  PartitionTable table;
  auto add = [&](const std::string& topic, std::int32_t index, bool compact) {
    storage::LogConfig config;
    config.cleanup_compact = compact;
    config.cleanup_delete = !compact;
    auto opened = storage::PartitionLog::open(storage::PosixFileSystem::instance(),
                                              tmp.path() / (topic + "-" + std::to_string(index)), config, clock, {});
    ASSERT_TRUE(opened.has_value());
    logs.push_back(std::move(*opened));
    table.add(std::make_unique<Partition>(topic, Uuid::random(), index, 0, logs.back().get()));
  };
  auto set_compact = [&](const std::string& topic, std::int32_t index, bool compact) {
    Partition* p = table.find(topic, index);
    ASSERT_NE(p, nullptr);
    storage::LogConfig config = p->log().config();
    config.cleanup_compact = compact;
    config.cleanup_delete = !compact;
    p->log().set_config(config);
    table.config_changed(*p);
  };
  auto compacted = [&] {
    std::set<std::string> seen;
    table.for_each_compacted([&](Partition& p) { seen.insert(p.topic() + "-" + std::to_string(p.index())); });
    return seen;
  };
  add("c", 0, true);
  add("c", 1, true);
  add("d", 0, false);
  add("d", 1, false);
  EXPECT_EQ(compacted(), (std::set<std::string>{"c-0", "c-1"}));
  // A partition of a delete topic switched to compact is found; one switched back is not.
  set_compact("d", 1, true);
  EXPECT_EQ(compacted(), (std::set<std::string>{"c-0", "c-1", "d-1"}));
  set_compact("c", 0, false);
  set_compact("c", 1, false);
  EXPECT_EQ(compacted(), (std::set<std::string>{"d-1"}));
  // A topic dropped from the walk (none of its partitions compacted) comes back when one is.
  set_compact("c", 1, true);
  EXPECT_EQ(compacted(), (std::set<std::string>{"c-1", "d-1"}));
  // Removed partitions are not visited.
  EXPECT_TRUE(table.remove("d", 1));
  EXPECT_EQ(compacted(), (std::set<std::string>{"c-1"}));
  EXPECT_EQ(table.remove_topic("c").size(), 2u);
  EXPECT_EQ(compacted(), (std::set<std::string>{}));
  // The walk other periodic work uses: the topics here and their partitions by index.
  EXPECT_EQ(table.topic_names(), (std::vector<std::string>{"d"}));
  const auto* d = table.partitions_of("d");
  ASSERT_NE(d, nullptr);
  ASSERT_EQ(d->size(), 2u);
  EXPECT_NE((*d)[0], nullptr);
  EXPECT_EQ((*d)[1], nullptr);  // removed above
  EXPECT_EQ(table.partitions_of("c"), nullptr);
  EXPECT_EQ(table.remove_topic("d").size(), 1u);
  for (auto& log : logs) ASSERT_TRUE(log->close().has_value());
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

// ---- transactions: markers, the last stable offset, read_committed, verification guards

record::BatchOptions txn_producer(std::int64_t pid, std::int32_t seq, std::int16_t epoch = 0) {
  return record::BatchOptions{.producer_id = pid, .producer_epoch = epoch, .base_sequence = seq, .transactional = true};
}

class PartitionTxnTest : public PartitionTest {
 protected:
  PartitionAppend produce_txn(std::int64_t pid, std::int32_t seq, int count,
                              std::optional<VerificationGuard> guard = std::nullopt) {
    auto batch = make_batch(count, clock.wall_ms(), 16, txn_producer(pid, seq));
    return partition->append(batch, AppendOrigin::kClient, nullptr, guard);
  }
  PartitionAppend produce_plain(int count) {
    auto batch = make_batch(count, clock.wall_ms());
    return partition->append(batch, AppendOrigin::kClient);
  }
};

TEST_F(PartitionTxnTest, AMarkerIsOneControlBatchAsKafkaWritesIt) {
  ASSERT_EQ(produce_txn(7, 0, 2).error, 0);
  const PartitionAppend m = partition->write_marker(7, 0, /*coordinator_epoch=*/5, /*commit=*/true);
  ASSERT_EQ(m.error, 0);
  EXPECT_TRUE(m.appended);
  EXPECT_EQ(m.base_offset, 2);
  EXPECT_EQ(m.end_offset, 3);
  EXPECT_EQ(log->log_end_offset(), 3);
  EXPECT_EQ(partition->high_watermark(), 3);
  auto batches = storage::testing::read_batches(*log, 2);
  ASSERT_TRUE(batches.has_value());
  ASSERT_EQ(batches->size(), 1u);
  auto view = record::RecordBatchView::from((*batches)[0].bytes);
  ASSERT_TRUE(view.has_value());
  EXPECT_EQ(view->base_offset(), 2);
  EXPECT_EQ(view->last_offset_delta(), 0);
  EXPECT_EQ(view->records_count(), 1);
  EXPECT_EQ(view->attributes(), 0x30) << "transactional and control, uncompressed, CreateTime";
  EXPECT_EQ(view->producer_id(), 7);
  EXPECT_EQ(view->producer_epoch(), 0);
  EXPECT_EQ(view->base_sequence(), -1);
  EXPECT_EQ(view->partition_leader_epoch(), 3);
  EXPECT_EQ(view->base_timestamp(), clock.wall_ms());
  EXPECT_EQ(view->max_timestamp(), clock.wall_ms());
  int records = 0;
  auto ok = record::for_each_record(*view, [&](const record::RecordView& r) {
    ++records;
    ASSERT_TRUE(r.key.has_value());
    ASSERT_TRUE(r.value.has_value());
    auto key = record::parse_control_key(*r.key);
    ASSERT_TRUE(key.has_value());
    EXPECT_TRUE(key->is(record::ControlRecordType::commit));
    auto marker = record::parse_end_txn_marker(*r.value);
    ASSERT_TRUE(marker.has_value());
    EXPECT_EQ(marker->coordinator_epoch, 5);
  });
  EXPECT_TRUE(ok.has_value());
  EXPECT_EQ(records, 1);
  EXPECT_EQ(partition->producers().find(7)->coordinator_epoch, 5);
}

TEST_F(PartitionTxnTest, TheLastStableOffsetFollowsTheOldestOpenTransaction) {
  ASSERT_EQ(produce_txn(1, 0, 2).error, 0);  // 0-1
  EXPECT_EQ(partition->last_stable_offset(), 0);
  ASSERT_EQ(produce_plain(1).error, 0);      // 2
  ASSERT_EQ(produce_txn(2, 0, 1).error, 0);  // 3
  EXPECT_EQ(partition->last_stable_offset(), 0);
  EXPECT_EQ(log->last_stable_offset(), 0) << "the log (and its cleaner) knows the first unstable offset";
  ASSERT_EQ(partition->write_marker(1, 0, 0, true).error, 0);  // 4
  EXPECT_EQ(partition->last_stable_offset(), 3);
  ASSERT_EQ(partition->write_marker(2, 0, 0, false).error, 0);  // 5
  EXPECT_EQ(partition->last_stable_offset(), 6);
  EXPECT_EQ(partition->high_watermark(), 6);
}

TEST_F(PartitionTxnTest, AnAbortAddsItsTxnIndexEntryWithTheLastStableOffsetOnceCompleted) {
  ASSERT_EQ(produce_txn(1, 0, 2).error, 0);                     // 0-1, stays open
  ASSERT_EQ(produce_txn(2, 0, 1).error, 0);                     // 2
  ASSERT_EQ(partition->write_marker(2, 0, 0, false).error, 0);  // 3
  ASSERT_EQ(produce_txn(3, 0, 1).error, 0);                     // 4
  ASSERT_EQ(partition->write_marker(1, 0, 0, false).error, 0);  // 5
  ASSERT_EQ(partition->write_marker(3, 0, 0, true).error, 0);   // 6: a commit has no entry
  auto aborted = log->collect_aborted_transactions(0, log->log_end_offset());
  ASSERT_TRUE(aborted.has_value());
  EXPECT_EQ(*aborted, (std::vector<storage::AbortedTxn>{{2, 2, 3, 0}, {1, 0, 5, 4}}));
}

TEST_F(PartitionTxnTest, StaleMarkersAreRefusedAndWriteNothing) {
  ASSERT_EQ(produce_txn(1, 0, 1, std::nullopt).error, 0);
  ASSERT_EQ(partition->write_marker(1, 0, 4, true).error, 0);
  const std::int64_t end = log->log_end_offset();
  EXPECT_EQ(partition->write_marker(1, 0, 3, false).error, code(ErrorCode::kTransactionCoordinatorFenced));
  auto newer = make_batch(1, clock.wall_ms(), 16, txn_producer(1, 0, 1));
  ASSERT_EQ(partition->append(newer, AppendOrigin::kClient).error, 0);
  EXPECT_EQ(partition->write_marker(1, 0, 4, false).error, code(ErrorCode::kInvalidProducerEpoch));
  EXPECT_EQ(log->log_end_offset(), end + 1) << "only the epoch-1 batch was written";
  EXPECT_EQ(partition->last_stable_offset(), end) << "epoch 1's transaction is still open";
}

TEST_F(PartitionTxnTest, AMarkerForAProducerWithoutAnOpenTransactionIsWrittenAnyway) {
  ASSERT_EQ(produce_plain(2).error, 0);
  const PartitionAppend m = partition->write_marker(42, 0, 0, false);
  EXPECT_EQ(m.error, 0);
  EXPECT_EQ(m.base_offset, 2);
  EXPECT_EQ(partition->last_stable_offset(), 3);
  auto aborted = log->collect_aborted_transactions(0, log->log_end_offset());
  ASSERT_TRUE(aborted.has_value());
  EXPECT_TRUE(aborted->empty()) << "an empty transaction leaves no .txnindex entry";
}

TEST_F(PartitionTxnTest, ReadCommittedStopsAtTheLastStableOffsetAndNamesTheAbortedTransactions) {
  ASSERT_EQ(produce_txn(1, 0, 2).error, 0);                     // 0-1
  ASSERT_EQ(partition->write_marker(1, 0, 0, false).error, 0);  // 2
  ASSERT_EQ(produce_txn(2, 0, 1).error, 0);                     // 3, open
  const PartitionRead committed = partition->read(0, 1 << 20, -1, ReadBound::kLastStable, true);
  ASSERT_EQ(committed.error, 0);
  EXPECT_EQ(committed.last_stable_offset, 3);
  EXPECT_EQ(committed.high_watermark, 4);
  ASSERT_TRUE(committed.aborted.has_value());
  EXPECT_EQ(*committed.aborted, (std::vector<storage::AbortedTxn>{{1, 0, 2, 3}}));
  const PartitionRead all = partition->read(0, 1 << 20, -1, ReadBound::kHighWatermark, true);
  EXPECT_GT(all.size(), committed.size()) << "read_uncommitted also returns the open transaction's batch";
  EXPECT_FALSE(all.aborted.has_value());
  EXPECT_EQ(all.last_stable_offset, 3);
  const PartitionRead at_lso = partition->read(3, 1 << 20, -1, ReadBound::kLastStable, true);
  EXPECT_EQ(at_lso.size(), 0);
  ASSERT_TRUE(at_lso.aborted.has_value());
  EXPECT_TRUE(at_lso.aborted->empty());
}

TEST_F(PartitionTxnTest, ListOffsetsLatestAtReadCommittedIsTheLastStableOffset) {
  ASSERT_EQ(produce_plain(2).error, 0);
  ASSERT_EQ(produce_txn(1, 0, 2).error, 0);
  EXPECT_EQ(partition->lookup_offset(-1, -1, ReadBound::kLastStable).offset, 2);
  EXPECT_EQ(partition->lookup_offset(-1, -1, ReadBound::kHighWatermark).offset, 4);
}

TEST_F(PartitionTxnTest, ALogStartPastAnOpenTransactionKeepsTheLastStableOffsetAtTheLogStart) {
  ASSERT_EQ(produce_txn(1, 0, 2).error, 0);  // 0-1, open
  ASSERT_EQ(produce_plain(3).error, 0);      // 2-4
  ASSERT_EQ(partition->delete_records(3).error, 0);
  EXPECT_EQ(log->log_start_offset(), 3);
  EXPECT_EQ(partition->last_stable_offset(), 3) << "the open transaction still holds the LSO";
  ASSERT_EQ(partition->write_marker(1, 0, 0, true).error, 0);
  EXPECT_EQ(partition->last_stable_offset(), 6);
}

TEST_F(PartitionTxnTest, ReadCommittedWatchersWakeOnlyWhenTheLastStableOffsetPasses) {
  ASSERT_EQ(produce_txn(1, 0, 1).error, 0);  // 0, open: LSO 0
  int committed_woken = 0;
  int uncommitted_woken = 0;
  partition->watch(ReadBound::kLastStable, 0, [&] { ++committed_woken; });
  partition->watch(ReadBound::kHighWatermark, 1, [&] { ++uncommitted_woken; });
  ASSERT_EQ(produce_plain(1).error, 0);  // 1: HW 2, LSO still 0
  EXPECT_EQ(committed_woken, 0);
  EXPECT_EQ(uncommitted_woken, 1);
  ASSERT_EQ(partition->write_marker(1, 0, 0, true).error, 0);
  EXPECT_EQ(committed_woken, 1);
}

TEST_F(PartitionTxnTest, AVerifiedTransactionalBatchNeedsTheCurrentGuard) {
  EXPECT_EQ(produce_txn(1, 0, 1, VerificationGuard{0}).error, code(ErrorCode::kInvalidTxnState))
      << "verification on and nothing verified";
  EXPECT_EQ(log->log_end_offset(), 0);
  auto first = make_batch(1, clock.wall_ms(), 16, txn_producer(1, 0));
  const VerificationGuard guard = partition->start_verification(first);
  EXPECT_NE(guard, 0u);
  EXPECT_EQ(partition->start_verification(first), guard) << "a pending verification is reused";
  ASSERT_EQ(partition->append(first, AppendOrigin::kClient, nullptr, guard).error, 0);
  EXPECT_EQ(partition->verification_guard(1), 0u) << "the first batch opened the transaction";
  auto next = make_batch(1, clock.wall_ms(), 16, txn_producer(1, 1));
  EXPECT_EQ(partition->start_verification(next), 0u) << "an open transaction needs no verification";
  ASSERT_EQ(partition->append(next, AppendOrigin::kClient, nullptr, VerificationGuard{0}).error, 0);
  EXPECT_EQ(produce_plain(1).error, 0) << "non-transactional batches are never verified";
}

TEST_F(PartitionTxnTest, AMarkerClearsAPendingGuardSoALateProduceCannotOpenAHangingTransaction) {
  auto late = make_batch(1, clock.wall_ms(), 16, txn_producer(1, 0));
  const VerificationGuard guard = partition->start_verification(late);
  ASSERT_NE(guard, 0u);
  // The coordinator aborts the transaction before the verified produce is appended.
  ASSERT_EQ(partition->write_marker(1, 0, 0, false).error, 0);
  EXPECT_EQ(partition->append(late, AppendOrigin::kClient, nullptr, guard).error, code(ErrorCode::kInvalidTxnState));
  EXPECT_EQ(partition->last_stable_offset(), partition->high_watermark()) << "no transaction left open";
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

TEST_F(PartitionServiceTest, MarkersAreAnsweredOnceDurableInSpecOrder) {
  std::optional<std::vector<std::int16_t>> answered;
  std::int64_t recovery_point = -1;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        std::vector<MarkerSpec> specs{MarkerSpec{PartitionRef{"t", 0}, 7, 0, 0, true},
                                      MarkerSpec{PartitionRef{"t", 9}, 7, 0, 0, true}};
        answered = co_await service->write_markers(std::move(specs));
        recovery_point = log->recovery_point();
      },
      asio::detached);
  io.run();
  ASSERT_TRUE(answered.has_value());
  EXPECT_EQ(*answered, (std::vector<std::int16_t>{0, code(ErrorCode::kUnknownTopicOrPartition)}));
  EXPECT_EQ(recovery_point, 1) << "answered after the flush covering the marker";
}

// A coordinator stand-in: answers every partition with `answer`, and remembers the questions.
class FakeVerifier final : public TxnVerifier {
 public:
  std::int16_t answer = 0;
  std::vector<std::string> asked;
  asio::awaitable<std::vector<std::int16_t>> verify(std::string transactional_id, std::int64_t producer_id,
                                                    std::int16_t producer_epoch,
                                                    std::vector<PartitionRef> partitions, bool add) override {
    asked.push_back(transactional_id + "/" + std::to_string(producer_id) + "/" + std::to_string(producer_epoch) + "/" +
                    std::to_string(partitions.size()) + (add ? "/add" : ""));
    co_return std::vector<std::int16_t>(partitions.size(), answer);
  }
};

class VerifiedProduceTest : public PartitionServiceTest {
 protected:
  void SetUp() override {
    PartitionServiceTest::SetUp();
    service->set_verifier(&verifier);
  }
  PartitionAppend produce_txn(std::int16_t version, std::int32_t seq = 0,
                              std::optional<std::string> id = std::string("app")) {
    std::vector<std::byte> batch = make_batch(1, clock.wall_ms(), 16, txn_producer(5, seq));
    std::optional<PartitionAppend> out;
    asio::co_spawn(
        io,
        [&]() -> asio::awaitable<void> {
          std::vector<ProduceSpec> specs{ProduceSpec{PartitionRef{"t", 0}, batch}};
          ProduceTxn txn{id, version};
          auto outcomes = co_await service->append(std::move(specs), Acks::kLeader, std::move(txn));
          out = outcomes.at(0);
        },
        asio::detached);
    io.restart();
    io.run();
    EXPECT_TRUE(out.has_value());
    return out.value_or(PartitionAppend{});
  }
  FakeVerifier verifier;
};

TEST_F(VerifiedProduceTest, APartitionNotInTheTransactionGetsTheErrorOfTheProduceVersion) {
  verifier.answer = code(ErrorCode::kInvalidTxnState);
  const PartitionAppend v10 = produce_txn(10);
  EXPECT_EQ(v10.error, code(ErrorCode::kInvalidTxnState));
  EXPECT_EQ(v10.error_message, "Partition was not added to the transaction");
  const PartitionAppend v11 = produce_txn(11);
  EXPECT_EQ(v11.error, code(ErrorCode::kTransactionAbortable));
  EXPECT_EQ(v11.error_message, "");
  EXPECT_EQ(log->log_end_offset(), 0) << "nothing appended";
  EXPECT_EQ(verifier.asked, (std::vector<std::string>{"app/5/0/1", "app/5/0/1"}));
}

TEST_F(VerifiedProduceTest, CoordinatorTroubleIsTheRetriableNotEnoughReplicas) {
  verifier.answer = code(ErrorCode::kNotCoordinator);
  const PartitionAppend o = produce_txn(9);
  EXPECT_EQ(o.error, code(ErrorCode::kNotEnoughReplicas));
  EXPECT_EQ(o.error_message,
            "Unable to verify the partition has been added to the transaction. Underlying error: NOT_COORDINATOR");
}

TEST_F(VerifiedProduceTest, AVerifiedPartitionIsAppendedAndAskedOnlyOnce) {
  const PartitionAppend first = produce_txn(11, 0);
  ASSERT_EQ(first.error, 0);
  EXPECT_EQ(first.base_offset, 0);
  verifier.answer = code(ErrorCode::kInvalidTxnState);  // would refuse, but is not asked again
  const PartitionAppend second = produce_txn(11, 1);
  EXPECT_EQ(second.error, 0);
  EXPECT_EQ(verifier.asked.size(), 1u) << "the open transaction needs no verification";
}

TEST_F(VerifiedProduceTest, NothingIsVerifiedWhenVerificationIsOff) {
  service->set_verification_enabled(false);
  verifier.answer = code(ErrorCode::kInvalidTxnState);
  EXPECT_EQ(produce_txn(11).error, 0);
  EXPECT_TRUE(verifier.asked.empty());
}

TEST_F(VerifiedProduceTest, ProduceV12AddsThePartitionEvenWithVerificationOff) {
  // Transaction version 2: the broker adds the partition (the client sent no AddPartitionsToTxn),
  // whatever transaction.partition.verification.enable says.
  service->set_verification_enabled(false);
  EXPECT_EQ(produce_txn(12, 0).error, 0);
  EXPECT_EQ(verifier.asked, (std::vector<std::string>{"app/5/0/1/add"}));
  EXPECT_EQ(produce_txn(12, 1).error, 0);
  EXPECT_EQ(verifier.asked.size(), 1u) << "the open transaction needs nothing more";
}

TEST_F(VerifiedProduceTest, ProduceV12PassesConcurrentTransactionsThrough) {
  // v12 clients retry CONCURRENT_TRANSACTIONS (the previous transaction's markers) themselves.
  verifier.answer = code(ErrorCode::kConcurrentTransactions);
  EXPECT_EQ(produce_txn(12).error, code(ErrorCode::kConcurrentTransactions));
  EXPECT_EQ(produce_txn(11).error, code(ErrorCode::kNotEnoughReplicas));
  EXPECT_EQ(log->log_end_offset(), 0);
}

}  // namespace
}  // namespace weir::broker
