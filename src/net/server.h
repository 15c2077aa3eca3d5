// The network front end: one executor thread per core, listeners, connections.
//
// Each connection lives on one executor (assigned round-robin) and is served by two coroutines:
// a reader that takes frames off the socket and starts their handling in arrival order, and a
// writer that sends replies strictly in request order. At most
// `max_inflight_requests_per_connection` requests are read ahead of their responses; a frame
// larger than `socket_request_max_bytes` (or with a negative size) closes the connection before
// any of its body is read.
//
// Limits (see connection_quotas.h, memory_budget.h and connection.h): max.connections pauses
// accepting, max.connection.creation.rate delays it, max.connections.per.ip closes a connection at
// accept; accept(2) failures (EMFILE, ENFILE, ...) back off from 10 ms to 1 s instead of spinning;
// request bytes are read only while the broker-wide memory budget allows; idle connections and
// requests that take too long to arrive are closed.
#pragma once

#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdint>
#include <expected>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "net/connection_quotas.h"
#include "net/memory_budget.h"
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
  // SO_SNDBUF / SO_RCVBUF of accepted connections; -1 leaves the OS default (and its autotuning),
  // except the send buffer of a connection from this host (send_buffer_bytes_for).
  std::int32_t socket_send_buffer_bytes = -1;
  std::int32_t socket_receive_buffer_bytes = -1;
  // Connection limits. max_connections is weir's derived default unless configured (see
  // default_max_connections); the override hosts are resolved by start().
  std::int32_t max_connections = 2147483647;
  std::int32_t max_connections_per_ip = 2147483647;
  std::vector<std::pair<std::string, std::int32_t>> max_connections_per_ip_overrides;
  std::int32_t max_connection_creation_rate = 2147483647;
  std::int64_t connections_max_idle_ms = 600000;    // negative: never
  std::int64_t partial_request_timeout_ms = 30000;  // weir.partial.request.timeout.ms; negative: never
  // queued.max.request.bytes: at least socket_request_max_bytes. Each connection may hold up to
  // a quarter of it, and never less than socket_request_max_bytes.
  std::int64_t queued_max_request_bytes = std::int64_t{256} << 20;
};

// The SO_SNDBUF of a connection left at the OS's autotuned size (socket.send.buffer.bytes -1)
// when its peer is on this host. Over loopback the receiver's acknowledgements run the sender's
// TCP transmit path (on the receiver's CPU, in its receive call): with an autotuned buffer of up
// to 4 MiB queued behind a Fetch response, a consumer on the same host spent that work on its
// own thread, and read slower. A fixed size keeps the transmit work in weir's own send; loopback
// has no bandwidth-delay product for it to cap (BENCHMARKS.md, issue 18). Linux doubles the value.
inline constexpr std::int32_t kSameHostSendBufferBytes = 262144;

// The SO_SNDBUF to set on an accepted connection from `remote` to `local`, or 0 to leave the
// OS's size: the configured socket.send.buffer.bytes when above 0, else kSameHostSendBufferBytes
// for a peer on this host (a loopback address, or the connection's own local address), else 0.
std::int32_t send_buffer_bytes_for(std::int32_t configured, const boost::asio::ip::address& local,
                                   const boost::asio::ip::address& remote);

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

  [[nodiscard]] const MemoryBudget& memory_budget() const { return *budget_; }
  // Connections counted by the quotas (valid after start()).
  [[nodiscard]] std::int64_t open_connections() const { return quotas_ ? quotas_->total() : 0; }
  [[nodiscard]] std::int32_t max_connections() const {
    return quotas_ ? quotas_->limits().max_connections : options_.max_connections;
  }

  // New connection limits (dynamic broker configs), the override hosts resolved as start()
  // resolves them; open connections stay. An error (a host that does not resolve) keeps the
  // limits as they were. Valid after start().
  std::string update_limits(std::int32_t max_connections, std::int32_t max_connections_per_ip,
                            const std::vector<std::pair<std::string, std::int32_t>>& overrides,
                            std::int32_t max_connection_creation_rate);

  void register_connection(const std::shared_ptr<Connection>& c);
  // A reader waits for request memory: every connection checks whether its stalled partial frame
  // should give its memory back (Connection::reclaim_if_stalled). At most one sweep per
  // Connection::kStalledFrameMs / 4. Safe from any thread.
  void reclaim_stalled_frames();
  // A connection from `host` closed: forgets it and gives its slot back.
  void unregister_connection(std::uint64_t id, const std::string& host);

  // Requests handed to the sink and not finished yet (stop() waits for them, up to the grace).
  void request_started() { in_flight_requests_.fetch_add(1); }
  void request_finished() { in_flight_requests_.fetch_sub(1); }

 private:
  boost::asio::awaitable<void> accept_loop(boost::asio::ip::tcp::acceptor& acceptor, std::string listener);
  std::string resolve_limits();
  std::expected<ConnectionLimits, std::string> resolved(
      std::int32_t max_connections, std::int32_t max_connections_per_ip,
      const std::vector<std::pair<std::string, std::int32_t>>& overrides, std::int32_t max_connection_creation_rate);
  void wake_acceptors();

  ServerOptions options_;
  RequestSink& sink_;
  // Pause timers of the accept loops; touched on executor 0 only. Declared before contexts_: an
  // accept loop destroyed with its context removes its timer from here.
  std::vector<boost::asio::steady_timer*> accept_timers_;
  std::vector<std::unique_ptr<boost::asio::io_context>> contexts_;
  std::vector<std::unique_ptr<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>>> guards_;
  std::vector<std::unique_ptr<boost::asio::ip::tcp::acceptor>> acceptors_;
  std::vector<std::unique_ptr<ShardStats>> stats_;  // per context
  std::shared_ptr<MemoryBudget> budget_;
  std::unique_ptr<ConnectionQuotas> quotas_;  // from start()
  std::vector<std::thread> threads_;
  std::atomic<std::uint64_t> next_connection_id_{1};
  std::atomic<std::size_t> next_context_{0};
  std::mutex connections_mutex_;
  std::vector<std::weak_ptr<Connection>> connections_;
  std::atomic<std::int64_t> last_reclaim_sweep_ms_{-1};
  std::atomic<bool> stopped_{false};
  std::atomic<std::size_t> running_threads_{0};
  std::atomic<std::int64_t> in_flight_requests_{0};
  std::mutex stop_mutex_;
};

}  // namespace weir::net
