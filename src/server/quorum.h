// The link of a broker-only node (process.roles=broker) to its KRaft controller quorum, built
// over src/cluster: the metadata follower (observer of __cluster_metadata), the broker lifecycle
// (registration, heartbeats, controlled shutdown) and the controller channel (forwarded admin
// requests, producer id blocks).
#pragma once

#include <memory>

#include <boost/asio/any_io_executor.hpp>

#include "broker/broker.h"
#include "broker/quorum_link.h"

namespace weir::server {

// `node` is read at QuorumLink::start() (the broker fills in the cluster and directory ids from
// meta.properties in Broker::start()); it must outlive the link. Everything runs on `executor`.
[[nodiscard]] std::unique_ptr<broker::QuorumLink> make_quorum_link(const broker::Config& config,
                                                                   const broker::NodeInfo& node,
                                                                   boost::asio::any_io_executor executor);

}  // namespace weir::server
