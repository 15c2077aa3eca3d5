// The server-side assignors against the expected assignments of Kafka 4.3.1's own tests
// (UniformHomogeneousAssignmentBuilderTest, UniformHeterogeneousAssignmentBuilderTest,
// RangeAssignorTest), with Kafka's topic ids and member order so that ties break the same way.
// Kafka's homogeneous tests pass members in a TreeMap and the heterogeneous ones through a
// GroupSpec that sorts them, so the members below are listed sorted.
#include "group/assignor.h"

#include <gtest/gtest.h>

#include <set>

namespace weir::group {
namespace {

Uuid id(std::string_view text) {
  auto parsed = Uuid::from_string(text);
  EXPECT_TRUE(parsed.has_value()) << text;
  return parsed.value_or(Uuid::zero());
}

// The topic ids of Kafka's assignor tests.
const Uuid kT1 = id("T1-A4s3VTwiI5CTbEp6POw");
const Uuid kT2 = id("T2-B4s3VTwiI5YHbPp6YUe");
const Uuid kT3 = id("T3-CU8fVTLCz5YMkLoDQsa");
const Uuid kT4 = id("T4-Tw9fVTLCz5HbPp6YQsa");

using TopicAssignment = std::map<Uuid, std::vector<std::int32_t>>;

AssignmentMemberSpec member(std::string member_id, std::vector<Uuid> subscribed,
                            std::vector<TopicPartitions> current = {}) {
  AssignmentMemberSpec m;
  m.member_id = std::move(member_id);
  m.subscribed_topic_ids = std::move(subscribed);
  m.current_assignment = std::move(current);
  return m;
}

AssignmentMemberSpec static_member(std::string member_id, std::string instance_id, std::vector<Uuid> subscribed) {
  auto m = member(std::move(member_id), std::move(subscribed));
  m.instance_id = std::move(instance_id);
  return m;
}

TopicTableDescriber describe(std::vector<std::pair<Uuid, std::int32_t>> topics) {
  TopicTableDescriber d;
  for (auto& [topic_id, count] : topics) d.add_topic(topic_id, count);
  return d;
}

AssignmentGroupSpec group(SubscriptionType type, std::vector<AssignmentMemberSpec> members) {
  return AssignmentGroupSpec{std::move(members), type};
}

GroupAssignment run(const PartitionAssignor& assignor, const AssignmentGroupSpec& spec,
                    const SubscribedTopicDescriber& topics) {
  auto result = assignor.assign(spec, topics);
  EXPECT_TRUE(result.has_value()) << to_string(result.error());
  return result.value_or(GroupAssignment{});
}

// Kafka's checkValidityAndBalance: subscribed topics only, no partition twice, sizes within one.
void expect_valid_and_balanced(const AssignmentGroupSpec& spec, const GroupAssignment& assignment) {
  std::set<std::pair<Uuid, std::int32_t>> seen;
  std::vector<std::size_t> sizes;
  for (const auto& m : spec.members) {
    const auto& topics = assignment.at(m.member_id);
    std::size_t size = 0;
    for (const auto& [topic_id, partitions] : topics) {
      EXPECT_NE(std::find(m.subscribed_topic_ids.begin(), m.subscribed_topic_ids.end(), topic_id),
                m.subscribed_topic_ids.end());
      for (auto p : partitions) EXPECT_TRUE(seen.emplace(topic_id, p).second) << p;
      size += partitions.size();
    }
    sizes.push_back(size);
  }
  const auto [lo, hi] = std::minmax_element(sizes.begin(), sizes.end());
  EXPECT_LE(*hi - *lo, 1u);
}

constexpr auto kHomogeneous = SubscriptionType::kHomogeneous;
constexpr auto kHeterogeneous = SubscriptionType::kHeterogeneous;

const UniformAssignor kUniform;
const RangeAssignor kRange;

// ---- registry and Java order ----

TEST(AssignorRegistryTest, FindsUniformAndRangeByName) {
  ASSERT_NE(find_assignor("uniform"), nullptr);
  EXPECT_EQ(find_assignor("uniform")->name(), "uniform");
  ASSERT_NE(find_assignor("range"), nullptr);
  EXPECT_EQ(find_assignor("range")->name(), "range");
  EXPECT_EQ(builtin_assignor_names(), (std::vector<std::string_view>{"uniform", "range"}));
}

TEST(AssignorRegistryTest, UnknownNameIsReportedAsMissing) {
  EXPECT_EQ(find_assignor("sticky"), nullptr);
  EXPECT_EQ(find_assignor(""), nullptr);
  EXPECT_EQ(find_assignor("Uniform"), nullptr);
}

TEST(JavaHashOrderTest, StringsIterateByBucketThenInsertion) {
  // "A" = 65 and "Q" = 81 share bucket 1 of 16; "B" = 66 is bucket 2.
  EXPECT_EQ(java_hash_order({"B", "Q", "A"}), (std::vector<std::string>{"Q", "A", "B"}));
  EXPECT_EQ(java_hash_order({"C", "B", "A"}), (std::vector<std::string>{"A", "B", "C"}));
}

TEST(JavaHashOrderTest, IntegersWrapAroundTheTableAndTheTableGrows) {
  EXPECT_EQ(java_hash_order(std::vector<std::int32_t>{3, 17}), (std::vector<std::int32_t>{17, 3}));
  // 13 entries pass 3/4 of 16: the table is 32, so 17 is after 3 again.
  std::vector<std::int32_t> keys{17, 3, 0, 1, 2, 4, 5, 6, 7, 8, 9, 10, 11};
  EXPECT_EQ(java_hash_order(keys), (std::vector<std::int32_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 17}));
}

TEST(JavaHashOrderTest, UuidsCompareAsSignedHalves) {
  const Uuid negative(0x8000000000000000ull, 0);
  const Uuid positive(1, 0);
  EXPECT_TRUE(java_uuid_less(negative, positive));
  EXPECT_FALSE(java_uuid_less(positive, negative));
  EXPECT_TRUE(java_uuid_less(Uuid(1, 0xFFFFFFFFFFFFFFFFull), Uuid(1, 0)));
  EXPECT_EQ(java_uuid_hash(Uuid(0x0000000100000002ull, 0x0000000400000008ull)), 1 ^ 2 ^ 4 ^ 8);
}

// ---- uniform, homogeneous ----

TEST(UniformHomogeneousTest, OneMemberWithoutSubscriptionGetsNothing) {
  auto topics = describe({{kT1, 3}});
  auto spec = group(kHomogeneous, {member("A", {})});
  EXPECT_EQ(run(kUniform, spec, topics), GroupAssignment{});
}

TEST(UniformHomogeneousTest, SubscriptionToNonexistentTopicFails) {
  auto topics = describe({{kT1, 3}});
  auto spec = group(kHomogeneous, {member("A", {kT2})});
  auto result = kUniform.assign(spec, topics);
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error(), AssignorErrc::kSubscribedTopicNotFound);
}

TEST(UniformHomogeneousTest, EmptyGroupGetsEmptyAssignment) {
  EXPECT_EQ(run(kUniform, group(kHomogeneous, {}), describe({{kT1, 3}})), GroupAssignment{});
}

TEST(UniformHomogeneousTest, FirstAssignmentTwoMembersTwoTopics) {
  auto topics = describe({{kT1, 3}, {kT3, 2}});
  auto spec = group(kHomogeneous, {member("A", {kT1, kT3}), member("B", {kT1, kT3})});
  auto got = run(kUniform, spec, topics);
  // Kafka walks its HashSet copy of the subscription, where topic 3 comes before topic 1.
  EXPECT_EQ(got, (GroupAssignment{{"A", {{kT3, {0, 1}}}}, {"B", {{kT1, {0, 1, 2}}}}}));
  expect_valid_and_balanced(spec, got);
}

TEST(UniformHomogeneousTest, SubscriptionOrderDoesNotChangeTheTopicWalk) {
  auto topics = describe({{kT1, 3}, {kT3, 2}});
  auto spec = group(kHomogeneous, {member("A", {kT3, kT1}), member("B", {kT3, kT1})});
  EXPECT_EQ(run(kUniform, spec, topics), (GroupAssignment{{"A", {{kT3, {0, 1}}}}, {"B", {{kT1, {0, 1, 2}}}}}));
}

TEST(UniformHomogeneousTest, MoreMembersThanPartitionsLeavesTheFirstMemberEmpty) {
  auto topics = describe({{kT3, 2}});
  auto spec = group(kHomogeneous, {member("A", {kT3}), member("B", {kT3}), member("C", {kT3})});
  auto got = run(kUniform, spec, topics);
  EXPECT_EQ(got, (GroupAssignment{{"A", {}}, {"B", {{kT3, {0}}}}, {"C", {{kT3, {1}}}}}));
  expect_valid_and_balanced(spec, got);
}

TEST(UniformHomogeneousTest, ValidityAndBalanceForLargeSampleSet) {
  TopicTableDescriber topics;
  std::vector<Uuid> ids;
  for (std::uint64_t i = 1; i < 101; ++i) {
    ids.emplace_back(0x1000 + i * 0x9E3779B97F4A7C15ull, i * 0xC2B2AE3D27D4EB4Full);
    topics.add_topic(ids.back(), 3);
  }
  std::vector<AssignmentMemberSpec> members;
  for (int i = 1; i < 50; ++i) members.push_back(member("member" + std::to_string(i), ids));
  auto spec = group(kHomogeneous, std::move(members));
  auto got = run(kUniform, spec, topics);
  expect_valid_and_balanced(spec, got);
  std::size_t total = 0;
  for (const auto& [m, t] : got) {
    for (const auto& [topic, parts] : t) total += parts.size();
  }
  EXPECT_EQ(total, 300u);
}

TEST(UniformHomogeneousTest, UnbalancedPreviousAssignmentMovesOnePartition) {
  auto topics = describe({{kT1, 3}, {kT2, 3}});
  auto spec = group(kHomogeneous, {member("A", {kT1, kT2}, {{kT1, {0, 1}}, {kT2, {0, 1}}}),
                                   member("B", {kT1, kT2}, {{kT1, {2}}, {kT2, {2}}})});
  auto got = run(kUniform, spec, topics);
  EXPECT_EQ(got, (GroupAssignment{{"A", {{kT1, {0, 1}}, {kT2, {0}}}}, {"B", {{kT1, {2}}, {kT2, {1, 2}}}}}));
  expect_valid_and_balanced(spec, got);
}

TEST(UniformHomogeneousTest, PartitionsAddedGoToTheMembersBelowQuota) {
  auto topics = describe({{kT1, 6}, {kT2, 5}});
  auto spec = group(kHomogeneous, {member("A", {kT1, kT2}, {{kT1, {0, 2}}, {kT2, {0}}}),
                                   member("B", {kT1, kT2}, {{kT1, {1}}, {kT2, {1, 2}}})});
  auto got = run(kUniform, spec, topics);
  EXPECT_EQ(got,
            (GroupAssignment{{"A", {{kT1, {0, 2}}, {kT2, {0, 3, 4}}}}, {"B", {{kT1, {1, 3, 4, 5}}, {kT2, {1, 2}}}}}));
  expect_valid_and_balanced(spec, got);
}

TEST(UniformHomogeneousTest, MemberAddedTakesOnlyWhatOthersGiveUp) {
  auto topics = describe({{kT1, 3}, {kT2, 3}});
  auto spec = group(kHomogeneous, {member("A", {kT1, kT2}, {{kT1, {0, 2}}, {kT2, {0}}}),
                                   member("B", {kT1, kT2}, {{kT1, {1}}, {kT2, {1, 2}}}), member("C", {kT1, kT2})});
  auto got = run(kUniform, spec, topics);
  EXPECT_EQ(got, (GroupAssignment{{"A", {{kT1, {0, 2}}}}, {"B", {{kT1, {1}}, {kT2, {1}}}}, {"C", {{kT2, {0, 2}}}}}));
  expect_valid_and_balanced(spec, got);
}

TEST(UniformHomogeneousTest, MemberRemovedSpreadsItsPartitions) {
  auto topics = describe({{kT1, 3}, {kT2, 3}});
  auto spec = group(kHomogeneous, {member("A", {kT1, kT2}, {{kT1, {0}}, {kT2, {0}}}),
                                   member("B", {kT1, kT2}, {{kT1, {1}}, {kT2, {1}}})});
  auto got = run(kUniform, spec, topics);
  EXPECT_EQ(got, (GroupAssignment{{"A", {{kT1, {0}}, {kT2, {0, 2}}}}, {"B", {{kT1, {1, 2}}, {kT2, {1}}}}}));
  expect_valid_and_balanced(spec, got);
}

TEST(UniformHomogeneousTest, UnsubscribedTopicIsDropped) {
  auto topics = describe({{kT1, 2}, {kT2, 2}});
  auto spec =
      group(kHomogeneous, {member("A", {kT2}, {{kT1, {0}}, {kT2, {0}}}), member("B", {kT2}, {{kT1, {1}}, {kT2, {1}}})});
  auto got = run(kUniform, spec, topics);
  EXPECT_EQ(got, (GroupAssignment{{"A", {{kT2, {0}}}}, {"B", {{kT2, {1}}}}}));
}

TEST(UniformHomogeneousTest, MemberAlreadyHoldingTheExtraPartitionKeepsIt) {
  // 7 partitions over 3 members: quotas 2, 2, 2 and one extra. The first two members cannot fill
  // an extra slot from what they own, so they pass it on and C keeps its three.
  auto topics = describe({{kT1, 7}});
  auto spec = group(kHomogeneous, {member("A", {kT1}, {{kT1, {0, 1}}}), member("B", {kT1}, {{kT1, {2, 3}}}),
                                   member("C", {kT1}, {{kT1, {4, 5, 6}}})});
  EXPECT_EQ(run(kUniform, spec, topics),
            (GroupAssignment{{"A", {{kT1, {0, 1}}}}, {"B", {{kT1, {2, 3}}}}, {"C", {{kT1, {4, 5, 6}}}}}));
}

TEST(UniformHomogeneousTest, OverQuotaMemberKeepsPartitionsInIterationOrder) {
  // A owns 4 of 4 with B joining: A keeps the first two its set iterates.
  auto topics = describe({{kT1, 4}});
  auto spec = group(kHomogeneous, {member("A", {kT1}, {{kT1, {3, 1, 0, 2}}}), member("B", {kT1})});
  EXPECT_EQ(run(kUniform, spec, topics), (GroupAssignment{{"A", {{kT1, {1, 3}}}}, {"B", {{kT1, {0, 2}}}}}));
}

// ---- uniform, heterogeneous ----

TEST(UniformHeterogeneousTest, TwoMembersWithoutSubscriptionGetNothing) {
  auto topics = describe({{kT1, 3}});
  auto spec = group(kHeterogeneous, {member("A", {}), member("B", {})});
  EXPECT_EQ(run(kUniform, spec, topics), GroupAssignment{});
}

TEST(UniformHeterogeneousTest, SubscriptionsToNonexistentTopicsFail) {
  auto topics = describe({{kT1, 3}});
  auto spec = group(kHeterogeneous, {member("A", {kT3}), member("B", {kT2})});
  auto result = kUniform.assign(spec, topics);
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error(), AssignorErrc::kSubscribedTopicNotFound);
}

TEST(UniformHeterogeneousTest, FirstAssignmentTwoMembersTwoTopics) {
  auto topics = describe({{kT1, 3}, {kT3, 6}});
  auto spec = group(kHeterogeneous, {member("A", {kT1, kT3}), member("B", {kT3})});
  EXPECT_EQ(run(kUniform, spec, topics),
            (GroupAssignment{{"A", {{kT1, {0, 1, 2}}, {kT3, {4}}}}, {"B", {{kT3, {0, 1, 2, 3, 5}}}}}));
}

TEST(UniformHeterogeneousTest, FirstAssignmentMoreMembersThanPartitions) {
  auto topics = describe({{kT3, 1}, {kT1, 2}});
  auto spec = group(kHeterogeneous, {member("A", {kT3}), member("B", {kT3}), member("C", {kT1})});
  EXPECT_EQ(run(kUniform, spec, topics), (GroupAssignment{{"A", {{kT3, {0}}}}, {"B", {}}, {"C", {{kT1, {0, 1}}}}}));
}

TEST(UniformHeterogeneousTest, ReassignmentThreeMembersThreeTopicsFromUnbalanced) {
  auto topics = describe({{kT1, 6}, {kT2, 4}, {kT3, 4}});
  auto spec =
      group(kHeterogeneous, {member("A", {kT1}, {{kT1, {0, 1, 2}}}), member("B", {kT1, kT2}, {{kT1, {3}}, {kT2, {0}}}),
                             member("C", {kT1, kT2, kT3}, {{kT1, {4, 5}}, {kT2, {1, 2, 3}}, {kT3, {0, 1, 2, 3}}})});
  EXPECT_EQ(run(kUniform, spec, topics), (GroupAssignment{{"A", {{kT1, {0, 1, 2, 5}}}},
                                                          {"B", {{kT1, {3}}, {kT2, {0, 1, 2, 3}}}},
                                                          {"C", {{kT1, {4}}, {kT3, {0, 1, 2, 3}}}}}));
}

TEST(UniformHeterogeneousTest, PartitionsAddedStayWithTheSubscribers) {
  auto topics = describe({{kT1, 6}, {kT2, 5}, {kT3, 3}, {kT4, 3}});
  auto spec = group(kHeterogeneous, {member("A", {kT1, kT3}, {{kT1, {0, 1, 2, 3}}, {kT3, {0, 1}}}),
                                     member("B", {kT1, kT2, kT3, kT4}, {{kT2, {0, 1, 2}}, {kT4, {0, 1, 2}}})});
  EXPECT_EQ(run(kUniform, spec, topics), (GroupAssignment{{"A", {{kT1, {0, 1, 2, 3, 4, 5}}, {kT3, {0, 1, 2}}}},
                                                          {"B", {{kT2, {0, 1, 2, 3, 4}}, {kT4, {0, 1, 2}}}}}));
}

TEST(UniformHeterogeneousTest, MemberAddedAndPartitionsAdded) {
  auto topics = describe({{kT1, 6}, {kT2, 7}});
  auto spec = group(kHeterogeneous, {member("A", {kT1}, {{kT1, {0, 2}}, {kT2, {0}}}),
                                     member("B", {kT1, kT2}, {{kT1, {1}}, {kT2, {1, 2}}}), member("C", {kT1, kT2})});
  EXPECT_EQ(run(kUniform, spec, topics),
            (GroupAssignment{
                {"A", {{kT1, {0, 2, 3, 4, 5}}}}, {"B", {{kT1, {1}}, {kT2, {1, 2, 6}}}}, {"C", {{kT2, {0, 3, 4, 5}}}}}));
}

TEST(UniformHeterogeneousTest, MemberRemovedThreeTopics) {
  auto topics = describe({{kT1, 3}, {kT2, 8}, {kT3, 3}});
  auto spec = group(kHeterogeneous, {member("A", {kT1, kT3}, {{kT1, {0, 1, 2}}, {kT3, {0, 1}}}),
                                     member("B", {kT2}, {{kT2, {3, 4, 5, 6}}})});
  EXPECT_EQ(run(kUniform, spec, topics),
            (GroupAssignment{{"A", {{kT1, {0, 1, 2}}, {kT3, {0, 1, 2}}}}, {"B", {{kT2, {0, 1, 2, 3, 4, 5, 6, 7}}}}}));
}

TEST(UniformHeterogeneousTest, SubscriptionRemovedRevokesThatTopic) {
  auto topics = describe({{kT1, 3}, {kT2, 5}});
  auto spec = group(kHeterogeneous, {member("A", {kT1}, {{kT1, {0, 2}}, {kT2, {1, 3}}}),
                                     member("B", {kT1, kT2}, {{kT1, {1}}, {kT2, {0, 2, 4}}})});
  EXPECT_EQ(run(kUniform, spec, topics), (GroupAssignment{{"A", {{kT1, {0, 1, 2}}}}, {"B", {{kT2, {0, 1, 2, 3, 4}}}}}));
}

TEST(UniformHeterogeneousTest, BalancingStopsWhenATopicRunsOutOfPartitionsToMove) {
  auto topics = describe({{kT1, 2}, {kT2, 2}, {kT3, 2}});
  auto spec = group(kHeterogeneous, {member("A", {kT1, kT2, kT3}, {{kT1, {0, 1}}, {kT2, {0, 1}}, {kT3, {0, 1}}}),
                                     member("B", {kT1, kT2, kT3})});
  EXPECT_EQ(run(kUniform, spec, topics),
            (GroupAssignment{{"A", {{kT2, {0}}, {kT3, {0, 1}}}}, {"B", {{kT1, {0, 1}}, {kT2, {1}}}}}));
}

TEST(UniformHeterogeneousTest, MemberWithoutSubscriptionsGetsAnEmptyAssignment) {
  auto topics = describe({{kT1, 3}});
  auto spec = group(kHeterogeneous, {member("A", {kT1}), member("B", {})});
  EXPECT_EQ(run(kUniform, spec, topics), (GroupAssignment{{"A", {{kT1, {0, 1, 2}}}}, {"B", {}}}));
}

TEST(UniformHeterogeneousTest, OwnedPartitionBeyondTheTopicIsAnError) {
  auto topics = describe({{kT1, 2}});
  auto spec = group(kHeterogeneous, {member("A", {kT1}, {{kT1, {5}}}), member("B", {})});
  auto result = kUniform.assign(spec, topics);
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error(), AssignorErrc::kPartitionOutOfRange);
}

TEST(UniformHeterogeneousTest, OverlappingSubscriptionsStayValidAndNearlyBalanced) {
  TopicTableDescriber topics;
  std::vector<Uuid> ids;
  for (std::uint64_t i = 1; i <= 12; ++i) {
    ids.emplace_back(i * 0x9E3779B97F4A7C15ull, i);
    topics.add_topic(ids.back(), static_cast<std::int32_t>(1 + i % 5));
  }
  std::vector<AssignmentMemberSpec> members;
  for (std::size_t m = 0; m < 9; ++m) {
    std::vector<Uuid> subscribed;
    for (std::size_t t = 0; t < ids.size(); ++t) {
      if ((t + m) % 3 != 0) subscribed.push_back(ids[t]);
    }
    members.push_back(member("m" + std::to_string(m), subscribed));
  }
  auto spec = group(kHeterogeneous, std::move(members));
  auto got = run(kUniform, spec, topics);
  std::set<std::pair<Uuid, std::int32_t>> seen;
  for (const auto& m : spec.members) {
    for (const auto& [topic_id, partitions] : got.at(m.member_id)) {
      EXPECT_NE(std::find(m.subscribed_topic_ids.begin(), m.subscribed_topic_ids.end(), topic_id),
                m.subscribed_topic_ids.end());
      for (auto p : partitions) EXPECT_TRUE(seen.emplace(topic_id, p).second);
    }
  }
  std::size_t total = 0;
  for (std::uint64_t i = 1; i <= 12; ++i) total += 1 + i % 5;
  EXPECT_EQ(seen.size(), total);

  // Same input, second run: the assignment is already balanced and nothing moves.
  auto again = spec;
  for (auto& m : again.members) {
    for (const auto& [topic_id, partitions] : got.at(m.member_id))
      m.current_assignment.push_back({topic_id, partitions});
  }
  EXPECT_EQ(run(kUniform, again, topics), got);
}

// ---- range ----

TEST(RangeAssignorTest, EmptyGroupAndNoSubscriptions) {
  auto topics = describe({{kT1, 3}});
  EXPECT_EQ(run(kRange, group(kHomogeneous, {}), topics), GroupAssignment{});
  EXPECT_EQ(run(kRange, group(kHomogeneous, {member("A", {})}), topics), (GroupAssignment{{"A", {}}}));
}

TEST(RangeAssignorTest, SubscriptionToNonexistentTopicFails) {
  auto topics = describe({{kT1, 3}});
  for (auto type : {kHomogeneous, kHeterogeneous}) {
    auto result = kRange.assign(group(type, {member("A", {kT2}), member("B", {kT2})}), topics);
    ASSERT_FALSE(result.has_value());
    EXPECT_EQ(result.error(), AssignorErrc::kSubscribedTopicNotFound);
  }
}

TEST(RangeAssignorTest, OneMemberGetsEveryPartition) {
  auto topics = describe({{kT1, 3}, {kT2, 2}});
  EXPECT_EQ(run(kRange, group(kHomogeneous, {member("A", {kT1, kT2})}), topics),
            (GroupAssignment{{"A", {{kT1, {0, 1, 2}}, {kT2, {0, 1}}}}}));
}

TEST(RangeAssignorTest, EqualPartitionCountsAreCoPartitioned) {
  auto topics = describe({{kT1, 4}, {kT2, 4}});
  auto spec = group(kHomogeneous, {member("C", {kT1, kT2}), member("A", {kT1, kT2}), member("B", {kT1, kT2})});
  EXPECT_EQ(run(kRange, spec, topics), (GroupAssignment{{"A", {{kT1, {0, 1}}, {kT2, {0, 1}}}},
                                                        {"B", {{kT1, {2}}, {kT2, {2}}}},
                                                        {"C", {{kT1, {3}}, {kT2, {3}}}}}));
}

TEST(RangeAssignorTest, MoreMembersThanPartitionsLeavesTheLastWithoutThatTopic) {
  auto topics = describe({{kT1, 3}, {kT3, 2}});
  auto spec = group(kHomogeneous, {member("A", {kT1, kT3}), member("B", {kT1, kT3}), member("C", {kT1, kT3})});
  EXPECT_EQ(run(kRange, spec, topics),
            (GroupAssignment{{"A", {{kT1, {0}}, {kT3, {0}}}}, {"B", {{kT1, {1}}, {kT3, {1}}}}, {"C", {{kT1, {2}}}}}));
}

TEST(RangeAssignorTest, HeterogeneousRangesCountOnlyEachTopicsSubscribers) {
  auto topics = describe({{kT1, 3}, {kT2, 3}, {kT3, 2}});
  auto spec = group(kHeterogeneous, {member("A", {kT1, kT2}), member("B", {kT3}), member("C", {kT2, kT3})});
  EXPECT_EQ(run(kRange, spec, topics),
            (GroupAssignment{
                {"A", {{kT1, {0, 1, 2}}, {kT2, {0, 1}}}}, {"B", {{kT3, {0}}}}, {"C", {{kT2, {2}}, {kT3, {1}}}}}));
}

TEST(RangeAssignorTest, StaticMembersSortFirstByInstanceId) {
  auto topics = describe({{kT1, 5}});
  auto spec =
      group(kHomogeneous, {member("a", {kT1}), static_member("z", "i2", {kT1}), static_member("y", "i1", {kT1})});
  EXPECT_EQ(run(kRange, spec, topics),
            (GroupAssignment{{"y", {{kT1, {0, 1}}}}, {"z", {{kT1, {2, 3}}}}, {"a", {{kT1, {4}}}}}));
}

TEST(RangeAssignorTest, MembersThatTieKeepTheirSpecOrder) {
  // Java's List.sort is stable; found by a differential run against Kafka's RangeAssignor.
  auto topics = describe({{kT1, 4}});
  auto spec = group(kHomogeneous, {static_member("b", "i1", {kT1}), static_member("a", "i1", {kT1})});
  EXPECT_EQ(run(kRange, spec, topics), (GroupAssignment{{"b", {{kT1, {0, 1}}}}, {"a", {{kT1, {2, 3}}}}}));
}

TEST(RangeAssignorTest, BouncedStaticMemberKeepsItsRangeUnderANewMemberId) {
  auto topics = describe({{kT1, 4}});
  auto before = group(kHomogeneous, {static_member("m1", "i1", {kT1}), static_member("m2", "i2", {kT1})});
  auto after = group(kHomogeneous, {static_member("m0", "i2", {kT1}), static_member("m1", "i1", {kT1})});
  EXPECT_EQ(run(kRange, before, topics), (GroupAssignment{{"m1", {{kT1, {0, 1}}}}, {"m2", {{kT1, {2, 3}}}}}));
  EXPECT_EQ(run(kRange, after, topics), (GroupAssignment{{"m1", {{kT1, {0, 1}}}}, {"m0", {{kT1, {2, 3}}}}}));
}

TEST(RangeAssignorTest, CurrentAssignmentDoesNotMatterIn431) {
  // Kafka 4.3.1's RangeAssignor never reads the members' assignments: a member joining
  // reshuffles the ranges rather than taking only what is free.
  auto topics = describe({{kT1, 3}});
  auto spec =
      group(kHomogeneous, {member("A", {kT1}, {{kT1, {0, 1}}}), member("B", {kT1}, {{kT1, {2}}}), member("C", {kT1})});
  EXPECT_EQ(run(kRange, spec, topics),
            (GroupAssignment{{"A", {{kT1, {0}}}}, {"B", {{kT1, {1}}}}, {"C", {{kT1, {2}}}}}));
}

}  // namespace
}  // namespace weir::group
