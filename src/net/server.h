// The network front end: one executor thread per core, listeners, connections.
//
// Each connection lives on one executor (assigned round-robin) and is served by two coroutines:
// a reader that takes frames off the socket and starts their handling in arrival order, and a
// writer that sends replies strictly in request order. At most
// `max_inflight_requests_per_connection` requests are read ahead of their responses; a frame
// larger than `socket_request_max_bytes` (or with a negative size) closes the connection before
// any of its body is read.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "net/request_sink.h"
#include "net/stats.h"

namespace weir::net {

struct ListenerSpec {
  std::string name;
  std::string host;  // empty: all interfaces
  std::uint16_t port = 0;
};

struct ServerOptions {
  std::vector<ListenerSpec> listeners;
  int threads = 1;
  std::int32_t socket_request_max_bytes = 104857600;
  std::int32_t max_inflight_requests_per_connection = 100;
  std::int32_t shutdown_grace_ms = 1000;
  // SO_SNDBUF / SO_RCVBUF of accepted connections; -1 leaves the OS default (and its autotuning).
  std::int32_t socket_send_buffer_bytes = -1;
  std::int32_t socket_receive_buffer_bytes = -1;
};

class Connection;

class Server {
 public:
  Server(ServerOptions options, RequestSink& sink);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds every listener; fails (with a message) if one cannot be bound.
  std::string start();
  // Closes listeners and connections, then joins the executor threads.
  void stop();
  // Blocks until stop() has been called and finished.
  void wait();

  // Bound ports, in listener order (useful with port 0).
  [[nodiscard]] std::vector<std::uint16_t> bound_ports() const;
  [[nodiscard]] boost::asio::io_context& context(std::size_t i) { return *contexts_[i]; }
  [[nodiscard]] std::size_t context_count() const { return contexts_.size(); }
  // One executor per thread, in thread order; valid from construction.
  [[nodiscard]] std::vector<boost::asio::any_io_executor> executors() const;

  // Counters of the connections served on executor i (read from any thread).
  [[nodiscard]] const ShardStats& stats(std::size_t i) const { return *stats_[i]; }

  void register_connection(const std::shared_ptr<Connection>& c);
  void unregister_connection(std::uint64_t id);

 private:
  boost::asio::awaitable<void> accept_loop(boost::asio::ip::tcp::acceptor& acceptor, std::string listener);

  ServerOptions options_;
  RequestSink& sink_;
  std::vector<std::unique_ptr<boost::asio::io_context>> contexts_;
  std::vector<std::unique_ptr<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>>> guards_;
  std::vector<std::unique_ptr<boost::asio::ip::tcp::acceptor>> acceptors_;
  std::vector<std::unique_ptr<ShardStats>> stats_;  // per context
  std::vector<std::thread> threads_;
  std::atomic<std::uint64_t> next_connection_id_{1};
  std::atomic<std::size_t> next_context_{0};
  std::mutex connections_mutex_;
  std::vector<std::weak_ptr<Connection>> connections_;
  std::atomic<bool> stopped_{false};
  std::atomic<std::size_t> running_threads_{0};
  std::mutex stop_mutex_;
};

}  // namespace weir::net
