// One classic-protocol consumer group (JoinGroup/SyncGroup/Heartbeat/LeaveGroup): its state,
// members, generation, leader and chosen protocol, plus the deadlines the coordinator's tick()
// fires. Plain data with small queries; the transitions live in GroupCoordinator (coordinator.h).
//
// States, as Kafka's ClassicGroupState:
//   Empty               no members (may still hold committed offsets)
//   PreparingRebalance  waiting for members to (re)join, until all have or the join deadline
//   CompletingRebalance generation chosen, waiting for the leader's assignment (SyncGroup)
//   Stable              assignment handed out; heartbeats keep members alive
//   Dead                removed; never observed from outside the coordinator
//
// Invariants (checked by check_invariants()):
//   - leader is empty iff members is empty, and otherwise names a member;
//   - every static member's instance id maps back to it in static_members.
// The protocol name is kept through a PreparingRebalance (as Kafka keeps it until the next
// generation) and cleared when a generation starts with no members.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/codec.h"

namespace weir::group {

using Bytes = protocol::Bytes;
// Identifies a request the host is holding open (a JoinGroup or SyncGroup answered later).
using RequestHandle = std::uint64_t;

enum class GroupState { kEmpty, kPreparingRebalance, kCompletingRebalance, kStable, kDead };

// Kafka's spelling, as DescribeGroups and ListGroups report it.
[[nodiscard]] std::string_view to_string(GroupState state);

struct Protocol {
  std::string name;
  Bytes metadata;
  bool operator==(const Protocol&) const = default;
};

struct Member {
  std::string member_id;
  std::optional<std::string> group_instance_id;
  std::string client_id;
  std::string client_host;
  std::int32_t session_timeout_ms = 0;
  std::int32_t rebalance_timeout_ms = 0;
  std::vector<Protocol> protocols;  // in the member's order of preference
  Bytes assignment;

  // A JoinGroup / SyncGroup the member is waiting on, with the version it was sent at.
  std::optional<RequestHandle> awaiting_join;
  std::int16_t join_version = 0;
  std::optional<RequestHandle> awaiting_sync;
  std::int16_t sync_version = 0;
  // Joined but not yet through a completed join phase (expires after kNewMemberJoinTimeoutMs).
  bool is_new = false;
  std::int64_t heartbeat_deadline_ms = 0;

  [[nodiscard]] bool is_static() const { return group_instance_id.has_value(); }
  // The metadata this member sent for `protocol_name`; empty if it does not support it.
  [[nodiscard]] const Bytes* metadata_for(std::string_view protocol_name) const;
  [[nodiscard]] bool supports(std::string_view protocol_name) const {
    return metadata_for(protocol_name) != nullptr;
  }
  // Same protocol names and metadata, in the same order (Kafka's ClassicGroupMember.matches).
  [[nodiscard]] bool matches(const std::vector<Protocol>& other) const { return protocols == other; }
};

class ClassicGroup {
 public:
  explicit ClassicGroup(std::string group_id) : group_id_(std::move(group_id)) {}

  [[nodiscard]] const std::string& group_id() const { return group_id_; }
  [[nodiscard]] GroupState state() const { return state_; }
  [[nodiscard]] GroupState previous_state() const { return previous_state_; }
  void transition_to(GroupState next, std::int64_t now_ms);
  [[nodiscard]] bool is(GroupState s) const { return state_ == s; }
  // Stable, CompletingRebalance and Empty groups may start a rebalance.
  [[nodiscard]] bool can_rebalance() const {
    return state_ == GroupState::kStable || state_ == GroupState::kCompletingRebalance ||
           state_ == GroupState::kEmpty;
  }

  [[nodiscard]] std::int32_t generation_id() const { return generation_id_; }
  [[nodiscard]] const std::optional<std::string>& protocol_type() const { return protocol_type_; }
  [[nodiscard]] const std::optional<std::string>& protocol_name() const { return protocol_name_; }
  [[nodiscard]] const std::string& leader_id() const { return leader_id_; }
  [[nodiscard]] std::int64_t state_timestamp_ms() const { return state_timestamp_ms_; }
  // Rebalances completed (PreparingRebalance through to Stable) since this broker loaded the
  // group, and how long the last one took; for metrics, not persisted.
  [[nodiscard]] std::uint64_t rebalances() const { return rebalances_; }
  [[nodiscard]] std::int64_t last_rebalance_ms() const { return last_rebalance_ms_; }

  // Members, ordered by member id so that every iteration (responses, records) is deterministic.
  [[nodiscard]] const std::map<std::string, Member>& members() const { return members_; }
  [[nodiscard]] Member* find(std::string_view member_id);
  [[nodiscard]] bool has_member(std::string_view member_id) const {
    return members_.contains(std::string(member_id));
  }
  [[nodiscard]] std::size_t size() const { return members_.size(); }
  [[nodiscard]] std::optional<std::string> static_member_id(std::string_view instance_id) const;

  void add(Member member);
  // Removes the member; elects another leader (preferring one awaiting join) if it led.
  void remove(std::string_view member_id);
  // Gives a static member a new member id, keeping everything else (KIP-345 restart).
  Member& replace_static_member(std::string_view instance_id, const std::string& new_member_id);

  // Members that got MEMBER_ID_REQUIRED and have not rejoined yet: id -> expiry deadline.
  std::map<std::string, std::int64_t>& pending_members() { return pending_members_; }
  [[nodiscard]] const std::map<std::string, std::int64_t>& pending_members() const {
    return pending_members_;
  }

  [[nodiscard]] std::size_t awaiting_join_count() const;
  // All members have rejoined and no member-id-required member is outstanding.
  [[nodiscard]] bool all_members_joined() const {
    return awaiting_join_count() == members_.size() && pending_members_.empty();
  }
  // If the leader has not rejoined, picks a member that has. False if none has.
  bool elect_joined_leader();

  // Whether a member with this protocol type and list could join (Kafka's supportsProtocols).
  [[nodiscard]] bool supports_protocols(std::string_view protocol_type,
                                        const std::vector<Protocol>& protocols) const;
  // The protocol every member supports that gets the most first-choice votes.
  [[nodiscard]] std::string select_protocol() const;
  // Starts the next generation: generation + 1 and, with members, the selected protocol
  // and CompletingRebalance; without members, no protocol and Empty.
  void init_next_generation(std::int64_t now_ms);
  // The largest rebalance timeout of the members (the join phase deadline).
  [[nodiscard]] std::int32_t rebalance_timeout_ms() const;

  // Restores the persisted part of the group (replay of a GroupMetadata record).
  void restore(std::optional<std::string> protocol_type, std::int32_t generation_id,
               std::optional<std::string> protocol_name, std::string leader_id,
               std::int64_t state_timestamp_ms, std::vector<Member> members);
  void set_protocol_type(std::optional<std::string> t) { protocol_type_ = std::move(t); }
  void set_protocol_name(std::optional<std::string> n) { protocol_name_ = std::move(n); }

  // Timers, as absolute deadlines (-1: not armed).
  std::int64_t join_deadline_ms = -1;       // completes the join phase
  std::int64_t initial_join_remaining_ms = -1;  // initial-delay rounds left; -1: not an initial join
  bool new_member_added = false;            // a member joined during the initial delay
  std::int64_t sync_deadline_ms = -1;       // members still not synced are evicted
  std::vector<std::string> pending_sync;    // members that have not sent SyncGroup this generation

  void check_invariants() const;

 private:
  std::string group_id_;
  GroupState state_ = GroupState::kEmpty;
  GroupState previous_state_ = GroupState::kEmpty;
  std::int64_t state_timestamp_ms_ = -1;
  std::int64_t rebalance_started_ms_ = -1;  // -1: no rebalance under way
  std::uint64_t rebalances_ = 0;
  std::int64_t last_rebalance_ms_ = -1;
  std::int32_t generation_id_ = 0;
  std::optional<std::string> protocol_type_;
  std::optional<std::string> protocol_name_;
  std::string leader_id_;
  std::map<std::string, Member> members_;
  std::map<std::string, std::string> static_members_;  // instance id -> member id
  std::map<std::string, std::int64_t> pending_members_;
};

}  // namespace weir::group
