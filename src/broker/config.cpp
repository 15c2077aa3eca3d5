#include "broker/config.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>
#include <thread>

#include <unistd.h>

#include "broker/net_config.h"
#include "net/connection_quotas.h"

namespace weir::broker {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

template <class T>
std::expected<T, std::string> parse_int(std::string_view key, std::string_view text) {
  T v{};
  text = trim(text);
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size()) {
    return std::unexpected("invalid value '" + std::string(text) + "' for " + std::string(key));
  }
  return v;
}

}  // namespace

const std::vector<ConfigKey>& known_config_keys() {
  static const std::vector<ConfigKey> keys = {
      {"node.id", "1", "int", "The broker's id."},
      {"broker.id", "-1", "int", "Alias of node.id."},
      {"listeners", "PLAINTEXT://:9092", "list", "Addresses to listen on."},
      {"advertised.listeners", "", "list", "Addresses given to clients; defaults to listeners."},
      {"log.dirs", "", "list", "Data directories (weir uses the first)."},
      {"log.dir", "/tmp/kafka-logs", "string", "Data directory when log.dirs is not set."},
      {"socket.request.max.bytes", "104857600", "int", "Largest request accepted."},
      {"max.inflight.requests.per.connection", "100", "int",
       "weir: requests read from one connection before its responses are written."},
      {"num.io.threads", "8", "int", "Accepted for compatibility; see weir.cores."},
      {"weir.cores", "0", "int", "weir: executor threads, one per core (0 = every core)."},
      {"process.roles", "broker,controller", "list", "Accepted for compatibility; weir is both."},
      {"controller.quorum.voters", "", "list", "Accepted for compatibility."},
      {"controller.listener.names", "", "list", "Accepted for compatibility."},
      {"listener.security.protocol.map", "", "list", "Accepted for compatibility."},
      {"inter.broker.listener.name", "", "string", "Accepted for compatibility."},
      {"num.partitions", "1", "int", "Partitions of auto-created topics."},
      {"default.replication.factor", "1", "int", "Replication factor of auto-created topics."},
      {"auto.create.topics.enable", "true", "boolean", "Create topics on metadata requests."},
      {"offsets.topic.replication.factor", "3", "int", "Accepted; one node."},
      {"offsets.topic.num.partitions", "50", "int", "Partitions of __consumer_offsets."},
      {"transaction.state.log.replication.factor", "3", "int", "Accepted; one node."},
      {"transaction.state.log.min.isr", "2", "int", "Accepted; one node."},
      {"transaction.state.log.num.partitions", "50", "int", "Partitions of __transaction_state."},
      {"group.initial.rebalance.delay.ms", "3000", "int", "Delay of a new group's first rebalance."},
      {"group.min.session.timeout.ms", "6000", "int", "Smallest session timeout a member may ask for."},
      {"group.max.session.timeout.ms", "1800000", "int", "Largest session timeout a member may ask for."},
      {"group.max.size", "2147483647", "int", "Most members a classic group may have."},
      {"offset.metadata.max.bytes", "4096", "int", "Largest metadata string of a committed offset."},
      {"offsets.topic.segment.bytes", "104857600", "int", "Segment size of __consumer_offsets."},
      {"offsets.retention.minutes", "10080", "int", "How long committed offsets of empty groups are kept."},
      {"offsets.retention.check.interval.ms", "600000", "long", "How often expired offsets are removed."},
      {"producer.id.expiration.ms", "86400000", "int",
       "How long an idle idempotent producer's state (sequence numbers) is kept."},
      {"producer.id.expiration.check.interval.ms", "600000", "int", "How often idle producers are expired."},
      {"log.retention.hours", "168", "int", "Retention of log segments."},
      {"log.retention.ms", "", "long", "Retention of log segments."},
      {"log.segment.bytes", "1073741824", "int", "Segment size."},
      {"log.retention.check.interval.ms", "300000", "long", "Retention check period."},
      {"log.flush.interval.messages", "9223372036854775807", "long", "Unflushed messages that trigger a flush (flush.messages)."},
      {"log.flush.interval.ms", "", "long", "Age of the last flush that triggers one (flush.ms)."},
      {"log.flush.scheduler.interval.ms", "9223372036854775807", "long",
       "How often logs are checked for flush.ms (weir checks at least every second)."},
      {"log.flush.offset.checkpoint.interval.ms", "60000", "int",
       "How often recovery points and high watermarks are checkpointed."},
      {"log.flush.start.offset.checkpoint.interval.ms", "60000", "int", "How often log start offsets are checkpointed."},
      {"log.cleaner.enable", "true", "boolean", "Run the log cleaner for compacted topics."},
      {"log.cleaner.backoff.ms", "15000", "long", "Pause of the cleaner when nothing needs cleaning."},
      {"log.cleaner.io.max.bytes.per.second", "1.7976931348623157E308", "double", "Cleaner I/O limit."},
      {"log.cleaner.dedupe.buffer.size", "134217728", "long", "Memory of the cleaner's offset map."},
      {"log.cleaner.io.buffer.load.factor", "0.9", "double", "How full the offset map may get."},
      {"message.max.bytes", "1048588", "int", "Largest record batch."},
      {"num.network.threads", "3", "int", "Accepted for compatibility."},
      {"num.recovery.threads.per.data.dir", "2", "int", "Accepted for compatibility."},
      // Kafka's default is 102400; weir's is the OS's own, autotuned size, which moved 1.3x the
      // bytes per second on loopback in both directions (BENCHMARKS.md).
      {"socket.send.buffer.bytes", "-1", "int", "SO_SNDBUF of client connections; -1: the OS default."},
      {"socket.receive.buffer.bytes", "-1", "int", "SO_RCVBUF of client connections; -1: the OS default."},
      {"flush.on.acks.all", "true", "boolean", "weir: fdatasync before acknowledging acks=all."},
      {"metrics.listener", "", "string",
       "weir: host:port of the Prometheus endpoint (GET /metrics); empty = no endpoint."},
      {"max.incremental.fetch.session.cache.slots", "1000", "int",
       "Incremental fetch sessions kept (split evenly over 8 shards, as Kafka does)."},
      {"weir.fetch.session.cache.max.partitions", "1000000", "long",
       "weir: partitions all incremental fetch sessions may remember together."},
      // Connections and request memory (net::ServerOptions). Kafka's defaults are unlimited;
      // weir's max.connections and queued.max.request.bytes are bounded unless set.
      {"max.connections", "", "int",
       "Connections the broker accepts; at the limit it stops accepting until one closes. weir: "
       "half of RLIMIT_NOFILE when unset (Kafka: unlimited)."},
      {"max.connections.per.ip", "2147483647", "int", "Connections from one address; one more is closed at accept."},
      {"max.connections.per.ip.overrides", "", "string", "Per-address limits: host:count,host:count."},
      {"max.connection.creation.rate", "2147483647", "int", "Connections accepted per second, broker-wide."},
      {"connections.max.idle.ms", "600000", "long", "Idle connections are closed after this long."},
      {"queued.max.request.bytes", "-1", "long",
       "Request bytes read but not yet handled. weir: -1 (or 0) means max(256 MiB, 2 x "
       "socket.request.max.bytes) (Kafka: unlimited)."},
      {"weir.partial.request.timeout.ms", "30000", "long",
       "weir: a request must arrive in full within this long of its first byte; -1: no deadline."},
  };
  return keys;
}

// Connections and request memory: Kafka's messages where Kafka has the check.
std::expected<NetLimits, std::string> net_limits(const Config& config) {
  NetLimits out;
  if (std::string text = config.get("max.connections"); !trim(text).empty()) {
    auto v = parse_int<std::int32_t>("max.connections", text);
    if (!v) return std::unexpected(v.error());
    if (*v < 0)
      return std::unexpected("Invalid value " + text + " for configuration max.connections: Value must be at least 0");
    out.max_connections = *v;
  }
  for (auto [key, field] : {std::pair{"max.connections.per.ip", &out.max_connections_per_ip},
                            std::pair{"max.connection.creation.rate", &out.max_connection_creation_rate}}) {
    auto v = parse_int<std::int32_t>(key, config.get(key));
    if (!v) return std::unexpected(v.error());
    if (*v < 0)
      return std::unexpected("Invalid value " + config.get(key) + " for configuration " + key +
                             ": Value must be at least 0");
    *field = *v;
  }
  auto overrides = net::parse_per_ip_overrides(config.get("max.connections.per.ip.overrides"));
  if (!overrides)
    return std::unexpected("Invalid value " + config.get("max.connections.per.ip.overrides") +
                           " for configuration max.connections.per.ip.overrides: " + overrides.error());
  out.max_connections_per_ip_overrides = std::move(*overrides);
  if (out.max_connections_per_ip == 0 && out.max_connections_per_ip_overrides.empty()) {
    return std::unexpected(
        "max.connections.per.ip can be set to zero only if max.connections.per.ip.overrides property is set.");
  }
  for (auto [key, field] : {std::pair{"connections.max.idle.ms", &out.connections_max_idle_ms},
                            std::pair{"weir.partial.request.timeout.ms", &out.partial_request_timeout_ms},
                            std::pair{"queued.max.request.bytes", &out.queued_max_request_bytes}}) {
    auto v = parse_int<std::int64_t>(key, config.get(key));
    if (!v) return std::unexpected(v.error());
    *field = *v;
  }
  if (out.queued_max_request_bytes > 0 && out.queued_max_request_bytes < config.socket_request_max_bytes) {
    return std::unexpected("queued.max.request.bytes must be larger or equal to socket.request.max.bytes");
  }
  if (out.queued_max_request_bytes <= 0) {
    out.queued_max_request_bytes = std::max(std::int64_t{256} << 20, std::int64_t{2} * config.socket_request_max_bytes);
  }
  return out;
}

std::expected<std::vector<Listener>, std::string> parse_listeners(std::string_view text) {
  std::vector<Listener> out;
  std::string_view rest = trim(text);
  while (!rest.empty()) {
    auto comma = rest.find(',');
    std::string_view item = trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    if (item.empty()) continue;
    auto sep = item.find("://");
    if (sep == std::string_view::npos) return std::unexpected("listener '" + std::string(item) + "' lacks NAME://");
    Listener l;
    l.name = std::string(item.substr(0, sep));
    std::string_view hostport = item.substr(sep + 3);
    auto colon = hostport.rfind(':');
    if (colon == std::string_view::npos) return std::unexpected("listener '" + std::string(item) + "' lacks a port");
    std::string_view host = hostport.substr(0, colon);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    l.host = std::string(host);
    auto port = parse_int<std::uint16_t>("listener port", hostport.substr(colon + 1));
    if (!port) return std::unexpected(port.error());
    l.port = *port;
    out.push_back(std::move(l));
  }
  return out;
}

std::expected<void, std::string> Config::load_properties_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::unexpected("cannot read config file " + path);
  std::string line;
  std::string pending;
  while (std::getline(in, line)) {
    std::string_view l = trim(line);
    if (pending.empty() && (l.empty() || l.front() == '#' || l.front() == '!')) continue;
    if (!l.empty() && l.back() == '\\') {
      pending += std::string(l.substr(0, l.size() - 1));
      continue;
    }
    pending += std::string(l);
    std::string_view entry = pending;
    auto sep = entry.find_first_of("=:");
    if (sep != std::string_view::npos) {
      values_[std::string(trim(entry.substr(0, sep)))] = std::string(trim(entry.substr(sep + 1)));
    }
    pending.clear();
  }
  return {};
}

std::expected<void, std::string> Config::set(std::string_view assignment) {
  auto sep = assignment.find('=');
  if (sep == std::string_view::npos || sep == 0) {
    return std::unexpected("expected key=value, got '" + std::string(assignment) + "'");
  }
  values_[std::string(trim(assignment.substr(0, sep)))] = std::string(trim(assignment.substr(sep + 1)));
  return {};
}

std::string Config::get(std::string_view key) const {
  if (auto it = values_.find(key); it != values_.end()) return it->second;
  for (const auto& k : known_config_keys()) {
    if (k.name == key) return std::string(k.default_value);
  }
  return {};
}

std::vector<std::string> Config::unknown_keys() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : values_) {
    bool known = false;
    for (const auto& ck : known_config_keys()) known = known || ck.name == k;
    if (!known) out.push_back(k);
  }
  return out;
}

std::expected<void, std::string> Config::finalize() {
  std::string id = is_set("node.id") ? get("node.id") : (is_set("broker.id") ? get("broker.id") : "1");
  auto node = parse_int<std::int32_t>("node.id", id);
  if (!node) return std::unexpected(node.error());
  node_id = *node;

  auto ls = parse_listeners(get("listeners"));
  if (!ls) return std::unexpected(ls.error());
  if (ls->empty()) return std::unexpected("no listeners configured");
  listeners = *ls;
  std::string adv = get("advertised.listeners");
  if (adv.empty()) {
    advertised_listeners = listeners;
  } else {
    auto al = parse_listeners(adv);
    if (!al) return std::unexpected(al.error());
    advertised_listeners = *al;
  }
  for (auto& l : advertised_listeners) {
    if (l.host.empty() || l.host == "0.0.0.0" || l.host == "::") {
      char name[256] = {};
      l.host = ::gethostname(name, sizeof name - 1) == 0 ? std::string(name) : std::string("localhost");
    }
  }

  std::string dirs = get("log.dirs");
  if (dirs.empty()) dirs = get("log.dir");
  log_dir = std::string(trim(std::string_view(dirs).substr(0, dirs.find(','))));
  if (log_dir.empty()) return std::unexpected("log.dirs is empty");

  auto max_bytes = parse_int<std::int32_t>("socket.request.max.bytes", get("socket.request.max.bytes"));
  if (!max_bytes) return std::unexpected(max_bytes.error());
  if (*max_bytes <= 0) return std::unexpected("socket.request.max.bytes must be positive");
  socket_request_max_bytes = *max_bytes;

  auto inflight = parse_int<std::int32_t>("max.inflight.requests.per.connection",
                                          get("max.inflight.requests.per.connection"));
  if (!inflight) return std::unexpected(inflight.error());
  if (*inflight <= 0) return std::unexpected("max.inflight.requests.per.connection must be positive");
  max_inflight_requests_per_connection = *inflight;

  for (auto [key, out] : {std::pair{"socket.send.buffer.bytes", &socket_send_buffer_bytes},
                          std::pair{"socket.receive.buffer.bytes", &socket_receive_buffer_bytes}}) {
    auto v = parse_int<std::int32_t>(key, get(key));
    if (!v) return std::unexpected(v.error());
    if (*v == 0 || *v < -1) return std::unexpected(std::string(key) + " must be positive, or -1 for the OS default");
    *out = *v;
  }

  auto slots = parse_int<std::int32_t>("max.incremental.fetch.session.cache.slots",
                                       get("max.incremental.fetch.session.cache.slots"));
  if (!slots) return std::unexpected(slots.error());
  if (*slots < 0) return std::unexpected("max.incremental.fetch.session.cache.slots must be at least 0");
  fetch_session_cache_slots = *slots;
  auto cached = parse_int<std::int64_t>("weir.fetch.session.cache.max.partitions",
                                        get("weir.fetch.session.cache.max.partitions"));
  if (!cached) return std::unexpected(cached.error());
  if (*cached < 0) return std::unexpected("weir.fetch.session.cache.max.partitions must be at least 0");
  fetch_session_cache_max_partitions = *cached;

  if (auto net = net_limits(*this); !net) return std::unexpected(net.error());

  auto threads = parse_int<std::int32_t>("weir.cores", get("weir.cores"));
  if (!threads) return std::unexpected(threads.error());
  cores = *threads > 0 ? *threads : static_cast<std::int32_t>(std::max(1u, std::thread::hardware_concurrency()));
  return {};
}

}  // namespace weir::broker
