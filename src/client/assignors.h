// Partition assignors of classic consumer groups, run by the group's leader on the members'
// subscriptions (protocol/consumer_protocol.h). Pure functions.
//
// range: Kafka's RangeAssignor without racks. Per topic, the members subscribed to it in order
// (group instance id first, then member id) take consecutive ranges of partitions; the first
// (partitions % members) members take one more.
//
// cooperative-sticky: Kafka's CooperativeStickyAssignor without racks. The assignment is balanced
// (partition counts differ by at most one among members with the same subscription; in general
// no partition could move to a member subscribed to its topic that has two or more fewer) and
// sticky (a member keeps the partitions it owns, as its subscription says, as far as balance
// allows). Owned partitions two members claim are given to the one of the higher generation, or
// to neither when their generations are equal. Cooperative: a partition that moves from one
// member to another is left out of the new owner's assignment, so the old owner first revokes
// it (its own assignment lacks it) and then rejoins; the next rebalance gives it to the new owner.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/consumer_protocol.h"

namespace weir::client {

// The consumer protocol's embedded messages live in the protocol layer (the group coordinator
// reads them too); the client uses them under its own names.
using protocol::ConsumerAssignment;
using protocol::ConsumerSubscription;
using protocol::decode_assignment;
using protocol::decode_generation_user_data;
using protocol::decode_subscription;
using protocol::encode_assignment;
using protocol::encode_generation_user_data;
using protocol::encode_subscription;
using protocol::kConsumerProtocolType;
using protocol::kConsumerProtocolVersion;
using protocol::TopicPartition;

inline constexpr std::string_view kRangeAssignor = "range";
inline constexpr std::string_view kCooperativeStickyAssignor = "cooperative-sticky";

struct GroupMemberSubscription {
  std::string member_id;
  std::optional<std::string> group_instance_id;
  ConsumerSubscription subscription;
};

// member id -> its partitions (every member present, possibly with none), sorted by topic then partition.
using GroupAssignment = std::map<std::string, std::vector<TopicPartition>>;

// Topic -> partition count, for the topics the members subscribe to that exist; members'
// topics missing here are left unassigned.
using PartitionCounts = std::map<std::string, std::int32_t>;

[[nodiscard]] GroupAssignment assign_range(const PartitionCounts& topics,
                                           const std::vector<GroupMemberSubscription>& members);

[[nodiscard]] GroupAssignment assign_cooperative_sticky(const PartitionCounts& topics,
                                                        const std::vector<GroupMemberSubscription>& members);

// Whether this build runs an assignor of that name.
[[nodiscard]] bool is_known_assignor(std::string_view name);

// Runs the assignor of that name (range or cooperative-sticky).
[[nodiscard]] GroupAssignment assign(std::string_view assignor, const PartitionCounts& topics,
                                     const std::vector<GroupMemberSubscription>& members);

}  // namespace weir::client
