// Online migration between classic and consumer (KIP-848) groups, as Kafka 4.3.1 runs it: the
// upgrade of a classic group when a ConsumerGroupHeartbeat joins it, classic members inside a
// consumer group (JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit), the downgrade when
// the last consumer-protocol member goes, group.consumer.migration.policy, and the replay of the
// records each step writes.
#include <gtest/gtest.h>

#include "group/coordinator.h"
#include "group_test_util.h"
#include "protocol/consumer_protocol.h"

namespace weir::group::testing {
namespace {

constexpr const char* kGroup = "mig";
const Uuid kOrders{0x1111, 0x2222};

std::string subscription(std::vector<p::TopicPartition> owned = {}) {
  p::ConsumerSubscription s;
  s.topics = {"orders"};
  s.owned_partitions = std::move(owned);
  const Bytes b = p::encode_subscription(s);
  return std::string(b.begin(), b.end());
}

std::string assignment(std::vector<std::int32_t> partitions, std::optional<Bytes> user_data = std::nullopt) {
  p::ConsumerAssignment a;
  for (std::int32_t part : partitions) a.partitions.emplace_back("orders", part);
  a.user_data = std::move(user_data);
  const Bytes b = p::encode_assignment(a);
  return std::string(b.begin(), b.end());
}

std::set<std::int32_t> partitions_in(const Bytes& assignment_bytes) {
  auto a = p::decode_assignment(assignment_bytes);
  EXPECT_TRUE(a.has_value());
  std::set<std::int32_t> out;
  if (a) {
    for (const auto& [topic, part] : a->partitions) out.insert(part);
  }
  return out;
}

class MigrationHarness : public GroupHarness {
 public:
  explicit MigrationHarness(GroupConfig config = config_for_tests()) : GroupHarness(config) {
    topics.add_topic("orders", kOrders, 4);
    coordinator.set_topic_image(&topics);
  }

  static GroupConfig config_for_tests() {
    GroupConfig c = default_config();
    c.initial_rebalance_delay_ms = 0;
    c.consumer.assignment_interval_ms = 0;
    return c;
  }

  static JoinOptions classic(std::string member_id = {}, std::vector<p::TopicPartition> owned = {}) {
    JoinOptions o;
    o.member_id = std::move(member_id);
    o.metadata = subscription(std::move(owned));
    return o;
  }

  // Two classic members a (leader) and b, Stable at generation 1 with partitions {0,1} and {2,3}.
  void stable_classic_group() {
    auto [a_id, a_handle] = join_with_required_id(kGroup, classic());
    auto [b_id, b_handle] = join_with_required_id(kGroup, classic());
    complete_join();
    ASSERT_TRUE(take_join(a_handle).has_value());
    ASSERT_TRUE(take_join(b_handle).has_value());
    a = a_id;
    b = b_id;
    const std::string leader = coordinator.group(kGroup)->leader_id();
    ASSERT_TRUE(sync(kGroup, leader, 1, {{a, assignment({0, 1})}, {b, assignment({2, 3})}}).has_value());
    ASSERT_TRUE(sync(kGroup, leader == a ? b : a, 1).has_value());
    ASSERT_EQ(state(kGroup), GroupState::kStable);
  }

  // Ticks until the initial rebalance (no delay, but rounds while members arrived) is over.
  void complete_join() {
    for (int round = 0; round < 5 && state(kGroup) == GroupState::kPreparingRebalance; ++round) advance(0);
    ASSERT_EQ(state(kGroup), GroupState::kCompletingRebalance);
  }

  p::ConsumerGroupHeartbeatResponse consumer_join() {
    p::ConsumerGroupHeartbeatRequest req;
    req.group_id = kGroup;
    req.member_epoch = 0;
    req.rebalance_timeout_ms = 30000;
    req.subscribed_topic_names = std::vector<std::string>{"orders"};
    req.topic_partitions.emplace();
    return consumer_send(req);
  }

  p::ConsumerGroupHeartbeatResponse consumer_send(const p::ConsumerGroupHeartbeatRequest& req) {
    auto r = coordinator.consumer_group_heartbeat(req, 0, ClientInfo{"new", "/10.0.0.2"}, topics, now());
    absorb(std::move(r.effects));
    return r.response;
  }

  p::ConsumerGroupHeartbeatResponse consumer_leave(const std::string& member_id) {
    p::ConsumerGroupHeartbeatRequest req;
    req.group_id = kGroup;
    req.member_id = member_id;
    req.member_epoch = -1;
    return consumer_send(req);
  }

  // A classic member rejoins (reporting what it owns) and syncs; returns its generation and
  // assignment.
  std::pair<std::int32_t, std::set<std::int32_t>> rejoin(const std::string& id, std::vector<std::int32_t> owned) {
    std::vector<p::TopicPartition> tps;
    for (std::int32_t part : owned) tps.emplace_back("orders", part);
    auto j = join(kGroup, classic(id, tps));
    EXPECT_TRUE(j.has_value());
    if (!j) return {};
    EXPECT_EQ(j->response.error_code, 0);
    EXPECT_EQ(j->response.protocol_type, "consumer");
    EXPECT_EQ(j->response.protocol_name, "range");
    auto s = sync(kGroup, id, j->response.generation_id);
    EXPECT_TRUE(s.has_value());
    if (!s || s->response.error_code != 0) return {j->response.generation_id, {}};
    return {j->response.generation_id, partitions_in(s->response.assignment)};
  }

  const ConsumerGroup* consumer_group() const { return coordinator.consumer_groups().group(kGroup); }

  std::vector<std::int16_t> record_types(std::size_t from = 0) const {
    std::vector<std::int16_t> out;
    for (std::size_t i = from; i < records.size(); ++i) {
      p::Reader r(records[i].key);
      out.push_back(r.i16());
    }
    return out;
  }

  GroupCoordinator replayed() const {
    GroupCoordinator fresh(config_for_tests());
    for (const Record& r : records) {
      std::optional<std::span<const std::uint8_t>> value;
      if (r.value) value = std::span<const std::uint8_t>(*r.value);
      EXPECT_TRUE(fresh.replay(r.key, value).has_value());
    }
    return fresh;
  }

  TopicImage topics;
  std::string a;
  std::string b;
};

// ---- Upgrade ---------------------------------------------------------------------------------

TEST(MigrationUpgrade, AConsumerJoinConvertsAStableClassicGroupWithItsMembersAndAssignments) {
  MigrationHarness h;
  h.stable_classic_group();
  const std::size_t before = h.records.size();
  auto r = h.consumer_join();
  ASSERT_EQ(r.error_code, 0) << r.error_message.value_or("");
  EXPECT_EQ(h.coordinator.group(kGroup), nullptr);
  const ConsumerGroup* g = h.consumer_group();
  ASSERT_NE(g, nullptr);
  ASSERT_EQ(g->members().size(), 3u);
  const ConsumerMember& a = g->members().at(h.a);
  ASSERT_TRUE(a.classic.has_value());
  EXPECT_EQ(a.classic->session_timeout_ms, 10000);
  ASSERT_EQ(a.classic->protocols.size(), 1u);
  EXPECT_EQ(a.classic->protocols[0].name, "range");
  EXPECT_EQ(a.member_epoch, 1);
  EXPECT_EQ(a.subscribed_topic_names, std::vector<std::string>{"orders"});
  EXPECT_EQ(partitions_of(a.assigned), (TopicPartitionSet{{kOrders, {0, 1}}}));
  EXPECT_EQ(partitions_of(g->members().at(h.b).assigned), (TopicPartitionSet{{kOrders, {2, 3}}}));
  EXPECT_FALSE(g->members().at(*r.member_id).classic.has_value());
  // The new member bumped the epoch past the classic generation.
  EXPECT_EQ(g->group_epoch(), 2);
  // Classic tombstone (key version 2), then Kafka's conversion records: subscriptions, the epoch,
  // targets, the target epoch, current assignments; then the joining member's records.
  const std::vector<std::int16_t> types = h.record_types(before);
  ASSERT_GE(types.size(), 9u);
  EXPECT_EQ(std::vector<std::int16_t>(types.begin(), types.begin() + 9),
            (std::vector<std::int16_t>{2, 5, 5, 3, 7, 7, 6, 8, 8}));
  EXPECT_FALSE(h.records[before].value.has_value());
}

TEST(MigrationUpgrade, ReplayingAConvertedGroupRebuildsTheSameConsumerGroup) {
  MigrationHarness h;
  h.stable_classic_group();
  ASSERT_EQ(h.consumer_join().error_code, 0);
  GroupCoordinator fresh = h.replayed();
  EXPECT_EQ(fresh.group(kGroup), nullptr);
  EXPECT_EQ(fresh.consumer_groups().groups(), h.coordinator.consumer_groups().groups());
}

TEST(MigrationUpgrade, RefusalsCarryKafkasMessagesAndLeaveTheClassicGroup) {
  {
    GroupConfig c = MigrationHarness::config_for_tests();
    c.consumer.migration_policy = MigrationPolicy::kDowngrade;
    MigrationHarness h(c);
    h.stable_classic_group();
    auto r = h.consumer_join();
    EXPECT_EQ(r.error_code, code(Error::kGroupIdNotFound));
    EXPECT_EQ(r.error_message,
              "Cannot upgrade classic group mig to consumer group because online upgrade is disabled.");
    EXPECT_EQ(h.state(kGroup), GroupState::kStable);
  }
  {
    GroupConfig c = MigrationHarness::config_for_tests();
    c.consumer.max_size = 1;
    MigrationHarness h(c);
    h.stable_classic_group();
    auto r = h.consumer_join();
    EXPECT_EQ(r.error_message,
              "Cannot upgrade classic group mig to consumer group because the group size exceeds the consumer group "
              "maximum size.");
  }
  {
    MigrationHarness h;
    auto [id, handle] = h.join_with_required_id(kGroup, MigrationHarness::classic());
    h.complete_join();
    ASSERT_TRUE(h.take_join(handle).has_value());
    // The leader's assignor put user data in the assignment: a custom assignor's state.
    ASSERT_TRUE(h.sync(kGroup, id, 1, {{id, assignment({0, 1, 2, 3}, Bytes{1, 2})}}).has_value());
    auto r = h.consumer_join();
    EXPECT_EQ(r.error_code, code(Error::kGroupIdNotFound));
    EXPECT_EQ(r.error_message,
              "Cannot upgrade classic group mig to consumer group because an unsupported custom assignor is in use. "
              "Please refer to the documentation or switch to a default assignor before re-attempting the upgrade.");
    EXPECT_EQ(h.consumer_group(), nullptr);
    EXPECT_EQ(h.state(kGroup), GroupState::kStable);
  }
}

TEST(MigrationUpgrade, AGroupOfAnotherProtocolTypeOrAHeartbeatPastEpochZeroIsNotAConsumerGroup) {
  MigrationHarness h;
  p::JoinGroupRequest join;
  join.group_id = kGroup;
  join.session_timeout_ms = 10000;
  join.rebalance_timeout_ms = 10000;
  join.protocol_type = "connect";
  join.protocols.emplace_back().name = "default";
  h.absorb(h.coordinator.join_group(1, join, 3, "c", "/h", h.now()));
  auto r = h.consumer_join();
  EXPECT_EQ(r.error_code, code(Error::kGroupIdNotFound));
  EXPECT_EQ(r.error_message,
            "Cannot upgrade classic group mig to consumer group because the group does not use the consumer embedded "
            "protocol.");
  p::ConsumerGroupHeartbeatRequest beat;
  beat.group_id = kGroup;
  beat.member_id = "m";
  beat.member_epoch = 3;
  auto again = h.consumer_send(beat);
  EXPECT_EQ(again.error_message, "Group mig is not a consumer group.");
}

TEST(MigrationUpgrade, MembersWaitingOnARebalanceAreToldToRejoin) {
  MigrationHarness h;
  h.stable_classic_group();
  RequestHandle held = 0;
  // The leader rejoins: the group prepares a rebalance and holds its JoinGroup.
  const std::string leader = h.coordinator.group(kGroup)->leader_id();
  ASSERT_FALSE(h.join(kGroup, MigrationHarness::classic(leader), &held).has_value());
  ASSERT_EQ(h.consumer_join().error_code, 0);
  auto answered = h.take_join(held);
  ASSERT_TRUE(answered.has_value());
  EXPECT_EQ(answered->response.error_code, code(Error::kRebalanceInProgress));
}

// ---- Classic members of a consumer group -----------------------------------------------------

TEST(MigrationClassicMembers, ClassicMembersRejoinThroughJoinAndSyncUntilThePartitionsAreShared) {
  MigrationHarness h;
  h.stable_classic_group();
  auto c = h.consumer_join();
  ASSERT_EQ(c.error_code, 0);
  // The group epoch moved: the classic members' heartbeats ask them to rejoin.
  EXPECT_EQ(h.heartbeat(kGroup, h.a, 1), code(Error::kRebalanceInProgress));
  EXPECT_EQ(h.heartbeat(kGroup, h.a, 7), code(Error::kIllegalGeneration));
  // Eager members rejoin owning nothing, reconcile and sync their assignment; the consumer member
  // gets what they released.
  std::map<std::string, std::set<std::int32_t>> held;
  for (int round = 0; round < 4; ++round) {
    for (const std::string& id : {h.a, h.b}) {
      if (h.heartbeat(kGroup, id, h.consumer_group()->members().at(id).member_epoch) == 0) continue;
      held[id] = h.rejoin(id, {}).second;
    }
    auto beat = h.consumer_send([&] {
      p::ConsumerGroupHeartbeatRequest req;
      req.group_id = kGroup;
      req.member_id = *c.member_id;
      req.member_epoch = h.consumer_group()->members().at(*c.member_id).member_epoch;
      req.topic_partitions.emplace();
      return req;
    }());
    ASSERT_EQ(beat.error_code, 0);
  }
  const ConsumerGroup* g = h.consumer_group();
  EXPECT_EQ(g->state(), ConsumerGroupState::kStable);
  std::set<std::int32_t> all;
  std::size_t total = 0;
  for (const auto& [id, m] : g->members()) {
    EXPECT_EQ(m.member_epoch, g->group_epoch());
    for (const auto& [t, parts] : partitions_of(m.assigned)) {
      all.insert(parts.begin(), parts.end());
      total += parts.size();
    }
  }
  EXPECT_EQ(all, (std::set<std::int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(total, 4u);
  for (const auto& [id, parts] : held) {
    EXPECT_EQ(TopicPartitionSet({{kOrders, parts}}), partitions_of(g->members().at(id).assigned)) << id;
  }
  EXPECT_EQ(h.heartbeat(kGroup, h.a, g->members().at(h.a).member_epoch), 0);
  GroupCoordinator fresh = h.replayed();
  EXPECT_EQ(fresh.consumer_groups().groups(), h.coordinator.consumer_groups().groups());
}

TEST(MigrationClassicMembers, ANewClassicMemberJoinsAConsumerGroup) {
  MigrationHarness h;
  auto c = h.consumer_join();
  ASSERT_EQ(c.error_code, 0);
  auto first = h.join(kGroup, MigrationHarness::classic());
  ASSERT_TRUE(first.has_value());
  ASSERT_EQ(first->response.error_code, code(Error::kMemberIdRequired));
  const std::string id = first->response.member_id;
  EXPECT_EQ(h.consumer_group()->member(id), nullptr);
  auto [generation, parts] = h.rejoin(id, {});
  EXPECT_EQ(generation, h.consumer_group()->members().at(id).member_epoch);
  EXPECT_TRUE(h.consumer_group()->members().at(id).classic.has_value());
  // Another protocol type is refused.
  p::JoinGroupRequest other;
  other.group_id = kGroup;
  other.session_timeout_ms = 10000;
  other.protocol_type = "connect";
  other.protocols.emplace_back().name = "range";
  h.absorb(h.coordinator.join_group(99, other, 9, "c", "/h", h.now()));
  auto refused = h.take_join(99);
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->response.error_code, code(Error::kInconsistentGroupProtocol));
  // ConsumerGroupDescribe says which member is classic.
  p::ConsumerGroupDescribeRequest d;
  d.group_ids = {kGroup};
  auto described = h.coordinator.consumer_group_describe(d, 1, h.topics);
  ASSERT_EQ(described.groups.size(), 1u);
  for (const auto& m : described.groups[0].members) EXPECT_EQ(m.member_type, m.member_id == id ? 0 : 1);
}

TEST(MigrationClassicMembers, AJoinGroupToAnEmptyConsumerGroupReplacesItByAClassicGroup) {
  MigrationHarness h;
  auto c = h.consumer_join();
  ASSERT_EQ(h.consumer_leave(*c.member_id).error_code, 0);
  ASSERT_NE(h.consumer_group(), nullptr);
  const std::size_t before = h.records.size();
  auto [id, handle] = h.join_with_required_id(kGroup, MigrationHarness::classic());
  EXPECT_EQ(h.consumer_group(), nullptr);
  EXPECT_EQ(h.state(kGroup), GroupState::kPreparingRebalance);
  // The empty consumer group's tombstones: target epoch, partition metadata, group epoch.
  EXPECT_EQ(h.record_types(before), (std::vector<std::int16_t>{6, 4, 3}));
  h.complete_join();
  EXPECT_TRUE(h.take_join(handle).has_value());
}

TEST(MigrationClassicMembers, ARestartedStaticClassicMemberReplacesItsOldInstance) {
  MigrationHarness h;
  ASSERT_EQ(h.consumer_join().error_code, 0);
  JoinOptions o = MigrationHarness::classic();
  o.instance_id = "host-1";
  auto first = h.join(kGroup, o);
  ASSERT_TRUE(first.has_value());
  ASSERT_EQ(first->response.error_code, 0);  // a static member needs no member id round trip
  const std::string old_id = first->response.member_id;
  auto second = h.join(kGroup, o);
  ASSERT_TRUE(second.has_value());
  ASSERT_EQ(second->response.error_code, 0);
  const std::string new_id = second->response.member_id;
  EXPECT_NE(new_id, old_id);
  EXPECT_EQ(h.consumer_group()->member(old_id), nullptr);
  EXPECT_EQ(h.consumer_group()->static_member("host-1")->member_id, new_id);
  // The old instance is fenced.
  o.member_id = old_id;
  auto stale = h.join(kGroup, o);
  ASSERT_TRUE(stale.has_value());
  EXPECT_EQ(stale->response.error_code, code(Error::kFencedInstanceId));
  EXPECT_EQ(h.heartbeat(kGroup, old_id, 1, std::string("host-1")), code(Error::kFencedInstanceId));
}

TEST(MigrationClassicMembers, MigrationDisabledRefusesClassicJoins) {
  GroupConfig c = MigrationHarness::config_for_tests();
  c.consumer.migration_policy = MigrationPolicy::kDisabled;
  MigrationHarness h(c);
  ASSERT_EQ(h.consumer_join().error_code, 0);
  auto j = h.join(kGroup, MigrationHarness::classic("some-id"));
  ASSERT_TRUE(j.has_value());
  EXPECT_EQ(j->response.error_code, code(Error::kInconsistentGroupProtocol));
}

TEST(MigrationClassicMembers, LeaveGroupRemovesAClassicMemberAndBumpsTheEpoch) {
  MigrationHarness h;
  h.stable_classic_group();
  auto c = h.consumer_join();
  const std::int32_t epoch = h.consumer_group()->group_epoch();
  EXPECT_EQ(h.leave(kGroup, h.a), 0);
  EXPECT_EQ(h.consumer_group()->member(h.a), nullptr);
  EXPECT_EQ(h.consumer_group()->group_epoch(), epoch + 1);
  // A consumer-protocol member cannot leave through LeaveGroup.
  EXPECT_EQ(h.leave(kGroup, *c.member_id), code(Error::kUnknownMemberId));
  EXPECT_EQ(h.leave(kGroup, "nobody"), code(Error::kUnknownMemberId));
}

TEST(MigrationClassicMembers, AClassicMemberExpiresAfterItsOwnSessionTimeout) {
  MigrationHarness h;
  h.stable_classic_group();
  auto c = h.consumer_join();
  ASSERT_EQ(c.error_code, 0);
  // The consumer member keeps beating; a and b do not (their session is 10 s, the consumer one 45 s).
  h.advance(10'001);
  EXPECT_EQ(h.consumer_group()->member(h.a), nullptr);
  EXPECT_EQ(h.consumer_group()->member(h.b), nullptr);
  EXPECT_NE(h.consumer_group()->member(*c.member_id), nullptr);
}

TEST(MigrationClassicMembers, SyncAfterAJoinIsDueWithinTheRebalanceTimeout) {
  MigrationHarness h;
  auto c = h.consumer_join();
  auto first = h.join(kGroup, MigrationHarness::classic());
  JoinOptions o = MigrationHarness::classic(first->response.member_id);
  o.session_timeout_ms = 60'000;
  o.rebalance_timeout_ms = 20'000;
  auto j = h.join(kGroup, o);
  ASSERT_EQ(j->response.error_code, 0);
  h.advance(20'001);
  EXPECT_EQ(h.consumer_group()->member(o.member_id), nullptr);
}

TEST(MigrationClassicMembers, OffsetCommitsOfClassicMembersUseTheGenerationAndAnyVersion) {
  MigrationHarness h;
  h.stable_classic_group();
  ASSERT_EQ(h.consumer_join().error_code, 0);
  // v8: a consumer-protocol member would need v9.
  EXPECT_EQ(h.commit(kGroup, h.a, 1, "orders", 0, 5), 0);
  EXPECT_EQ(h.commit(kGroup, h.a, 2, "orders", 0, 5), code(Error::kIllegalGeneration));
  // The commits replay into the consumer group's offsets, with no classic group beside it.
  GroupCoordinator fresh = h.replayed();
  EXPECT_EQ(fresh.group(kGroup), nullptr);
  ASSERT_NE(fresh.consumer_groups().group(kGroup), nullptr);
  ASSERT_TRUE(fresh.committed(kGroup, "orders", 0).has_value());
  EXPECT_EQ(fresh.committed(kGroup, "orders", 0)->offset, 5);
}

// ---- Downgrade -------------------------------------------------------------------------------

TEST(MigrationDowngrade, TheLastConsumerMemberLeavingTurnsTheGroupClassicAgain) {
  MigrationHarness h;
  h.stable_classic_group();
  auto c = h.consumer_join();
  ASSERT_EQ(c.error_code, 0);
  const std::int32_t epoch = h.consumer_group()->group_epoch();
  const std::size_t before = h.records.size();
  ASSERT_EQ(h.consumer_leave(*c.member_id).error_code, 0);
  EXPECT_EQ(h.consumer_group(), nullptr);
  const ClassicGroup* g = h.coordinator.group(kGroup);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->state(), GroupState::kPreparingRebalance);
  EXPECT_EQ(g->generation_id(), epoch);
  EXPECT_EQ(g->protocol_type(), "consumer");
  EXPECT_EQ(g->protocol_name(), "range");
  EXPECT_EQ(g->size(), 2u);
  // Consumer tombstones (8s, 7s, 6, 5s, 4, 3), then the classic group's metadata.
  EXPECT_EQ(h.record_types(before), (std::vector<std::int16_t>{8, 8, 8, 7, 7, 7, 6, 5, 5, 5, 4, 3, 2}));
  // Replay gives the classic group (Stable, as Kafka loads a group with members).
  GroupCoordinator fresh = h.replayed();
  EXPECT_TRUE(fresh.consumer_groups().groups().empty());
  ASSERT_NE(fresh.group(kGroup), nullptr);
  EXPECT_EQ(fresh.group(kGroup)->generation_id(), epoch);
  EXPECT_EQ(fresh.group(kGroup)->size(), 2u);
  // The classic members rejoin and the group is Stable again with a new generation.
  EXPECT_EQ(h.heartbeat(kGroup, h.a, epoch), code(Error::kRebalanceInProgress));
  RequestHandle ha = 0;
  RequestHandle hb = 0;
  ASSERT_FALSE(h.join(kGroup, MigrationHarness::classic(h.a), &ha).has_value());
  auto jb = h.join(kGroup, MigrationHarness::classic(h.b), &hb);
  if (!jb) jb = h.take_join(hb);
  ASSERT_TRUE(jb.has_value());
  EXPECT_EQ(jb->response.generation_id, epoch + 1);
}

TEST(MigrationDowngrade, AConsumerMemberWhoseSessionExpiresAlsoDowngrades) {
  MigrationHarness h;
  h.stable_classic_group();
  ASSERT_EQ(h.consumer_join().error_code, 0);
  // Classic members keep heartbeating and rejoin when told to; the consumer one stops.
  for (int i = 0; i < 8 && h.consumer_group() != nullptr; ++i) {
    h.advance(8'000);
    for (const std::string& id : {h.a, h.b}) {
      const ConsumerMember* m = h.consumer_group() ? h.consumer_group()->member(id) : nullptr;
      if (m != nullptr && h.heartbeat(kGroup, id, m->member_epoch) == code(Error::kRebalanceInProgress)) {
        h.rejoin(id, {});
      }
    }
  }
  EXPECT_EQ(h.consumer_group(), nullptr);
  ASSERT_NE(h.coordinator.group(kGroup), nullptr);
  EXPECT_EQ(h.coordinator.group(kGroup)->size(), 2u);
}

// A static consumer-protocol member, the group's last, leaves for a restart (epoch -2) and comes
// back as a classic member with the same instance id: the group turns classic with the newcomer
// added last in its predecessor's place (Kafka's validateOnlineDowngradeWithReplacedMember).
struct StaticReplacement {
  std::string consumer_id;
  std::int32_t epoch = 0;
};

StaticReplacement static_consumer_member_left(MigrationHarness& h) {
  p::ConsumerGroupHeartbeatRequest req;
  req.group_id = kGroup;
  req.member_epoch = 0;
  req.instance_id = "host-s";
  req.rebalance_timeout_ms = 30000;
  req.subscribed_topic_names = std::vector<std::string>{"orders"};
  req.topic_partitions.emplace();
  auto joined = h.consumer_send(req);
  EXPECT_EQ(joined.error_code, 0);
  StaticReplacement out{joined.member_id.value_or(""), h.consumer_group()->group_epoch()};
  p::ConsumerGroupHeartbeatRequest leave;
  leave.group_id = kGroup;
  leave.member_id = out.consumer_id;
  leave.instance_id = "host-s";
  leave.member_epoch = -2;
  EXPECT_EQ(h.consumer_send(leave).error_code, 0);
  return out;
}

// The classic member with the static consumer member's instance id joins; its member id ("" if
// the join failed).
std::string classic_replacement_joins(MigrationHarness& h) {
  JoinOptions o = MigrationHarness::classic();
  o.instance_id = "host-s";
  auto j = h.join(kGroup, o);
  EXPECT_TRUE(j.has_value());
  if (!j) return {};
  EXPECT_EQ(j->response.error_code, 0);
  EXPECT_EQ(j->response.protocol_name, "range");
  return j->response.member_id;
}

TEST(MigrationDowngrade, AStaticClassicMemberReplacingTheLastConsumerMemberTurnsTheGroupClassic) {
  MigrationHarness h;
  h.stable_classic_group();
  const StaticReplacement s = static_consumer_member_left(h);
  ASSERT_NE(h.consumer_group(), nullptr);
  const std::int32_t epoch = h.consumer_group()->group_epoch();
  const std::size_t before = h.records.size();
  const std::string new_id = classic_replacement_joins(h);
  ASSERT_FALSE(new_id.empty());
  EXPECT_NE(new_id, s.consumer_id);
  EXPECT_EQ(h.consumer_group(), nullptr);
  const ClassicGroup* g = h.coordinator.group(kGroup);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->state(), GroupState::kPreparingRebalance);
  EXPECT_EQ(g->generation_id(), epoch);
  EXPECT_EQ(g->size(), 3u);
  EXPECT_TRUE(g->members().contains(new_id));
  EXPECT_NE(g->leader_id(), new_id);
  // The replacement (tombstones of the old member, records of the new), then the consumer
  // group's tombstones, then the classic group's metadata.
  const auto types = h.record_types(before);
  ASSERT_GE(types.size(), 7u);
  EXPECT_EQ(std::vector<std::int16_t>(types.begin(), types.begin() + 6), (std::vector<std::int16_t>{8, 7, 5, 5, 7, 8}));
  EXPECT_EQ(types.back(), 2);
  GroupCoordinator fresh = h.replayed();
  EXPECT_TRUE(fresh.consumer_groups().groups().empty());
  ASSERT_NE(fresh.group(kGroup), nullptr);
  EXPECT_EQ(fresh.group(kGroup)->size(), 3u);
  EXPECT_TRUE(fresh.group(kGroup)->members().contains(new_id));
}

TEST(MigrationDowngrade, AStaticClassicReplacementKeepsTheConsumerGroupWhileAnotherConsumerMemberStays) {
  MigrationHarness h;
  h.stable_classic_group();
  ASSERT_EQ(h.consumer_join().error_code, 0);
  static_consumer_member_left(h);
  const std::string new_id = classic_replacement_joins(h);
  ASSERT_NE(h.consumer_group(), nullptr);
  EXPECT_EQ(h.consumer_group()->static_member("host-s")->member_id, new_id);
  EXPECT_EQ(h.coordinator.group(kGroup), nullptr);
}

TEST(MigrationDowngrade, AStaticClassicReplacementUnderTheUpgradeOnlyPolicyKeepsTheConsumerGroup) {
  GroupConfig c = MigrationHarness::config_for_tests();
  c.consumer.migration_policy = MigrationPolicy::kUpgrade;
  MigrationHarness h(c);
  h.stable_classic_group();
  static_consumer_member_left(h);
  EXPECT_FALSE(classic_replacement_joins(h).empty());
  ASSERT_NE(h.consumer_group(), nullptr);
  EXPECT_EQ(h.consumer_group()->members().size(), 3u);
}

TEST(MigrationDowngrade, UpgradeOnlyPolicyKeepsTheConsumerGroup) {
  GroupConfig c = MigrationHarness::config_for_tests();
  c.consumer.migration_policy = MigrationPolicy::kUpgrade;
  MigrationHarness h(c);
  h.stable_classic_group();
  auto joined = h.consumer_join();
  ASSERT_EQ(h.consumer_leave(*joined.member_id).error_code, 0);
  ASSERT_NE(h.consumer_group(), nullptr);
  EXPECT_EQ(h.consumer_group()->members().size(), 2u);
  EXPECT_EQ(h.coordinator.group(kGroup), nullptr);
}

TEST(MigrationPolicy, NamesAreReadInAnyCase) {
  EXPECT_EQ(parse_migration_policy("BiDirectional"), MigrationPolicy::kBidirectional);
  EXPECT_EQ(parse_migration_policy("UPGRADE"), MigrationPolicy::kUpgrade);
  EXPECT_EQ(parse_migration_policy("downgrade"), MigrationPolicy::kDowngrade);
  EXPECT_EQ(parse_migration_policy("Disabled"), MigrationPolicy::kDisabled);
  EXPECT_EQ(parse_migration_policy("sideways"), std::nullopt);
}

}  // namespace
}  // namespace weir::group::testing
