// The replica fetchers' transport (broker::ReplicaChannel) and the transaction protocol's
// inter-broker requests (broker::PeerChannel) over src/client: one connection to the other
// broker, opened on first use and again after it closed.
#pragma once

#include "broker/peer_link.h"
#include "broker/replica_link.h"

namespace weir::server {

// client_id "weir-replica-<node id>", as Kafka's fetchers name themselves by broker id.
[[nodiscard]] broker::ReplicaChannelFactory make_replica_channels(std::int32_t self);
// client_id "weir-broker-<node id>".
[[nodiscard]] broker::PeerChannelFactory make_peer_channels(std::int32_t self);

}  // namespace weir::server
