// The broker's configuration: every key weir knows (broker_keys.cpp, the one place where keys are
// registered), read from `--config server.properties` and `--set k=v` and checked once at start-up
// as Kafka 4.3.1's KafkaConfig checks it. Values that Kafka refuses are refused with Kafka's
// message; unknown keys are kept and reported, never fatal (a user's Kafka server.properties
// should mostly just work).
//
// Sources, later ones winning: built-in defaults, the properties file, --set.
//
// Thread safety: a value type; immutable once finalize() succeeded.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"
#include "config/config_def.h"

namespace weir::config {

// Every broker key weir knows, in Kafka's definition order where Kafka has the key, then weir's own.
[[nodiscard]] std::span<const KeyDef> broker_config_defs() noexcept;
[[nodiscard]] const KeyDef* find_broker_config(std::string_view name) noexcept;

struct Listener {
  std::string name;  // e.g. PLAINTEXT (upper case, as Kafka normalises listener names)
  std::string host;  // empty: all interfaces
  std::uint16_t port = 0;
};

// Parses "NAME://host:port,NAME2://[::1]:port".
Result<std::vector<Listener>, std::string> parse_listeners(std::string_view text);

// Parses max.connections.per.ip.overrides: comma-separated `host:count` (the last ':' separates,
// so IPv6 addresses work; blanks around items are ignored; count >= 0). Hosts are returned as
// written; the network server resolves names to addresses.
Result<std::vector<std::pair<std::string, std::int32_t>>, std::string> parse_per_ip_overrides(std::string_view text);

class BrokerConfig {
 public:
  // Loads a server.properties file (java.util.Properties' format, see properties.h).
  Status<std::string> load_properties_file(const std::string& path);
  // Applies one "key=value" override.
  Status<std::string> set(std::string_view assignment);
  void set(std::string key, std::string value) { raw_[std::move(key)] = std::move(value); }

  // Parses and validates every key (Kafka's messages), then the rules that relate keys, and
  // derives the typed settings below.
  Status<std::string> finalize();

  // The typed values of every registered key (valid after finalize()).
  [[nodiscard]] const ConfigValues& typed() const noexcept { return typed_; }
  [[nodiscard]] bool is_set(std::string_view key) const { return raw_.contains(key); }
  [[nodiscard]] std::vector<std::string> unknown_keys() const;
  // Every key set by the properties file or --set (the STATIC_BROKER_CONFIG layer), as given.
  [[nodiscard]] const RawConfig& values() const noexcept { return raw_; }

  // Derived settings, valid after finalize().
  std::int32_t node_id = 1;
  // process.roles=broker: a broker under an external KRaft controller quorum (weir's default,
  // broker,controller, runs the node's own local metadata log).
  bool broker_only = false;
  struct QuorumNode {
    std::int32_t id = -1;  // -1 for a bootstrap server
    std::string host;
    std::uint16_t port = 0;
    bool operator==(const QuorumNode&) const = default;
  };
  std::vector<QuorumNode> quorum_voters;     // controller.quorum.voters
  std::vector<QuorumNode> quorum_bootstrap;  // controller.quorum.bootstrap.servers
  std::vector<Listener> listeners;
  std::vector<Listener> advertised_listeners;
  std::string log_dir;  // first entry of log.dirs / log.dir
  std::int32_t socket_request_max_bytes = 104857600;
  std::int32_t max_inflight_requests_per_connection = 100;
  std::int32_t socket_send_buffer_bytes = -1;  // < 1: the OS default, 262144 from this host (Kafka: 102400)
  std::int32_t socket_receive_buffer_bytes = -1;
  std::int32_t cores = 0;                                     // executor threads (weir.cores; 0 = every core)
  std::int32_t fetch_session_cache_slots = 1000;              // max.incremental.fetch.session.cache.slots
  std::int64_t fetch_session_cache_max_partitions = 1000000;  // weir.fetch.session.cache.max.partitions
  std::int64_t produce_max_decompressed_batch_bytes = 268435456;  // weir.produce.max.decompressed.batch.bytes
  std::int32_t produce_max_compression_ratio = 5000;              // weir.produce.max.compression.ratio
  std::int32_t decompression_threads = 1;                         // weir.decompression.threads, derived
  // Connections and request memory. max_connections is unset unless the key is; the server
  // derives it from RLIMIT_NOFILE and stores the result here before the broker starts.
  // queued_max_request_bytes is the effective budget.
  std::optional<std::int32_t> max_connections;
  std::int32_t max_connections_per_ip = 2147483647;
  std::vector<std::pair<std::string, std::int32_t>> max_connections_per_ip_overrides;
  std::int32_t max_connection_creation_rate = 2147483647;
  std::int64_t connections_max_idle_ms = 600000;    // negative: never
  std::int64_t partial_request_timeout_ms = 30000;  // weir.partial.request.timeout.ms; negative: never
  std::int64_t queued_max_request_bytes = std::int64_t{256} << 20;
  bool dev_mode = false;

 private:
  Status<std::string> check_listeners();
  Status<std::string> check_process_roles();
  Status<std::string> derive_net_limits();

  RawConfig raw_;
  ConfigValues typed_;
};

}  // namespace weir::config
