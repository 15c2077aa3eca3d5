#include "client/assignors.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace weir::client {
namespace {

GroupMemberSubscription member(std::string id, std::vector<std::string> topics, std::vector<TopicPartition> owned = {},
                               std::int32_t generation = -1) {
  GroupMemberSubscription m;
  m.member_id = std::move(id);
  m.subscription.topics = std::move(topics);
  m.subscription.owned_partitions = std::move(owned);
  m.subscription.generation_id = generation;
  return m;
}

std::vector<TopicPartition> partitions(const std::string& topic, std::vector<std::int32_t> ids) {
  std::vector<TopicPartition> out;
  for (const auto p : ids) out.emplace_back(topic, p);
  return out;
}

// Every partition of `topics` at most once across the assignment.
void expect_disjoint(const GroupAssignment& a) {
  std::set<TopicPartition> seen;
  for (const auto& [m, list] : a) {
    for (const auto& tp : list) EXPECT_TRUE(seen.insert(tp).second) << tp.first << "-" << tp.second << " twice";
  }
}

std::size_t total(const GroupAssignment& a) {
  std::size_t n = 0;
  for (const auto& [m, list] : a) n += list.size();
  return n;
}

// The members of the next rebalance: same subscriptions, owning what they were assigned.
std::vector<GroupMemberSubscription> next_round(const std::vector<GroupMemberSubscription>& members,
                                                const GroupAssignment& a, std::int32_t generation) {
  std::vector<GroupMemberSubscription> out;
  for (const auto& m : members)
    out.push_back(member(m.member_id, m.subscription.topics, a.at(m.member_id), generation));
  return out;
}

TEST(RangeAssignorTest, ConsecutiveRangesTheFirstMembersTakingTheRemainder) {
  const PartitionCounts topics{{"t", 5}, {"u", 2}};
  const std::vector<GroupMemberSubscription> members{member("m-b", {"t", "u"}), member("m-a", {"t", "u"})};
  const auto a = assign_range(topics, members);
  EXPECT_EQ(a.at("m-a"), (std::vector<TopicPartition>{{"t", 0}, {"t", 1}, {"t", 2}, {"u", 0}}));
  EXPECT_EQ(a.at("m-b"), (std::vector<TopicPartition>{{"t", 3}, {"t", 4}, {"u", 1}}));
}

TEST(RangeAssignorTest, OnlySubscribersOfATopicShareItAndMissingTopicsAreSkipped) {
  const PartitionCounts topics{{"t", 2}};
  const auto a = assign_range(topics, {member("a", {"t"}), member("b", {"gone"})});
  EXPECT_EQ(a.at("a"), partitions("t", {0, 1}));
  EXPECT_TRUE(a.at("b").empty());
}

TEST(CooperativeStickyAssignorTest, AFreshGroupIsBalancedAndComplete) {
  const PartitionCounts topics{{"t", 7}};
  const auto a = assign_cooperative_sticky(topics, {member("a", {"t"}), member("b", {"t"}), member("c", {"t"})});
  expect_disjoint(a);
  EXPECT_EQ(total(a), 7u);
  std::multiset<std::size_t> sizes;
  for (const auto& [m, list] : a) sizes.insert(list.size());
  EXPECT_EQ(sizes, (std::multiset<std::size_t>{2, 2, 3}));
}

TEST(CooperativeStickyAssignorTest, MembersKeepWhatTheyOwnWhenBalanced) {
  const PartitionCounts topics{{"t", 4}};
  const auto a = assign_cooperative_sticky(
      topics, {member("a", {"t"}, partitions("t", {1, 3}), 4), member("b", {"t"}, partitions("t", {0, 2}), 4)});
  EXPECT_EQ(a.at("a"), partitions("t", {1, 3}));
  EXPECT_EQ(a.at("b"), partitions("t", {0, 2}));
}

TEST(CooperativeStickyAssignorTest, ANewMemberGetsMovedPartitionsOnlyInTheFollowUpRebalance) {
  const PartitionCounts topics{{"t", 4}};
  std::vector<GroupMemberSubscription> members{member("a", {"t"}, partitions("t", {0, 1, 2, 3}), 3),
                                               member("b", {"t"})};
  // First rebalance: a keeps two and gives up two, which nobody gets yet.
  const auto first = assign_cooperative_sticky(topics, members);
  EXPECT_EQ(first.at("a").size(), 2u);
  EXPECT_TRUE(first.at("b").empty());
  for (const auto& tp : first.at("a")) EXPECT_TRUE(tp.second >= 0 && tp.second < 4);

  // a revokes and rejoins: the follow-up rebalance hands b what a gave up, a keeps its two.
  const auto second = assign_cooperative_sticky(topics, next_round(members, first, 4));
  EXPECT_EQ(second.at("a"), first.at("a"));
  EXPECT_EQ(second.at("b").size(), 2u);
  expect_disjoint(second);
  EXPECT_EQ(total(second), 4u);
}

TEST(CooperativeStickyAssignorTest, NoOwnedPartitionGoesToAnotherMemberInTheSameRebalance) {
  const PartitionCounts topics{{"t", 9}, {"u", 3}};
  std::vector<GroupMemberSubscription> members{
      member("a", {"t", "u"}, {{"t", 0}, {"t", 1}, {"t", 2}, {"t", 3}, {"t", 4}, {"u", 0}}, 6),
      member("b", {"t", "u"}, {{"t", 5}, {"t", 6}, {"t", 7}, {"t", 8}, {"u", 1}, {"u", 2}}, 6), member("c", {"t", "u"}),
      member("d", {"t", "u"})};
  const auto first = assign_cooperative_sticky(topics, members);
  for (const auto& m : members) {
    for (const auto& owned : m.subscription.owned_partitions) {
      for (const auto& [other, list] : first) {
        if (other == m.member_id) continue;
        EXPECT_EQ(std::ranges::count(list, owned), 0) << owned.first << "-" << owned.second << " moved to " << other;
      }
    }
  }
  const auto second = assign_cooperative_sticky(topics, next_round(members, first, 7));
  expect_disjoint(second);
  EXPECT_EQ(total(second), 12u);
  for (const auto& [m, list] : second) EXPECT_EQ(list.size(), 3u) << m;
  // Sticky: what a and b kept in the first rebalance they still have.
  for (const auto& m : {"a", "b"}) {
    for (const auto& tp : first.at(m)) EXPECT_EQ(std::ranges::count(second.at(m), tp), 1);
  }
}

TEST(CooperativeStickyAssignorTest, PartitionsOfAMemberThatLeftMoveAtOnce) {
  const PartitionCounts topics{{"t", 4}};
  // b left: nobody owns its partitions 2 and 3 any more.
  const auto a = assign_cooperative_sticky(topics, {member("a", {"t"}, partitions("t", {0, 1}), 5)});
  EXPECT_EQ(a.at("a"), partitions("t", {0, 1, 2, 3}));
}

TEST(CooperativeStickyAssignorTest, MembersSubscribedToDifferentTopics) {
  const PartitionCounts topics{{"t1", 2}, {"t2", 4}};
  const std::vector<GroupMemberSubscription> members{member("a", {"t1", "t2"}), member("b", {"t1"}),
                                                     member("c", {"t2"})};
  const auto a = assign_cooperative_sticky(topics, members);
  expect_disjoint(a);
  EXPECT_EQ(total(a), 6u);
  for (const auto& tp : a.at("b")) EXPECT_EQ(tp.first, "t1");
  for (const auto& tp : a.at("c")) EXPECT_EQ(tp.first, "t2");
  EXPECT_EQ(a.at("a").size(), 2u);
  EXPECT_EQ(a.at("b").size(), 2u);
  EXPECT_EQ(a.at("c").size(), 2u);

  // Sticky there too: the same members again change nothing.
  const auto again = assign_cooperative_sticky(topics, next_round(members, a, 2));
  EXPECT_EQ(again, a);
}

TEST(CooperativeStickyAssignorTest, UnequalSubscriptionsStayBalancedWhereTheyCan) {
  // b can only take t1; a takes the rest, as many as b would not leave a with two more.
  const PartitionCounts topics{{"t1", 3}, {"t2", 1}};
  const auto a = assign_cooperative_sticky(topics, {member("a", {"t1", "t2"}), member("b", {"t1"})});
  EXPECT_EQ(total(a), 4u);
  EXPECT_EQ(a.at("a").size(), 2u);
  EXPECT_EQ(a.at("b").size(), 2u);
  EXPECT_EQ(std::ranges::count(a.at("a"), TopicPartition{"t2", 0}), 1);
}

TEST(CooperativeStickyAssignorTest, AClaimOfAnOlderGenerationLoses) {
  const PartitionCounts topics{{"t", 2}};
  // a still lists t-0 from generation 2; b owns it since generation 3.
  const auto a = assign_cooperative_sticky(
      topics, {member("a", {"t"}, partitions("t", {0}), 2), member("b", {"t"}, partitions("t", {0, 1}), 3)});
  expect_disjoint(a);
  EXPECT_EQ(std::ranges::count(a.at("b"), TopicPartition{"t", 0}), 1);
  EXPECT_EQ(std::ranges::count(a.at("a"), TopicPartition{"t", 0}), 0);
}

TEST(CooperativeStickyAssignorTest, TwoClaimsOfTheSameGenerationAreGivenToNobodyYet) {
  const PartitionCounts topics{{"t", 2}};
  const auto a = assign_cooperative_sticky(
      topics, {member("a", {"t"}, partitions("t", {0}), 3), member("b", {"t"}, partitions("t", {0, 1}), 3)});
  EXPECT_EQ(std::ranges::count(a.at("a"), TopicPartition{"t", 0}), 0);
  EXPECT_EQ(std::ranges::count(a.at("b"), TopicPartition{"t", 0}), 0);
  EXPECT_EQ(a.at("b"), partitions("t", {1}));
}

TEST(CooperativeStickyAssignorTest, TheGenerationOfOldSubscriptionsComesFromTheUserData) {
  const PartitionCounts topics{{"t", 1}};
  auto old = member("a", {"t"}, partitions("t", {0}));
  old.subscription.generation_id.reset();  // a v1 subscription
  old.subscription.user_data = encode_generation_user_data(9);
  const auto a = assign_cooperative_sticky(topics, {old, member("b", {"t"}, partitions("t", {0}), 8)});
  EXPECT_EQ(a.at("a"), partitions("t", {0}));
  EXPECT_TRUE(a.at("b").empty());
}

TEST(CooperativeStickyAssignorTest, MorePartitionsThanMembersAndMoreMembersThanPartitions) {
  const PartitionCounts topics{{"t", 2}};
  const auto a = assign_cooperative_sticky(topics, {member("a", {"t"}), member("b", {"t"}), member("c", {"t"})});
  EXPECT_EQ(total(a), 2u);
  for (const auto& [m, list] : a) EXPECT_LE(list.size(), 1u);
  EXPECT_TRUE(assign_cooperative_sticky(topics, {}).empty());
}

}  // namespace
}  // namespace weir::client
