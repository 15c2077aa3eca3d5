#include <gtest/gtest.h>

#include "storage/producer_state.h"

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

}  // namespace
