#include "config/broker_config.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <map>
#include <thread>

#include "config/java.h"
#include "config/load.h"
#include "config/properties.h"

namespace weir::config {
namespace {

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 32);
  }
  return out;
}

bool host_char(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' || c == '%' ||
         c == '.' || c == '_' || c == ':';
}

// Kafka's endpoint syntax NAME://host:port, host optionally in brackets; nullopt if it does not
// match. Ports outside 0..65535 are refused here (Kafka accepts them and fails to bind later).
std::optional<Listener> parse_endpoint(std::string_view item) {
  const auto sep = item.find("://");
  if (sep == std::string_view::npos) return std::nullopt;
  std::string_view hostport = item.substr(sep + 3);
  const auto colon = hostport.rfind(':');
  if (colon == std::string_view::npos) return std::nullopt;
  std::string_view host = hostport.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (!std::ranges::all_of(host, host_char)) return std::nullopt;
  auto port = java::parse_integer(hostport.substr(colon + 1), 32);
  if (!port || *port < 0 || *port > 65535 || hostport.substr(colon + 1).starts_with('+')) return std::nullopt;
  return Listener{upper(item.substr(0, sep)), std::string(host), static_cast<std::uint16_t>(*port)};
}

// Java's List.toString of the configured items: "[a, b]".
std::string java_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + items[i];
  return out + "]";
}

Result<std::vector<Listener>, std::string> endpoints(const std::vector<std::string>& items) {
  const std::string context = fmt::format("Error creating broker listeners from '{}': ", java_list(items));
  std::vector<Listener> out;
  for (const auto& item : items) {
    auto l = parse_endpoint(item);
    if (!l) return unexpected(context + fmt::format("Unable to parse {} to a broker endpoint", item));
    out.push_back(std::move(*l));
  }
  for (std::size_t i = 0; i < out.size(); ++i) {
    for (std::size_t j = i + 1; j < out.size(); ++j) {
      if (out[i].name == out[j].name) {
        return unexpected(context + "Each listener must have a different name, listeners: " + java_list(items));
      }
      // One IPv4 and one IPv6 listener may share a port; port 0 picks a free one.
      const bool v6_pair = (out[i].host.find(':') != std::string::npos) != (out[j].host.find(':') != std::string::npos);
      if (out[i].port == out[j].port && out[i].port != 0 && !v6_pair) {
        return unexpected(context + "Each listener must have a different port, listeners: " + java_list(items));
      }
    }
  }
  return out;
}

constexpr std::string_view kProtocols[] = {"PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"};

// listener.security.protocol.map: "NAME:PROTOCOL,..." (names and protocols case-insensitive).
Result<std::map<std::string, std::string>, std::string> protocol_map(std::string_view text) {
  std::map<std::string, std::string> out;
  for (const auto& entry : java::split_list(java::trim(text))) {
    if (entry.empty()) continue;
    const auto colon = entry.find(':');
    if (colon == std::string::npos) {
      return unexpected(fmt::format(
          "Error parsing configuration property 'listener.security.protocol.map': entry '{}' is not NAME:PROTOCOL",
          entry));
    }
    const std::string name = upper(java::trim(std::string_view(entry).substr(0, colon)));
    const std::string protocol = upper(java::trim(std::string_view(entry).substr(colon + 1)));
    if (std::ranges::find(kProtocols, protocol) == std::end(kProtocols)) {
      return unexpected(fmt::format("Invalid security protocol `{}` defined in listener.security.protocol.map",
                                    java::trim(std::string_view(entry).substr(colon + 1))));
    }
    out[name] = protocol;
  }
  return out;
}

// KafkaConfig's rules for the broker-wide log times: the effective retention (log.retention.ms,
// else .minutes, else .hours; any negative value means unlimited) may not be 0; log.roll.ms and
// log.roll.jitter.ms, when set, must be at least 1 and 0.
Status<std::string> check_log_times(const ConfigValues& values) {
  std::int64_t retention_ms = 0;
  if (auto ms = values.get_optional_long("log.retention.ms")) {
    retention_ms = *ms;
  } else if (!values.is_null("log.retention.minutes")) {
    retention_ms = std::int64_t{values.get_int("log.retention.minutes")} * 60'000;
  } else {
    retention_ms = std::int64_t{values.get_int("log.retention.hours")} * 3'600'000;
  }
  if (retention_ms == 0) {
    return unexpected(
        std::string("requirement failed: log.retention.ms must be unlimited (-1) or, greater than or equal to 1 "
                    "(log.retention.ms, else log.retention.minutes, else log.retention.hours)"));
  }
  if (auto roll = values.get_optional_long("log.roll.ms"); roll && *roll < 1) {
    return unexpected(std::string("requirement failed: log.roll.ms must be greater than or equal to 1"));
  }
  if (auto jitter = values.get_optional_long("log.roll.jitter.ms"); jitter && *jitter < 0) {
    return unexpected(std::string("requirement failed: log.roll.jitter.ms must be greater than or equal to 0"));
  }
  return {};
}

// KafkaConfig's rules between the replica fetcher's timeouts.
Status<std::string> check_replica_timeouts(const ConfigValues& values) {
  const std::int64_t wait_ms = values.get_int("replica.fetch.wait.max.ms");
  if (wait_ms > values.get_int("replica.socket.timeout.ms")) {
    return unexpected(std::string("requirement failed: replica.socket.timeout.ms should always be at least "
                                  "replica.fetch.wait.max.ms to prevent unnecessary socket timeouts"));
  }
  if (wait_ms > values.get_long("replica.lag.time.max.ms")) {
    return unexpected(std::string("requirement failed: replica.fetch.wait.max.ms should always be less than or equal "
                                  "to replica.lag.time.max.ms to prevent frequent changes in ISR"));
  }
  return {};
}

}  // namespace

Result<std::vector<Listener>, std::string> parse_listeners(std::string_view text) {
  std::vector<std::string> items;
  for (auto& item : java::split_list(java::trim(text))) {
    if (!item.empty()) items.push_back(std::move(item));
  }
  return endpoints(items);
}

Status<std::string> BrokerConfig::load_properties_file(const std::string& path) {
  auto entries = config::load_properties_file(path);
  if (!entries) return unexpected(entries.error());
  for (auto& [k, v] : *entries) raw_[std::move(k)] = std::move(v);
  return {};
}

Status<std::string> BrokerConfig::set(std::string_view assignment) {
  const auto sep = assignment.find('=');
  if (sep == std::string_view::npos || java::trim(assignment.substr(0, sep)).empty()) {
    return unexpected("expected key=value, got '" + std::string(assignment) + "'");
  }
  // As Kafka's --override: the key is trimmed, the value kept (each key's parser trims it).
  raw_[std::string(java::trim(assignment.substr(0, sep)))] = std::string(assignment.substr(sep + 1));
  return {};
}

std::vector<std::string> BrokerConfig::unknown_keys() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : raw_) {
    if (!find_broker_config(k)) out.push_back(k);
  }
  return out;
}

Status<std::string> BrokerConfig::check_listeners() {
  auto map = protocol_map(typed_.get_string("listener.security.protocol.map"));
  if (!map) return unexpected(map.error());
  // As Kafka: with the default map, controller listeners not in it are PLAINTEXT.
  if (!is_set("listener.security.protocol.map")) {
    for (const auto& name : typed_.get_list("controller.listener.names")) map->try_emplace(upper(name), "PLAINTEXT");
  }
  auto ls = endpoints(typed_.get_list("listeners"));
  if (!ls) return unexpected(ls.error());
  listeners = std::move(*ls);
  if (typed_.is_null("advertised.listeners")) {
    advertised_listeners = listeners;
  } else {
    auto al = endpoints(typed_.get_list("advertised.listeners"));
    if (!al) return unexpected(al.error());
    advertised_listeners = std::move(*al);
  }
  for (const auto* group : {&listeners, &advertised_listeners}) {
    for (const auto& l : *group) {
      auto it = map->find(l.name);
      if (it == map->end()) {
        return unexpected(fmt::format(
            "Error creating broker listeners from '{}': No security protocol defined for "
            "listener {}",
            java_list(typed_.get_list(group == &listeners ? "listeners" : "advertised.listeners")), l.name));
      }
      if (it->second != "PLAINTEXT") {
        return unexpected(fmt::format(
            "listener {}://{}:{} uses security protocol {}, which weir cannot serve yet (only PLAINTEXT listeners)",
            l.name, l.host, l.port, it->second));
      }
    }
  }
  if (!typed_.is_null("inter.broker.listener.name")) {
    const std::string& name = typed_.get_string("inter.broker.listener.name");
    if (!map->contains(upper(name))) {
      return unexpected(fmt::format(
          "Listener with name {} defined in inter.broker.listener.name not found in listener.security.protocol.map.",
          name));
    }
  }
  for (auto& l : advertised_listeners) {
    if (l.host == "0.0.0.0") {
      return unexpected(std::string(
          "requirement failed: advertised.listeners cannot use the nonroutable meta-address 0.0.0.0. Use a routable "
          "IP address."));
    }
    if (l.host.empty() || l.host == "::") {
      char name[256] = {};
      l.host = ::gethostname(name, sizeof name - 1) == 0 ? std::string(name) : std::string("localhost");
    }
  }
  return {};
}

namespace {

// "host:port" with a numeric port, as Kafka's Utils.getHost / getPort read it (the host may be
// a bracketed IPv6 address).
std::optional<std::pair<std::string, std::uint16_t>> host_port(std::string_view text) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  std::string_view host = text.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  const std::string_view port_text = text.substr(colon + 1);
  std::uint32_t port = 0;
  auto [p, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (host.empty() || ec != std::errc() || p != port_text.data() + port_text.size() || port > 65535) return std::nullopt;
  return std::pair{std::string(host), static_cast<std::uint16_t>(port)};
}

}  // namespace

// Kafka's KafkaConfig rules for process.roles, word for word where Kafka has them.
Status<std::string> BrokerConfig::check_process_roles() {
  const auto& roles = typed_.get_list("process.roles");
  const bool broker = std::ranges::find(roles, "broker") != roles.end();
  const bool controller = std::ranges::find(roles, "controller") != roles.end();
  if (!broker) {
    return unexpected(std::string(
        "process.roles=controller: weir cannot run a controller-only node yet; run Apache Kafka's controllers "
        "and weir brokers with process.roles=broker"));
  }
  broker_only = !controller;
  quorum_voters.clear();
  quorum_bootstrap.clear();
  for (const auto& entry : typed_.get_list("controller.quorum.voters")) {
    const auto at = entry.find('@');
    std::int32_t id = -1;
    std::optional<std::pair<std::string, std::uint16_t>> hp;
    if (at != std::string::npos) {
      auto [p, ec] = std::from_chars(entry.data(), entry.data() + at, id);
      if (ec == std::errc() && p == entry.data() + at && id >= 0) hp = host_port(std::string_view(entry).substr(at + 1));
    }
    if (!hp) {
      return unexpected(std::string(
          "Invalid configuration value for controller.quorum.voters. Each entry should be in the form "
          "`{id}@{host}:{port}`."));
    }
    quorum_voters.push_back(QuorumNode{id, hp->first, hp->second});
  }
  for (const auto& entry : typed_.get_list("controller.quorum.bootstrap.servers")) {
    auto hp = host_port(entry);
    if (!hp) {
      return unexpected(fmt::format(
          "Failed to parse host name from {} for the configuration controller.quorum.bootstrap.servers. Each entry "
          "should be in the form \"{{host}}:{{port}}\"",
          entry));
    }
    quorum_bootstrap.push_back(QuorumNode{-1, hp->first, hp->second});
  }
  if (!broker_only) return {};
  if (typed_.is_null("controller.listener.names")) {
    return unexpected(std::string(
        "Missing required configuration \"controller.listener.names\" which has no default value."));
  }
  if (quorum_voters.empty() && quorum_bootstrap.empty()) {
    return unexpected(std::string(
        "If using process.roles, either controller.quorum.bootstrap.servers must contain the set of bootstrap "
        "controllers or controller.quorum.voters must contain a parseable set of controllers."));
  }
  for (const auto& v : quorum_voters) {
    if (v.id == node_id) {
      std::string ids;
      for (const auto& w : quorum_voters) ids += (ids.empty() ? "" : ", ") + std::to_string(w.id);
      return unexpected(fmt::format(
          "requirement failed: If process.roles contains just the 'broker' role, the node id {} must not be included "
          "in the set of voters controller.quorum.voters=Set({})",
          node_id, ids));
    }
  }
  for (const auto& name : typed_.get_list("controller.listener.names")) {
    for (const auto& l : listeners) {
      if (l.name == upper(name)) {
        return unexpected(std::string(
            "requirement failed: controller.listener.names must not contain a value appearing in the 'listeners' "
            "configuration when running KRaft with just the broker role"));
      }
    }
  }
  return {};
}

// GroupCoordinatorConfig's rules between the consumer group protocol's bounds (Utils.require:
// the message alone).
Status<std::string> check_consumer_group_bounds(const ConfigValues& values) {
  struct Rule {
    std::string_view key;
    std::string_view relation;  // ">=", "<=", "<"
    std::string_view other;
  };
  static constexpr Rule kRules[] = {
      {"group.consumer.max.heartbeat.interval.ms", ">=", "group.consumer.min.heartbeat.interval.ms"},
      {"group.consumer.heartbeat.interval.ms", ">=", "group.consumer.min.heartbeat.interval.ms"},
      {"group.consumer.heartbeat.interval.ms", "<=", "group.consumer.max.heartbeat.interval.ms"},
      {"group.consumer.max.session.timeout.ms", ">=", "group.consumer.min.session.timeout.ms"},
      {"group.consumer.session.timeout.ms", ">=", "group.consumer.min.session.timeout.ms"},
      {"group.consumer.session.timeout.ms", "<=", "group.consumer.max.session.timeout.ms"},
      {"group.consumer.heartbeat.interval.ms", "<", "group.consumer.session.timeout.ms"},
      {"group.consumer.max.assignment.interval.ms", ">=", "group.consumer.min.assignment.interval.ms"},
      {"group.consumer.assignment.interval.ms", ">=", "group.consumer.min.assignment.interval.ms"},
      {"group.consumer.assignment.interval.ms", "<=", "group.consumer.max.assignment.interval.ms"},
  };
  for (const Rule& r : kRules) {
    const std::int32_t a = values.get_int(r.key);
    const std::int32_t b = values.get_int(r.other);
    const bool ok = r.relation == ">=" ? a >= b : r.relation == "<=" ? a <= b : a < b;
    if (ok) continue;
    const std::string_view words = r.relation == ">="   ? "greater than or equal to"
                                   : r.relation == "<=" ? "less than or equal to"
                                                        : "less than";
    return unexpected(fmt::format("{} must be {} {}", r.key, words, r.other));
  }
  return {};
}

Status<std::string> BrokerConfig::finalize() {
  auto parsed = ConfigValues::parse(broker_config_defs(), raw_);
  if (!parsed) return unexpected(parsed.error());
  typed_ = std::move(*parsed);

  // Rules relating keys, as KafkaConfig checks them.
  // broker.id is an alias of node.id; its default -1 means unset.
  const std::int32_t broker_id = typed_.get_int("broker.id");
  if (is_set("node.id") && broker_id >= 0 && typed_.get_int("node.id") != broker_id) {
    return unexpected(std::string("You must set `node.id` to the same value as `broker.id`."));
  }
  node_id = !is_set("node.id") && broker_id >= 0 ? broker_id : typed_.get_int("node.id");
  if (node_id < 0)
    return unexpected(fmt::format("Invalid value {} for configuration node.id: Value must be at least 0", node_id));
  const std::int32_t cleaner_threads = typed_.get_int("log.cleaner.threads");
  if (cleaner_threads == 0) {  // KafkaConfig fails dividing by it
    return unexpected(
        std::string("/ by zero (log.cleaner.dedupe.buffer.size / log.cleaner.threads with log.cleaner.threads=0)"));
  }
  if (typed_.get_long("log.cleaner.dedupe.buffer.size") / cleaner_threads <= 1024 * 1024) {
    return unexpected(
        std::string("requirement failed: log.cleaner.dedupe.buffer.size must be at least 1MB per cleaner thread. "
                    "(log.cleaner.dedupe.buffer.size / log.cleaner.threads must exceed 1048576)"));
  }
  if (auto r = check_log_times(typed_); !r) return r;
  if (auto r = check_replica_timeouts(typed_); !r) return r;
  if (auto r = check_consumer_group_bounds(typed_); !r) return r;
  if (auto r = check_listeners(); !r) return r;
  if (auto r = check_process_roles(); !r) return r;

  const bool plural = !typed_.is_null("log.dirs");
  const auto& dirs = plural ? typed_.get_list("log.dirs") : typed_.get_list("log.dir");
  if (dirs.size() > 1) {
    // Kafka spreads partitions over every directory (JBOD); using the first alone would hide the
    // partitions a Kafka broker left in the others, so several are refused until weir has JBOD.
    std::string joined;
    for (const auto& d : dirs) joined += (joined.empty() ? "" : ",") + d;
    return unexpected(fmt::format(
        "Invalid value {} for configuration {}: weir serves one log directory; several (JBOD) are not supported yet",
        joined, plural ? "log.dirs" : "log.dir"));
  }
  log_dir = dirs.front();  // validators refuse empty lists and elements
  if (!typed_.is_null("metadata.log.dir")) {
    // Kafka can keep the metadata log apart from the data; weir keeps it in the log directory, so
    // another directory would leave a Kafka broker's metadata log unseen: refused, not ignored.
    const auto& meta = typed_.get_string("metadata.log.dir");
    const auto normal = [](const std::string& dir) {
      std::error_code ec;
      auto p = std::filesystem::weakly_canonical(dir, ec);
      if (ec) p = std::filesystem::path(dir).lexically_normal();
      std::string text = p.string();
      while (text.size() > 1 && text.back() == '/') text.pop_back();
      return text;
    };
    if (normal(meta) != normal(log_dir)) {
      return unexpected(fmt::format(
          "Invalid value {} for configuration metadata.log.dir: weir keeps the metadata log in the log directory "
          "({}); a separate metadata log directory is not supported yet",
          meta, log_dir));
    }
  }

  socket_request_max_bytes = typed_.get_int("socket.request.max.bytes");
  max_inflight_requests_per_connection = typed_.get_int("max.inflight.requests.per.connection");
  socket_send_buffer_bytes = std::max(-1, typed_.get_int("socket.send.buffer.bytes"));
  socket_receive_buffer_bytes = std::max(-1, typed_.get_int("socket.receive.buffer.bytes"));
  if (socket_send_buffer_bytes < 1) socket_send_buffer_bytes = -1;
  if (socket_receive_buffer_bytes < 1) socket_receive_buffer_bytes = -1;
  fetch_session_cache_slots = typed_.get_int("max.incremental.fetch.session.cache.slots");
  fetch_session_cache_max_partitions = typed_.get_long("weir.fetch.session.cache.max.partitions");
  const std::int32_t threads = typed_.get_int("weir.cores");
  cores = threads > 0 ? threads : static_cast<std::int32_t>(std::max(1u, std::thread::hardware_concurrency()));
  produce_max_decompressed_batch_bytes = typed_.get_long("weir.produce.max.decompressed.batch.bytes");
  produce_max_compression_ratio = typed_.get_int("weir.produce.max.compression.ratio");
  const std::int32_t workers = typed_.get_int("weir.decompression.threads");
  decompression_threads = workers > 0 ? workers : std::clamp(cores / 2, 1, 4);
  return derive_net_limits();
}

Result<std::vector<std::pair<std::string, std::int32_t>>, std::string> parse_per_ip_overrides(std::string_view text) {
  std::vector<std::pair<std::string, std::int32_t>> out;
  text = java::trim(text);
  if (text.empty()) return out;
  while (true) {  // "a:1," is refused: its last entry is empty
    const auto comma = text.find(',');
    const std::string_view item = java::trim(text.substr(0, comma));
    const auto colon = item.rfind(':');
    if (colon == std::string_view::npos) return unexpected("entry '" + std::string(item) + "' is not host:count");
    const std::string_view host = java::trim(item.substr(0, colon));
    const std::string_view count_text = java::trim(item.substr(colon + 1));
    std::int32_t count = 0;
    auto [p, ec] = std::from_chars(count_text.data(), count_text.data() + count_text.size(), count);
    if (host.empty() || ec != std::errc() || p != count_text.data() + count_text.size() || count < 0) {
      return unexpected("entry '" + std::string(item) + "' is not host:count with a count of at least 0");
    }
    out.emplace_back(std::string(host), count);
    if (comma == std::string_view::npos) break;
    text = text.substr(comma + 1);
  }
  return out;
}

// Connections and request memory: Kafka's messages where Kafka has the check.
Status<std::string> BrokerConfig::derive_net_limits() {
  if (is_set("max.connections")) max_connections = typed_.get_int("max.connections");
  max_connections_per_ip = typed_.get_int("max.connections.per.ip");
  max_connection_creation_rate = typed_.get_int("max.connection.creation.rate");
  const std::string overrides_text = typed_.get_string("max.connections.per.ip.overrides");
  auto overrides = parse_per_ip_overrides(overrides_text);
  if (!overrides) {
    return unexpected(fmt::format("Invalid value {} for configuration max.connections.per.ip.overrides: {}",
                                  overrides_text, overrides.error()));
  }
  max_connections_per_ip_overrides = std::move(*overrides);
  if (max_connections_per_ip == 0 && max_connections_per_ip_overrides.empty()) {
    return unexpected(
        std::string("requirement failed: max.connections.per.ip can be set to zero only if "
                    "max.connections.per.ip.overrides property is set."));
  }
  connections_max_idle_ms = typed_.get_long("connections.max.idle.ms");
  if (const std::int32_t delay = typed_.get_int("connection.failed.authentication.delay.ms");
      connections_max_idle_ms >= 0 && delay >= connections_max_idle_ms) {
    return unexpected(fmt::format(
        "requirement failed: connection.failed.authentication.delay.ms={} should always be less than "
        "connections.max.idle.ms={} to prevent failed authentication responses from timing out",
        delay, connections_max_idle_ms));
  }
  partial_request_timeout_ms = typed_.get_long("weir.partial.request.timeout.ms");
  const std::int64_t queued = typed_.get_long("queued.max.request.bytes");
  if (queued > 0 && queued < socket_request_max_bytes) {
    return unexpected(std::string(
        "requirement failed: queued.max.request.bytes must be larger or equal to socket.request.max.bytes"));
  }
  queued_max_request_bytes =
      queued > 0 ? queued : std::max(std::int64_t{256} << 20, std::int64_t{2} * socket_request_max_bytes);
  return {};
}

Result<BrokerConfig, std::string> load_broker_config(const std::string& config_file,
                                                     const std::vector<std::string>& overrides) {
  BrokerConfig config;
  if (!config_file.empty()) {
    if (auto r = config.load_properties_file(config_file); !r) return unexpected(r.error());
  }
  for (const auto& o : overrides) {
    if (auto r = config.set(o); !r) return unexpected(r.error());
  }
  if (auto r = config.finalize(); !r) return unexpected(r.error());
  return config;
}

}  // namespace weir::config
