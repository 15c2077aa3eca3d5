// The compile-time list of handlers weir serves. Adding an API = a handler type + one entry here.
#pragma once

#include <cstdint>
#include <tuple>
#include <vector>

#include "broker/handlers/handlers.h"

namespace weir::broker {

using AllHandlers = std::tuple<ProduceHandler, FetchHandler, ListOffsetsHandler, MetadataHandler, ApiVersionsHandler,
                               CreateTopicsHandler, DeleteTopicsHandler, InitProducerIdHandler,
                               DescribeClusterHandler, DescribeConfigsHandler, AlterConfigsHandler,
                               IncrementalAlterConfigsHandler, CreatePartitionsHandler, DeleteRecordsHandler,
                               OffsetForLeaderEpochHandler, FindCoordinatorHandler, JoinGroupHandler,
                               SyncGroupHandler, HeartbeatHandler, LeaveGroupHandler, DescribeGroupsHandler,
                               ListGroupsHandler, DeleteGroupsHandler, ConsumerGroupHeartbeatHandler,
                               ConsumerGroupDescribeHandler, OffsetCommitHandler, OffsetFetchHandler,
                               OffsetDeleteHandler, TxnOffsetCommitHandler, DescribeLogDirsHandler,
                               DescribeProducersHandler, DescribeTopicPartitionsHandler, AddPartitionsToTxnHandler,
                               AddOffsetsToTxnHandler, EndTxnHandler, DescribeTransactionsHandler,
                               ListTransactionsHandler, WriteTxnMarkersHandler, ElectLeadersHandler,
                               AlterPartitionReassignmentsHandler, ListPartitionReassignmentsHandler,
                               ListConfigResourcesHandler>;

struct ServedApi {
  std::int16_t key;
  std::int16_t min_version;  // as advertised
  std::int16_t max_version;
};

// What ApiVersions advertises, ordered by key. Produce is advertised from version 0 although
// only v3+ is served, as Apache Kafka 4 does (KAFKA-18659): librdkafka turns compression off
// when the advertised Produce minimum is above 0.
std::vector<ServedApi> served_apis();

}  // namespace weir::broker
