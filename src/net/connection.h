// One client connection: a reader coroutine and a writer coroutine sharing an ordered queue of
// reply slots. See server.h for the contract.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>

#include "net/memory_budget.h"
#include "net/request_sink.h"
#include "net/stats.h"

namespace weir::net {

class Server;

struct ConnectionSettings {
  std::int32_t max_request_bytes = 104857600;  // socket.request.max.bytes
  std::int32_t max_inflight = 100;             // max.inflight.requests.per.connection
  // connections.max.idle.ms: closed after this long without socket I/O while no request is
  // being read or handled; negative: never.
  std::int64_t idle_timeout_ms = 600000;
  // weir.partial.request.timeout.ms: a request must have arrived in full this long after its
  // first byte; negative: no deadline.
  std::int64_t partial_request_timeout_ms = 30000;
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(boost::asio::ip::tcp::socket socket, RequestSink& sink, ClientInfo client, ConnectionSettings settings,
             std::shared_ptr<MemoryBudget> budget, Server& server, ShardStats& stats);

  // Starts the reader and writer on the socket's executor.
  void start();
  // Closes the socket; both coroutines finish soon after. Safe from any thread.
  void close();

  [[nodiscard]] std::uint64_t id() const { return client_.connection_id; }

  // Under memory pressure (another reader waits for the request memory budget): closes this
  // connection if the frame it is reading holds budget memory and no byte of it has arrived for
  // kStalledFrameMs, while the reader was waiting on the socket (not on the budget). A client
  // that stalls mid-request would otherwise keep that memory from complete requests until
  // weir.partial.request.timeout.ms. Safe from any thread (runs on the connection's executor).
  void reclaim_if_stalled();
  static constexpr std::int64_t kStalledFrameMs = 2000;

 private:
  struct Slot {
    std::optional<Reply> reply;
  };

  boost::asio::awaitable<void> read_loop();
  // Reads one frame; null when the connection closed (shutdown() has been called).
  boost::asio::awaitable<std::shared_ptr<Frame>> read_frame();
  // Takes n bytes of the memory budget, waiting (not reading) until they are free; false if the
  // connection closed meanwhile.
  boost::asio::awaitable<bool> acquire_memory(std::int64_t n);
  // Closes the connection when it has been idle, or a request has been arriving, too long.
  boost::asio::awaitable<void> watchdog();
  void arm_watchdog(std::int64_t deadline_ms);
  [[nodiscard]] std::int64_t next_deadline_ms() const;
  boost::asio::awaitable<void> write_loop();
  // Writes one reply; an error message, or empty when it was all sent.
  boost::asio::awaitable<std::string> send(const Reply& reply);
  boost::asio::awaitable<std::string> send_file(const FileRegion& region);
  boost::asio::awaitable<void> run_request(std::shared_ptr<Slot> slot, std::shared_ptr<const Frame> frame);
  void shutdown(const std::string& reason);
  [[nodiscard]] std::size_t max_inflight() const { return static_cast<std::size_t>(settings_.max_inflight); }

  boost::asio::ip::tcp::socket socket_;
  RequestSink& sink_;
  ClientInfo client_;
  ConnectionSettings settings_;
  std::shared_ptr<MemoryBudget> budget_;
  std::shared_ptr<ConnectionMemory> memory_;  // what this connection's frames hold of budget_
  Server& server_;
  ShardStats& stats_;  // of the connection's executor
  std::deque<std::shared_ptr<Slot>> slots_;
  boost::asio::steady_timer writer_wake_;
  boost::asio::steady_timer reader_wake_;
  boost::asio::steady_timer budget_wake_;
  boost::asio::steady_timer watchdog_;
  std::int64_t watchdog_at_ms_ = -1;    // when watchdog_ fires; -1: not armed
  std::int64_t last_io_ms_ = 0;         // steady-clock ms of the last socket read or write
  std::int64_t frame_started_ms_ = -1;  // first byte of the frame being read; -1: between frames
  std::int64_t frame_size_ = 0;         // of the frame being read, for the log line
  std::int64_t frame_read_ = 0;
  bool waiting_for_memory_ = false;  // the reader waits for the budget, not for the client
  bool budget_waiter_registered_ = false;  // a wake-up from the budget is pending
  bool closed_ = false;
};

}  // namespace weir::net
