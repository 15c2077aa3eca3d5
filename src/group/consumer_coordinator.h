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
// A group's session timeout, heartbeat interval and assignment interval are its group configs
// where set (ConsumerGroupConfig::overrides), else the broker's.
//
// Departures from Kafka 4.3.1 (not yet done): migration from/to classic groups; the metadata hash is
// weir's own fingerprint of (name, id, partition count) of the subscribed topics, not Kafka's; the
// assignment is computed in the heartbeat (Kafka 4.3 offloads it to an executor); regexes are
// resolved without an authorizer's DESCRIBE filter (weir has no ACL enforcement), and over the
// topics that have partitions.
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
#include <vector>

#include "base/result.h"
#include "group/consumer_group.h"
#include "protocol/gen/consumer_group_describe_request.h"
#include "protocol/gen/consumer_group_describe_response.h"
#include "protocol/gen/consumer_group_heartbeat_request.h"
#include "protocol/gen/consumer_group_heartbeat_response.h"

namespace weir::group {

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

class ConsumerGroupCoordinator {
 public:
  struct Heartbeat {
    protocol::ConsumerGroupHeartbeatResponse response;
    std::vector<Record> records;
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

  [[nodiscard]] const std::map<std::string, ConsumerGroup>& groups() const { return groups_; }
  [[nodiscard]] const ConsumerGroup* group(const std::string& group_id) const;
  // Applies records the caller built (DeleteGroups).
  void apply(const std::vector<Record>& records);

  struct MemberTimers {
    std::int64_t session_deadline_ms = std::numeric_limits<std::int64_t>::max();
    std::int64_t rebalance_deadline_ms = std::numeric_limits<std::int64_t>::max();
    std::int32_t rebalance_epoch = -1;  // the epoch the member must leave by the deadline
  };
  [[nodiscard]] const MemberTimers* timers(const std::string& group_id, const std::string& member_id) const;

  // One event's working copy of a group (consumer_coordinator.cpp).
  class Event;

 private:
  Result<Heartbeat, GroupError> leave(const protocol::ConsumerGroupHeartbeatRequest& req, const TopicImage& topics,
                                      std::int64_t now_ms);
  Result<Heartbeat, GroupError> join_or_heartbeat(const protocol::ConsumerGroupHeartbeatRequest& req,
                                                  const ClientInfo& client, const TopicImage& topics,
                                                  std::int64_t now_ms);

  // Kafka's lastMetadataImageWithNewTopics: the version of the first image seen, then of each
  // image that brought topics the previous one did not have.
  void observe_topics(const TopicImage& topics);

  // The values in force for one group: its overrides, else the broker's.
  [[nodiscard]] std::int32_t session_timeout_ms(const std::string& group_id) const;
  [[nodiscard]] std::int32_t heartbeat_interval_ms(const std::string& group_id) const;
  [[nodiscard]] std::int32_t assignment_interval_ms(const std::string& group_id) const;

  std::map<std::string, ConsumerGroup> groups_;
  std::map<std::string, std::map<std::string, MemberTimers>> timers_;
  std::optional<std::int64_t> observed_version_;
  std::set<Uuid> observed_topics_;
  std::int64_t last_image_with_new_topics_ = -1;
  ConsumerGroupConfig config_;
  std::mt19937_64 rng_;
};

}  // namespace weir::group
