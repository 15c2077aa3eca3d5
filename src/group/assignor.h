// Server-side partition assignors of the consumer group protocol (KIP-848): given the members of
// a group (subscriptions and current target assignment) and the partition counts of the topics,
// compute the new target assignment. Pure functions: no I/O, no clock, no state between calls.
//
// Two assignors, as Kafka 4.3.1's group coordinator has them (`group.consumer.assignors`, the
// member's `group.remote.assignor`):
//   "uniform" (the default; Kafka's UniformAssignor)
//     Balance first (member sizes differ by at most one when subscriptions allow), then
//     stickiness (a member keeps what it owns unless balance needs it elsewhere).
//     Homogeneous groups take a quota path (UniformHomogeneousAssignmentBuilder), heterogeneous
//     ones a per-topic balancing path (UniformHeterogeneousAssignmentBuilder).
//   "range" (Kafka's RangeAssignor)
//     Per topic, contiguous ranges handed to the members sorted by instance id (static members
//     first) then member id, so co-subscribed topics with equal partition counts are
//     co-partitioned. Not sticky: in 4.3.1 the range depends only on the member order.
// tests/unit/group/assignor_golden_test.cpp checks both against the output of Kafka's own classes
// for the case table tests/data/assignor_cases.txt.
// Neither assignor in 4.3.1 reads racks (SubscribedTopicDescriber.racksForPartition is called by
// none of them); the racks are carried in the inputs so a later version can use them.
//
// Iteration order is part of the input, as it is in Kafka: ties are broken by the order in which
// Kafka's GroupSpec iterates members (`members` below), a member's assignment map iterates topics
// (`current_assignment`) and its partition sets iterate partitions (`TopicPartitions::partitions`).
// Kafka's coordinator builds those as java.util.HashMap/HashSet; the java_hash_order helpers
// below reproduce that order so a caller can present the same input Kafka's assignor sees.
// Inside the assignors, orders Kafka derives from its own hash sets are reproduced here (the
// homogeneous uniform path's topic order).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "base/uuid.h"

namespace weir::group {

enum class SubscriptionType : std::uint8_t {
  kHomogeneous,    // every member subscribes to the same topics
  kHeterogeneous,  // at least two members differ
};

struct TopicPartitions {
  Uuid topic_id;
  std::vector<std::int32_t> partitions;  // in iteration order (see the header comment)
};

struct AssignmentMemberSpec {
  std::string member_id;
  std::optional<std::string> instance_id;
  std::optional<std::string> rack_id;
  std::vector<Uuid> subscribed_topic_ids;           // a set; in iteration order
  std::vector<TopicPartitions> current_assignment;  // the member's current target assignment
};

struct AssignmentGroupSpec {
  std::vector<AssignmentMemberSpec> members;  // in GroupSpec.memberIds() iteration order
  SubscriptionType subscription_type = SubscriptionType::kHomogeneous;
};

// What the assignors know of the topics (Kafka's SubscribedTopicDescriber).
class SubscribedTopicDescriber {
 public:
  virtual ~SubscribedTopicDescriber() = default;
  // nullopt if the topic is not in the metadata.
  [[nodiscard]] virtual std::optional<std::int32_t> partition_count(const Uuid& topic_id) const = 0;
  // The racks of the partition's replicas; empty if unknown.
  [[nodiscard]] virtual std::vector<std::string> partition_racks(const Uuid& topic_id,
                                                                 std::int32_t partition) const = 0;
};

// A describer over a fixed table (tests, and callers that snapshot the metadata image).
class TopicTableDescriber final : public SubscribedTopicDescriber {
 public:
  struct Topic {
    std::int32_t partition_count = 0;
    std::vector<std::vector<std::string>> replica_racks;  // per partition; may be empty
  };

  void add_topic(const Uuid& topic_id, std::int32_t partition_count,
                 std::vector<std::vector<std::string>> replica_racks = {});

  [[nodiscard]] std::optional<std::int32_t> partition_count(const Uuid& topic_id) const override;
  [[nodiscard]] std::vector<std::string> partition_racks(const Uuid& topic_id, std::int32_t partition) const override;

 private:
  std::map<Uuid, Topic> topics_;
};

// member id -> topic id -> partitions (ascending). Every member of the spec appears, possibly
// with no topics, except that an empty group, or one whose members subscribe to nothing, gets an
// empty map (as Kafka returns an empty GroupAssignment then).
using GroupAssignment = std::map<std::string, std::map<Uuid, std::vector<std::int32_t>>>;

// Kafka throws PartitionAssignorException (or, for a broken input, a runtime exception); here
// they are values. The coordinator fails the heartbeat that triggered the computation.
enum class AssignorErrc : std::uint8_t {
  kSubscribedTopicNotFound,   // a member subscribes to a topic the describer does not know
  kPartitionsLeftUnassigned,  // the homogeneous quota path could not place every partition
  kPartitionOutOfRange,       // a current assignment names a partition the topic does not have
};

[[nodiscard]] std::string_view to_string(AssignorErrc e) noexcept;

class PartitionAssignor {
 public:
  virtual ~PartitionAssignor() = default;
  [[nodiscard]] virtual std::string_view name() const = 0;
  [[nodiscard]] virtual Result<GroupAssignment, AssignorErrc> assign(const AssignmentGroupSpec& spec,
                                                                     const SubscribedTopicDescriber& topics) const = 0;
};

class UniformAssignor final : public PartitionAssignor {
 public:
  static constexpr std::string_view kName = "uniform";
  [[nodiscard]] std::string_view name() const override { return kName; }
  [[nodiscard]] Result<GroupAssignment, AssignorErrc> assign(const AssignmentGroupSpec& spec,
                                                             const SubscribedTopicDescriber& topics) const override;
};

class RangeAssignor final : public PartitionAssignor {
 public:
  static constexpr std::string_view kName = "range";
  [[nodiscard]] std::string_view name() const override { return kName; }
  [[nodiscard]] Result<GroupAssignment, AssignorErrc> assign(const AssignmentGroupSpec& spec,
                                                             const SubscribedTopicDescriber& topics) const override;
};

// The built-in assignor called `name` (stateless, lives for the program); nullptr for a name
// weir does not have, which the coordinator answers with UNSUPPORTED_ASSIGNOR.
[[nodiscard]] const PartitionAssignor* find_assignor(std::string_view name);
// Kafka's default for group.consumer.assignors: uniform, then range.
[[nodiscard]] std::vector<std::string_view> builtin_assignor_names();

// Java's iteration order of a java.util.HashMap / HashSet created with the default capacity and
// filled in the given order (buckets by spread hash, then insertion order within a bucket; the
// table grows by doubling past 3/4 full). Kafka's TargetAssignmentBuilder collects the members
// this way. Not modelled: bins treeified after 8 collisions at capacity >= 64.
[[nodiscard]] std::vector<std::string> java_hash_order(std::vector<std::string> keys);
[[nodiscard]] std::vector<Uuid> java_hash_order(std::vector<Uuid> keys);
[[nodiscard]] std::vector<std::int32_t> java_hash_order(std::vector<std::int32_t> keys);

// Java's hashCode of Kafka's Uuid and its compareTo (signed 64-bit halves, unlike Uuid's own
// operator<=>, which compares them unsigned).
[[nodiscard]] std::int32_t java_uuid_hash(const Uuid& id) noexcept;
[[nodiscard]] bool java_uuid_less(const Uuid& a, const Uuid& b) noexcept;

namespace detail {
// The order of `new HashSet<>(c)` for a collection c iterating as `keys`: its table is sized up
// front to max(n / 0.75 + 1, 16) rounded up to a power of two, so it may differ from the grown
// table java_hash_order models.
[[nodiscard]] std::vector<Uuid> java_hash_set_copy_order(std::vector<Uuid> keys);
}  // namespace detail

}  // namespace weir::group
