// What every API handler sees and the shape it must have.
//
// A handler is a type with
//   using Request = protocol::XRequest; using Response = protocol::XResponse;
//   static constexpr std::int16_t kMinVersion, kMaxVersion;   // the versions weir serves
//   static boost::asio::awaitable<HandlerResult<Response>> handle(RequestContext&, Request&);
// It decodes nothing and encodes nothing itself: the dispatcher does both from the schema.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <optional>
#include <string>

#include "broker/quorum_link.h"
#include "net/request_sink.h"
#include "protocol/headers.h"

namespace weir::broker {

class Broker;

struct RequestContext {
  Broker& broker;
  const net::ClientInfo& client;
  const protocol::RequestHeader& header;
  [[nodiscard]] std::int16_t version() const { return header.api_version; }
  // Who sent the request, for an admin request this broker forwards to the controller.
  [[nodiscard]] RequestOrigin origin() const {
    return RequestOrigin{
        .client_id = header.client_id, .correlation_id = header.correlation_id, .client_host = client.host};
  }
};

// nullopt: send no response (e.g. produce with acks=0).
template <class Response>
using HandlerResult = std::optional<Response>;

}  // namespace weir::broker
