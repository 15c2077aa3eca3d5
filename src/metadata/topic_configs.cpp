#include "metadata/topic_configs.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <variant>

#include "base/assert.h"
#include "base/result.h"

namespace weir::metadata {
namespace {

constexpr std::string_view kMaxLong = "9223372036854775807";
constexpr std::int64_t kHourMs = 3'600'000;
constexpr std::int64_t kMinuteMs = 60'000;

constexpr std::string_view kCleanupPolicies[] = {"compact", "delete"};
constexpr std::string_view kCompressionTypes[] = {"uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"};
constexpr std::string_view kTimestampTypes[] = {"CreateTime", "LogAppendTime"};

// Broker synonyms, in Kafka's precedence order, with the broker keys' own defaults.
constexpr BrokerSynonym kSegmentBytes[] = {{"log.segment.bytes", 1, "1073741824"}};
constexpr BrokerSynonym kSegmentMs[] = {{"log.roll.ms", 1, std::nullopt}, {"log.roll.hours", kHourMs, "168"}};
constexpr BrokerSynonym kSegmentJitterMs[] = {{"log.roll.jitter.ms", 1, std::nullopt},
                                              {"log.roll.jitter.hours", kHourMs, "0"}};
constexpr BrokerSynonym kSegmentIndexBytes[] = {{"log.index.size.max.bytes", 1, "10485760"}};
constexpr BrokerSynonym kFlushMessages[] = {{"log.flush.interval.messages", 1, kMaxLong}};
constexpr BrokerSynonym kFlushMs[] = {{"log.flush.interval.ms", 1, std::nullopt},
                                      {"log.flush.scheduler.interval.ms", 1, kMaxLong}};
constexpr BrokerSynonym kRetentionBytes[] = {{"log.retention.bytes", 1, "-1"}};
constexpr BrokerSynonym kRetentionMs[] = {{"log.retention.ms", 1, std::nullopt},
                                          {"log.retention.minutes", kMinuteMs, std::nullopt},
                                          {"log.retention.hours", kHourMs, "168"}};
constexpr BrokerSynonym kMaxMessageBytes[] = {{"message.max.bytes", 1, "1048588"}};
constexpr BrokerSynonym kIndexIntervalBytes[] = {{"log.index.interval.bytes", 1, "4096"}};
constexpr BrokerSynonym kDeleteRetentionMs[] = {{"log.cleaner.delete.retention.ms", 1, "86400000"}};
constexpr BrokerSynonym kMinCompactionLagMs[] = {{"log.cleaner.min.compaction.lag.ms", 1, "0"}};
constexpr BrokerSynonym kMaxCompactionLagMs[] = {{"log.cleaner.max.compaction.lag.ms", 1, kMaxLong}};
constexpr BrokerSynonym kFileDeleteDelayMs[] = {{"log.segment.delete.delay.ms", 1, "60000"}};
constexpr BrokerSynonym kMinCleanableRatio[] = {{"log.cleaner.min.cleanable.ratio", 1, "0.5"}};
constexpr BrokerSynonym kCleanupPolicy[] = {{"log.cleanup.policy", 1, "delete"}};
constexpr BrokerSynonym kUncleanElection[] = {{"unclean.leader.election.enable", 1, "false"}};
constexpr BrokerSynonym kMinInsyncReplicas[] = {{"min.insync.replicas", 1, "1"}};
constexpr BrokerSynonym kCompressionType[] = {{"compression.type", 1, "producer"}};
constexpr BrokerSynonym kGzipLevel[] = {{"compression.gzip.level", 1, "-1"}};
constexpr BrokerSynonym kLz4Level[] = {{"compression.lz4.level", 1, "9"}};
constexpr BrokerSynonym kZstdLevel[] = {{"compression.zstd.level", 1, "3"}};
constexpr BrokerSynonym kPreallocate[] = {{"log.preallocate", 1, "false"}};
constexpr BrokerSynonym kTimestampType[] = {{"log.message.timestamp.type", 1, "CreateTime"}};
constexpr BrokerSynonym kTimestampBefore[] = {{"log.message.timestamp.before.max.ms", 1, kMaxLong}};
constexpr BrokerSynonym kTimestampAfter[] = {{"log.message.timestamp.after.max.ms", 1, "3600000"}};
constexpr BrokerSynonym kLocalRetentionMs[] = {{"log.local.retention.ms", 1, "-2"}};
constexpr BrokerSynonym kLocalRetentionBytes[] = {{"log.local.retention.bytes", 1, "-2"}};

using T = ConfigType;

// Kafka 4.3.1's LogConfig, in definition order. Types, defaults and ranges were read from the
// running broker (DescribeConfigs and one CreateTopics probe per bound; see tests/unit/metadata/data).
constexpr TopicConfigDef kDefs[] = {
    {"segment.bytes", T::int32, "1073741824", Check::range, 1'048'576, std::nullopt, {}, kSegmentBytes},
    {"segment.ms", T::int64, "604800000", Check::range, 1, std::nullopt, {}, kSegmentMs},
    {"segment.jitter.ms", T::int64, "0", Check::range, 0, std::nullopt, {}, kSegmentJitterMs},
    {"segment.index.bytes", T::int32, "10485760", Check::range, 4, std::nullopt, {}, kSegmentIndexBytes},
    {"flush.messages", T::int64, kMaxLong, Check::range, 1, std::nullopt, {}, kFlushMessages},
    {"flush.ms", T::int64, kMaxLong, Check::range, 0, std::nullopt, {}, kFlushMs},
    {"retention.bytes", T::int64, "-1", Check::none, std::nullopt, std::nullopt, {}, kRetentionBytes},
    {"retention.ms", T::int64, "604800000", Check::range, -1, std::nullopt, {}, kRetentionMs},
    {"max.message.bytes", T::int32, "1048588", Check::range, 0, std::nullopt, {}, kMaxMessageBytes},
    {"index.interval.bytes", T::int32, "4096", Check::range, 0, std::nullopt, {}, kIndexIntervalBytes},
    {"delete.retention.ms", T::int64, "86400000", Check::range, 0, std::nullopt, {}, kDeleteRetentionMs},
    {"min.compaction.lag.ms", T::int64, "0", Check::range, 0, std::nullopt, {}, kMinCompactionLagMs},
    {"max.compaction.lag.ms", T::int64, kMaxLong, Check::range, 1, std::nullopt, {}, kMaxCompactionLagMs},
    {"file.delete.delay.ms", T::int64, "60000", Check::range, 0, std::nullopt, {}, kFileDeleteDelayMs},
    {"min.cleanable.dirty.ratio", T::float64, "0.5", Check::range, 0, 1, {}, kMinCleanableRatio},
    {"cleanup.policy", T::list, "delete", Check::list_of, std::nullopt, std::nullopt, kCleanupPolicies, kCleanupPolicy},
    {"unclean.leader.election.enable",
     T::boolean,
     "false",
     Check::none,
     std::nullopt,
     std::nullopt,
     {},
     kUncleanElection},
    {"min.insync.replicas", T::int32, "1", Check::range, 1, std::nullopt, {}, kMinInsyncReplicas},
    {"compression.type", T::string, "producer", Check::one_of, std::nullopt, std::nullopt, kCompressionTypes,
     kCompressionType},
    {"compression.gzip.level", T::int32, "-1", Check::gzip_level, std::nullopt, std::nullopt, {}, kGzipLevel},
    {"compression.lz4.level", T::int32, "9", Check::range, 1, 17, {}, kLz4Level},
    {"compression.zstd.level", T::int32, "3", Check::range, -131'072, 22, {}, kZstdLevel},
    {"preallocate", T::boolean, "false", Check::none, std::nullopt, std::nullopt, {}, kPreallocate},
    {"message.timestamp.type", T::string, "CreateTime", Check::one_of, std::nullopt, std::nullopt, kTimestampTypes,
     kTimestampType},
    {"message.timestamp.before.max.ms", T::int64, kMaxLong, Check::range, 0, std::nullopt, {}, kTimestampBefore},
    {"message.timestamp.after.max.ms", T::int64, "3600000", Check::range, 0, std::nullopt, {}, kTimestampAfter},
    {"leader.replication.throttled.replicas",
     T::list,
     "",
     Check::throttled_replicas,
     std::nullopt,
     std::nullopt,
     {},
     {},
     false},
    {"follower.replication.throttled.replicas",
     T::list,
     "",
     Check::throttled_replicas,
     std::nullopt,
     std::nullopt,
     {},
     {},
     false},
    {"remote.storage.enable", T::boolean, "false", Check::none, std::nullopt, std::nullopt, {}, {}, false},
    {"local.retention.ms", T::int64, "-2", Check::range, -2, std::nullopt, {}, kLocalRetentionMs, false},
    {"local.retention.bytes", T::int64, "-2", Check::range, -2, std::nullopt, {}, kLocalRetentionBytes, false},
    {"remote.log.copy.disable", T::boolean, "false", Check::none, std::nullopt, std::nullopt, {}, {}, false},
    {"remote.log.delete.on.disable", T::boolean, "false", Check::none, std::nullopt, std::nullopt, {}, {}, false},
};

// A value parsed by its key's type.
using Parsed = std::variant<std::int64_t, double, bool, std::string, std::vector<std::string>>;

std::string invalid_value(std::string_view shown, std::string_view name, std::string_view why) {
  return fmt::format("Invalid value {} for configuration {}: {}", shown, name, why);
}

ApiError config_error(std::string message) { return ApiError{Errc::invalid_config, std::move(message)}; }

std::string_view type_name(ConfigType type) noexcept {
  switch (type) {
    case T::int32:
      return "INT";
    case T::int64:
      return "LONG";
    case T::float64:
      return "DOUBLE";
    default:
      return "STRING";
  }
}

// ConfigDef.parseType: the error carries the raw value.
Result<Parsed, ApiError> parse_value(const TopicConfigDef& def, std::string_view raw) {
  const std::string_view trimmed = java::trim(raw);
  switch (def.type) {
    case T::int32:
    case T::int16:
    case T::int64: {
      const int bits = def.type == T::int64 ? 64 : def.type == T::int32 ? 32 : 16;
      auto v = java::parse_integer(trimmed, bits);
      if (!v) {
        return unexpected(
            config_error(invalid_value(raw, def.name, fmt::format("Not a number of type {}", type_name(def.type)))));
      }
      return Parsed(*v);
    }
    case T::float64: {
      auto v = java::parse_double(trimmed);
      if (!v) {
        return unexpected(config_error(invalid_value(raw, def.name, "Not a number of type DOUBLE")));
      }
      return Parsed(*v);
    }
    case T::boolean: {
      auto eq = [&](std::string_view word) {
        return std::ranges::equal(
            trimmed, word, [](char a, char b) { return (a >= 'A' && a <= 'Z' ? static_cast<char>(a + 32) : a) == b; });
      };
      if (eq("true")) return Parsed(true);
      if (eq("false")) return Parsed(false);
      return unexpected(config_error(invalid_value(raw, def.name, "Expected value to be either true or false")));
    }
    case T::list:
      return Parsed(java::split_list(trimmed));
    default:
      return Parsed(std::string(trimmed));
  }
}

std::string join(std::span<const std::string_view> items, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += sep;
    out += items[i];
  }
  return out;
}

// Java's List.toString: "[a, b]".
std::string java_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += ", ";
    out += items[i];
  }
  return out + "]";
}

bool is_throttle_entry(std::string_view s) {
  s = java::trim(s);
  if (s.empty()) return true;
  const auto colon = s.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == s.size()) return false;
  auto digits = [](std::string_view d) { return std::ranges::all_of(d, [](char c) { return c >= '0' && c <= '9'; }); };
  return digits(s.substr(0, colon)) && digits(s.substr(colon + 1));
}

// The key's validator, applied to the parsed value (messages show the parsed value).
ApiError check_value(const TopicConfigDef& def, const Parsed& value) {
  switch (def.check) {
    case Check::none:
      return ApiError::ok();
    case Check::range: {
      const bool is_double = std::holds_alternative<double>(value);
      const double d = is_double ? std::get<double>(value) : 0.0;
      const std::int64_t n = is_double ? 0 : std::get<std::int64_t>(value);
      const std::string shown = is_double ? java::double_to_string(d) : std::to_string(n);
      if (def.min && (is_double ? d < static_cast<double>(*def.min) : n < *def.min)) {
        return config_error(invalid_value(shown, def.name, fmt::format("Value must be at least {}", *def.min)));
      }
      if (def.max && (is_double ? d > static_cast<double>(*def.max) : n > *def.max)) {
        return config_error(invalid_value(shown, def.name, fmt::format("Value must be no more than {}", *def.max)));
      }
      return ApiError::ok();
    }
    case Check::gzip_level: {
      const std::int64_t n = std::get<std::int64_t>(value);
      if (n == -1 || (n >= 1 && n <= 9)) return ApiError::ok();
      return config_error(invalid_value(std::to_string(n), def.name, "Value must be between 1 and 9 or equal to -1"));
    }
    case Check::one_of: {
      const auto& s = std::get<std::string>(value);
      if (std::ranges::find(def.allowed, s) != def.allowed.end()) return ApiError::ok();
      return config_error(
          invalid_value(s, def.name, fmt::format("String must be one of: {}", join(def.allowed, ", "))));
    }
    case Check::list_of: {
      for (const auto& item : std::get<std::vector<std::string>>(value)) {
        if (item.empty()) {
          return config_error(fmt::format("Configuration '{}' values must not be empty.", def.name));
        }
        if (std::ranges::find(def.allowed, item) == def.allowed.end()) {
          return config_error(
              invalid_value(item, def.name, fmt::format("String must be one of: {}", join(def.allowed, ", "))));
        }
      }
      return ApiError::ok();
    }
    case Check::throttled_replicas: {
      const auto& items = std::get<std::vector<std::string>>(value);
      std::string joined;
      for (const auto& item : items) joined += java::trim(item);
      if (joined == "*" || std::ranges::all_of(items, is_throttle_entry)) return ApiError::ok();
      return config_error(
          invalid_value(java_list(items), def.name,
                        fmt::format("{} must be the literal '*' or a list of replicas in the following format: "
                                    "[partitionId]:[brokerId],[partitionId]:[brokerId],...",
                                    def.name)));
    }
  }
  return ApiError::ok();
}

const ConfigMap kEmpty;

protocol::DescribeConfigsResponse::DescribeConfigsSynonym synonym(std::string_view name, std::string value,
                                                                  ConfigSource source) {
  protocol::DescribeConfigsResponse::DescribeConfigsSynonym s;
  s.name = std::string(name);
  s.value = std::move(value);
  s.source = static_cast<std::int8_t>(source);
  return s;
}

const ConfigMap& or_empty(const ConfigMap* m) noexcept { return m ? *m : kEmpty; }

// A broker synonym's value in the topic key's unit; nullopt if it cannot be converted.
std::optional<std::string> convert(const BrokerSynonym& syn, std::string_view value) {
  if (syn.unit_ms == 1) return std::string(value);
  auto n = java::parse_integer(java::trim(value), 64);
  if (!n || std::abs(*n) > std::numeric_limits<std::int64_t>::max() / syn.unit_ms) {
    return std::nullopt;
  }
  return std::to_string(*n * syn.unit_ms);
}

// The controller's resolution: the topic override, else the first broker synonym found in the
// dynamic node, dynamic cluster and static layers (in that order), else the default.
EffectiveConfig resolve(const TopicConfigDef& def, const ConfigMap& overrides, const BrokerConfigLayers& broker) {
  if (auto it = overrides.find(def.name); it != overrides.end()) {
    return {std::string(def.name), it->second, ConfigSource::dynamic_topic, def.type};
  }
  const std::pair<const ConfigMap*, ConfigSource> layers[] = {
      {broker.dynamic_node, ConfigSource::dynamic_broker},
      {broker.dynamic_cluster, ConfigSource::dynamic_default_broker},
      {broker.static_node, ConfigSource::static_broker},
  };
  for (const auto& [map, source] : layers) {
    for (const auto& syn : def.synonyms) {
      const auto& m = or_empty(map);
      auto it = m.find(syn.name);
      if (it == m.end()) continue;
      if (auto v = convert(syn, it->second)) {
        return {std::string(def.name), std::move(*v), source, def.type};
      }
    }
  }
  return {std::string(def.name), std::string(def.default_value), ConfigSource::default_config, def.type};
}

// The value as Java prints the parsed value (ConfigDef.convertToString); raw if unparseable.
std::string normalise(const TopicConfigDef& def, std::string_view raw) {
  auto parsed = parse_value(def, raw);
  if (!parsed) return std::string(raw);
  return std::visit(
      [](const auto& v) -> std::string {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, std::int64_t>) {
          return std::to_string(v);
        } else if constexpr (std::is_same_v<V, double>) {
          return java::double_to_string(v);
        } else if constexpr (std::is_same_v<V, bool>) {
          return v ? "true" : "false";
        } else if constexpr (std::is_same_v<V, std::string>) {
          return v;
        } else {
          std::string out;
          for (std::size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + v[i];
          return out;
        }
      },
      *parsed);
}

bool reported(const TopicConfigDef& def, const ConfigMap& overrides) {
  return def.implemented || overrides.contains(def.name);
}

// Parsed effective value of a key, falling back to its default if the layer's value is bad.
Parsed effective_parsed(const TopicConfigDef& def, const ConfigMap& overrides, const BrokerConfigLayers& broker) {
  auto parsed = parse_value(def, resolve(def, overrides, broker).value);
  if (parsed) return *parsed;
  auto fallback = parse_value(def, def.default_value);
  WEIR_ASSERT(fallback.has_value(), "default of {} does not parse", def.name);
  return *fallback;
}

}  // namespace

std::span<const TopicConfigDef> topic_config_defs() noexcept { return kDefs; }

const TopicConfigDef* find_topic_config(std::string_view name) noexcept {
  for (const auto& def : kDefs) {
    if (def.name == name) return &def;
  }
  return nullptr;
}

ApiError validate_topic_configs(const ConfigMap& overrides, const BrokerConfigLayers& broker) {
  for (const auto& [name, value] : overrides) {
    if (!find_topic_config(name)) return config_error("Unknown topic config name: " + name);
  }
  for (const auto& def : kDefs) {
    auto it = overrides.find(def.name);
    if (it == overrides.end()) continue;
    auto parsed = parse_value(def, it->second);
    if (!parsed) return parsed.error();
    if (auto err = check_value(def, *parsed); !err.is_ok()) return err;
  }
  const auto min_lag =
      std::get<std::int64_t>(effective_parsed(*find_topic_config("min.compaction.lag.ms"), overrides, broker));
  const auto max_lag =
      std::get<std::int64_t>(effective_parsed(*find_topic_config("max.compaction.lag.ms"), overrides, broker));
  if (min_lag > max_lag) {
    return config_error(fmt::format(
        "conflict topic config setting min.compaction.lag.ms ({}) > max.compaction.lag.ms ({})", min_lag, max_lag));
  }
  if (std::get<bool>(effective_parsed(*find_topic_config("remote.storage.enable"), overrides, broker))) {
    return config_error(
        "Tiered Storage functionality is disabled in the broker. Topic cannot be configured "
        "with remote log storage.");
  }
  return ApiError::ok();
}

std::vector<EffectiveConfig> effective_topic_configs(const ConfigMap& overrides, const BrokerConfigLayers& broker) {
  std::vector<EffectiveConfig> out;
  for (const auto& def : kDefs) {
    if (reported(def, overrides)) out.push_back(resolve(def, overrides, broker));
  }
  std::ranges::sort(out, {}, &EffectiveConfig::name);
  return out;
}

std::vector<protocol::DescribeConfigsResponse::DescribeConfigsResourceResult> describe_topic_configs(
    const ConfigMap& overrides, const BrokerConfigLayers& broker, const std::optional<std::vector<std::string>>& keys,
    bool include_synonyms) {
  using Result = protocol::DescribeConfigsResponse::DescribeConfigsResourceResult;
  using Synonym = protocol::DescribeConfigsResponse::DescribeConfigsSynonym;
  const bool all = !keys || keys->empty();
  std::vector<Result> out;
  for (const auto& def : kDefs) {
    if (!reported(def, overrides)) continue;
    if (!all && std::ranges::find(*keys, def.name) == keys->end()) continue;
    const std::string value = normalise(def, resolve(def, overrides, broker).value);
    std::vector<Synonym> synonyms;
    if (overrides.contains(def.name)) {
      synonyms.push_back(synonym(def.name, value, ConfigSource::dynamic_topic));
    }
    if (!def.synonyms.empty()) {
      // Every broker synonym set in each layer, then Kafka drops those listed before the first
      // entry for the primary synonym.
      std::vector<Synonym> listed;
      const std::pair<const ConfigMap*, ConfigSource> layers[] = {
          {broker.dynamic_node, ConfigSource::dynamic_broker},
          {broker.dynamic_cluster, ConfigSource::dynamic_default_broker},
          {broker.static_node, ConfigSource::static_broker},
      };
      for (const auto& [map, source] : layers) {
        for (const auto& syn : def.synonyms) {
          const auto& m = or_empty(map);
          if (auto it = m.find(syn.name); it != m.end()) {
            listed.push_back(synonym(syn.name, it->second, source));
          }
        }
      }
      for (const auto& syn : def.synonyms) {
        if (syn.default_value) {
          listed.push_back(synonym(syn.name, std::string(*syn.default_value), ConfigSource::default_config));
        }
      }
      const std::string_view primary = def.synonyms.front().name;
      auto first = std::ranges::find(listed, primary, &Synonym::name);
      synonyms.insert(synonyms.end(), first, listed.end());
    }
    Result r;
    r.name = std::string(def.name);
    r.value = value;
    r.read_only = false;
    r.config_source =
        synonyms.empty() ? static_cast<std::int8_t>(ConfigSource::default_config) : synonyms.front().source;
    r.is_sensitive = false;
    if (include_synonyms) r.synonyms = std::move(synonyms);
    r.config_type = static_cast<std::int8_t>(def.type);
    r.documentation = std::nullopt;
    out.push_back(std::move(r));
  }
  std::ranges::sort(out, {}, &Result::name);
  return out;
}

TopicConfig resolve_topic_config(const ConfigMap& overrides, const BrokerConfigLayers& broker) {
  auto get = [&](std::string_view name) {
    const TopicConfigDef* def = find_topic_config(name);
    WEIR_ASSERT(def != nullptr, "no topic config {}", name);
    return effective_parsed(*def, overrides, broker);
  };
  auto i64 = [&](std::string_view name) { return std::get<std::int64_t>(get(name)); };
  auto i32 = [&](std::string_view name) { return static_cast<std::int32_t>(i64(name)); };
  auto flag = [&](std::string_view name) { return std::get<bool>(get(name)); };

  TopicConfig c;
  const auto policy = std::get<std::vector<std::string>>(get("cleanup.policy"));
  c.cleanup_delete = std::ranges::find(policy, "delete") != policy.end();
  c.cleanup_compact = std::ranges::find(policy, "compact") != policy.end();
  c.compression_type = std::get<std::string>(get("compression.type"));
  c.compression_gzip_level = i32("compression.gzip.level");
  c.compression_lz4_level = i32("compression.lz4.level");
  c.compression_zstd_level = i32("compression.zstd.level");
  c.delete_retention_ms = i64("delete.retention.ms");
  c.file_delete_delay_ms = i64("file.delete.delay.ms");
  c.flush_messages = i64("flush.messages");
  c.flush_ms = i64("flush.ms");
  c.index_interval_bytes = i32("index.interval.bytes");
  c.max_compaction_lag_ms = i64("max.compaction.lag.ms");
  c.max_message_bytes = i32("max.message.bytes");
  c.message_timestamp_log_append_time = std::get<std::string>(get("message.timestamp.type")) == "LogAppendTime";
  c.message_timestamp_before_max_ms = i64("message.timestamp.before.max.ms");
  c.message_timestamp_after_max_ms = i64("message.timestamp.after.max.ms");
  c.min_cleanable_dirty_ratio = std::get<double>(get("min.cleanable.dirty.ratio"));
  c.min_compaction_lag_ms = i64("min.compaction.lag.ms");
  c.min_insync_replicas = i32("min.insync.replicas");
  c.preallocate = flag("preallocate");
  c.retention_bytes = i64("retention.bytes");
  c.retention_ms = i64("retention.ms");
  c.segment_bytes = i32("segment.bytes");
  c.segment_index_bytes = i32("segment.index.bytes");
  c.segment_jitter_ms = i64("segment.jitter.ms");
  c.segment_ms = i64("segment.ms");
  c.unclean_leader_election_enable = flag("unclean.leader.election.enable");
  return c;
}

namespace java {

std::string_view trim(std::string_view s) noexcept {
  while (!s.empty() && static_cast<unsigned char>(s.front()) <= ' ') s.remove_prefix(1);
  while (!s.empty() && static_cast<unsigned char>(s.back()) <= ' ') s.remove_suffix(1);
  return s;
}

std::optional<std::int64_t> parse_integer(std::string_view s, int bits) noexcept {
  WEIR_ASSERT(bits == 16 || bits == 32 || bits == 64);
  bool negative = false;
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return std::nullopt;
  // Accumulate negatively so that the minimum value parses.
  const std::int64_t min = bits == 64   ? std::numeric_limits<std::int64_t>::min()
                           : bits == 32 ? std::numeric_limits<std::int32_t>::min()
                                        : std::numeric_limits<std::int16_t>::min();
  std::int64_t acc = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    const int digit = c - '0';
    if (acc < (min + digit) / 10) return std::nullopt;
    acc = acc * 10 - digit;
  }
  if (negative) return acc;
  if (acc == min) return std::nullopt;
  return -acc;
}

std::optional<double> parse_double(std::string_view s) noexcept {
  s = trim(s);
  bool negative = false;
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  double value = 0;
  if (s == "NaN") {
    value = std::numeric_limits<double>::quiet_NaN();
  } else if (s == "Infinity") {
    value = std::numeric_limits<double>::infinity();
  } else {
    if (!s.empty() && std::string_view("fFdD").find(s.back()) != std::string_view::npos) {
      s.remove_suffix(1);
    }
    // digits [. digits] | . digits, then an optional exponent.
    std::size_t i = 0, int_digits = 0, frac_digits = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++int_digits;
    if (i < s.size() && s[i] == '.') {
      ++i;
      while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++frac_digits;
    }
    if (int_digits + frac_digits == 0) return std::nullopt;
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
      ++i;
      if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
      std::size_t exp_digits = 0;
      while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++exp_digits;
      if (exp_digits == 0) return std::nullopt;
    }
    if (i != s.size()) return std::nullopt;
    const std::string text(s);  // from_chars wants a leading digit; "." forms are fine
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec == std::errc::result_out_of_range) {
      // Java rounds to infinity or zero rather than failing.
      const auto e = text.find_first_of("eE");
      const bool big = e != std::string::npos && text[e + 1] != '-';
      value = big ? std::numeric_limits<double>::infinity() : 0.0;
    } else if (ec != std::errc() || ptr != text.data() + text.size()) {
      return std::nullopt;
    }
  }
  return negative ? -value : value;
}

std::string double_to_string(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  if (d == 0) return std::signbit(d) ? "-0.0" : "0.0";
  // Shortest round-trip digits, then Java's layout.
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, std::fabs(d), std::chars_format::scientific);
  const std::string_view sci(buf, static_cast<std::size_t>(res.ptr - buf));
  const auto e = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e)) {
    if (c != '.') digits += c;
  }
  int exponent = 0;
  std::from_chars(sci.data() + e + 1 + (sci[e + 1] == '+'), sci.data() + sci.size(), exponent);
  std::string out = d < 0 ? "-" : "";
  const double a = std::fabs(d);
  if (a >= 1e-3 && a < 1e7) {
    if (exponent >= 0) {
      const auto int_len = static_cast<std::size_t>(exponent) + 1;
      if (digits.size() < int_len) digits.append(int_len - digits.size(), '0');
      std::string frac = digits.substr(int_len);
      out += digits.substr(0, int_len) + "." + (frac.empty() ? "0" : frac);
    } else {
      out += "0." + std::string(static_cast<std::size_t>(-exponent - 1), '0') + digits;
    }
  } else {
    std::string frac = digits.substr(1);
    out += digits.substr(0, 1) + "." + (frac.empty() ? "0" : frac) + "E" + std::to_string(exponent);
  }
  return out;
}

std::vector<std::string> split_list(std::string_view s) {
  std::vector<std::string> out;
  if (s.empty()) return out;
  auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; };
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = s.find(',', start);
    std::string_view item = s.substr(start, comma == std::string_view::npos ? s.npos : comma - start);
    while (!item.empty() && is_space(item.front())) item.remove_prefix(1);
    while (!item.empty() && is_space(item.back())) item.remove_suffix(1);
    out.emplace_back(item);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace java
}  // namespace weir::metadata
