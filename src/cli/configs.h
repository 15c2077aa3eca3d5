// Config resources (topics, brokers) as the CLI reads and changes them: DescribeConfigs and
// IncrementalAlterConfigs, with Kafka's names for where a value comes from.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "cli/client_command.h"
#include "protocol/gen/describe_configs_response.h"

namespace weir::cli {

inline constexpr std::int8_t kTopicResource = 2;
inline constexpr std::int8_t kBrokerResource = 4;
inline constexpr std::int8_t kDefaultConfigSource = 5;

// Kafka's ConfigSource names: DYNAMIC_TOPIC_CONFIG, STATIC_BROKER_CONFIG, DEFAULT_CONFIG, ...
[[nodiscard]] std::string_view config_source_name(std::int8_t source);

using ConfigEntry = protocol::DescribeConfigsResponse::DescribeConfigsResourceResult;

struct ResourceConfigs {
  std::int16_t error_code = 0;
  std::optional<std::string> error_message;
  std::vector<ConfigEntry> entries;  // sorted by name
};

// The configs of resources of one type, asked of `target`; with `all` false, only those not at
// their default (source DEFAULT_CONFIG left out).
boost::asio::awaitable<Result<std::map<std::string, ResourceConfigs>, client::Error>> describe_configs(
    Session& s, std::int8_t type, std::vector<std::string> names, client::Target target, bool all);

struct ConfigChange {
  std::vector<std::string> set;     // key=value
  std::vector<std::string> remove;  // keys back to their default
};

struct ChangeOutcome {
  std::int16_t error_code = 0;
  std::optional<std::string> error_message;
};

// Applies the change to one resource (IncrementalAlterConfigs SET / DELETE). A malformed
// key=value is an invalid_argument error.
boost::asio::awaitable<Result<ChangeOutcome, client::Error>> change_configs(Session& s, std::int8_t type,
                                                                            std::string name, ConfigChange change,
                                                                            client::Target target);

// One config entry as JSON members of an open object: name, value (null when sensitive), source,
// sensitive.
void config_json(Json& j, const ConfigEntry& c);
// "name=value (SOURCE)".
[[nodiscard]] std::string config_text(const ConfigEntry& c);

}  // namespace weir::cli
