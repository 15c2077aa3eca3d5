// Metadata: this broker, the cluster id, and the requested topics (all of them for a null list,
// or an empty one in v0). A missing topic is created when the request allows it and
// auto.create.topics.enable is on, with num.partitions and default.replication.factor.
// Differs from Kafka on purpose: the new topic is described in this same response (the creation
// is synchronous here), where Kafka first answers LEADER_NOT_AVAILABLE and the client retries.
#include "broker/broker.h"
#include "broker/errors.h"
#include "broker/handlers/handlers.h"

namespace weir::broker {

namespace {

void fill_topic(const TopicInfo& t, std::int32_t node_id, MetadataHandler::Response::MetadataResponseTopic& out) {
  out.error_code = 0;
  out.name = t.name;
  out.topic_id = t.id;
  out.is_internal = t.internal;
  for (std::int32_t i = 0; i < t.partitions; ++i) {
    auto& p = out.partitions.emplace_back();
    p.partition_index = i;
    p.leader_id = node_id;
    p.leader_epoch = i < static_cast<std::int32_t>(t.leader_epochs.size()) ? t.leader_epochs[i] : 0;
    p.replica_nodes = {node_id};
    p.isr_nodes = {node_id};
  }
}

}  // namespace

boost::asio::awaitable<HandlerResult<MetadataHandler::Response>> MetadataHandler::handle(RequestContext& ctx,
                                                                                         Request& req) {
  Broker& broker = ctx.broker;
  const NodeInfo& node = broker.node();
  const std::int16_t version = ctx.version();
  Response resp;
  auto& b = resp.brokers.emplace_back();
  b.node_id = node.node_id;
  b.host = node.host;
  b.port = node.port;
  resp.cluster_id = node.cluster_id;
  resp.controller_id = node.node_id;

  const bool all_topics = !req.topics || (version == 0 && req.topics->empty());
  auto catalog = broker.catalog();
  if (all_topics) {
    std::vector<const TopicInfo*> sorted;
    for (const auto& [name, t] : catalog->topics) sorted.push_back(&t);
    std::sort(sorted.begin(), sorted.end(), [](auto* a, auto* c) { return a->name < c->name; });
    for (const auto* t : sorted) fill_topic(*t, node.node_id, resp.topics.emplace_back());
    co_return resp;
  }

  // Auto-creation first, so the answer below already describes the new topics.
  const bool allow_auto = (version < 4 || req.allow_auto_topic_creation) && broker.auto_create_topics();
  if (allow_auto) {
    std::vector<std::string> missing;
    for (const auto& t : *req.topics) {
      if (t.name && !t.name->empty() && catalog->find(*t.name) == nullptr) missing.push_back(*t.name);
    }
    if (!missing.empty()) {
      co_await broker.auto_create_topics(missing);
      catalog = broker.catalog();
    }
  }
  for (const auto& t : *req.topics) {
    auto& out = resp.topics.emplace_back();
    const TopicInfo* info = nullptr;
    if (t.name) {
      info = catalog->find(*t.name);
      out.name = *t.name;
    } else if (auto name = catalog->name_of(t.topic_id)) {
      info = catalog->find(*name);
    }
    if (info != nullptr) {
      fill_topic(*info, node.node_id, out);
    } else if (t.name) {
      out.error_code = code(broker.is_valid_topic_name(*t.name) ? ErrorCode::kUnknownTopicOrPartition
                                                                 : ErrorCode::kInvalidTopicException);
    } else {
      out.topic_id = t.topic_id;
      out.name.reset();
      out.error_code = code(ErrorCode::kUnknownTopicId);
    }
  }
  co_return resp;
}

}  // namespace weir::broker
