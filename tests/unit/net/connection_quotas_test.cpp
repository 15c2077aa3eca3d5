#include "net/connection_quotas.h"

#include <gtest/gtest.h>

namespace weir::net {
namespace {

ConnectionLimits limits(std::int32_t max, std::int32_t per_ip) {
  ConnectionLimits l;
  l.max_connections = max;
  l.max_connections_per_ip = per_ip;
  return l;
}

TEST(ConnectionQuotasTest, PerIpLimitRefusesTheConnectionOverIt) {
  ConnectionQuotas q(limits(100, 2));
  EXPECT_EQ(q.admit("10.0.0.1"), ConnectionQuotas::Admission::kAccepted);
  EXPECT_EQ(q.admit("10.0.0.1"), ConnectionQuotas::Admission::kAccepted);
  EXPECT_EQ(q.admit("10.0.0.1"), ConnectionQuotas::Admission::kPerIpLimit);
  // Another address has its own count; the refused connection was not counted.
  EXPECT_EQ(q.admit("10.0.0.2"), ConnectionQuotas::Admission::kAccepted);
  EXPECT_EQ(q.count_for("10.0.0.1"), 2);
  EXPECT_EQ(q.total(), 3);
  q.release("10.0.0.1");
  EXPECT_EQ(q.admit("10.0.0.1"), ConnectionQuotas::Admission::kAccepted);
}

TEST(ConnectionQuotasTest, NewLimitsApplyToTheNextConnectionsAndKeepOpenOnes) {
  ConnectionQuotas q(limits(2, 5));
  EXPECT_EQ(q.admit("10.0.0.1"), ConnectionQuotas::Admission::kAccepted);
  EXPECT_EQ(q.admit("10.0.0.1"), ConnectionQuotas::Admission::kAccepted);
  EXPECT_FALSE(q.slot_available());
  // Raised: a waiting acceptor may go on.
  EXPECT_TRUE(q.update(limits(3, 5)));
  EXPECT_TRUE(q.slot_available());
  // A per-address override below the open count: the open ones stay, the next is refused.
  ConnectionLimits l = limits(3, 5);
  l.max_connections_per_ip_overrides["10.0.0.1"] = 1;
  EXPECT_FALSE(q.update(l));
  EXPECT_EQ(q.count_for("10.0.0.1"), 2);
  EXPECT_EQ(q.admit("10.0.0.1"), ConnectionQuotas::Admission::kPerIpLimit);
  EXPECT_EQ(q.limits().max_connections_per_ip_overrides.at("10.0.0.1"), 1);
  // Lowered below the open count: no new slot until enough close.
  EXPECT_FALSE(q.update(limits(1, 5)));
  EXPECT_FALSE(q.slot_available());
  q.release("10.0.0.1");
  EXPECT_FALSE(q.slot_available());
  q.release("10.0.0.1");
  EXPECT_TRUE(q.slot_available());
}

TEST(ConnectionQuotasTest, OverrideReplacesTheDefaultForItsAddressOnly) {
  ConnectionLimits l = limits(100, 1);
  l.max_connections_per_ip_overrides["127.0.0.1"] = 3;
  l.max_connections_per_ip_overrides["10.0.0.9"] = 0;
  ConnectionQuotas q(l);
  EXPECT_EQ(q.limit_for("127.0.0.1"), 3);
  EXPECT_EQ(q.limit_for("10.0.0.1"), 1);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(q.admit("127.0.0.1"), ConnectionQuotas::Admission::kAccepted);
  EXPECT_EQ(q.admit("127.0.0.1"), ConnectionQuotas::Admission::kPerIpLimit);
  EXPECT_EQ(q.admit("10.0.0.9"), ConnectionQuotas::Admission::kPerIpLimit);
  EXPECT_EQ(q.admit("10.0.0.1"), ConnectionQuotas::Admission::kAccepted);
  EXPECT_EQ(q.admit("10.0.0.1"), ConnectionQuotas::Admission::kPerIpLimit);
}

TEST(ConnectionQuotasTest, SlotsRunOutAtMaxConnectionsAndReleaseSaysWhenOneWasAwaited) {
  ConnectionQuotas q(limits(2, 100));
  EXPECT_TRUE(q.slot_available());
  (void)q.admit("a");
  EXPECT_TRUE(q.slot_available());
  (void)q.admit("b");
  EXPECT_FALSE(q.slot_available());
  EXPECT_TRUE(q.release("a"));  // at the limit: an acceptor may be waiting
  EXPECT_TRUE(q.slot_available());
  EXPECT_FALSE(q.release("b"));
  EXPECT_EQ(q.total(), 0);
}

TEST(ConnectionQuotasTest, CreationRateDelaysAcceptsBeyondOneSecondsWorth) {
  ConnectionLimits l = limits(100, 100);
  l.max_connection_creation_rate = 4;
  ConnectionQuotas q(l);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(q.creation_delay_ms(1000), 0) << i;
  // Empty: the next token comes 250 ms later.
  EXPECT_EQ(q.creation_delay_ms(1000), 250);
  EXPECT_EQ(q.creation_delay_ms(1125), 125);
  EXPECT_EQ(q.creation_delay_ms(1250), 0);
  EXPECT_GT(q.creation_delay_ms(1250), 0);
  // Saved-up tokens never exceed one second's worth.
  for (int i = 0; i < 4; ++i) EXPECT_EQ(q.creation_delay_ms(100000), 0) << i;
  EXPECT_GT(q.creation_delay_ms(100000), 0);
}

TEST(ConnectionQuotasTest, UnlimitedCreationRateNeverDelays) {
  ConnectionQuotas q(limits(100, 100));
  for (int i = 0; i < 10000; ++i) ASSERT_EQ(q.creation_delay_ms(5), 0);
}

TEST(DefaultMaxConnectionsTest, IsHalfTheFileDescriptorsAndAtLeastOne) {
  EXPECT_EQ(default_max_connections(256), 128);
  EXPECT_EQ(default_max_connections(1048576), 524288);
  EXPECT_EQ(default_max_connections(1), 1);
  EXPECT_EQ(default_max_connections(std::uint64_t{1} << 40), 2147483647);
}

}  // namespace
}  // namespace weir::net
