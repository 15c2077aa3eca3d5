// DescribeConfigs, AlterConfigs, IncrementalAlterConfigs: topic configs through the controller
// (Kafka's names, defaults, sources and synonyms); broker configs as this node was started.
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
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
constexpr std::int8_t kDynamicBrokerConfig = 2;
constexpr std::int8_t kDynamicDefaultBrokerConfig = 3;

// Dynamic broker configs with no static key (Kafka's DynamicConfig.Broker quota keys): the
// replication throttles weir applies, and the log-dir move throttle it accepts.
constexpr config::KeyDef kDynamicOnlyBrokerDefs[] = {
    {"leader.replication.throttled.rate", config::Type::int64, "9223372036854775807", config::at_least(0),
     config::Importance::medium, "Bytes per second the leader sends to throttled out-of-sync followers.",
     config::UpdateMode::cluster_wide},
    {"follower.replication.throttled.rate", config::Type::int64, "9223372036854775807", config::at_least(0),
     config::Importance::medium, "Bytes per second a follower fetches of throttled partitions while behind.",
     config::UpdateMode::cluster_wide},
    {"replica.alter.log.dirs.io.max.bytes.per.second", config::Type::int64, "9223372036854775807",
     config::at_least(0), config::Importance::medium, "Accepted; weir has one log dir per broker to move between.", config::UpdateMode::cluster_wide},
};

const config::KeyDef* dynamic_only_broker_def(std::string_view name) {
  for (const auto& d : kDynamicOnlyBrokerDefs) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

// A broker key weir defines (a static key, else a dynamic-only one), or null.
const config::KeyDef* broker_def(std::string_view name) {
  for (const auto& d : config::broker_config_defs()) {
    if (d.name == name) return &d;
  }
  return dynamic_only_broker_def(name);
}

// Whether weir acts on a dynamic value of this broker key: the topic configs' broker synonyms
// (a cluster-wide log.retention.ms, ...) and the replication throttle rates. Dynamic values of
// other keys are stored by the controllers but not applied, so they are not reported as in effect.
bool applied_dynamically(std::string_view name) {
  if (dynamic_only_broker_def(name) != nullptr) return true;
  for (const auto& t : metadata::topic_config_defs()) {
    for (const auto& syn : t.synonyms) {
      if (syn.name == name) return true;
    }
  }
  return false;
}

// A broker resource's keys with their effective value as Kafka prints the parsed value
// (" 1000 " is reported as "1000"), the layer it came from and its type. A named broker (this
// node) lists every key weir knows, each from the first layer that sets it: this broker's dynamic
// value, the cluster-wide dynamic default, server.properties, the default; then the dynamic keys
// weir has no static key for. The "" resource lists only the cluster-wide dynamic defaults. A key
// of unknown type is sensitive, its value hidden, as Kafka shows it.
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
  const auto catalog = broker.catalog();
  const bool named = !res.resource_name.empty();
  const auto wanted = [&res](std::string_view name) {
    return !res.configuration_keys ||
           std::find(res.configuration_keys->begin(), res.configuration_keys->end(), name) !=
               res.configuration_keys->end();
  };
  const auto entry = [&](std::string_view name, const config::KeyDef* def) {
    const bool sensitive = def == nullptr || def->type == config::Type::password;
    // How Kafka prints a stored value of this key: parsed, then converted back.
    const auto shown = [&](const std::string& raw) -> std::optional<std::string> {
      if (sensitive) return std::nullopt;
      auto parsed = config::parse(*def, raw);
      return parsed ? config::to_string(*parsed) : std::optional<std::string>(raw);
    };
    struct Layer {
      std::int8_t source;
      std::optional<std::string> value;
    };
    std::vector<Layer> layers;
    const bool dynamic = def == nullptr || !named || applied_dynamically(name);
    if (named && dynamic) {
      if (auto it = catalog->dynamic_broker_configs.find(name); it != catalog->dynamic_broker_configs.end()) {
        layers.push_back({kDynamicBrokerConfig, shown(it->second)});
      }
    }
    if (dynamic) {
      if (auto it = catalog->dynamic_default_broker_configs.find(name);
          it != catalog->dynamic_default_broker_configs.end()) {
        layers.push_back({kDynamicDefaultBrokerConfig, shown(it->second)});
      }
    }
    const bool static_key = def != nullptr && dynamic_only_broker_def(name) == nullptr;
    if (named && static_key && cfg.is_set(name)) {
      layers.push_back({kStaticBrokerConfig, sensitive ? std::nullopt : config::to_string(cfg.typed().value(name))});
    }
    if (named && static_key && !def->null_default() && !def->required()) {
      auto parsed = config::parse(*def, def->default_value);
      layers.push_back({kDefaultConfig, sensitive || !parsed ? std::nullopt : config::to_string(*parsed)});
    }
    auto& c = out.configs.emplace_back();
    c.name = std::string(name);
    if (layers.empty()) {
      // A key with a null default, not set: Kafka reports null from the default layer.
      c.value = sensitive ? std::nullopt : config::to_string(cfg.typed().value(name));
      c.config_source = kDefaultConfig;
    } else {
      c.value = layers.front().value;
      c.config_source = layers.front().source;
    }
    c.read_only = def != nullptr && def->mode == config::UpdateMode::read_only;
    c.is_sensitive = sensitive;
    c.config_type = def != nullptr ? static_cast<std::int8_t>(def->type) : std::int8_t{0};
    c.documentation =
        documentation ? std::optional<std::string>(def != nullptr ? std::string(def->doc) : std::string())
                      : std::nullopt;
    if (synonyms) {
      for (const Layer& l : layers) {
        auto& syn = c.synonyms.emplace_back();
        syn.name = c.name;
        syn.value = l.value;
        syn.source = l.source;
      }
    }
  };
  if (named) {
    for (const auto& def : config::broker_config_defs()) {
      if (wanted(def.name)) entry(def.name, &def);
    }
    std::set<std::string, std::less<>> extra;
    for (const auto& [name, value] : catalog->dynamic_broker_configs) extra.insert(name);
    for (const auto& [name, value] : catalog->dynamic_default_broker_configs) extra.insert(name);
    for (const auto& name : extra) {
      const config::KeyDef* def = broker_def(name);
      if (def != nullptr && dynamic_only_broker_def(name) == nullptr) continue;  // listed above
      if (wanted(name)) entry(name, def);
    }
  } else {
    for (const auto& [name, value] : catalog->dynamic_default_broker_configs) {
      if (wanted(name)) entry(name, broker_def(name));
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

namespace {

// A Kafka broker checks a broker resource's new values before it forwards the change (its
// ConfigAdminManager.preprocess): the value must parse as the key's type and pass its
// validator, and a read-only key cannot change. The first problem, as Kafka words it; keys it
// does not know pass (Kafka stores them too).
template <class Configs, class IsSet>
std::optional<std::string> broker_change_error(const Configs& configs, IsSet is_set) {
  std::vector<std::string> read_only;
  for (const auto& c : configs) {
    if (!is_set(c)) continue;
    const config::KeyDef* def = broker_def(c.name);
    if (def == nullptr) continue;
    if (def->mode == config::UpdateMode::read_only) {
      read_only.push_back(c.name);
      continue;
    }
    if (!c.value) continue;
    if (auto parsed = config::parse(*def, *c.value); !parsed) return parsed.error();
  }
  if (!read_only.empty()) return fmt::format("Cannot update these configs dynamically: [{}]", fmt::join(read_only, ", "));
  return std::nullopt;
}

// Answers the broker resources whose change is refused here and forwards the rest; the answer
// keeps the request's order.
template <class Response, class Request, class IsSet, class Fn>
boost::asio::awaitable<Response> check_then_forward(Request& req, IsSet is_set, Fn forward, std::string_view api) {
  std::vector<std::optional<std::string>> refused(req.resources.size());
  Request rest = req;
  rest.resources.clear();
  for (std::size_t i = 0; i < req.resources.size(); ++i) {
    const auto& r = req.resources[i];
    if (r.resource_type == kBrokerResource) refused[i] = broker_change_error(r.configs, is_set);
    if (!refused[i]) rest.resources.push_back(r);
  }
  Response forwarded;
  if (!rest.resources.empty()) forwarded = co_await forward_each<Response>(rest, [&]() { return forward(rest); }, api);
  Response out = forwarded;
  out.responses.clear();
  std::size_t next = 0;
  for (std::size_t i = 0; i < req.resources.size(); ++i) {
    if (refused[i]) {
      auto& o = out.responses.emplace_back();
      o.resource_type = req.resources[i].resource_type;
      o.resource_name = req.resources[i].resource_name;
      o.error_code = code(ErrorCode::kInvalidRequest);
      o.error_message = *refused[i];
    } else if (next < forwarded.responses.size()) {
      out.responses.push_back(forwarded.responses[next++]);
    }
  }
  co_return out;
}

}  // namespace

boost::asio::awaitable<HandlerResult<AlterConfigsHandler::Response>> AlterConfigsHandler::handle(RequestContext& ctx,
                                                                                                 Request& req) {
  const std::int16_t v = ctx.version();
  if (QuorumLink* q = ctx.broker.quorum()) {
    co_return co_await check_then_forward<Response>(
        req, [](const auto&) { return true; }, [&](Request& r) { return q->alter_configs(r, v); }, "AlterConfigs");
  }
  co_return co_await ctx.broker.controller_op<Response>(
      [&req, v](const metadata::Controller& c) { return c.alter_configs(req, v); });
}

boost::asio::awaitable<HandlerResult<IncrementalAlterConfigsHandler::Response>> IncrementalAlterConfigsHandler::handle(
    RequestContext& ctx, Request& req) {
  const std::int16_t v = ctx.version();
  if (QuorumLink* q = ctx.broker.quorum()) {
    // SET (0) and APPEND (2) bring values to check; DELETE and SUBTRACT do not.
    co_return co_await check_then_forward<Response>(
        req, [](const auto& c) { return c.config_operation == 0 || c.config_operation == 2; },
        [&](Request& r) { return q->incremental_alter_configs(r, v); }, "IncrementalAlterConfigs");
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
