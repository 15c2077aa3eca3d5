// ElectLeaders, AlterPartitionReassignments and ListPartitionReassignments: the controller's
// business. A broker of a KRaft cluster carries them to the active controller (as Kafka's brokers
// forward them); a single node answers from its own controller.
#include <spdlog/spdlog.h>

#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "broker/quorum_link.h"

namespace weir::broker {

namespace {

void log_forward_failure(std::string_view api, const ForwardError& e) {
  spdlog::warn("event=forward_failed api={} error_code={} error=\"{}\"", api, e.code, e.message);
}

}  // namespace

boost::asio::awaitable<HandlerResult<ElectLeadersHandler::Response>> ElectLeadersHandler::handle(RequestContext& ctx,
                                                                                                 Request& req) {
  const std::int16_t v = ctx.version();
  if (QuorumLink* q = ctx.broker.quorum()) {
    auto resp = co_await q->elect_leaders(req, v, ctx.origin());
    if (resp) co_return std::move(*resp);
    log_forward_failure("ElectLeaders", resp.error());
    // Every named partition gets the error (Kafka's broker answers a failed forward this way).
    Response out;
    out.error_code = resp.error().code;
    if (req.topic_partitions) {
      for (const auto& t : *req.topic_partitions) {
        auto& topic = out.replica_election_results.emplace_back();
        topic.topic = t.topic;
        for (std::int32_t p : t.partitions) {
          auto& r = topic.partition_result.emplace_back();
          r.partition_id = p;
          r.error_code = resp.error().code;
          r.error_message = resp.error().message;
        }
      }
    }
    co_return out;
  }
  co_return co_await ctx.broker.controller_op<Response>(
      [&req, v](const metadata::Controller& c) { return c.elect_leaders(req, v); });
}

boost::asio::awaitable<HandlerResult<AlterPartitionReassignmentsHandler::Response>>
AlterPartitionReassignmentsHandler::handle(RequestContext& ctx, Request& req) {
  if (QuorumLink* q = ctx.broker.quorum()) {
    auto resp = co_await q->alter_partition_reassignments(req, ctx.version(), ctx.origin());
    if (resp) co_return std::move(*resp);
    log_forward_failure("AlterPartitionReassignments", resp.error());
    Response out;
    out.allow_replication_factor_change = req.allow_replication_factor_change;
    out.error_code = resp.error().code;
    out.error_message = resp.error().message;
    co_return out;
  }
  co_return co_await ctx.broker.with_controller(
      [&req](const metadata::Controller& c) { return c.alter_partition_reassignments(req); });
}

boost::asio::awaitable<HandlerResult<ListPartitionReassignmentsHandler::Response>>
ListPartitionReassignmentsHandler::handle(RequestContext& ctx, Request& req) {
  if (QuorumLink* q = ctx.broker.quorum()) {
    auto resp = co_await q->list_partition_reassignments(req, ctx.version(), ctx.origin());
    if (resp) co_return std::move(*resp);
    log_forward_failure("ListPartitionReassignments", resp.error());
    Response out;
    out.error_code = resp.error().code;
    out.error_message = resp.error().message;
    co_return out;
  }
  co_return co_await ctx.broker.with_controller(
      [&req](const metadata::Controller& c) { return c.list_partition_reassignments(req); });
}

}  // namespace weir::broker
