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

void fill_topic(const TopicInfo& t, const Catalog& catalog, MetadataHandler::Response::MetadataResponseTopic& out) {
  out.error_code = 0;
  out.name = t.name;
  out.topic_id = t.id;
  out.is_internal = t.internal;
  out.partitions.reserve(t.parts.size());
  for (std::int32_t i = 0; i < t.partitions; ++i) {
    const PartitionInfo& info = t.parts[static_cast<std::size_t>(i)];
    auto& p = out.partitions.emplace_back();
    p.partition_index = i;
    p.leader_id = info.leader;
    p.leader_epoch = info.leader_epoch;
    p.replica_nodes = info.replicas;
    p.isr_nodes = info.isr;
    p.offline_replicas = info.offline_replicas;
    // As Kafka's MetadataCache: no leader, or a leader without an endpoint on this listener.
    if (info.leader < 0 || catalog.broker(info.leader) == nullptr) {
      p.error_code = code(ErrorCode::kLeaderNotAvailable);
    }
  }
}

// The cluster part of every answer: the cluster id, the brokers and the controller.
MetadataHandler::Response cluster_part(const NodeInfo& node, const Catalog& catalog) {
  MetadataHandler::Response resp;
  resp.cluster_id = node.cluster_id;
  resp.controller_id = catalog.controller_id;
  for (const auto& e : catalog.brokers) {
    auto& b = resp.brokers.emplace_back();
    b.node_id = e.id;
    b.host = e.host;
    b.port = e.port;
    b.rack = e.rack;
  }
  return resp;
}

}  // namespace

MetadataHandler::Response MetadataHandler::catalog_answer(const NodeInfo& node, const Catalog& catalog) {
  Response resp = cluster_part(node, catalog);
  std::vector<const TopicInfo*> sorted;
  sorted.reserve(catalog.topics.size());
  for (const auto& [name, t] : catalog.topics) sorted.push_back(&t);
  std::sort(sorted.begin(), sorted.end(), [](auto* a, auto* c) { return a->name < c->name; });
  resp.topics.reserve(sorted.size());
  for (const auto* t : sorted) fill_topic(*t, catalog, resp.topics.emplace_back());
  return resp;
}

boost::asio::awaitable<HandlerResult<MetadataHandler::Response>> MetadataHandler::handle(RequestContext& ctx,
                                                                                         Request& req) {
  Broker& broker = ctx.broker;
  const std::int16_t version = ctx.version();
  auto catalog = broker.catalog();
  if (all_topics(req, version)) co_return catalog_answer(broker.node(), *catalog);

  Response resp = cluster_part(broker.node(), *catalog);
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
      fill_topic(*info, *catalog, out);
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
