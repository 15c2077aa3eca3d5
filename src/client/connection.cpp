#include "client/connection.h"

#include <algorithm>
#include <array>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include "base/assert.h"
#include "base/log.h"
#include "protocol/gen/api_versions_request.h"

namespace weir::client {

namespace asio = boost::asio;
using asio::redirect_error;
using asio::use_awaitable;

Connection::Connection(asio::any_io_executor executor, std::int32_t node_id, Endpoint endpoint,
                       ConnectionOptions options)
    : executor_(executor),
      node_id_(node_id),
      endpoint_(std::move(endpoint)),
      options_(std::move(options)),
      socket_(executor),
      writer_wake_(executor),
      connect_timer_(executor) {
  writer_wake_.expires_at(asio::steady_timer::time_point::max());
}

std::string Connection::describe() const {
  if (node_id_ < 0) return fmt::format("bootstrap server {}", endpoint_.to_string());
  return fmt::format("node {} ({})", node_id_, endpoint_.to_string());
}

void Connection::start() {
  WEIR_ASSERT(!started_, "connection to {} started twice", describe());
  started_ = true;
  auto self = shared_from_this();
  connect_timer_.expires_after(std::chrono::milliseconds(options_.connect_timeout_ms));
  asio::co_spawn(executor_, [self]() { return self->watchdog(); }, asio::detached);
  asio::co_spawn(executor_, [self]() { return self->run(); }, asio::detached);
}

asio::awaitable<void> Connection::watchdog() {
  boost::system::error_code ec;
  co_await connect_timer_.async_wait(redirect_error(use_awaitable, ec));
  if (!ec && state_ == State::kConnecting) {
    fail(Error::transport(
        fmt::format("connection to {} not established within {} ms", describe(), options_.connect_timeout_ms)));
  }
}

asio::awaitable<void> Connection::run() {
  boost::system::error_code ec;
  asio::ip::tcp::resolver resolver(executor_);
  const auto results = co_await resolver.async_resolve(endpoint_.host, std::to_string(endpoint_.port),
                                                       redirect_error(use_awaitable, ec));
  if (state_ != State::kConnecting) co_return;
  if (ec) {
    fail(Error::transport(fmt::format("cannot resolve {}: {}", endpoint_.to_string(), ec.message())));
    co_return;
  }
  co_await asio::async_connect(socket_, results, redirect_error(use_awaitable, ec));
  if (state_ != State::kConnecting) co_return;
  if (ec) {
    fail(Error::transport(fmt::format("cannot connect to {}: {}", describe(), ec.message())));
    co_return;
  }
  socket_.set_option(asio::ip::tcp::no_delay(true), ec);
  auto self = shared_from_this();
  asio::co_spawn(executor_, [self]() { return self->read_loop(); }, asio::detached);
  asio::co_spawn(executor_, [self]() { return self->write_loop(); }, asio::detached);
  const Deadline deadline = connect_timer_.expiry();
  auto done = co_await handshake(deadline);
  if (state_ != State::kConnecting) co_return;
  if (!done) {
    fail(std::move(done.error()));
    co_return;
  }
  state_ = State::kReady;
  connect_timer_.cancel();
  wake_ready_waiters();
}

asio::awaitable<Status<Error>> Connection::handshake(Deadline deadline) {
  protocol::ApiVersionsRequest request;
  request.client_software_name = options_.software_name;
  request.client_software_version = options_.software_version;
  std::int16_t version = protocol::ApiVersionsRequest::kMaxVersion;
  for (int attempt = 0; attempt < 4; ++attempt) {
    const std::int32_t correlation_id = correlation_ids_.next();
    auto frame = encode_request_frame(request, version, correlation_id, options_.client_id);
    auto body = co_await exchange(protocol::ApiVersionsRequest::kApiKey, version, correlation_id, std::move(frame),
                                  deadline, true);
    if (!body) co_return unexpected(std::move(body.error()));
    auto response = decode_api_versions_response(*body, version);
    if (!response)
      co_return unexpected(Error::protocol(fmt::format("malformed ApiVersionsResponse from {}", describe())));
    const HandshakeStep step = next_handshake_step(version, *response);
    if (std::holds_alternative<HandshakeDone>(step)) {
      versions_ = VersionTable(*response);
      co_return Status<Error>{};
    }
    if (const auto* failed = std::get_if<HandshakeFailed>(&step)) {
      co_return unexpected(
          Error::kafka(failed->error_code, fmt::format("ApiVersions v{} refused by {}", version, describe())));
    }
    version = std::get<HandshakeRetry>(step).version;
  }
  co_return unexpected(Error::protocol(fmt::format("{} kept refusing ApiVersions versions", describe())));
}

asio::awaitable<Status<Error>> Connection::ready(Deadline deadline) {
  while (state_ == State::kConnecting && std::chrono::steady_clock::now() < deadline) {
    // Every waiter has its own timer at its own deadline; a state change cancels them all.
    auto timer = std::make_shared<asio::steady_timer>(executor_);
    timer->expires_at(deadline);
    ready_waiters_.push_back(timer);
    boost::system::error_code ec;
    co_await timer->async_wait(redirect_error(use_awaitable, ec));
    std::erase(ready_waiters_, timer);
  }
  if (state_ == State::kReady) co_return Status<Error>{};
  if (state_ == State::kClosed) co_return unexpected(*close_error_);
  co_return unexpected(Error::timeout(fmt::format("connection to {} not ready before the deadline", describe())));
}

void Connection::wake_ready_waiters() {
  for (auto& t : ready_waiters_) t->cancel();
}

void Connection::close(const std::string& reason) {
  fail(Error::transport(fmt::format("connection to {} closed: {}", describe(), reason)));
}

void Connection::fail(Error error) {
  if (state_ == State::kClosed) return;
  log::get("client")->debug("event=connection_closed {} {}", log::kv("peer", describe()),
                            log::kv("reason", error.to_string()));
  state_ = State::kClosed;
  close_error_ = error;
  boost::system::error_code ignored;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
  writer_wake_.cancel();
  connect_timer_.cancel();
  wake_ready_waiters();
  outbox_.clear();
  for (auto& [id, pending] : in_flight_.drain()) {
    pending->result = unexpected(error);
    pending->timer.cancel();
  }
  for (auto& waiter : std::exchange(waiting_for_slot_, {})) waiter->timer.cancel();
}

asio::awaitable<Result<protocol::Bytes, Error>> Connection::exchange(std::int16_t api_key, std::int16_t api_version,
                                                                     std::int32_t correlation_id, protocol::Bytes frame,
                                                                     Deadline deadline, bool expect_response) {
  auto pending = std::make_shared<Pending>(executor_, api_key, api_version);
  boost::system::error_code ec;
  while (state_ != State::kClosed && in_flight_.size() >= options_.max_in_flight) {
    if (std::chrono::steady_clock::now() >= deadline) {
      co_return unexpected(Error::timeout(fmt::format("no request slot free on {} before the deadline", describe())));
    }
    waiting_for_slot_.push_back(pending);
    pending->timer.expires_at(deadline);
    co_await pending->timer.async_wait(redirect_error(use_awaitable, ec));
    std::erase(waiting_for_slot_, pending);
  }
  if (state_ == State::kClosed) co_return unexpected(*close_error_);
  if (expect_response) in_flight_.push(correlation_id, pending);
  outbox_.push_back(std::move(frame));
  writer_wake_.cancel_one();
  if (!expect_response) co_return protocol::Bytes{};
  pending->timer.expires_at(deadline);
  while (!pending->result) {
    co_await pending->timer.async_wait(redirect_error(use_awaitable, ec));
    if (pending->result) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      const auto name = protocol::find_api(api_key) ? protocol::find_api(api_key)->name : std::string_view("?");
      Error e = Error::timeout(
          fmt::format("{} v{} to {} got no response before the deadline", name, api_version, describe()));
      close(fmt::format("request {} timed out", correlation_id));
      co_return unexpected(std::move(e));
    }
  }
  co_return std::move(*pending->result);
}

asio::awaitable<void> Connection::write_loop() {
  auto self = shared_from_this();
  while (state_ != State::kClosed) {
    if (outbox_.empty()) {
      boost::system::error_code ec;
      co_await writer_wake_.async_wait(redirect_error(use_awaitable, ec));
      continue;
    }
    protocol::Bytes frame = std::move(outbox_.front());
    outbox_.pop_front();
    boost::system::error_code ec;
    co_await asio::async_write(socket_, asio::buffer(frame), redirect_error(use_awaitable, ec));
    if (ec) {
      fail(Error::transport(fmt::format("cannot write to {}: {}", describe(), ec.message())));
      co_return;
    }
  }
}

asio::awaitable<void> Connection::read_loop() {
  auto self = shared_from_this();
  std::array<std::uint8_t, 4> size_buf{};
  while (state_ != State::kClosed) {
    boost::system::error_code ec;
    co_await asio::async_read(socket_, asio::buffer(size_buf), redirect_error(use_awaitable, ec));
    if (ec) {
      fail(Error::transport(ec == asio::error::eof ? fmt::format("{} closed the connection", describe())
                                                   : fmt::format("cannot read from {}: {}", describe(), ec.message())));
      co_return;
    }
    const auto size =
        static_cast<std::int32_t>((std::uint32_t{size_buf[0]} << 24) | (std::uint32_t{size_buf[1]} << 16) |
                                  (std::uint32_t{size_buf[2]} << 8) | size_buf[3]);
    if (size < 4 || size > options_.max_response_bytes) {
      fail(Error::protocol(
          fmt::format("{} sent a response of {} bytes (limit {})", describe(), size, options_.max_response_bytes)));
      co_return;
    }
    protocol::Bytes frame(static_cast<std::size_t>(size));
    co_await asio::async_read(socket_, asio::buffer(frame), redirect_error(use_awaitable, ec));
    if (ec) {
      fail(Error::transport(fmt::format("cannot read from {}: {}", describe(), ec.message())));
      co_return;
    }
    const auto* front = in_flight_.front();
    if (front == nullptr) {
      fail(Error::protocol(fmt::format("{} sent a response nobody asked for", describe())));
      co_return;
    }
    auto split = split_response(frame, (*front)->api_key, (*front)->api_version);
    if (!split) {
      fail(std::move(split.error()));
      co_return;
    }
    const std::size_t header_size = frame.size() - split->body.size();
    auto done = in_flight_.complete(split->correlation_id);
    if (!done) {
      fail(std::move(done.error()));
      co_return;
    }
    frame.erase(frame.begin(), frame.begin() + static_cast<std::ptrdiff_t>(header_size));
    (*done)->result = std::move(frame);
    (*done)->timer.cancel();
    if (!waiting_for_slot_.empty()) {
      waiting_for_slot_.front()->timer.cancel();
      waiting_for_slot_.pop_front();
    }
  }
}

}  // namespace weir::client
