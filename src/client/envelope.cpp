#include "client/envelope.h"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <array>

#include "protocol/headers.h"

namespace weir::client {

protocol::Bytes encode_principal(const std::string& type, const std::string& name, bool token_authenticated) {
  protocol::Bytes out;
  protocol::Writer w(out);
  w.i16(0);  // DefaultPrincipalData's version; v0 is flexible
  w.string(true, type);
  w.string(true, name);
  w.boolean(token_authenticated);
  w.uvarint(0);  // no tagged fields
  return out;
}

Result<protocol::Bytes, Error> address_bytes(const std::string& host) {
  std::array<std::uint8_t, 16> buf{};
  if (::inet_pton(AF_INET, host.c_str(), buf.data()) == 1) return protocol::Bytes(buf.begin(), buf.begin() + 4);
  if (::inet_pton(AF_INET6, host.c_str(), buf.data()) == 1) return protocol::Bytes(buf.begin(), buf.end());
  return unexpected(Error::invalid_argument(fmt::format("'{}' is not a numeric IPv4 or IPv6 address", host)));
}

Result<protocol::EnvelopeRequest, Error> wrap_request(const protocol::RequestHeader& header,
                                                      std::span<const std::uint8_t> body, const ForwardOrigin& origin) {
  auto address = address_bytes(origin.client_host);
  if (!address) return unexpected(std::move(address.error()));
  protocol::EnvelopeRequest envelope;
  protocol::Writer w(envelope.request_data);
  protocol::write_request_header(w, header);
  w.raw(body.data(), body.size());
  envelope.request_principal = encode_principal(origin.principal_type, origin.principal_name);
  envelope.client_host_address = std::move(*address);
  return envelope;
}

Result<std::span<const std::uint8_t>, Error> unwrap_response_body(const protocol::EnvelopeResponse& envelope,
                                                                  std::int16_t api_key, std::int16_t version,
                                                                  std::int32_t correlation_id) {
  if (envelope.error_code != 0) {
    return unexpected(Error::kafka(envelope.error_code, "the controller refused the envelope"));
  }
  if (!envelope.response_data) return unexpected(Error::protocol("EnvelopeResponse without ResponseData"));
  auto split = split_response(*envelope.response_data, api_key, version);
  if (!split) return unexpected(std::move(split.error()));
  if (split->correlation_id != correlation_id) {
    return unexpected(Error::protocol(
        fmt::format("EnvelopeResponse answers correlation id {}, not {}", split->correlation_id, correlation_id)));
  }
  return split->body;
}

}  // namespace weir::client
