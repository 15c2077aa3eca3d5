// Envelope (API 58): how a Kafka broker carries a client's admin request to the active KRaft
// controller (ForwardingManager). The envelope holds the request as the client sent it (its
// header, with the client's id and correlation id, and its body at the negotiated version), the
// client's principal in the DefaultPrincipalData encoding (a version prefix, then Type, Name and
// TokenAuthenticated) and the client's address as 4 or 16 raw bytes; the controller runs the
// inner request as that client's and answers with the inner response (its header and body) in
// ResponseData. An envelope-level ErrorCode means the envelope itself failed (Kafka's broker
// answers the client UNKNOWN_SERVER_ERROR then, or closes it on UNSUPPORTED_VERSION).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/result.h"
#include "client/errors.h"
#include "client/messages.h"
#include "client/wire.h"
#include "protocol/codec.h"

namespace weir::client {

// The client a forwarded request came from.
struct ForwardOrigin {
  std::optional<std::string> client_id;
  std::int32_t correlation_id = 0;
  std::string client_host;                   // numeric IPv4 or IPv6 address
  std::string principal_type = "User";       // weir authenticates nobody: User:ANONYMOUS, as Kafka's
  std::string principal_name = "ANONYMOUS";  // PLAINTEXT listener without a principal builder
};

// DefaultPrincipalData v0 with its version prefix, as Kafka's DefaultKafkaPrincipalBuilder
// serializes a principal.
[[nodiscard]] protocol::Bytes encode_principal(const std::string& type, const std::string& name,
                                               bool token_authenticated = false);

// The address bytes of a numeric IPv4 or IPv6 address; invalid_argument error otherwise.
[[nodiscard]] Result<protocol::Bytes, Error> address_bytes(const std::string& host);

// The inner request (header without the size prefix, then the body) wrapped for the controller.
[[nodiscard]] Result<protocol::EnvelopeRequest, Error> wrap_request(const protocol::RequestHeader& header,
                                                                    std::span<const std::uint8_t> body,
                                                                    const ForwardOrigin& origin);

template <class Request>
[[nodiscard]] Result<protocol::EnvelopeRequest, Error> wrap_request(const Request& request, std::int16_t version,
                                                                    const ForwardOrigin& origin) {
  const auto [header, body] = request_parts(request, version, origin.correlation_id, origin.client_id);
  return wrap_request(header, body, origin);
}

// The inner response of an envelope answered for a request of (api_key, version) sent with
// `correlation_id`: kafka error for an envelope-level ErrorCode, protocol error when ResponseData
// is missing, malformed, or answers another correlation id.
[[nodiscard]] Result<std::span<const std::uint8_t>, Error> unwrap_response_body(
    const protocol::EnvelopeResponse& envelope, std::int16_t api_key, std::int16_t version,
    std::int32_t correlation_id);

template <class Request>
[[nodiscard]] Result<ResponseOf<Request>, Error> unwrap_response(const protocol::EnvelopeResponse& envelope,
                                                                 std::int16_t version, std::int32_t correlation_id) {
  auto body = unwrap_response_body(envelope, Request::kApiKey, version, correlation_id);
  if (!body) return unexpected(std::move(body.error()));
  ResponseOf<Request> response;
  if (!protocol::decode_body(*body, version, response)) {
    return unexpected(Error::protocol(
        fmt::format("malformed {} v{} inside an EnvelopeResponse", ResponseOf<Request>::kName, version)));
  }
  return response;
}

}  // namespace weir::client
