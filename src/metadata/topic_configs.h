// Topic configs: the keys Kafka 4.3.1 knows for topics, with Kafka's types, defaults, validation
// rules, broker-level synonyms and the way DescribeConfigs reports them.
//
// A topic's config is layered, first match wins (Kafka's KafkaConfigSchema):
//   1. the topic's own overrides         ConfigRecord(TOPIC, name)       DYNAMIC_TOPIC_CONFIG (1)
//   2. a broker synonym set for the node ConfigRecord(BROKER, "<id>")    DYNAMIC_BROKER_CONFIG (2)
//   3. ... set cluster-wide              ConfigRecord(BROKER, "")        DYNAMIC_DEFAULT_BROKER_CONFIG (3)
//   4. ... set in server.properties      static broker config             STATIC_BROKER_CONFIG (4)
//   5. the topic key's default                                            DEFAULT_CONFIG (5)
// Synonyms are tried in Kafka's order, e.g. retention.ms <- log.retention.ms,
// log.retention.minutes (x 60000), log.retention.hours (x 3600000).
//
// Values are kept as the client sent them (Kafka stores " 1000 " as is); parsing follows Java's
// ConfigDef: strings are trimmed, numbers are Long/Integer.parseLong rules, booleans are
// true/false in any case, lists split on commas with surrounding whitespace. Error messages are
// Kafka's, word for word ("Invalid value x for configuration retention.ms: Not a number of type
// LONG"), because clients show them to users. The defaults, ranges and messages were checked
// against a running Kafka 4.3.1 (tests/unit/metadata/data/).
//
// Thread safety: the table is immutable; all functions are pure.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "config/java.h"
#include "metadata/errc.h"
#include "protocol/gen/describe_configs_response.h"

namespace weir::metadata {

// Config key -> value, as stored in ConfigRecords (values never null here: null deletes a key).
using ConfigMap = std::map<std::string, std::string, std::less<>>;

// DescribeConfigsResponse ConfigType ids.
enum class ConfigType : std::int8_t {
  unknown = 0,
  boolean = 1,
  string = 2,
  int32 = 3,
  int16 = 4,
  int64 = 5,
  float64 = 6,
  list = 7,
};

// DescribeConfigsResponse ConfigSource ids.
enum class ConfigSource : std::int8_t {
  unknown = 0,
  dynamic_topic = 1,
  dynamic_broker = 2,
  dynamic_default_broker = 3,
  static_broker = 4,
  default_config = 5,
  group = 8,  // a group's own override (GROUP_CONFIG)
};

// A broker config key standing in for a topic key. unit_ms converts its value into the topic
// key's unit (log.retention.hours: 3600000). default_value is the broker key's own default, or
// nullopt where Kafka's default is null (log.retention.ms).
struct BrokerSynonym {
  std::string_view name;
  std::int64_t unit_ms = 1;
  std::optional<std::string_view> default_value;
};

enum class Check : std::uint8_t {
  none,
  range,               // min / max (either may be absent)
  gzip_level,          // 1..9 or -1
  one_of,              // a string in `allowed`
  list_of,             // a list of strings each in `allowed`, no empty elements
  throttled_replicas,  // "*" or "partition:broker" elements
};

struct TopicConfigDef {
  std::string_view name;
  ConfigType type = ConfigType::string;
  std::string_view default_value;  // as Kafka prints it
  Check check = Check::none;
  std::optional<std::int64_t> min;
  std::optional<std::int64_t> max;
  std::span<const std::string_view> allowed;
  std::span<const BrokerSynonym> synonyms;  // the first is Kafka's primary server synonym
  // False for keys weir accepts and stores but does not act on (tiered storage):
  // DescribeConfigs and CreateTopics report them only where a topic sets them.
  bool implemented = true;
};

// Every topic key, in Kafka's definition order (the order in which Kafka validates values).
[[nodiscard]] std::span<const TopicConfigDef> topic_config_defs() noexcept;
[[nodiscard]] const TopicConfigDef* find_topic_config(std::string_view name) noexcept;

// The broker-level layers a topic's effective config falls back to. Null pointers are empty.
struct BrokerConfigLayers {
  const ConfigMap* dynamic_node = nullptr;     // ConfigRecord(BROKER, "<node id>")
  const ConfigMap* dynamic_cluster = nullptr;  // ConfigRecord(BROKER, "")
  const ConfigMap* static_node = nullptr;      // keys set in server.properties / --set
};

// Checks a topic's complete set of overrides (existing ones with the change applied) as Kafka's
// LogConfig.validate does: unknown names, then each value in definition order, then the rules
// that relate keys (min.compaction.lag.ms <= max.compaction.lag.ms, no tiered storage).
// INVALID_CONFIG with Kafka's message, or ok.
[[nodiscard]] ApiError validate_topic_configs(const ConfigMap& overrides, const BrokerConfigLayers& broker);

// One effective topic config value, as the controller computes it for CreateTopics responses:
// the raw value of the layer it came from (a topic override verbatim, a broker synonym converted
// to the topic key's unit, else the default).
struct EffectiveConfig {
  std::string name;
  std::string value;
  ConfigSource source = ConfigSource::default_config;
  ConfigType type = ConfigType::string;
};

// The effective value of every implemented key plus every key the topic sets, sorted by name.
[[nodiscard]] std::vector<EffectiveConfig> effective_topic_configs(const ConfigMap& overrides,
                                                                   const BrokerConfigLayers& broker);

// DescribeConfigs entries for a topic (what Kafka's broker answers): values normalised the way
// Java prints the parsed value ("1000" for " 1000 ", "0.5" for "0.50"), the source, and when
// asked the synonyms (the topic override, then the broker keys, with Kafka's rule that broker
// synonyms are listed only from the primary one on: retention.ms lists none unless
// log.retention.ms itself is set). `keys` null or empty means all keys; keys weir does not know
// are left out. Sorted by name. Documentation is not provided (null).
[[nodiscard]] std::vector<protocol::DescribeConfigsResponse::DescribeConfigsResourceResult> describe_topic_configs(
    const ConfigMap& overrides, const BrokerConfigLayers& broker, const std::optional<std::vector<std::string>>& keys,
    bool include_synonyms);

inline constexpr std::int64_t kNoLimit = std::numeric_limits<std::int64_t>::max();

// Typed effective values for the layers that act on them (storage, produce path). Fields keep
// Kafka's defaults when nothing overrides them.
struct TopicConfig {
  bool cleanup_delete = true;  // cleanup.policy contains "delete"
  bool cleanup_compact = false;
  std::string compression_type = "producer";
  std::int32_t compression_gzip_level = -1;
  std::int32_t compression_lz4_level = 9;
  std::int32_t compression_zstd_level = 3;
  std::int64_t delete_retention_ms = 86'400'000;
  std::int64_t file_delete_delay_ms = 60'000;
  std::int64_t flush_messages = kNoLimit;
  std::int64_t flush_ms = kNoLimit;
  std::int32_t index_interval_bytes = 4096;
  std::int64_t max_compaction_lag_ms = kNoLimit;
  std::int32_t max_message_bytes = 1'048'588;
  bool message_timestamp_log_append_time = false;  // message.timestamp.type=LogAppendTime
  std::int64_t message_timestamp_before_max_ms = kNoLimit;
  std::int64_t message_timestamp_after_max_ms = 3'600'000;
  double min_cleanable_dirty_ratio = 0.5;
  std::int64_t min_compaction_lag_ms = 0;
  std::int32_t min_insync_replicas = 1;
  bool preallocate = false;
  std::int64_t retention_bytes = -1;
  std::int64_t retention_ms = 604'800'000;
  std::int32_t segment_bytes = 1'073'741'824;
  std::int32_t segment_index_bytes = 10'485'760;
  std::int64_t segment_jitter_ms = 0;
  std::int64_t segment_ms = 604'800'000;
  bool unclean_leader_election_enable = false;
};

[[nodiscard]] TopicConfig resolve_topic_config(const ConfigMap& overrides, const BrokerConfigLayers& broker);

// Java-compatible parsing helpers (they live in src/config; this alias keeps older callers).
namespace java = ::weir::config::java;

}  // namespace weir::metadata
