#include "txn/coordinator.h"

#include <gtest/gtest.h>

#include "base/java_hash.h"
#include "protocol/gen/transaction_log_value.h"

namespace weir::txn {
namespace {

constexpr std::int64_t kT0 = 1'700'000'000'000;
const std::string kId = "order-totals-app";

class TxnTest : public ::testing::Test {
 protected:
  TransactionCoordinator c;
  RequestHandle next_handle = 1;
  std::int64_t next_pid = 1000;
  std::int64_t now = kT0;
  std::vector<Record> log;  // every record appended, in order

  // Appends every record the effects carry (as a host does), feeding completions back, and
  // returns every answer and marker request seen.
  struct Outcome {
    std::vector<Answer> answers;
    std::vector<MarkerRequest> markers;
  };
  Outcome settle(Effects fx, std::int16_t append_error = 0) {
    Outcome out;
    std::vector<Effects> queue;
    queue.push_back(std::move(fx));
    while (!queue.empty()) {
      Effects e = std::move(queue.back());
      queue.pop_back();
      for (auto& a : e.answers) out.answers.push_back(a);
      for (auto& m : e.markers) out.markers.push_back(m);
      for (auto& a : e.appends) {
        if (append_error == 0) log.push_back(a.record);
        queue.push_back(c.on_appended(a.transactional_id, append_error, now));
      }
    }
    return out;
  }
  Answer only_answer(const Outcome& o) {
    EXPECT_EQ(o.answers.size(), 1u);
    return o.answers.empty() ? Answer{} : o.answers.front();
  }

  Answer init(const std::string& id = kId, std::int32_t timeout = 60000, std::int64_t pid = -1,
              std::int16_t epoch = -1) {
    const RequestHandle h = next_handle++;
    Effects fx = c.init_producer_id(h, id, timeout, pid, epoch, std::nullopt, now);
    if (fx.needs_producer_id) {
      EXPECT_TRUE(fx.answers.empty());
      fx = c.init_producer_id(h, id, timeout, pid, epoch, next_pid++, now);
    }
    auto o = settle(std::move(fx));
    EXPECT_TRUE(o.markers.empty());
    return only_answer(o);
  }
  Answer add(std::vector<TopicPartition> parts, std::int64_t pid, std::int16_t epoch, const std::string& id = kId) {
    return only_answer(settle(c.add_partitions(next_handle++, id, pid, epoch, parts, now)));
  }
  // EndTxn; the markers asked for are written successfully.
  Answer end(bool commit, std::int64_t pid, std::int16_t epoch, std::vector<MarkerRequest>* markers = nullptr,
             bool write_markers = true) {
    auto o = settle(c.end_txn(next_handle++, kId, pid, epoch, commit, now));
    if (markers) *markers = o.markers;
    if (write_markers) {
      for (const auto& m : o.markers)
        settle(c.on_markers_written(m, std::vector<std::int16_t>(m.partitions.size(), 0), now));
    }
    return only_answer(o);
  }
  State state(const std::string& id = kId) { return c.find(id)->state; }

  // Transaction version 2: the broker adds partitions (Produce v12+), EndTxn v5 bumps the epoch.
  Answer add_v2(std::vector<TopicPartition> parts, std::int64_t pid, std::int16_t epoch) {
    return only_answer(settle(c.add_partitions(next_handle++, kId, pid, epoch, parts, now, 2)));
  }
  Answer end_v2(bool commit, std::int64_t pid, std::int16_t epoch, std::vector<MarkerRequest>* markers = nullptr) {
    const RequestHandle h = next_handle++;
    Effects fx = c.end_txn(h, kId, pid, epoch, commit, now, 2);
    if (fx.needs_producer_id) {
      EXPECT_TRUE(fx.answers.empty());
      EXPECT_TRUE(fx.appends.empty());
      fx = c.end_txn(h, kId, pid, epoch, commit, now, 2, next_pid++);
    }
    auto o = settle(std::move(fx));
    if (markers) *markers = o.markers;
    for (const auto& m : o.markers) {
      settle(c.on_markers_written(m, std::vector<std::int16_t>(m.partitions.size(), 0), now));
    }
    return only_answer(o);
  }
};

TEST(TxnPartition, JavaHashOfTransactionalId) {
  // As Kafka places it (seed 003).
  EXPECT_EQ(java_partition_for("order-totals-app", 50), 18);
  EXPECT_EQ(java_string_hash(""), 0);
  EXPECT_EQ(java_string_hash("a"), 97);
}

TEST(TxnStates, NamesAndIds) {
  EXPECT_EQ(state_name(State::kPrepareEpochFence), "PrepareEpochFence");
  EXPECT_EQ(state_from_name("CompleteCommit"), State::kCompleteCommit);
  EXPECT_EQ(state_from_name("complete"), std::nullopt);
  EXPECT_EQ(state_from_id(6), State::kDead);
  EXPECT_EQ(state_from_id(8), std::nullopt);
}

TEST(TxnStates, ValidPreviousStateTable) {
  using enum State;
  const std::vector<State> all = {kEmpty,          kOngoing,       kPrepareCommit, kPrepareAbort,
                                  kCompleteCommit, kCompleteAbort, kDead,          kPrepareEpochFence};
  const std::map<State, std::set<State>> expected = {
      {kEmpty, {kEmpty, kCompleteCommit, kCompleteAbort}},
      {kOngoing, {kOngoing, kEmpty, kCompleteCommit, kCompleteAbort}},
      {kPrepareCommit, {kOngoing}},
      {kPrepareAbort, {kOngoing, kPrepareEpochFence, kEmpty, kCompleteCommit, kCompleteAbort}},
      {kCompleteCommit, {kPrepareCommit}},
      {kCompleteAbort, {kPrepareAbort}},
      {kDead, {kEmpty, kCompleteAbort, kCompleteCommit}},
      {kPrepareEpochFence, {kOngoing}},
  };
  for (State to : all) {
    for (State from : all) {
      EXPECT_EQ(valid_transition(from, to), expected.at(to).contains(from))
          << state_name(from) << " -> " << state_name(to);
    }
  }
}

TEST(TxnOrder, JavaHashSetOrderOfSeedPartitions) {
  // Kafka's describe of seed 003 lists order-totals-tx-0 before __consumer_offsets-2 whichever
  // was added first.
  const std::vector<TopicPartition> a = {{"__consumer_offsets", 2}, {"order-totals-tx", 0}};
  const std::vector<TopicPartition> b = {{"order-totals-tx", 0}, {"__consumer_offsets", 2}};
  const std::vector<TopicPartition> want = {{"order-totals-tx", 0}, {"__consumer_offsets", 2}};
  EXPECT_EQ(java_hash_set_order(a), want);
  EXPECT_EQ(java_hash_set_order(b), want);
}

TEST_F(TxnTest, InitNewIdGetsFreshProducerIdEpochZero) {
  const Answer a = init();
  EXPECT_EQ(a.error, Error::kNone);
  EXPECT_EQ(a.producer_id, 1000);
  EXPECT_EQ(a.producer_epoch, 0);
  EXPECT_EQ(state(), State::kEmpty);
  ASSERT_EQ(log.size(), 1u);
}

TEST_F(TxnTest, InitExistingBumpsEpoch) {
  init();
  const Answer a = init();
  EXPECT_EQ(a.producer_id, 1000);
  EXPECT_EQ(a.producer_epoch, 1);
}

TEST_F(TxnTest, InitRejectsBadTimeoutsAndEmptyId) {
  EXPECT_EQ(init(kId, 900001).error, Error::kInvalidTransactionTimeout);
  EXPECT_EQ(init(kId, 0).error, Error::kInvalidTransactionTimeout);
  EXPECT_EQ(init("", 1000).error, Error::kInvalidRequest);
  EXPECT_EQ(c.find(kId), nullptr);
}

TEST_F(TxnTest, InitWhilePendingIsConcurrent) {
  init();
  Effects fx = c.init_producer_id(next_handle++, kId, 60000, -1, -1, std::nullopt, now);
  ASSERT_EQ(fx.appends.size(), 1u);
  Effects second = c.init_producer_id(next_handle++, kId, 60000, -1, -1, std::nullopt, now);
  ASSERT_EQ(second.answers.size(), 1u);
  EXPECT_EQ(second.answers[0].error, Error::kConcurrentTransactions);
  EXPECT_TRUE(second.appends.empty());
}

TEST_F(TxnTest, FailedAppendRollsBack) {
  init();
  auto o = settle(c.init_producer_id(next_handle++, kId, 60000, -1, -1, std::nullopt, now), 6);
  ASSERT_EQ(o.answers.size(), 1u);
  EXPECT_EQ(o.answers[0].error, Error::kNotCoordinator);
  EXPECT_EQ(c.find(kId)->producer_epoch, 0);
  EXPECT_FALSE(c.find(kId)->pending);
  EXPECT_EQ(init().producer_epoch, 1);
}

TEST_F(TxnTest, CommitFlow) {
  const Answer id = init();
  EXPECT_EQ(add({{"t", 0}, {"t", 1}}, id.producer_id, id.producer_epoch).error, Error::kNone);
  EXPECT_EQ(state(), State::kOngoing);
  EXPECT_EQ(c.find(kId)->start_ms, now);
  // Adding what is already there writes nothing.
  const auto before = log.size();
  EXPECT_EQ(add({{"t", 1}}, id.producer_id, id.producer_epoch).error, Error::kNone);
  EXPECT_EQ(log.size(), before);
  std::vector<MarkerRequest> markers;
  Effects fx = c.end_txn(next_handle++, kId, id.producer_id, id.producer_epoch, true, now);
  // EndTxn is answered once PrepareCommit is written, before the markers.
  auto o = settle(std::move(fx));
  ASSERT_EQ(o.answers.size(), 1u);
  EXPECT_EQ(o.answers[0].error, Error::kNone);
  EXPECT_EQ(o.answers[0].producer_epoch, 0);
  EXPECT_EQ(state(), State::kPrepareCommit);
  ASSERT_EQ(o.markers.size(), 1u);
  const MarkerRequest& m = o.markers[0];
  EXPECT_TRUE(m.commit);
  EXPECT_EQ(m.producer_id, id.producer_id);
  EXPECT_EQ(m.partitions.size(), 2u);
  // Requests meanwhile: concurrent.
  EXPECT_EQ(add({{"u", 0}}, id.producer_id, id.producer_epoch).error, Error::kConcurrentTransactions);
  EXPECT_EQ(init().error, Error::kConcurrentTransactions);
  settle(c.on_markers_written(m, {0, 0}, now));
  EXPECT_EQ(state(), State::kCompleteCommit);
  EXPECT_TRUE(c.find(kId)->partitions.empty());
  EXPECT_EQ(c.stats().committed, 1u);
  // A retried commit succeeds, an abort now is an invalid state.
  EXPECT_EQ(end(true, id.producer_id, id.producer_epoch).error, Error::kNone);
  EXPECT_EQ(end(false, id.producer_id, id.producer_epoch).error, Error::kInvalidTxnState);
}

TEST_F(TxnTest, AbortFlowAndMarkerRetry) {
  const Answer id = init();
  add({{"t", 0}, {"t", 1}}, id.producer_id, id.producer_epoch);
  std::vector<MarkerRequest> markers;
  EXPECT_EQ(end(false, id.producer_id, id.producer_epoch, &markers, false).error, Error::kNone);
  ASSERT_EQ(markers.size(), 1u);
  EXPECT_FALSE(markers[0].commit);
  // One partition fails: retried after the backoff, nothing completes meanwhile.
  std::vector<std::int16_t> errs(markers[0].partitions.size(), 0);
  errs[1] = 6;
  auto o = settle(c.on_markers_written(markers[0], errs, now));
  EXPECT_EQ(state(), State::kPrepareAbort);
  ASSERT_TRUE(c.next_deadline_ms());
  EXPECT_TRUE(settle(c.tick(now)).markers.empty());
  now = *c.next_deadline_ms();
  o = settle(c.tick(now));
  ASSERT_EQ(o.markers.size(), 1u);
  ASSERT_EQ(o.markers[0].partitions.size(), 1u);
  EXPECT_EQ(o.markers[0].partitions[0], markers[0].partitions[1]);
  settle(c.on_markers_written(o.markers[0], {0}, now));
  EXPECT_EQ(state(), State::kCompleteAbort);
  EXPECT_EQ(c.stats().aborted, 1u);
}

TEST_F(TxnTest, EndTxnErrors) {
  EXPECT_EQ(end(true, 1, 0).error, Error::kInvalidProducerIdMapping);
  const Answer id = init();
  EXPECT_EQ(end(true, id.producer_id, id.producer_epoch).error, Error::kInvalidTxnState);  // Empty
  EXPECT_EQ(end(true, id.producer_id + 1, id.producer_epoch).error, Error::kInvalidProducerIdMapping);
  add({{"t", 0}}, id.producer_id, id.producer_epoch);
  EXPECT_EQ(end(true, id.producer_id, id.producer_epoch + 1).error, Error::kProducerFenced);
  EXPECT_EQ(end(true, id.producer_id, id.producer_epoch - 1).error, Error::kProducerFenced);
  std::vector<MarkerRequest> markers;
  end(true, id.producer_id, id.producer_epoch, &markers, false);
  EXPECT_EQ(end(true, id.producer_id, id.producer_epoch).error, Error::kConcurrentTransactions);
}

TEST_F(TxnTest, EndTxnInPrepareStates) {
  const Answer id = init();
  add({{"t", 0}}, id.producer_id, id.producer_epoch);
  // Without the pending completion (as after a reload that has not sent markers), PrepareCommit
  // answers by the request's result.
  auto o = settle(c.end_txn(next_handle++, kId, id.producer_id, id.producer_epoch, true, now));
  ASSERT_EQ(o.markers.size(), 1u);
  // The completion is pending: everything is concurrent.
  EXPECT_EQ(end(false, id.producer_id, id.producer_epoch).error, Error::kConcurrentTransactions);
}

TEST_F(TxnTest, AddPartitionsErrors) {
  EXPECT_EQ(add({{"t", 0}}, 5, 0).error, Error::kInvalidProducerIdMapping);
  EXPECT_EQ(add({{"t", 0}}, 5, 0, "").error, Error::kInvalidRequest);
  const Answer id = init();
  EXPECT_EQ(add({{"t", 0}}, id.producer_id + 1, 0).error, Error::kInvalidProducerIdMapping);
  EXPECT_EQ(add({{"t", 0}}, id.producer_id, 3).error, Error::kProducerFenced);
  Effects fx = c.add_partitions(next_handle++, kId, id.producer_id, 0, {{"t", 0}}, now);
  ASSERT_EQ(fx.appends.size(), 1u);
  EXPECT_EQ(add({{"t", 1}}, id.producer_id, 0).error, Error::kConcurrentTransactions);
}

TEST_F(TxnTest, InitOnOngoingFencesAbortsAndAnswersConcurrent) {
  // Seed 003: the processor dies in a transaction; the restarted one's init first gets
  // CONCURRENT_TRANSACTIONS while the old one is aborted (epoch 1), then epoch 2.
  const Answer first = init();
  add({{"order-totals-tx", 0}, {"__consumer_offsets", 2}}, first.producer_id, 0);
  const RequestHandle h = next_handle++;
  auto o = settle(c.init_producer_id(h, kId, 60000, -1, -1, std::nullopt, now));
  ASSERT_EQ(o.answers.size(), 1u);
  EXPECT_EQ(o.answers[0].handle, h);
  EXPECT_EQ(o.answers[0].error, Error::kConcurrentTransactions);
  ASSERT_EQ(o.markers.size(), 1u);
  EXPECT_FALSE(o.markers[0].commit);
  EXPECT_EQ(o.markers[0].producer_epoch, 1);
  EXPECT_EQ(state(), State::kPrepareAbort);
  EXPECT_EQ(init().error, Error::kConcurrentTransactions);
  // The zombie's EndTxn with the old epoch is fenced.
  EXPECT_EQ(end(true, first.producer_id, 0).error, Error::kProducerFenced);
  settle(c.on_markers_written(o.markers[0], {0, 0}, now));
  EXPECT_EQ(state(), State::kCompleteAbort);
  const Answer second = init();
  EXPECT_EQ(second.error, Error::kNone);
  EXPECT_EQ(second.producer_id, first.producer_id);
  EXPECT_EQ(second.producer_epoch, 2);
  EXPECT_EQ(add({{"t", 0}}, first.producer_id, 0).error, Error::kProducerFenced);
}

TEST_F(TxnTest, FailedFenceKeepsBumpedEpochAndDoesNotBumpTwice) {
  init();
  add({{"t", 0}}, 1000, 0);
  auto o = settle(c.init_producer_id(next_handle++, kId, 60000, -1, -1, std::nullopt, now), 7);
  ASSERT_EQ(o.answers.size(), 1u);
  EXPECT_EQ(o.answers[0].error, Error::kCoordinatorNotAvailable);
  EXPECT_EQ(c.find(kId)->producer_epoch, 1);
  EXPECT_TRUE(c.find(kId)->has_failed_epoch_fence);
  o = settle(c.init_producer_id(next_handle++, kId, 60000, -1, -1, std::nullopt, now));
  ASSERT_EQ(o.markers.size(), 1u);
  EXPECT_EQ(o.markers[0].producer_epoch, 1);
}

TEST_F(TxnTest, ExhaustedEpochRotatesProducerId) {
  init();
  // Replay a state at the largest usable epoch.
  TxnMetadata m = *c.find(kId);
  m.producer_epoch = 32766;
  m.state = State::kCompleteCommit;
  m.start_ms = now;
  ASSERT_TRUE(c.replay(TransactionCoordinator::key_bytes(kId), TransactionCoordinator::value_bytes(m, 1)));
  // KIP-360: the producer at the exhausted epoch asks; it gets a new producer id, and the old
  // epoch is remembered so that a retry of the same request gets the same answer.
  const Answer a = init(kId, 60000, 1000, 32766);
  EXPECT_EQ(a.error, Error::kNone);
  EXPECT_EQ(a.producer_id, 1001);
  EXPECT_EQ(a.producer_epoch, 0);
  EXPECT_EQ(c.find(kId)->previous_producer_id, 1000);
  EXPECT_EQ(c.find(kId)->last_producer_epoch, 32766);
  const Answer again = init(kId, 60000, 1000, 32766);
  EXPECT_EQ(again.error, Error::kNone);
  EXPECT_EQ(again.producer_id, 1001);
  EXPECT_EQ(again.producer_epoch, 0);
  // Without a producer id the epoch is bumped; the old producer id no longer matches.
  EXPECT_EQ(init().producer_epoch, 1);
  EXPECT_EQ(init(kId, 60000, 1000, 5).error, Error::kProducerFenced);
}

TEST_F(TxnTest, ExhaustedEpochWithoutProducerIdRotates) {
  init();
  TxnMetadata m = *c.find(kId);
  m.producer_epoch = 32766;
  ASSERT_TRUE(c.replay(TransactionCoordinator::key_bytes(kId), TransactionCoordinator::value_bytes(m, 1)));
  const Answer a = init();
  EXPECT_EQ(a.producer_id, 1001);
  EXPECT_EQ(a.producer_epoch, 0);
  EXPECT_EQ(c.find(kId)->last_producer_epoch, -1);
}

TEST_F(TxnTest, Kip360Recovery) {
  const Answer a = init();
  // The current epoch: bumped.
  const Answer b = init(kId, 60000, a.producer_id, a.producer_epoch);
  EXPECT_EQ(b.error, Error::kNone);
  EXPECT_EQ(b.producer_epoch, 1);
  // A retry with the previous epoch (the answer was lost): the same epoch again.
  const Answer retry = init(kId, 60000, a.producer_id, a.producer_epoch);
  EXPECT_EQ(retry.error, Error::kNone);
  EXPECT_EQ(retry.producer_epoch, 1);
  // Anything else is fenced; a different producer id too.
  EXPECT_EQ(init(kId, 60000, a.producer_id, 7).error, Error::kProducerFenced);
  EXPECT_EQ(init(kId, 60000, a.producer_id + 5, 1).error, Error::kProducerFenced);
}

TEST_F(TxnTest, TimedOutTransactionIsFencedAndAborted) {
  const Answer a = init(kId, 1000);
  add({{"t", 0}}, a.producer_id, a.producer_epoch);
  EXPECT_TRUE(settle(c.abort_timed_out(now + 1000)).markers.empty());  // not older than its timeout
  now += 1001;
  auto o = settle(c.abort_timed_out(now));
  ASSERT_EQ(o.markers.size(), 1u);
  EXPECT_TRUE(o.answers.empty());
  EXPECT_FALSE(o.markers[0].commit);
  EXPECT_EQ(o.markers[0].producer_epoch, 1);
  settle(c.on_markers_written(o.markers[0], {0}, now));
  EXPECT_EQ(state(), State::kCompleteAbort);
  EXPECT_EQ(c.stats().timed_out, 1u);
  EXPECT_EQ(end(true, a.producer_id, a.producer_epoch).error, Error::kProducerFenced);
  EXPECT_EQ(add({{"t", 0}}, a.producer_id, a.producer_epoch).error, Error::kProducerFenced);
}

TEST_F(TxnTest, ExpirationWritesTombstone) {
  TxnConfig cfg;
  cfg.transactional_id_expiration_ms = 5000;
  c = TransactionCoordinator(cfg);
  init();
  init("other");
  add({{"t", 0}}, 1001, 0, "other");  // Ongoing: never expires
  EXPECT_TRUE(settle(c.expire_transactional_ids(now + 4999)).answers.empty());
  EXPECT_NE(c.find(kId), nullptr);
  const auto before = log.size();
  settle(c.expire_transactional_ids(now + 5000));
  EXPECT_EQ(c.find(kId), nullptr);
  EXPECT_NE(c.find("other"), nullptr);
  ASSERT_EQ(log.size(), before + 1);
  EXPECT_FALSE(log.back().value.has_value());
  EXPECT_EQ(log.back().key, TransactionCoordinator::key_bytes(kId));
}

TEST_F(TxnTest, VerifyOnly) {
  EXPECT_EQ(c.verify(kId, 1, 0, {{"t", 0}}), std::vector<Error>{Error::kInvalidProducerIdMapping});
  const Answer a = init();
  add({{"t", 0}}, a.producer_id, 0);
  EXPECT_EQ(c.verify(kId, a.producer_id, 0, {{"t", 0}, {"t", 1}}),
            (std::vector<Error>{Error::kNone, Error::kTransactionAbortable}));
  EXPECT_EQ(c.verify(kId, a.producer_id, 1, {{"t", 0}}), std::vector<Error>{Error::kProducerFenced});
  EXPECT_EQ(c.verify("", a.producer_id, 0, {{"t", 0}}), std::vector<Error>{Error::kInvalidRequest});
  std::vector<MarkerRequest> markers;
  end(true, a.producer_id, 0, &markers, false);
  EXPECT_EQ(c.verify(kId, a.producer_id, 0, {{"t", 0}}), std::vector<Error>{Error::kConcurrentTransactions});
}

TEST_F(TxnTest, DescribeAndList) {
  auto d = c.describe(kId);
  EXPECT_EQ(d.error_code, code(Error::kTransactionalIdNotFound));
  EXPECT_EQ(c.describe("").error_code, code(Error::kInvalidRequest));
  const Answer a = init();
  add({{"__consumer_offsets", 2}, {"order-totals-tx", 0}}, a.producer_id, 0);
  d = c.describe(kId);
  EXPECT_EQ(d.error_code, 0);
  EXPECT_EQ(d.transaction_state, "Ongoing");
  EXPECT_EQ(d.transaction_timeout_ms, 60000);
  EXPECT_EQ(d.transaction_start_time_ms, now);
  ASSERT_EQ(d.topics.size(), 2u);
  EXPECT_EQ(d.topics[0].topic, "order-totals-tx");
  EXPECT_EQ(d.topics[1].topic, "__consumer_offsets");
  init("idle");
  std::vector<protocol::ListTransactionsResponse::TransactionState> out;
  c.list({}, {}, -1, now, out);
  EXPECT_EQ(out.size(), 2u);
  out.clear();
  c.list({"Ongoing"}, {}, -1, now, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].transactional_id, kId);
  out.clear();
  c.list({"Bogus"}, {}, -1, now, out);
  EXPECT_TRUE(out.empty());
  out.clear();
  c.list({}, {a.producer_id}, -1, now, out);
  ASSERT_EQ(out.size(), 1u);
  out.clear();
  c.list({"Ongoing"}, {}, 10, now + 10, out);  // running exactly 10 ms: not longer than 10
  EXPECT_TRUE(out.empty());
  c.list({"Ongoing"}, {}, 10, now + 11, out);
  EXPECT_EQ(out.size(), 1u);
}

TEST_F(TxnTest, ReplayRoundTripAndPendingMarkersAfterLoad) {
  const Answer a = init();
  add({{"t", 0}, {"t", 3}, {"u", 1}}, a.producer_id, 0);
  std::vector<MarkerRequest> markers;
  end(true, a.producer_id, 0, &markers, false);  // PrepareCommit written, markers not
  init("other");
  TransactionCoordinator loaded;
  for (const auto& r : log) {
    std::optional<std::span<const std::uint8_t>> v;
    if (r.value) v = std::span<const std::uint8_t>(*r.value);
    ASSERT_TRUE(loaded.replay(r.key, v));
  }
  const TxnMetadata* m = loaded.find(kId);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->state, State::kPrepareCommit);
  EXPECT_EQ(m->producer_id, a.producer_id);
  EXPECT_EQ(m->partitions.size(), 3u);
  EXPECT_EQ(m->start_ms, now);
  EXPECT_EQ(loaded.find("other")->state, State::kEmpty);
  Effects fx = loaded.finish_replay(now);
  ASSERT_EQ(fx.markers.size(), 1u);
  EXPECT_TRUE(fx.markers[0].commit);
  EXPECT_EQ(fx.markers[0].partitions.size(), 3u);
  Effects done = loaded.on_markers_written(fx.markers[0], {0, 0, 0}, now);
  ASSERT_EQ(done.appends.size(), 1u);
  loaded.on_appended(kId, 0, now);
  EXPECT_EQ(loaded.find(kId)->state, State::kCompleteCommit);
}

TEST(TxnReplay, RejectsMalformedRecords) {
  TransactionCoordinator c;
  const std::vector<std::uint8_t> short_key = {0};
  EXPECT_EQ(c.replay(short_key, std::nullopt).error(), ReplayError::kMalformedKey);
  const std::vector<std::uint8_t> v9 = {0, 9, 0, 1, 'x'};
  EXPECT_EQ(c.replay(v9, std::nullopt).error(), ReplayError::kUnknownKeyVersion);
  const Bytes key = TransactionCoordinator::key_bytes("x");
  const std::vector<std::uint8_t> bad_value = {0, 7};
  EXPECT_EQ(c.replay(key, std::span<const std::uint8_t>(bad_value)).error(), ReplayError::kUnknownValueVersion);
  const std::vector<std::uint8_t> truncated = {0, 1, 0, 0};
  EXPECT_EQ(c.replay(key, std::span<const std::uint8_t>(truncated)).error(), ReplayError::kMalformedValue);
}

TEST(TxnRecords, KeyBytes) {
  // int16 version 0, int16-length string.
  EXPECT_EQ(TransactionCoordinator::key_bytes("ab"), (Bytes{0, 0, 0, 2, 'a', 'b'}));
}

TEST(TxnRecords, EmptyValueVersion0Bytes) {
  TxnMetadata m;
  m.transactional_id = "x";
  m.producer_id = 1;
  m.producer_epoch = 2;
  m.timeout_ms = 60000;
  m.state = State::kEmpty;
  m.last_update_ms = 5;
  m.start_ms = -1;
  const Bytes v = TransactionCoordinator::value_bytes(m, 0);
  const Bytes want = {
      0,    0,                                         // version 0
      0,    0,    0,    0,    0,    0,    0,    1,     // producer id
      0,    2,                                         // epoch
      0,    0,    0xEA, 0x60,                          // timeout 60000
      0,                                               // Empty
      0xFF, 0xFF, 0xFF, 0xFF,                          // null partitions
      0,    0,    0,    0,    0,    0,    0,    5,     // last update
      0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,  // start -1
  };
  EXPECT_EQ(v, want);
}

TEST(TxnRecords, OngoingValueVersion1Bytes) {
  TxnMetadata m;
  m.producer_id = 1;
  m.previous_producer_id = 1;
  m.producer_epoch = 0;
  m.timeout_ms = 100;
  m.state = State::kOngoing;
  m.partitions = {{"t", 3}};
  m.last_update_ms = 9;
  m.start_ms = 8;
  const Bytes v = TransactionCoordinator::value_bytes(m, 1);
  const Bytes want = {
      0, 1,                              // version 1
      0, 0,   0, 0,   0, 0, 0, 1,        // producer id
      0, 0,                              // epoch
      0, 0,   0, 100,                    // timeout
      1,                                 // Ongoing
      2,                                 // compact array of 1
      2, 't', 2, 0,   0, 0, 3, 0,        // topic "t", partitions [3], no tags
      0, 0,   0, 0,   0, 0, 0, 9,        // last update
      0, 0,   0, 0,   0, 0, 0, 8,        // start
      1,                                 // one tagged field
      0, 8,   0, 0,   0, 0, 0, 0, 0, 1,  // tag 0 PreviousProducerId = 1
  };
  EXPECT_EQ(v, want);
  // And it reads back.
  TransactionCoordinator c;
  ASSERT_TRUE(c.replay(TransactionCoordinator::key_bytes("k"), std::span<const std::uint8_t>(v)));
  EXPECT_EQ(c.find("k")->partitions, m.partitions);
}

}  // namespace
}  // namespace weir::txn

namespace weir::txn {
namespace {

TEST_F(TxnTest, V2EndTxnBumpsTheEpochAndAnswersIt) {
  const Answer id = init();
  EXPECT_EQ(add_v2({{"t", 0}}, id.producer_id, 0).error, Error::kNone);
  EXPECT_EQ(c.find(kId)->client_transaction_version, 2);
  std::vector<MarkerRequest> markers;
  const Answer done = end_v2(true, id.producer_id, 0, &markers);
  EXPECT_EQ(done.error, Error::kNone);
  EXPECT_EQ(done.producer_id, id.producer_id);
  EXPECT_EQ(done.producer_epoch, 1);
  ASSERT_EQ(markers.size(), 1u);
  EXPECT_EQ(markers[0].producer_epoch, 1) << "markers carry the bumped epoch";
  EXPECT_EQ(markers[0].transaction_version, 2);
  EXPECT_EQ(state(), State::kCompleteCommit);
  EXPECT_EQ(c.find(kId)->producer_epoch, 1);
  // As Kafka 4.3.1 answered: a retry with the old epoch succeeds with the current ids; a commit
  // at the current epoch without a transaction is an invalid state; an abort bumps again.
  const Answer retry = end_v2(true, id.producer_id, 0);
  EXPECT_EQ(retry.error, Error::kNone);
  EXPECT_EQ(retry.producer_epoch, 1);
  EXPECT_EQ(end_v2(true, id.producer_id, 1).error, Error::kInvalidTxnState);
  EXPECT_EQ(end_v2(false, id.producer_id, 0).error, Error::kInvalidTxnState) << "an abort retrying a commit";
  const Answer empty_abort = end_v2(false, id.producer_id, 1);
  EXPECT_EQ(empty_abort.error, Error::kNone);
  EXPECT_EQ(empty_abort.producer_epoch, 2);
  EXPECT_EQ(state(), State::kCompleteAbort);
  EXPECT_EQ(end_v2(false, id.producer_id, 1).error, Error::kNone) << "retry of the abort";
  EXPECT_EQ(end_v2(true, id.producer_id, 2).error, Error::kInvalidTxnState);
  EXPECT_EQ(end_v2(true, id.producer_id, 3).error, Error::kProducerFenced);
  // The next transaction runs at the epoch EndTxn answered.
  EXPECT_EQ(add_v2({{"t", 0}}, id.producer_id, 1).error, Error::kProducerFenced);
  EXPECT_EQ(add_v2({{"t", 0}}, id.producer_id, 2).error, Error::kNone);
  EXPECT_EQ(end_v2(false, id.producer_id, 2).producer_epoch, 3);
}

TEST_F(TxnTest, V2AbortWithoutTransactionFromEmpty) {
  const Answer id = init();
  std::vector<MarkerRequest> markers;
  const Answer a = end_v2(false, id.producer_id, 0, &markers);
  EXPECT_EQ(a.error, Error::kNone);
  EXPECT_EQ(a.producer_epoch, 1);
  EXPECT_TRUE(markers.empty()) << "nothing to mark";
  EXPECT_EQ(state(), State::kCompleteAbort);
  EXPECT_EQ(c.find(kId)->start_ms, now) << "the abort's time stands for the start";
  EXPECT_EQ(init().producer_epoch, 2);
  EXPECT_EQ(end_v2(true, id.producer_id, 2).error, Error::kInvalidTxnState) << "no commit without a transaction";
}

TEST_F(TxnTest, V2ExhaustedEpochRotatesTheProducerIdAtTheEnd) {
  const Answer id = init();
  // Drive the epoch to Short.MAX_VALUE - 1 through replay of a record at that epoch.
  TxnMetadata m = *c.find(kId);
  m.producer_epoch = 32766;
  ASSERT_TRUE(c.replay(TransactionCoordinator::key_bytes(kId), TransactionCoordinator::value_bytes(m, 1)));
  EXPECT_EQ(add_v2({{"t", 0}}, id.producer_id, 32766).error, Error::kNone);
  std::vector<MarkerRequest> markers;
  const Answer a = end_v2(true, id.producer_id, 32766, &markers);
  EXPECT_EQ(a.error, Error::kNone);
  EXPECT_EQ(a.producer_id, 1001) << "a new producer id";
  EXPECT_EQ(a.producer_epoch, 0);
  ASSERT_EQ(markers.size(), 1u);
  EXPECT_EQ(markers[0].producer_id, id.producer_id);
  EXPECT_EQ(markers[0].producer_epoch, 32767);
  const TxnMetadata* after = c.find(kId);
  EXPECT_EQ(after->producer_id, 1001);
  EXPECT_EQ(after->previous_producer_id, id.producer_id);
  EXPECT_EQ(after->producer_epoch, 0);
  EXPECT_EQ(after->next_producer_id, -1);
  // A retry of that EndTxn (old id, old epoch) is recognised.
  const Answer retry = end_v2(true, id.producer_id, 32766);
  EXPECT_EQ(retry.error, Error::kNone);
  EXPECT_EQ(retry.producer_id, 1001);
}

TEST_F(TxnTest, FenceAtServerVersion2BumpsOnceAsKafka) {
  // Kafka 4.3.1 with transaction.version 2 finalized: a fence of an Ongoing transaction aborts
  // it one epoch up (the abort's own bump, not the fence's), whatever the client's version.
  c.set_server_transaction_version(2);
  const Answer id = init();
  EXPECT_EQ(add({{"t", 0}}, id.producer_id, 0).error, Error::kNone);  // a v1 client
  const RequestHandle h = next_handle++;
  auto o = settle(c.init_producer_id(h, kId, 60000, -1, -1, std::nullopt, now));
  ASSERT_EQ(o.answers.size(), 1u);
  EXPECT_EQ(o.answers[0].error, Error::kConcurrentTransactions);
  ASSERT_EQ(o.markers.size(), 1u);
  EXPECT_EQ(o.markers[0].producer_epoch, 1);
  EXPECT_EQ(o.markers[0].transaction_version, 2);
  EXPECT_FALSE(o.markers[0].commit);
  settle(c.on_markers_written(o.markers[0], {0}, now));
  EXPECT_EQ(state(), State::kCompleteAbort);
  EXPECT_EQ(c.find(kId)->producer_epoch, 1);
  EXPECT_EQ(init().producer_epoch, 2) << "seed 003's epoch 2";
}

TEST_F(TxnTest, TimeoutAtServerVersion2) {
  c.set_server_transaction_version(2);
  const Answer id = init();
  EXPECT_EQ(add_v2({{"t", 0}}, id.producer_id, 0).error, Error::kNone);
  now += 60001;
  auto o = settle(c.abort_timed_out(now));
  ASSERT_EQ(o.markers.size(), 1u);
  EXPECT_EQ(o.markers[0].producer_epoch, 1);
  settle(c.on_markers_written(o.markers[0], {0}, now));
  EXPECT_EQ(state(), State::kCompleteAbort);
  EXPECT_EQ(c.stats().timed_out, 1u);
  // The zombie's EndTxn with the old epoch is fenced; the current epoch may abort again.
  EXPECT_EQ(end_v2(true, id.producer_id, 0).error, Error::kInvalidTxnState) << "a retry, but of an abort";
  EXPECT_EQ(end_v2(false, id.producer_id, 0).error, Error::kNone);
}

}  // namespace
}  // namespace weir::txn
