// One member of a classic consumer group (protocol type "consumer") as a state machine: it
// builds the JoinGroup, SyncGroup, Heartbeat, OffsetCommit and LeaveGroup requests and reads
// their responses, and says what the caller does next. Pure (no I/O, no clock): the async
// driver (group_membership.h) sends the requests, runs the assignor when the member leads,
// keeps time and holds the positions.
//
//   Unjoined --JoinGroup--> Joining --ok--> Syncing --SyncGroup ok--> Stable
//      ^                       |  MEMBER_ID_REQUIRED: rejoin with the id given (JoinGroup v4+)
//      |                       |  REBALANCE_IN_PROGRESS / UNKNOWN_MEMBER_ID: rejoin
//      +-- errors that reset the generation (and the member id): rejoin; owned partitions are lost
//
// As Kafka's Java consumer (AbstractCoordinator, ConsumerCoordinator):
//  - Heartbeat: REBALANCE_IN_PROGRESS while Stable → rejoin; ILLEGAL_GENERATION → rejoin with the
//    member id but no generation; UNKNOWN_MEMBER_ID / FENCED_INSTANCE_ID → rejoin as a new member.
//  - JoinGroup: MEMBER_ID_REQUIRED → rejoin with the member id given; UNKNOWN_MEMBER_ID → rejoin
//    as a new member; REBALANCE_IN_PROGRESS → rejoin; COORDINATOR_LOAD_IN_PROGRESS → again after a
//    backoff; FENCED_INSTANCE_ID, INCONSISTENT_GROUP_PROTOCOL, INVALID_SESSION_TIMEOUT,
//    INVALID_GROUP_ID, GROUP_AUTHORIZATION_FAILED, GROUP_MAX_SIZE_REACHED and any other → fatal.
//  - SyncGroup: REBALANCE_IN_PROGRESS → rejoin; ILLEGAL_GENERATION → rejoin without generation;
//    UNKNOWN_MEMBER_ID → rejoin as a new member; others fatal.
//  - NOT_COORDINATOR / COORDINATOR_NOT_AVAILABLE anywhere → find the coordinator again.
//  - The rebalance protocol follows the assignor the group chose: cooperative for
//    cooperative-sticky (owned partitions are kept across a rejoin and listed in the
//    subscription; partitions the new assignment lacks are revoked and the member rejoins),
//    eager for range (every partition is revoked before rejoining).
//  - Before a rejoin without a valid generation, owned partitions are lost (not committed).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "client/assignors.h"
#include "client/errors.h"
#include "protocol/gen/heartbeat_request.h"
#include "protocol/gen/join_group_request.h"
#include "protocol/gen/join_group_response.h"
#include "protocol/gen/leave_group_request.h"
#include "protocol/gen/offset_commit_request.h"
#include "protocol/gen/offset_commit_response.h"
#include "protocol/gen/sync_group_request.h"
#include "protocol/gen/sync_group_response.h"

namespace weir::client {

struct GroupMemberConfig {
  std::string group_id;
  std::vector<std::string> topics;
  // partition.assignment.strategy, in order of preference.
  std::vector<std::string> assignors{std::string(kCooperativeStickyAssignor), std::string(kRangeAssignor)};
  std::int32_t session_timeout_ms = 45'000;      // session.timeout.ms
  std::int32_t rebalance_timeout_ms = 300'000;   // max.poll.interval.ms
  std::int64_t heartbeat_interval_ms = 3'000;    // heartbeat.interval.ms
  std::int64_t auto_commit_interval_ms = 5'000;  // auto.commit.interval.ms
  std::int64_t retry_backoff_ms = 100;           // retry.backoff.ms
  // group.protocol: the classic protocol (JoinGroup, this file) or the consumer group protocol
  // (KIP-848, consumer_group_member.h, where the coordinator assigns and `assignors` is unused).
  bool consumer_protocol = false;
  std::optional<std::string> remote_assignor;  // group.remote.assignor (consumer protocol)
  // Consumer protocol only: group.instance.id (a static member: it leaves with epoch -2 and the
  // coordinator keeps its assignment for its return), client.rack, and a subscription by a
  // regular expression the coordinator matches (RE2, SubscribedTopicRegex) instead of `topics`.
  std::optional<std::string> group_instance_id;
  std::optional<std::string> rack_id;
  std::optional<std::string> topic_regex;
};

enum class MemberState : std::uint8_t { kUnjoined, kJoining, kSyncing, kStable };

enum class RebalanceProtocol : std::uint8_t { kEager, kCooperative };

// What the caller does after a response.
enum class Next : std::uint8_t {
  kContinue,         // nothing changes
  kSync,             // joined: send SyncGroup (the leader with everyone's assignment)
  kStable,           // synced: apply the assignment change
  kRejoin,           // send JoinGroup now
  kRetry,            // try again after retry_backoff_ms
  kFindCoordinator,  // look the coordinator up again, then carry on
  kFatal,            // give up: error() says why
};

[[nodiscard]] std::string_view to_string(MemberState s) noexcept;

struct AssignmentChange {
  std::vector<TopicPartition> assigned;  // the whole new assignment
  std::vector<TopicPartition> added;     // assigned, not owned before: start from the committed offset
  std::vector<TopicPartition> revoked;   // owned before, not assigned: commit, then stop reading
};

// What to give up before a JoinGroup.
struct JoinPreparation {
  std::vector<TopicPartition> revoked;  // commit their positions first (eager protocol)
  std::vector<TopicPartition> lost;     // the generation was reset: drop without a commit
};

// An OffsetCommit of `offsets` by a member (a classic generation or a consumer-group epoch).
[[nodiscard]] protocol::OffsetCommitRequest offset_commit_request(
    const std::string& group_id, const std::string& member_id, std::int32_t generation_or_epoch,
    const std::map<TopicPartition, std::int64_t>& offsets);

// The first partition an OffsetCommit answer failed for, as a Kafka error naming it.
[[nodiscard]] std::optional<Error> first_commit_error(const protocol::OffsetCommitResponse& response);

class GroupMember {
 public:
  explicit GroupMember(GroupMemberConfig config);

  [[nodiscard]] const GroupMemberConfig& config() const noexcept { return config_; }
  [[nodiscard]] MemberState state() const noexcept { return state_; }
  [[nodiscard]] const std::string& member_id() const noexcept { return member_id_; }
  [[nodiscard]] std::int32_t generation() const noexcept { return generation_; }
  [[nodiscard]] const std::optional<std::string>& protocol_name() const noexcept { return protocol_name_; }
  [[nodiscard]] bool is_leader() const noexcept { return leader_; }
  [[nodiscard]] bool rejoin_needed() const noexcept { return rejoin_needed_; }
  [[nodiscard]] const std::set<TopicPartition>& owned() const noexcept { return owned_; }
  [[nodiscard]] RebalanceProtocol rebalance_protocol() const noexcept;
  // Why the last kFatal (or a failed commit) happened.
  [[nodiscard]] const Error& error() const noexcept { return error_; }

  // Asks for a rejoin at the next opportunity (e.g. after revoking partitions).
  void request_rejoin() noexcept { rejoin_needed_ = true; }

  // Kafka's onJoinPrepare: what the member gives up before joining; they leave owned().
  JoinPreparation prepare_join();
  // The JoinGroup to send (one protocol per assignor, each with the member's subscription); the
  // member is Joining from then on.
  [[nodiscard]] protocol::JoinGroupRequest join_request(std::optional<std::string> reason);
  Next on_join_response(const protocol::JoinGroupResponse& response);

  // The leader's view after kSync: every member's subscription (from JoinGroup), and the topics
  // any of them subscribes to.
  [[nodiscard]] const std::vector<GroupMemberSubscription>& members() const noexcept { return members_; }
  [[nodiscard]] std::vector<std::string> subscribed_topics() const;
  // The leader's SyncGroup assignments: the chosen assignor run over members().
  [[nodiscard]] std::vector<protocol::SyncGroupRequest::SyncGroupRequestAssignment> leader_assignments(
      const PartitionCounts& topics) const;
  [[nodiscard]] protocol::SyncGroupRequest sync_request(
      std::vector<protocol::SyncGroupRequest::SyncGroupRequestAssignment> assignments) const;
  Next on_sync_response(const protocol::SyncGroupResponse& response, AssignmentChange& change);

  [[nodiscard]] protocol::HeartbeatRequest heartbeat_request() const;
  Next on_heartbeat_response(std::int16_t error_code);

  // Whether the member may commit now (Stable with a generation).
  [[nodiscard]] bool can_commit() const noexcept;
  [[nodiscard]] protocol::OffsetCommitRequest commit_request(
      const std::map<TopicPartition, std::int64_t>& offsets) const;
  // kContinue when every partition was committed; kFatal leaves the reason in error() (for an
  // automatic commit the caller warns and carries on, as Kafka's auto-commit does).
  Next on_commit_response(const protocol::OffsetCommitResponse& response);

  // The LeaveGroup to send when the member is in the group (has a member id and has started
  // joining); the member is Unjoined without member id or generation afterwards either way.
  [[nodiscard]] std::optional<protocol::LeaveGroupRequest> leave_request(std::string reason);

 private:
  // Back to Unjoined without generation (and without member id unless kept); a rejoin is due.
  void reset(bool keep_member_id);
  Next fatal(std::int16_t code, std::string message);
  // SyncGroup's and OffsetCommit's answer to a generation the coordinator moved past: a rejoin
  // (REBALANCE_IN_PROGRESS; UNKNOWN_MEMBER_ID as a new member; ILLEGAL_GENERATION without a
  // generation), nullopt for other codes.
  std::optional<Next> rejoin_after(std::int16_t code);
  [[nodiscard]] protocol::Bytes subscription_for(const std::string& assignor) const;

  GroupMemberConfig config_;
  MemberState state_ = MemberState::kUnjoined;
  std::string member_id_;
  std::int32_t generation_ = -1;
  std::optional<std::string> protocol_name_;
  bool leader_ = false;
  bool rejoin_needed_ = true;
  // The generation of the last assignment (the cooperative-sticky assignor's user data).
  std::int32_t assigned_generation_ = -1;
  std::set<TopicPartition> owned_;
  std::vector<GroupMemberSubscription> members_;
  Error error_;
};

}  // namespace weir::client
