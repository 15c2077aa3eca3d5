// Replication's leader and follower sides without a network: the ReplicaTracker's rules (the
// high watermark from the ISR, min.insync.replicas, ISR shrink on lag and expand on catch-up, one
// change in flight) and two Partitions over two logs playing leader and follower: fetches at the
// log end move the high watermark, a follower's append keeps the leader's offsets and epochs, a
// divergent follower suffix is reported and truncated, a leader refuses a fetch from a replica
// it does not have.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <vector>

#include "base/clock.h"
#include "broker/errors.h"
#include "broker/partition.h"
#include "broker/produce_purgatory.h"
#include "broker/replica_tracker.h"
#include "storage/partition_log.h"
#include "test_util.h"

namespace weir::broker {
namespace {

using storage::testing::make_batch;
using storage::testing::TempDir;

const auto kAnyone = [](std::int32_t) { return true; };

TEST(ReplicaTrackerTest, HighWatermarkIsTheLowestLogEndInTheIsr) {
  ReplicaTracker t;
  t.reset(1, {1, 2, 3}, {1, 2, 3}, 0, 0, 1000);
  // Followers that have not fetched hold it where it is.
  EXPECT_EQ(t.high_watermark(10, 1000, 30000, 2, kAnyone), -1);
  ASSERT_TRUE(t.on_fetch(2, 10, 0, 5, 1001, 10));
  ASSERT_TRUE(t.on_fetch(3, 7, 0, 6, 1001, 10));
  EXPECT_EQ(t.high_watermark(10, 1002, 30000, 2, kAnyone), 7);
  ASSERT_TRUE(t.on_fetch(3, 10, 0, 6, 1003, 10));
  EXPECT_EQ(t.high_watermark(10, 1003, 30000, 2, kAnyone), 10);
  EXPECT_FALSE(t.on_fetch(4, 10, 0, 6, 1003, 10)) << "not a replica";
}

TEST(ReplicaTrackerTest, UnderMinIsrTheHighWatermarkStays) {
  ReplicaTracker t;
  t.reset(1, {1, 2, 3}, {1}, 0, 0, 0);
  EXPECT_TRUE(t.under_min_isr(2));
  EXPECT_FALSE(t.high_watermark(10, 0, 30000, 2, kAnyone).has_value());
  EXPECT_FALSE(t.under_min_isr(1));
  // A replica count below min.insync.replicas caps it (Kafka's effective min ISR).
  ReplicaTracker single;
  single.reset(1, {1}, {1}, 0, 0, 0);
  EXPECT_FALSE(single.under_min_isr(2));
  EXPECT_EQ(single.high_watermark(10, 0, 30000, 2, kAnyone), 10);
}

TEST(ReplicaTrackerTest, AFollowerBehindForTheLagTimeLeavesTheIsr) {
  ReplicaTracker t;
  t.reset(1, {1, 2, 3}, {1, 2, 3}, 4, 7, 0);
  ASSERT_TRUE(t.on_fetch(2, 5, 0, 11, 100, 5));
  ASSERT_TRUE(t.on_fetch(3, 5, 0, 12, 100, 5));
  EXPECT_FALSE(t.maybe_shrink(5, 20000, 3000).has_value()) << "both caught up with the log end";
  // The leader's log grows; follower 3 keeps fetching and catching up, follower 2 stops.
  ASSERT_TRUE(t.on_fetch(3, 9, 0, 12, 2900, 9));
  EXPECT_FALSE(t.maybe_shrink(9, 3000, 3000).has_value()) << "within the lag time";
  const auto p = t.maybe_shrink(9, 3200, 3000);
  ASSERT_TRUE(p.has_value());
  EXPECT_FALSE(p->expand);
  EXPECT_EQ(p->leader_epoch, 4);
  EXPECT_EQ(p->partition_epoch, 7);
  ASSERT_EQ(p->new_isr.size(), 2u);
  EXPECT_EQ(p->new_isr[0].broker_id, 1);
  EXPECT_EQ(p->new_isr[1].broker_id, 3);
  EXPECT_EQ(p->new_isr[1].broker_epoch, 12);
  // In flight: no second change; the member being removed still counts for the high watermark.
  EXPECT_TRUE(t.in_flight());
  EXPECT_FALSE(t.maybe_shrink(9, 9000, 3000).has_value());
  EXPECT_EQ(t.high_watermark(9, 3200, 3000, 2, kAnyone), 5);
  t.committed({1, 3}, 8);
  EXPECT_FALSE(t.in_flight());
  EXPECT_EQ(t.partition_epoch(), 8);
  EXPECT_EQ(t.high_watermark(9, 3200, 3000, 2, [](std::int32_t id) { return id != 2; }), 9);
}

TEST(ReplicaTrackerTest, AFollowerJoinsOnceAtTheHighWatermarkAndTheEpochStart) {
  ReplicaTracker t;
  t.reset(1, {1, 2, 3}, {1, 3}, 2, 3, 0);
  ASSERT_TRUE(t.on_fetch(2, 4, 0, 9, 10, 20));
  EXPECT_FALSE(t.maybe_expand(2, 15, 10, true).has_value()) << "below the high watermark";
  ASSERT_TRUE(t.on_fetch(2, 15, 0, 9, 11, 20));
  EXPECT_FALSE(t.maybe_expand(2, 15, 18, true).has_value()) << "below the start of the leader's epoch";
  EXPECT_FALSE(t.maybe_expand(2, 15, 10, false).has_value()) << "not eligible (fenced, shutting down)";
  const auto p = t.maybe_expand(2, 15, 10, true);
  ASSERT_TRUE(p.has_value());
  EXPECT_TRUE(p->expand);
  ASSERT_EQ(p->new_isr.size(), 3u);
  EXPECT_EQ(p->new_isr[2].broker_id, 2);
  // The member being added counts at once: the high watermark waits for it.
  EXPECT_EQ(t.high_watermark(20, 11, 30000, 2, kAnyone), -1) << "follower 3 has not fetched";
  ASSERT_TRUE(t.on_fetch(3, 20, 0, 8, 12, 20));
  EXPECT_EQ(t.high_watermark(20, 12, 30000, 2, kAnyone), 15);
  t.failed();
  EXPECT_FALSE(t.in_flight());
  EXPECT_EQ(t.isr(), (std::vector<std::int32_t>{1, 3}));
}

// Kafka's handleAlterPartitionError, code by code.
TEST(ReplicaTrackerTest, AlterPartitionErrorsAreClassifiedAsKafkaDoes) {
  EXPECT_EQ(classify_isr_change_error(107), IsrChangeFailure::kNotApplied);  // INELIGIBLE_REPLICA
  EXPECT_EQ(classify_isr_change_error(55), IsrChangeFailure::kNotApplied);   // OPERATION_NOT_ATTEMPTED
  for (std::int16_t awaits : {3, 100, 74, 95, 42, 108}) {
    EXPECT_EQ(classify_isr_change_error(awaits), IsrChangeFailure::kAwaitMetadata) << awaits;
  }
  // A failed request (timeout, no controller, network) and anything unexpected: sent again.
  for (std::int16_t resend : {7, 41, 8, 13, -1, 77, 6}) {
    EXPECT_EQ(classify_isr_change_error(resend), IsrChangeFailure::kResend) << resend;
  }
}

// Found by tests/sim: an expansion whose answer was lost (the controller had applied it) used to
// be dropped, so the leader's high watermark passed a member the controller counted in the ISR;
// a later leader from that ISR then lacked acknowledged records. As Kafka's
// handleAlterPartitionError, only INELIGIBLE_REPLICA / OPERATION_NOT_ATTEMPTED drop the change.
TEST(ReplicaTrackerTest, AnUnansweredIsrChangeStaysInFlightAndIsSentAgain) {
  ReplicaTracker t;
  t.reset(1, {1, 2, 3}, {1, 2}, 0, 4, 0);
  ASSERT_TRUE(t.on_fetch(2, 20, 0, 5, 10, 20));
  ASSERT_TRUE(t.on_fetch(3, 15, 0, 6, 10, 20));
  ASSERT_TRUE(t.maybe_expand(3, 15, 0, true).has_value());
  t.unanswered(/*resend=*/true);  // the request timed out
  EXPECT_TRUE(t.in_flight());
  EXPECT_EQ(t.maximal_isr(), (std::vector<std::int32_t>{1, 2, 3}));
  EXPECT_EQ(t.high_watermark(20, 11, 30000, 2, kAnyone), 15) << "member 3 still holds the high watermark";
  const auto again = t.take_resend();
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->partition_epoch, 4);
  ASSERT_EQ(again->new_isr.size(), 3u);
  EXPECT_EQ(again->new_isr[2].broker_id, 3);
  EXPECT_FALSE(t.take_resend().has_value()) << "once per failure";
  // INVALID_UPDATE_VERSION (it was applied meanwhile): in flight until the metadata tells.
  t.unanswered(/*resend=*/false);
  EXPECT_FALSE(t.take_resend().has_value());
  EXPECT_EQ(t.high_watermark(20, 11, 30000, 2, kAnyone), 15);
  t.update_from_metadata({1, 2, 3}, {1, 2, 3}, 5);
  EXPECT_FALSE(t.in_flight());
  EXPECT_EQ(t.isr(), (std::vector<std::int32_t>{1, 2, 3}));
  // INELIGIBLE_REPLICA: not applied, dropped.
  ReplicaTracker u;
  u.reset(1, {1, 2, 3}, {1, 2}, 0, 4, 0);
  ASSERT_TRUE(u.on_fetch(3, 15, 0, 6, 10, 20));
  ASSERT_TRUE(u.on_fetch(2, 20, 0, 5, 10, 20));
  ASSERT_TRUE(u.maybe_expand(3, 15, 0, true).has_value());
  u.failed();
  EXPECT_FALSE(u.in_flight());
  EXPECT_EQ(u.maximal_isr(), (std::vector<std::int32_t>{1, 2}));
}

TEST(ReplicaTrackerTest, TheMetadataReplacesTheIsrAtANewerPartitionEpoch) {
  ReplicaTracker t;
  t.reset(1, {1, 2, 3}, {1, 2, 3}, 0, 5, 0);
  t.update_from_metadata({1, 2, 3}, {1, 2}, 4);
  EXPECT_EQ(t.isr().size(), 3u) << "an older partition epoch is ignored";
  t.update_from_metadata({1, 2, 3}, {1, 2}, 6);
  EXPECT_EQ(t.isr(), (std::vector<std::int32_t>{1, 2}));
  EXPECT_EQ(t.partition_epoch(), 6);
}

TEST(ProducePurgatoryOrderTest, ALaterWaiterWithALowerEndOffsetIsAnsweredInOffsetOrder) {
  // An idempotent retry of an unreplicated batch waits for its first write's offsets, which lie
  // below appends already waiting.
  ProducePurgatory purgatory;
  std::vector<int> answered;
  purgatory.add(10, [&](std::int16_t) { answered.push_back(10); });
  purgatory.add(4, [&](std::int16_t) { answered.push_back(4); });
  purgatory.add(12, [&](std::int16_t) { answered.push_back(12); });
  EXPECT_EQ(purgatory.complete_through(5), 1u);
  EXPECT_EQ(answered, (std::vector<int>{4}));
  EXPECT_EQ(purgatory.complete_through(12), 2u);
  EXPECT_EQ(answered, (std::vector<int>{4, 10, 12}));
}

// Two replicas of one partition, each with its own log.
class ReplicationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < 2; ++i) {
      storage::LogConfig config;
      config.min_insync_replicas = 2;
      const auto dir = tmp.path() / (i == 0 ? "a" : "b");
      std::filesystem::create_directories(dir);
      auto opened = storage::PartitionLog::open(storage::PosixFileSystem::instance(), dir / "t-0", config, clock, {});
      ASSERT_TRUE(opened.has_value());
      logs[i] = std::move(*opened);
    }
    leader = std::make_unique<Partition>("t", id, 0, 0, logs[0].get());
    follower = std::make_unique<Partition>("t", id, 0, 0, logs[1].get());
    leader->set_replication_options(30000, /*durable_acks=*/false);
    follower->set_replication_options(30000, false);
    lead(1, 0, {1, 2});
  }
  void TearDown() override {
    leader.reset();
    follower.reset();
    for (auto& l : logs) ASSERT_TRUE(l->close().has_value());
  }
  // Broker `who` leads at `epoch`; the other replica follows.
  void lead(std::int32_t who, std::int32_t epoch, std::vector<std::int32_t> isr) {
    Partition* a = who == 1 ? leader.get() : follower.get();
    Partition* b = who == 1 ? follower.get() : leader.get();
    a->apply_leadership(Leadership{who, who, epoch, epoch, {1, 2}, isr, {1, 2}});
    b->apply_leadership(Leadership{who == 1 ? 2 : 1, who, epoch, epoch, {1, 2}, isr, {1, 2}});
  }
  // One follower fetch round: the follower's fetch at its log end, its append of the answer.
  PartitionRead replicate(Partition& from, Partition& to, std::int32_t follower_id) {
    PartitionRead r =
        from.read_for_follower(FollowerFetch{follower_id, 9, to.log().log_end_offset(), to.log().log_start_offset(),
                                             to.last_fetched_epoch(), from.leader_epoch(), 1 << 20});
    if (r.error != 0) return r;
    if (r.diverging) {
      EXPECT_EQ(to.truncate_to_leader(r.diverging->first, r.diverging->second), 0);
      return r;
    }
    std::vector<std::byte> bytes;
    if (r.records) {
      for (const auto& region : r.records->regions) {
        std::vector<std::byte> chunk(static_cast<std::size_t>(region.size));
        EXPECT_EQ(::pread(region.fd, chunk.data(), chunk.size(), region.offset), static_cast<ssize_t>(chunk.size()));
        bytes.insert(bytes.end(), chunk.begin(), chunk.end());
      }
    }
    const FollowerAppend a = to.append_from_leader(bytes, r.high_watermark, r.log_start_offset);
    EXPECT_EQ(a.error, 0) << a.error_message;
    return r;
  }

  TempDir tmp;
  ManualClock clock;
  Uuid id = Uuid::random();
  std::unique_ptr<storage::PartitionLog> logs[2];
  std::unique_ptr<Partition> leader;
  std::unique_ptr<Partition> follower;
};

TEST_F(ReplicationTest, TheHighWatermarkMovesOnlyOnceTheFollowerFetchedPastTheData) {
  auto batch = make_batch(3, clock.wall_ms());
  ASSERT_EQ(leader->append(batch, AppendOrigin::kClient).error, 0);
  EXPECT_EQ(leader->high_watermark(), 0);
  EXPECT_EQ(follower->append(batch, AppendOrigin::kClient).error, code(ErrorCode::kNotLeaderOrFollower));
  replicate(*leader, *follower, 2);  // fetch at 0: the data, the high watermark still 0
  EXPECT_EQ(logs[1]->log_end_offset(), 3);
  EXPECT_EQ(leader->high_watermark(), 0);
  replicate(*leader, *follower, 2);  // fetch at 3: the leader knows the follower has it
  EXPECT_EQ(leader->high_watermark(), 3);
  replicate(*leader, *follower, 2);  // and tells it
  EXPECT_EQ(follower->high_watermark(), 3);
  EXPECT_EQ(logs[1]->epoch_entries(), logs[0]->epoch_entries());
}

TEST_F(ReplicationTest, ATransactionStaysUnstableUntilItsMarkerIsUnderTheHighWatermark) {
  // Kafka's unreplicatedTxns: a marker the followers have not fetched yet does not make its
  // transaction stable, or read_committed could pass data whose commit a new leader never saw.
  const record::BatchOptions txn{.producer_id = 7, .producer_epoch = 0, .base_sequence = 0, .transactional = true};
  auto batch = make_batch(2, clock.wall_ms(), 16, txn);
  ASSERT_EQ(leader->append(batch, AppendOrigin::kClient).error, 0);
  replicate(*leader, *follower, 2);
  replicate(*leader, *follower, 2);
  ASSERT_EQ(leader->high_watermark(), 2);
  EXPECT_EQ(leader->last_stable_offset(), 0) << "the transaction is open";
  ASSERT_EQ(leader->write_marker(7, 0, 0, /*commit=*/true).error, 0);  // the marker at 2
  EXPECT_EQ(leader->high_watermark(), 2);
  EXPECT_EQ(leader->last_stable_offset(), 0) << "the marker is not under the high watermark yet";
  EXPECT_EQ(logs[0]->last_stable_offset(), 0) << "nor for the cleaner";
  replicate(*leader, *follower, 2);  // the follower gets the marker
  EXPECT_EQ(follower->high_watermark(), 2);
  EXPECT_EQ(follower->last_stable_offset(), 0) << "the follower rebuilt the same state";
  replicate(*leader, *follower, 2);  // the leader learns the follower has it
  EXPECT_EQ(leader->high_watermark(), 3);
  EXPECT_EQ(leader->last_stable_offset(), 3);
  EXPECT_EQ(logs[0]->last_stable_offset(), 3);
  replicate(*leader, *follower, 2);
  EXPECT_EQ(follower->last_stable_offset(), 3);
}

TEST_F(ReplicationTest, AcksAllWaitsForTheIsrAndMinIsrRefusesItUpFront) {
  auto batch = make_batch(2, clock.wall_ms());
  const PartitionAppend o = leader->append(batch, AppendOrigin::kClient);
  ASSERT_EQ(o.error, 0);
  std::vector<std::int16_t> answered;
  leader->purgatory()->add(o.end_offset, [&](std::int16_t e) { answered.push_back(e); });
  leader->complete_acks();
  EXPECT_TRUE(answered.empty());
  replicate(*leader, *follower, 2);
  replicate(*leader, *follower, 2);
  EXPECT_EQ(answered, (std::vector<std::int16_t>{0}));
  // The ISR shrinks to the leader alone: under min.insync.replicas=2.
  EXPECT_FALSE(leader->under_min_isr());
  lead(1, 0, {1});
  leader->apply_leadership(Leadership{1, 1, 0, 1, {1, 2}, {1}, {1, 2}});
  EXPECT_TRUE(leader->under_min_isr());
}

TEST_F(ReplicationTest, LosingTheLeadershipAnswersWaitingAppendsNotLeader) {
  auto batch = make_batch(1, clock.wall_ms());
  const PartitionAppend o = leader->append(batch, AppendOrigin::kClient);
  std::vector<std::int16_t> answered;
  leader->purgatory()->add(o.end_offset, [&](std::int16_t e) { answered.push_back(e); });
  lead(2, 1, {2});
  EXPECT_EQ(answered, (std::vector<std::int16_t>{code(ErrorCode::kNotLeaderOrFollower)}));
}

TEST_F(ReplicationTest, ADivergentSuffixIsTruncatedToTheNewLeadersEpochEnd) {
  auto first = make_batch(2, clock.wall_ms());
  ASSERT_EQ(leader->append(first, AppendOrigin::kClient).error, 0);
  replicate(*leader, *follower, 2);
  replicate(*leader, *follower, 2);
  ASSERT_EQ(leader->high_watermark(), 2);
  // Broker 1 takes writes the follower never gets (acks=1), then loses the leadership.
  auto lost = make_batch(3, clock.wall_ms());
  ASSERT_EQ(leader->append(lost, AppendOrigin::kClient).error, 0);
  ASSERT_EQ(logs[0]->log_end_offset(), 5);
  lead(2, 1, {2});
  auto newer = make_batch(4, clock.wall_ms());
  ASSERT_EQ(follower->append(newer, AppendOrigin::kClient).error, 0);  // broker 2 leads now
  // Broker 1 fetches with its last epoch 0: the new leader's epoch 0 ended at 2.
  const PartitionRead r = replicate(*follower, *leader, 1);
  ASSERT_TRUE(r.diverging.has_value());
  EXPECT_EQ(r.diverging->first, 0);
  EXPECT_EQ(r.diverging->second, 2);
  EXPECT_EQ(logs[0]->log_end_offset(), 2) << "the suffix nobody else has is gone";
  replicate(*follower, *leader, 1);
  EXPECT_EQ(logs[0]->log_end_offset(), 6);
  EXPECT_EQ(logs[0]->epoch_entries(), logs[1]->epoch_entries());
}

TEST_F(ReplicationTest, AFetchFromAReplicaTheLeaderDoesNotHaveIsRefused) {
  const PartitionRead r = leader->read_for_follower(FollowerFetch{7, 1, 0, 0, -1, 0, 1024});
  EXPECT_EQ(r.error, code(ErrorCode::kNotLeaderOrFollower));
  const PartitionRead stale = leader->read_for_follower(FollowerFetch{2, 1, 0, 0, -1, 5, 1024});
  EXPECT_EQ(stale.error, code(ErrorCode::kUnknownLeaderEpoch));
}

// KIP-392 on the leader (Kafka's RackAwareReplicaSelector): the in-sync follower in the consumer's
// rack that has the fetch offset, unless the leader is in that rack itself.
TEST_F(ReplicationTest, APreferredReadReplicaIsAnInSyncFollowerInTheConsumersRackWithTheOffset) {
  auto batch = make_batch(3, clock.wall_ms());
  ASSERT_EQ(leader->append(batch, AppendOrigin::kClient).error, 0);
  const auto rack_of_2 = [](std::int32_t b) { return b == 2; };
  const auto rack_of_1_and_2 = [](std::int32_t b) { return b == 1 || b == 2; };
  const auto nowhere = [](std::int32_t) { return false; };
  EXPECT_EQ(leader->preferred_read_replica(0, rack_of_2), -1) << "the follower has not fetched yet";
  replicate(*leader, *follower, 2);
  replicate(*leader, *follower, 2);  // at 3: caught up
  EXPECT_EQ(leader->preferred_read_replica(0, rack_of_2), 2);
  EXPECT_EQ(leader->preferred_read_replica(3, rack_of_2), 2);
  EXPECT_EQ(leader->preferred_read_replica(4, rack_of_2), -1) << "beyond the follower's log end";
  EXPECT_EQ(leader->preferred_read_replica(0, rack_of_1_and_2), -1) << "the leader is in the rack";
  EXPECT_EQ(leader->preferred_read_replica(0, nowhere), -1);
  EXPECT_EQ(follower->preferred_read_replica(0, rack_of_2), -1) << "only a leader sends consumers elsewhere";
  // Out of the ISR: not a candidate.
  lead(1, 0, {1});
  EXPECT_EQ(leader->preferred_read_replica(0, rack_of_2), -1);
}

// A follower serves a consumer's read only when the fetch allows it (Fetch v11+), up to its own
// high watermark.
TEST_F(ReplicationTest, AFollowerServesAConsumerReadOnlyWhenAllowed) {
  auto batch = make_batch(3, clock.wall_ms());
  ASSERT_EQ(leader->append(batch, AppendOrigin::kClient).error, 0);
  replicate(*leader, *follower, 2);
  replicate(*leader, *follower, 2);
  replicate(*leader, *follower, 2);
  ASSERT_EQ(follower->high_watermark(), 3);
  EXPECT_EQ(follower->read(0, 1 << 20, -1, ReadBound::kHighWatermark, true).error,
            code(ErrorCode::kNotLeaderOrFollower));
  const PartitionRead r = follower->read(0, 1 << 20, -1, ReadBound::kHighWatermark, true, /*follower_reads=*/true);
  EXPECT_EQ(r.error, 0);
  EXPECT_GT(r.size(), 0);
  EXPECT_EQ(r.high_watermark, 3);
}

}  // namespace
}  // namespace weir::broker
