// The replica fetchers' transport (broker::ReplicaChannel) over src/client: one connection to
// the leader broker, opened on first use and again after it closed.
#pragma once

#include "broker/replica_link.h"

namespace weir::server {

// client_id "weir-replica-<node id>", as Kafka's fetchers name themselves by broker id.
[[nodiscard]] broker::ReplicaChannelFactory make_replica_channels(std::int32_t self);

}  // namespace weir::server
