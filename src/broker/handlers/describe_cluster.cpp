#include "broker/broker.h"
#include "broker/errors.h"
#include "broker/handlers/handlers.h"

namespace weir::broker {

namespace {
constexpr std::int8_t kBrokerEndpoints = 1;
constexpr std::int16_t kUnsupportedEndpointType = 119;
}  // namespace

boost::asio::awaitable<HandlerResult<DescribeClusterHandler::Response>> DescribeClusterHandler::handle(
    RequestContext& ctx, Request& req) {
  const NodeInfo& node = ctx.broker.node();
  Response resp;
  resp.endpoint_type = req.endpoint_type;
  if (req.endpoint_type != kBrokerEndpoints) {
    // A broker listener answers for brokers only; controllers are asked on their own listener.
    resp.error_code = kUnsupportedEndpointType;
    resp.error_message = "The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type " +
                         std::string(req.endpoint_type == 2 ? "CONTROLLER" : "UNKNOWN");
    co_return resp;
  }
  resp.cluster_id = node.cluster_id;
  auto catalog = ctx.broker.catalog();
  resp.controller_id = catalog->controller_id;
  for (const auto& e : catalog->brokers) {
    auto& b = resp.brokers.emplace_back();
    b.broker_id = e.id;
    b.host = e.host;
    b.port = e.port;
    b.rack = e.rack;
  }
  co_return resp;
}

}  // namespace weir::broker
