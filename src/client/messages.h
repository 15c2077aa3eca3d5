// The response type of each generated request type: ResponseOf<protocol::FetchRequest> is
// protocol::FetchResponse. Every API of the codec is listed (a unit test visits them all through
// protocol::visit_api, so a new schema without a line here fails to compile there).
#pragma once

#include "protocol/gen/api_registry.h"

namespace weir::client {

template <class Request>
struct ResponseOfT;

template <class Request>
using ResponseOf = typename ResponseOfT<Request>::type;

#define WEIR_CLIENT_API(Name)                   \
  template <>                                   \
  struct ResponseOfT<protocol::Name##Request> { \
    using type = protocol::Name##Response;      \
  };
WEIR_CLIENT_API(Produce)
WEIR_CLIENT_API(Fetch)
WEIR_CLIENT_API(ListOffsets)
WEIR_CLIENT_API(Metadata)
WEIR_CLIENT_API(OffsetCommit)
WEIR_CLIENT_API(OffsetFetch)
WEIR_CLIENT_API(FindCoordinator)
WEIR_CLIENT_API(JoinGroup)
WEIR_CLIENT_API(Heartbeat)
WEIR_CLIENT_API(LeaveGroup)
WEIR_CLIENT_API(SyncGroup)
WEIR_CLIENT_API(DescribeGroups)
WEIR_CLIENT_API(ListGroups)
WEIR_CLIENT_API(SaslHandshake)
WEIR_CLIENT_API(ApiVersions)
WEIR_CLIENT_API(CreateTopics)
WEIR_CLIENT_API(DeleteTopics)
WEIR_CLIENT_API(DeleteRecords)
WEIR_CLIENT_API(InitProducerId)
WEIR_CLIENT_API(OffsetForLeaderEpoch)
WEIR_CLIENT_API(AddPartitionsToTxn)
WEIR_CLIENT_API(AddOffsetsToTxn)
WEIR_CLIENT_API(EndTxn)
WEIR_CLIENT_API(WriteTxnMarkers)
WEIR_CLIENT_API(TxnOffsetCommit)
WEIR_CLIENT_API(DescribeAcls)
WEIR_CLIENT_API(CreateAcls)
WEIR_CLIENT_API(DeleteAcls)
WEIR_CLIENT_API(DescribeConfigs)
WEIR_CLIENT_API(AlterConfigs)
WEIR_CLIENT_API(DescribeLogDirs)
WEIR_CLIENT_API(SaslAuthenticate)
WEIR_CLIENT_API(CreatePartitions)
WEIR_CLIENT_API(DeleteGroups)
WEIR_CLIENT_API(ElectLeaders)
WEIR_CLIENT_API(IncrementalAlterConfigs)
WEIR_CLIENT_API(ListPartitionReassignments)
WEIR_CLIENT_API(OffsetDelete)
WEIR_CLIENT_API(DescribeClientQuotas)
WEIR_CLIENT_API(AlterClientQuotas)
WEIR_CLIENT_API(DescribeUserScramCredentials)
WEIR_CLIENT_API(AlterUserScramCredentials)
WEIR_CLIENT_API(DescribeCluster)
WEIR_CLIENT_API(DescribeProducers)
WEIR_CLIENT_API(DescribeTransactions)
WEIR_CLIENT_API(ListTransactions)
WEIR_CLIENT_API(ConsumerGroupHeartbeat)
WEIR_CLIENT_API(ConsumerGroupDescribe)
WEIR_CLIENT_API(DescribeTopicPartitions)
WEIR_CLIENT_API(AlterPartition)
WEIR_CLIENT_API(UpdateFeatures)
WEIR_CLIENT_API(DescribeQuorum)
WEIR_CLIENT_API(Envelope)
WEIR_CLIENT_API(FetchSnapshot)
WEIR_CLIENT_API(BrokerRegistration)
WEIR_CLIENT_API(BrokerHeartbeat)
WEIR_CLIENT_API(AllocateProducerIds)
WEIR_CLIENT_API(AlterPartitionReassignments)
WEIR_CLIENT_API(ListConfigResources)
#undef WEIR_CLIENT_API

}  // namespace weir::client
