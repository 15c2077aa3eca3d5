// Consumer group membership: FindCoordinator, JoinGroup, SyncGroup, Heartbeat, LeaveGroup,
// DescribeGroups, ListGroups, DeleteGroups. Each group's requests run on the shard owning its
// `__consumer_offsets` partition (Broker::with_group), against that partition's GroupHost.
#include <map>

#include <boost/asio/this_coro.hpp>

#include "broker/broker.h"
#include "broker/errors.h"
#include "broker/group_host.h"
#include "broker/handlers/handlers.h"
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
  const NodeInfo& node = broker.node();
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
    // The transaction coordinator is not served yet: clients retry.
    error = code(ErrorCode::kCoordinatorNotAvailable);
  } else if (!co_await broker.ensure_offsets_topic()) {
    error = code(ErrorCode::kCoordinatorNotAvailable);
  }
  if (version < 4) {
    // Kafka fills error_message with Errors.message(): "NONE" on success.
    resp.error_code = error;
    if (error == 0) {
      resp.error_message = "NONE";
    } else if (error == code(ErrorCode::kInvalidRequest)) {
      resp.error_message = invalid_request_message;
    } else {
      resp.error_message = "The coordinator is not available.";
    }
    resp.node_id = error == 0 ? node.node_id : -1;
    resp.host = error == 0 ? node.host : "";
    resp.port = error == 0 ? node.port : -1;
    co_return resp;
  }
  // v4+: Kafka sets no per-key message on this path (empty, also for errors).
  for (const auto& key : keys) {
    auto& c = resp.coordinators.emplace_back();
    c.key = key;
    c.error_code = error;
    c.error_message = "";
    c.node_id = error == 0 ? node.node_id : -1;
    c.host = error == 0 ? node.host : "";
    c.port = error == 0 ? node.port : -1;
  }
  co_return resp;
}

asio::awaitable<HandlerResult<JoinGroupHandler::Response>> JoinGroupHandler::handle(RequestContext& ctx,
                                                                                     Request& req) {
  Broker& broker = ctx.broker;
  const std::int16_t version = ctx.version();
  const std::int32_t partition = broker.group_partition(req.group_id);
  auto waiter = std::make_shared<GroupWaiter>(co_await asio::this_coro::executor);
  const std::string cid = client_id(ctx);
  const std::string host = client_host(ctx);
  const bool held = co_await broker.with_group(partition, [&](GroupHost* h) {
    if (h == nullptr) return false;
    const auto handle = h->hold(waiter);
    h->apply(h->coordinator().join_group(handle, req, version, cid, host, h->now_ms()));
    return true;
  });
  if (!held) {
    Response resp;
    resp.error_code = code(ErrorCode::kNotCoordinator);
    resp.protocol_name = std::nullopt;  // as Kafka's error answers (null from v7)
    co_return resp;
  }
  co_await waiter->wait();
  co_return std::move(*waiter->join);
}

asio::awaitable<HandlerResult<SyncGroupHandler::Response>> SyncGroupHandler::handle(RequestContext& ctx,
                                                                                     Request& req) {
  Broker& broker = ctx.broker;
  const std::int16_t version = ctx.version();
  if (version >= 5 && (!req.protocol_type || !req.protocol_name)) {
    // As Kafka's KafkaApis: from v5 the protocol type and name are mandatory.
    Response resp;
    resp.error_code = group::code(group::Error::kInconsistentGroupProtocol);
    co_return resp;
  }
  const std::int32_t partition = broker.group_partition(req.group_id);
  auto waiter = std::make_shared<GroupWaiter>(co_await asio::this_coro::executor);
  const bool held = co_await broker.with_group(partition, [&](GroupHost* h) {
    if (h == nullptr) return false;
    const auto handle = h->hold(waiter);
    h->apply(h->coordinator().sync_group(handle, req, version, h->now_ms()));
    return true;
  });
  if (!held) {
    Response resp;
    resp.error_code = code(ErrorCode::kNotCoordinator);
    co_return resp;
  }
  co_await waiter->wait();
  co_return std::move(*waiter->sync);
}

asio::awaitable<HandlerResult<HeartbeatHandler::Response>> HeartbeatHandler::handle(RequestContext& ctx,
                                                                                     Request& req) {
  Broker& broker = ctx.broker;
  const std::int16_t version = ctx.version();
  const std::int32_t partition = broker.group_partition(req.group_id);
  struct Out {
    Response response;
    GroupHost::Applied applied;
  };
  Out out = co_await broker.with_group(partition, [&](GroupHost* h) {
    Out o;
    if (h == nullptr) {
      o.response.error_code = code(ErrorCode::kNotCoordinator);
      return o;
    }
    auto reply = h->coordinator().heartbeat(req, version, h->now_ms());
    o.response = std::move(reply.response);
    o.applied = h->apply(std::move(reply.effects));
    return o;
  });
  co_return std::move(out.response);
}

asio::awaitable<HandlerResult<LeaveGroupHandler::Response>> LeaveGroupHandler::handle(RequestContext& ctx,
                                                                                       Request& req) {
  Broker& broker = ctx.broker;
  const std::int16_t version = ctx.version();
  const std::int32_t partition = broker.group_partition(req.group_id);
  struct Out {
    Response response;
    GroupHost::Applied applied;
  };
  Out out = co_await broker.with_group(partition, [&](GroupHost* h) {
    Out o;
    if (h == nullptr) {
      o.response.error_code = code(ErrorCode::kNotCoordinator);
      return o;
    }
    auto reply = h->coordinator().leave_group(req, version, h->now_ms());
    o.response = std::move(reply.response);
    o.applied = h->apply(std::move(reply.effects));
    return o;
  });
  if (const std::int16_t err = co_await GroupHost::make_durable(broker, out.applied, partition); err != 0) {
    out.response.error_code = err;
    for (auto& m : out.response.members) m.error_code = err;
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
    auto part = co_await broker.with_group(partition, [&](GroupHost* h) {
      if (h != nullptr) return h->coordinator().describe_groups(sub, version);
      Response r;
      for (const auto& g : sub.groups) {
        auto& d = r.groups.emplace_back();
        d.group_id = g;
        d.error_code = code(ErrorCode::kNotCoordinator);
      }
      return r;
    });
    for (auto& g : part.groups) described[g.group_id] = std::move(g);
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
    auto part = co_await broker.with_group(p, [&](GroupHost* h) {
      return h != nullptr ? h->coordinator().list_groups(req, version) : Response{};
    });
    for (auto& g : part.groups) resp.groups.push_back(std::move(g));
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
    struct Out {
      Response response;
      GroupHost::Applied applied;
    };
    Out out = co_await broker.with_group(partition, [&](GroupHost* h) {
      Out o;
      if (h == nullptr) {
        for (const auto& g : sub.groups_names) {
          auto& r = o.response.results.emplace_back();
          r.group_id = g;
          r.error_code = code(ErrorCode::kNotCoordinator);
        }
        return o;
      }
      auto reply = h->coordinator().delete_groups(sub, version, h->now_ms());
      o.response = std::move(reply.response);
      o.applied = h->apply(std::move(reply.effects));
      return o;
    });
    const std::int16_t err = co_await GroupHost::make_durable(broker, out.applied, partition);
    for (auto& r : out.response.results) {
      if (err != 0 && r.error_code == 0) r.error_code = err;
      results[r.group_id] = std::move(r);
    }
  }
  Response resp;
  for (const auto& g : req.groups_names) resp.results.push_back(results[g]);
  co_return resp;
}

}  // namespace weir::broker
