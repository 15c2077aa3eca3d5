// What a group reports for metrics: completed rebalances and how long the last one took, and
// the coordinator's listing of groups and committed offsets.
#include <gtest/gtest.h>

#include "group_test_util.h"

namespace weir::group::testing {
namespace {

constexpr const char* kGroup = "g1";

TEST(GroupRebalanceStats, ARebalanceCountsOnceTheGroupIsStableWithItsDuration) {
  GroupHarness h;
  auto [id1, join1] = h.join_with_required_id(kGroup, JoinOptions{});
  const ClassicGroup* g = h.coordinator.group(kGroup);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->rebalances(), 0u);
  EXPECT_EQ(g->last_rebalance_ms(), -1);
  h.advance(3000);  // group.initial.rebalance.delay.ms
  ASSERT_TRUE(h.take_join(join1));
  EXPECT_EQ(h.state(kGroup), GroupState::kCompletingRebalance);
  EXPECT_EQ(g->rebalances(), 0u);  // not done until the assignment is handed out
  h.advance(250);
  ASSERT_TRUE(h.sync(kGroup, id1, 1, {{id1, "p0"}}));
  EXPECT_EQ(h.state(kGroup), GroupState::kStable);
  EXPECT_EQ(g->rebalances(), 1u);
  EXPECT_EQ(g->last_rebalance_ms(), 3250);
}

TEST(GroupRebalanceStats, ARebalanceAbandonedByItsLastMemberIsNotCounted) {
  GroupHarness h;
  auto [id1, join1] = h.join_with_required_id(kGroup, JoinOptions{});
  h.leave(kGroup, id1);
  h.advance(3000);  // the join phase ends with nobody in it
  EXPECT_EQ(h.state(kGroup), GroupState::kEmpty);
  EXPECT_EQ(h.coordinator.group(kGroup)->rebalances(), 0u);
  // A later rebalance is timed from its own start.
  h.advance(10000);
  auto [id2, join2] = h.join_with_required_id(kGroup, JoinOptions{});
  h.advance(3000);
  ASSERT_TRUE(h.take_join(join2));
  ASSERT_TRUE(h.sync(kGroup, id2, 2, {{id2, "p0"}}));
  EXPECT_EQ(h.coordinator.group(kGroup)->rebalances(), 1u);
  EXPECT_EQ(h.coordinator.group(kGroup)->last_rebalance_ms(), 3000);
}

TEST(GroupRebalanceStats, CoordinatorListsGroupsAndTheirCommittedOffsets) {
  GroupHarness h;
  auto [id1, join1] = h.join_with_required_id(kGroup, JoinOptions{});
  h.advance(3000);
  ASSERT_TRUE(h.take_join(join1));
  ASSERT_TRUE(h.sync(kGroup, id1, 1, {{id1, "p0"}}));
  ASSERT_EQ(h.commit(kGroup, id1, 1, "orders", 2, 42), 0);

  ASSERT_EQ(h.coordinator.groups().size(), 1u);
  EXPECT_EQ(h.coordinator.groups().begin()->first, kGroup);
  const auto& offsets = h.coordinator.offsets();
  ASSERT_EQ(offsets.size(), 1u);
  const auto& committed = offsets.at(kGroup);
  ASSERT_EQ(committed.size(), 1u);
  EXPECT_EQ(committed.begin()->first, (std::pair<std::string, std::int32_t>{"orders", 2}));
  EXPECT_EQ(committed.begin()->second.offset, 42);
}

}  // namespace
}  // namespace weir::group::testing
