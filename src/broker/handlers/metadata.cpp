#include "broker/broker.h"
#include "broker/errors.h"
#include "broker/handlers/handlers.h"

namespace weir::broker {

boost::asio::awaitable<HandlerResult<MetadataHandler::Response>> MetadataHandler::handle(RequestContext& ctx,
                                                                                         Request& req) {
  const NodeInfo& node = ctx.broker.node();
  Response resp;
  auto& b = resp.brokers.emplace_back();
  b.node_id = node.node_id;
  b.host = node.host;
  b.port = node.port;
  resp.cluster_id = node.cluster_id;
  resp.controller_id = node.node_id;

  // v0: an empty list means every topic. v1+: null means every topic, empty means none.
  // No topics exist yet, so every named topic is unknown.
  if (req.topics) {
    for (const auto& t : *req.topics) {
      auto& out = resp.topics.emplace_back();
      if (t.name) {
        out.name = *t.name;
        out.error_code = code(ErrorCode::kUnknownTopicOrPartition);
      } else {
        out.topic_id = t.topic_id;
        out.error_code = code(ErrorCode::kUnknownTopicId);
      }
    }
  }
  co_return resp;
}

}  // namespace weir::broker
