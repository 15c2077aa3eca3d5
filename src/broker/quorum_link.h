// The broker's link to a KRaft controller quorum, when it runs as process.roles=broker: it
// follows the metadata log (handing committed records to the broker), registers and heartbeats,
// and carries the requests a Kafka broker sends to the active controller. The composition root
// (src/server) implements it over src/cluster; the broker only sees this interface, so it
// cannot tell which kind of controller leads (DESIGN.md "Cluster").
//
// Threading: start() is called once on the controller executor; the sink is called there, in log
// order, one batch at a time (each apply is awaited before the next). The request methods may be
// called from any executor.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <expected>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "metadata/metadata_record.h"
#include "protocol/gen/allocate_producer_ids_request.h"
#include "protocol/gen/allocate_producer_ids_response.h"
#include "protocol/gen/alter_configs_request.h"
#include "protocol/gen/alter_configs_response.h"
#include "protocol/gen/alter_partition_reassignments_request.h"
#include "protocol/gen/alter_partition_reassignments_response.h"
#include "protocol/gen/alter_partition_request.h"
#include "protocol/gen/alter_partition_response.h"
#include "protocol/gen/create_partitions_request.h"
#include "protocol/gen/create_partitions_response.h"
#include "protocol/gen/create_topics_request.h"
#include "protocol/gen/create_topics_response.h"
#include "protocol/gen/delete_topics_request.h"
#include "protocol/gen/delete_topics_response.h"
#include "protocol/gen/elect_leaders_request.h"
#include "protocol/gen/elect_leaders_response.h"
#include "protocol/gen/incremental_alter_configs_request.h"
#include "protocol/gen/incremental_alter_configs_response.h"
#include "protocol/gen/list_partition_reassignments_request.h"
#include "protocol/gen/list_partition_reassignments_response.h"

namespace weir::broker {

// The feature ranges a weir broker serves, as it registers them with the controller quorum and
// reports them in ApiVersions: metadata.version 7 (3.7-IV0) to 30 (4.3-IV0), kraft.version 0-1,
// transaction.version 0-2 (KIP-890 part 2), group.version 0-1 (the consumer group protocol,
// KIP-848), eligible.leader.replicas.version 0-1 (a broker of a quorum only). Features not listed
// (share.version, streams.version) are served at level 0 only: a quorum that finalized a higher
// level refuses the registration.
struct SupportedFeature {
  const char* name;
  std::int16_t min_version;
  std::int16_t max_version;
  bool cluster_only = false;  // served by a broker of a quorum, not by a single node's controller
};
inline constexpr std::string_view kTransactionVersionFeature = "transaction.version";
inline constexpr std::int16_t kMaxTransactionVersion = 2;
inline constexpr std::string_view kGroupVersionFeature = "group.version";
inline constexpr std::int16_t kMaxGroupVersion = 1;
inline constexpr SupportedFeature kSupportedFeatures[] = {
    {"metadata.version", 7, 30, false},
    {"kraft.version", 0, 1, false},
    {"transaction.version", 0, kMaxTransactionVersion, false},
    {"group.version", 0, kMaxGroupVersion, false},
    // KIP-966: the quorum's controllers keep the eligible leader replicas; a broker applies them
    // to its image, reports them (DescribeTopicPartitions) and registers with the broker epoch
    // of its last clean shutdown (PreviousBrokerEpoch), by which the controller tells a clean
    // restart from a crash.
    {"eligible.leader.replicas.version", 0, 1, true}};
// A single weir node finalizes transaction.version 2 and group.version 1, as a Kafka 4.3.1 node
// formatted with its defaults does.

// Committed metadata records, in log order. snapshot: the image is replaced by these records
// (a KRaft snapshot) rather than extended.
struct MetadataUpdate {
  std::vector<metadata::MetadataRecord> records;
  std::int64_t last_offset = -1;  // offset of the last record (the next update starts after it)
  bool snapshot = false;
};

// Applies one update; resolves once the broker has acted on it (logs created, catalog published).
using MetadataSink = std::function<boost::asio::awaitable<void>(MetadataUpdate)>;

// A request that could not be carried to the controller: the Kafka error code to answer
// (REQUEST_TIMED_OUT when no controller answered in time) and why, for the log.
struct ForwardError {
  std::int16_t code = 7;  // REQUEST_TIMED_OUT
  std::string message;
};

template <class T>
using Forwarded = std::expected<T, ForwardError>;

// The client an admin request came from. A request forwarded with an origin goes to the controller
// in an Envelope, as Kafka's broker forwards a client's request (the controller runs it as the
// client's: its client id, correlation id, address, principal); without one it is this broker's
// own request (auto-created topics, internal topics), sent as it is.
struct RequestOrigin {
  std::optional<std::string> client_id;
  std::int32_t correlation_id = 0;
  std::string client_host;
};

class QuorumLink {
 public:
  virtual ~QuorumLink() = default;

  // Starts following the metadata log and the broker lifecycle (registration, heartbeats).
  // `applied_offset` gives the offset of the last update the sink has completed (heartbeats
  // report it).
  virtual void start(MetadataSink sink, std::function<std::int64_t()> applied_offset) = 0;
  // Waits until the broker has caught up with the metadata and the controller has unfenced it,
  // or the deadline (ms) passes; false on timeout or a fatal error (with the reason logged).
  virtual boost::asio::awaitable<bool> wait_until_running(std::int64_t timeout_ms) = 0;
  // Controlled shutdown (when `controlled`): asks the controller to move leaderships away and
  // waits (bounded) for its permission; then stops every background task.
  virtual boost::asio::awaitable<void> shutdown(bool controlled, std::int64_t timeout_ms) = 0;
  // The broker epoch the controller assigned at registration (-1 before).
  [[nodiscard]] virtual std::int64_t broker_epoch() const = 0;

  // Requests carried to the active controller at `version` (the client's, for forwarded
  // admin requests). `origin` is taken by value: these are coroutines, and a reference would
  // outlive a temporary the caller built in its call expression.
  virtual boost::asio::awaitable<Forwarded<protocol::CreateTopicsResponse>> create_topics(
      const protocol::CreateTopicsRequest& request, std::int16_t version, std::optional<RequestOrigin> origin) = 0;
  virtual boost::asio::awaitable<Forwarded<protocol::DeleteTopicsResponse>> delete_topics(
      const protocol::DeleteTopicsRequest& request, std::int16_t version, std::optional<RequestOrigin> origin) = 0;
  virtual boost::asio::awaitable<Forwarded<protocol::CreatePartitionsResponse>> create_partitions(
      const protocol::CreatePartitionsRequest& request, std::int16_t version, std::optional<RequestOrigin> origin) = 0;
  virtual boost::asio::awaitable<Forwarded<protocol::AlterConfigsResponse>> alter_configs(
      const protocol::AlterConfigsRequest& request, std::int16_t version, std::optional<RequestOrigin> origin) = 0;
  virtual boost::asio::awaitable<Forwarded<protocol::IncrementalAlterConfigsResponse>> incremental_alter_configs(
      const protocol::IncrementalAlterConfigsRequest& request, std::int16_t version,
      std::optional<RequestOrigin> origin) = 0;
  virtual boost::asio::awaitable<Forwarded<protocol::ElectLeadersResponse>> elect_leaders(
      const protocol::ElectLeadersRequest& request, std::int16_t version, std::optional<RequestOrigin> origin) = 0;
  virtual boost::asio::awaitable<Forwarded<protocol::AlterPartitionReassignmentsResponse>>
  alter_partition_reassignments(const protocol::AlterPartitionReassignmentsRequest& request, std::int16_t version,
                                std::optional<RequestOrigin> origin) = 0;
  virtual boost::asio::awaitable<Forwarded<protocol::ListPartitionReassignmentsResponse>> list_partition_reassignments(
      const protocol::ListPartitionReassignmentsRequest& request, std::int16_t version,
      std::optional<RequestOrigin> origin) = 0;
  virtual boost::asio::awaitable<Forwarded<protocol::AllocateProducerIdsResponse>> allocate_producer_ids(
      const protocol::AllocateProducerIdsRequest& request) = 0;
  // A partition leader's ISR change (AlterPartition v2+, Kafka 4.3's range 2-3).
  virtual boost::asio::awaitable<Forwarded<protocol::AlterPartitionResponse>> alter_partition(
      const protocol::AlterPartitionRequest& request) = 0;
};

}  // namespace weir::broker
