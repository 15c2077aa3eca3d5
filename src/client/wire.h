// Client-side framing and correlation, independent of sockets.
//
// A request frame is: int32 size (bytes after it), the request header (v2 when the API version
// is flexible, else v1: headers.h), the body. A response frame is: int32 size, the response header
// (correlation id, plus a tagged-field section when the version is flexible, except for
// ApiVersions), the body.
//
// Responses on one connection come back in the order the requests were sent, so the client keeps
// its in-flight requests in a FIFO and checks that each response's correlation id is the one at
// its front; a mismatch means the stream can no longer be trusted (Kafka's NetworkClient treats
// it as fatal for the connection).
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <utility>

#include "base/result.h"
#include "client/errors.h"
#include "protocol/codec.h"
#include "protocol/headers.h"

namespace weir::client {

// Correlation ids 0, 1, 2, ... wrapping from INT32_MAX back to 0 (never negative).
class CorrelationIds {
 public:
  explicit CorrelationIds(std::int32_t first = 0) noexcept : next_(first) {}
  std::int32_t next() noexcept {
    const std::int32_t id = next_;
    next_ = next_ == INT32_MAX ? 0 : next_ + 1;
    return id;
  }

 private:
  std::int32_t next_;
};

// The size-prefixed frame of a request whose body is already encoded.
[[nodiscard]] protocol::Bytes encode_request_frame(const protocol::RequestHeader& header,
                                                   std::span<const std::uint8_t> body);

// The header and the encoded body of `request` at `version`.
template <class Request>
[[nodiscard]] std::pair<protocol::RequestHeader, protocol::Bytes> request_parts(
    const Request& request, std::int16_t version, std::int32_t correlation_id,
    const std::optional<std::string>& client_id) {
  protocol::Bytes body;
  protocol::Writer w(body);
  request.encode(w, version);
  protocol::RequestHeader header;
  header.api_key = Request::kApiKey;
  header.api_version = version;
  header.correlation_id = correlation_id;
  header.client_id = client_id;
  return {std::move(header), std::move(body)};
}

template <class Request>
[[nodiscard]] protocol::Bytes encode_request_frame(const Request& request, std::int16_t version,
                                                   std::int32_t correlation_id,
                                                   const std::optional<std::string>& client_id) {
  const auto [header, body] = request_parts(request, version, correlation_id, client_id);
  return encode_request_frame(header, body);
}

struct ResponseFrame {
  std::int32_t correlation_id = 0;
  std::span<const std::uint8_t> body;
};

// Splits a response frame (without its size prefix) into header and body for a request of
// (api_key, api_version). protocol errors for a truncated or malformed header.
[[nodiscard]] Result<ResponseFrame, Error> split_response(std::span<const std::uint8_t> frame, std::int16_t api_key,
                                                          std::int16_t api_version);

// Requests awaiting their responses, oldest first. T is whatever the caller needs to complete one.
template <class T>
class InFlight {
 public:
  void push(std::int32_t correlation_id, T value) { queue_.emplace_back(correlation_id, std::move(value)); }

  // The oldest request, if its correlation id is `correlation_id`; protocol error otherwise
  // (nothing is removed then).
  Result<T, Error> complete(std::int32_t correlation_id) {
    if (queue_.empty()) {
      return unexpected(Error::protocol(fmt_unexpected(correlation_id)));
    }
    if (queue_.front().first != correlation_id) {
      return unexpected(Error::protocol(fmt_mismatch(queue_.front().first, correlation_id)));
    }
    T value = std::move(queue_.front().second);
    queue_.pop_front();
    return value;
  }

  // The oldest request without removing it.
  [[nodiscard]] const T* front() const { return queue_.empty() ? nullptr : &queue_.front().second; }

  // Removes and returns everything (the connection closed).
  std::deque<std::pair<std::int32_t, T>> drain() { return std::exchange(queue_, {}); }

  [[nodiscard]] std::size_t size() const noexcept { return queue_.size(); }
  [[nodiscard]] bool empty() const noexcept { return queue_.empty(); }

 private:
  static std::string fmt_unexpected(std::int32_t got);
  static std::string fmt_mismatch(std::int32_t expected, std::int32_t got);

  std::deque<std::pair<std::int32_t, T>> queue_;
};

namespace detail {
std::string unexpected_response_message(std::int32_t got);
std::string correlation_mismatch_message(std::int32_t expected, std::int32_t got);
}  // namespace detail

template <class T>
std::string InFlight<T>::fmt_unexpected(std::int32_t got) {
  return detail::unexpected_response_message(got);
}
template <class T>
std::string InFlight<T>::fmt_mismatch(std::int32_t expected, std::int32_t got) {
  return detail::correlation_mismatch_message(expected, got);
}

}  // namespace weir::client
