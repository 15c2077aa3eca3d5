#include "storage/producer_state.h"

#include <gtest/gtest.h>

namespace wt = weir::storage;

namespace {

wt::BatchInfo batch(std::int64_t pid, std::int16_t epoch, std::int32_t first_seq, std::int32_t count) {
  return wt::BatchInfo{pid, epoch, first_seq, first_seq + count - 1, count, 1000};
}

TEST(ProducerState, NewProducerIsAcceptedAtAnySequence) {
  wt::ProducerStateTable t;
  EXPECT_EQ(t.check({batch(7, 0, 42, 3)}).outcome, wt::ProducerCheck::kOk);
}

TEST(ProducerState, RetriedBatchIsADuplicateWithItsOriginalOffsets) {
  wt::ProducerStateTable t;
  t.update({batch(7, 0, 0, 3)}, 100);
  auto r = t.check({batch(7, 0, 0, 3)});
  ASSERT_EQ(r.outcome, wt::ProducerCheck::kDuplicate);
  EXPECT_EQ(r.duplicate->first_offset, 100);
  EXPECT_EQ(r.duplicate->last_offset, 102);
}

TEST(ProducerState, GapIsOutOfOrder) {
  wt::ProducerStateTable t;
  t.update({batch(7, 0, 0, 3)}, 0);
  EXPECT_EQ(t.check({batch(7, 0, 4, 1)}).outcome, wt::ProducerCheck::kOutOfOrderSequence);
  EXPECT_EQ(t.check({batch(7, 0, 3, 1)}).outcome, wt::ProducerCheck::kOk);
}

TEST(ProducerState, OlderEpochIsFenced) {
  wt::ProducerStateTable t;
  t.update({batch(7, 2, 0, 1)}, 0);
  EXPECT_EQ(t.check({batch(7, 1, 1, 1)}).outcome, wt::ProducerCheck::kInvalidProducerEpoch);
}

TEST(ProducerState, NewEpochMustStartAtSequenceZero) {
  wt::ProducerStateTable t;
  t.update({batch(7, 0, 0, 5)}, 0);
  EXPECT_EQ(t.check({batch(7, 1, 5, 1)}).outcome, wt::ProducerCheck::kOutOfOrderSequence);
  EXPECT_EQ(t.check({batch(7, 1, 0, 1)}).outcome, wt::ProducerCheck::kOk);
}

TEST(ProducerState, SequenceWrapsAfterIntMax) {
  wt::ProducerStateTable t;
  t.update({wt::BatchInfo{7, 0, 2147483646, 2147483647, 2, 0}}, 0);
  EXPECT_EQ(t.check({batch(7, 0, 0, 1)}).outcome, wt::ProducerCheck::kOk);
}

TEST(ProducerState, OnlyTheLastFiveBatchesAreRemembered) {
  wt::ProducerStateTable t;
  for (int i = 0; i < 6; ++i) t.update({batch(7, 0, i, 1)}, i);
  EXPECT_EQ(t.find(7)->batches.size(), 5u);
  // The first batch is forgotten, so it is no longer a duplicate but out of order.
  EXPECT_EQ(t.check({batch(7, 0, 0, 1)}).outcome, wt::ProducerCheck::kOutOfOrderSequence);
  EXPECT_EQ(t.check({batch(7, 0, 1, 1)}).outcome, wt::ProducerCheck::kDuplicate);
}

TEST(ProducerState, LaterBatchesOfOneAppendSeeEarlierOnes) {
  wt::ProducerStateTable t;
  EXPECT_EQ(t.check({batch(7, 0, 0, 2), batch(7, 0, 2, 2)}).outcome, wt::ProducerCheck::kOk);
  auto r = t.check({batch(7, 0, 0, 2), batch(7, 0, 3, 2)});
  EXPECT_EQ(r.outcome, wt::ProducerCheck::kOutOfOrderSequence);
  EXPECT_EQ(r.batch_index, 1u);
}

TEST(ProducerState, IdleProducersExpire) {
  wt::ProducerStateTable t;
  t.update({batch(7, 0, 0, 1)}, 0);
  t.expire(1000 + 86400000, 86400000);
  EXPECT_EQ(t.find(7), nullptr);
}

TEST(ProducerState, NonIdempotentBatchesAreNotTracked) {
  wt::ProducerStateTable t;
  t.update({wt::BatchInfo{-1, -1, -1, -1, 3, 0}}, 0);
  EXPECT_EQ(t.size(), 0u);
}

wt::BatchInfo txn_batch(std::int64_t pid, std::int16_t epoch, std::int32_t first_seq, std::int32_t count) {
  wt::BatchInfo b = batch(pid, epoch, first_seq, count);
  b.transactional = true;
  return b;
}

TEST(ProducerStateTransactions, FirstUnstableOffsetIsTheOldestOpenTransactionAcrossProducers) {
  wt::ProducerStateTable t;
  EXPECT_FALSE(t.first_unstable_offset(0).has_value());
  t.update({txn_batch(1, 0, 0, 2)}, 10);
  t.update({batch(2, 0, 0, 1)}, 12);  // idempotent, not transactional: opens nothing
  t.update({txn_batch(3, 0, 0, 1)}, 13);
  t.update({txn_batch(1, 0, 2, 1)}, 14);  // more of producer 1's transaction
  EXPECT_EQ(t.first_unstable_offset(15), 10);
  EXPECT_TRUE(t.has_ongoing_transaction(1, 0));
  EXPECT_FALSE(t.has_ongoing_transaction(1, 1)) << "another epoch";
  EXPECT_FALSE(t.has_ongoing_transaction(2, 0));

  auto done = t.end_transaction(1, 0, 4, /*commit=*/true, 15, 2000);
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(done->first_offset, 10);
  EXPECT_EQ(done->last_offset, 15);
  EXPECT_FALSE(done->aborted);
  EXPECT_EQ(done->last_stable_offset, 13) << "producer 3's transaction is still open";
  EXPECT_EQ(t.first_unstable_offset(16), 13) << "the marker is under the high watermark";
  EXPECT_EQ(t.first_unstable_offset(15), 10) << "the marker is not replicated yet";
  EXPECT_EQ(t.find(1)->coordinator_epoch, 4);
  EXPECT_FALSE(t.find(1)->current_txn_first_offset.has_value());

  auto aborted = t.end_transaction(3, 0, 4, /*commit=*/false, 16, 2000);
  ASSERT_TRUE(aborted.has_value());
  EXPECT_TRUE(aborted->aborted);
  EXPECT_EQ(aborted->last_stable_offset, 17) << "none open: the offset after the marker";
  EXPECT_FALSE(t.first_unstable_offset(17).has_value());
  EXPECT_EQ(t.first_unstable_offset(16), 13);
  t.on_high_watermark(17);
  EXPECT_FALSE(t.first_unstable_offset(0).has_value()) << "both markers are replicated: forgotten";
}

TEST(ProducerStateTransactions, AMarkerWithoutAnOpenTransactionCompletesNothing) {
  wt::ProducerStateTable t;
  EXPECT_FALSE(t.end_transaction(9, 2, 1, true, 0, 1000).has_value());
  EXPECT_EQ(t.find(9)->epoch, 2);
  EXPECT_EQ(t.find(9)->coordinator_epoch, 1);
}

TEST(ProducerStateTransactions, MarkersWithAStaleEpochOrCoordinatorEpochAreRefused) {
  wt::ProducerStateTable t;
  EXPECT_EQ(t.check_marker(1, 0, 0), wt::MarkerCheck::kOk) << "no state: written anyway";
  t.update({txn_batch(1, 3, 0, 1)}, 0);
  (void)t.end_transaction(1, 3, 5, true, 1, 1000);
  EXPECT_EQ(t.check_marker(1, 2, 5), wt::MarkerCheck::kInvalidProducerEpoch);
  EXPECT_EQ(t.check_marker(1, 3, 4), wt::MarkerCheck::kCoordinatorFenced);
  EXPECT_EQ(t.check_marker(1, 3, 5), wt::MarkerCheck::kOk);
  EXPECT_EQ(t.check_marker(1, 4, 6), wt::MarkerCheck::kOk);
}

TEST(ProducerStateTransactions, Version2MarkersNeedABumpedEpochUnlessTheyRepeatOne) {
  // Kafka's checkProducerEpoch for markers of transaction version 2: the coordinator bumped the
  // epoch, so a marker at the data's epoch is a zombie's, unless the transaction is already
  // ended (a repeated marker write).
  wt::ProducerStateTable t;
  t.update({txn_batch(1, 3, 0, 1)}, 0);
  EXPECT_EQ(t.check_marker(1, 3, 0, 2), wt::MarkerCheck::kInvalidProducerEpoch) << "open transaction at that epoch";
  EXPECT_EQ(t.check_marker(1, 3, 0, 0), wt::MarkerCheck::kOk) << "version 0/1: the same epoch is fine";
  EXPECT_EQ(t.check_marker(1, 4, 0, 2), wt::MarkerCheck::kOk);
  (void)t.end_transaction(1, 4, 0, true, 1, 1000);
  EXPECT_EQ(t.check_marker(1, 4, 0, 2), wt::MarkerCheck::kOk) << "a retry of the marker just written";
  EXPECT_EQ(t.check_marker(1, 3, 0, 2), wt::MarkerCheck::kInvalidProducerEpoch);
}

TEST(ProducerStateTransactions, RestoredAndReplayedTransactionsAreOpen) {
  wt::ProducerStateTable t;
  wt::ProducerEntry e;
  e.epoch = 0;
  e.current_txn_first_offset = 40;
  t.restore(5, e);
  EXPECT_EQ(t.first_unstable_offset(0), 40);
  t.replay(wt::LoggedBatch{.producer_id = 6,
                           .epoch = 0,
                           .first_seq = 0,
                           .last_seq = 0,
                           .first_offset = 30,
                           .last_offset = 30,
                           .max_timestamp_ms = 1000,
                           .transactional = true});
  EXPECT_EQ(t.first_unstable_offset(0), 30);
  t.replay(wt::LoggedBatch{.producer_id = 6,
                           .epoch = 0,
                           .first_offset = 41,
                           .last_offset = 41,
                           .max_timestamp_ms = 1000,
                           .transactional = true,
                           .control = true,
                           .coordinator_epoch = 0});
  EXPECT_EQ(t.first_unstable_offset(42), 40);
  EXPECT_EQ(t.first_unstable_offset(41), 30) << "a replayed marker at the high watermark: not replicated yet";
  t.clear();
  EXPECT_FALSE(t.first_unstable_offset(0).has_value());
}

}  // namespace
