// The consumer rebalance protocol (KIP-848) in the group coordinator: ConsumerGroupHeartbeat
// joins, reconciliation, leaves, timers, records and their replay, describe and offset commits.
#include <gtest/gtest.h>

#include "group/coordinator.h"
#include "group/metadata_hash.h"
#include "group_test_util.h"
#include "protocol/gen/consumer_group_metadata_value.h"
#include "protocol/gen/consumer_group_partition_metadata_key.h"
#include "protocol/gen/consumer_group_partition_metadata_value.h"

namespace weir::group::testing {
namespace {

constexpr const char* kGroup = "cg";

class ConsumerHarness {
 public:
  explicit ConsumerHarness(GroupConfig config = config_for_tests()) : coordinator(config) {
    topics.add_topic("orders", kOrders, 4);
    topics.add_topic("payments", kPayments, 2);
    coordinator.set_topic_image(&topics);
  }

  static GroupConfig config_for_tests() {
    GroupConfig c;
    c.member_id_seed = 7;
    c.consumer.assignment_interval_ms = 0;  // compute on every epoch change
    return c;
  }

  static p::ConsumerGroupHeartbeatRequest join_request(std::vector<std::string> topics_subscribed) {
    p::ConsumerGroupHeartbeatRequest req;
    req.group_id = kGroup;
    req.member_epoch = 0;
    req.rebalance_timeout_ms = 30000;
    req.subscribed_topic_names = std::move(topics_subscribed);
    req.subscribed_topic_regex = std::nullopt;
    req.server_assignor = std::nullopt;
    req.instance_id = std::nullopt;
    req.rack_id = std::nullopt;
    req.topic_partitions.emplace();
    return req;
  }

  p::ConsumerGroupHeartbeatResponse send(const p::ConsumerGroupHeartbeatRequest& req, std::int16_t version = 0) {
    auto r =
        coordinator.consumer_group_heartbeat(req, version, ClientInfo{"client", "/10.0.0.1"}, topics, clock.now_ms());
    for (auto& rec : r.effects.records) records.push_back(std::move(rec));
    return r.response;
  }

  // A regular heartbeat that reports nothing.
  static p::ConsumerGroupHeartbeatRequest beat_request(const std::string& member_id, std::int32_t epoch) {
    p::ConsumerGroupHeartbeatRequest req;
    req.group_id = kGroup;
    req.member_id = member_id;
    req.member_epoch = epoch;
    req.instance_id = std::nullopt;
    req.rack_id = std::nullopt;
    req.subscribed_topic_regex = std::nullopt;
    req.server_assignor = std::nullopt;
    return req;
  }

  // A regular heartbeat reporting `owned` (nullopt: not reported).
  p::ConsumerGroupHeartbeatResponse beat(const std::string& member_id, std::int32_t epoch,
                                         std::optional<TopicPartitionSet> owned) {
    p::ConsumerGroupHeartbeatRequest req = beat_request(member_id, epoch);
    if (owned) {
      req.topic_partitions.emplace();
      for (const auto& [t, ps] : *owned) {
        auto& tp = req.topic_partitions->emplace_back();
        tp.topic_id = t;
        tp.partitions.assign(ps.begin(), ps.end());
      }
    }
    return send(req);
  }

  void advance(std::int64_t ms) {
    clock.advance_ms(ms);
    for (auto& rec : coordinator.tick(clock.now_ms()).records) records.push_back(std::move(rec));
  }

  const ConsumerGroup* group() const { return coordinator.consumer_groups().group(kGroup); }
  const ConsumerMember& member(const std::string& id) const { return group()->members().at(id); }

  static inline const Uuid kOrders{0x1111, 0x2222};
  static inline const Uuid kPayments{0x3333, 0x4444};

  ManualClock clock{1'000'000};
  TopicImage topics;
  GroupCoordinator coordinator;
  std::vector<Record> records;
};

TopicPartitionSet assignment_of(const p::ConsumerGroupHeartbeatResponse& r) {
  TopicPartitionSet out;
  if (!r.assignment) return out;
  for (const auto& tp : r.assignment->topic_partitions)
    out[tp.topic_id].insert(tp.partitions.begin(), tp.partitions.end());
  return out;
}

std::size_t count(const TopicPartitionSet& s) {
  std::size_t n = 0;
  for (const auto& [t, ps] : s) n += ps.size();
  return n;
}

TEST(ConsumerGroupHeartbeat, FirstMemberJoinsAtEpochOneWithEveryPartition) {
  ConsumerHarness h;
  auto r = h.send(ConsumerHarness::join_request({"orders"}));
  ASSERT_EQ(r.error_code, 0);
  ASSERT_TRUE(r.member_id);
  EXPECT_EQ(r.member_id->size(), 22u);  // a Kafka Uuid in base64
  EXPECT_EQ(r.member_epoch, 1);
  EXPECT_EQ(r.heartbeat_interval_ms, 5000);
  EXPECT_EQ(count(assignment_of(r)), 4u);
  EXPECT_EQ(h.group()->group_epoch(), 1);
  EXPECT_EQ(h.group()->assignment_epoch(), 1);
  EXPECT_EQ(h.group()->state(), ConsumerGroupState::kStable);
  // Member subscription, group epoch, target member, target metadata, current assignment.
  ASSERT_EQ(h.records.size(), 5u);
  const std::vector<std::int16_t> types = {5, 3, 7, 6, 8};
  for (std::size_t i = 0; i < types.size(); ++i) {
    EXPECT_EQ((h.records[i].key[0] << 8) | h.records[i].key[1], types[i]) << i;
  }
}

TEST(ConsumerGroupHeartbeat, SecondMemberGetsPartitionsOnlyAfterTheFirstRevokesThem) {
  ConsumerHarness h;
  auto a = h.send(ConsumerHarness::join_request({"orders"}));
  const std::string ida = *a.member_id;
  auto b = h.send(ConsumerHarness::join_request({"orders"}));
  const std::string idb = *b.member_id;
  EXPECT_EQ(h.group()->group_epoch(), 2);
  EXPECT_EQ(h.group()->assignment_epoch(), 2);
  // B is at epoch 2 but its partitions are still A's: it waits for them.
  EXPECT_EQ(b.member_epoch, 2);
  EXPECT_EQ(count(assignment_of(b)), 0u);
  EXPECT_EQ(h.member(idb).state, MemberState::kUnreleasedPartitions);
  EXPECT_EQ(h.group()->state(), ConsumerGroupState::kReconciling);

  // A heartbeats still owning everything: it must revoke two partitions, staying at epoch 1.
  auto a2 = h.beat(ida, 1, assignment_of(a));
  EXPECT_EQ(a2.member_epoch, 1);
  EXPECT_EQ(count(assignment_of(a2)), 2u);
  EXPECT_EQ(h.member(ida).state, MemberState::kUnrevokedPartitions);
  // B still gets nothing while A owns them.
  EXPECT_EQ(count(assignment_of(h.beat(idb, 2, TopicPartitionSet{}))), 0u);

  // A reports the revocation done: it moves to epoch 2.
  auto a3 = h.beat(ida, 1, assignment_of(a2));
  EXPECT_EQ(a3.member_epoch, 2);
  EXPECT_EQ(h.member(ida).state, MemberState::kStable);
  // Now B receives the released partitions.
  auto b3 = h.beat(idb, 2, TopicPartitionSet{});
  EXPECT_EQ(count(assignment_of(b3)), 2u);
  EXPECT_EQ(h.group()->state(), ConsumerGroupState::kStable);
}

TEST(ConsumerGroupHeartbeat, LeaveBumpsTheEpochAndFreesThePartitions) {
  ConsumerHarness h;
  auto a = h.send(ConsumerHarness::join_request({"orders"}));
  auto b = h.send(ConsumerHarness::join_request({"orders"}));
  auto r = h.beat(*b.member_id, -1, std::nullopt);
  EXPECT_EQ(r.error_code, 0);
  EXPECT_EQ(r.member_epoch, -1);
  EXPECT_EQ(h.group()->members().size(), 1u);
  EXPECT_EQ(h.group()->group_epoch(), 3);
  auto a2 = h.beat(*a.member_id, 1, assignment_of(a));
  EXPECT_EQ(a2.member_epoch, 3);
  // Its partitions did not change, so the response carries no assignment (Kafka's rule).
  EXPECT_FALSE(a2.assignment.has_value());
  EXPECT_EQ(count(partitions_of(h.member(*a.member_id).assigned)), 4u);
}

TEST(ConsumerGroupHeartbeat, SessionTimeoutRemovesTheMember) {
  ConsumerHarness h;
  auto a = h.send(ConsumerHarness::join_request({"orders"}));
  auto b = h.send(ConsumerHarness::join_request({"orders"}));
  ASSERT_TRUE(h.coordinator.next_deadline_ms());
  h.advance(40000);
  h.beat(*a.member_id, 1, assignment_of(a));  // A stays alive
  h.advance(6000);
  EXPECT_EQ(h.group()->member(*b.member_id), nullptr);
  EXPECT_NE(h.group()->member(*a.member_id), nullptr);
}

TEST(ConsumerGroupHeartbeat, RevocationNotDoneWithinTheRebalanceTimeoutFencesTheMember) {
  ConsumerHarness h;
  auto a = h.send(ConsumerHarness::join_request({"orders"}));
  auto b = h.send(ConsumerHarness::join_request({"orders"}));
  h.beat(*a.member_id, 1, assignment_of(a));
  ASSERT_EQ(h.member(*a.member_id).state, MemberState::kUnrevokedPartitions);
  for (int i = 0; i < 6; ++i) {
    h.advance(5000);
    h.beat(*a.member_id, 1, assignment_of(a));  // keeps heartbeating, never revokes
    if (h.group()->member(*a.member_id) == nullptr) break;
    h.beat(*b.member_id, 2, TopicPartitionSet{});
  }
  EXPECT_EQ(h.group()->member(*a.member_id), nullptr);
  auto b2 = h.beat(*b.member_id, 2, TopicPartitionSet{});
  EXPECT_EQ(count(assignment_of(b2)), 4u);
}

TEST(ConsumerGroupHeartbeat, FencingErrorsCarryKafkasMessages) {
  ConsumerHarness h;
  auto a = h.send(ConsumerHarness::join_request({"orders"}));
  auto r = h.beat(*a.member_id, 5, std::nullopt);
  EXPECT_EQ(r.error_code, code(Error::kFencedMemberEpoch));
  EXPECT_EQ(*r.error_message,
            "The consumer group member has a greater member epoch (5) than the one known by the group coordinator "
            "(1). The member must abandon all its partitions and rejoin.");
  auto unknown = h.beat("nobody", 1, std::nullopt);
  EXPECT_EQ(unknown.error_code, code(Error::kUnknownMemberId));
  EXPECT_EQ(*unknown.error_message, "Member nobody is not a member of group cg.");
  // The previous epoch is accepted when the owned partitions are a subset of the assignment.
  h.send(ConsumerHarness::join_request({"orders"}));
  auto a2 = h.beat(*a.member_id, 1, assignment_of(a));
  auto a3 = h.beat(*a.member_id, 1, assignment_of(a2));
  ASSERT_EQ(a3.member_epoch, 2);
  EXPECT_EQ(h.beat(*a.member_id, 1, assignment_of(a3)).error_code, 0);
  EXPECT_EQ(h.beat(*a.member_id, 1, assignment_of(a)).error_code, code(Error::kFencedMemberEpoch));
}

TEST(ConsumerGroupHeartbeat, ValidationErrorsCarryKafkasMessages) {
  ConsumerHarness h;
  auto req = ConsumerHarness::join_request({"orders"});
  req.group_id = "";
  EXPECT_EQ(*h.send(req).error_message, "GroupId can't be empty.");
  req = ConsumerHarness::join_request({"orders"});
  req.rebalance_timeout_ms = -1;
  EXPECT_EQ(*h.send(req).error_message, "RebalanceTimeoutMs must be provided in first request.");
  req = ConsumerHarness::join_request({"orders"});
  req.subscribed_topic_names = std::nullopt;
  EXPECT_EQ(*h.send(req).error_message,
            "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining.");
  req = ConsumerHarness::join_request({"orders"});
  req.instance_id = " ";
  EXPECT_EQ(*h.send(req).error_message, "InstanceId can't be empty.");
  req = ConsumerHarness::join_request({"orders"});
  EXPECT_EQ(*h.send(req, 1).error_message, "MemberId can't be empty.");
  req = ConsumerHarness::join_request({"orders"});
  req.member_epoch = -3;
  req.member_id = "m";
  EXPECT_EQ(*h.send(req).error_message, "MemberEpoch is invalid.");
  req = ConsumerHarness::join_request({"orders"});
  req.server_assignor = "sticky";
  auto r = h.send(req);
  EXPECT_EQ(r.error_code, code(Error::kUnsupportedAssignor));
  EXPECT_EQ(*r.error_message, "ServerAssignor sticky is not supported. Supported assignors: uniform, range.");
  EXPECT_EQ(h.group(), nullptr);  // nothing was created
  EXPECT_TRUE(h.records.empty());
}

TEST(ConsumerGroupHeartbeat, GroupMaxSizeIsEnforced) {
  GroupConfig c = ConsumerHarness::config_for_tests();
  c.consumer.max_size = 1;
  ConsumerHarness h(c);
  h.send(ConsumerHarness::join_request({"orders"}));
  auto r = h.send(ConsumerHarness::join_request({"orders"}));
  EXPECT_EQ(r.error_code, code(Error::kGroupMaxSizeReached));
  EXPECT_EQ(*r.error_message, "The consumer group has reached its maximum capacity of 1 members.");
}

TEST(ConsumerGroupHeartbeat, StaticMemberRejoinsWithItsAssignmentAfterATemporaryLeave) {
  ConsumerHarness h;
  auto req = ConsumerHarness::join_request({"orders"});
  req.instance_id = "host-1";
  auto a = h.send(req);
  // A second instance with the same id while the first is active: UNRELEASED_INSTANCE_ID.
  auto dup = h.send(req);
  EXPECT_EQ(dup.error_code, code(Error::kUnreleasedInstanceId));
  // Static leave (-2): the member stays with its partitions.
  p::ConsumerGroupHeartbeatRequest leave;
  leave.group_id = kGroup;
  leave.member_id = *a.member_id;
  leave.member_epoch = -2;
  leave.instance_id = "host-1";
  leave.subscribed_topic_regex = std::nullopt;
  leave.server_assignor = std::nullopt;
  leave.rack_id = std::nullopt;
  EXPECT_EQ(h.send(leave).member_epoch, -2);
  const std::int32_t epoch = h.group()->group_epoch();
  auto b = h.send(req);
  ASSERT_EQ(b.error_code, 0);
  EXPECT_NE(*b.member_id, *a.member_id);
  EXPECT_EQ(count(assignment_of(b)), 4u);
  EXPECT_EQ(h.group()->group_epoch(), epoch);  // no rebalance
  EXPECT_EQ(h.group()->members().size(), 1u);
  // The old member id is fenced.
  auto old = h.beat(*a.member_id, 1, std::nullopt);
  EXPECT_EQ(old.error_code, code(Error::kUnknownMemberId));
}

TEST(ConsumerGroupHeartbeat, ReplayingTheRecordsRebuildsTheSameGroups) {
  ConsumerHarness h;
  auto a = h.send(ConsumerHarness::join_request({"orders", "payments"}));
  auto b = h.send(ConsumerHarness::join_request({"orders"}));
  h.beat(*a.member_id, 1, assignment_of(a));
  auto c = h.send(ConsumerHarness::join_request({"payments"}));
  h.beat(*c.member_id, -1, std::nullopt);
  GroupCoordinator fresh(ConsumerHarness::config_for_tests());
  for (const Record& r : h.records) {
    std::optional<std::span<const std::uint8_t>> value;
    if (r.value) value = std::span<const std::uint8_t>(*r.value);
    ASSERT_TRUE(fresh.replay(r.key, value).has_value());
  }
  EXPECT_EQ(fresh.consumer_groups().groups(), h.coordinator.consumer_groups().groups());
}

Bytes from_hex(std::string_view h) {
  Bytes b;
  for (std::size_t i = 0; i + 1 < h.size(); i += 2) {
    b.push_back(static_cast<std::uint8_t>(std::stoi(std::string(h.substr(i, 2)), nullptr, 16)));
  }
  return b;
}

// Bytes Kafka 4.3.1's own ConsumerGroupMember{Metadata}Key/Value classes write for a member with
// instance id "host-a", client "cli" at /127.0.0.1, subscribed to "orders", no classic metadata
// (tagged field 0 written as null, as Kafka does).
TEST(ConsumerGroupRecords, MemberMetadataWrittenByKafkaReplaysAndIsWrittenIdentically) {
  const Bytes key = from_hex("00050002636700166a77744a7334787953367579485a4c4d6350795a3577");
  const Bytes value =
      from_hex("000007686f73742d610004636c690b2f3132372e302e302e3102076f726465727301000075300001000100");
  GroupCoordinator g(ConsumerHarness::config_for_tests());
  ASSERT_TRUE(g.replay(key, std::span<const std::uint8_t>(value)).has_value());
  const ConsumerGroup* cg = g.consumer_groups().group(kGroup);
  ASSERT_NE(cg, nullptr);
  const ConsumerMember& m = cg->members().at("jwtJs4xyS6uyHZLMcPyZ5w");
  EXPECT_EQ(m.instance_id, "host-a");
  EXPECT_EQ(m.rebalance_timeout_ms, 30000);
  EXPECT_EQ(m.subscribed_topic_names, std::vector<std::string>{"orders"});
  const Record again = consumer_records::member_subscription(kGroup, m);
  EXPECT_EQ(again.key, key);
  EXPECT_EQ(again.value, value);
}

TEST(ConsumerGroupDescribe, ReportsEpochsMembersAndAssignments) {
  ConsumerHarness h;
  auto a = h.send(ConsumerHarness::join_request({"orders"}));
  p::ConsumerGroupDescribeRequest req;
  req.group_ids = {kGroup, "missing"};
  auto resp = h.coordinator.consumer_group_describe(req, 0, h.topics);
  ASSERT_EQ(resp.groups.size(), 2u);
  const auto& d = resp.groups[0];
  EXPECT_EQ(d.group_state, "Stable");
  EXPECT_EQ(d.group_epoch, 1);
  EXPECT_EQ(d.assignment_epoch, 1);
  EXPECT_EQ(d.assignor_name, "uniform");
  ASSERT_EQ(d.members.size(), 1u);
  EXPECT_EQ(d.members[0].member_id, *a.member_id);
  ASSERT_EQ(d.members[0].assignment.topic_partitions.size(), 1u);
  EXPECT_EQ(d.members[0].assignment.topic_partitions[0].topic_name, "orders");
  EXPECT_EQ(resp.groups[1].error_code, code(Error::kGroupIdNotFound));

  p::ListGroupsRequest list;
  auto groups = h.coordinator.list_groups(list, 5);
  ASSERT_EQ(groups.groups.size(), 1u);
  EXPECT_EQ(groups.groups[0].group_type, "consumer");
  EXPECT_EQ(groups.groups[0].protocol_type, "consumer");

  p::DescribeGroupsRequest dg;
  dg.groups = {kGroup};
  auto classic = h.coordinator.describe_groups(dg, 6);
  EXPECT_EQ(classic.groups[0].error_code, code(Error::kGroupIdNotFound));
  EXPECT_EQ(classic.groups[0].group_state, "Dead");
}

TEST(ConsumerGroupOffsets, CommitsAreCheckedAgainstTheMemberEpoch) {
  ConsumerHarness h;
  auto a = h.send(ConsumerHarness::join_request({"orders"}));
  auto commit = [&](std::int32_t epoch, std::int16_t version, std::int32_t partition) {
    p::OffsetCommitRequest req;
    req.group_id = kGroup;
    req.member_id = *a.member_id;
    req.generation_id_or_member_epoch = epoch;
    auto& t = req.topics.emplace_back();
    t.name = "orders";
    auto& part = t.partitions.emplace_back();
    part.partition_index = partition;
    part.committed_offset = 10;
    auto r = h.coordinator.offset_commit(req, version, h.clock.now_ms());
    return r.response.topics.at(0).partitions.at(0).error_code;
  };
  EXPECT_EQ(commit(1, 9, 0), 0);
  EXPECT_EQ(commit(2, 9, 0), code(Error::kStaleMemberEpoch));
  EXPECT_EQ(commit(1, 8, 0), code(Error::kUnsupportedVersion));
  // After a second member joins and A moves to epoch 2, epoch 1 still commits what A held then.
  h.send(ConsumerHarness::join_request({"orders"}));
  auto a2 = h.beat(*a.member_id, 1, assignment_of(a));
  h.beat(*a.member_id, 1, assignment_of(a2));
  ASSERT_EQ(h.member(*a.member_id).member_epoch, 2);
  const std::int32_t kept = *assignment_of(a2).at(ConsumerHarness::kOrders).begin();
  EXPECT_EQ(commit(1, 9, kept), 0);
  EXPECT_EQ(commit(2, 9, kept), 0);
}

TEST(ConsumerGroupDelete, AnEmptyConsumerGroupCanBeDeleted) {
  ConsumerHarness h;
  auto a = h.send(ConsumerHarness::join_request({"orders"}));
  p::DeleteGroupsRequest del;
  del.groups_names = {kGroup};
  EXPECT_EQ(h.coordinator.delete_groups(del, 2, h.clock.now_ms()).response.results[0].error_code,
            code(Error::kNonEmptyGroup));
  h.beat(*a.member_id, -1, std::nullopt);
  EXPECT_EQ(h.group()->state(), ConsumerGroupState::kEmpty);
  auto r = h.coordinator.delete_groups(del, 2, h.clock.now_ms());
  EXPECT_EQ(r.response.results[0].error_code, 0);
  EXPECT_EQ(h.group(), nullptr);
}

TEST(ConsumerGroupOffsets, OffsetsOfSubscribedTopicsDoNotExpireAndAnEmptyGroupGoesWithItsLastOffset) {
  ConsumerHarness h;
  auto a = h.send(ConsumerHarness::join_request({"orders"}));
  auto commit = [&](const std::string& topic) {
    p::OffsetCommitRequest req;
    req.group_id = kGroup;
    req.member_id = *a.member_id;
    req.generation_id_or_member_epoch = 1;
    auto& t = req.topics.emplace_back();
    t.name = topic;
    t.partitions.emplace_back().committed_offset = 5;
    h.coordinator.offset_commit(req, 9, h.clock.now_ms());
  };
  commit("orders");
  commit("payments");
  h.clock.advance_ms(8LL * 24 * 60 * 60 * 1000);
  h.coordinator.expire_offsets(h.clock.now_ms());
  EXPECT_TRUE(h.coordinator.committed(kGroup, "orders", 0).has_value());
  EXPECT_FALSE(h.coordinator.committed(kGroup, "payments", 0).has_value());
  h.beat(*a.member_id, -1, std::nullopt);
  h.coordinator.expire_offsets(h.clock.now_ms());
  EXPECT_FALSE(h.coordinator.committed(kGroup, "orders", 0).has_value());
  EXPECT_EQ(h.group(), nullptr);
}

// ---- Regular-expression subscriptions ----------------------------------------------------------

p::ConsumerGroupHeartbeatRequest regex_join(std::string regex) {
  auto req = ConsumerHarness::join_request({});
  req.subscribed_topic_names = std::nullopt;
  req.subscribed_topic_regex = std::move(regex);
  return req;
}

std::vector<std::int16_t> record_types(const std::vector<Record>& records, std::size_t from = 0) {
  std::vector<std::int16_t> out;
  for (std::size_t i = from; i < records.size(); ++i) {
    out.push_back(static_cast<std::int16_t>((records[i].key[0] << 8) | records[i].key[1]));
  }
  return out;
}

TEST(ConsumerGroupRegex, ARegexIsResolvedAfterTheJoinAndItsTopicsAssignedOnTheNextHeartbeat) {
  ConsumerHarness h;
  h.topics.set_version(7);
  auto r = h.send(regex_join("ord.*"));
  ASSERT_EQ(r.error_code, 0);
  // As Kafka: the join answers epoch 1 and nothing to own; the resolution follows it.
  EXPECT_EQ(r.member_epoch, 1);
  ASSERT_TRUE(r.assignment.has_value());
  EXPECT_EQ(count(assignment_of(r)), 0u);
  EXPECT_EQ(record_types(h.records), (std::vector<std::int16_t>{5, 3, 7, 6, 8, 16, 3}));
  const ResolvedRegex* resolved = h.group()->resolved_regex("ord.*");
  ASSERT_NE(resolved, nullptr);
  EXPECT_EQ(resolved->topics, std::set<std::string>{"orders"});
  EXPECT_EQ(resolved->version, 7);
  EXPECT_EQ(resolved->timestamp_ms, h.clock.now_ms());
  EXPECT_EQ(h.group()->group_epoch(), 2);
  EXPECT_EQ(h.group()->assignment_epoch(), 1);
  EXPECT_EQ(h.group()->subscribed_topic_names(), std::set<std::string>{"orders"});

  auto r2 = h.beat(*r.member_id, 1, TopicPartitionSet{});
  EXPECT_EQ(r2.member_epoch, 2);
  EXPECT_EQ(assignment_of(r2), (TopicPartitionSet{{ConsumerHarness::kOrders, {0, 1, 2, 3}}}));

  p::ConsumerGroupDescribeRequest req;
  req.group_ids = {kGroup};
  auto d = h.coordinator.consumer_group_describe(req, 0, h.topics);
  ASSERT_EQ(d.groups[0].members.size(), 1u);
  EXPECT_EQ(d.groups[0].members[0].subscribed_topic_regex, "ord.*");
  EXPECT_TRUE(d.groups[0].members[0].subscribed_topic_names.empty());
}

TEST(ConsumerGroupRegex, AnInvalidRegexIsRefusedWithKafkasMessage) {
  ConsumerHarness h;
  auto r = h.send(regex_join("[a"));
  EXPECT_EQ(r.error_code, 128);  // INVALID_REGULAR_EXPRESSION
  EXPECT_EQ(*r.error_message, "SubscribedTopicRegex `[a` is not a valid regular expression: missing closing ].");
  r = h.send(regex_join("a{1001}"));
  EXPECT_EQ(*r.error_message,
            "SubscribedTopicRegex `a{1001}` is not a valid regular expression: invalid repeat count.");
  EXPECT_EQ(h.group(), nullptr);
  EXPECT_TRUE(h.records.empty());
}

TEST(ConsumerGroupRegex, ATopicCreatedLaterIsAssignedOnceTheRegexIsResolvedAgain) {
  ConsumerHarness h;
  h.topics.set_version(5);
  auto r = h.send(regex_join("ord.*"));
  const std::string id = *r.member_id;
  auto owned = assignment_of(h.beat(id, 1, TopicPartitionSet{}));
  ASSERT_EQ(count(owned), 4u);

  const Uuid orders_eu{0x5555, 0x6666};
  h.topics.add_topic("orders-eu", orders_eu, 2);
  h.topics.set_version(9);
  // Within 10 s of the last resolution nothing is resolved again.
  h.advance(5000);
  h.beat(id, 2, owned);
  EXPECT_EQ(h.group()->resolved_regex("ord.*")->topics, std::set<std::string>{"orders"});
  EXPECT_EQ(h.group()->group_epoch(), 2);

  // Past it, the next heartbeat resolves the regex against the new topics and bumps the epoch;
  // the one after that carries the new partitions.
  h.advance(6000);
  const std::size_t before = h.records.size();
  auto r3 = h.beat(id, 2, owned);
  EXPECT_EQ(r3.member_epoch, 2);
  EXPECT_EQ(record_types(h.records, before), (std::vector<std::int16_t>{16, 3}));
  EXPECT_EQ(h.group()->resolved_regex("ord.*")->topics, (std::set<std::string>{"orders", "orders-eu"}));
  EXPECT_EQ(h.group()->resolved_regex("ord.*")->version, 9);
  EXPECT_EQ(h.group()->group_epoch(), 3);
  auto r4 = h.beat(id, 2, owned);
  EXPECT_EQ(r4.member_epoch, 3);
  EXPECT_EQ(count(assignment_of(r4)), 6u);
  EXPECT_EQ(assignment_of(r4).at(orders_eu), (std::set<std::int32_t>{0, 1}));
}

TEST(ConsumerGroupRegex, ARegexIsResolvedAgainEveryRefreshInterval) {
  GroupConfig c = ConsumerHarness::config_for_tests();
  c.consumer.regex_refresh_interval_ms = 20000;
  ConsumerHarness h(c);
  auto r = h.send(regex_join("ord.*|pay.*"));
  const std::string id = *r.member_id;
  auto owned = assignment_of(h.beat(id, 1, TopicPartitionSet{}));
  ASSERT_EQ(count(owned), 6u);

  // payments is deleted: no topic is new, so the regex keeps it until the refresh interval, but
  // the group's metadata changed and its partitions go at once.
  h.topics = TopicImage();
  h.topics.add_topic("orders", ConsumerHarness::kOrders, 4);
  h.topics.set_version(3);
  owned = assignment_of(h.beat(id, 2, owned));  // payments' partitions are revoked
  EXPECT_EQ(count(owned), 4u);
  EXPECT_EQ(h.beat(id, 2, owned).member_epoch, 3);
  EXPECT_EQ(h.group()->resolved_regex("ord.*|pay.*")->topics, (std::set<std::string>{"orders", "payments"}));

  for (int i = 0; i < 4; ++i) {
    h.advance(5000);
    h.beat(id, 3, owned);
  }
  EXPECT_EQ(h.group()->resolved_regex("ord.*|pay.*")->topics, (std::set<std::string>{"orders", "payments"}));
  h.advance(1000);  // 21 s after the last resolution
  h.beat(id, 3, owned);
  EXPECT_EQ(h.group()->resolved_regex("ord.*|pay.*")->topics, std::set<std::string>{"orders"});
  EXPECT_EQ(h.group()->group_epoch(), 4);
}

TEST(ConsumerGroupRegex, ReplayingTheRegexRecordsRebuildsTheSameGroup) {
  ConsumerHarness h;
  h.topics.set_version(4);
  auto a = h.send(regex_join("ord.*"));
  auto b = h.send(ConsumerHarness::join_request({"payments"}));
  h.beat(*a.member_id, 1, TopicPartitionSet{});
  h.beat(*b.member_id, 2, TopicPartitionSet{});
  ASSERT_NE(h.group()->resolved_regex("ord.*"), nullptr);

  GroupCoordinator fresh(ConsumerHarness::config_for_tests());
  for (const Record& r : h.records) {
    std::optional<std::span<const std::uint8_t>> value;
    if (r.value) value = std::span<const std::uint8_t>(*r.value);
    ASSERT_TRUE(fresh.replay(r.key, value).has_value());
  }
  fresh.finish_replay(h.clock.now_ms());
  EXPECT_EQ(fresh.consumer_groups().groups(), h.coordinator.consumer_groups().groups());
  const ConsumerGroup* g = fresh.consumer_groups().group(kGroup);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->resolved_regex("ord.*")->topics, std::set<std::string>{"orders"});
  EXPECT_EQ(g->resolved_regex("ord.*")->version, 4);
  EXPECT_EQ(g->subscribed_topic_names(), (std::set<std::string>{"orders", "payments"}));

  // The restarted coordinator carries on with the same member and the same assignment.
  fresh.set_topic_image(&h.topics);
  p::ConsumerGroupHeartbeatRequest beat;
  beat.group_id = kGroup;
  beat.member_id = *a.member_id;
  beat.member_epoch = h.member(*a.member_id).member_epoch;
  beat.instance_id = std::nullopt;
  beat.rack_id = std::nullopt;
  beat.subscribed_topic_regex = std::nullopt;
  beat.server_assignor = std::nullopt;
  auto r = fresh.consumer_group_heartbeat(beat, 0, ClientInfo{"client", "/10.0.0.1"}, h.topics, h.clock.now_ms());
  EXPECT_EQ(r.response.error_code, 0);
  EXPECT_EQ(r.response.member_epoch, beat.member_epoch);
  EXPECT_EQ(partitions_of(fresh.consumer_groups().group(kGroup)->members().at(*a.member_id).assigned),
            (TopicPartitionSet{{ConsumerHarness::kOrders, {0, 1, 2, 3}}}));
}

TEST(ConsumerGroupRegex, ARegexNoMemberSubscribesToAnyMoreIsTombstoned) {
  ConsumerHarness h;
  auto a = h.send(regex_join("ord.*"));
  auto b = h.send(regex_join("ord.*"));
  ASSERT_NE(h.group()->resolved_regex("ord.*"), nullptr);
  EXPECT_EQ(h.group()->regex_subscribers("ord.*"), 2u);

  // A leaves: B still uses the regex, which stays.
  std::size_t before = h.records.size();
  h.beat(*a.member_id, -1, std::nullopt);
  EXPECT_EQ(record_types(h.records, before), (std::vector<std::int16_t>{8, 7, 5, 3}));
  ASSERT_NE(h.group()->resolved_regex("ord.*"), nullptr);

  // B moves to topic names: it was the regex's last subscriber, so the regex is tombstoned.
  p::ConsumerGroupHeartbeatRequest req;
  req.group_id = kGroup;
  req.member_id = *b.member_id;
  req.member_epoch = h.member(*b.member_id).member_epoch;
  req.instance_id = std::nullopt;
  req.rack_id = std::nullopt;
  req.server_assignor = std::nullopt;
  req.subscribed_topic_names = std::vector<std::string>{"payments"};
  req.subscribed_topic_regex = "";
  before = h.records.size();
  const std::int32_t epoch = h.group()->group_epoch();
  ASSERT_EQ(h.send(req).error_code, 0);
  const auto types = record_types(h.records, before);
  ASSERT_GE(types.size(), 3u);
  EXPECT_EQ((std::vector<std::int16_t>{types[0], types[1], types[2]}), (std::vector<std::int16_t>{5, 16, 3}));
  EXPECT_FALSE(h.records[before + 1].value.has_value());
  EXPECT_EQ(h.group()->resolved_regex("ord.*"), nullptr);
  EXPECT_GT(h.group()->group_epoch(), epoch);
  EXPECT_EQ(h.group()->subscribed_topic_names(), std::set<std::string>{"payments"});

  // A member of another regex leaving takes it with it.
  auto c = h.send(regex_join("pay.*"));
  ASSERT_NE(h.group()->resolved_regex("pay.*"), nullptr);
  before = h.records.size();
  h.beat(*c.member_id, -1, std::nullopt);
  EXPECT_EQ(record_types(h.records, before), (std::vector<std::int16_t>{8, 7, 5, 16, 3}));
  EXPECT_TRUE(h.group()->resolved_regexes().empty());
}

TEST(ConsumerGroupRegex, DeletingAGroupTombstonesItsResolvedRegexes) {
  ConsumerGroup g(kGroup);
  ResolvedRegex resolved{{"orders"}, 3, 1000};
  g.apply_group_epoch(std::pair{1, 0});
  g.apply_regex("ord.*", &resolved);
  ConsumerGroupCoordinator c(ConsumerGroupConfig{}, 1);
  const auto records = c.delete_records(g);
  EXPECT_EQ(record_types(records), (std::vector<std::int16_t>{6, 16, 4, 3}));
  EXPECT_FALSE(records[1].value.has_value());
}

TEST(ConsumerGroupRegex, RegexRecordIsWrittenInKafkasLayout) {
  ResolvedRegex resolved{{"b", "a"}, 42, 1700000000000};
  const Record r = consumer_records::regex("g", "a.*", resolved);
  // key: type 16, then group "g" and regex "a.*" as int16-length strings.
  EXPECT_EQ(r.key, (Bytes{0x00, 0x10, 0x00, 0x01, 'g', 0x00, 0x03, 'a', '.', '*'}));
  // value: version 0, then compact array of compact strings (sorted), int64 version and
  // timestamp, no tagged fields.
  const Bytes value{0x00, 0x00, 0x03, 0x02, 'a',  0x02, 'b',  0,    0,    0,    0,    0,
                    0,    0,    42,   0x00, 0x00, 0x01, 0x8b, 0xcf, 0xe5, 0x68, 0x00, 0x00};
  EXPECT_EQ(r.value, value);
}

// ---- OffsetDelete and TxnOffsetCommit on consumer groups ---------------------------------------

// Commits `offset` to each (topic, partition) as the member at `epoch` (OffsetCommit v9).
void commit_as(ConsumerHarness& h, const std::string& member_id, std::int32_t epoch,
               const std::vector<std::pair<std::string, std::int32_t>>& partitions) {
  p::OffsetCommitRequest req;
  req.group_id = kGroup;
  req.member_id = member_id;
  req.generation_id_or_member_epoch = epoch;
  for (const auto& [topic, partition] : partitions) {
    auto& t = req.topics.emplace_back();
    t.name = topic;
    auto& part = t.partitions.emplace_back();
    part.partition_index = partition;
    part.committed_offset = 7;
  }
  auto r = h.coordinator.offset_commit(req, 9, h.clock.now_ms());
  for (const auto& t : r.response.topics) {
    for (const auto& part : t.partitions) ASSERT_EQ(part.error_code, 0) << t.name << "-" << part.partition_index;
  }
}

Reply<p::OffsetDeleteResponse> delete_offsets(ConsumerHarness& h, const std::string& group,
                                              const std::vector<std::pair<std::string, std::vector<std::int32_t>>>& topics) {
  p::OffsetDeleteRequest req;
  req.group_id = group;
  for (const auto& [name, partitions] : topics) {
    auto& t = req.topics.emplace_back();
    t.name = name;
    for (std::int32_t partition : partitions) t.partitions.emplace_back().partition_index = partition;
  }
  return h.coordinator.offset_delete(req, 0, h.clock.now_ms());
}

// (topic, partition, error) of each partition of an OffsetDelete response.
std::vector<std::tuple<std::string, std::int32_t, std::int16_t>> results(const p::OffsetDeleteResponse& r) {
  std::vector<std::tuple<std::string, std::int32_t, std::int16_t>> out;
  for (const auto& t : r.topics) {
    for (const auto& part : t.partitions) out.emplace_back(t.name, part.partition_index, part.error_code);
  }
  return out;
}

TEST(ConsumerGroupOffsetDelete, SubscribedTopicsKeepTheirOffsetsAndTheOthersAreTombstoned) {
  ConsumerHarness h;
  auto a = h.send(ConsumerHarness::join_request({"orders"}));
  commit_as(h, *a.member_id, 1, {{"orders", 0}, {"payments", 0}});

  auto r = delete_offsets(h, kGroup, {{"orders", {0, 1}}, {"payments", {0, 1}}});
  EXPECT_EQ(r.response.error_code, 0);
  const std::int16_t subscribed = code(Error::kGroupSubscribedToTopic);
  EXPECT_EQ(results(r.response), (std::vector<std::tuple<std::string, std::int32_t, std::int16_t>>{
                                     {"orders", 0, subscribed},
                                     {"orders", 1, subscribed},
                                     {"payments", 0, 0},
                                     {"payments", 1, 0}}));
  // One offset tombstone (OffsetCommitKey, key version 1), for the only deleted offset that existed.
  ASSERT_EQ(r.effects.records.size(), 1u);
  EXPECT_EQ(r.effects.records[0].key, OffsetManager::offset_record(kGroup, "payments", 0, nullptr).key);
  EXPECT_EQ(r.effects.records[0].key[1], 1);
  EXPECT_FALSE(r.effects.records[0].value.has_value());
  EXPECT_TRUE(h.coordinator.committed(kGroup, "orders", 0).has_value());
  EXPECT_FALSE(h.coordinator.committed(kGroup, "payments", 0).has_value());
  EXPECT_EQ(h.group()->members().size(), 1u);  // the group itself is untouched
}

TEST(ConsumerGroupOffsetDelete, TopicsOfAResolvedRegexAreSubscribedUntilTheLastMemberLeaves) {
  ConsumerHarness h;
  auto a = h.send(regex_join("ord.*"));
  ASSERT_NE(h.group()->resolved_regex("ord.*"), nullptr);
  auto owned = assignment_of(h.beat(*a.member_id, 1, TopicPartitionSet{}));
  const std::int32_t epoch = h.member(*a.member_id).member_epoch;
  commit_as(h, *a.member_id, epoch, {{"orders", 0}, {"orders", 3}});

  auto r = delete_offsets(h, kGroup, {{"orders", {0}}});
  EXPECT_EQ(results(r.response), (std::vector<std::tuple<std::string, std::int32_t, std::int16_t>>{
                                     {"orders", 0, code(Error::kGroupSubscribedToTopic)}}));
  EXPECT_TRUE(r.effects.records.empty());

  // The member leaves; the group is Empty, its regex gone, and every offset may go.
  h.beat(*a.member_id, -1, std::nullopt);
  ASSERT_EQ(h.group()->state(), ConsumerGroupState::kEmpty);
  r = delete_offsets(h, kGroup, {{"orders", {0, 3}}});
  EXPECT_EQ(results(r.response), (std::vector<std::tuple<std::string, std::int32_t, std::int16_t>>{
                                     {"orders", 0, 0}, {"orders", 3, 0}}));
  EXPECT_EQ(r.effects.records.size(), 2u);
  EXPECT_FALSE(h.coordinator.committed(kGroup, "orders", 0).has_value());
  EXPECT_FALSE(h.coordinator.committed(kGroup, "orders", 3).has_value());
  EXPECT_NE(h.group(), nullptr);  // OffsetDelete does not delete the group
}

TEST(ConsumerGroupOffsetDelete, UnknownAndEmptyGroupIdsAreErrorsOfTheWholeRequest) {
  ConsumerHarness h;
  h.send(ConsumerHarness::join_request({"orders"}));
  auto r = delete_offsets(h, "nobody", {{"payments", {0}}});
  EXPECT_EQ(r.response.error_code, code(Error::kGroupIdNotFound));
  EXPECT_TRUE(r.response.topics.empty());
  r = delete_offsets(h, "", {{"payments", {0}}});
  EXPECT_EQ(r.response.error_code, code(Error::kInvalidGroupId));
  EXPECT_TRUE(r.effects.records.empty());
}

p::TxnOffsetCommitRequest txn_request(const std::string& member_id, std::int32_t generation,
                                      const std::vector<std::pair<std::string, std::int32_t>>& partitions) {
  p::TxnOffsetCommitRequest req;
  req.transactional_id = "tx";
  req.group_id = kGroup;
  req.producer_id = 4000;
  req.producer_epoch = 0;
  req.generation_id = generation;
  req.member_id = member_id;
  req.group_instance_id = std::nullopt;
  for (const auto& [topic, partition] : partitions) {
    auto& t = req.topics.emplace_back();
    t.name = topic;
    auto& part = t.partitions.emplace_back();
    part.partition_index = partition;
    part.committed_offset = 11;
    part.committed_metadata = "";
  }
  return req;
}

std::vector<std::int16_t> txn_errors(const p::TxnOffsetCommitResponse& r) {
  std::vector<std::int16_t> out;
  for (const auto& t : r.topics) {
    for (const auto& part : t.partitions) out.push_back(part.error_code);
  }
  return out;
}

TEST(ConsumerGroupTxnOffsets, TheMemberAndItsEpochAreCheckedAndAStaleEpochIsAnIllegalGeneration) {
  ConsumerHarness h;
  auto a = h.send(ConsumerHarness::join_request({"orders"}));
  const std::string id = *a.member_id;
  auto commit = [&](const p::TxnOffsetCommitRequest& req, std::int16_t version = 4) {
    return h.coordinator.txn_offset_commit(req, version, h.clock.now_ms());
  };
  // The member at its epoch: written as a transactional batch of the producer, pending.
  auto r = commit(txn_request(id, 1, {{"orders", 0}, {"orders", 1}}));
  EXPECT_EQ(txn_errors(r.response), (std::vector<std::int16_t>{0, 0}));
  EXPECT_EQ(r.effects.records.size(), 2u);
  ASSERT_TRUE(r.effects.transactional.has_value());
  EXPECT_EQ(r.effects.transactional->producer_id, 4000);
  EXPECT_TRUE(h.coordinator.offset_manager().has_pending(kGroup, "orders", 0));

  const std::int16_t illegal = code(Error::kIllegalGeneration);
  r = commit(txn_request("stranger", 1, {{"orders", 0}}));
  EXPECT_EQ(txn_errors(r.response), std::vector<std::int16_t>{code(Error::kUnknownMemberId)});
  // A newer epoch: STALE_MEMBER_EPOCH in OffsetCommit, ILLEGAL_GENERATION here.
  r = commit(txn_request(id, 2, {{"orders", 0}, {"payments", 0}}));
  EXPECT_EQ(txn_errors(r.response), (std::vector<std::int16_t>{illegal, illegal}));
  EXPECT_TRUE(r.effects.records.empty());
  // No version check below 9 as for OffsetCommit: v3 with member fields is checked the same way.
  EXPECT_EQ(txn_errors(commit(txn_request(id, 1, {{"orders", 2}}), 3).response), std::vector<std::int16_t>{0});
  // v0-2 carry no member fields (generation -1, empty member id): accepted.
  EXPECT_EQ(txn_errors(commit(txn_request("", -1, {{"payments", 1}}), 2).response), std::vector<std::int16_t>{0});
  // A member id with generation -1 is no member of the group.
  EXPECT_EQ(txn_errors(commit(txn_request("stranger", -1, {{"orders", 0}})).response),
            std::vector<std::int16_t>{code(Error::kUnknownMemberId)});

  // A second member joins: A moves to epoch 2 keeping two of its partitions. At epoch 1 it may
  // still commit those; one partition it no longer holds fails the whole request.
  h.send(ConsumerHarness::join_request({"orders"}));
  auto a2 = h.beat(id, 1, assignment_of(a));
  h.beat(id, 1, assignment_of(a2));
  ASSERT_EQ(h.member(id).member_epoch, 2);
  const auto& kept = assignment_of(a2).at(ConsumerHarness::kOrders);
  std::int32_t lost = 0;
  while (kept.contains(lost)) ++lost;
  const std::int32_t held = *kept.begin();
  EXPECT_EQ(txn_errors(commit(txn_request(id, 1, {{"orders", held}})).response), std::vector<std::int16_t>{0});
  r = commit(txn_request(id, 1, {{"orders", held}, {"orders", lost}}));
  EXPECT_EQ(txn_errors(r.response), (std::vector<std::int16_t>{illegal, illegal}));
  EXPECT_TRUE(r.effects.records.empty());
  EXPECT_EQ(txn_errors(commit(txn_request(id, 2, {{"orders", held}})).response), std::vector<std::int16_t>{0});

  // Once the group is empty, a commit without a member epoch is a standalone one.
  std::vector<std::string> ids;
  for (const auto& [mid, m] : h.group()->members()) ids.push_back(mid);
  for (const auto& mid : ids) h.beat(mid, -1, std::nullopt);
  ASSERT_TRUE(h.group()->members().empty());
  EXPECT_EQ(txn_errors(commit(txn_request("anyone", -1, {{"orders", 0}})).response), std::vector<std::int16_t>{0});
}

TEST(ConsumerGroupOffsetDelete, PendingTransactionalOffsetsAreTombstonedToo) {
  ConsumerHarness h;
  auto a = h.send(ConsumerHarness::join_request({"orders"}));
  auto r = h.coordinator.txn_offset_commit(txn_request(*a.member_id, 1, {{"payments", 1}}), 4, h.clock.now_ms());
  ASSERT_EQ(txn_errors(r.response), std::vector<std::int16_t>{0});
  ASSERT_FALSE(h.coordinator.committed(kGroup, "payments", 1).has_value());
  auto d = delete_offsets(h, kGroup, {{"payments", {1}}});
  EXPECT_EQ(results(d.response), (std::vector<std::tuple<std::string, std::int32_t, std::int16_t>>{{"payments", 1, 0}}));
  ASSERT_EQ(d.effects.records.size(), 1u);
  EXPECT_FALSE(h.coordinator.offset_manager().has_pending(kGroup, "payments", 1));
  h.coordinator.complete_transaction(4000, true);
  EXPECT_FALSE(h.coordinator.committed(kGroup, "payments", 1).has_value());
}

// ---- The metadata hash (KIP-1101) -----------------------------------------------------------

std::int64_t kafka_hash(const TopicImage& topics, const std::vector<std::string>& names) {
  std::map<std::string, std::int64_t> hashes;
  for (const auto& n : names) hashes[n] = topic_hash(*topics.by_name(n));
  return group_hash(hashes);
}

// Loads `log` into `c` as at start; false when a record does not replay.
bool replay_all(GroupCoordinator& c, const std::vector<Record>& log) {
  for (const Record& rec : log) {
    std::optional<std::span<const std::uint8_t>> value;
    if (rec.value) value = std::span<const std::uint8_t>(*rec.value);
    if (!c.replay(rec.key, value).has_value()) return false;
  }
  return true;
}

std::int64_t hash_in_last_epoch_record(const std::vector<Record>& records) {
  for (auto it = records.rbegin(); it != records.rend(); ++it) {
    if (record_types({*it}) != std::vector<std::int16_t>{3} || !it->value) continue;
    std::span<const std::uint8_t> value(*it->value);
    p::Reader r(value.subspan(2));
    p::ConsumerGroupMetadataValue v;
    v.decode(r, 0);
    return v.metadata_hash;
  }
  ADD_FAILURE() << "no group epoch record";
  return 0;
}

TEST(ConsumerGroupMetadataHash, TheGroupEpochRecordCarriesKafkasHashOfTheSubscribedTopicsThatExist) {
  ConsumerHarness h;
  h.send(ConsumerHarness::join_request({"orders", "missing"}));
  const std::int64_t want = kafka_hash(h.topics, {"orders"});
  EXPECT_EQ(hash_in_last_epoch_record(h.records), want);
  EXPECT_EQ(h.group()->metadata_hash(), want);
  h.send(ConsumerHarness::join_request({"payments"}));
  EXPECT_EQ(hash_in_last_epoch_record(h.records), kafka_hash(h.topics, {"orders", "payments"}));
}

TEST(ConsumerGroupMetadataHash, MorePartitionsBumpTheEpochOnTheNextHeartbeat) {
  ConsumerHarness h;
  auto r = h.send(ConsumerHarness::join_request({"orders"}));
  const std::string id = *r.member_id;
  h.topics.add_topic("orders", ConsumerHarness::kOrders, 6);
  h.topics.set_version(1);
  const std::size_t before = h.records.size();
  auto r2 = h.beat(id, 1, assignment_of(r));
  EXPECT_EQ(record_types(h.records, before), (std::vector<std::int16_t>{3, 7, 6, 8}));
  EXPECT_EQ(h.group()->group_epoch(), 2);
  EXPECT_EQ(h.group()->metadata_hash(), kafka_hash(h.topics, {"orders"}));
  EXPECT_EQ(r2.member_epoch, 2);
  EXPECT_EQ(count(assignment_of(r2)), 6u);
}

TEST(ConsumerGroupMetadataHash, AChangeToTopicsTheGroupDoesNotSubscribeToLeavesTheEpoch) {
  ConsumerHarness h;
  auto r = h.send(ConsumerHarness::join_request({"orders"}));
  h.topics.add_topic("payments", ConsumerHarness::kPayments, 5);
  h.topics.add_topic("audit", Uuid{0x7777, 0x8888}, 1);
  h.topics.set_version(1);
  const std::size_t before = h.records.size();
  auto r2 = h.beat(*r.member_id, 1, assignment_of(r));
  EXPECT_EQ(r2.member_epoch, 1);
  EXPECT_EQ(h.group()->group_epoch(), 1);
  EXPECT_EQ(h.records.size(), before);
}

TEST(ConsumerGroupMetadataHash, TheHashIsComputedAgainOnlyOnceTheImageMoves) {
  // As Kafka, which recomputes when the metadata image reports a change: the host's image version
  // changes with every metadata change, and nothing is computed while it stays.
  ConsumerHarness h;
  h.topics.set_version(3);
  auto r = h.send(ConsumerHarness::join_request({"orders"}));
  const std::string id = *r.member_id;
  h.topics.add_topic("orders", ConsumerHarness::kOrders, 5);
  auto r2 = h.beat(id, 1, assignment_of(r));
  EXPECT_EQ(h.group()->group_epoch(), 1);
  h.topics.set_version(4);
  h.beat(id, 1, assignment_of(r2));
  EXPECT_EQ(h.group()->group_epoch(), 2);
  EXPECT_EQ(h.group()->metadata_hash(), kafka_hash(h.topics, {"orders"}));
}

TEST(ConsumerGroupMetadataHash, ALoadedGroupComputesItsHashOnItsFirstHeartbeat) {
  ConsumerHarness h;
  auto r = h.send(ConsumerHarness::join_request({"orders"}));
  const std::string id = *r.member_id;
  h.beat(id, 1, assignment_of(r));

  // Loaded where orders has grown, with the image at the same version.
  GroupCoordinator fresh(ConsumerHarness::config_for_tests());
  ASSERT_TRUE(replay_all(fresh, h.records));
  fresh.finish_replay(h.clock.now_ms());
  TopicImage grown = h.topics;
  grown.add_topic("orders", ConsumerHarness::kOrders, 8);
  fresh.set_topic_image(&grown);
  auto b = fresh.consumer_group_heartbeat(ConsumerHarness::beat_request(id, 1), 0, ClientInfo{"client", "/10.0.0.1"},
                                          grown, h.clock.now_ms());
  EXPECT_EQ(b.response.error_code, 0);
  EXPECT_EQ(hash_in_last_epoch_record(b.effects.records), kafka_hash(grown, {"orders"}));
  EXPECT_EQ(fresh.consumer_groups().group(kGroup)->group_epoch(), 2);
}

TEST(ConsumerGroupMetadataHash, APartitionMetadataRecordOfAnOlderKafkaIsTombstonedOnTheNextRefresh) {
  ConsumerHarness h;
  auto r = h.send(ConsumerHarness::join_request({"orders"}));
  const std::string id = *r.member_id;

  // Kafka before 4.1 kept the subscribed topics' metadata in a type 4 record.
  Record type4;
  p::Writer kw(type4.key);
  kw.i16(4);
  p::ConsumerGroupPartitionMetadataKey key;
  key.group_id = kGroup;
  key.encode(kw, 0);
  Bytes value;
  p::Writer vw(value);
  vw.i16(0);
  p::ConsumerGroupPartitionMetadataValue v;
  v.encode(vw, 0);
  type4.value = std::move(value);

  GroupCoordinator fresh(ConsumerHarness::config_for_tests());
  std::vector<Record> log = h.records;
  log.insert(log.begin() + 1, type4);
  ASSERT_TRUE(replay_all(fresh, log));
  fresh.finish_replay(h.clock.now_ms());
  ASSERT_TRUE(fresh.consumer_groups().group(kGroup)->has_partition_metadata_record());
  fresh.set_topic_image(&h.topics);
  auto b = fresh.consumer_group_heartbeat(ConsumerHarness::beat_request(id, 1), 0, ClientInfo{"client", "/10.0.0.1"},
                                          h.topics, h.clock.now_ms());
  EXPECT_EQ(b.response.error_code, 0);
  // The hash is unchanged, so only the tombstone.
  ASSERT_EQ(b.effects.records.size(), 1u);
  EXPECT_EQ(b.effects.records[0].key, type4.key);
  EXPECT_FALSE(b.effects.records[0].value.has_value());
  EXPECT_FALSE(fresh.consumer_groups().group(kGroup)->has_partition_metadata_record());
}

}  // namespace
}  // namespace weir::group::testing
