// One TCP connection to one broker: connect, the ApiVersions handshake, then any number of
// requests in flight at once (up to max_in_flight), answered in order and matched by
// correlation id (wire.h).
//
// Lifecycle: a Connection is created in state connecting and start()ed once; the handshake runs
// in the background under the connect timeout, and callers co_await ready(deadline). Once the
// socket fails, the peer closes it, a response cannot be parsed, or a request outlives its
// deadline (Kafka's clients disconnect on a request timeout as well), the connection is closed
// for good: every request in flight fails with a transport error and the owner opens a new one.
//
// Threading: all members must be called on the executor given to the constructor; the
// connection is not thread-safe. It keeps itself alive (shared_from_this) while its reader and
// writer run; callers keep a shared_ptr while they await a request.
#pragma once

#include <fmt/format.h>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "client/api_versions.h"
#include "client/bootstrap.h"
#include "client/errors.h"
#include "client/messages.h"
#include "client/wire.h"

namespace weir::client {

using Deadline = std::chrono::steady_clock::time_point;

[[nodiscard]] inline Deadline deadline_after_ms(std::int64_t ms) {
  return std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
}

struct ConnectionOptions {
  std::optional<std::string> client_id = std::string("weir");
  // Sent in ApiVersions v3+ (Kafka checks them against [a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?).
  std::string software_name = "weir";
  std::string software_version = "0.1.0";
  std::int64_t connect_timeout_ms = 10'000;              // socket.connection.setup.timeout.ms; covers the handshake
  std::int32_t max_response_bytes = 104'857'600 + 1024;  // a larger size prefix closes the connection
  std::size_t max_in_flight = 100;                       // more requests wait (within their deadline) for a slot
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  enum class State : std::uint8_t { kConnecting, kReady, kClosed };

  Connection(boost::asio::any_io_executor executor, std::int32_t node_id, Endpoint endpoint, ConnectionOptions options);
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Starts connecting and the handshake. Call once.
  void start();
  // Waits until the handshake is done: the connection's error if it closed, timeout at deadline.
  boost::asio::awaitable<Status<Error>> ready(Deadline deadline);
  // Closes the connection (idempotent); requests in flight fail with `reason`.
  void close(const std::string& reason);

  // Sends request at `version` and waits for its response, until deadline. A request with no
  // response (Produce with acks=0) returns a default-constructed response once queued.
  template <class Request>
  boost::asio::awaitable<Result<ResponseOf<Request>, Error>> send(const Request& request, std::int16_t version,
                                                                  Deadline deadline, bool expect_response = true);

  [[nodiscard]] State state() const noexcept { return state_; }
  [[nodiscard]] const VersionTable& versions() const noexcept { return versions_; }
  [[nodiscard]] std::int32_t node_id() const noexcept { return node_id_; }
  [[nodiscard]] const Endpoint& endpoint() const noexcept { return endpoint_; }
  [[nodiscard]] std::size_t in_flight() const noexcept { return in_flight_.size(); }
  // "node 1 (localhost:9092)", for messages.
  [[nodiscard]] std::string describe() const;

 private:
  struct Pending {
    explicit Pending(boost::asio::any_io_executor ex, std::int16_t key, std::int16_t ver)
        : timer(std::move(ex)), api_key(key), api_version(ver) {}
    boost::asio::steady_timer timer;  // waited on until the deadline; cancelled on completion
    std::int16_t api_key;
    std::int16_t api_version;
    std::optional<Result<protocol::Bytes, Error>> result;  // the response body
  };

  boost::asio::awaitable<void> run();
  boost::asio::awaitable<Status<Error>> handshake(Deadline deadline);
  boost::asio::awaitable<void> read_loop();
  boost::asio::awaitable<void> write_loop();
  boost::asio::awaitable<void> watchdog();
  // Queues a frame (correlation id already in it) and waits for the response body.
  boost::asio::awaitable<Result<protocol::Bytes, Error>> exchange(std::int16_t api_key, std::int16_t api_version,
                                                                  std::int32_t correlation_id, protocol::Bytes frame,
                                                                  Deadline deadline, bool expect_response);
  void fail(Error error);
  void wake_ready_waiters();

  boost::asio::any_io_executor executor_;
  std::int32_t node_id_;
  Endpoint endpoint_;
  ConnectionOptions options_;
  boost::asio::ip::tcp::socket socket_;
  State state_ = State::kConnecting;
  bool started_ = false;
  std::optional<Error> close_error_;
  VersionTable versions_;
  CorrelationIds correlation_ids_;
  InFlight<std::shared_ptr<Pending>> in_flight_;
  std::deque<std::shared_ptr<Pending>> waiting_for_slot_;
  std::deque<protocol::Bytes> outbox_;
  boost::asio::steady_timer writer_wake_;
  std::vector<std::shared_ptr<boost::asio::steady_timer>> ready_waiters_;  // woken when state_ changes
  boost::asio::steady_timer connect_timer_;
};

template <class Request>
boost::asio::awaitable<Result<ResponseOf<Request>, Error>> Connection::send(const Request& request,
                                                                            std::int16_t version, Deadline deadline,
                                                                            bool expect_response) {
  if (state_ != State::kReady) {
    co_return unexpected(close_error_ ? *close_error_
                                      : Error::transport(fmt::format("{} is not connected", describe())));
  }
  const std::int32_t correlation_id = correlation_ids_.next();
  protocol::Bytes frame = encode_request_frame(request, version, correlation_id, options_.client_id);
  auto body = co_await exchange(Request::kApiKey, version, correlation_id, std::move(frame), deadline, expect_response);
  if (!body) co_return unexpected(std::move(body.error()));
  ResponseOf<Request> response;
  if (!expect_response) co_return response;
  if (!protocol::decode_body(*body, version, response)) {
    Error e = Error::protocol(fmt::format("malformed {} v{} from {}", ResponseOf<Request>::kName, version, describe()));
    close(e.message);
    co_return unexpected(std::move(e));
  }
  co_return response;
}

}  // namespace weir::client
