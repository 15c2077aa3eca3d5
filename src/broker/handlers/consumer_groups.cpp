// The consumer group protocol (KIP-848): ConsumerGroupHeartbeat and ConsumerGroupDescribe. As the
// classic group APIs (groups.cpp), each group's requests run on the shard owning its
// `__consumer_offsets` partition, against that partition's coordinator (GroupService), with the
// topic image of the broker's current catalog.
#include <map>

#include "broker/broker.h"
#include "broker/errors.h"
#include "broker/group_service.h"
#include "broker/handlers/handlers.h"

namespace weir::broker {

namespace asio = boost::asio;

namespace {

// Kafka's KafkaApis.isConsumerGroupProtocolEnabled: the finalized group.version is at least 1
// (a single weir node finalizes 1; under a quorum, whatever the cluster was formatted or updated
// with). When it is not, ApiVersions still lists APIs 68 and 69 (Kafka does not filter them),
// and both answer UNSUPPORTED_VERSION without an error message.
bool consumer_protocol_enabled(const Broker& broker) {
  const auto catalog = broker.catalog();
  const auto it = catalog->finalized_features.find(std::string(kGroupVersionFeature));
  return it != catalog->finalized_features.end() && it->second >= 1;
}

}  // namespace

asio::awaitable<HandlerResult<ConsumerGroupHeartbeatHandler::Response>> ConsumerGroupHeartbeatHandler::handle(
    RequestContext& ctx, Request& req) {
  Broker& broker = ctx.broker;
  const std::int16_t version = ctx.version();
  if (!consumer_protocol_enabled(broker)) {
    Response refused;
    refused.error_code = code(ErrorCode::kUnsupportedVersion);
    co_return refused;
  }
  // Kafka reports the client's address as InetAddress.toString() does: "/<ip>".
  const group::ClientInfo client{ctx.header.client_id.value_or(""), "/" + ctx.client.host};
  auto out = co_await broker.groups().update_with_topics<Response>(
      broker.group_partition(req.group_id),
      [&](group::GroupCoordinator& c, const group::TopicImage& topics, std::int64_t now) {
        return c.consumer_group_heartbeat(req, version, client, topics, now);
      });
  if (out.error != 0) {
    // Not the coordinator, or the records did not become durable: the member retries from its
    // last state (the coordinator's state was rebuilt from the log).
    Response failed;
    failed.error_code = out.error;
    co_return failed;
  }
  co_return std::move(out.response);
}

asio::awaitable<HandlerResult<ConsumerGroupDescribeHandler::Response>> ConsumerGroupDescribeHandler::handle(
    RequestContext& ctx, Request& req) {
  Broker& broker = ctx.broker;
  const std::int16_t version = ctx.version();
  if (!consumer_protocol_enabled(broker)) {
    Response refused;
    for (const auto& g : req.group_ids) {
      auto& d = refused.groups.emplace_back();
      d.group_id = g;
      d.error_code = code(ErrorCode::kUnsupportedVersion);
    }
    co_return refused;
  }
  // One sub-request per coordinator partition; answers in request order. An empty group id is
  // INVALID_GROUP_ID without reaching a coordinator, as in Kafka's GroupCoordinatorService.
  std::map<std::int32_t, Request> by_partition;
  for (const auto& g : req.group_ids) {
    if (!g.empty()) by_partition[broker.group_partition(g)].group_ids.push_back(g);
  }
  std::map<std::string, protocol::ConsumerGroupDescribeResponse::DescribedGroup> described;
  for (auto& [partition, sub] : by_partition) {
    sub.include_authorized_operations = req.include_authorized_operations;
    auto part = co_await broker.groups().read_with_topics(
        partition, [&](const group::GroupCoordinator& c, const group::TopicImage& topics) {
          return c.consumer_group_describe(sub, version, topics);
        });
    if (!part) {
      for (const auto& g : sub.group_ids) {
        auto& d = described[g];
        d.group_id = g;
        d.error_code = code(ErrorCode::kNotCoordinator);
      }
      continue;
    }
    for (auto& g : part->groups) described[g.group_id] = std::move(g);
  }
  Response resp;
  for (const auto& g : req.group_ids) {
    auto& d = resp.groups.emplace_back(described[g]);
    if (g.empty()) {
      d.group_id = "";
      d.error_code = code(ErrorCode::kInvalidGroupId);
    }
  }
  co_return resp;
}

}  // namespace weir::broker
