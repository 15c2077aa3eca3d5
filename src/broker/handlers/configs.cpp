// DescribeConfigs, AlterConfigs, IncrementalAlterConfigs: topic configs through the controller
// (Kafka's names, defaults, sources and synonyms); broker configs as this node was started.
#include <spdlog/spdlog.h>

#include "broker/broker.h"
#include "broker/errors.h"
#include "broker/handlers/handlers.h"

namespace weir::broker {

namespace {

constexpr std::int8_t kTopicResource = 2;
constexpr std::int8_t kBrokerResource = 4;
constexpr std::int8_t kBrokerLoggerResource = 8;
constexpr std::int8_t kStaticBrokerConfig = 4;
constexpr std::int8_t kDefaultConfig = 5;

// Every broker key weir knows, with its effective value as Kafka prints the parsed value
// (" 1000 " is reported as "1000"), the layer it came from and its type.
DescribeConfigsHandler::Response::DescribeConfigsResult describe_broker(
    const Broker& broker, const DescribeConfigsHandler::Request::DescribeConfigsResource& res, bool synonyms,
    bool documentation) {
  DescribeConfigsHandler::Response::DescribeConfigsResult out;
  out.resource_type = res.resource_type;
  out.resource_name = res.resource_name;
  if (res.resource_name != std::to_string(broker.node().node_id) && !res.resource_name.empty()) {
    out.error_code = code(ErrorCode::kInvalidRequest);
    out.error_message = "Unexpected broker id, expected " + std::to_string(broker.node().node_id) +
                        " or empty string, but received " + res.resource_name;
    return out;
  }
  const Config& cfg = broker.config();
  for (const auto& def : config::broker_config_defs()) {
    if (res.configuration_keys && std::find(res.configuration_keys->begin(), res.configuration_keys->end(), def.name) ==
                                      res.configuration_keys->end()) {
      continue;
    }
    const bool set = cfg.is_set(def.name);
    const bool sensitive = def.type == config::Type::password;
    auto& c = out.configs.emplace_back();
    c.name = std::string(def.name);
    c.value = sensitive ? std::nullopt : config::to_string(cfg.typed().value(def.name));
    c.read_only = def.mode == config::UpdateMode::read_only;
    c.config_source = set ? kStaticBrokerConfig : kDefaultConfig;
    c.is_sensitive = sensitive;
    c.config_type = static_cast<std::int8_t>(def.type);
    c.documentation = documentation ? std::optional<std::string>(def.doc) : std::nullopt;
    if (synonyms) {
      if (set) {
        auto& s = c.synonyms.emplace_back();
        s.name = c.name;
        s.value = c.value;
        s.source = kStaticBrokerConfig;
      }
      if (!def.null_default() && !def.required()) {
        auto parsed = config::parse(def, def.default_value);
        auto& s = c.synonyms.emplace_back();
        s.name = c.name;
        s.value = sensitive || !parsed ? std::nullopt : config::to_string(*parsed);
        s.source = kDefaultConfig;
      }
    }
  }
  return out;
}

}  // namespace

boost::asio::awaitable<HandlerResult<DescribeConfigsHandler::Response>> DescribeConfigsHandler::handle(
    RequestContext& ctx, Request& req) {
  Response resp;
  for (const auto& res : req.resources) {
    if (res.resource_type == kTopicResource) {
      resp.results.push_back(co_await ctx.broker.with_controller(
          [&res, syn = req.include_synonyms](const metadata::Controller& c) { return c.describe_topic(res, syn); }));
    } else if (res.resource_type == kBrokerResource) {
      resp.results.push_back(describe_broker(ctx.broker, res, req.include_synonyms, req.include_documentation));
    } else if (res.resource_type == kBrokerLoggerResource) {
      auto& out = resp.results.emplace_back();
      out.resource_type = res.resource_type;
      out.resource_name = res.resource_name;
    } else {
      auto& out = resp.results.emplace_back();
      out.resource_type = res.resource_type;
      out.resource_name = res.resource_name;
      out.error_code = code(ErrorCode::kInvalidRequest);
      out.error_message = "Unsupported resource type: " + std::to_string(res.resource_type);
    }
  }
  co_return resp;
}

namespace {

// Broker-only: the request goes to the active controller, as a Kafka broker forwards it; when no
// controller answers in time, every resource gets the error.
template <class Response, class Request, class Fn>
boost::asio::awaitable<Response> forward_each(Request& req, Fn fn, std::string_view api) {
  auto resp = co_await fn();
  if (resp) co_return std::move(*resp);
  spdlog::warn("event=forward_failed api={} error_code={} error=\"{}\"", api, resp.error().code, resp.error().message);
  Response out;
  if constexpr (requires { req.resources; }) {
    for (const auto& r : req.resources) {
      auto& o = out.responses.emplace_back();
      o.resource_type = r.resource_type;
      o.resource_name = r.resource_name;
      o.error_code = resp.error().code;
      o.error_message = resp.error().message;
    }
  } else {
    for (const auto& t : req.topics) {
      auto& o = out.results.emplace_back();
      o.name = t.name;
      o.error_code = resp.error().code;
      o.error_message = resp.error().message;
    }
  }
  co_return out;
}

}  // namespace

boost::asio::awaitable<HandlerResult<AlterConfigsHandler::Response>> AlterConfigsHandler::handle(RequestContext& ctx,
                                                                                                 Request& req) {
  const std::int16_t v = ctx.version();
  if (QuorumLink* q = ctx.broker.quorum()) {
    co_return co_await forward_each<Response>(req, [&]() { return q->alter_configs(req, v); }, "AlterConfigs");
  }
  co_return co_await ctx.broker.controller_op<Response>(
      [&req, v](const metadata::Controller& c) { return c.alter_configs(req, v); });
}

boost::asio::awaitable<HandlerResult<IncrementalAlterConfigsHandler::Response>> IncrementalAlterConfigsHandler::handle(
    RequestContext& ctx, Request& req) {
  const std::int16_t v = ctx.version();
  if (QuorumLink* q = ctx.broker.quorum()) {
    co_return co_await forward_each<Response>(req, [&]() { return q->incremental_alter_configs(req, v); },
                                              "IncrementalAlterConfigs");
  }
  co_return co_await ctx.broker.controller_op<Response>(
      [&req, v](const metadata::Controller& c) { return c.incremental_alter_configs(req, v); });
}

boost::asio::awaitable<HandlerResult<CreatePartitionsHandler::Response>> CreatePartitionsHandler::handle(
    RequestContext& ctx, Request& req) {
  const std::int16_t v = ctx.version();
  if (QuorumLink* q = ctx.broker.quorum()) {
    co_return co_await forward_each<Response>(req, [&]() { return q->create_partitions(req, v); }, "CreatePartitions");
  }
  co_return co_await ctx.broker.controller_op<Response>(
      [&req, v](const metadata::Controller& c) { return c.create_partitions(req, v); });
}

}  // namespace weir::broker
