// ReplicaChannel: a follower's connection to one leader broker, for its replica fetcher (Fetch
// with ReplicaState, ListOffsets as a replica). The composition root (src/server) implements it
// over src/client; tests and a simulator can pass their own transport.
//
// Threading: a channel is made for one executor (its fetcher's shard) and used only there.
#pragma once

#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <string>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include "protocol/gen/fetch_request.h"
#include "protocol/gen/fetch_response.h"
#include "protocol/gen/list_offsets_request.h"
#include "protocol/gen/list_offsets_response.h"

namespace weir::broker {

class ReplicaChannel {
 public:
  virtual ~ReplicaChannel() = default;
  // Sends the request at the highest version both sides have (Fetch: at least 12, which has
  // DivergingEpoch) and waits up to timeout_ms; an error text when no answer came (the
  // connection is then closed and opened again by the next call).
  virtual boost::asio::awaitable<std::expected<protocol::FetchResponse, std::string>> fetch(
      const protocol::FetchRequest& request, std::int64_t timeout_ms) = 0;
  virtual boost::asio::awaitable<std::expected<protocol::ListOffsetsResponse, std::string>> list_offsets(
      const protocol::ListOffsetsRequest& request, std::int64_t timeout_ms) = 0;
  // Closes the connection; calls in flight fail.
  virtual void close() = 0;
};

// Makes the channel to broker `node_id` at host:port, for use on `executor`.
using ReplicaChannelFactory = std::function<std::unique_ptr<ReplicaChannel>(
    boost::asio::any_io_executor executor, std::int32_t node_id, const std::string& host, std::int32_t port)>;

}  // namespace weir::broker
