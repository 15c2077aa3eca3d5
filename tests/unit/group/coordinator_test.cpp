#include <gtest/gtest.h>

#include "group/coordinator.h"
#include "group_test_util.h"

namespace weir::group::testing {
namespace {

constexpr const char* kGroup = "g1";

// Two dynamic members through the initial rebalance to Stable; returns their ids (leader first).
struct StableGroup {
  std::string leader;
  std::string follower;
  std::int32_t generation = 0;
};

StableGroup make_stable(GroupHarness& h, JoinOptions a = {}, JoinOptions b = {}) {
  a.client_id = "client-1";
  b.client_id = "client-2";
  auto [id1, h1] = h.join_with_required_id(kGroup, a);
  auto [id2, h2] = h.join_with_required_id(kGroup, b);
  // The second member arrived during the initial delay, which therefore runs twice.
  h.advance(3000);
  h.advance(3000);
  auto r1 = h.take_join(h1);
  auto r2 = h.take_join(h2);
  EXPECT_TRUE(r1 && r2);
  StableGroup s;
  s.leader = r1->response.leader;
  s.follower = s.leader == id1 ? id2 : id1;
  s.generation = r1->response.generation_id;
  h.sync(kGroup, s.follower, s.generation);
  RequestHandle follower_sync = h.last_sync_handle;
  h.sync(kGroup, s.leader, s.generation, {{s.leader, "parts-L"}, {s.follower, "parts-F"}});
  EXPECT_TRUE(h.take_sync(follower_sync).has_value());
  EXPECT_EQ(h.state(kGroup), GroupState::kStable);
  return s;
}

TEST(ClassicGroupJoin, FirstJoinWithoutMemberIdIsToldToRejoinWithAGeneratedId) {
  GroupHarness h;
  JoinOptions o;
  o.client_id = "consumer-7";
  auto r = h.join(kGroup, o);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->response.error_code, code(Error::kMemberIdRequired));
  const std::string& id = r->response.member_id;
  ASSERT_EQ(id.size(), std::string("consumer-7-").size() + 36);
  EXPECT_TRUE(id.starts_with("consumer-7-"));
  EXPECT_EQ(id[std::string("consumer-7-").size() + 14], '4');  // a version-4 UUID
  EXPECT_EQ(h.coordinator.group(kGroup)->size(), 0u);
}

TEST(ClassicGroupJoin, OldVersionsJoinWithoutTheMemberIdRoundTrip) {
  GroupHarness h;
  JoinOptions o;
  o.version = 3;
  RequestHandle handle = 0;
  EXPECT_FALSE(h.join(kGroup, o, &handle));  // held for the initial rebalance delay
  EXPECT_EQ(h.coordinator.group(kGroup)->size(), 1u);
  h.advance(3000);
  auto r = h.take_join(handle);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->response.error_code, 0);
  EXPECT_EQ(r->response.generation_id, 1);
}

TEST(ClassicGroupJoin, TwoConsumersJoiningMakeOneRebalanceAndTheLeaderSeesBoth) {
  GroupHarness h;
  JoinOptions a;
  a.client_id = "c1";
  a.metadata = "meta-1";
  JoinOptions b = a;
  b.client_id = "c2";
  b.metadata = "meta-2";
  auto [id1, h1] = h.join_with_required_id(kGroup, a);
  h.advance(1000);
  auto [id2, h2] = h.join_with_required_id(kGroup, b);
  EXPECT_EQ(h.state(kGroup), GroupState::kPreparingRebalance);
  h.advance(1999);
  EXPECT_FALSE(h.take_join(h1));
  h.advance(1);  // the initial delay (3000 ms) is over; the second join extends it
  h.advance(3000);
  auto r1 = h.take_join(h1);
  auto r2 = h.take_join(h2);
  ASSERT_TRUE(r1 && r2);
  EXPECT_EQ(r1->response.generation_id, 1);
  EXPECT_EQ(r2->response.generation_id, 1);
  EXPECT_EQ(r1->response.protocol_name, "range");
  EXPECT_EQ(r1->response.leader, id1);
  EXPECT_EQ(r2->response.leader, id1);
  ASSERT_EQ(r1->response.members.size(), 2u);
  EXPECT_TRUE(r2->response.members.empty());
  for (const auto& m : r1->response.members) {
    EXPECT_EQ(text(m.metadata), m.member_id == id1 ? "meta-1" : "meta-2");
  }
  EXPECT_EQ(h.state(kGroup), GroupState::kCompletingRebalance);

  // The follower waits for the leader's assignment.
  EXPECT_FALSE(h.sync(kGroup, id2, 1));
  const RequestHandle follower_sync = h.last_sync_handle;
  const std::size_t records_before = h.records.size();
  auto leader_sync = h.sync(kGroup, id1, 1, {{id1, "p0,p1"}, {id2, "p2"}});
  ASSERT_TRUE(leader_sync);
  EXPECT_EQ(text(leader_sync->response.assignment), "p0,p1");
  auto follower = h.take_sync(follower_sync);
  ASSERT_TRUE(follower);
  EXPECT_EQ(text(follower->response.assignment), "p2");
  EXPECT_EQ(h.state(kGroup), GroupState::kStable);
  EXPECT_EQ(h.records.size(), records_before + 1);  // the group's metadata with assignments
  EXPECT_EQ(h.heartbeat(kGroup, id2, 1), 0);
}

TEST(ClassicGroupJoin, InitialDelayOfAGroupReformingFromEmptyIsExtendedWhileMembersArrive) {
  // As Kafka's coordinator: any rebalance that starts from Empty is an initial one, also for a
  // group that had generations before (its members all left, or it was loaded empty).
  GroupHarness h;
  auto s = make_stable(h);
  h.leave(kGroup, s.follower);
  h.leave(kGroup, s.leader);
  ASSERT_EQ(h.state(kGroup), GroupState::kEmpty);
  const std::int32_t emptied_at = h.coordinator.group(kGroup)->generation_id();
  JoinOptions a;
  a.client_id = "c1";
  JoinOptions b;
  b.client_id = "c2";
  auto [id1, h1] = h.join_with_required_id(kGroup, a);
  h.advance(1000);
  auto [id2, h2] = h.join_with_required_id(kGroup, b);
  h.advance(2000);  // the first delay is over; the second member's arrival extends it
  EXPECT_FALSE(h.take_join(h1));
  EXPECT_EQ(h.state(kGroup), GroupState::kPreparingRebalance);
  h.advance(3000);
  auto r1 = h.take_join(h1);
  auto r2 = h.take_join(h2);
  ASSERT_TRUE(r1 && r2);
  EXPECT_EQ(r1->response.generation_id, emptied_at + 1);
  EXPECT_EQ(r2->response.generation_id, emptied_at + 1);
}

TEST(ClassicGroupJoin, WithoutDelayTheInitialJoinWaitsForItsTimerAndTakesWhoJoinedBeforeIt) {
  // group.initial.rebalance.delay.ms=0: the join completes from a 0 ms timer, not in the
  // JoinGroup itself; a member added before that timer fires gets one more 0 ms round, and the
  // first generation takes everyone added by the time a round finds no newcomer.
  GroupConfig config = GroupHarness::default_config();
  config.initial_rebalance_delay_ms = 0;
  GroupHarness h(config);
  JoinOptions a;
  a.client_id = "c1";
  JoinOptions b;
  b.client_id = "c2";
  auto [id1, h1] = h.join_with_required_id(kGroup, a);
  EXPECT_FALSE(h.take_join(h1));
  EXPECT_EQ(h.coordinator.next_deadline_ms(), h.now());
  auto [id2, h2] = h.join_with_required_id(kGroup, b);
  h.advance(0);  // the second member was added since the timer was set: one more round
  EXPECT_FALSE(h.take_join(h1));
  EXPECT_EQ(h.coordinator.next_deadline_ms(), h.now());
  h.advance(0);
  auto r1 = h.take_join(h1);
  auto r2 = h.take_join(h2);
  ASSERT_TRUE(r1 && r2);
  EXPECT_EQ(r1->response.generation_id, 1);
  EXPECT_EQ(r2->response.generation_id, 1);
  EXPECT_EQ(r1->response.members.size(), 2u);
}

TEST(ClassicGroupJoin, SessionTimeoutOutsideTheBrokerBoundsIsRejected) {
  GroupHarness h;
  JoinOptions o;
  o.session_timeout_ms = 5999;
  EXPECT_EQ(h.join(kGroup, o)->response.error_code, code(Error::kInvalidSessionTimeout));
  o.session_timeout_ms = 1'800'001;
  EXPECT_EQ(h.join(kGroup, o)->response.error_code, code(Error::kInvalidSessionTimeout));
  EXPECT_EQ(h.coordinator.group(kGroup), nullptr);
}

TEST(ClassicGroupJoin, MemberWithNoCommonProtocolIsInconsistent) {
  GroupHarness h;
  make_stable(h);
  JoinOptions o;
  o.protocol = "roundrobin";
  EXPECT_EQ(h.join(kGroup, o)->response.error_code, code(Error::kInconsistentGroupProtocol));
}

TEST(ClassicGroupJoin, UnknownMemberIdIsRejected) {
  GroupHarness h;
  JoinOptions o;
  o.member_id = "nobody";
  EXPECT_EQ(h.join(kGroup, o)->response.error_code, code(Error::kUnknownMemberId));
  make_stable(h);
  EXPECT_EQ(h.join(kGroup, o)->response.error_code, code(Error::kUnknownMemberId));
}

TEST(ClassicGroupJoin, FullGroupRefusesANewMember) {
  GroupConfig config = GroupHarness::default_config();
  config.max_size = 2;
  GroupHarness h(config);
  make_stable(h);
  JoinOptions o;
  auto r = h.join(kGroup, o);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->response.error_code, code(Error::kGroupMaxSizeReached));
  EXPECT_EQ(h.coordinator.group(kGroup)->size(), 2u);
}

TEST(ClassicGroupHeartbeat, ErrorsFollowMembershipGenerationAndState) {
  GroupHarness h;
  auto s = make_stable(h);
  EXPECT_EQ(h.heartbeat(kGroup, s.follower, s.generation), 0);
  EXPECT_EQ(h.heartbeat(kGroup, s.follower, s.generation + 1), code(Error::kIllegalGeneration));
  EXPECT_EQ(h.heartbeat(kGroup, "stranger", s.generation), code(Error::kUnknownMemberId));
  EXPECT_EQ(h.heartbeat("no-such-group", s.follower, s.generation), code(Error::kUnknownMemberId));
}

TEST(ClassicGroupRebalance, MemberLeavingTriggersARebalance) {
  GroupHarness h;
  auto s = make_stable(h);
  EXPECT_EQ(h.leave(kGroup, s.follower), 0);
  EXPECT_EQ(h.state(kGroup), GroupState::kPreparingRebalance);
  EXPECT_EQ(h.heartbeat(kGroup, s.leader, s.generation), code(Error::kRebalanceInProgress));
  JoinOptions o;
  o.member_id = s.leader;
  auto r = h.join(kGroup, o);  // the only member left rejoined: the join completes at once
  ASSERT_TRUE(r);
  EXPECT_EQ(r->response.error_code, 0);
  EXPECT_EQ(r->response.generation_id, s.generation + 1);
  EXPECT_EQ(r->response.members.size(), 1u);
  EXPECT_EQ(h.leave(kGroup, s.follower), code(Error::kUnknownMemberId));
}

TEST(ClassicGroupLeave, LeavingAnUnknownGroupAnswersPerMember) {
  GroupHarness h;
  EXPECT_EQ(h.leave("no-such-group", "m1"), code(Error::kUnknownMemberId));
  p::LeaveGroupRequest old_req;
  old_req.group_id = "no-such-group";
  old_req.member_id = "m1";
  auto r = h.coordinator.leave_group(old_req, 2, h.now());
  EXPECT_EQ(r.response.error_code, code(Error::kUnknownMemberId));
  EXPECT_TRUE(r.response.members.empty());
  old_req.group_id = "";
  EXPECT_EQ(h.coordinator.leave_group(old_req, 2, h.now()).response.error_code, code(Error::kInvalidGroupId));
}

TEST(ClassicGroupLeave, PendingMemberCanLeaveBeforeItJoins) {
  GroupHarness h;
  auto first = h.join(kGroup, JoinOptions{});
  ASSERT_EQ(first->response.error_code, code(Error::kMemberIdRequired));
  EXPECT_EQ(h.leave(kGroup, first->response.member_id), 0);
  EXPECT_TRUE(h.coordinator.group(kGroup)->pending_members().empty());
}

TEST(ClassicGroupJoin, PendingMemberIdExpiresAfterTheSessionTimeout) {
  GroupHarness h;
  auto first = h.join(kGroup, JoinOptions{});
  ASSERT_EQ(h.coordinator.group(kGroup)->pending_members().size(), 1u);
  EXPECT_EQ(h.coordinator.next_deadline_ms(), 10'000);
  h.advance(10'000);
  EXPECT_TRUE(h.coordinator.group(kGroup)->pending_members().empty());
  JoinOptions again;
  again.member_id = first->response.member_id;
  EXPECT_EQ(h.join(kGroup, again)->response.error_code, code(Error::kUnknownMemberId));
}

TEST(ClassicGroupRebalance, LastMemberLeavingEmptiesTheGroup) {
  GroupHarness h;
  auto s = make_stable(h);
  h.leave(kGroup, s.follower);
  h.leave(kGroup, s.leader);
  EXPECT_EQ(h.state(kGroup), GroupState::kEmpty);
  EXPECT_EQ(h.coordinator.group(kGroup)->generation_id(), s.generation + 1);
}

TEST(ClassicGroupRebalance, SessionExpiryEvictsTheSilentMember) {
  GroupHarness h;
  auto s = make_stable(h);
  h.advance(6000);
  EXPECT_EQ(h.heartbeat(kGroup, s.leader, s.generation), 0);
  h.advance(3999);
  EXPECT_EQ(h.state(kGroup), GroupState::kStable);
  h.advance(1);  // 10 s since the follower was last heard from
  EXPECT_EQ(h.state(kGroup), GroupState::kPreparingRebalance);
  EXPECT_FALSE(h.coordinator.group(kGroup)->has_member(s.follower));
  EXPECT_EQ(h.heartbeat(kGroup, s.follower, s.generation), code(Error::kUnknownMemberId));
}

TEST(ClassicGroupRebalance, MemberThatDoesNotRejoinIsRemovedAtTheRebalanceTimeout) {
  GroupHarness h;
  auto s = make_stable(h);
  JoinOptions o;
  o.member_id = s.leader;
  o.metadata = "changed";
  RequestHandle handle = 0;
  EXPECT_FALSE(h.join(kGroup, o, &handle));
  // The follower keeps heartbeating (and hears REBALANCE_IN_PROGRESS) but never rejoins.
  for (int i = 0; i < 9; ++i) {
    h.advance(3000);
    EXPECT_EQ(h.heartbeat(kGroup, s.follower, s.generation), code(Error::kRebalanceInProgress));
  }
  h.advance(2999);
  EXPECT_FALSE(h.take_join(handle));
  h.advance(1);  // the 30 s rebalance timeout is over
  auto r = h.take_join(handle);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->response.members.size(), 1u);
  EXPECT_FALSE(h.coordinator.group(kGroup)->has_member(s.follower));
}

TEST(ClassicGroupRebalance, FollowerRejoiningUnchangedGetsTheCurrentGenerationBack) {
  GroupHarness h;
  auto s = make_stable(h);
  JoinOptions o;
  o.member_id = s.follower;
  auto r = h.join(kGroup, o);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->response.generation_id, s.generation);
  EXPECT_EQ(r->response.leader, s.leader);
  EXPECT_EQ(h.state(kGroup), GroupState::kStable);
}

// Cooperative rebalancing (cooperative-sticky) is client-driven: after revoking, members rejoin
// with new "owned partitions" in their metadata, which the broker sees as changed metadata.
TEST(ClassicGroupRebalance, RejoinWithChangedMetadataStartsAnotherRoundKeepingAssignments) {
  GroupHarness h;
  auto s = make_stable(h);
  JoinOptions o;
  o.member_id = s.follower;
  o.metadata = "owned: nothing";
  RequestHandle follower_join = 0;
  EXPECT_FALSE(h.join(kGroup, o, &follower_join));
  EXPECT_EQ(h.state(kGroup), GroupState::kPreparingRebalance);
  // Until the next generation is formed, members keep what they were given.
  EXPECT_EQ(text(h.coordinator.group(kGroup)->members().at(s.leader).assignment), "parts-L");
  JoinOptions leader;
  leader.member_id = s.leader;
  leader.metadata = "owned: parts-L";
  auto r = h.join(kGroup, leader);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->response.generation_id, s.generation + 1);
  auto f = h.take_join(follower_join);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->response.generation_id, s.generation + 1);
  for (const auto& m : r->response.members) {
    EXPECT_EQ(text(m.metadata), m.member_id == s.leader ? "owned: parts-L" : "owned: nothing");
  }
}

TEST(ClassicGroupStatic, RestartedStaticMemberGetsItsAssignmentBackWithoutARebalance) {
  GroupHarness h;
  JoinOptions a;
  a.instance_id = "instance-a";
  JoinOptions b;
  b.instance_id = "instance-b";
  // Static members are admitted on their first join (no member-id round trip).
  RequestHandle ha = 0;
  RequestHandle hb = 0;
  h.join(kGroup, a, &ha);
  h.join(kGroup, b, &hb);
  h.advance(3000);
  h.advance(3000);
  auto ra = h.take_join(ha);
  auto rb = h.take_join(hb);
  ASSERT_TRUE(ra && rb);
  EXPECT_TRUE(ra->response.member_id.starts_with("instance-a-"));
  const std::string leader = ra->response.leader;
  const std::string follower = leader == ra->response.member_id ? rb->response.member_id : ra->response.member_id;
  const std::string follower_instance = leader == ra->response.member_id ? "instance-b" : "instance-a";
  h.sync(kGroup, follower, 1, {}, follower_instance);
  h.sync(kGroup, leader, 1, {{leader, "L"}, {follower, "F"}});
  ASSERT_EQ(h.state(kGroup), GroupState::kStable);

  // The follower restarts: same instance id, no member id, same subscription.
  JoinOptions again = follower_instance == "instance-a" ? a : b;
  auto r = h.join(kGroup, again);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->response.error_code, 0);
  EXPECT_EQ(r->response.generation_id, 1);
  EXPECT_NE(r->response.member_id, follower);
  EXPECT_EQ(h.state(kGroup), GroupState::kStable);
  const std::string new_id = r->response.member_id;
  auto sync = h.sync(kGroup, new_id, 1, {}, follower_instance);
  ASSERT_TRUE(sync);
  EXPECT_EQ(text(sync->response.assignment), "F");
  EXPECT_EQ(h.heartbeat(kGroup, leader, 1), 0);  // the leader sees no rebalance
  EXPECT_EQ(h.heartbeat(kGroup, follower, 1, follower_instance), code(Error::kFencedInstanceId));
}

// Kafka rebalances on a static rejoin only if the group's selected protocol would change; new
// subscription bytes alone do not (the leader notices new topics through metadata).
TEST(ClassicGroupStatic, StaticRejoinWithNewMetadataForTheSameProtocolDoesNotRebalance) {
  GroupHarness h;
  JoinOptions a;
  a.instance_id = "instance-a";
  RequestHandle ha = 0;
  h.join(kGroup, a, &ha);
  h.advance(3000);
  auto ra = h.take_join(ha);
  ASSERT_TRUE(ra);
  h.sync(kGroup, ra->response.member_id, 1, {{ra->response.member_id, "A"}}, a.instance_id);
  ASSERT_EQ(h.state(kGroup), GroupState::kStable);

  a.metadata = "new-topics";
  a.version = 8;  // before KIP-814 the restarted leader is told the old leader id
  auto r = h.join(kGroup, a);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->response.error_code, 0);
  EXPECT_EQ(r->response.leader, ra->response.member_id);
  EXPECT_TRUE(r->response.members.empty());
  EXPECT_EQ(h.state(kGroup), GroupState::kStable);

  a.version = 9;  // from v9 it is told it leads, and to skip the assignment
  auto r9 = h.join(kGroup, a);
  ASSERT_TRUE(r9);
  EXPECT_EQ(r9->response.leader, r9->response.member_id);
  EXPECT_TRUE(r9->response.skip_assignment);
  EXPECT_EQ(r9->response.members.size(), 1u);
  EXPECT_EQ(h.state(kGroup), GroupState::kStable);
}

TEST(ClassicGroupStatic, AbsentStaticMemberKeepsItsPlaceThroughARebalance) {
  GroupHarness h;
  JoinOptions a;
  a.instance_id = "instance-a";
  JoinOptions b;
  b.instance_id = "instance-b";
  b.session_timeout_ms = 60'000;  // outlives the rebalance below
  RequestHandle ha = 0;
  RequestHandle hb = 0;
  h.join(kGroup, a, &ha);
  h.join(kGroup, b, &hb);
  h.advance(3000);
  h.advance(3000);
  auto ra = h.take_join(ha);
  auto rb = h.take_join(hb);
  ASSERT_TRUE(ra && rb);
  const std::string id_a = ra->response.member_id;
  const std::string id_b = rb->response.member_id;
  h.sync(kGroup, id_a, 1, {{id_a, "A"}, {id_b, "B"}}, a.instance_id);
  h.sync(kGroup, id_b, 1, {}, b.instance_id);
  ASSERT_EQ(h.state(kGroup), GroupState::kStable);

  // a rejoins with a new protocol list that changes nothing but forces a rebalance as leader.
  JoinOptions again = a;
  again.member_id = id_a;
  RequestHandle h2 = 0;
  h.join(kGroup, again, &h2);
  ASSERT_EQ(h.state(kGroup), GroupState::kPreparingRebalance);
  h.advance(5000);
  EXPECT_EQ(h.heartbeat(kGroup, id_b, 1, b.instance_id), code(Error::kRebalanceInProgress));
  h.advance(25'000);  // rebalance timeout: b did not rejoin, but it is static and stays
  auto r = h.take_join(h2);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->response.generation_id, 2);
  EXPECT_EQ(r->response.members.size(), 2u);
  EXPECT_TRUE(h.coordinator.group(kGroup)->has_member(id_b));
}

TEST(ClassicGroupDescribe, DescribeAndListShowMembersAndState) {
  GroupHarness h;
  auto s = make_stable(h);
  p::DescribeGroupsRequest dreq;
  dreq.groups = {kGroup, "missing"};
  auto d = h.coordinator.describe_groups(dreq, 5);
  ASSERT_EQ(d.groups.size(), 2u);
  EXPECT_EQ(d.groups[0].group_state, "Stable");
  EXPECT_EQ(d.groups[0].protocol_type, "consumer");
  EXPECT_EQ(d.groups[0].protocol_data, "range");
  ASSERT_EQ(d.groups[0].members.size(), 2u);
  EXPECT_EQ(d.groups[0].members[0].client_host, "/10.0.0.1");
  EXPECT_EQ(d.groups[1].group_state, "Dead");
  EXPECT_EQ(d.groups[1].error_code, 0);
  EXPECT_EQ(h.coordinator.describe_groups(dreq, 6).groups[1].error_code, code(Error::kGroupIdNotFound));

  p::ListGroupsRequest lreq;
  auto l = h.coordinator.list_groups(lreq, 5);
  ASSERT_EQ(l.groups.size(), 1u);
  EXPECT_EQ(l.groups[0].group_state, "Stable");
  EXPECT_EQ(l.groups[0].group_type, "classic");
  lreq.types_filter = {"consumer"};
  EXPECT_TRUE(h.coordinator.list_groups(lreq, 5).groups.empty());
  lreq.types_filter = {"Classic"};
  lreq.states_filter = {"empty"};
  EXPECT_TRUE(h.coordinator.list_groups(lreq, 5).groups.empty());
  lreq.states_filter = {"STABLE"};
  EXPECT_EQ(h.coordinator.list_groups(lreq, 5).groups.size(), 1u);
}

}  // namespace
}  // namespace weir::group::testing
