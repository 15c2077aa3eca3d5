// ControllerChannel: sends a request to the active KRaft controller, as Kafka's
// NodeToControllerChannelManager does for a broker: to the metadata quorum's leader when one is
// known (the MetadataFollower's leader), to the quorum's bootstrap endpoints in turn until then.
// Each attempt negotiates the version through client::Connection (ApiVersions), capped at the
// caller's max_version, and is bounded by request_timeout_ms. NOT_CONTROLLER (at any depth of the
// answer), Kafka's retriable codes at the top level, transport failures and attempt timeouts are
// retried with exponential backoff (retry.backoff.ms doubling up to retry.backoff.max.ms) until
// the caller's deadline; other answers, error codes included, are returned as they are. Errors are
// client::Error values: the last one seen when the deadline passes (kind timeout).
//
// With an origin (a client's admin request forwarded by this broker), each attempt wraps the
// request in an Envelope (client/envelope.h) as Kafka's ForwardingManager does, so the controller
// runs it as the client's (its client id, correlation id, principal and address); the inner
// response is retried and returned as above. NOT_CONTROLLER on the envelope itself (how a
// controller that is not active answers one) is retried; any other envelope error is not: kafka
// error UNKNOWN_SERVER_ERROR, which Kafka's broker answers the client then (UNSUPPORTED_VERSION:
// kind unsupported, as Kafka closes the client's connection).
//
// Threading: one executor; call send() from coroutines on it. Several sends may be in flight.
#pragma once

#include <fmt/format.h>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "base/result.h"
#include "client/backoff.h"
#include "client/connection.h"
#include "client/envelope.h"
#include "client/errors.h"
#include "client/messages.h"
#include "cluster/connection_pool.h"
#include "cluster/kafka_codes.h"
#include "cluster/quorum_config.h"

namespace weir::cluster {

struct ChannelOptions {
  std::int64_t request_timeout_ms = 2000;  // per attempt
  client::BackoffPolicy backoff{.initial_ms = 100, .max_ms = 1000, .multiplier = 2, .jitter = 0.2};
  client::ConnectionOptions connection = {};
};

class ControllerChannel {
 public:
  // The active controller, if known (e.g. [&]{ return follower->leader_address(); }).
  using LeaderFn = std::function<std::optional<ControllerAddress>()>;

  ControllerChannel(boost::asio::any_io_executor executor, std::vector<ControllerAddress> bootstrap,
                    ChannelOptions options, LeaderFn leader = {});
  ControllerChannel(const ControllerChannel&) = delete;
  ControllerChannel& operator=(const ControllerChannel&) = delete;
  ~ControllerChannel();

  template <class Request>
  boost::asio::awaitable<Result<client::ResponseOf<Request>, client::Error>> send(
      const Request& request, std::optional<std::int16_t> max_version, client::Deadline deadline,
      std::optional<client::ForwardOrigin> origin = std::nullopt);

  // Closes every connection; sends in flight fail, later ones fail at once.
  void stop();
  [[nodiscard]] std::int64_t attempts() const noexcept { return attempts_; }

 private:
  ControllerAddress pick_target();
  // Waits the backoff before attempt + 1; false once the deadline would pass first.
  boost::asio::awaitable<bool> backoff(int attempt, client::Deadline deadline);
  void forget(const ControllerAddress& target);

  template <class Response>
  static std::int16_t retry_code(const Response& response);

  // One attempt of a forwarded request: its Envelope on `conn` and the inner response. An error
  // in the envelope itself is kafka NOT_CONTROLLER (retried), unsupported (UNSUPPORTED_VERSION) or
  // kafka UNKNOWN_SERVER_ERROR (anything else); transport and protocol errors as Connection::send.
  template <class Request>
  static boost::asio::awaitable<Result<client::ResponseOf<Request>, client::Error>> send_enveloped(
      client::Connection& conn, const Request& request, std::int16_t version, const client::ForwardOrigin& origin,
      client::Deadline deadline);

  boost::asio::any_io_executor executor_;
  std::vector<ControllerAddress> bootstrap_;
  ChannelOptions options_;
  LeaderFn leader_;
  client::ExponentialBackoff backoff_;
  std::mt19937_64 random_;
  std::size_t next_bootstrap_ = 0;
  std::optional<client::Endpoint> avoid_;  // the endpoint that last said NOT_CONTROLLER or failed
  ConnectionPool connections_;
  std::int64_t attempts_ = 0;
  bool stopped_ = false;
};

template <class Response>
std::int16_t ControllerChannel::retry_code(const Response& response) {
  std::int16_t found = 0;
  response.for_each_error_code([&](std::int16_t code, int depth) {
    if (found != 0) return;
    if (code == code::kNotController)
      found = code;
    else if (depth == 0 && client::is_retriable(code))
      found = code;
  });
  return found;
}

template <class Request>
boost::asio::awaitable<Result<client::ResponseOf<Request>, client::Error>> ControllerChannel::send_enveloped(
    client::Connection& conn, const Request& request, std::int16_t version, const client::ForwardOrigin& origin,
    client::Deadline deadline) {
  auto wrapped = client::wrap_request(request, version, origin);
  if (!wrapped) co_return unexpected(std::move(wrapped.error()));
  auto envelope = co_await conn.send(*wrapped, 0, deadline);
  if (!envelope) co_return unexpected(std::move(envelope.error()));
  switch (const std::int16_t refused = envelope->error_code) {
    case code::kNone:
      co_return client::unwrap_response<Request>(*envelope, version, origin.correlation_id);
    case code::kNotController:
      co_return unexpected(
          client::Error::kafka(refused, fmt::format("{} is not the active controller", conn.describe())));
    case code::kUnsupportedVersion:
      co_return unexpected(client::Error::unsupported(fmt::format(
          "{} refused the Envelope of {} v{} with UNSUPPORTED_VERSION", conn.describe(), Request::kName, version)));
    default:
      co_return unexpected(client::Error::kafka(
          code::kUnknownServerError,
          fmt::format("{} refused the Envelope of {} with error code {}", conn.describe(), Request::kName, refused)));
  }
}

template <class Request>
boost::asio::awaitable<Result<client::ResponseOf<Request>, client::Error>> ControllerChannel::send(
    const Request& request, std::optional<std::int16_t> max_version, client::Deadline deadline,
    std::optional<client::ForwardOrigin> origin) {
  std::optional<client::Error> last;
  for (int attempt = 0;; ++attempt) {
    if (stopped_) co_return unexpected(client::Error::transport("controller channel stopped"));
    if (attempt > 0 && !co_await backoff(attempt - 1, deadline)) break;
    if (std::chrono::steady_clock::now() >= deadline) break;
    ++attempts_;
    const ControllerAddress target = pick_target();
    const client::Deadline attempt_deadline =
        std::min(deadline, client::deadline_after_ms(options_.request_timeout_ms));
    auto conn = co_await connections_.connect(target, attempt_deadline);
    if (!conn) {
      last = std::move(conn.error());
      forget(target);
      continue;
    }
    const auto version = (*conn)->versions().pick(Request::kApiKey, max_version);
    if (!version) {
      co_return unexpected(client::Error::unsupported(
          fmt::format("{} offers no version of {} that weir can use", (*conn)->describe(), Request::kName)));
    }
    Result<client::ResponseOf<Request>, client::Error> response = unexpected(client::Error::transport("not sent"));
    if (origin && (*conn)->versions().pick(protocol::EnvelopeRequest::kApiKey, 0)) {
      response = co_await send_enveloped(**conn, request, *version, *origin, attempt_deadline);
    } else {
      response = co_await (*conn)->send(request, *version, attempt_deadline);
    }
    if (!response) {
      const client::ErrorKind kind = response.error().kind;
      if (kind == client::ErrorKind::kKafka && response.error().code == code::kNotController) {
        last = std::move(response.error());  // the envelope's own NOT_CONTROLLER: another controller leads
        avoid_ = target.endpoint;
        continue;
      }
      if (kind == client::ErrorKind::kProtocol || kind == client::ErrorKind::kKafka ||
          kind == client::ErrorKind::kUnsupported || kind == client::ErrorKind::kInvalidArgument) {
        co_return unexpected(std::move(response.error()));
      }
      last = std::move(response.error());
      forget(target);
      continue;
    }
    if (const std::int16_t code = retry_code(*response); code != 0) {
      last = client::Error::kafka(
          code, fmt::format("{} answered {} with a retriable error", (*conn)->describe(), Request::kName));
      avoid_ = target.endpoint;
      continue;
    }
    avoid_.reset();
    co_return std::move(*response);
  }
  if (!last)
    co_return unexpected(client::Error::timeout(fmt::format("{} not sent before the deadline", Request::kName)));
  co_return unexpected(client::Error::timeout(
      fmt::format("{} to the active controller did not complete before the deadline; last error: {}", Request::kName,
                  last->to_string()),
      last->code));
}

}  // namespace weir::cluster
