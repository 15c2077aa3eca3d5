#include <algorithm>
#include <regex>

#include "broker/broker.h"
#include "broker/errors.h"
#include "broker/handlers/handlers.h"
#include "broker/handlers/registry.h"

namespace weir::broker {

namespace {

protocol::ApiVersionsResponse base_response() {
  protocol::ApiVersionsResponse resp;
  for (const auto& api : served_apis()) {
    auto& k = resp.api_keys.emplace_back();
    k.api_key = api.key;
    k.min_version = api.min_version;
    k.max_version = api.max_version;
  }
  return resp;
}

// Client software name and version (v3+) must be non-empty and made of letters, digits, '-'
// and '.', starting and ending with a letter or digit.
bool valid_software_field(const std::string& s) {
  static const std::regex pattern("[a-zA-Z0-9](?:[a-zA-Z0-9\\-.]*[a-zA-Z0-9])?");
  return std::regex_match(s, pattern);
}

}  // namespace

boost::asio::awaitable<HandlerResult<ApiVersionsHandler::Response>> ApiVersionsHandler::handle(
    RequestContext& ctx, Request& req) {
  Response resp = base_response();
  if (ctx.version() >= 3 &&
      (!valid_software_field(req.client_software_name) || !valid_software_field(req.client_software_version))) {
    resp.error_code = code(ErrorCode::kInvalidRequest);
    co_return resp;
  }
  if (ctx.version() >= 3) {
    // The ranges this broker serves (and registers with a controller quorum); finalized: on one
    // node transaction.version 2 (Java producers then use transaction protocol v2) and
    // group.version 1 (clients may use the consumer group protocol), under a quorum the
    // quorum's levels.
    auto catalog = ctx.broker.catalog();
    resp.finalized_features_epoch = catalog->features_epoch;
    if (catalog->features_epoch >= 0) {
      // Below v4, supported ranges starting at 0 are left out (KIP-1022: older clients cannot
      // read a minimum of 0), as Kafka does.
      auto supported = [&](std::string_view name, std::int16_t min, std::int16_t max) {
        if (ctx.version() < 4 && min == 0) return;
        auto& sf = resp.supported_features.emplace_back();
        sf.name = std::string(name);
        sf.min_version = min;
        sf.max_version = max;
      };
      for (const auto& f : kSupportedFeatures) {
        if (!f.cluster_only || ctx.broker.quorum() != nullptr) supported(f.name, f.min_version, f.max_version);
      }
      for (const auto& [name, level] : catalog->finalized_features) {
        auto& ff = resp.finalized_features.emplace_back();
        ff.name = name;
        ff.min_version_level = level;
        ff.max_version_level = level;
      }
    }
  }
  co_return resp;
}

ApiVersionsHandler::Response ApiVersionsHandler::unsupported_version_response() {
  Response resp;
  resp.error_code = code(ErrorCode::kUnsupportedVersion);
  auto& k = resp.api_keys.emplace_back();
  k.api_key = Request::kApiKey;
  k.min_version = kMinVersion;
  k.max_version = kMaxVersion;
  return resp;
}

std::vector<ServedApi> served_apis() {
  std::vector<ServedApi> out;
  std::apply(
      [&]<class... H>(H...) {
        (out.push_back(ServedApi{H::Request::kApiKey, H::Request::kApiKey == 0 ? std::int16_t{0} : H::kMinVersion,
                                 H::kMaxVersion}),
         ...);
      },
      AllHandlers{});
  std::sort(out.begin(), out.end(), [](const ServedApi& a, const ServedApi& b) { return a.key < b.key; });
  return out;
}

}  // namespace weir::broker
