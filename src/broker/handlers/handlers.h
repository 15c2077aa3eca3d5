// Declarations of every API handler; one .cpp per API beside this file.
#pragma once

#include <cstdint>

#include <boost/asio/awaitable.hpp>

#include "broker/handler.h"
#include "protocol/gen/api_versions_request.h"
#include "protocol/gen/api_versions_response.h"
#include "protocol/gen/metadata_request.h"
#include "protocol/gen/metadata_response.h"

namespace weir::broker {

struct ApiVersionsHandler {
  using Request = protocol::ApiVersionsRequest;
  using Response = protocol::ApiVersionsResponse;
  static constexpr std::int16_t kMinVersion = 0;
  static constexpr std::int16_t kMaxVersion = 4;
  static boost::asio::awaitable<HandlerResult<Response>> handle(RequestContext& ctx, Request& req);
  // KIP-511: a version above kMaxVersion is answered in v0 with UNSUPPORTED_VERSION and the
  // supported range, so the client can retry with a version both sides know.
  static Response unsupported_version_response();
};

struct MetadataHandler {
  using Request = protocol::MetadataRequest;
  using Response = protocol::MetadataResponse;
  static constexpr std::int16_t kMinVersion = 0;
  static constexpr std::int16_t kMaxVersion = 13;
  static boost::asio::awaitable<HandlerResult<Response>> handle(RequestContext& ctx, Request& req);
};

}  // namespace weir::broker
