// MetadataImage: the cluster metadata as of some point in the metadata log, rebuilt by replaying
// records in log order (replay(record)).
//
// What it holds: topics by name and by id, each with its partitions (replicas, ISR, leader,
// leader epoch, partition epoch); config overrides per resource (topics, brokers; a null value in
// a ConfigRecord deletes the key, and removing a topic drops its configs as in Kafka); the next
// producer id to hand out; registered brokers (with their fencing and controlled-shutdown state)
// and controllers; finalized feature levels; the ZK migration state; ACLs, client quotas, SCRAM
// credentials and delegation tokens (kept for serving later; keyed as Kafka's image keys them).
//
// Metadata transactions (KIP-868: BeginTransactionRecord ... EndTransactionRecord) are applied
// as Kafka's MetadataBatchLoader applies them: the records between Begin and End become part of
// the image together, at End. While a transaction is open, replay() applies its records to a
// working state and committed() is still the image as of the Begin; an AbortTransactionRecord
// drops the records since the Begin. A log that ends inside a transaction therefore has
// committed() without them. A Begin inside a transaction, or an End/Abort outside one, is
// inconsistent (Kafka's loader throws).
//
// Value semantics with shared structure: copying an image is cheap (O(topics) names and
// pointers; no partition or config is copied). Topics and config maps are held by shared_ptr and
// copied on write, only when another image still shares them, so replaying into one image never
// changes a copy taken earlier. The owner can therefore publish snapshots by copying, e.g. as a
// std::shared_ptr<const MetadataImage> for other cores to read.
//
// Thread safety: an image is a plain value; one thread mutates it (replay), any thread may read
// a copy it owns. Distinct images may share internals safely (the shared parts are never written
// while shared).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/result.h"
#include "base/uuid.h"
#include "metadata/errc.h"
#include "metadata/metadata_record.h"
#include "metadata/topic_configs.h"

namespace weir::metadata {

inline constexpr std::int32_t kNoLeader = -1;
// PartitionChangeRecord.Leader: keep the current leader (kNoLeader, -1, means "no leader").
inline constexpr std::int32_t kNoLeaderChange = -2;

// BrokerRegistrationChangeRecord tri-states (Kafka's BrokerRegistrationFencingChange and
// BrokerRegistrationInControlledShutdownChange).
inline constexpr std::int8_t kFencingChangeFence = 1;
inline constexpr std::int8_t kFencingChangeNone = 0;
inline constexpr std::int8_t kFencingChangeUnfence = -1;
inline constexpr std::int8_t kControlledShutdownChangeNone = 0;
inline constexpr std::int8_t kControlledShutdownChangeEnter = 1;

struct PartitionImage {
  std::int32_t partition_id = 0;
  std::vector<std::int32_t> replicas;
  std::vector<std::int32_t> isr;
  std::vector<std::int32_t> removing_replicas;
  std::vector<std::int32_t> adding_replicas;
  std::int32_t leader = kNoLeader;
  std::int8_t leader_recovery_state = 0;  // 0 recovered, 1 recovering
  std::int32_t leader_epoch = 0;
  std::int32_t partition_epoch = 0;
  std::vector<Uuid> directories;  // one per replica, or empty
  std::vector<std::int32_t> eligible_leader_replicas;
  std::vector<std::int32_t> last_known_elr;

  bool operator==(const PartitionImage&) const = default;
};

struct TopicImage {
  std::string name;
  Uuid id;
  std::vector<PartitionImage> partitions;  // partitions[i].partition_id == i

  bool operator==(const TopicImage&) const = default;
};

// A broker as registered: its latest RegisterBrokerRecord, with Fenced, InControlledShutdown,
// LogDirs and CordonedLogDirs updated by the Fence/Unfence/BrokerRegistrationChange records since.
// Its EndPoints and Features are sorted by name (Kafka's image holds them as maps by name).
using BrokerRegistration = RegisterBrokerRecord;
// A controller as registered: its latest RegisterControllerRecord.
using ControllerRegistration = RegisterControllerRecord;

// A client-quota entity as Kafka's ClientQuotaEntity: entity type ("user", "client-id", "ip")
// -> name, where nullopt is the default entity of that type.
using ClientQuotaEntity = std::map<std::string, std::optional<std::string>, std::less<>>;
// Quota key ("producer_byte_rate", ...) -> value.
using ClientQuotaValues = std::map<std::string, double, std::less<>>;

// SCRAM credentials are keyed by (mechanism, user): mechanism 1 SCRAM-SHA-256, 2 SCRAM-SHA-512.
struct ScramKey {
  std::int8_t mechanism = 0;
  std::string user;
  auto operator<=>(const ScramKey&) const = default;
  bool operator==(const ScramKey&) const = default;
};

// Everything but topics, configs, brokers and features: small maps, shared between copies of
// an image and copied on write as a whole.
struct AuxiliaryImage {
  std::map<std::int32_t, ControllerRegistration> controllers;
  std::map<Uuid, AccessControlEntryRecord> acls;  // by ACL id
  std::map<ClientQuotaEntity, ClientQuotaValues> client_quotas;  // entities with at least one key
  std::map<ScramKey, UserScramCredentialRecord> scram_credentials;
  std::map<std::string, DelegationTokenRecord, std::less<>> delegation_tokens;  // by token id
  std::int8_t zk_migration_state = 0;  // Kafka's ZkMigrationState; 0 NONE

  bool operator==(const AuxiliaryImage&) const = default;
};

class MetadataImage {
 public:
  // Applies one record. Records that contradict the image (a second TopicRecord for a name, a
  // PartitionRecord for an unknown topic or beyond the next partition index, a RemoveTopicRecord
  // or PartitionChangeRecord for something unknown, a producer-id block that does not move
  // forward) are refused with StoreErrc::inconsistent_record and leave the image unchanged.
  [[nodiscard]] Status<StoreErrc> replay(const MetadataRecord& record);

  // Topics.
  [[nodiscard]] const TopicImage* topic(std::string_view name) const noexcept;
  [[nodiscard]] const TopicImage* topic(const Uuid& id) const noexcept;
  [[nodiscard]] std::size_t topic_count() const noexcept { return topics_by_id_.size(); }
  // Topic names in ascending order with their ids.
  [[nodiscard]] const std::map<std::string, Uuid, std::less<>>& topic_ids_by_name() const noexcept {
    return ids_by_name_;
  }
  // An existing topic whose name equals `name` once '.' and '_' are treated alike (Kafka refuses
  // such names because their metric names collide); nullopt if none. `name` itself counts too.
  [[nodiscard]] std::optional<std::string> colliding_topic(std::string_view name) const;

  // Config overrides of a resource (kConfigResourceTopic / Broker / Group); empty if none.
  [[nodiscard]] const ConfigMap& configs(std::int8_t resource_type, std::string_view resource_name) const noexcept;
  [[nodiscard]] const ConfigMap& topic_configs(std::string_view topic) const noexcept {
    return configs(kConfigResourceTopic, topic);
  }
  // Names of the resources of a type that have config overrides, in ascending order.
  [[nodiscard]] std::vector<std::string> config_resources(std::int8_t resource_type) const;

  // The first producer id of the next block to allocate (0 before any block).
  [[nodiscard]] std::int64_t next_producer_id() const noexcept { return next_producer_id_; }

  [[nodiscard]] const std::map<std::int32_t, BrokerRegistration>& brokers() const noexcept { return brokers_; }
  [[nodiscard]] const BrokerRegistration* broker(std::int32_t id) const noexcept;
  // Whether the broker is fenced; an unregistered broker counts as fenced.
  [[nodiscard]] bool is_fenced(std::int32_t id) const noexcept;
  // Whether the broker is registered and in controlled shutdown.
  [[nodiscard]] bool in_controlled_shutdown(std::int32_t id) const noexcept;
  // Registered brokers that are neither fenced nor in controlled shutdown.
  [[nodiscard]] std::size_t active_broker_count() const noexcept;

  // Registered controllers (RegisterControllerRecord) by id.
  [[nodiscard]] const std::map<std::int32_t, ControllerRegistration>& controllers() const noexcept {
    return aux_->controllers;
  }
  // ACLs by id (AccessControlEntryRecord as written).
  [[nodiscard]] const std::map<Uuid, AccessControlEntryRecord>& acls() const noexcept { return aux_->acls; }
  // Client quotas by entity; an entity appears only while it has a key.
  [[nodiscard]] const std::map<ClientQuotaEntity, ClientQuotaValues>& client_quotas() const noexcept {
    return aux_->client_quotas;
  }
  [[nodiscard]] const std::map<ScramKey, UserScramCredentialRecord>& scram_credentials() const noexcept {
    return aux_->scram_credentials;
  }
  [[nodiscard]] const std::map<std::string, DelegationTokenRecord, std::less<>>& delegation_tokens() const noexcept {
    return aux_->delegation_tokens;
  }
  // Kafka's ZkMigrationState (0 NONE, 1 PRE_MIGRATION, 2 MIGRATION, 3 POST_MIGRATION).
  [[nodiscard]] std::int8_t zk_migration_state() const noexcept { return aux_->zk_migration_state; }

  // Metadata transactions: whether a BeginTransactionRecord has been replayed without its End or
  // Abort yet, and the image without the open transaction's records (this image when none is
  // open). Publish committed(), never an image inside a transaction.
  [[nodiscard]] bool in_transaction() const noexcept { return txn_base_ != nullptr; }
  [[nodiscard]] const MetadataImage& committed() const noexcept { return txn_base_ ? *txn_base_ : *this; }

  // Finalized feature levels (a level of 0 removes the feature).
  [[nodiscard]] const std::map<std::string, std::int16_t, std::less<>>& features() const noexcept { return features_; }
  [[nodiscard]] std::optional<std::int16_t> feature_level(std::string_view name) const;

  // Records applied so far (for logs and tests).
  [[nodiscard]] std::int64_t records_replayed() const noexcept { return records_replayed_; }

  // Same content (shared or not).
  [[nodiscard]] bool same_content(const MetadataImage& other) const;

 private:
  using ConfigKey = std::pair<std::int8_t, std::string>;

  Status<StoreErrc> apply(const TopicRecord& r);
  Status<StoreErrc> apply(const PartitionRecord& r);
  Status<StoreErrc> apply(const PartitionChangeRecord& r);
  Status<StoreErrc> apply(const RemoveTopicRecord& r);
  Status<StoreErrc> apply(const ConfigRecord& r);
  Status<StoreErrc> apply(const ProducerIdsRecord& r);
  Status<StoreErrc> apply(const RegisterBrokerRecord& r);
  Status<StoreErrc> apply(const FeatureLevelRecord& r);
  Status<StoreErrc> apply(const NoOpRecord&) { return {}; }
  Status<StoreErrc> apply(const UnregisterBrokerRecord& r);
  Status<StoreErrc> apply(const FenceBrokerRecord& r);
  Status<StoreErrc> apply(const UnfenceBrokerRecord& r);
  Status<StoreErrc> apply(const BrokerRegistrationChangeRecord& r);
  Status<StoreErrc> apply(const RegisterControllerRecord& r);
  Status<StoreErrc> apply(const ClearElrRecord& r);
  Status<StoreErrc> apply(const AccessControlEntryRecord& r);
  Status<StoreErrc> apply(const RemoveAccessControlEntryRecord& r);
  Status<StoreErrc> apply(const ClientQuotaRecord& r);
  Status<StoreErrc> apply(const UserScramCredentialRecord& r);
  Status<StoreErrc> apply(const RemoveUserScramCredentialRecord& r);
  Status<StoreErrc> apply(const DelegationTokenRecord& r);
  Status<StoreErrc> apply(const RemoveDelegationTokenRecord& r);
  Status<StoreErrc> apply(const ZkMigrationStateRecord& r);
  Status<StoreErrc> apply(const BeginTransactionRecord& r);
  Status<StoreErrc> apply(const EndTransactionRecord& r);
  Status<StoreErrc> apply(const AbortTransactionRecord& r);

  // The registered broker `id` with epoch `epoch`, writable; an error naming `action` if the
  // broker is unknown or registered with another epoch (Kafka's ClusterDelta.getBrokerOrThrow).
  Result<BrokerRegistration*, StoreErrc> broker_at_epoch(std::int32_t id, std::int64_t epoch, std::string_view action);
  // Clears a partition's ELR and last-known ELR as a PartitionChangeRecord would (epoch bump).
  void clear_elr(TopicImage& t);
  AuxiliaryImage& mutable_aux();

  // The topic, unshared (cloned first if another image holds it), or nullptr if unknown.
  TopicImage* mutable_topic(const Uuid& id);

  std::unordered_map<Uuid, std::shared_ptr<TopicImage>> topics_by_id_;
  std::map<std::string, Uuid, std::less<>> ids_by_name_;
  // Names with '.' replaced by '_' -> the topics with that form (only names holding '.' or '_').
  std::map<std::string, std::vector<std::string>, std::less<>> collision_index_;
  std::map<ConfigKey, std::shared_ptr<ConfigMap>> configs_;
  std::int64_t next_producer_id_ = 0;
  std::map<std::int32_t, BrokerRegistration> brokers_;
  std::map<std::string, std::int16_t, std::less<>> features_;
  std::shared_ptr<AuxiliaryImage> aux_ = std::make_shared<AuxiliaryImage>();
  // While a metadata transaction is open: the image as of its BeginTransactionRecord.
  std::shared_ptr<const MetadataImage> txn_base_;
  std::int64_t records_replayed_ = 0;
};

// Kafka's Topic.unifyCollisionChars: '.' -> '_'.
[[nodiscard]] std::string unify_collision_chars(std::string_view name);

}  // namespace weir::metadata
