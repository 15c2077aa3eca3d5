#include "client/metadata.h"

#include <gtest/gtest.h>

namespace weir::client {
namespace {

using protocol::MetadataResponse;

MetadataResponse cluster_with(std::initializer_list<std::int32_t> brokers) {
  MetadataResponse r;
  for (const auto id : brokers) {
    auto& b = r.brokers.emplace_back();
    b.node_id = id;
    b.host = "host" + std::to_string(id);
    b.port = 9000 + id;
  }
  r.cluster_id = "c1";
  r.controller_id = 1;
  return r;
}

MetadataResponse::MetadataResponseTopic& add_topic(MetadataResponse& r, const std::string& name,
                                                   std::initializer_list<std::int32_t> leaders,
                                                   std::int16_t error = 0) {
  auto& t = r.topics.emplace_back();
  t.name = name;
  t.error_code = error;
  std::int32_t index = 0;
  for (const auto leader : leaders) {
    auto& p = t.partitions.emplace_back();
    p.partition_index = index++;
    p.leader_id = leader;
  }
  return t;
}

TEST(MetadataCacheTest, RoutesAPartitionToItsLeader) {
  MetadataCache c;
  auto r = cluster_with({1, 2});
  add_topic(r, "orders", {2, 1});
  c.update(r, 0);
  EXPECT_EQ(c.leader("orders", 0), 2);
  EXPECT_EQ(c.leader("orders", 1), 1);
  EXPECT_EQ(c.node(2), (Endpoint{"host2", 9002}));
  EXPECT_EQ(c.controller_id(), 1);
  EXPECT_EQ(c.cluster_id(), "c1");
}

TEST(MetadataCacheTest, UnknownTopicsAndPartitionsAreUnknownTopicOrPartition) {
  MetadataCache c;
  auto r = cluster_with({1});
  add_topic(r, "orders", {1});
  c.update(r, 0);
  EXPECT_EQ(c.leader("missing", 0).error(), 3);
  EXPECT_EQ(c.leader("orders", 1).error(), 3);
}

TEST(MetadataCacheTest, ATopicErrorIsWhatRoutingReports) {
  MetadataCache c;
  auto r = cluster_with({1});
  add_topic(r, "new", {}, 5);  // LEADER_NOT_AVAILABLE while it is being created
  c.update(r, 0);
  EXPECT_EQ(c.leader("new", 0).error(), 5);
}

TEST(MetadataCacheTest, NoLeaderOrALeaderMissingFromTheBrokersIsLeaderNotAvailable) {
  MetadataCache c;
  auto r = cluster_with({1});
  add_topic(r, "t", {-1, 7});
  c.update(r, 0);
  EXPECT_EQ(c.leader("t", 0).error(), 5);
  EXPECT_EQ(c.leader("t", 1).error(), 5);
}

TEST(MetadataCacheTest, AnUpdateReplacesTheTopicsItNamesAndKeepsTheRest) {
  MetadataCache c;
  auto first = cluster_with({1, 2});
  add_topic(first, "a", {1});
  add_topic(first, "b", {1});
  c.update(first, 0);
  auto second = cluster_with({1, 2});
  add_topic(second, "a", {2});
  c.update(second, 10);
  EXPECT_EQ(c.leader("a", 0), 2);
  EXPECT_EQ(c.leader("b", 0), 1);
}

TEST(MetadataCacheTest, NeedsARefreshWhenNeverFetchedTooOldOrInvalidated) {
  MetadataCache c;
  EXPECT_TRUE(c.needs_refresh(0, 1000));
  c.update(cluster_with({1}), 100);
  EXPECT_FALSE(c.needs_refresh(1099, 1000));
  EXPECT_TRUE(c.needs_refresh(1100, 1000));
  c.update(cluster_with({1}), 2000);
  c.invalidate();
  EXPECT_TRUE(c.needs_refresh(2000, 1000));
  c.update(cluster_with({1}), 2001);
  EXPECT_FALSE(c.needs_refresh(2001, 1000));
}

TEST(MetadataCacheTest, TrackedTopicsAccumulate) {
  MetadataCache c;
  c.track("a");
  c.track("b");
  c.track("a");
  EXPECT_EQ(c.tracked(), (std::set<std::string>{"a", "b"}));
}

}  // namespace
}  // namespace weir::client
