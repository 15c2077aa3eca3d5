#include "metadata/topic_configs.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <variant>

#include "base/assert.h"
#include "base/result.h"
#include "config/config_def.h"

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
    {"leader.replication.throttled.replicas", T::list, "", Check::throttled_replicas, std::nullopt, std::nullopt, {}, {}},
    {"follower.replication.throttled.replicas", T::list, "", Check::throttled_replicas, std::nullopt, std::nullopt, {}, {}},
    {"remote.storage.enable", T::boolean, "false", Check::none, std::nullopt, std::nullopt, {}, {}, false},
    {"local.retention.ms", T::int64, "-2", Check::range, -2, std::nullopt, {}, kLocalRetentionMs, false},
    {"local.retention.bytes", T::int64, "-2", Check::range, -2, std::nullopt, {}, kLocalRetentionBytes, false},
    {"remote.log.copy.disable", T::boolean, "false", Check::none, std::nullopt, std::nullopt, {}, {}, false},
    {"remote.log.delete.on.disable", T::boolean, "false", Check::none, std::nullopt, std::nullopt, {}, {}, false},
};

// A value parsed by its key's type (src/config's engine; never null here: every topic key has a
// default).
using Parsed = config::Value;

ApiError config_error(std::string message) { return ApiError{Errc::invalid_config, std::move(message)}; }

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

std::optional<std::string> gzip_level(std::string_view, const Parsed& value) {
  const std::int64_t n = std::get<std::int64_t>(value);
  if (n == -1 || (n >= 1 && n <= 9)) return std::nullopt;
  return std::string("Value must be between 1 and 9 or equal to -1");
}

std::optional<std::string> throttled_replicas(std::string_view name, const Parsed& value) {
  const auto& items = std::get<std::vector<std::string>>(value);
  std::string joined;
  for (const auto& item : items) joined += java::trim(item);
  if (joined == "*" || std::ranges::all_of(items, is_throttle_entry)) return std::nullopt;
  return std::string(config::kWholeMessage) +
         config::invalid_value(java_list(items), name,
                               fmt::format("{} must be the literal '*' or a list of replicas in the following format: "
                                           "[partitionId]:[brokerId],[partitionId]:[brokerId],...",
                                           name));
}

// The engine's definition of a topic key.
config::KeyDef key_def(const TopicConfigDef& def) {
  config::KeyDef k;
  k.name = def.name;
  k.type = static_cast<config::Type>(def.type);
  k.default_value = def.default_value;
  switch (def.check) {
    case Check::none:
      break;
    case Check::range:
      k.validator.kind = config::Validator::Kind::range;
      k.validator.min = def.min;
      k.validator.max = def.max;
      break;
    case Check::gzip_level:
      k.validator = config::custom(gzip_level, "[1,...,9] or -1");
      break;
    case Check::one_of:
      k.validator = config::one_of(def.allowed);
      break;
    case Check::list_of:
      k.validator = config::list_of(def.allowed);
      break;
    case Check::throttled_replicas:
      k.validator = config::custom(throttled_replicas, "[partitionId]:[brokerId],[partitionId]:[brokerId],...");
      break;
  }
  return k;
}

// ConfigDef.parseType: the error carries the raw value.
Result<Parsed, ApiError> parse_value(const TopicConfigDef& def, std::string_view raw) {
  auto v = config::parse_type(key_def(def), raw);
  if (!v) return unexpected(config_error(std::move(v.error())));
  return std::move(*v);
}

// The key's validator, applied to the parsed value (messages show the parsed value).
ApiError check_value(const TopicConfigDef& def, const Parsed& value) {
  if (auto err = config::validate(key_def(def), value)) return config_error(std::move(*err));
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
  return config::to_string(*parsed).value_or(std::string(raw));
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

}  // namespace weir::metadata
