// Controller: the metadata state machine. It answers admin requests from the image it holds and
// says which records would carry out the change; it performs no I/O and reads no clock.
//
// The host (the broker) drives it, one operation at a time, on the executor that owns it:
//
//   auto result = controller.create_topics(request, version, defaults);
//   if (!result.records.empty()) {
//     if (auto ok = log.append(result.records, now_ms); !ok) ...;   // durable first (one batch)
//     for (const auto& r : result.records) controller.replay(r);     // then applied
//   }
//   send(result.response);                                           // then answered
//
// An operation sees the image as of the last replay, so the host must apply (or drop) one
// operation's records before starting the next; validate-only requests return no records.
// Error codes and messages are Kafka 4.3.1's, including the checks Kafka's broker makes before
// forwarding to its controller (duplicate names, null config values). Where weir deliberately
// differs from Kafka the function comment says so.
//
// Thread safety: none; one owner.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "base/uuid.h"
#include "metadata/errc.h"
#include "metadata/group_configs.h"
#include "metadata/image.h"
#include "metadata/metadata_record.h"
#include "metadata/topic_configs.h"
#include "protocol/gen/alter_configs_request.h"
#include "protocol/gen/alter_configs_response.h"
#include "protocol/gen/alter_partition_reassignments_request.h"
#include "protocol/gen/alter_partition_reassignments_response.h"
#include "protocol/gen/create_partitions_request.h"
#include "protocol/gen/create_partitions_response.h"
#include "protocol/gen/create_topics_request.h"
#include "protocol/gen/create_topics_response.h"
#include "protocol/gen/delete_topics_request.h"
#include "protocol/gen/delete_topics_response.h"
#include "protocol/gen/describe_configs_request.h"
#include "protocol/gen/describe_configs_response.h"
#include "protocol/gen/elect_leaders_request.h"
#include "protocol/gen/elect_leaders_response.h"
#include "protocol/gen/incremental_alter_configs_request.h"
#include "protocol/gen/incremental_alter_configs_response.h"
#include "protocol/gen/list_partition_reassignments_request.h"
#include "protocol/gen/list_partition_reassignments_response.h"

namespace weir::metadata {

// Kafka's limit on the records one user operation may produce (QuorumController
// MAX_RECORDS_PER_USER_OP); also the most partitions one CreateTopics request may ask for.
inline constexpr std::size_t kMaxRecordsPerOperation = 10'000;
inline constexpr std::int32_t kDefaultProducerIdBlockSize = 1000;
inline constexpr std::string_view kClusterMetadataTopic = "__cluster_metadata";

struct ControllerConfig {
  std::int32_t node_id = 1;
  // Broker keys set in server.properties / --set (e.g. "log.retention.hours"): the
  // STATIC_BROKER_CONFIG layer of topic configs.
  ConfigMap static_broker_configs = {};
  std::int32_t producer_id_block_size = kDefaultProducerIdBlockSize;
  // Source of new topic ids; Uuid::random() when empty (tests inject a seeded generator).
  std::function<Uuid()> new_topic_id = {};
};

// Broker defaults for topics created without an explicit count or replication factor (-1).
struct TopicDefaults {
  std::int32_t num_partitions = 1;      // num.partitions
  std::int16_t replication_factor = 1;  // default.replication.factor
};

// What an operation decided: records to append (atomically, as one batch) and then replay, and
// the response to send once they are durable.
template <class Response>
struct ControllerResult {
  std::vector<MetadataRecord> records;
  Response response;
};

// A block of producer ids handed to one broker: [first_producer_id, first_producer_id + size).
struct ProducerIdBlock {
  std::int32_t broker_id = 0;
  std::int64_t first_producer_id = 0;
  std::int32_t size = 0;
  [[nodiscard]] std::int64_t next_block_first_id() const noexcept { return first_producer_id + size; }
};

// This node, as it registers at start-up.
struct BrokerInfo {
  struct Endpoint {
    std::string listener_name;  // e.g. PLAINTEXT
    std::string host;
    std::uint16_t port = 0;
    std::int16_t security_protocol = 0;  // 0 PLAINTEXT, 1 SSL, 2 SASL_PLAINTEXT, 3 SASL_SSL
  };
  struct Feature {
    std::string name;
    std::int16_t min_supported = 0;
    std::int16_t max_supported = 0;
  };
  std::int32_t broker_id = 1;
  // Kafka uses the offset of the registration record; pass the metadata log's next offset.
  std::int64_t broker_epoch = 0;
  Uuid incarnation_id;  // fresh per process start
  std::vector<Endpoint> endpoints;
  std::vector<Feature> supported_features;
  std::optional<std::string> rack;
  std::vector<Uuid> log_dirs;  // directory ids; one known dir becomes PartitionRecord.directories
};

// Kafka's checks on a topic name (Topic.validate); the message Kafka sends, or nullopt if valid:
// "Topic name is invalid: '.' is not allowed", ... 1 to 249 of [a-zA-Z0-9._-], not "." or "..".
[[nodiscard]] std::optional<std::string> topic_name_error(std::string_view name);

class Controller {
 public:
  explicit Controller(ControllerConfig config, MetadataImage image = {});

  [[nodiscard]] const MetadataImage& image() const noexcept { return image_; }
  [[nodiscard]] const ControllerConfig& config() const noexcept { return config_; }

  // Applies a record the host has made durable (or read back from the metadata log).
  [[nodiscard]] Status<StoreErrc> replay(const MetadataRecord& record) { return image_.replay(record); }

  // CreateTopics. Per topic, in Kafka's order: duplicate names in the request (INVALID_REQUEST,
  // listed after the others), "__cluster_metadata" (INVALID_REQUEST), the name
  // (INVALID_TOPIC_EXCEPTION; also for a name that collides with an existing one by '.' vs '_'),
  // TOPIC_ALREADY_EXISTS, null config values and then the configs (INVALID_CONFIG), manual
  // assignments (INVALID_REQUEST / INVALID_REPLICA_ASSIGNMENT), the replication factor
  // (INVALID_REPLICATION_FACTOR), the partition count (INVALID_PARTITIONS). More than 10000
  // partitions, or records, in one request fail every topic with POLICY_VIOLATION. Success
  // records: TopicRecord (fresh id), ConfigRecords for explicit configs, PartitionRecords (leader
  // the first active replica, epochs 0, ISR the active replicas). validate_only computes the
  // same response (a topic id included) without records.
  // Differs from Kafka: two topics of one request that collide with each other are refused
  // (Kafka creates both, as it checks collisions only against topics already created).
  [[nodiscard]] ControllerResult<protocol::CreateTopicsResponse> create_topics(
      const protocol::CreateTopicsRequest& request, std::int16_t version, const TopicDefaults& defaults) const;

  // DeleteTopics by name (all versions) or by id (v6+). UNKNOWN_TOPIC_OR_PARTITION for an
  // unknown name, UNKNOWN_TOPIC_ID for an unknown id, INVALID_REQUEST for duplicates, for both or
  // neither of name and id, and for a name whose id was also given. One RemoveTopicRecord per
  // deleted topic (its configs go with it; the name is free again once replayed).
  // Differs from Kafka: results are not shuffled.
  [[nodiscard]] ControllerResult<protocol::DeleteTopicsResponse> delete_topics(
      const protocol::DeleteTopicsRequest& request, std::int16_t version) const;

  // CreatePartitions. INVALID_PARTITIONS when the count does not increase (Kafka's two messages),
  // UNKNOWN_TOPIC_OR_PARTITION (null message) for an unknown topic, INVALID_REPLICA_ASSIGNMENT
  // for bad manual assignments, INVALID_REQUEST for duplicate names. New partitions copy the
  // topic's replication factor.
  // Differs from Kafka: more than 10000 new partitions in one request get POLICY_VIOLATION
  // (Kafka answers UNKNOWN_SERVER_ERROR after creating some of them).
  [[nodiscard]] ControllerResult<protocol::CreatePartitionsResponse> create_partitions(
      const protocol::CreatePartitionsRequest& request, std::int16_t version) const;

  // AlterConfigs (legacy: the request replaces all of a resource's overrides) for TOPIC, BROKER
  // and GROUP resources. A topic gets a ConfigRecord for each key whose value changes and a
  // deletion for each override the new set lacks; a group (which need not exist; "" is
  // INVALID_REQUEST) likewise, checked by validate_group_configs(). A BROKER resource ("" for
  // the cluster default, else a non-negative broker id, as Kafka's ControllerConfigurationValidator)
  // gets a record for every key the request names, changed or not (brokers reload on it,
  // KAFKA-14136), and a deletion for each other override; the broker that took the request has
  // checked the keys and values. Other resource types get Kafka's "Unknown resource type N".
  [[nodiscard]] ControllerResult<protocol::AlterConfigsResponse> alter_configs(
      const protocol::AlterConfigsRequest& request, std::int16_t version) const;

  // IncrementalAlterConfigs for TOPIC, BROKER and GROUP resources: SET, DELETE, APPEND and
  // SUBTRACT (lists only; applied to the current value or else the default, as Kafka does; no
  // group key is a list). Records as in alter_configs: for a topic or a group only keys whose
  // value changes, for a broker every key named.
  // Differs from Kafka: an unknown operation id gets INVALID_REQUEST (Kafka fails with
  // UNKNOWN_SERVER_ERROR).
  [[nodiscard]] ControllerResult<protocol::IncrementalAlterConfigsResponse> incremental_alter_configs(
      const protocol::IncrementalAlterConfigsRequest& request, std::int16_t version) const;

  // ElectLeaders (type 0 preferred, 1 unclean), as Kafka's ReplicationControlManager: per
  // partition UNKNOWN_TOPIC_OR_PARTITION ("No such topic as T", "No such partition as T-P"),
  // ELECTION_NOT_NEEDED when the preferred replica leads (preferred) or any replica leads
  // (unclean), else a PartitionChangeRecord: the preferred replica when it is in the ISR and
  // active (else PREFERRED_LEADER_NOT_AVAILABLE); for unclean an active ISR member, else any
  // active replica as the only ISR member with the leader recovering (else
  // ELIGIBLE_LEADERS_NOT_AVAILABLE). Null topics = every partition, answering only those not
  // "not needed" (every topic listed). An unknown type is INVALID_REQUEST for every partition
  // and at the top (v1+).
  // Differs from Kafka: the eligible leader replicas (KIP-966) are not consulted.
  [[nodiscard]] ControllerResult<protocol::ElectLeadersResponse> elect_leaders(
      const protocol::ElectLeadersRequest& request, std::int16_t version) const;

  // AlterPartitionReassignments, the validation of Kafka's controller: UNKNOWN_TOPIC_OR_PARTITION
  // ("Unable to find a topic named T." / "Unable to find partition T:P."), a cancel (null
  // replicas) of a partition not being reassigned NO_REASSIGNMENT_IN_PROGRESS, a target the
  // manual-assignment checks refuse INVALID_REPLICA_ASSIGNMENT, a target equal to the current
  // replicas NONE (nothing to do). Moving replicas needs other brokers: this controller serves a
  // single node, where every valid target is the current one.
  [[nodiscard]] protocol::AlterPartitionReassignmentsResponse alter_partition_reassignments(
      const protocol::AlterPartitionReassignmentsRequest& request) const;

  // ListPartitionReassignments: the partitions with adding or removing replicas (all of them for
  // null topics, else those named); unknown topics and partitions are left out, as Kafka does.
  [[nodiscard]] protocol::ListPartitionReassignmentsResponse list_partition_reassignments(
      const protocol::ListPartitionReassignmentsRequest& request) const;

  // DescribeConfigs for one TOPIC resource: INVALID_TOPIC_EXCEPTION for a bad name,
  // UNKNOWN_TOPIC_OR_PARTITION for an unknown topic, else describe_topic_configs().
  [[nodiscard]] protocol::DescribeConfigsResponse::DescribeConfigsResult describe_topic(
      const protocol::DescribeConfigsRequest::DescribeConfigsResource& resource, bool include_synonyms) const;

  // DescribeConfigs for one GROUP resource (KIP-848), as a Kafka broker answers it from its
  // metadata: INVALID_REQUEST "Group name must not be empty" for "", else every group key
  // (describe_group_configs()); the group need not exist.
  [[nodiscard]] protocol::DescribeConfigsResponse::DescribeConfigsResult describe_group(
      const protocol::DescribeConfigsRequest::DescribeConfigsResource& resource, bool include_synonyms,
      bool include_documentation) const;

  // Typed effective config of an existing topic (nullopt if unknown).
  [[nodiscard]] std::optional<TopicConfig> topic_config(std::string_view topic) const;

  // The broker layers of topic configs for this node (the image's BROKER configs and the static
  // ones); valid until the next replay.
  [[nodiscard]] BrokerConfigLayers broker_layers() const;

  // The next block of producer ids for a broker: a ProducerIdsRecord moving the image's next id
  // forward by the block size. Blocks never overlap once their records are durable, across
  // restarts included. UNKNOWN_SERVER_ERROR when the int64 space is exhausted (Kafka's message).
  [[nodiscard]] Result<ControllerResult<ProducerIdBlock>, ApiError> allocate_producer_ids(
      std::int32_t broker_id, std::int64_t broker_epoch) const;

  // A RegisterBrokerRecord for this node, unfenced (a single node has no one to unfence it).
  [[nodiscard]] std::vector<MetadataRecord> register_broker(const BrokerInfo& broker) const;

  // FeatureLevelRecords for the features whose finalized level differs (0 removes a feature).
  [[nodiscard]] std::vector<MetadataRecord> finalize_features(
      const std::map<std::string, std::int16_t, std::less<>>& levels) const;

  // What a fresh metadata log starts with, as Kafka's storage format writes it: the finalized
  // features, then the cluster-wide min.insync.replicas (from the static config, else 1) as a
  // dynamic cluster config. Append once, when the log is empty.
  [[nodiscard]] std::vector<MetadataRecord> bootstrap_records(
      const std::map<std::string, std::int16_t, std::less<>>& features) const;

 private:
  struct TopicPlan;

  // A random topic id used neither in the image nor in `taken`, which it is added to.
  Uuid fresh_topic_id(std::set<Uuid>& taken) const;
  ApiError plan_topic(const protocol::CreateTopicsRequest::CreatableTopic& topic, const TopicDefaults& defaults,
                      TopicPlan& plan) const;
  bool any_active(const std::vector<std::int32_t>& replicas) const;
  ApiError check_manual_assignment(const std::vector<std::int32_t>& replicas,
                                   std::optional<std::size_t> replication_factor) const;
  Result<std::vector<std::vector<std::int32_t>>, ApiError> place_replicas(std::int32_t first_partition,
                                                                          std::int32_t count,
                                                                          std::int16_t replication_factor) const;
  PartitionRecord partition_record(const Uuid& topic_id, std::int32_t partition,
                                   const std::vector<std::int32_t>& replicas) const;
  ApiError check_config_resource(std::int8_t type, const std::string& name) const;
  // Validates a topic's complete new overrides and that the topic exists; records the changes.
  ApiError alter_topic_configs(const std::string& topic, const ConfigMap& new_overrides,
                               std::vector<MetadataRecord>& records) const;
  // Validates a group's complete new overrides; records the changes.
  ApiError alter_group_configs(const std::string& group, const ConfigMap& new_overrides,
                               std::vector<MetadataRecord>& records) const;
  // Records a broker resource's ("" or a broker id) new dynamic configs: each key `named` by the
  // request, and the deletion of keys the new set lacks.
  void alter_broker_configs(const std::string& broker, const ConfigMap& new_overrides,
                            const std::vector<std::string>& named, std::vector<MetadataRecord>& records) const;

  ControllerConfig config_;
  MetadataImage image_;
};

}  // namespace weir::metadata
