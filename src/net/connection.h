// One client connection: a reader coroutine and a writer coroutine sharing an ordered queue of
// reply slots. See server.h for the contract.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include "net/request_sink.h"
#include "net/stats.h"

namespace weir::net {

class Server;

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(boost::asio::ip::tcp::socket socket, RequestSink& sink, ClientInfo client,
             std::int32_t max_request_bytes, std::int32_t max_inflight, Server& server, ShardStats& stats);

  // Starts the reader and writer on the socket's executor.
  void start();
  // Closes the socket; both coroutines finish soon after. Safe from any thread.
  void close();

  [[nodiscard]] std::uint64_t id() const { return client_.connection_id; }

 private:
  struct Slot {
    std::optional<Reply> reply;
  };

  boost::asio::awaitable<void> read_loop();
  boost::asio::awaitable<void> write_loop();
  // Writes one reply; an error message, or empty when it was all sent.
  boost::asio::awaitable<std::string> send(const Reply& reply);
  boost::asio::awaitable<std::string> send_file(const FileRegion& region);
  boost::asio::awaitable<void> run_request(std::shared_ptr<Slot> slot, std::shared_ptr<const Frame> frame);
  void shutdown(const std::string& reason);

  boost::asio::ip::tcp::socket socket_;
  RequestSink& sink_;
  ClientInfo client_;
  std::int32_t max_request_bytes_;
  std::size_t max_inflight_;
  Server& server_;
  ShardStats& stats_;  // of the connection's executor
  std::deque<std::shared_ptr<Slot>> slots_;
  boost::asio::steady_timer writer_wake_;
  boost::asio::steady_timer reader_wake_;
  bool closed_ = false;
};

}  // namespace weir::net
