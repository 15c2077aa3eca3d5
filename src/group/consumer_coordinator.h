// ConsumerGroupCoordinator: the consumer rebalance protocol (KIP-848) of the groups one
// `__consumer_offsets` partition owns, as a pure state machine like the classic one
// (coordinator.h owns it and routes to it). ConsumerGroupHeartbeat joins, heartbeats and leaves;
// the coordinator bumps the group epoch when membership, subscriptions or the subscribed topics'
// metadata change, recomputes the target assignment with a server-side assignor (assignor.h), at
// most once per assignment interval, and reconciles each member towards it
// (current_assignment.h).
//
// Regular-expression subscriptions (SubscribedTopicRegex, topic_regex.h), as Kafka 4.3.1 runs
// them: a regex new to the group is checked (INVALID_REGULAR_EXPRESSION) and resolved against
// every topic of the image; a heartbeat resolves the group's regexes again when one is not
// resolved yet, when topics were created since the last resolution, or when
// group.consumer.regex.refresh.interval.ms has passed, never twice within 10 s. The result is a
// type 16 record per regex, and a group epoch bump when a regex's topics or the subscribed
// topics' metadata changed; a regex no member subscribes to any more is tombstoned. Kafka
// resolves on an executor and writes the result in a later write; weir resolves in the same
// event, after the heartbeat's own records, so the member sees the new epoch on its next
// heartbeat as it does with Kafka.
//
// Every change is a record (consumer_group.h lists them) applied through the same code replay
// uses: an event works on a copy of its group, emits records into the copy, and the copy
// replaces the group only if the event succeeds, so a failed event changes nothing.
//
// Timers (not persisted, re-armed by finish_replay): a member's session expires
// session_timeout_ms after its last heartbeat; a member in UNREVOKED_PARTITIONS that does not
// move past its epoch within its rebalance timeout is fenced. Both remove the member.
//
// Migration with classic groups (group.consumer.migration.policy), as Kafka 4.3.1: a classic
// group converts into a consumer group when a ConsumerGroupHeartbeat joins it (its members keep
// their generation as member epoch, their subscriptions and assignments, and the JoinGroup
// metadata in record 5's ClassicMemberMetadata); classic members then join, sync, heartbeat and
// leave a consumer group with the classic APIs (classic_*): a JoinGroup reconciles the member like
// a heartbeat reporting its owned partitions, SyncGroup hands out its current assignment, and
// Heartbeat answers REBALANCE_IN_PROGRESS while it must rejoin; a JoinGroup is due within the
// rebalance timeout of that answer and a SyncGroup within that of the join, else the member is
// fenced. When the last consumer-protocol member leaves or is fenced and classic members remain,
// the group is deleted with Kafka's tombstones and handed back (take_downgrades) to become a
// classic group again.
//
// A group's session timeout, heartbeat interval and assignment interval are its group configs
// where set (ConsumerGroupConfig::overrides), else the broker's.
//
// A static classic member that joins in place of the last consumer-protocol member (same instance
// id) downgrades the group too (Kafka's validateOnlineDowngradeWithReplacedMember): it is
// reconciled against its predecessor's target unless that target is stale, and joins the classic
// group last with that target.
//
// The metadata hash (record 3) is Kafka's (metadata_hash.h). As Kafka, a heartbeat computes it
// when it bumps the group epoch anyway or when the group's metadata refresh is due: the group's
// first heartbeat after its creation or load, and the first after the topic image changed (Kafka:
// after a topic the group subscribes to changed; for the others the hash comes out the same);
// a changed hash bumps the epoch. Fencing a member and resolving regexes compute it too.
//
// Departures from Kafka 4.3.1 (not yet done): the assignment is computed in the heartbeat (Kafka
// 4.3 offloads it to an executor); regexes are resolved without an authorizer's DESCRIBE filter
// (weir has no ACL enforcement), and over the topics that have partitions.
//
// Single-threaded: owned by one shard.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"
#include "group/consumer_group.h"
#include "group/metadata_hash.h"
#include "protocol/gen/consumer_group_describe_request.h"
#include "protocol/gen/consumer_group_describe_response.h"
#include "protocol/gen/consumer_group_heartbeat_request.h"
#include "protocol/gen/consumer_group_heartbeat_response.h"

namespace weir::group {

// group.consumer.migration.policy: which online conversions between classic and consumer groups
// are allowed (Kafka's ConsumerGroupMigrationPolicy).
enum class MigrationPolicy { kDisabled, kUpgrade, kDowngrade, kBidirectional };
// The policy a config value names, in any case (nullopt for another value).
[[nodiscard]] std::optional<MigrationPolicy> parse_migration_policy(std::string_view value);
[[nodiscard]] inline bool upgrade_enabled(MigrationPolicy p) {
  return p == MigrationPolicy::kUpgrade || p == MigrationPolicy::kBidirectional;
}
[[nodiscard]] inline bool downgrade_enabled(MigrationPolicy p) {
  return p == MigrationPolicy::kDowngrade || p == MigrationPolicy::kBidirectional;
}
// A group's own values (group configs, KIP-848: consumer.session.timeout.ms, ...), already
// capped to the broker's bounds; an unset field takes the broker's value.
struct ConsumerGroupOverrides {
  std::optional<std::int32_t> session_timeout_ms;
  std::optional<std::int32_t> heartbeat_interval_ms;
  std::optional<std::int32_t> assignment_interval_ms;
};

// Broker configs of the consumer protocol, Kafka 4.3.1's names and defaults.
struct ConsumerGroupConfig {
  std::int32_t session_timeout_ms = 45000;                           // group.consumer.session.timeout.ms
  std::int32_t heartbeat_interval_ms = 5000;                         // group.consumer.heartbeat.interval.ms
  std::int32_t max_size = std::numeric_limits<std::int32_t>::max();  // group.consumer.max.size
  std::int32_t assignment_interval_ms = 1000;                        // group.consumer.assignment.interval.ms
  std::int32_t regex_refresh_interval_ms = 600000;                   // group.consumer.regex.refresh.interval.ms
  // group.consumer.assignors: the first is the default when no member names one.
  std::vector<std::string> assignors = {"uniform", "range"};
  MigrationPolicy migration_policy = MigrationPolicy::kBidirectional;  // group.consumer.migration.policy
  // The group configs of a group id, as the host knows them now (none when empty).
  std::function<ConsumerGroupOverrides(const std::string& group_id)> overrides;
};

// Who sent a request (the host fills it from the request header and the connection).
struct ClientInfo {
  std::string client_id;
  std::string client_host;  // as Kafka prints InetAddress: "/10.0.0.1"
};

// An error answered to a request: Kafka's code and message.
struct GroupError {
  Error code = Error::kNone;
  std::string message;
};

// What an OffsetCommit from a consumer group's member may do (Kafka's CommitPartitionValidator).
struct CommitCheck {
  GroupError group_error;  // whole-request error
  // Set when the commit came with an older epoch: per-partition check (KIP-1251).
  std::function<GroupError(const std::string& topic, std::int32_t partition)> per_partition;
};

// A JoinGroup of the classic protocol to a consumer group (the fields the coordinator reads,
// with the defaults of old versions resolved).
struct ClassicJoinRequest {
  std::string group_id;
  std::string member_id;  // "" for a member without one
  std::optional<std::string> instance_id;
  std::int32_t session_timeout_ms = 0;
  std::int32_t rebalance_timeout_ms = 0;
  std::string protocol_type;
  std::vector<Protocol> protocols;
  bool requires_known_member_id = false;  // v4+ and dynamic: answer MEMBER_ID_REQUIRED first
};

// What a classic member of a consumer group gets back from JoinGroup / SyncGroup.
struct ClassicJoined {
  std::string member_id;
  std::int32_t generation_id = 0;  // the member epoch
  std::string protocol_name;
  Error error = Error::kNone;  // kMemberIdRequired, with member_id set
  std::vector<Record> records;
};

// A consumer group that became a classic group again (Kafka's convertToClassicGroup): the group
// as it was, and the consumer-protocol member whose departure caused it (not carried over).
struct Downgrade {
  ConsumerGroup group;
  std::string leaving_member_id;
  // A static classic member that replaced the last consumer-protocol one (the leaving member is
  // then none): it is added to the classic group last.
  std::string joining_member_id;
};

class ConsumerGroupCoordinator {
 public:
  struct Heartbeat {
    protocol::ConsumerGroupHeartbeatResponse response;
    std::vector<Record> records;
    bool downgraded = false;  // a classic join turned the group classic (take_downgrades)
  };

  explicit ConsumerGroupCoordinator(ConsumerGroupConfig config, std::uint64_t seed = 0);

  // Kafka's request validation (GroupCoordinatorService); kNone when the request is well formed.
  [[nodiscard]] GroupError validate(const protocol::ConsumerGroupHeartbeatRequest& req, std::int16_t version) const;

  // A validated heartbeat (join: epoch 0, heartbeat: > 0, leave: -1 / -2). The group id is
  // known not to be a classic group's.
  Heartbeat heartbeat(const protocol::ConsumerGroupHeartbeatRequest& req, const ClientInfo& client,
                      const TopicImage& topics, std::int64_t now_ms);

  [[nodiscard]] protocol::ConsumerGroupDescribeResponse::DescribedGroup describe(const std::string& group_id,
                                                                                 const TopicImage& topics) const;

  // OffsetCommit/TxnOffsetCommit checks of a consumer group (Kafka's validateOffsetCommit).
  [[nodiscard]] CommitCheck validate_commit(const ConsumerGroup& g, const std::string& member_id,
                                            const std::optional<std::string>& instance_id, std::int32_t member_epoch,
                                            bool transactional, std::int16_t version, const TopicImage* topics) const;

  // DeleteGroups of an Empty group: the records that delete it (the caller applies them).
  [[nodiscard]] std::vector<Record> delete_records(const ConsumerGroup& g) const;

  // Fences every member whose session or rebalance timeout is due; returns the records.
  // `topics` (may be null) recomputes the metadata hash without the fenced member.
  std::vector<Record> tick(const TopicImage* topics, std::int64_t now_ms);
  [[nodiscard]] std::optional<std::int64_t> next_deadline_ms() const;

  // At load: applies one record of type `type` (key read past its type).
  Status<ReplayError> replay(std::int16_t type, protocol::Reader& key_reader,
                             std::optional<std::span<const std::uint8_t>> value);
  // Ends loading: arms every member's session timer from `now_ms` (and the rebalance timer of a
  // member still revoking).
  void finish_replay(std::int64_t now_ms);

  // ---- Migration with classic groups (Kafka 4.3.1's online upgrade and downgrade) ----
  // A classic group of "consumer" protocol members converted into a consumer group (Kafka's
  // ConsumerGroup.fromClassicGroup): its records (members 5, epoch 3, targets 7, 6, current
  // assignments 8), applied here, with each member's session timer armed from its classic session
  // timeout. GROUP_ID_NOT_FOUND with Kafka's text when a member's embedded protocol is unreadable
  // or a custom assignor's user data would be lost. The caller writes the classic tombstone first.
  Result<std::vector<Record>, GroupError> convert_from_classic(const ClassicGroup& classic, const TopicImage& topics,
                                                               std::int64_t now_ms);
  // Forgets a group and its timers without records (undoes convert_from_classic when the
  // heartbeat that caused it then fails).
  void forget(const std::string& group_id);

  // JoinGroup / SyncGroup / Heartbeat / LeaveGroup of classic members of a non-empty consumer
  // group (Kafka's classicGroup*ToConsumerGroup). The member's assignment comes from the target
  // assignment through the same reconciliation as a consumer-protocol member's; its member epoch
  // is its generation.
  Result<ClassicJoined, GroupError> classic_join(const ClassicJoinRequest& req, const ClientInfo& client,
                                                 const TopicImage& topics, std::int64_t now_ms);
  // The member's assignment (ConsumerProtocolAssignment at its protocol's version) or the error.
  Result<Bytes, GroupError> classic_sync(const std::string& group_id, const std::string& member_id,
                                         const std::optional<std::string>& instance_id, std::int32_t generation_id,
                                         const std::optional<std::string>& protocol_type,
                                         const std::optional<std::string>& protocol_name, const TopicImage& topics,
                                         std::int64_t now_ms);
  [[nodiscard]] GroupError classic_heartbeat(const std::string& group_id, const std::string& member_id,
                                             const std::optional<std::string>& instance_id, std::int32_t generation_id,
                                             std::int64_t now_ms);
  struct Leaving {
    std::string member_id;
    std::optional<std::string> instance_id;
  };
  struct LeaveResult {
    std::vector<std::pair<std::string, Error>> members;  // member id (resolved) and its error
    std::vector<Record> records;
  };
  LeaveResult classic_leave(const std::string& group_id, const std::vector<Leaving>& leaving, const TopicImage* topics,
                            std::int64_t now_ms);
  // Groups that turned classic since the last call (a consumer-protocol member left or was fenced
  // and only classic members remain); the caller recreates them as classic groups.
  std::vector<Downgrade> take_downgrades() { return std::exchange(downgrades_, {}); }
  // The classic group size limit a downgrade must fit (group.max.size).
  void set_classic_max_size(std::int32_t n) { classic_max_size_ = n; }

  [[nodiscard]] const std::map<std::string, ConsumerGroup>& groups() const { return groups_; }
  [[nodiscard]] const ConsumerGroup* group(const std::string& group_id) const;
  // Applies records the caller built (DeleteGroups).
  void apply(const std::vector<Record>& records);

  struct MemberTimers {
    std::int64_t session_deadline_ms = std::numeric_limits<std::int64_t>::max();
    std::int64_t rebalance_deadline_ms = std::numeric_limits<std::int64_t>::max();
    std::int32_t rebalance_epoch = -1;  // the epoch the member must leave by the deadline
    // Classic members: a JoinGroup is due after REBALANCE_IN_PROGRESS, a SyncGroup after a join.
    std::int64_t join_deadline_ms = std::numeric_limits<std::int64_t>::max();
    std::int64_t sync_deadline_ms = std::numeric_limits<std::int64_t>::max();
  };
  [[nodiscard]] const MemberTimers* timers(const std::string& group_id, const std::string& member_id) const;

  // One event's working copy of a group (consumer_coordinator.cpp).
  class Event;

 private:
  Result<Heartbeat, GroupError> leave(const protocol::ConsumerGroupHeartbeatRequest& req, const TopicImage& topics,
                                      std::int64_t now_ms);
  // `classic`: the request is a classic member's JoinGroup (classic_join), translated.
  Result<Heartbeat, GroupError> join_or_heartbeat(const protocol::ConsumerGroupHeartbeatRequest& req,
                                                  const ClientInfo& client, const TopicImage& topics,
                                                  std::int64_t now_ms, const ClassicJoinRequest* classic = nullptr);

  // Whether fencing `member_id` leaves only classic members, so that the group turns classic.
  [[nodiscard]] bool downgrades_without(const ConsumerGroup& g, const std::string& member_id) const;
  // Whether a static classic member replacing `replaced_id` downgrades the group.
  [[nodiscard]] bool downgrades_with_replacement(const ConsumerGroup& g, const std::string& replaced_id) const;
  // The end of such a join: the member reconciled, the group handed to take_downgrades.
  Result<Heartbeat, GroupError> replaced_and_downgraded(Event& ev, const std::string& member_id,
                                                        const protocol::ConsumerGroupHeartbeatRequest& req);
  // Removes a member (timers included), or downgrades the group when that is due.
  void fence_or_downgrade(Event& ev, const std::string& member_id, const TopicImage* topics);

  // Kafka's lastMetadataImageWithNewTopics: the version of the first image seen, then of each
  // image that brought topics the previous one did not have. Forgets the topic hashes of topics
  // the image does not have.
  void observe_topics(const TopicImage& topics);
  // Kafka's hasMetadataExpired: the group's metadata hash is due to be computed again on a
  // heartbeat (never computed since the group was created or loaded, or the image changed since).
  [[nodiscard]] bool metadata_refresh_due(const ConsumerGroup& g, const TopicImage& topics) const;

  // The values in force for one group: its overrides, else the broker's.
  [[nodiscard]] std::int32_t session_timeout_ms(const std::string& group_id) const;
  [[nodiscard]] std::int32_t heartbeat_interval_ms(const std::string& group_id) const;
  [[nodiscard]] std::int32_t assignment_interval_ms(const std::string& group_id) const;

  std::map<std::string, ConsumerGroup> groups_;
  std::map<std::string, std::map<std::string, MemberTimers>> timers_;
  std::optional<std::int64_t> observed_version_;
  std::set<Uuid> observed_topics_;
  std::int64_t last_image_with_new_topics_ = -1;
  TopicHashCache topic_hashes_;
  // Kafka's metadataRefreshDeadline (not persisted): by group, the image version and group epoch
  // of its last metadata refresh.
  struct MetadataRefresh {
    std::int64_t image_version = 0;
    std::int32_t group_epoch = 0;
  };
  std::map<std::string, MetadataRefresh> metadata_refreshes_;
  ConsumerGroupConfig config_;
  std::mt19937_64 rng_;
  std::vector<Downgrade> downgrades_;
  std::int32_t classic_max_size_ = std::numeric_limits<std::int32_t>::max();
};

}  // namespace weir::group
