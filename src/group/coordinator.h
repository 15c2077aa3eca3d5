// GroupCoordinator: the classic group protocol and committed offsets of the groups one
// `__consumer_offsets` partition owns, as a pure state machine (DESIGN.md, "Coordinators are
// pure state machines"). Each event takes the time `now_ms` (wall-clock milliseconds, as Kafka's
// coordinator uses Time.milliseconds() for commit timestamps and deadlines alike) and returns
// effects; nothing here does I/O or reads a clock.
//
// Effects, applied by the host in order: append `records` to the partition, then send the
// responses. JoinGroup and SyncGroup are answered through effects, possibly from a later event:
// the host passes a RequestHandle with the request and sends each JoinReply / SyncReply it gets
// back to the connection holding that handle. Every handle is answered exactly once.
// The state already reflects the records (the host treats a failed append as fatal for the
// partition and reloads it by replay).
//
// Record layouts in `__consumer_offsets` (Kafka's, so its tools read them):
//   key   = int16 key version + key struct;   value = int16 value version + value struct;
//   a tombstone has a null value.
//   offset commit   key version 1 (OffsetCommitKey v0 fields: group, topic, partition)
//                   value OffsetCommitValue v3, or v1 when the commit sets an expire timestamp
//   group metadata  key version 2 (GroupMetadataKey: group)
//                   value GroupMetadataValue v3
// replay() accepts key versions 0 and 1 for offsets and 2 for groups, values at any version.
// A TxnOffsetCommit writes offset records in a transactional batch (the producer's id and epoch,
// the transactional attribute); the transaction's marker (a control batch, written by the
// transaction coordinator) later commits or aborts them. Committed offsets live in the
// OffsetManager (offset_manager.h).
//
// Timers are deadlines kept in the state; tick(now_ms) fires those that are due and
// next_deadline_ms() says when the next one is. The host should tick at that deadline: a late
// tick fires a timer late (e.g. an initial-rebalance-delay round then starts from the late tick).
//
// Behaviour follows Kafka 4's classic group coordinator, including: KIP-394 member ids
// ("<client.id>-<uuid>", MEMBER_ID_REQUIRED from JoinGroup v4); the initial rebalance delay
// extended while members keep arriving, within the rebalance timeout; dynamic members that do not
// rejoin in time are dropped while static ones stay until their session expires; a restarted
// static member (KIP-345) takes over its old member id without a rebalance unless the group's
// selected protocol would change (v9+ tells a restarted leader to skip assignment, KIP-814);
// members that never send SyncGroup are evicted after the rebalance timeout.
// JoinGroup, SyncGroup, Heartbeat, LeaveGroup and OffsetCommit of a group that is a consumer
// group go to its classic members' paths (consumer_coordinator.h); a JoinGroup to an empty one
// replaces it by a classic group. A ConsumerGroupHeartbeat joining a classic group with members
// converts it (the online upgrade: the classic group's tombstone, then the consumer group's
// records); a consumer group left with only classic members becomes a classic group again, in
// PreparingRebalance (the downgrade: the consumer group's tombstones, then a GroupMetadata record).
// One departure forced by the handle model: if a member sends a second JoinGroup while one is
// held, the held one is answered REBALANCE_IN_PROGRESS (Kafka drops it and lets it time out).
//
// Single-threaded: owned by one shard.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "base/result.h"
#include "group/classic_group.h"
#include "group/consumer_coordinator.h"
#include "group/offset_manager.h"
#include "protocol/gen/delete_groups_request.h"
#include "protocol/gen/delete_groups_response.h"
#include "protocol/gen/describe_groups_request.h"
#include "protocol/gen/describe_groups_response.h"
#include "protocol/gen/heartbeat_request.h"
#include "protocol/gen/heartbeat_response.h"
#include "protocol/gen/join_group_request.h"
#include "protocol/gen/join_group_response.h"
#include "protocol/gen/leave_group_request.h"
#include "protocol/gen/leave_group_response.h"
#include "protocol/gen/list_groups_request.h"
#include "protocol/gen/list_groups_response.h"
#include "protocol/gen/offset_commit_request.h"
#include "protocol/gen/offset_commit_response.h"
#include "protocol/gen/offset_delete_request.h"
#include "protocol/gen/offset_delete_response.h"
#include "protocol/gen/offset_fetch_request.h"
#include "protocol/gen/offset_fetch_response.h"
#include "protocol/gen/sync_group_request.h"
#include "protocol/gen/sync_group_response.h"
#include "protocol/gen/txn_offset_commit_request.h"
#include "protocol/gen/txn_offset_commit_response.h"

namespace weir::group {

// Broker configs, Kafka's names and defaults.
struct GroupConfig {
  std::int32_t min_session_timeout_ms = 6000;                     // group.min.session.timeout.ms
  std::int32_t max_session_timeout_ms = 1'800'000;                // group.max.session.timeout.ms
  std::int32_t initial_rebalance_delay_ms = 3000;                 // group.initial.rebalance.delay.ms
  std::int32_t max_size = 2'147'483'647;                          // group.max.size
  std::int32_t offset_metadata_max_bytes = 4096;                  // offset.metadata.max.bytes
  std::int32_t new_member_join_timeout_ms = 5 * 60 * 1000;        // Kafka's fixed 5 minutes
  std::int64_t offsets_retention_ms = 7LL * 24 * 60 * 60 * 1000;  // offsets.retention.minutes
  // offsets.retention.check.interval.ms: how often the host calls expire_offsets().
  std::int64_t offsets_retention_check_interval_ms = 600000;
  std::uint64_t member_id_seed = 0;  // seeds the member-id generator (0: random_device)
  ConsumerGroupConfig consumer;      // the consumer protocol's (KIP-848) group.consumer.* configs
};

struct JoinReply {
  RequestHandle handle = 0;
  std::int16_t version = 0;
  protocol::JoinGroupResponse response;
};

struct SyncReply {
  RequestHandle handle = 0;
  std::int16_t version = 0;
  protocol::SyncGroupResponse response;
};

struct Effects {
  std::vector<Record> records;
  // Set: `records` are a transactional batch of that producer (TxnOffsetCommit).
  std::optional<TransactionalBatch> transactional;
  std::vector<JoinReply> joins;
  std::vector<SyncReply> syncs;
};

// An immediate response plus the effects the event had.
template <class Response>
struct Reply {
  Response response;
  Effects effects;
};

class GroupCoordinator {
 public:
  explicit GroupCoordinator(GroupConfig config = {});

  Effects join_group(RequestHandle handle, const protocol::JoinGroupRequest& req, std::int16_t version,
                     const std::string& client_id, const std::string& client_host, std::int64_t now_ms);
  Effects sync_group(RequestHandle handle, const protocol::SyncGroupRequest& req, std::int16_t version,
                     std::int64_t now_ms);
  Reply<protocol::HeartbeatResponse> heartbeat(const protocol::HeartbeatRequest& req, std::int16_t version,
                                               std::int64_t now_ms);
  Reply<protocol::LeaveGroupResponse> leave_group(const protocol::LeaveGroupRequest& req, std::int16_t version,
                                                  std::int64_t now_ms);
  // Topics are by name; the host resolves topic ids (v10) before and after.
  Reply<protocol::OffsetCommitResponse> offset_commit(const protocol::OffsetCommitRequest& req, std::int16_t version,
                                                      std::int64_t now_ms);
  // TxnOffsetCommit: checks the group as Kafka does for a transactional commit (v3+ carry the
  // generation, member id and instance id; a consumer-protocol group checks its member and member
  // epoch: UNKNOWN_MEMBER_ID, and ILLEGAL_GENERATION where OffsetCommit says STALE_MEMBER_EPOCH),
  // then writes the offsets as a transactional batch of
  // the request's producer (Effects::transactional). They stay pending, invisible to OffsetFetch,
  // until complete_transaction() for that producer.
  Reply<protocol::TxnOffsetCommitResponse> txn_offset_commit(const protocol::TxnOffsetCommitRequest& req,
                                                             std::int16_t version, std::int64_t now_ms);
  // A transaction marker of `producer_id` was written to this partition: its pending offsets
  // become the committed ones (commit) or are dropped (abort). Writes no records (the marker is
  // the record). A producer without pending offsets here is a no-op.
  Effects complete_transaction(std::int64_t producer_id, bool commit);
  // require_stable (v7+) answers UNSTABLE_OFFSET_COMMIT for partitions with pending offsets.
  [[nodiscard]] protocol::OffsetFetchResponse offset_fetch(const protocol::OffsetFetchRequest& req,
                                                           std::int16_t version) const;
  [[nodiscard]] protocol::DescribeGroupsResponse describe_groups(const protocol::DescribeGroupsRequest& req,
                                                                 std::int16_t version) const;
  [[nodiscard]] protocol::ListGroupsResponse list_groups(const protocol::ListGroupsRequest& req,
                                                         std::int16_t version) const;
  Reply<protocol::DeleteGroupsResponse> delete_groups(const protocol::DeleteGroupsRequest& req, std::int16_t version,
                                                      std::int64_t now_ms);

  // OffsetDelete: removes committed offsets of an empty group, or of topics a group using the
  // consumer protocol (a classic group of "consumer" members, or a KIP-848 consumer group in any
  // state) is not subscribed to (GROUP_SUBSCRIBED_TO_TOPIC per partition otherwise). Each
  // partition with a committed or pending offset gets an offset tombstone.
  Reply<protocol::OffsetDeleteResponse> offset_delete(const protocol::OffsetDeleteRequest& req, std::int16_t version,
                                                      std::int64_t now_ms);

  // offsets.retention.minutes, as Kafka's periodic cleanup applies it: offsets of an Empty group
  // expire once the group has been empty that long (or, without a state timestamp, since their
  // commit); a standalone (no protocol type) group's, and a Stable consumer group's offsets of
  // topics it no longer subscribes to, that long after their commit; an explicit expire
  // timestamp (OffsetCommit v1-4 retention) wins. An Empty group left without offsets is removed.
  Effects expire_offsets(std::int64_t now_ms);

  // ConsumerGroupHeartbeat (KIP-848): validated as Kafka does, then handled by the consumer
  // protocol's coordinator (consumer_coordinator.h). `topics` resolves subscriptions by name.
  Reply<protocol::ConsumerGroupHeartbeatResponse> consumer_group_heartbeat(
      const protocol::ConsumerGroupHeartbeatRequest& req, std::int16_t version, const ClientInfo& client,
      const TopicImage& topics, std::int64_t now_ms);
  // ConsumerGroupDescribe: a classic group answers GROUP_ID_NOT_FOUND, as Kafka does.
  [[nodiscard]] protocol::ConsumerGroupDescribeResponse consumer_group_describe(
      const protocol::ConsumerGroupDescribeRequest& req, std::int16_t version, const TopicImage& topics) const;
  [[nodiscard]] const ConsumerGroupCoordinator& consumer_groups() const { return consumer_; }
  // Where the host has a topic image, it passes it here so that an OffsetCommit from a consumer
  // group member at an older epoch can be checked per partition (KIP-1251).
  void set_topic_image(const TopicImage* topics) { topics_ = topics; }

  // Fires every timer due at `now_ms`: session expiry, pending member expiry, join phase
  // completion (rebalance timeout, initial rebalance delay), sync timeout.
  Effects tick(std::int64_t now_ms);
  // The earliest armed deadline, if any.
  [[nodiscard]] std::optional<std::int64_t> next_deadline_ms() const;

  // Applies one `__consumer_offsets` record at load; `value` empty for a tombstone. `at` gives
  // the record's log offset and, for a transactional batch, its producer id (the offset then
  // stays pending until replay_end_transaction).
  Status<ReplayError> replay(std::span<const std::uint8_t> key, std::optional<std::span<const std::uint8_t>> value,
                             RecordContext at = {});
  // Applies a transaction marker (control batch) of `producer_id` at load.
  void replay_end_transaction(std::int64_t producer_id, bool commit);
  // Ends loading: arms every restored member's session timer from `now_ms`.
  void finish_replay(std::int64_t now_ms);

  using PartitionOffsets = OffsetManager::PartitionOffsets;
  // Every group and every group's committed offsets (a group may have offsets and no
  // ClassicGroup: offsets committed without joining), for metrics.
  [[nodiscard]] const std::map<std::string, std::unique_ptr<ClassicGroup>>& groups() const { return groups_; }
  [[nodiscard]] const std::map<std::string, PartitionOffsets>& offsets() const { return offsets_.offsets(); }
  [[nodiscard]] const OffsetManager& offset_manager() const { return offsets_; }
  [[nodiscard]] const ClassicGroup* group(const std::string& group_id) const;
  [[nodiscard]] std::optional<CommittedOffset> committed(const std::string& group_id, const std::string& topic,
                                                         std::int32_t partition) const;

 private:
  struct JoinContext;

  ClassicGroup& get_or_create(const std::string& group_id);
  ClassicGroup* find_group(const std::string& group_id);
  std::string new_member_id(const std::string& prefix);

  // A JoinGroup to a non-empty consumer group (Kafka's classicGroupJoinToConsumerGroup).
  void join_consumer_group(const JoinContext& c, Effects& fx);
  // The topics the host last gave (set_topic_image), or none.
  [[nodiscard]] const TopicImage& topic_image() const;
  // Why a classic group with members cannot become a consumer group (Kafka's
  // validateOnlineUpgrade), kNone when it can.
  [[nodiscard]] GroupError upgrade_refusal(const ClassicGroup& g) const;
  // Recreates as classic groups the consumer groups that downgraded during an event.
  void apply_downgrades(std::int64_t now_ms, Effects& fx);

  // JoinGroup paths (Kafka's classicGroupJoin*).
  void join_new_member(ClassicGroup& g, const JoinContext& c, Effects& fx);
  void join_existing_member(ClassicGroup& g, const JoinContext& c, Effects& fx);
  void join_new_static_member(ClassicGroup& g, const JoinContext& c, Effects& fx);
  void add_member_and_rebalance(ClassicGroup& g, const JoinContext& c, std::string member_id, Effects& fx);
  void update_member_and_rebalance(ClassicGroup& g, Member& m, const JoinContext& c, Effects& fx);
  void maybe_prepare_rebalance_or_complete_join(ClassicGroup& g, std::int64_t now_ms, Effects& fx);
  void prepare_rebalance(ClassicGroup& g, std::int64_t now_ms, Effects& fx);
  void maybe_complete_join(ClassicGroup& g, std::int64_t now_ms, Effects& fx);
  void complete_join(ClassicGroup& g, std::int64_t now_ms, Effects& fx);
  void remove_member_and_update(ClassicGroup& g, const std::string& member_id, std::int64_t now_ms, Effects& fx);
  void fire_join_timer(ClassicGroup& g, std::int64_t now_ms, Effects& fx);
  void fire_sync_timer(ClassicGroup& g, std::int64_t now_ms, Effects& fx);

  [[nodiscard]] protocol::JoinGroupResponse current_generation_response(const ClassicGroup& g, const Member& m,
                                                                        bool with_members) const;
  // Kafka's validateMember: UNKNOWN_MEMBER_ID or FENCED_INSTANCE_ID, else kNone.
  [[nodiscard]] Error validate_member(const ClassicGroup& g, const std::string& member_id,
                                      const std::optional<std::string>& instance_id) const;
  // Kafka's ClassicGroup.validateOffsetCommit; a transactional commit without a member may
  // commit to a group that has members.
  [[nodiscard]] Error validate_commit(const ClassicGroup& g, const std::string& member_id,
                                      const std::optional<std::string>& instance_id, std::int32_t generation,
                                      bool transactional) const;

  Reply<protocol::OffsetCommitResponse> consumer_offset_commit(const ConsumerGroup& g,
                                                               const protocol::OffsetCommitRequest& req,
                                                               std::int16_t version, std::int64_t now_ms);

  // The `__consumer_offsets` key of a group's metadata record (and of its tombstone).
  [[nodiscard]] static Bytes group_key(const std::string& group_id);
  [[nodiscard]] Record group_metadata_record(const ClassicGroup& g, std::int64_t now_ms) const;
  Status<ReplayError> replay_group(protocol::Reader& key_reader, std::optional<std::span<const std::uint8_t>> value);

  GroupConfig config_;
  std::mt19937_64 rng_;
  ConsumerGroupCoordinator consumer_;
  const TopicImage* topics_ = nullptr;
  std::map<std::string, std::unique_ptr<ClassicGroup>> groups_;
  OffsetManager offsets_;
};

}  // namespace weir::group
