// ConnectionPool: one client::Connection per controller endpoint ("host:port"), opened on first
// use and opened again once closed. Shared by the metadata follower and the controller channel.
//
// Threading: one executor; call from coroutines on it.
#pragma once

#include <map>
#include <memory>
#include <string>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include "base/result.h"
#include "client/connection.h"
#include "client/errors.h"
#include "cluster/quorum_config.h"

namespace weir::cluster {

class ConnectionPool {
 public:
  ConnectionPool(boost::asio::any_io_executor executor, client::ConnectionOptions options)
      : executor_(std::move(executor)), options_(std::move(options)) {}

  // The connection to target, handshake done, or the error by the deadline.
  boost::asio::awaitable<Result<std::shared_ptr<client::Connection>, client::Error>> connect(
      const ControllerAddress& target, client::Deadline deadline);
  // Drops the connection to endpoint if it has closed (the next connect() opens a new one).
  void drop_if_closed(const client::Endpoint& endpoint);
  // Closes every connection; requests in flight fail with `reason`.
  void close_all(const std::string& reason);

 private:
  boost::asio::any_io_executor executor_;
  client::ConnectionOptions options_;
  std::map<std::string, std::shared_ptr<client::Connection>> connections_;  // by "host:port"
};

}  // namespace weir::cluster
