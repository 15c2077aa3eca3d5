// HttpEndpoint: a small HTTP/1.1 server for GET /metrics, on a thread and io_context of its own
// so that rendering never runs on a shard; the provider gathers shard data by posting to the
// shards and awaiting their answers.
//
// Bounded: at most `max_connections` at once (more are closed at accept), a request head of at
// most `max_request_bytes` and no body, `timeout_ms` per read or write. Bad input is answered
// 400 (unparseable, too large, a body), 405 (not GET) or 404 (not /metrics), then the
// connection is closed.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <unordered_set>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "metrics/metric.h"

namespace weir::metrics {

struct HttpEndpointOptions {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  std::size_t max_connections = 16;
  std::size_t max_request_bytes = 8192;
  int timeout_ms = 10000;
};

// Parses "host:port" or "[v6]:port" (metrics.listener); an error message on failure.
[[nodiscard]] std::string parse_host_port(std::string_view text, std::string& host, std::uint16_t& port);

class HttpEndpoint {
 public:
  // The body of GET /metrics; runs on the endpoint's thread.
  using Provider = std::function<boost::asio::awaitable<std::string>()>;

  HttpEndpoint(HttpEndpointOptions options, Provider provider);
  ~HttpEndpoint();
  HttpEndpoint(const HttpEndpoint&) = delete;
  HttpEndpoint& operator=(const HttpEndpoint&) = delete;

  // Binds and starts the thread; an error message if the address cannot be bound.
  std::string start();
  // Closes the listener and connections and joins the thread once scrapes in flight are done.
  void stop();
  [[nodiscard]] std::uint16_t port() const { return bound_port_; }

  // Connections refused because max_connections were open; requests answered 4xx.
  [[nodiscard]] std::uint64_t refused_connections() const { return refused_.value(); }
  [[nodiscard]] std::uint64_t bad_requests() const { return bad_requests_.value(); }

 private:
  boost::asio::awaitable<void> accept_loop();
  boost::asio::awaitable<void> serve(boost::asio::ip::tcp::socket socket);

  HttpEndpointOptions options_;
  Provider provider_;
  boost::asio::io_context context_{1};
  std::unique_ptr<boost::asio::ip::tcp::acceptor> acceptor_;
  std::thread thread_;
  std::uint16_t bound_port_ = 0;
  std::size_t open_connections_ = 0;  // endpoint thread only
  std::unordered_set<boost::asio::ip::tcp::socket*> sockets_;  // endpoint thread only
  Counter refused_;                   // written on the endpoint thread
  Counter bad_requests_;
  bool started_ = false;
  bool stopping_ = false;  // endpoint thread only
};

}  // namespace weir::metrics
