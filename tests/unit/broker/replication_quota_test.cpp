// The replication throttle's rate (Kafka's SimpleRate over replication.quota.window.num samples
// of replication.quota.window.size.seconds) and which partitions a topic's
// *.replication.throttled.replicas value throttles on a broker.
#include <gtest/gtest.h>

#include "broker/replication_quota.h"

namespace weir::broker {
namespace {

TEST(ThrottledPartitions, ValuesAsTheyApplyToOneBroker) {
  EXPECT_FALSE(throttled_partitions_for("", 1).has_value());
  EXPECT_FALSE(throttled_partitions_for("  ", 1).has_value());
  const auto all = throttled_partitions_for(" * ", 1);
  ASSERT_TRUE(all.has_value());
  EXPECT_TRUE(all->all);
  const auto some = throttled_partitions_for("0:1, 0:2,1:1 ,2:3", 1);
  ASSERT_TRUE(some.has_value());
  EXPECT_FALSE(some->all);
  EXPECT_EQ(some->partitions, (std::set<std::int32_t>{0, 1}));
  const auto other = throttled_partitions_for("0:1,0:2,1:1,2:3", 3);
  ASSERT_TRUE(other.has_value());
  EXPECT_EQ(other->partitions, (std::set<std::int32_t>{2}));
  EXPECT_FALSE(throttled_partitions_for("0:1,0:2", 4).has_value());
}

TEST(ReplicationQuota, ThrottledPartitionsReplacedAsAWhole) {
  ReplicationQuota q(11, 1);
  EXPECT_FALSE(q.any_throttled());
  q.set_throttled({{"a", ThrottledPartitions{.all = true, .partitions = {}}}, {"b", ThrottledPartitions{.all = false, .partitions = {1}}}});
  EXPECT_TRUE(q.throttled("a", 7));
  EXPECT_TRUE(q.throttled("b", 1));
  EXPECT_FALSE(q.throttled("b", 0));
  EXPECT_FALSE(q.throttled("c", 0));
  q.set_throttled({});
  EXPECT_FALSE(q.throttled("a", 7));
  EXPECT_FALSE(q.any_throttled());
}

TEST(ReplicationQuota, UnlimitedIsNeverExceeded) {
  ReplicationQuota q(11, 1);
  q.record(std::int64_t{1} << 40, 1000);
  EXPECT_FALSE(q.exceeded(1000));
}

TEST(ReplicationQuota, RateOverAtLeastOneWindow) {
  ReplicationQuota q(11, 1);
  q.set_rate(1000);
  EXPECT_FALSE(q.exceeded(0));
  // 1000 bytes in the first 100 ms: the rate is measured over at least one window (1 s).
  q.record(1000, 100);
  EXPECT_DOUBLE_EQ(q.measure(100), 1000.0);
  EXPECT_FALSE(q.exceeded(100));
  q.record(1, 200);
  EXPECT_TRUE(q.exceeded(200));
  // Later the same bytes spread over the time since the oldest sample began.
  EXPECT_NEAR(q.measure(2100), 1001.0 / 2.0, 1e-9);
  EXPECT_FALSE(q.exceeded(2100));
}

TEST(ReplicationQuota, BytesLeaveTheRateWhenTheirSampleExpires) {
  // Kafka's shape for a tiny throttle: one big fetch exceeds it until its sample is older than
  // samples x window.
  ReplicationQuota q(11, 1);
  q.set_rate(1);
  q.record(1 << 20, 0);
  EXPECT_TRUE(q.exceeded(5000));
  EXPECT_TRUE(q.exceeded(10999));
  EXPECT_FALSE(q.exceeded(11000));
  EXPECT_DOUBLE_EQ(q.measure(11000), 0.0);
}

TEST(ReplicationQuota, SamplesAdvanceEachWindow) {
  ReplicationQuota q(2, 1);
  q.set_rate(100);
  q.record(100, 0);     // sample 1 [0, 1000)
  q.record(100, 1000);  // sample 2 [1000, 2000)
  EXPECT_NEAR(q.measure(1500), 200.0 / 1.5, 1e-9);
  q.record(100, 2000);  // sample 3 (the ring keeps samples + 1)
  // The first sample's last event is samples x window old at 2000: it is dropped, leaving
  // samples 2 and 3, measured from the start of sample 2.
  EXPECT_NEAR(q.measure(2000), 200.0 / 1.0, 1e-9);
  EXPECT_NEAR(q.measure(2500), 200.0 / 1.5, 1e-9);
  q.set_rate(ReplicationQuota::kUnlimited);
  EXPECT_FALSE(q.exceeded(2500));
}

}  // namespace
}  // namespace weir::broker
