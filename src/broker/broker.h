// The broker: owns the node's identity and state, and answers requests by dispatching each to
// the handler of its API (one file per API under handlers/).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <boost/asio/awaitable.hpp>

#include "broker/config.h"
#include "net/request_sink.h"

namespace weir::broker {

// Identity of this node as clients see it.
struct NodeInfo {
  std::int32_t node_id = 1;
  std::string host;
  std::int32_t port = 0;
  std::string cluster_id;
};

class Broker final : public net::RequestSink {
 public:
  explicit Broker(Config config);

  // Opens (or initialises) the data directory; returns an error message on failure.
  std::string start();
  void stop();

  // Fills in the advertised port when the listener was bound to port 0.
  void set_bound_port(std::uint16_t port);

  boost::asio::awaitable<net::Reply> handle(const net::ClientInfo& client,
                                            std::shared_ptr<const net::Frame> frame) override;

  [[nodiscard]] const Config& config() const { return config_; }
  [[nodiscard]] const NodeInfo& node() const { return node_; }

 private:
  Config config_;
  NodeInfo node_;
};

}  // namespace weir::broker
