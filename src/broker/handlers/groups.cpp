// Consumer group membership: FindCoordinator, JoinGroup, SyncGroup, Heartbeat, LeaveGroup,
// DescribeGroups, ListGroups, DeleteGroups. Each group's requests run on the shard owning its
// `__consumer_offsets` partition, against that partition's coordinator (GroupService).
#include <boost/asio/this_coro.hpp>
#include <map>

#include "broker/broker.h"
#include "broker/errors.h"
#include "broker/group_service.h"
#include "broker/handlers/handlers.h"
#include "broker/txn_host.h"
#include "metadata/errc.h"

namespace weir::broker {

namespace asio = boost::asio;

namespace {

constexpr std::int8_t kKeyTypeGroup = 0;
constexpr std::int8_t kKeyTypeTransaction = 1;
constexpr std::int8_t kKeyTypeShare = 2;

// Kafka reports the client's address as InetAddress.toString() does: "/<ip>".
std::string client_host(const RequestContext& ctx) { return "/" + ctx.client.host; }

std::string client_id(const RequestContext& ctx) { return ctx.header.client_id.value_or(""); }

}  // namespace

asio::awaitable<HandlerResult<FindCoordinatorHandler::Response>> FindCoordinatorHandler::handle(RequestContext& ctx,
                                                                                                Request& req) {
  Broker& broker = ctx.broker;
  const std::int16_t version = ctx.version();
  std::vector<std::string> keys = version >= 4 ? req.coordinator_keys : std::vector<std::string>{req.key};
  const std::string invalid_request_message(metadata::default_message(metadata::Errc::invalid_request));
  Response resp;
  // A key type Kafka does not know fails the whole request (KafkaApis throws
  // InvalidRequestException): every answer carries INVALID_REQUEST and its message.
  if (req.key_type != kKeyTypeGroup && req.key_type != kKeyTypeTransaction && req.key_type != kKeyTypeShare) {
    const std::int16_t invalid = code(ErrorCode::kInvalidRequest);
    if (version < 4) {
      resp.error_code = invalid;
      resp.error_message = invalid_request_message;
      resp.node_id = -1;
      resp.host = "";
      resp.port = -1;
      co_return resp;
    }
    for (const auto& key : keys) {
      auto& c = resp.coordinators.emplace_back();
      c.key = key;
      c.error_code = invalid;
      c.error_message = invalid_request_message;
      c.node_id = -1;
      c.host = "";
      c.port = -1;
    }
    co_return resp;
  }
  std::int16_t error = 0;
  if (req.key_type == kKeyTypeShare) {
    // Share groups are not served: Kafka answers INVALID_REQUEST while share.version is off.
    error = code(ErrorCode::kInvalidRequest);
  } else if (req.key_type == kKeyTypeTransaction) {
    // As Kafka: __transaction_state is created on the first lookup of a transaction coordinator.
    if (!co_await broker.txns().ensure_topic()) error = code(ErrorCode::kCoordinatorNotAvailable);
  } else if (!co_await broker.ensure_offsets_topic()) {
    error = code(ErrorCode::kCoordinatorNotAvailable);
  }
  // The coordinator is the leader of the key's internal-topic partition (this node on one node).
  auto catalog = broker.catalog();
  auto coordinator_of = [&](const std::string& key) -> const BrokerEndpoint* {
    if (error != 0) return nullptr;
    const bool txn = req.key_type == kKeyTypeTransaction;
    const std::string topic(txn ? kTransactionStateTopic : kOffsetsTopic);
    const std::int32_t partition = txn ? broker.txns().partition_for(key) : broker.group_partition(key);
    return catalog->broker(catalog->leader_of(topic, partition));
  };
  if (version < 4) {
    const BrokerEndpoint* at = coordinator_of(req.key);
    if (error == 0 && at == nullptr) error = code(ErrorCode::kCoordinatorNotAvailable);
    // Kafka fills error_message with Errors.message(): "NONE" on success.
    resp.error_code = error;
    if (error == 0) {
      resp.error_message = "NONE";
    } else if (error == code(ErrorCode::kInvalidRequest)) {
      resp.error_message = invalid_request_message;
    } else {
      resp.error_message = "The coordinator is not available.";
    }
    resp.node_id = error == 0 ? at->id : -1;
    resp.host = error == 0 ? at->host : "";
    resp.port = error == 0 ? at->port : -1;
    co_return resp;
  }
  // v4+: Kafka sets no per-key message on this path (empty, also for errors).
  for (const auto& key : keys) {
    auto& c = resp.coordinators.emplace_back();
    const BrokerEndpoint* at = coordinator_of(key);
    const std::int16_t e = error == 0 && at == nullptr ? code(ErrorCode::kCoordinatorNotAvailable) : error;
    c.key = key;
    c.error_code = e;
    c.error_message = "";
    c.node_id = e == 0 ? at->id : -1;
    c.host = e == 0 ? at->host : "";
    c.port = e == 0 ? at->port : -1;
  }
  co_return resp;
}

asio::awaitable<HandlerResult<JoinGroupHandler::Response>> JoinGroupHandler::handle(RequestContext& ctx, Request& req) {
  Broker& broker = ctx.broker;
  const std::int16_t version = ctx.version();
  const std::string cid = client_id(ctx);
  const std::string host = client_host(ctx);
  auto resp = co_await broker.groups().hold<Response>(
      broker.group_partition(req.group_id), [&](group::GroupCoordinator& c, group::RequestHandle h, std::int64_t now) {
        return c.join_group(h, req, version, cid, host, now);
      });
  if (resp) co_return std::move(*resp);
  Response refused;
  refused.error_code = code(ErrorCode::kNotCoordinator);
  refused.protocol_name = std::nullopt;  // as Kafka's error answers (null from v7)
  co_return refused;
}

asio::awaitable<HandlerResult<SyncGroupHandler::Response>> SyncGroupHandler::handle(RequestContext& ctx, Request& req) {
  Broker& broker = ctx.broker;
  const std::int16_t version = ctx.version();
  if (version >= 5 && (!req.protocol_type || !req.protocol_name)) {
    // As Kafka's KafkaApis: from v5 the protocol type and name are mandatory.
    Response resp;
    resp.error_code = group::code(group::Error::kInconsistentGroupProtocol);
    co_return resp;
  }
  auto resp = co_await broker.groups().hold<Response>(
      broker.group_partition(req.group_id), [&](group::GroupCoordinator& c, group::RequestHandle h, std::int64_t now) {
        return c.sync_group(h, req, version, now);
      });
  if (resp) co_return std::move(*resp);
  Response refused;
  refused.error_code = code(ErrorCode::kNotCoordinator);
  co_return refused;
}

asio::awaitable<HandlerResult<HeartbeatHandler::Response>> HeartbeatHandler::handle(RequestContext& ctx, Request& req) {
  Broker& broker = ctx.broker;
  const std::int16_t version = ctx.version();
  auto out = co_await broker.groups().update<Response>(
      broker.group_partition(req.group_id),
      [&](group::GroupCoordinator& c, std::int64_t now) { return c.heartbeat(req, version, now); });
  if (!out.served) out.response.error_code = out.error;
  co_return std::move(out.response);
}

asio::awaitable<HandlerResult<LeaveGroupHandler::Response>> LeaveGroupHandler::handle(RequestContext& ctx,
                                                                                      Request& req) {
  Broker& broker = ctx.broker;
  const std::int16_t version = ctx.version();
  auto out = co_await broker.groups().update<Response>(
      broker.group_partition(req.group_id),
      [&](group::GroupCoordinator& c, std::int64_t now) { return c.leave_group(req, version, now); });
  if (out.error != 0) {
    out.response.error_code = out.error;
    for (auto& m : out.response.members) m.error_code = out.error;
  }
  co_return std::move(out.response);
}

asio::awaitable<HandlerResult<DescribeGroupsHandler::Response>> DescribeGroupsHandler::handle(RequestContext& ctx,
                                                                                              Request& req) {
  Broker& broker = ctx.broker;
  const std::int16_t version = ctx.version();
  // One sub-request per coordinator partition; answers in request order.
  std::map<std::int32_t, Request> by_partition;
  for (const auto& g : req.groups) by_partition[broker.group_partition(g)].groups.push_back(g);
  std::map<std::string, protocol::DescribeGroupsResponse::DescribedGroup> described;
  for (auto& [partition, sub] : by_partition) {
    sub.include_authorized_operations = req.include_authorized_operations;
    auto part = co_await broker.groups().read(
        partition, [&](const group::GroupCoordinator& c) { return c.describe_groups(sub, version); });
    if (!part) {
      for (const auto& g : sub.groups) {
        auto& d = described[g];
        d.group_id = g;
        d.error_code = code(ErrorCode::kNotCoordinator);
      }
      continue;
    }
    for (auto& g : part->groups) described[g.group_id] = std::move(g);
  }
  Response resp;
  for (const auto& g : req.groups) resp.groups.push_back(described[g]);
  co_return resp;
}

asio::awaitable<HandlerResult<ListGroupsHandler::Response>> ListGroupsHandler::handle(RequestContext& ctx,
                                                                                      Request& req) {
  Broker& broker = ctx.broker;
  const std::int16_t version = ctx.version();
  Response resp;
  if (!broker.topic_exists(std::string(kOffsetsTopic))) co_return resp;
  const std::int32_t partitions = broker.offsets_partitions();
  for (std::int32_t p = 0; p < partitions; ++p) {
    auto part =
        co_await broker.groups().read(p, [&](const group::GroupCoordinator& c) { return c.list_groups(req, version); });
    if (!part) continue;
    for (auto& g : part->groups) resp.groups.push_back(std::move(g));
  }
  co_return resp;
}

asio::awaitable<HandlerResult<DeleteGroupsHandler::Response>> DeleteGroupsHandler::handle(RequestContext& ctx,
                                                                                          Request& req) {
  Broker& broker = ctx.broker;
  const std::int16_t version = ctx.version();
  std::map<std::int32_t, Request> by_partition;
  for (const auto& g : req.groups_names) by_partition[broker.group_partition(g)].groups_names.push_back(g);
  std::map<std::string, protocol::DeleteGroupsResponse::DeletableGroupResult> results;
  for (auto& [partition, sub] : by_partition) {
    auto out = co_await broker.groups().update<Response>(
        partition, [&](group::GroupCoordinator& c, std::int64_t now) { return c.delete_groups(sub, version, now); });
    if (!out.served) {
      for (const auto& g : sub.groups_names) out.response.results.emplace_back().group_id = g;
    }
    for (auto& r : out.response.results) {
      if (out.error != 0 && r.error_code == 0) r.error_code = out.error;
      results[r.group_id] = std::move(r);
    }
  }
  Response resp;
  for (const auto& g : req.groups_names) resp.results.push_back(results[g]);
  co_return resp;
}

}  // namespace weir::broker
