#include "metadata/group_configs.h"

#include <fmt/format.h>

#include <algorithm>
#include <regex>
#include <string_view>
#include <variant>

#include "base/assert.h"
#include "config/java.h"

namespace weir::metadata {
namespace {

using config::Importance;
using config::KeyDef;
using config::Type;

// ShareGroupAutoOffsetResetStrategy: "latest", "earliest" or "by_duration:" and a non-negative
// ISO-8601 duration as java.time.Duration.parse reads it (PnDTnHnMn.nS).
bool valid_iso_duration(std::string_view text) {
  static const std::regex kDuration(
      R"(([-+]?)P(?:([-+]?[0-9]+)D)?(T(?:([-+]?[0-9]+)H)?(?:([-+]?[0-9]+)M)?(?:([-+]?[0-9]+)(?:[.,]([0-9]{0,9}))?S)?)?)",
      std::regex::icase);
  std::match_results<std::string_view::const_iterator> m;
  if (!std::regex_match(text.begin(), text.end(), m, kDuration)) return false;
  // Java needs a day or a time part, and a 'T' must be followed by a time.
  if (!m[2].matched && !m[3].matched) return false;
  if (m[3].matched && !m[4].matched && !m[5].matched && !m[6].matched) return false;
  const auto num = [&](int i) -> long double {
    if (!m[i].matched) return 0;
    auto v = config::java::parse_integer(std::string_view(&*m[i].first, m[i].length()), 64);
    return v ? static_cast<long double>(*v) : 0;
  };
  long double seconds = num(2) * 86400 + num(4) * 3600 + num(5) * 60 + num(6);
  if (m[7].matched && m[7].length() > 0) {
    long double frac = std::stold("0." + m[7].str());
    const bool negative_seconds = m[6].matched && m[6].str().starts_with('-');
    seconds += negative_seconds ? -frac : frac;
  }
  if (m[1].matched && m[1].str() == "-") seconds = -seconds;
  return seconds >= 0;
}

std::optional<std::string> check_share_auto_offset_reset(std::string_view name, const config::Value& value) {
  const auto& s = std::get<std::string>(value);
  constexpr std::string_view kByDuration = "by_duration:";
  if (s == "latest" || s == "earliest") return std::nullopt;
  if (s.starts_with(kByDuration) && valid_iso_duration(std::string_view(s).substr(kByDuration.size()))) {
    return std::nullopt;
  }
  return fmt::format(
      "Invalid value `{}` for configuration {}. The value must be either 'earliest', 'latest' or of the format "
      "'by_duration:<PnDTnHnMn.nS>'.",
      s, name);
}

constexpr std::string_view kIsolationLevels[] = {"read_committed", "read_uncommitted"};

// Kafka 4.3.1's GroupConfig, in its definition order.
constexpr KeyDef kDefs[] = {
    {"consumer.session.timeout.ms", Type::int32, "45000", config::at_least(1), Importance::medium,
     "How long a consumer group member may go without a heartbeat before it is removed."},
    {"consumer.heartbeat.interval.ms", Type::int32, "5000", config::at_least(1), Importance::medium,
     "How often consumer group members are told to heartbeat."},
    {"consumer.assignment.interval.ms", Type::int32, "1000", config::at_least(0), Importance::medium,
     "The least time between two target assignments of a consumer group."},
    {"share.session.timeout.ms", Type::int32, "45000", config::at_least(1), Importance::medium,
     "How long a share group member may go without a heartbeat before it is removed."},
    {"share.heartbeat.interval.ms", Type::int32, "5000", config::at_least(1), Importance::medium,
     "How often share group members are told to heartbeat."},
    {"share.record.lock.duration.ms", Type::int32, "30000", config::at_least(1000), Importance::medium,
     "How long a share group member holds the records it acquired."},
    {"share.delivery.count.limit", Type::int32, "5", config::at_least(2), Importance::medium,
     "How many times a share group delivers a record at most."},
    {"share.partition.max.record.locks", Type::int32, "2000", config::at_least(100), Importance::medium,
     "Most records a share-partition keeps locked at once."},
    {"share.auto.offset.reset", Type::string, "latest",
     config::custom(check_share_auto_offset_reset, "[latest, earliest, by_duration:PnDTnHnMn.nS]"), Importance::medium,
     "Where a share-partition starts: earliest, latest, or by_duration:<ISO-8601 duration> before now."},
    {"share.isolation.level", Type::string, "read_uncommitted", config::one_of(kIsolationLevels), Importance::medium,
     "read_committed: a share group delivers only committed transactional records; read_uncommitted: all."},
    {"share.renew.acknowledge.enable", Type::boolean, "true", config::no_check(), Importance::medium,
     "Whether share group members may renew their acquisition locks."},
    {"share.assignment.interval.ms", Type::int32, "1000", config::at_least(0), Importance::medium,
     "The least time between two target assignments of a share group."},
    {"streams.session.timeout.ms", Type::int32, "45000", config::at_least(1), Importance::medium,
     "How long a streams group member may go without a heartbeat before it is removed."},
    {"streams.heartbeat.interval.ms", Type::int32, "5000", config::at_least(1), Importance::medium,
     "How often streams group members are told to heartbeat."},
    {"streams.num.standby.replicas", Type::int32, "0", config::at_least(0), Importance::medium,
     "Standby replicas a streams group keeps of each task."},
    {"streams.initial.rebalance.delay.ms", Type::int32, "3000", config::at_least(0), Importance::medium,
     "How long a new streams group waits for more members before its first assignment."},
    {"streams.assignment.interval.ms", Type::int32, "1000", config::at_least(0), Importance::medium,
     "The least time between two target assignments of a streams group."},
};

// The broker keys this file reads, with Kafka 4.3.1's defaults (weir's key table does not have
// the share and streams ones).
struct BrokerKey {
  std::string_view name;
  std::int32_t default_value;
};
constexpr BrokerKey kBrokerKeys[] = {
    {"group.consumer.session.timeout.ms", 45000},
    {"group.consumer.min.session.timeout.ms", 45000},
    {"group.consumer.max.session.timeout.ms", 60000},
    {"group.consumer.heartbeat.interval.ms", 5000},
    {"group.consumer.min.heartbeat.interval.ms", 5000},
    {"group.consumer.max.heartbeat.interval.ms", 15000},
    {"group.consumer.assignment.interval.ms", 1000},
    {"group.consumer.min.assignment.interval.ms", 0},
    {"group.consumer.max.assignment.interval.ms", 15000},
    {"group.share.session.timeout.ms", 45000},
    {"group.share.min.session.timeout.ms", 45000},
    {"group.share.max.session.timeout.ms", 60000},
    {"group.share.heartbeat.interval.ms", 5000},
    {"group.share.min.heartbeat.interval.ms", 5000},
    {"group.share.max.heartbeat.interval.ms", 15000},
    {"group.share.record.lock.duration.ms", 30000},
    {"group.share.min.record.lock.duration.ms", 15000},
    {"group.share.max.record.lock.duration.ms", 60000},
    {"group.share.delivery.count.limit", 5},
    {"group.share.min.delivery.count.limit", 2},
    {"group.share.max.delivery.count.limit", 10},
    {"group.share.partition.max.record.locks", 2000},
    {"group.share.min.partition.max.record.locks", 100},
    {"group.share.max.partition.max.record.locks", 4000},
    {"group.share.assignment.interval.ms", 1000},
    {"group.share.min.assignment.interval.ms", 0},
    {"group.share.max.assignment.interval.ms", 15000},
    {"group.streams.session.timeout.ms", 45000},
    {"group.streams.min.session.timeout.ms", 45000},
    {"group.streams.max.session.timeout.ms", 60000},
    {"group.streams.heartbeat.interval.ms", 5000},
    {"group.streams.min.heartbeat.interval.ms", 5000},
    {"group.streams.max.heartbeat.interval.ms", 15000},
    {"group.streams.num.standby.replicas", 0},
    {"group.streams.max.standby.replicas", 2},
    {"group.streams.initial.rebalance.delay.ms", 3000},
    {"group.streams.assignment.interval.ms", 1000},
    {"group.streams.min.assignment.interval.ms", 0},
    {"group.streams.max.assignment.interval.ms", 15000},
};

const BrokerKey* find_broker_key(std::string_view name) {
  auto it = std::ranges::find(kBrokerKeys, name, &BrokerKey::name);
  return it == std::end(kBrokerKeys) ? nullptr : &*it;
}

// The group keys that the broker's group coordinator config supplies when a group does not set
// them (GroupCoordinatorConfig.extractGroupConfigMap): validated along with the group's own.
constexpr std::string_view kCoordinatorDefaults[] = {
    "consumer.session.timeout.ms",      "consumer.heartbeat.interval.ms",     "share.session.timeout.ms",
    "share.heartbeat.interval.ms",      "share.record.lock.duration.ms",      "share.delivery.count.limit",
    "share.partition.max.record.locks", "streams.session.timeout.ms",         "streams.heartbeat.interval.ms",
    "streams.num.standby.replicas",     "streams.initial.rebalance.delay.ms",
};

// A bound check of GroupConfig.validateValues: the group key, the broker key holding the bound,
// and whether it is a minimum; `only_if_set` checks apply only when the group sets the key.
struct Bound {
  std::string_view key;
  std::string_view broker_key;
  bool minimum;
  bool only_if_set = false;
};
constexpr Bound kBounds[] = {
    {"consumer.heartbeat.interval.ms", "group.consumer.min.heartbeat.interval.ms", true},
    {"consumer.heartbeat.interval.ms", "group.consumer.max.heartbeat.interval.ms", false},
    {"consumer.session.timeout.ms", "group.consumer.min.session.timeout.ms", true},
    {"consumer.session.timeout.ms", "group.consumer.max.session.timeout.ms", false},
    {"consumer.assignment.interval.ms", "group.consumer.min.assignment.interval.ms", true, true},
    {"consumer.assignment.interval.ms", "group.consumer.max.assignment.interval.ms", false, true},
    {"share.heartbeat.interval.ms", "group.share.min.heartbeat.interval.ms", true},
    {"share.heartbeat.interval.ms", "group.share.max.heartbeat.interval.ms", false},
    {"share.session.timeout.ms", "group.share.min.session.timeout.ms", true},
    {"share.session.timeout.ms", "group.share.max.session.timeout.ms", false},
    {"share.record.lock.duration.ms", "group.share.min.record.lock.duration.ms", true},
    {"share.record.lock.duration.ms", "group.share.max.record.lock.duration.ms", false},
    {"share.delivery.count.limit", "group.share.min.delivery.count.limit", true},
    {"share.delivery.count.limit", "group.share.max.delivery.count.limit", false},
    {"share.partition.max.record.locks", "group.share.min.partition.max.record.locks", true},
    {"share.partition.max.record.locks", "group.share.max.partition.max.record.locks", false},
    {"share.assignment.interval.ms", "group.share.min.assignment.interval.ms", true, true},
    {"share.assignment.interval.ms", "group.share.max.assignment.interval.ms", false, true},
    {"streams.heartbeat.interval.ms", "group.streams.min.heartbeat.interval.ms", true},
    {"streams.heartbeat.interval.ms", "group.streams.max.heartbeat.interval.ms", false},
    {"streams.session.timeout.ms", "group.streams.min.session.timeout.ms", true},
    {"streams.session.timeout.ms", "group.streams.max.session.timeout.ms", false},
    {"streams.num.standby.replicas", "group.streams.max.standby.replicas", false},
    {"streams.assignment.interval.ms", "group.streams.min.assignment.interval.ms", true, true},
    {"streams.assignment.interval.ms", "group.streams.max.assignment.interval.ms", false, true},
};

// Session timeouts that must exceed heartbeat intervals.
constexpr std::pair<std::string_view, std::string_view> kSessionOverHeartbeat[] = {
    {"consumer.session.timeout.ms", "consumer.heartbeat.interval.ms"},
    {"share.session.timeout.ms", "share.heartbeat.interval.ms"},
    {"streams.session.timeout.ms", "streams.heartbeat.interval.ms"},
};

const std::string* layer_value(const BrokerConfigLayers& broker, std::string_view key) {
  for (const ConfigMap* m : {broker.dynamic_node, broker.dynamic_cluster, broker.static_node}) {
    if (m == nullptr) continue;
    if (auto it = m->find(key); it != m->end()) return &it->second;
  }
  return nullptr;
}

ApiError invalid(std::string message) { return ApiError{Errc::invalid_config, std::move(message)}; }

std::int32_t as_int(const config::Value& v) { return static_cast<std::int32_t>(std::get<std::int64_t>(v)); }

}  // namespace

std::span<const config::KeyDef> group_config_defs() noexcept { return kDefs; }

const config::KeyDef* find_group_config(std::string_view name) noexcept {
  auto it = std::ranges::find(kDefs, name, &KeyDef::name);
  return it == std::end(kDefs) ? nullptr : &*it;
}

std::optional<std::string_view> group_broker_synonym(std::string_view name) noexcept {
  if (name == "share.auto.offset.reset" || name == "share.isolation.level" ||
      name == "share.renew.acknowledge.enable" || find_group_config(name) == nullptr) {
    return std::nullopt;
  }
  // Every other group key is its broker key without the "group." prefix.
  for (const auto& k : kBrokerKeys) {
    if (k.name.substr(6) == name) return k.name;
  }
  return std::nullopt;
}

std::int32_t group_broker_int(const BrokerConfigLayers& broker, std::string_view key) {
  const BrokerKey* k = find_broker_key(key);
  WEIR_ASSERT(k != nullptr, "not a group broker key: {}", key);
  if (const std::string* raw = layer_value(broker, key)) {
    if (auto v = config::java::parse_integer(config::java::trim(*raw), 32)) return static_cast<std::int32_t>(*v);
  }
  return k->default_value;
}

ApiError validate_group_configs(const ConfigMap& overrides, const BrokerConfigLayers& broker) {
  for (const auto& [name, value] : overrides) {
    if (find_group_config(name) == nullptr) return invalid("Unknown group config name: " + name);
  }
  // Every key parsed in definition order: the group's value, else the coordinator's, else the
  // key's default.
  std::map<std::string_view, config::Value, std::less<>> parsed;
  for (const auto& def : kDefs) {
    Result<config::Value, std::string> v = config::Value{};
    if (auto it = overrides.find(def.name); it != overrides.end()) {
      v = config::parse(def, it->second);
    } else if (std::ranges::find(kCoordinatorDefaults, def.name) != std::end(kCoordinatorDefaults)) {
      v = config::parse(def, std::to_string(group_broker_int(broker, *group_broker_synonym(def.name))));
    } else {
      v = config::parse(def, def.default_value);
    }
    if (!v) return invalid(std::move(v.error()));
    parsed.emplace(def.name, std::move(*v));
  }
  for (const Bound& b : kBounds) {
    if (b.only_if_set && !overrides.contains(b.key)) continue;
    const std::int32_t value = as_int(parsed.at(b.key));
    const std::int32_t bound = group_broker_int(broker, b.broker_key);
    if (b.minimum && value < bound) {
      return invalid(fmt::format("{} must be greater than or equal to {}", b.key, b.broker_key));
    }
    if (!b.minimum && value > bound) {
      return invalid(fmt::format("{} must be less than or equal to {}", b.key, b.broker_key));
    }
  }
  for (const auto& [session, heartbeat] : kSessionOverHeartbeat) {
    if (as_int(parsed.at(session)) <= as_int(parsed.at(heartbeat))) {
      return invalid(fmt::format("{} must be greater than {}", session, heartbeat));
    }
  }
  return ApiError::ok();
}

std::vector<protocol::DescribeConfigsResponse::DescribeConfigsResourceResult> describe_group_configs(
    const ConfigMap& overrides, const BrokerConfigLayers& broker, const std::optional<std::vector<std::string>>& keys,
    bool include_synonyms, bool include_documentation) {
  using Entry = protocol::DescribeConfigsResponse::DescribeConfigsResourceResult;
  using Synonym = protocol::DescribeConfigsResponse::DescribeConfigsSynonym;
  const auto synonym = [](std::string_view name, std::optional<std::string> value, ConfigSource source) {
    Synonym s;
    s.name = std::string(name);
    s.value = std::move(value);
    s.source = static_cast<std::int8_t>(source);
    return s;
  };
  const auto shown = [](const KeyDef& def, std::string_view raw) -> std::optional<std::string> {
    auto v = config::parse_type(def, raw);
    return v ? config::to_string(*v) : std::optional<std::string>(std::string(raw));
  };
  const bool all = !keys || keys->empty();
  std::vector<Entry> out;
  for (const auto& def : kDefs) {
    if (!all && std::ranges::find(*keys, def.name) == keys->end()) continue;
    const auto own = overrides.find(def.name);
    const std::optional<std::string_view> broker_key = group_broker_synonym(def.name);
    std::vector<Synonym> synonyms;
    if (broker_key) {
      const std::pair<const ConfigMap*, ConfigSource> layers[] = {
          {broker.dynamic_node, ConfigSource::dynamic_broker},
          {broker.dynamic_cluster, ConfigSource::dynamic_default_broker},
          {broker.static_node, ConfigSource::static_broker},
      };
      for (const auto& [map, source] : layers) {
        if (map == nullptr) continue;
        if (auto it = map->find(*broker_key); it != map->end())
          synonyms.push_back(synonym(*broker_key, it->second, source));
      }
      synonyms.push_back(synonym(*broker_key, std::to_string(find_broker_key(*broker_key)->default_value),
                                 ConfigSource::default_config));
    } else {
      synonyms.push_back(synonym(def.name, std::string(def.default_value), ConfigSource::default_config));
    }
    Entry e;
    e.name = std::string(def.name);
    if (own != overrides.end()) {
      e.value = shown(def, own->second);
      synonyms.insert(synonyms.begin(), synonym(def.name, e.value, ConfigSource::group));
    } else if (broker_key) {
      e.value = std::to_string(group_broker_int(broker, *broker_key));
    } else {
      e.value = shown(def, def.default_value);
    }
    e.config_source = synonyms.front().source;
    e.read_only = false;
    e.is_sensitive = false;
    if (include_synonyms) e.synonyms = std::move(synonyms);
    e.config_type = static_cast<std::int8_t>(def.type);
    e.documentation = include_documentation ? std::optional<std::string>(def.doc) : std::nullopt;
    out.push_back(std::move(e));
  }
  std::ranges::sort(out, {}, &Entry::name);
  return out;
}

ConsumerGroupValues consumer_group_values(const ConfigMap& overrides, const BrokerConfigLayers& broker) {
  // Kafka's GroupConfig.evaluate: a value outside the broker's bounds is capped to them.
  const auto capped = [&](std::string_view key, std::string_view min_key,
                          std::string_view max_key) -> std::optional<std::int32_t> {
    auto it = overrides.find(key);
    if (it == overrides.end()) return std::nullopt;
    auto v = config::java::parse_integer(config::java::trim(it->second), 32);
    if (!v) return std::nullopt;  // validated before it was stored; never here
    const std::int32_t min = group_broker_int(broker, min_key);
    const std::int32_t max = group_broker_int(broker, max_key);
    return static_cast<std::int32_t>(std::clamp<std::int64_t>(*v, min, std::max(min, max)));
  };
  ConsumerGroupValues out;
  out.session_timeout_ms = capped("consumer.session.timeout.ms", "group.consumer.min.session.timeout.ms",
                                  "group.consumer.max.session.timeout.ms");
  out.heartbeat_interval_ms = capped("consumer.heartbeat.interval.ms", "group.consumer.min.heartbeat.interval.ms",
                                     "group.consumer.max.heartbeat.interval.ms");
  out.assignment_interval_ms = capped("consumer.assignment.interval.ms", "group.consumer.min.assignment.interval.ms",
                                      "group.consumer.max.assignment.interval.ms");
  return out;
}

}  // namespace weir::metadata
