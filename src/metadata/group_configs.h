// Group configs (KIP-848, the GROUP config resource, type 32): the keys Kafka 4.3.1 lets a user
// set per group (kafka-configs --entity-type groups), their validation against the broker's
// group.* bounds, their DescribeConfigs entries, and the consumer-protocol values in force.
//
// A group's config is layered, first match wins (Kafka's ConfigHelper):
//   1. the group's own overrides      ConfigRecord(GROUP, group id)  GROUP_CONFIG (8)
//   2. the broker synonym (group.consumer.session.timeout.ms for consumer.session.timeout.ms)
//      set for the node / cluster-wide / in server.properties, else its default
//   3. the group key's default, for the three share keys that have no broker synonym
//
// Validation is Kafka's GroupConfig.validate on the group's complete overrides after the change:
// unknown names, then every value (the broker's values standing in for the keys not set) parsed
// in definition order, then the bounds (group.consumer.min.session.timeout.ms, ...) and
// session > heartbeat. Every failure is INVALID_CONFIG with Kafka's message. The values in
// force are capped to the bounds again (the broker's bounds may have moved since), as Kafka's
// GroupConfigManager does.
//
// weir runs consumer groups only: the share.* and streams.* keys are validated and stored as
// Kafka does (Kafka accepts them whether or not those group types are enabled) but act on
// nothing. Their bounds are the broker's group.share.* / group.streams.* keys where
// server.properties sets them, else Kafka's defaults.
//
// Thread safety: the table is immutable; all functions are pure.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "config/config_def.h"
#include "metadata/errc.h"
#include "metadata/topic_configs.h"
#include "protocol/gen/describe_configs_response.h"

namespace weir::metadata {

// Every group key, in Kafka's definition order.
[[nodiscard]] std::span<const config::KeyDef> group_config_defs() noexcept;
[[nodiscard]] const config::KeyDef* find_group_config(std::string_view name) noexcept;

// The broker key whose value a group key takes when the group does not set it
// (group.consumer.session.timeout.ms for consumer.session.timeout.ms); nullopt for the keys
// that have none (share.auto.offset.reset, share.isolation.level, share.renew.acknowledge.enable).
[[nodiscard]] std::optional<std::string_view> group_broker_synonym(std::string_view name) noexcept;

// An INT broker key as the broker has it: this node's dynamic value, the cluster-wide one, the
// static one, else Kafka 4.3.1's default. Only for the group.* keys this file reads.
[[nodiscard]] std::int32_t group_broker_int(const BrokerConfigLayers& broker, std::string_view key);

// Checks a group's complete overrides (existing ones with the change applied), as Kafka's
// GroupConfig.validate: INVALID_CONFIG with Kafka's message, or ok.
[[nodiscard]] ApiError validate_group_configs(const ConfigMap& overrides, const BrokerConfigLayers& broker);

// DescribeConfigs entries of a group: every group key, the value in force as Java prints it,
// the source (GROUP_CONFIG where the group sets it, else the first layer of its broker synonym),
// synonyms and documentation when asked. `keys` null or empty means all keys. Sorted by name
// (Kafka's order is a hash map's).
[[nodiscard]] std::vector<protocol::DescribeConfigsResponse::DescribeConfigsResourceResult> describe_group_configs(
    const ConfigMap& overrides, const BrokerConfigLayers& broker, const std::optional<std::vector<std::string>>& keys,
    bool include_synonyms, bool include_documentation);

// The consumer-protocol values a group sets, capped to the broker's min/max bounds; unset where
// the group does not set the key (the broker's value applies).
struct ConsumerGroupValues {
  std::optional<std::int32_t> session_timeout_ms;      // consumer.session.timeout.ms
  std::optional<std::int32_t> heartbeat_interval_ms;   // consumer.heartbeat.interval.ms
  std::optional<std::int32_t> assignment_interval_ms;  // consumer.assignment.interval.ms
};
[[nodiscard]] ConsumerGroupValues consumer_group_values(const ConfigMap& overrides, const BrokerConfigLayers& broker);

}  // namespace weir::metadata
