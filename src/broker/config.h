// Broker configuration: Kafka's key names and defaults where the concept exists.
//
// Sources, later ones winning: built-in defaults, `--config server.properties`, `--set k=v`.
// Unknown keys are kept and reported at start-up, never fatal (a user's Kafka
// server.properties should mostly just work).
#pragma once

#include <cstdint>
#include <expected>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace weir::broker {

struct Listener {
  std::string name;  // e.g. PLAINTEXT
  std::string host;  // empty: all interfaces
  std::uint16_t port = 0;
};

// Parses "NAME://host:port,NAME2://[::1]:port".
std::expected<std::vector<Listener>, std::string> parse_listeners(std::string_view text);

struct ConfigKey {
  std::string_view name;
  std::string_view default_value;
  std::string_view type;  // string, int, long, boolean, list
  std::string_view doc;
};

// Keys weir implements, with Kafka's defaults.
const std::vector<ConfigKey>& known_config_keys();

class Config {
 public:
  // Loads a Java-style properties file (k=v or k:v, # and ! comments, \ line continuation).
  std::expected<void, std::string> load_properties_file(const std::string& path);
  // Applies one "key=value" override.
  std::expected<void, std::string> set(std::string_view assignment);
  void set(std::string key, std::string value) { values_[std::move(key)] = std::move(value); }

  // Validates and derives typed settings; fails on values that cannot be parsed.
  std::expected<void, std::string> finalize();

  [[nodiscard]] std::string get(std::string_view key) const;
  [[nodiscard]] bool is_set(std::string_view key) const { return values_.contains(std::string(key)); }
  [[nodiscard]] std::vector<std::string> unknown_keys() const;
  // Every key set by the properties file or --set (the STATIC_BROKER_CONFIG layer).
  [[nodiscard]] const std::map<std::string, std::string, std::less<>>& values() const { return values_; }

  // Typed settings, valid after finalize().
  std::int32_t node_id = 1;
  std::vector<Listener> listeners;
  std::vector<Listener> advertised_listeners;
  std::string log_dir;  // first entry of log.dirs / log.dir
  std::int32_t socket_request_max_bytes = 104857600;
  std::int32_t max_inflight_requests_per_connection = 100;
  std::int32_t socket_send_buffer_bytes = -1;  // -1: the OS default (Kafka's default: 102400)
  std::int32_t socket_receive_buffer_bytes = -1;
  std::int32_t cores = 0;  // executor threads (weir.cores; 0 = every core)
  std::int32_t fetch_session_cache_slots = 1000;              // max.incremental.fetch.session.cache.slots
  std::int64_t fetch_session_cache_max_partitions = 1000000;  // weir.fetch.session.cache.max.partitions
  std::int64_t produce_max_decompressed_batch_bytes = 268435456;  // weir.produce.max.decompressed.batch.bytes
  std::int32_t produce_max_compression_ratio = 5000;              // weir.produce.max.compression.ratio
  std::int32_t decompression_threads = 1;                         // weir.decompression.threads, derived
  bool dev_mode = false;

 private:
  std::map<std::string, std::string, std::less<>> values_;
};

}  // namespace weir::broker
