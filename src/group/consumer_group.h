// One consumer group of the consumer rebalance protocol (KIP-848): its group epoch, members,
// target assignment, the members' current assignments and its resolved regular expressions,
// rebuilt only from the records of `__consumer_offsets` (apply()). The coordinator's live path
// emits records and applies them through the same apply(), so a live group and a replayed one
// cannot drift.
//
// Records (Kafka 4.3.1's layouts; key = int16 record type + key struct v0 (not flexible),
// value = int16 version 0 + flexible value struct, tombstone = no value):
//   type 3  ConsumerGroupMetadata               group          -> epoch, metadata hash (tag 0)
//   type 4  ConsumerGroupPartitionMetadata      group          -> only whether one is live (4.3 writes
//                                                                none; its next metadata refresh
//                                                                tombstones one an older Kafka wrote)
//   type 5  ConsumerGroupMemberMetadata         group, member  -> subscription (names sorted)
//   type 6  ConsumerGroupTargetAssignmentMetadata group        -> assignment epoch, timestamp (tag 0)
//   type 7  ConsumerGroupTargetAssignmentMember group, member  -> target partitions
//   type 8  ConsumerGroupCurrentMemberAssignment group, member -> epochs, state, assigned and
//                                                                pending-revocation partitions,
//                                                                each with its assignment epochs (tag 0)
//   type 16 ConsumerGroupRegularExpression       group, regex  -> the topics it resolved to (sorted),
//                                                                the metadata version and the time
//                                                                of that resolution
// A member leaves with tombstones 8, 7, 5 (in that order), then 16 for a regex no member
// subscribes to any more; the group is deleted with 6, 16 (each resolved regex), 4, 3.
//
// The group's subscribed topics are the names its members subscribe to and the topics of its
// resolved regular expressions; a member subscribed by regex is subscribed to the topics its
// regex resolved to (none before it is resolved).
//
// Invariant (asserted in apply): a partition is owned (assigned or pending revocation) by at
// most one member at a time.
//
// Single-threaded: owned by the coordinator's shard.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "base/uuid.h"
#include "group/classic_group.h"
#include "group/offset_manager.h"
#include "protocol/codec.h"

namespace weir::group {

// The topics the host knows (a snapshot of its metadata image), which the coordinator needs to
// turn subscriptions by name into topic ids and partition counts. The host builds one per event
// (or keeps one up to date); the coordinator only reads it.
class TopicImage {
 public:
  struct Topic {
    Uuid id;
    std::string name;
    std::int32_t partition_count = 0;
    // Per partition, the racks of its replicas (one per replica whose broker has a rack); empty
    // when the host knows no racks. The metadata hash covers them (metadata_hash.h).
    std::vector<std::vector<std::string>> partition_racks;
    bool operator==(const Topic&) const = default;
  };

  void add_topic(std::string name, Uuid id, std::int32_t partition_count,
                 std::vector<std::vector<std::string>> partition_racks = {});
  [[nodiscard]] const Topic* by_name(std::string_view name) const;
  [[nodiscard]] const Topic* by_id(const Uuid& id) const;
  // Every topic, by name.
  [[nodiscard]] const std::map<std::string, Topic, std::less<>>& topics() const { return by_name_; }

  // The metadata version of the image (Kafka's MetadataImage provenance offset): what a resolved
  // regular expression records, to know whether topics were created since.
  [[nodiscard]] std::int64_t version() const { return version_; }
  void set_version(std::int64_t version) { version_ = version; }

 private:
  std::map<std::string, Topic, std::less<>> by_name_;
  std::map<Uuid, std::string> names_;
  std::int64_t version_ = 0;
};

// Kafka's MemberState, with its record values.
enum class MemberState : std::int8_t {
  kStable = 0,
  kUnrevokedPartitions = 1,
  kUnreleasedPartitions = 2,
  kUnknown = 127,
};
[[nodiscard]] std::string_view to_string(MemberState s);

// Kafka's ConsumerGroupState, as DescribeGroups/ListGroups/ConsumerGroupDescribe spell it.
enum class ConsumerGroupState { kEmpty, kAssigning, kReconciling, kStable, kDead };
[[nodiscard]] std::string_view to_string(ConsumerGroupState s);

// topic -> partition -> the epoch at which it was assigned to the member.
using PartitionEpochs = std::map<Uuid, std::map<std::int32_t, std::int32_t>>;
// topic -> partitions.
using TopicPartitionSet = std::map<Uuid, std::set<std::int32_t>>;

[[nodiscard]] TopicPartitionSet partitions_of(const PartitionEpochs& p);

// What a member that joined through JoinGroup (the classic protocol) sent there: its session
// timeout and its protocols (Kafka's ClassicMemberMetadata of record type 5).
struct ClassicMemberMetadata {
  std::int32_t session_timeout_ms = 0;
  std::vector<Protocol> protocols;  // in the member's order of preference
  bool operator==(const ClassicMemberMetadata&) const = default;
};

constexpr std::int32_t kLeaveGroupMemberEpoch = -1;
constexpr std::int32_t kLeaveGroupStaticMemberEpoch = -2;

struct ConsumerMember {
  std::string member_id;
  // From type 8.
  std::int32_t member_epoch = 0;
  std::int32_t previous_member_epoch = -1;
  MemberState state = MemberState::kStable;
  PartitionEpochs assigned;
  PartitionEpochs pending_revocation;
  // From type 5.
  std::optional<std::string> instance_id;
  std::optional<std::string> rack_id;
  std::int32_t rebalance_timeout_ms = -1;
  std::string client_id;
  std::string client_host;
  std::vector<std::string> subscribed_topic_names;  // sorted, unique
  std::string subscribed_topic_regex;               // "" when none, as Kafka keeps it
  std::optional<std::string> server_assignor;
  std::optional<ClassicMemberMetadata> classic;  // set: the member uses the classic protocol

  [[nodiscard]] bool uses_classic() const { return classic.has_value(); }
  // Kafka's isReconciledTo.
  [[nodiscard]] bool reconciled_to(std::int32_t epoch) const {
    return state == MemberState::kStable && member_epoch == epoch;
  }
  [[nodiscard]] bool same_subscription_record(const ConsumerMember& o) const;
  [[nodiscard]] bool same_assignment_record(const ConsumerMember& o) const;
  bool operator==(const ConsumerMember&) const = default;
};

// A regular expression of the group resolved against the topics (Kafka's ResolvedRegularExpression).
struct ResolvedRegex {
  std::set<std::string> topics;
  std::int64_t version = 0;       // the TopicImage version it was resolved against
  std::int64_t timestamp_ms = 0;  // when it was resolved
  bool operator==(const ResolvedRegex&) const = default;
};

class ConsumerGroup {
 public:
  explicit ConsumerGroup(std::string group_id) : group_id_(std::move(group_id)) {}

  [[nodiscard]] const std::string& group_id() const { return group_id_; }
  [[nodiscard]] std::int32_t group_epoch() const { return group_epoch_; }
  [[nodiscard]] std::int64_t metadata_hash() const { return metadata_hash_; }
  // A type 4 record is live (Kafka's hasSubscriptionMetadataRecord).
  [[nodiscard]] bool has_partition_metadata_record() const { return has_partition_metadata_record_; }
  [[nodiscard]] std::int32_t assignment_epoch() const { return assignment_epoch_; }
  [[nodiscard]] std::int64_t assignment_timestamp_ms() const { return assignment_timestamp_ms_; }
  [[nodiscard]] const std::map<std::string, ConsumerMember>& members() const { return members_; }
  [[nodiscard]] const ConsumerMember* member(const std::string& member_id) const;
  [[nodiscard]] const ConsumerMember* static_member(const std::string& instance_id) const;
  [[nodiscard]] const std::map<std::string, TopicPartitionSet>& target_assignment() const { return target_; }
  [[nodiscard]] const TopicPartitionSet& target_of(const std::string& member_id) const;
  // The member owning (assigned or pending revocation) a partition, if any (Kafka's
  // currentPartitionEpoch != -1).
  [[nodiscard]] bool partition_owned(const Uuid& topic, std::int32_t partition) const {
    return owners_.contains({topic, partition});
  }
  // The member owning the partition, nullptr if none.
  [[nodiscard]] const std::string* owner_of(const Uuid& topic, std::int32_t partition) const {
    auto it = owners_.find({topic, partition});
    return it == owners_.end() ? nullptr : &it->second;
  }
  [[nodiscard]] ConsumerGroupState state() const;
  // Every topic name some member subscribes to, and every topic of a resolved regex.
  [[nodiscard]] std::set<std::string> subscribed_topic_names() const;
  // The topics a member is subscribed to: its names and what its regex resolved to.
  [[nodiscard]] std::set<std::string> member_topic_names(const ConsumerMember& m) const;

  // Regular expressions: by regex, the ones resolved (type 16 records).
  [[nodiscard]] const std::map<std::string, ResolvedRegex>& resolved_regexes() const { return resolved_regexes_; }
  [[nodiscard]] const ResolvedRegex* resolved_regex(const std::string& regex) const;
  // Members subscribed to `regex` (Kafka's numSubscribedMembers).
  [[nodiscard]] std::size_t regex_subscribers(const std::string& regex) const;
  // Regex -> number of members subscribed to it.
  [[nodiscard]] std::map<std::string, std::size_t> subscribed_regexes() const;

  // Record application: the only way the group changes. Each takes a decoded value, or nullopt
  // for a tombstone.
  void apply_group_epoch(std::optional<std::pair<std::int32_t, std::int64_t>> epoch_and_hash);
  void apply_partition_metadata(bool present) { has_partition_metadata_record_ = present; }
  void apply_member_subscription(const std::string& member_id, const ConsumerMember* subscription);
  void apply_target_metadata(std::optional<std::pair<std::int32_t, std::int64_t>> epoch_and_timestamp);
  void apply_target_member(const std::string& member_id, const TopicPartitionSet* target);
  void apply_current_assignment(const std::string& member_id, const ConsumerMember* assignment);
  void apply_regex(const std::string& regex, const ResolvedRegex* resolved);

  bool operator==(const ConsumerGroup&) const = default;

 private:
  void remove_owners(const ConsumerMember& m);
  void add_owners(const ConsumerMember& m);

  std::string group_id_;
  std::int32_t group_epoch_ = 0;
  std::int64_t metadata_hash_ = 0;
  bool has_partition_metadata_record_ = false;
  std::int32_t assignment_epoch_ = 0;
  std::int64_t assignment_timestamp_ms_ = 0;
  std::map<std::string, ConsumerMember> members_;
  std::map<std::string, std::string> static_members_;  // instance id -> member id
  std::map<std::string, TopicPartitionSet> target_;
  std::map<std::pair<Uuid, std::int32_t>, std::string> owners_;
  std::map<std::string, ResolvedRegex> resolved_regexes_;
};

// ---- Records ------------------------------------------------------------------------------

// Record types (the int16 that starts a key) of the consumer protocol in `__consumer_offsets`.
enum class ConsumerRecordType : std::int16_t {
  kGroupMetadata = 3,
  kPartitionMetadata = 4,
  kMemberMetadata = 5,
  kTargetAssignmentMetadata = 6,
  kTargetAssignmentMember = 7,
  kCurrentMemberAssignment = 8,
  kRegularExpression = 16,
};
[[nodiscard]] bool is_consumer_record_type(std::int16_t key_version);

namespace consumer_records {
Record group_epoch(const std::string& group_id, std::int32_t epoch, std::int64_t metadata_hash);
Record group_epoch_tombstone(const std::string& group_id);
Record partition_metadata_tombstone(const std::string& group_id);
Record member_subscription(const std::string& group_id, const ConsumerMember& m);
Record member_subscription_tombstone(const std::string& group_id, const std::string& member_id);
Record target_metadata(const std::string& group_id, std::int32_t epoch, std::int64_t timestamp_ms);
Record target_metadata_tombstone(const std::string& group_id);
Record target_member(const std::string& group_id, const std::string& member_id, const TopicPartitionSet& target);
Record target_member_tombstone(const std::string& group_id, const std::string& member_id);
Record current_assignment(const std::string& group_id, const ConsumerMember& m);
Record current_assignment_tombstone(const std::string& group_id, const std::string& member_id);
Record regex(const std::string& group_id, const std::string& regex, const ResolvedRegex& resolved);
Record regex_tombstone(const std::string& group_id, const std::string& regex);
}  // namespace consumer_records

// Applies one consumer-protocol record (its key already read past the int16 type) to `groups`,
// creating the group when a record names one that does not exist, and removing it on the
// group-epoch tombstone.
Status<ReplayError> replay_consumer_record(std::map<std::string, ConsumerGroup>& groups, std::int16_t type,
                                           protocol::Reader& key_reader,
                                           std::optional<std::span<const std::uint8_t>> value);

}  // namespace weir::group
