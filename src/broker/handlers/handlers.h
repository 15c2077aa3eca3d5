// Declarations of every API handler; one .cpp per API beside this file.
#pragma once

#include <cstdint>

#include <boost/asio/awaitable.hpp>

#include "broker/handler.h"
#include "protocol/gen/api_versions_request.h"
#include "protocol/gen/api_versions_response.h"
#include "protocol/gen/metadata_request.h"
#include "protocol/gen/metadata_response.h"
#include "protocol/gen/produce_request.h"
#include "protocol/gen/produce_response.h"
#include "protocol/gen/fetch_request.h"
#include "protocol/gen/fetch_response.h"
#include "protocol/gen/list_offsets_request.h"
#include "protocol/gen/consumer_group_describe_request.h"
#include "protocol/gen/consumer_group_describe_response.h"
#include "protocol/gen/consumer_group_heartbeat_request.h"
#include "protocol/gen/consumer_group_heartbeat_response.h"
#include "protocol/gen/list_offsets_response.h"
#include "protocol/gen/init_producer_id_request.h"
#include "protocol/gen/init_producer_id_response.h"
#include "protocol/gen/create_topics_request.h"
#include "protocol/gen/create_topics_response.h"
#include "protocol/gen/delete_topics_request.h"
#include "protocol/gen/delete_topics_response.h"
#include "protocol/gen/describe_cluster_request.h"
#include "protocol/gen/describe_cluster_response.h"
#include "protocol/gen/describe_configs_request.h"
#include "protocol/gen/describe_configs_response.h"
#include "protocol/gen/alter_configs_request.h"
#include "protocol/gen/alter_configs_response.h"
#include "protocol/gen/alter_partition_reassignments_request.h"
#include "protocol/gen/alter_partition_reassignments_response.h"
#include "protocol/gen/elect_leaders_request.h"
#include "protocol/gen/elect_leaders_response.h"
#include "protocol/gen/list_partition_reassignments_request.h"
#include "protocol/gen/list_partition_reassignments_response.h"
#include "protocol/gen/incremental_alter_configs_request.h"
#include "protocol/gen/incremental_alter_configs_response.h"
#include "protocol/gen/create_partitions_request.h"
#include "protocol/gen/create_partitions_response.h"
#include "protocol/gen/delete_records_request.h"
#include "protocol/gen/delete_records_response.h"
#include "protocol/gen/offset_for_leader_epoch_request.h"
#include "protocol/gen/offset_for_leader_epoch_response.h"
#include "protocol/gen/find_coordinator_request.h"
#include "protocol/gen/find_coordinator_response.h"
#include "protocol/gen/join_group_request.h"
#include "protocol/gen/join_group_response.h"
#include "protocol/gen/sync_group_request.h"
#include "protocol/gen/sync_group_response.h"
#include "protocol/gen/heartbeat_request.h"
#include "protocol/gen/heartbeat_response.h"
#include "protocol/gen/leave_group_request.h"
#include "protocol/gen/leave_group_response.h"
#include "protocol/gen/describe_groups_request.h"
#include "protocol/gen/describe_groups_response.h"
#include "protocol/gen/list_groups_request.h"
#include "protocol/gen/list_groups_response.h"
#include "protocol/gen/delete_groups_request.h"
#include "protocol/gen/delete_groups_response.h"
#include "protocol/gen/offset_commit_request.h"
#include "protocol/gen/offset_commit_response.h"
#include "protocol/gen/offset_fetch_request.h"
#include "protocol/gen/offset_fetch_response.h"
#include "protocol/gen/txn_offset_commit_request.h"
#include "protocol/gen/txn_offset_commit_response.h"
#include "protocol/gen/offset_delete_request.h"
#include "protocol/gen/offset_delete_response.h"
#include "protocol/gen/describe_log_dirs_request.h"
#include "protocol/gen/describe_log_dirs_response.h"
#include "protocol/gen/describe_producers_request.h"
#include "protocol/gen/describe_producers_response.h"
#include "protocol/gen/describe_topic_partitions_request.h"
#include "protocol/gen/describe_topic_partitions_response.h"
#include "protocol/gen/add_partitions_to_txn_request.h"
#include "protocol/gen/add_partitions_to_txn_response.h"
#include "protocol/gen/add_offsets_to_txn_request.h"
#include "protocol/gen/add_offsets_to_txn_response.h"
#include "protocol/gen/end_txn_request.h"
#include "protocol/gen/end_txn_response.h"
#include "protocol/gen/describe_transactions_request.h"
#include "protocol/gen/describe_transactions_response.h"
#include "protocol/gen/list_config_resources_request.h"
#include "protocol/gen/list_config_resources_response.h"
#include "protocol/gen/list_transactions_request.h"
#include "protocol/gen/list_transactions_response.h"
#include "protocol/gen/write_txn_markers_request.h"
#include "protocol/gen/write_txn_markers_response.h"

namespace weir::broker {

struct Catalog;
struct NodeInfo;

struct ApiVersionsHandler {
  using Request = protocol::ApiVersionsRequest;
  using Response = protocol::ApiVersionsResponse;
  static constexpr std::int16_t kMinVersion = 0;
  static constexpr std::int16_t kMaxVersion = 4;
  static boost::asio::awaitable<HandlerResult<Response>> handle(RequestContext& ctx, Request& req);
  // KIP-511: a version above kMaxVersion is answered in v0 with UNSUPPORTED_VERSION and the
  // supported range, so the client can retry with a version both sides know.
  static Response unsupported_version_response();
};

struct MetadataHandler {
  using Request = protocol::MetadataRequest;
  using Response = protocol::MetadataResponse;
  static constexpr std::int16_t kMinVersion = 0;
  static constexpr std::int16_t kMaxVersion = 13;
  static boost::asio::awaitable<HandlerResult<Response>> handle(RequestContext& ctx, Request& req);
  // Every topic: built and encoded off the shard (Broker::large_answers), which its size would
  // otherwise hold up; that answer only reads the catalog. Named topics may auto-create them.
  static bool answer_off_shard(const Request& req, std::int16_t version) { return all_topics(req, version); }
  // The answer of every topic, a function of the catalog snapshot (and the node's cluster id)
  // only: nothing of the request or the connection goes in (the brokers listed are those of this
  // node's first advertised listener whichever listener asked, and authorized operations are not
  // answered). The dispatcher keeps its encoding per snapshot and version (Broker::answer_cache).
  static Response catalog_answer(const NodeInfo& node, const Catalog& catalog);
  static bool all_topics(const Request& req, std::int16_t version) {
    return !req.topics || (version == 0 && req.topics->empty());
  }
};

// Declares a handler type serving versions [min, max] of an API.
#define WEIR_HANDLER(Name, Min, Max)                                                                 \
  struct Name##Handler {                                                                             \
    using Request = protocol::Name##Request;                                                         \
    using Response = protocol::Name##Response;                                                       \
    static constexpr std::int16_t kMinVersion = Min;                                                 \
    static constexpr std::int16_t kMaxVersion = Max;                                                 \
    static boost::asio::awaitable<HandlerResult<Response>> handle(RequestContext& ctx, Request& req); \
  }

// Version ranges are the ones Apache Kafka 4.3.1 serves (tests/data/kafka-4.3.1-api-versions.json).
WEIR_HANDLER(Produce, 3, 13);
WEIR_HANDLER(Fetch, 4, 18);
WEIR_HANDLER(ListOffsets, 1, 11);
WEIR_HANDLER(InitProducerId, 0, 5);
WEIR_HANDLER(CreateTopics, 2, 7);
WEIR_HANDLER(DeleteTopics, 1, 6);
WEIR_HANDLER(DescribeCluster, 0, 2);
WEIR_HANDLER(DescribeConfigs, 1, 4);
WEIR_HANDLER(AlterConfigs, 0, 2);
WEIR_HANDLER(IncrementalAlterConfigs, 0, 1);
WEIR_HANDLER(CreatePartitions, 0, 3);
WEIR_HANDLER(DeleteRecords, 0, 2);
WEIR_HANDLER(OffsetForLeaderEpoch, 2, 4);
WEIR_HANDLER(FindCoordinator, 0, 6);
WEIR_HANDLER(JoinGroup, 0, 9);
WEIR_HANDLER(SyncGroup, 0, 5);
WEIR_HANDLER(Heartbeat, 0, 4);
WEIR_HANDLER(LeaveGroup, 0, 5);
WEIR_HANDLER(DescribeGroups, 0, 6);
WEIR_HANDLER(ListGroups, 0, 5);
WEIR_HANDLER(DeleteGroups, 0, 2);
WEIR_HANDLER(ConsumerGroupHeartbeat, 0, 1);
WEIR_HANDLER(ConsumerGroupDescribe, 0, 1);
WEIR_HANDLER(OffsetCommit, 2, 10);
WEIR_HANDLER(OffsetFetch, 1, 10);
WEIR_HANDLER(OffsetDelete, 0, 0);
WEIR_HANDLER(TxnOffsetCommit, 0, 5);
WEIR_HANDLER(DescribeLogDirs, 1, 5);
WEIR_HANDLER(DescribeProducers, 0, 0);
WEIR_HANDLER(DescribeTopicPartitions, 0, 0);
WEIR_HANDLER(AddPartitionsToTxn, 0, 5);
WEIR_HANDLER(AddOffsetsToTxn, 0, 4);
WEIR_HANDLER(EndTxn, 0, 5);
WEIR_HANDLER(DescribeTransactions, 0, 0);
WEIR_HANDLER(ListTransactions, 0, 2);
WEIR_HANDLER(WriteTxnMarkers, 1, 2);
WEIR_HANDLER(ElectLeaders, 0, 2);
WEIR_HANDLER(AlterPartitionReassignments, 0, 1);
WEIR_HANDLER(ListPartitionReassignments, 0, 0);
WEIR_HANDLER(ListConfigResources, 0, 1);

#undef WEIR_HANDLER

}  // namespace weir::broker
