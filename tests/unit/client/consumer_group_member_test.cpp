#include "client/consumer_group_member.h"

#include <gtest/gtest.h>

namespace weir::client {
namespace {

const Uuid kTopicId{0x1234, 0x5678};

GroupMemberConfig config() {
  GroupMemberConfig c;
  c.group_id = "g";
  c.topics = {"t", "a"};
  c.consumer_protocol = true;
  return c;
}

protocol::ConsumerGroupHeartbeatResponse answer(std::int32_t epoch, std::optional<std::vector<std::int32_t>> assigned,
                                                std::int16_t code = codes::kNone) {
  protocol::ConsumerGroupHeartbeatResponse r;
  r.error_code = code;
  r.member_epoch = epoch;
  r.heartbeat_interval_ms = 5'000;
  if (assigned) {
    auto& tp = r.assignment.emplace().topic_partitions.emplace_back();
    tp.topic_id = kTopicId;
    tp.partitions = *assigned;
  }
  return r;
}

// Joins with `partitions` of t at epoch 1 and reconciles them.
ConsumerGroupMember joined(std::vector<std::int32_t> partitions) {
  ConsumerGroupMember m(config(), "member-1");
  (void)m.heartbeat_request({});
  std::vector<TopicPartition> lost;
  EXPECT_EQ(m.on_heartbeat_response(answer(1, partitions), lost), Next::kContinue);
  std::set<TopicPartition> owned;
  for (const auto p : partitions) owned.emplace("t", p);
  m.reconciled(owned);
  return m;
}

TEST(ConsumerGroupMember, JoinsWithEpochZeroTheWholeSubscriptionAndItsOwnMemberId) {
  ConsumerGroupMember m(config(), "member-1");
  EXPECT_TRUE(m.heartbeat_now());
  const auto r = m.heartbeat_request({});
  EXPECT_EQ(m.state(), ConsumerMemberState::kJoining);
  EXPECT_EQ(r.group_id, "g");
  EXPECT_EQ(r.member_id, "member-1");
  EXPECT_EQ(r.member_epoch, 0);
  EXPECT_EQ(r.rebalance_timeout_ms, 300'000);
  EXPECT_EQ(r.subscribed_topic_names, (std::vector<std::string>{"a", "t"}));
  ASSERT_TRUE(r.topic_partitions.has_value());
  EXPECT_TRUE(r.topic_partitions->empty());
  EXPECT_FALSE(r.server_assignor.has_value());
}

TEST(ConsumerGroupMember, TakesTheEpochIntervalAndTargetThenAcknowledgesWhatItOwns) {
  ConsumerGroupMember m(config(), "member-1");
  (void)m.heartbeat_request({});
  std::vector<TopicPartition> lost;
  EXPECT_EQ(m.on_heartbeat_response(answer(3, std::vector<std::int32_t>{0, 2}), lost), Next::kContinue);
  EXPECT_EQ(m.state(), ConsumerMemberState::kReconciling);
  EXPECT_EQ(m.epoch(), 3);
  EXPECT_EQ(m.heartbeat_interval_ms(), 5'000);
  ASSERT_TRUE(m.target().has_value());
  EXPECT_EQ(m.target()->at(kTopicId), (std::set<std::int32_t>{0, 2}));
  EXPECT_TRUE(m.can_commit());

  m.reconciled({{"t", 0}, {"t", 2}});
  EXPECT_EQ(m.state(), ConsumerMemberState::kStable);
  EXPECT_FALSE(m.target().has_value());
  EXPECT_TRUE(m.heartbeat_now());  // the acknowledgement goes at once
  const auto ack = m.heartbeat_request({{"t", kTopicId}});
  EXPECT_EQ(ack.member_epoch, 3);
  ASSERT_TRUE(ack.topic_partitions.has_value());
  ASSERT_EQ(ack.topic_partitions->size(), 1U);
  EXPECT_EQ(ack.topic_partitions->front().topic_id, kTopicId);
  EXPECT_EQ(ack.topic_partitions->front().partitions, (std::vector<std::int32_t>{0, 2}));
  EXPECT_FALSE(ack.subscribed_topic_names.has_value());  // only when joining
  EXPECT_EQ(ack.rebalance_timeout_ms, -1);
  EXPECT_FALSE(m.heartbeat_now());
  // Nothing changed since: the next heartbeat leaves the owned partitions out (null), else the
  // coordinator would answer the whole assignment again.
  EXPECT_EQ(m.on_heartbeat_response(answer(3, std::nullopt), lost), Next::kContinue);
  EXPECT_FALSE(m.heartbeat_request({{"t", kTopicId}}).topic_partitions.has_value());
  // The same assignment again at the same epoch: reconciled without an immediate heartbeat.
  EXPECT_EQ(m.on_heartbeat_response(answer(3, std::vector<std::int32_t>{0, 2}), lost), Next::kContinue);
  m.reconciled({{"t", 0}, {"t", 2}});
  EXPECT_FALSE(m.heartbeat_now());
  // A heartbeat without an answer: the next one lists the owned partitions again.
  (void)m.heartbeat_request({{"t", kTopicId}});
  m.heartbeat_failed();
  EXPECT_TRUE(m.heartbeat_request({{"t", kTopicId}}).topic_partitions.has_value());
}

TEST(ConsumerGroupMember, AnAnswerWithoutAssignmentKeepsWhatIsOwned) {
  auto m = joined({0, 1});
  (void)m.heartbeat_request({{"t", kTopicId}});
  std::vector<TopicPartition> lost;
  EXPECT_EQ(m.on_heartbeat_response(answer(4, std::nullopt), lost), Next::kContinue);
  EXPECT_EQ(m.state(), ConsumerMemberState::kStable);
  EXPECT_EQ(m.epoch(), 4);
  EXPECT_EQ(m.owned(), (std::set<TopicPartition>{{"t", 0}, {"t", 1}}));
}

TEST(ConsumerGroupMember, FencedOrUnknownLosesThePartitionsAndJoinsAgainWithEpochZero) {
  for (const std::int16_t code : {codes::kFencedMemberEpoch, codes::kUnknownMemberId}) {
    auto m = joined({0, 1});
    (void)m.heartbeat_request({{"t", kTopicId}});
    std::vector<TopicPartition> lost;
    EXPECT_EQ(m.on_heartbeat_response(answer(0, std::nullopt, code), lost), Next::kRejoin);
    EXPECT_EQ(lost, (std::vector<TopicPartition>{{"t", 0}, {"t", 1}}));
    EXPECT_TRUE(m.owned().empty());
    EXPECT_FALSE(m.can_commit());
    EXPECT_TRUE(m.heartbeat_now());
    const auto again = m.heartbeat_request({{"t", kTopicId}});
    EXPECT_EQ(again.member_epoch, 0);
    EXPECT_EQ(again.member_id, "member-1");  // the same member id
    EXPECT_TRUE(again.topic_partitions->empty());
  }
}

TEST(ConsumerGroupMember, CoordinatorErrorsRetryOthersAreFatal) {
  ConsumerGroupMember m(config(), "member-1");
  std::vector<TopicPartition> lost;
  (void)m.heartbeat_request({});
  EXPECT_EQ(m.on_heartbeat_response(answer(0, std::nullopt, codes::kNotCoordinator), lost), Next::kFindCoordinator);
  EXPECT_EQ(m.on_heartbeat_response(answer(0, std::nullopt, codes::kCoordinatorNotAvailable), lost),
            Next::kFindCoordinator);
  EXPECT_EQ(m.on_heartbeat_response(answer(0, std::nullopt, codes::kCoordinatorLoadInProgress), lost), Next::kRetry);
  EXPECT_EQ(m.state(), ConsumerMemberState::kJoining);
  for (const std::int16_t code : {codes::kGroupAuthorizationFailed, codes::kUnsupportedAssignor,
                                  codes::kGroupMaxSizeReached, codes::kInvalidRequest, codes::kUnsupportedVersion}) {
    auto r = answer(0, std::nullopt, code);
    r.error_message = "why";
    EXPECT_EQ(m.on_heartbeat_response(r, lost), Next::kFatal) << code;
    EXPECT_EQ(m.error().code, code);
    EXPECT_NE(m.error().message.find("why"), std::string::npos);
  }
}

TEST(ConsumerGroupMember, CommitsWithTheEpochAndLeavesWithMinusOne) {
  auto m = joined({1});
  const auto c = m.commit_request({{{"t", 1}, 42}});
  EXPECT_EQ(c.generation_id_or_member_epoch, 1);
  EXPECT_EQ(c.member_id, "member-1");
  ASSERT_EQ(c.topics.size(), 1U);
  EXPECT_EQ(c.topics[0].partitions[0].committed_offset, 42);

  protocol::OffsetCommitResponse stale;
  auto& p = stale.topics.emplace_back();
  p.name = "t";
  p.partitions.emplace_back().error_code = codes::kStaleMemberEpoch;
  EXPECT_EQ(m.on_commit_response(stale), Next::kRetry);
  EXPECT_EQ(m.error().code, codes::kStaleMemberEpoch);

  const auto leave = m.leave_request();
  ASSERT_TRUE(leave.has_value());
  EXPECT_EQ(leave->member_epoch, -1);
  EXPECT_EQ(leave->member_id, "member-1");
  EXPECT_EQ(m.state(), ConsumerMemberState::kUnjoined);
  EXPECT_TRUE(m.owned().empty());
  EXPECT_FALSE(m.leave_request().has_value());  // not in the group any more
  // A late answer to a heartbeat sent before leaving changes nothing.
  std::vector<TopicPartition> lost;
  EXPECT_EQ(m.on_heartbeat_response(answer(2, std::vector<std::int32_t>{0}), lost), Next::kContinue);
  EXPECT_EQ(m.state(), ConsumerMemberState::kUnjoined);
}

TEST(ConsumerGroupMember, StaticMemberSendsItsInstanceIdAlwaysAndLeavesWithMinusTwo) {
  GroupMemberConfig c = config();
  c.group_instance_id = "instance-1";
  c.rack_id = "rack-a";
  ConsumerGroupMember m(c, "member-1");
  const auto join = m.heartbeat_request({});
  EXPECT_EQ(join.instance_id, "instance-1");
  EXPECT_EQ(join.rack_id, "rack-a");
  std::vector<TopicPartition> lost;
  EXPECT_EQ(m.on_heartbeat_response(answer(1, std::vector<std::int32_t>{0}), lost), Next::kContinue);
  m.reconciled({{"t", 0}});
  const auto beat = m.heartbeat_request({{"t", kTopicId}});
  EXPECT_EQ(beat.instance_id, "instance-1");  // every heartbeat, as Kafka's client
  EXPECT_FALSE(beat.rack_id.has_value());     // only when joining
  EXPECT_FALSE(beat.subscribed_topic_names.has_value());
  const auto leave = m.leave_request();
  ASSERT_TRUE(leave.has_value());
  EXPECT_EQ(leave->member_epoch, -2);
  EXPECT_EQ(leave->instance_id, "instance-1");
}

TEST(ConsumerGroupMember, RegexSubscriptionGoesToTheCoordinatorWhenJoining) {
  GroupMemberConfig c = config();
  c.topic_regex = "orders-.*";
  ConsumerGroupMember m(c, "member-1");
  const auto join = m.heartbeat_request({});
  EXPECT_EQ(join.subscribed_topic_regex, "orders-.*");
  EXPECT_EQ(join.subscribed_topic_names, std::vector<std::string>{});
  EXPECT_FALSE(join.instance_id.has_value());
  EXPECT_FALSE(join.rack_id.has_value());
  std::vector<TopicPartition> lost;
  EXPECT_EQ(m.on_heartbeat_response(answer(1, std::nullopt), lost), Next::kContinue);
  EXPECT_FALSE(m.heartbeat_request({}).subscribed_topic_regex.has_value());
  EXPECT_EQ(m.leave_request()->member_epoch, -1);
}

}  // namespace
}  // namespace weir::client
