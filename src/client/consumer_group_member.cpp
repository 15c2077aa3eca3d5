#include "client/consumer_group_member.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace weir::client {

std::string_view to_string(ConsumerMemberState s) noexcept {
  switch (s) {
    case ConsumerMemberState::kUnjoined:
      return "unjoined";
    case ConsumerMemberState::kJoining:
      return "joining";
    case ConsumerMemberState::kStable:
      return "stable";
    case ConsumerMemberState::kReconciling:
      return "reconciling";
  }
  return "unknown";
}

ConsumerGroupMember::ConsumerGroupMember(GroupMemberConfig config, std::string member_id)
    : config_(std::move(config)), member_id_(std::move(member_id)) {}

Next ConsumerGroupMember::fatal(std::int16_t code, std::string message) {
  error_ = Error::kafka(code, std::move(message));
  return Next::kFatal;
}

std::vector<TopicPartition> ConsumerGroupMember::fence() {
  std::vector<TopicPartition> lost(owned_.begin(), owned_.end());
  owned_.clear();
  target_.reset();
  epoch_ = 0;
  state_ = ConsumerMemberState::kUnjoined;
  sent_owned_.reset();
  heartbeat_now_ = true;
  return lost;
}

protocol::ConsumerGroupHeartbeatRequest ConsumerGroupMember::heartbeat_request(
    const std::map<std::string, Uuid>& topic_ids) {
  if (state_ == ConsumerMemberState::kUnjoined) {
    state_ = ConsumerMemberState::kJoining;
    epoch_ = 0;
  }
  const bool joining = state_ == ConsumerMemberState::kJoining;
  protocol::ConsumerGroupHeartbeatRequest r;
  r.group_id = config_.group_id;
  r.member_id = member_id_;
  r.member_epoch = epoch_;
  r.instance_id = config_.group_instance_id;  // in every heartbeat, as Kafka's client sends it
  if (joining) {
    r.rebalance_timeout_ms = config_.rebalance_timeout_ms;
    std::vector<std::string> topics = config_.topic_regex ? std::vector<std::string>{} : config_.topics;
    std::ranges::sort(topics);
    r.subscribed_topic_names = std::move(topics);
    r.subscribed_topic_regex = config_.topic_regex;
    r.server_assignor = config_.remote_assignor;
    r.rack_id = config_.rack_id;
  }
  if (joining || sent_owned_ != owned_) {
    auto& owned = r.topic_partitions.emplace();
    for (const auto& [topic, partition] : owned_) {
      const auto id = topic_ids.find(topic);
      if (id == topic_ids.end()) continue;
      if (owned.empty() || owned.back().topic_id != id->second) owned.emplace_back().topic_id = id->second;
      owned.back().partitions.push_back(partition);
    }
    sent_owned_ = owned_;
  }
  sent_epoch_ = epoch_;
  heartbeat_now_ = false;
  return r;
}

Next ConsumerGroupMember::on_heartbeat_response(const protocol::ConsumerGroupHeartbeatResponse& response,
                                                std::vector<TopicPartition>& lost) {
  lost.clear();
  const std::int16_t code = response.error_code;
  if (state_ == ConsumerMemberState::kUnjoined) {
    return Next::kContinue;  // an answer to a heartbeat sent before the member left
  }
  const std::string why = response.error_message.value_or("");
  switch (code) {
    case codes::kNone:
      break;
    case codes::kCoordinatorLoadInProgress:
      heartbeat_failed();
      return Next::kRetry;
    case codes::kCoordinatorNotAvailable:
    case codes::kNotCoordinator:
      heartbeat_failed();
      return Next::kFindCoordinator;
    case codes::kFencedMemberEpoch:
    case codes::kUnknownMemberId:
      lost = fence();
      return Next::kRejoin;
    default:
      return fatal(code, why.empty()
                             ? fmt::format("the heartbeat to consumer group '{}' failed", config_.group_id)
                             : fmt::format("the heartbeat to consumer group '{}' failed: {}", config_.group_id, why));
  }
  if (response.member_id && !response.member_id->empty()) member_id_ = *response.member_id;
  epoch_ = response.member_epoch;
  heartbeat_interval_ms_ = response.heartbeat_interval_ms;
  if (state_ == ConsumerMemberState::kJoining) state_ = ConsumerMemberState::kStable;
  if (response.assignment) {
    TopicIdAssignment target;
    for (const auto& tp : response.assignment->topic_partitions) {
      target[tp.topic_id].insert(tp.partitions.begin(), tp.partitions.end());
    }
    target_ = std::move(target);
    state_ = ConsumerMemberState::kReconciling;
  }
  return Next::kContinue;
}

void ConsumerGroupMember::reconciled(std::set<TopicPartition> owned) {
  if (state_ != ConsumerMemberState::kReconciling) return;
  owned_ = std::move(owned);
  target_.reset();
  state_ = ConsumerMemberState::kStable;
  // Acknowledged at once when what is owned, or the epoch, changed since the last heartbeat.
  heartbeat_now_ = sent_owned_ != owned_ || sent_epoch_ != epoch_;
}

bool ConsumerGroupMember::can_commit() const noexcept {
  return (state_ == ConsumerMemberState::kStable || state_ == ConsumerMemberState::kReconciling) && epoch_ > 0;
}

protocol::OffsetCommitRequest ConsumerGroupMember::commit_request(
    const std::map<TopicPartition, std::int64_t>& offsets) const {
  return offset_commit_request(config_.group_id, member_id_, epoch_, offsets);
}

Next ConsumerGroupMember::on_commit_response(const protocol::OffsetCommitResponse& response) {
  const auto failed = first_commit_error(response);
  if (!failed) return Next::kContinue;
  error_ = *failed;
  switch (failed->code) {
    case codes::kCoordinatorNotAvailable:
    case codes::kNotCoordinator:
    case codes::kRequestTimedOut:
      return Next::kFindCoordinator;
    default:
      return Next::kRetry;
  }
}

std::optional<protocol::ConsumerGroupHeartbeatRequest> ConsumerGroupMember::leave_request() {
  std::optional<protocol::ConsumerGroupHeartbeatRequest> out;
  if (state_ != ConsumerMemberState::kUnjoined) {
    out.emplace();
    out->group_id = config_.group_id;
    out->member_id = member_id_;
    // -2: a static member leaves for now; the coordinator keeps its assignment for its return.
    out->member_epoch = config_.group_instance_id ? -2 : -1;
    out->instance_id = config_.group_instance_id;
  }
  (void)fence();
  heartbeat_now_ = false;
  return out;
}

}  // namespace weir::client
