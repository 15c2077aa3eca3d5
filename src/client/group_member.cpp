#include "client/group_member.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "client/errors.h"

namespace weir::client {

std::string_view to_string(MemberState s) noexcept {
  switch (s) {
    case MemberState::kUnjoined:
      return "unjoined";
    case MemberState::kJoining:
      return "joining";
    case MemberState::kSyncing:
      return "syncing";
    case MemberState::kStable:
      return "stable";
  }
  return "unknown";
}

GroupMember::GroupMember(GroupMemberConfig config) : config_(std::move(config)) {}

RebalanceProtocol GroupMember::rebalance_protocol() const noexcept {
  return protocol_name_ == std::optional<std::string>(kCooperativeStickyAssignor) ? RebalanceProtocol::kCooperative
                                                                                  : RebalanceProtocol::kEager;
}

void GroupMember::reset(bool keep_member_id) {
  state_ = MemberState::kUnjoined;
  generation_ = -1;
  protocol_name_.reset();
  leader_ = false;
  members_.clear();
  if (!keep_member_id) member_id_.clear();
  rejoin_needed_ = true;
}

std::optional<Next> GroupMember::rejoin_after(std::int16_t code) {
  switch (code) {
    case codes::kRebalanceInProgress:
      rejoin_needed_ = true;
      return Next::kRejoin;
    case codes::kUnknownMemberId:
      reset(false);
      return Next::kRejoin;
    case codes::kIllegalGeneration:
      reset(true);
      return Next::kRejoin;
    default:
      return std::nullopt;
  }
}

Next GroupMember::fatal(std::int16_t code, std::string message) {
  error_ = Error::kafka(code, std::move(message));
  return Next::kFatal;
}

JoinPreparation GroupMember::prepare_join() {
  JoinPreparation out;
  std::vector<TopicPartition> all(owned_.begin(), owned_.end());
  if (generation_ < 0 || member_id_.empty()) {
    out.lost = std::move(all);
    owned_.clear();
  } else if (rebalance_protocol() == RebalanceProtocol::kEager) {
    out.revoked = std::move(all);
    owned_.clear();
  }
  leader_ = false;
  members_.clear();
  return out;
}

protocol::Bytes GroupMember::subscription_for(const std::string& assignor) const {
  ConsumerSubscription s;
  s.topics = config_.topics;
  if (assignor == kCooperativeStickyAssignor) s.user_data = encode_generation_user_data(assigned_generation_);
  s.owned_partitions.assign(owned_.begin(), owned_.end());
  s.generation_id = generation_;
  return encode_subscription(s);
}

protocol::JoinGroupRequest GroupMember::join_request(std::optional<std::string> reason) {
  protocol::JoinGroupRequest r;
  r.group_id = config_.group_id;
  r.session_timeout_ms = config_.session_timeout_ms;
  r.rebalance_timeout_ms = config_.rebalance_timeout_ms;
  r.member_id = member_id_;
  r.protocol_type = std::string(kConsumerProtocolType);
  for (const auto& name : config_.assignors) {
    auto& p = r.protocols.emplace_back();
    p.name = name;
    p.metadata = subscription_for(name);
  }
  r.reason = std::move(reason);
  state_ = MemberState::kJoining;
  return r;
}

Next GroupMember::on_join_response(const protocol::JoinGroupResponse& response) {
  const std::int16_t code = response.error_code;
  if (code == codes::kNone) {
    if (response.protocol_type && *response.protocol_type != kConsumerProtocolType) {
      return fatal(codes::kInconsistentGroupProtocol,
                   fmt::format("JoinGroup answered protocol type '{}', not 'consumer'", *response.protocol_type));
    }
    if (state_ != MemberState::kJoining) {
      rejoin_needed_ = true;
      return Next::kRejoin;
    }
    if (!response.protocol_name ||
        std::ranges::find(config_.assignors, *response.protocol_name) == config_.assignors.end()) {
      return fatal(codes::kInconsistentGroupProtocol,
                   fmt::format("the coordinator chose assignor '{}', which this member did not offer",
                               response.protocol_name.value_or("")));
    }
    generation_ = response.generation_id;
    member_id_ = response.member_id;
    protocol_name_ = response.protocol_name;
    leader_ = response.leader == response.member_id;
    state_ = MemberState::kSyncing;
    members_.clear();
    if (leader_) {
      for (const auto& m : response.members) {
        auto sub = decode_subscription(m.metadata);
        if (!sub) {
          return fatal(
              codes::kInconsistentGroupProtocol,
              fmt::format("member {} sent a subscription this leader cannot read: {}", m.member_id, sub.error()));
        }
        members_.push_back(GroupMemberSubscription{m.member_id, m.group_instance_id, std::move(*sub)});
      }
    }
    return Next::kSync;
  }
  switch (code) {
    case codes::kCoordinatorLoadInProgress:
      return Next::kRetry;
    case codes::kCoordinatorNotAvailable:
    case codes::kNotCoordinator:
      return Next::kFindCoordinator;
    case codes::kUnknownMemberId:
      reset(false);
      return Next::kRejoin;
    case codes::kMemberIdRequired:
      // KIP-394: the coordinator names the member id to join with.
      reset(false);
      member_id_ = response.member_id;
      state_ = MemberState::kJoining;  // a pending member: LeaveGroup still applies
      return Next::kRejoin;
    case codes::kRebalanceInProgress:
      rejoin_needed_ = true;
      return Next::kRejoin;
    default:
      return fatal(code, fmt::format("cannot join group '{}'", config_.group_id));
  }
}

std::vector<std::string> GroupMember::subscribed_topics() const {
  std::set<std::string> all;
  for (const auto& m : members_) all.insert(m.subscription.topics.begin(), m.subscription.topics.end());
  return {all.begin(), all.end()};
}

std::vector<protocol::SyncGroupRequest::SyncGroupRequestAssignment> GroupMember::leader_assignments(
    const PartitionCounts& topics) const {
  std::vector<protocol::SyncGroupRequest::SyncGroupRequestAssignment> out;
  const GroupAssignment assignment = assign(protocol_name_.value_or(""), topics, members_);
  for (const auto& [member, partitions] : assignment) {
    auto& a = out.emplace_back();
    a.member_id = member;
    a.assignment = encode_assignment(ConsumerAssignment{partitions, std::nullopt});
  }
  return out;
}

protocol::SyncGroupRequest GroupMember::sync_request(
    std::vector<protocol::SyncGroupRequest::SyncGroupRequestAssignment> assignments) const {
  protocol::SyncGroupRequest r;
  r.group_id = config_.group_id;
  r.generation_id = generation_;
  r.member_id = member_id_;
  r.protocol_type = std::string(kConsumerProtocolType);
  r.protocol_name = protocol_name_;
  r.assignments = std::move(assignments);
  return r;
}

Next GroupMember::on_sync_response(const protocol::SyncGroupResponse& response, AssignmentChange& change) {
  change = {};
  const std::int16_t code = response.error_code;
  if (code == codes::kNone) {
    if (response.protocol_type && *response.protocol_type != kConsumerProtocolType) {
      return fatal(codes::kInconsistentGroupProtocol,
                   fmt::format("SyncGroup answered protocol type '{}', not 'consumer'", *response.protocol_type));
    }
    if (state_ != MemberState::kSyncing) {
      rejoin_needed_ = true;
      return Next::kRejoin;
    }
    if (response.protocol_name && response.protocol_name != protocol_name_) {
      return fatal(codes::kInconsistentGroupProtocol, fmt::format("SyncGroup answered assignor '{}', JoinGroup '{}'",
                                                           *response.protocol_name, protocol_name_.value_or("")));
    }
    ConsumerAssignment assignment;
    if (!response.assignment.empty()) {  // no bytes: the leader gave this member nothing
      auto decoded = decode_assignment(response.assignment);
      if (!decoded) return fatal(codes::kInconsistentGroupProtocol, "an unreadable assignment: " + decoded.error());
      assignment = std::move(*decoded);
    }
    state_ = MemberState::kStable;
    const bool all_subscribed = std::ranges::all_of(assignment.partitions, [&](const TopicPartition& tp) {
      return std::ranges::find(config_.topics, tp.first) != config_.topics.end();
    });
    if (!all_subscribed) {  // assigned topics this member does not read: join again with the subscription
      rejoin_needed_ = true;
      return Next::kRejoin;
    }
    rejoin_needed_ = false;
    assigned_generation_ = generation_;
    const std::set<TopicPartition> assigned(assignment.partitions.begin(), assignment.partitions.end());
    change.assigned.assign(assigned.begin(), assigned.end());
    std::ranges::set_difference(assigned, owned_, std::back_inserter(change.added));
    std::ranges::set_difference(owned_, assigned, std::back_inserter(change.revoked));
    owned_ = assigned;
    if (rebalance_protocol() == RebalanceProtocol::kCooperative && !change.revoked.empty()) rejoin_needed_ = true;
    return Next::kStable;
  }
  switch (code) {
    case codes::kCoordinatorNotAvailable:
    case codes::kNotCoordinator:
      rejoin_needed_ = true;
      return Next::kFindCoordinator;
    default:
      if (auto next = rejoin_after(code)) return *next;
      return fatal(code, fmt::format("cannot sync group '{}'", config_.group_id));
  }
}

protocol::HeartbeatRequest GroupMember::heartbeat_request() const {
  protocol::HeartbeatRequest r;
  r.group_id = config_.group_id;
  r.generation_id = generation_;
  r.member_id = member_id_;
  return r;
}

Next GroupMember::on_heartbeat_response(std::int16_t code) {
  switch (code) {
    case codes::kNone:
      return Next::kContinue;
    case codes::kCoordinatorNotAvailable:
    case codes::kNotCoordinator:
      return Next::kFindCoordinator;
    case codes::kRebalanceInProgress:
      if (state_ != MemberState::kStable) return Next::kContinue;
      rejoin_needed_ = true;
      return Next::kRejoin;
    case codes::kIllegalGeneration:
      reset(true);
      return Next::kRejoin;
    case codes::kUnknownMemberId:
    case codes::kFencedInstanceId:
      reset(false);
      return Next::kRejoin;
    default:
      return fatal(code, fmt::format("heartbeat to group '{}' failed", config_.group_id));
  }
}

bool GroupMember::can_commit() const noexcept {
  return state_ == MemberState::kStable && generation_ >= 0 && !member_id_.empty();
}

protocol::OffsetCommitRequest offset_commit_request(const std::string& group_id, const std::string& member_id,
                                                    std::int32_t generation_or_epoch,
                                                    const std::map<TopicPartition, std::int64_t>& offsets) {
  protocol::OffsetCommitRequest r;
  r.group_id = group_id;
  r.generation_id_or_member_epoch = generation_or_epoch;
  r.member_id = member_id;
  for (const auto& [tp, offset] : offsets) {
    if (r.topics.empty() || r.topics.back().name != tp.first) r.topics.emplace_back().name = tp.first;
    auto& p = r.topics.back().partitions.emplace_back();
    p.partition_index = tp.second;
    p.committed_offset = offset;
    p.committed_metadata = "";
  }
  return r;
}

protocol::OffsetCommitRequest GroupMember::commit_request(const std::map<TopicPartition, std::int64_t>& offsets) const {
  return offset_commit_request(config_.group_id, member_id_, generation_, offsets);
}

std::optional<Error> first_commit_error(const protocol::OffsetCommitResponse& response) {
  for (const auto& t : response.topics) {
    for (const auto& p : t.partitions) {
      if (p.error_code == codes::kNone) continue;
      return Error::kafka(p.error_code, fmt::format("cannot commit the offset of {}-{}", t.name, p.partition_index));
    }
  }
  return std::nullopt;
}

Next GroupMember::on_commit_response(const protocol::OffsetCommitResponse& response) {
  auto failed = first_commit_error(response);
  if (!failed) return Next::kContinue;
  const std::int16_t code = failed->code;
  error_ = std::move(*failed);
  switch (code) {
    case codes::kCoordinatorLoadInProgress:
    case codes::kUnknownTopicOrPartition:
      return Next::kRetry;
    case codes::kCoordinatorNotAvailable:
    case codes::kNotCoordinator:
    case codes::kRequestTimedOut:
      return Next::kFindCoordinator;
    default:
      return rejoin_after(code).value_or(Next::kFatal);
  }
}

std::optional<protocol::LeaveGroupRequest> GroupMember::leave_request(std::string reason) {
  std::optional<protocol::LeaveGroupRequest> out;
  if (!member_id_.empty() && state_ != MemberState::kUnjoined) {
    out.emplace();
    out->group_id = config_.group_id;
    out->member_id = member_id_;  // v0-2
    auto& m = out->members.emplace_back();
    m.member_id = member_id_;
    m.reason = std::move(reason);
  }
  reset(false);
  rejoin_needed_ = false;
  return out;
}

}  // namespace weir::client
