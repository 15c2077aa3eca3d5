// PeerChannel: this broker's connection to another broker for the transaction protocol's
// inter-broker requests — WriteTxnMarkers from a transaction coordinator to a partition leader,
// AddPartitionsToTxn (v4 verify-only, v5 add) from a partition or group leader to a transaction
// coordinator (KIP-890). The composition root (src/server) implements it over src/client, on the
// inter-broker listener; tests can pass their own transport.
//
// Threading: a channel is made for one executor (a shard's) and used only there.
#pragma once

#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <string>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include "protocol/gen/add_partitions_to_txn_request.h"
#include "protocol/gen/add_partitions_to_txn_response.h"
#include "protocol/gen/write_txn_markers_request.h"
#include "protocol/gen/write_txn_markers_response.h"

namespace weir::broker {

class PeerChannel {
 public:
  virtual ~PeerChannel() = default;
  // At the highest version both sides have (v2 carries each marker's transaction version).
  virtual boost::asio::awaitable<std::expected<protocol::WriteTxnMarkersResponse, std::string>> write_txn_markers(
      const protocol::WriteTxnMarkersRequest& request, std::int64_t timeout_ms) = 0;
  // At `version` exactly (4: verify only, 5: the broker adds partitions for a transaction
  // version 2 client); an error text when the peer does not serve it or did not answer.
  virtual boost::asio::awaitable<std::expected<protocol::AddPartitionsToTxnResponse, std::string>>
  add_partitions_to_txn(const protocol::AddPartitionsToTxnRequest& request, std::int16_t version,
                        std::int64_t timeout_ms) = 0;
  virtual void close() = 0;
};

// Makes the channel to broker `node_id` at host:port, for use on `executor`.
using PeerChannelFactory = std::function<std::unique_ptr<PeerChannel>(
    boost::asio::any_io_executor executor, std::int32_t node_id, const std::string& host, std::int32_t port)>;

}  // namespace weir::broker
