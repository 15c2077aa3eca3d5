#include "client/group_member.h"

#include <gtest/gtest.h>

namespace weir::client {
namespace {

constexpr std::int16_t kNotCoordinator = 16;
constexpr std::int16_t kIllegalGeneration = 22;
constexpr std::int16_t kUnknownMemberId = 25;
constexpr std::int16_t kRebalanceInProgress = 27;
constexpr std::int16_t kGroupAuthorizationFailed = 30;
constexpr std::int16_t kMemberIdRequired = 79;
constexpr std::int16_t kFencedInstanceId = 82;

GroupMemberConfig config() {
  GroupMemberConfig c;
  c.group_id = "g";
  c.topics = {"t"};
  return c;
}

protocol::JoinGroupResponse joined(const std::string& member, std::int32_t generation, const std::string& protocol,
                                   const std::string& leader) {
  protocol::JoinGroupResponse r;
  r.generation_id = generation;
  r.member_id = member;
  r.protocol_type = "consumer";
  r.protocol_name = protocol;
  r.leader = leader;
  return r;
}

protocol::SyncGroupResponse synced(std::vector<TopicPartition> partitions) {
  protocol::SyncGroupResponse r;
  r.assignment = encode_assignment(ConsumerAssignment{std::move(partitions), std::nullopt});
  return r;
}

// Joins and syncs `m` as a follower with `partitions` at `generation`.
AssignmentChange join_and_sync(GroupMember& m, std::int32_t generation, const std::string& protocol,
                               std::vector<TopicPartition> partitions) {
  (void)m.prepare_join();
  (void)m.join_request(std::nullopt);
  EXPECT_EQ(m.on_join_response(joined("m-1", generation, protocol, "m-0")), Next::kSync);
  AssignmentChange change;
  EXPECT_EQ(m.on_sync_response(synced(std::move(partitions)), change), Next::kStable);
  return change;
}

ConsumerSubscription subscription_in(const protocol::JoinGroupRequest& r, std::string_view assignor) {
  for (const auto& p : r.protocols) {
    if (p.name == assignor) return *decode_subscription(p.metadata);
  }
  ADD_FAILURE() << "no protocol " << assignor;
  return {};
}

TEST(GroupMemberTest, TheFirstJoinOffersCooperativeStickyThenRangeWithKafkasTimeouts) {
  GroupMember m(config());
  EXPECT_EQ(m.state(), MemberState::kUnjoined);
  EXPECT_TRUE(m.rejoin_needed());
  const auto prep = m.prepare_join();
  EXPECT_TRUE(prep.revoked.empty() && prep.lost.empty());
  const auto r = m.join_request("first join");
  EXPECT_EQ(m.state(), MemberState::kJoining);
  EXPECT_EQ(r.group_id, "g");
  EXPECT_EQ(r.member_id, "");
  EXPECT_EQ(r.protocol_type, "consumer");
  EXPECT_EQ(r.session_timeout_ms, 45'000);
  EXPECT_EQ(r.rebalance_timeout_ms, 300'000);
  EXPECT_EQ(r.reason, "first join");
  ASSERT_EQ(r.protocols.size(), 2u);
  EXPECT_EQ(r.protocols[0].name, "cooperative-sticky");
  EXPECT_EQ(r.protocols[1].name, "range");
  const auto sticky = subscription_in(r, "cooperative-sticky");
  EXPECT_EQ(sticky.version, 3);
  EXPECT_EQ(sticky.topics, std::vector<std::string>{"t"});
  EXPECT_EQ(sticky.generation_id, -1);
  EXPECT_EQ(decode_generation_user_data(*sticky.user_data), -1);
  EXPECT_EQ(subscription_in(r, "range").user_data, std::nullopt);
}

TEST(GroupMemberTest, MemberIdRequiredRejoinsWithTheIdGiven) {
  GroupMember m(config());
  (void)m.join_request(std::nullopt);
  protocol::JoinGroupResponse r;
  r.error_code = kMemberIdRequired;
  r.member_id = "weir-123";
  EXPECT_EQ(m.on_join_response(r), Next::kRejoin);
  EXPECT_EQ(m.member_id(), "weir-123");
  EXPECT_EQ(m.generation(), -1);
  EXPECT_EQ(m.join_request(std::nullopt).member_id, "weir-123");
  // A pending member leaves the group too.
  EXPECT_TRUE(m.leave_request("bye"));
}

TEST(GroupMemberTest, TheLeaderRunsTheChosenAssignorOverEveryMembersSubscription) {
  GroupMember m(config());
  (void)m.join_request(std::nullopt);
  auto r = joined("m-0", 1, "cooperative-sticky", "m-0");
  for (const std::string id : {"m-0", "m-1"}) {
    auto& member = r.members.emplace_back();
    member.member_id = id;
    ConsumerSubscription s;
    s.topics = {"t"};
    member.metadata = encode_subscription(s);
  }
  EXPECT_EQ(m.on_join_response(r), Next::kSync);
  EXPECT_TRUE(m.is_leader());
  EXPECT_EQ(m.state(), MemberState::kSyncing);
  EXPECT_EQ(m.subscribed_topics(), std::vector<std::string>{"t"});
  const auto assignments = m.leader_assignments({{"t", 4}});
  ASSERT_EQ(assignments.size(), 2u);
  std::size_t total = 0;
  for (const auto& a : assignments) {
    auto decoded = decode_assignment(a.assignment);
    ASSERT_TRUE(decoded);
    EXPECT_EQ(decoded->partitions.size(), 2u);
    total += decoded->partitions.size();
  }
  EXPECT_EQ(total, 4u);
  const auto sync = m.sync_request(assignments);
  EXPECT_EQ(sync.generation_id, 1);
  EXPECT_EQ(sync.member_id, "m-0");
  EXPECT_EQ(sync.protocol_name, "cooperative-sticky");
}

TEST(GroupMemberTest, SyncMakesTheMemberStableWithItsPartitions) {
  GroupMember m(config());
  const auto change = join_and_sync(m, 5, "cooperative-sticky", {{"t", 1}, {"t", 0}});
  EXPECT_EQ(m.state(), MemberState::kStable);
  EXPECT_FALSE(m.rejoin_needed());
  EXPECT_EQ(change.added, (std::vector<TopicPartition>{{"t", 0}, {"t", 1}}));
  EXPECT_TRUE(change.revoked.empty());
  EXPECT_TRUE(m.can_commit());
  const auto hb = m.heartbeat_request();
  EXPECT_EQ(hb.generation_id, 5);
  EXPECT_EQ(hb.member_id, "m-1");
}

TEST(GroupMemberTest, CooperativeRebalanceKeepsOwnedPartitionsAndRevokesWhatTheNewAssignmentLacks) {
  GroupMember m(config());
  (void)join_and_sync(m, 5, "cooperative-sticky", {{"t", 0}, {"t", 1}, {"t", 2}, {"t", 3}});
  EXPECT_EQ(m.on_heartbeat_response(kRebalanceInProgress), Next::kRejoin);
  EXPECT_TRUE(m.rejoin_needed());
  const auto prep = m.prepare_join();
  EXPECT_TRUE(prep.revoked.empty() && prep.lost.empty());  // cooperative: nothing given up yet
  const auto r = m.join_request(std::nullopt);
  const auto s = subscription_in(r, "cooperative-sticky");
  EXPECT_EQ(s.owned_partitions.size(), 4u);
  EXPECT_EQ(s.generation_id, 5);
  EXPECT_EQ(decode_generation_user_data(*s.user_data), 5);
  EXPECT_EQ(m.on_join_response(joined("m-1", 6, "cooperative-sticky", "m-0")), Next::kSync);
  AssignmentChange change;
  EXPECT_EQ(m.on_sync_response(synced({{"t", 0}, {"t", 1}}), change), Next::kStable);
  EXPECT_EQ(change.revoked, (std::vector<TopicPartition>{{"t", 2}, {"t", 3}}));
  EXPECT_TRUE(change.added.empty());
  EXPECT_TRUE(m.rejoin_needed());  // the follow-up rebalance hands the revoked partitions on
  EXPECT_TRUE(m.can_commit());
}

TEST(GroupMemberTest, EagerRebalanceRevokesEverythingBeforeJoining) {
  GroupMember m(config());
  (void)join_and_sync(m, 2, "range", {{"t", 0}, {"t", 1}});
  EXPECT_EQ(m.rebalance_protocol(), RebalanceProtocol::kEager);
  EXPECT_EQ(m.on_heartbeat_response(kRebalanceInProgress), Next::kRejoin);
  const auto prep = m.prepare_join();
  EXPECT_EQ(prep.revoked, (std::vector<TopicPartition>{{"t", 0}, {"t", 1}}));
  EXPECT_TRUE(m.owned().empty());
  EXPECT_TRUE(subscription_in(m.join_request(std::nullopt), "range").owned_partitions.empty());
}

TEST(GroupMemberTest, IllegalGenerationKeepsTheMemberIdAndLosesThePartitions) {
  GroupMember m(config());
  (void)join_and_sync(m, 3, "cooperative-sticky", {{"t", 0}});
  EXPECT_EQ(m.on_heartbeat_response(kIllegalGeneration), Next::kRejoin);
  EXPECT_EQ(m.member_id(), "m-1");
  EXPECT_EQ(m.generation(), -1);
  EXPECT_EQ(m.state(), MemberState::kUnjoined);
  EXPECT_FALSE(m.can_commit());
  const auto prep = m.prepare_join();
  EXPECT_EQ(prep.lost, (std::vector<TopicPartition>{{"t", 0}}));
  EXPECT_TRUE(prep.revoked.empty());
}

TEST(GroupMemberTest, UnknownMemberIdOrFencedInstanceStartOverAsANewMember) {
  for (const std::int16_t code : {kUnknownMemberId, kFencedInstanceId}) {
    GroupMember m(config());
    (void)join_and_sync(m, 3, "cooperative-sticky", {{"t", 0}});
    EXPECT_EQ(m.on_heartbeat_response(code), Next::kRejoin);
    EXPECT_EQ(m.member_id(), "");
    EXPECT_EQ(m.prepare_join().lost.size(), 1u);
  }
}

TEST(GroupMemberTest, JoinGroupErrorsAsKafkasConsumerTreatsThem) {
  GroupMember m(config());
  (void)m.join_request(std::nullopt);
  protocol::JoinGroupResponse r;
  r.error_code = kRebalanceInProgress;
  EXPECT_EQ(m.on_join_response(r), Next::kRejoin);
  r.error_code = kNotCoordinator;
  EXPECT_EQ(m.on_join_response(r), Next::kFindCoordinator);
  r.error_code = 14;  // COORDINATOR_LOAD_IN_PROGRESS
  EXPECT_EQ(m.on_join_response(r), Next::kRetry);
  r.error_code = kFencedInstanceId;
  EXPECT_EQ(m.on_join_response(r), Next::kFatal);
  EXPECT_EQ(m.error().code, kFencedInstanceId);
  r.error_code = kGroupAuthorizationFailed;
  EXPECT_EQ(m.on_join_response(r), Next::kFatal);
  // An assignor the member did not offer, or another protocol type.
  (void)m.join_request(std::nullopt);
  EXPECT_EQ(m.on_join_response(joined("m-1", 1, "roundrobin", "m-0")), Next::kFatal);
  auto other = joined("m-1", 1, "range", "m-0");
  other.protocol_type = "connect";
  EXPECT_EQ(m.on_join_response(other), Next::kFatal);
}

TEST(GroupMemberTest, SyncGroupErrors) {
  GroupMember m(config());
  (void)m.join_request(std::nullopt);
  ASSERT_EQ(m.on_join_response(joined("m-1", 4, "range", "m-0")), Next::kSync);
  protocol::SyncGroupResponse r;
  AssignmentChange change;
  r.error_code = kRebalanceInProgress;
  EXPECT_EQ(m.on_sync_response(r, change), Next::kRejoin);
  EXPECT_EQ(m.generation(), 4);
  r.error_code = kIllegalGeneration;
  EXPECT_EQ(m.on_sync_response(r, change), Next::kRejoin);
  EXPECT_EQ(m.generation(), -1);
  EXPECT_EQ(m.member_id(), "m-1");
}

TEST(GroupMemberTest, AnAssignmentOfTopicsNotSubscribedAsksForARejoin) {
  GroupMember m(config());
  (void)m.join_request(std::nullopt);
  ASSERT_EQ(m.on_join_response(joined("m-1", 4, "range", "m-0")), Next::kSync);
  AssignmentChange change;
  EXPECT_EQ(m.on_sync_response(synced({{"other", 0}}), change), Next::kRejoin);
  EXPECT_TRUE(m.owned().empty());
  // No assignment bytes at all: nothing assigned.
  (void)m.join_request(std::nullopt);
  ASSERT_EQ(m.on_join_response(joined("m-1", 5, "range", "m-0")), Next::kSync);
  EXPECT_EQ(m.on_sync_response(protocol::SyncGroupResponse{}, change), Next::kStable);
  EXPECT_TRUE(change.assigned.empty());
}

TEST(GroupMemberTest, CommitsCarryTheMemberAndGenerationAndTheirErrorsRejoin) {
  GroupMember m(config());
  (void)join_and_sync(m, 7, "cooperative-sticky", {{"t", 0}, {"t", 1}});
  const auto req = m.commit_request({{{"t", 0}, 10}, {{"t", 1}, 4}});
  EXPECT_EQ(req.generation_id_or_member_epoch, 7);
  EXPECT_EQ(req.member_id, "m-1");
  ASSERT_EQ(req.topics.size(), 1u);
  ASSERT_EQ(req.topics[0].partitions.size(), 2u);
  EXPECT_EQ(req.topics[0].partitions[0].committed_offset, 10);
  EXPECT_EQ(req.topics[0].partitions[1].partition_index, 1);

  protocol::OffsetCommitResponse ok;
  auto& t = ok.topics.emplace_back();
  t.name = "t";
  t.partitions.emplace_back().partition_index = 0;
  EXPECT_EQ(m.on_commit_response(ok), Next::kContinue);
  auto failed = ok;
  failed.topics[0].partitions[0].error_code = kRebalanceInProgress;
  EXPECT_EQ(m.on_commit_response(failed), Next::kRejoin);
  EXPECT_EQ(m.generation(), 7);  // kept: the rebalance decides
  failed.topics[0].partitions[0].error_code = kUnknownMemberId;
  EXPECT_EQ(m.on_commit_response(failed), Next::kRejoin);
  EXPECT_EQ(m.member_id(), "");
  failed.topics[0].partitions[0].error_code = kGroupAuthorizationFailed;
  EXPECT_EQ(m.on_commit_response(failed), Next::kFatal);
}

TEST(GroupMemberTest, LeaveGroupOnlyWhenInTheGroupAndForgetsTheMember) {
  GroupMember fresh(config());
  EXPECT_FALSE(fresh.leave_request("bye"));
  GroupMember m(config());
  (void)join_and_sync(m, 2, "cooperative-sticky", {{"t", 0}});
  const auto leave = m.leave_request("the consumer is being closed");
  ASSERT_TRUE(leave);
  EXPECT_EQ(leave->group_id, "g");
  EXPECT_EQ(leave->member_id, "m-1");
  ASSERT_EQ(leave->members.size(), 1u);
  EXPECT_EQ(leave->members[0].member_id, "m-1");
  EXPECT_EQ(leave->members[0].reason, "the consumer is being closed");
  EXPECT_EQ(m.member_id(), "");
  EXPECT_EQ(m.state(), MemberState::kUnjoined);
  EXPECT_FALSE(m.leave_request("again"));
}

}  // namespace
}  // namespace weir::client
