// DescribeConfigs, AlterConfigs, IncrementalAlterConfigs: topic and group configs through the
// controller (Kafka's names, defaults, sources and synonyms); broker configs as this node was
// started. ListConfigResources (KIP-1142): the resources that may have configs, as Kafka 4.3.1
// lists them (groups with configs set, brokers twice (BROKER_LOGGER, BROKER), every topic; weir
// has no client-metrics resources).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "broker/broker.h"
#include "broker/errors.h"
#include "broker/handlers/handlers.h"
#include "config/java.h"

namespace weir::broker {

namespace {

constexpr std::int8_t kTopicResource = 2;
constexpr std::int8_t kBrokerResource = 4;
constexpr std::int8_t kBrokerLoggerResource = 8;
constexpr std::int8_t kClientMetricsResource = 16;
constexpr std::int8_t kGroupResource = 32;
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
    {"replica.alter.log.dirs.io.max.bytes.per.second", config::Type::int64, "9223372036854775807", config::at_least(0),
     config::Importance::medium, "Accepted; weir has one log dir per broker to move between.",
     config::UpdateMode::cluster_wide},
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

// A broker resource's keys with their effective value as Kafka prints the parsed value
// (" 1000 " is reported as "1000"), the layer it came from and its type. A named broker (this
// node) lists every key weir knows, each from the first layer that sets it: this broker's dynamic
// value, the cluster-wide dynamic default, server.properties, the default (an internal key only
// where it is set); then the dynamic keys weir has no static key for. The "" resource lists only
// the cluster-wide dynamic defaults. A key of unknown type is sensitive, its value hidden, as
// Kafka shows it.
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
    return !res.configuration_keys || std::find(res.configuration_keys->begin(), res.configuration_keys->end(), name) !=
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
    if (named) {
      if (auto it = catalog->dynamic_broker_configs.find(name); it != catalog->dynamic_broker_configs.end()) {
        layers.push_back({kDynamicBrokerConfig, shown(it->second)});
      }
    }
    if (auto it = catalog->dynamic_default_broker_configs.find(name);
        it != catalog->dynamic_default_broker_configs.end()) {
      layers.push_back({kDynamicDefaultBrokerConfig, shown(it->second)});
    }
    const bool static_key = def != nullptr && dynamic_only_broker_def(name) == nullptr;
    if (named && static_key && cfg.is_set(name)) {
      layers.push_back({kStaticBrokerConfig, sensitive ? std::nullopt : config::to_string(cfg.typed().value(name))});
    }
    if (named && static_key && !def->null_default() && !def->required()) {
      auto parsed = config::parse(*def, def->default_value);
      std::optional<std::string> value = sensitive || !parsed ? std::nullopt : config::to_string(*parsed);
      // Where weir's default is derived, not Kafka's unlimited one, the value in force is shown.
      if (name == "max.connections" && cfg.max_connections) value = std::to_string(*cfg.max_connections);
      if (name == "queued.max.request.bytes") value = std::to_string(cfg.queued_max_request_bytes);
      layers.push_back({kDefaultConfig, std::move(value)});
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
    c.documentation = documentation ? std::optional<std::string>(def != nullptr ? std::string(def->doc) : std::string())
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
  // Kafka lists an internal key (defineInternal) only where it is set: its originals, with the
  // dynamic configs folded in, and the non-internal values.
  const auto listed = [&](const config::KeyDef& def) {
    return !def.internal || cfg.is_set(def.name) || catalog->dynamic_broker_configs.contains(def.name) ||
           catalog->dynamic_default_broker_configs.contains(def.name);
  };
  if (named) {
    for (const auto& def : config::broker_config_defs()) {
      if (listed(def) && wanted(def.name)) entry(def.name, &def);
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
    } else if (res.resource_type == kGroupResource) {
      resp.results.push_back(co_await ctx.broker.with_controller(
          [&res, syn = req.include_synonyms, doc = req.include_documentation](const metadata::Controller& c) {
            return c.describe_group(res, syn, doc);
          }));
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

boost::asio::awaitable<HandlerResult<ListConfigResourcesHandler::Response>> ListConfigResourcesHandler::handle(
    RequestContext& ctx, Request& req) {
  Response resp;
  // v0 (ListClientMetricsResources' successor) knows client metrics only.
  const std::set<std::int8_t> supported =
      ctx.version() == 0 ? std::set<std::int8_t>{kClientMetricsResource}
                         : std::set<std::int8_t>{kTopicResource, kBrokerResource, kBrokerLoggerResource,
                                                 kClientMetricsResource, kGroupResource};
  const std::set<std::int8_t> wanted =
      req.resource_types.empty() ? supported
                                 : std::set<std::int8_t>(req.resource_types.begin(), req.resource_types.end());
  for (const std::int8_t type : wanted) {
    if (!supported.contains(type)) {
      resp.error_code = code(ErrorCode::kUnsupportedVersion);
      co_return resp;
    }
  }
  auto add = [&resp](std::string name, std::int8_t type) {
    auto& r = resp.config_resources.emplace_back();
    r.resource_name = std::move(name);
    r.resource_type = type;
  };
  auto catalog = ctx.broker.catalog();
  if (wanted.contains(kGroupResource)) {
    for (const auto& [group, configs] : catalog->group_configs) add(group, kGroupResource);
  }
  for (const std::int8_t type : {kBrokerLoggerResource, kBrokerResource}) {
    if (!wanted.contains(type)) continue;
    for (const auto& b : catalog->brokers) add(std::to_string(b.id), type);
  }
  if (wanted.contains(kTopicResource)) {
    std::vector<std::string> names;
    for (const auto& [name, info] : catalog->topics) names.push_back(name);
    std::ranges::sort(names);
    for (auto& name : names) add(std::move(name), kTopicResource);
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

// Kafka's broker thread pools may change dynamically by at most half or double at a time
// (DynamicThreadPool, SocketServer's processors); weir has no such pools, but takes and refuses
// the same values.
constexpr std::string_view kThreadCountKeys[] = {"num.io.threads", "num.network.threads", "num.replica.fetchers",
                                                 "num.recovery.threads.per.data.dir", "background.threads"};

// What Kafka's broker finds wrong when it reconfigures itself with the new values: the thread
// counts' steps. Kafka wraps these in "Invalid dynamic configuration" as a ConfigException's
// (name, value) form, and the broker answers its message.
std::optional<std::string> reconfiguration_error(const Broker& broker, const Catalog& catalog, bool named,
                                                 std::string_view key, const config::Value& value) {
  const auto wrapped = [](const std::string& why) {
    return fmt::format(
        "Invalid value org.apache.kafka.common.config.ConfigException: {} for configuration "
        "Invalid dynamic configuration",
        why);
  };
  if (key == "max.connections.per.ip.overrides" && std::holds_alternative<std::string>(value)) {
    // Kafka's KafkaConfig reads the map with String.substring and Integer.parseInt; their
    // exceptions' texts are what the client gets.
    const std::string& text = std::get<std::string>(value);
    if (config::parse_per_ip_overrides(text)) return std::nullopt;
    for (const auto& entry : config::java::split_list(config::java::trim(text))) {
      const auto colon = entry.rfind(':');
      const auto prefix = [](std::string why) {
        return "Error parsing configuration property 'max.connections.per.ip.overrides': " + why;
      };
      if (colon == std::string::npos) return prefix(fmt::format("begin 0, end -1, length {}", entry.size()));
      const std::string count(config::java::trim(std::string_view(entry).substr(colon + 1)));
      if (!config::java::parse_integer(count, 32)) return prefix(fmt::format("For input string: \"{}\"", count));
    }
    return fmt::format("Invalid value {} for configuration max.connections.per.ip.overrides", text);
  }
  const bool thread_count =
      key == "log.cleaner.threads" || std::ranges::find(kThreadCountKeys, key) != std::end(kThreadCountKeys);
  if (!thread_count || !std::holds_alternative<std::int64_t>(value)) return std::nullopt;
  // A cluster default does not reach a broker with its own value of the key.
  if (!named && catalog.dynamic_broker_configs.contains(key)) return std::nullopt;
  const std::int64_t next = std::get<std::int64_t>(value);
  const std::int64_t now = std::get<std::int64_t>(broker.broker_value(catalog, key));  // INT keys
  if (next == now) return std::nullopt;
  if (key == "log.cleaner.threads") {
    // Kafka divides the dedupe buffer by the thread count before it checks the count.
    if (next == 0) return "/ by zero";
    if (next < 1) return wrapped("Log cleaner threads should be at least 1");
    if (next < now / 2) {
      return wrapped(fmt::format("Log cleaner threads cannot be reduced to less than half the current value {}", now));
    }
    if (next > now * 2) {
      return wrapped(
          fmt::format("Log cleaner threads cannot be increased to more than double the current value {}", now));
    }
    return std::nullopt;
  }
  const std::string failed = fmt::format("Dynamic thread count update validation failed for {}={}", key, next);
  if (next <= 0) return wrapped(failed + ", value should be at least 1");
  if (next < now / 2)
    return wrapped(fmt::format("{}, value should be at least half the current value {}", failed, now));
  if (next > now * 2) {
    return wrapped(fmt::format("{}, value should not be greater than double the current value {}", failed, now));
  }
  return std::nullopt;
}

// A Kafka broker checks a broker resource before it forwards the change (its
// ConfigAdminManager.preprocess): the name is "" (the cluster default) or this broker's id; no
// key may be read-only; each value must parse as its key's type and pass its validator; a
// per-broker key (listeners, ...) cannot be a cluster default; and the broker must be able to
// reconfigure itself with it. The first problem, as Kafka words it; keys it does not know pass
// (Kafka stores them too).
template <class Configs, class IsSet>
std::optional<std::string> broker_change_error(const Broker& broker, const std::string& name, const Configs& configs,
                                               IsSet is_set) {
  const bool named = !name.empty();
  if (named) {
    const auto id = config::java::parse_integer(name, 32);
    if (!id) return "Node id must be an integer, but it is: " + name;
    if (*id != broker.node().node_id) {
      return fmt::format("Unexpected broker id, expected {}, but received {}", broker.node().node_id, name);
    }
  }
  std::vector<std::string> read_only;
  std::vector<std::string> per_broker;
  for (const auto& c : configs) {
    if (!is_set(c)) continue;
    const config::KeyDef* def = broker_def(c.name);
    if (def == nullptr) continue;
    if (def->mode == config::UpdateMode::read_only) read_only.push_back(c.name);
    if (def->mode == config::UpdateMode::per_broker) per_broker.push_back(c.name);
  }
  if (!read_only.empty())
    return fmt::format("Cannot update these configs dynamically: [{}]", fmt::join(read_only, ", "));
  std::vector<std::pair<std::string_view, config::Value>> parsed_values;
  for (const auto& c : configs) {
    if (!is_set(c) || !c.value) continue;
    const config::KeyDef* def = broker_def(c.name);
    if (def == nullptr) continue;
    auto parsed = config::parse(*def, *c.value);
    if (!parsed) return parsed.error();
    parsed_values.emplace_back(c.name, std::move(*parsed));
  }
  if (!named && !per_broker.empty()) {
    return fmt::format("Cannot update these configs at default cluster level, broker id must be specified: [{}]",
                       fmt::join(per_broker, ", "));
  }
  const auto catalog = broker.catalog();
  for (const auto& [key, value] : parsed_values) {
    if (auto why = reconfiguration_error(broker, *catalog, named, key, value)) return why;
  }
  // KafkaConfig's requirement across two keys, with their values after this change.
  const auto after = [&](std::string_view key) -> config::Value {
    for (const auto& [k, v] : parsed_values) {
      if (k == key) return v;
    }
    return broker.broker_value(*catalog, key);
  };
  const bool touches_per_ip = std::ranges::any_of(parsed_values, [](const auto& kv) {
    return kv.first == "max.connections.per.ip" || kv.first == "max.connections.per.ip.overrides";
  });
  if (touches_per_ip) {
    const config::Value per_ip = after("max.connections.per.ip");
    const config::Value overrides = after("max.connections.per.ip.overrides");
    if (std::holds_alternative<std::int64_t>(per_ip) && std::get<std::int64_t>(per_ip) == 0 &&
        (!std::holds_alternative<std::string>(overrides) ||
         config::java::trim(std::get<std::string>(overrides)).empty())) {
      return std::string(
          "requirement failed: max.connections.per.ip can be set to zero only if "
          "max.connections.per.ip.overrides property is set.");
    }
  }
  return std::nullopt;
}

// Answers the broker resources whose change is refused here and sends the rest on (to the
// active controller, or this node's own); the answer keeps the request's order.
template <class Response, class Request, class IsSet, class Send>
boost::asio::awaitable<Response> check_then_send(const Broker& broker, Request& req, IsSet is_set, Send send) {
  std::vector<std::optional<std::string>> refused(req.resources.size());
  Request rest = req;
  rest.resources.clear();
  for (std::size_t i = 0; i < req.resources.size(); ++i) {
    const auto& r = req.resources[i];
    if (r.resource_type == kBrokerResource)
      refused[i] = broker_change_error(broker, r.resource_name, r.configs, is_set);
    if (!refused[i]) rest.resources.push_back(r);
  }
  Response sent;
  if (!rest.resources.empty()) sent = co_await send(rest);
  Response out = sent;
  out.responses.clear();
  std::size_t next = 0;
  for (std::size_t i = 0; i < req.resources.size(); ++i) {
    if (refused[i]) {
      auto& o = out.responses.emplace_back();
      o.resource_type = req.resources[i].resource_type;
      o.resource_name = req.resources[i].resource_name;
      o.error_code = code(ErrorCode::kInvalidRequest);
      o.error_message = *refused[i];
    } else if (next < sent.responses.size()) {
      out.responses.push_back(sent.responses[next++]);
    }
  }
  co_return out;
}

// SET (0) and APPEND (2) bring values to check; DELETE and SUBTRACT do not.
constexpr auto kIncrementalSets = [](const auto& c) { return c.config_operation == 0 || c.config_operation == 2; };
constexpr auto kLegacySets = [](const auto&) { return true; };

}  // namespace

boost::asio::awaitable<HandlerResult<AlterConfigsHandler::Response>> AlterConfigsHandler::handle(RequestContext& ctx,
                                                                                                 Request& req) {
  const std::int16_t v = ctx.version();
  Broker& broker = ctx.broker;
  const RequestOrigin origin = ctx.origin();
  co_return co_await check_then_send<Response>(
      broker, req, kLegacySets, [&broker, v, &origin](Request& r) -> boost::asio::awaitable<Response> {
        if (QuorumLink* q = broker.quorum()) {
          co_return co_await forward_each<Response>(
              r, [&]() { return q->alter_configs(r, v, origin); }, "AlterConfigs");
        }
        co_return co_await broker.controller_op<Response>(
            [&r, v](const metadata::Controller& c) { return c.alter_configs(r, v); });
      });
}

boost::asio::awaitable<HandlerResult<IncrementalAlterConfigsHandler::Response>> IncrementalAlterConfigsHandler::handle(
    RequestContext& ctx, Request& req) {
  const std::int16_t v = ctx.version();
  Broker& broker = ctx.broker;
  const RequestOrigin origin = ctx.origin();
  co_return co_await check_then_send<Response>(
      broker, req, kIncrementalSets, [&broker, v, &origin](Request& r) -> boost::asio::awaitable<Response> {
        if (QuorumLink* q = broker.quorum()) {
          co_return co_await forward_each<Response>(
              r, [&]() { return q->incremental_alter_configs(r, v, origin); }, "IncrementalAlterConfigs");
        }
        co_return co_await broker.controller_op<Response>(
            [&r, v](const metadata::Controller& c) { return c.incremental_alter_configs(r, v); });
      });
}

boost::asio::awaitable<HandlerResult<CreatePartitionsHandler::Response>> CreatePartitionsHandler::handle(
    RequestContext& ctx, Request& req) {
  const std::int16_t v = ctx.version();
  if (QuorumLink* q = ctx.broker.quorum()) {
    co_return co_await forward_each<Response>(
        req, [&]() { return q->create_partitions(req, v, ctx.origin()); }, "CreatePartitions");
  }
  Request copy = req;
  co_return co_await ctx.broker.create_partitions(std::move(copy), v);
}

}  // namespace weir::broker
