#include "metrics/histogram.h"

#include <gtest/gtest.h>

namespace weir::metrics {
namespace {

TEST(HistogramTest, ValuesFallInTheBucketWhoseUpperBoundTheyDoNotExceed) {
  EXPECT_EQ(histogram_bucket(0), 0u);
  EXPECT_EQ(histogram_bucket(1), 0u);
  EXPECT_EQ(histogram_bucket(2), 1u);
  EXPECT_EQ(histogram_bucket(3), 2u);
  EXPECT_EQ(histogram_bucket(5), 2u);
  EXPECT_EQ(histogram_bucket(6), 3u);
  EXPECT_EQ(histogram_bucket(50000000), kHistogramBounds.size() - 1);
  EXPECT_EQ(histogram_bucket(50000001), kHistogramBounds.size());  // overflow
}

TEST(HistogramTest, SnapshotHoldsCountSumAndMax) {
  Histogram h;
  h.observe(3);
  h.observe(700);
  h.observe(0);
  const auto s = h.snapshot();
  EXPECT_EQ(s.count, 3u);
  EXPECT_EQ(s.sum, 703u);
  EXPECT_EQ(s.max, 700u);
  EXPECT_EQ(s.counts[0], 1u);
  EXPECT_EQ(s.counts[2], 1u);
  EXPECT_EQ(s.counts[histogram_bucket(700)], 1u);
}

TEST(HistogramTest, EmptyHistogramEstimatesZero) {
  Histogram h;
  EXPECT_EQ(h.snapshot().percentile(0.99), 0.0);
}

// 1..100 once each: bucket bounds 50 and 100 are exact ranks, so interpolation gives them back.
TEST(HistogramTest, PercentilesInterpolateInsideTheBucket) {
  Histogram h;
  for (std::uint64_t v = 1; v <= 100; ++v) h.observe(v);
  const auto s = h.snapshot();
  EXPECT_DOUBLE_EQ(s.percentile(0.5), 50.0);
  EXPECT_DOUBLE_EQ(s.percentile(0.99), 99.0);
  EXPECT_DOUBLE_EQ(s.percentile(1.0), 100.0);
  EXPECT_DOUBLE_EQ(s.percentile(0.0), 1.0);
}

TEST(HistogramTest, EstimateNeverExceedsTheLargestValueSeen) {
  Histogram h;
  h.observe(3);  // bucket (2, 5]
  EXPECT_DOUBLE_EQ(h.snapshot().percentile(0.5), 3.0);
}

TEST(HistogramTest, OverflowBucketInterpolatesUpToTheMax) {
  Histogram h;
  h.observe(60000000);
  h.observe(90000000);
  const auto s = h.snapshot();
  EXPECT_EQ(s.counts[kHistogramBounds.size()], 2u);
  EXPECT_DOUBLE_EQ(s.percentile(1.0), 90000000.0);
  EXPECT_GT(s.percentile(0.5), 50000000.0);
}

TEST(HistogramTest, MergedSnapshotsAreTheSumOfTheShards) {
  Histogram a;
  Histogram b;
  for (std::uint64_t v = 1; v <= 50; ++v) a.observe(v);
  for (std::uint64_t v = 51; v <= 100; ++v) b.observe(v);
  auto s = a.snapshot();
  s.merge(b.snapshot());
  EXPECT_EQ(s.count, 100u);
  EXPECT_EQ(s.sum, 5050u);
  EXPECT_EQ(s.max, 100u);
  EXPECT_DOUBLE_EQ(s.percentile(0.5), 50.0);
  EXPECT_DOUBLE_EQ(s.percentile(0.99), 99.0);
}

}  // namespace
}  // namespace weir::metrics
