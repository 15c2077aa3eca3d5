#include "cli/configs.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "protocol/gen/describe_configs_request.h"
#include "protocol/gen/incremental_alter_configs_request.h"

namespace weir::cli {

namespace asio = boost::asio;

std::string_view config_source_name(std::int8_t source) {
  switch (source) {
    case 1:
      return "DYNAMIC_TOPIC_CONFIG";
    case 2:
      return "DYNAMIC_BROKER_CONFIG";
    case 3:
      return "DYNAMIC_DEFAULT_BROKER_CONFIG";
    case 4:
      return "STATIC_BROKER_CONFIG";
    case kDefaultConfigSource:
      return "DEFAULT_CONFIG";
    case 6:
      return "DYNAMIC_BROKER_LOGGER_CONFIG";
    case 7:
      return "CLIENT_METRICS_CONFIG";
    case 8:
      return "GROUP_CONFIG";
    default:
      return "UNKNOWN";
  }
}

asio::awaitable<Result<std::map<std::string, ResourceConfigs>, client::Error>> describe_configs(
    Session& s, std::int8_t type, std::vector<std::string> names, client::Target target, bool all) {
  std::map<std::string, ResourceConfigs> out;
  if (names.empty()) co_return out;
  protocol::DescribeConfigsRequest req;
  for (auto& n : names) {
    auto& r = req.resources.emplace_back();
    r.resource_type = type;
    r.resource_name = std::move(n);
    r.configuration_keys = std::nullopt;  // every key
  }
  auto resp = co_await s.send(std::move(target), std::move(req));
  if (!resp) co_return unexpected(std::move(resp.error()));
  for (auto& r : resp->results) {
    ResourceConfigs& rc = out[r.resource_name];
    rc.error_code = r.error_code;
    rc.error_message = std::move(r.error_message);
    for (auto& c : r.configs) {
      if (all || c.config_source != kDefaultConfigSource) rc.entries.push_back(std::move(c));
    }
    std::ranges::sort(rc.entries, {}, &ConfigEntry::name);
  }
  co_return out;
}

asio::awaitable<Result<ChangeOutcome, client::Error>> change_configs(Session& s, std::int8_t type, std::string name,
                                                                     ConfigChange change, client::Target target) {
  protocol::IncrementalAlterConfigsRequest req;
  auto& res = req.resources.emplace_back();
  res.resource_type = type;
  res.resource_name = std::move(name);
  for (const auto& c : change.set) {
    const auto eq = c.find('=');
    if (eq == std::string::npos || eq == 0) {
      co_return unexpected(client::Error::invalid_argument(fmt::format("--set {}: expected key=value", c)));
    }
    auto& a = res.configs.emplace_back();
    a.name = c.substr(0, eq);
    a.config_operation = 0;  // SET
    a.value = c.substr(eq + 1);
  }
  for (const auto& k : change.remove) {
    auto& a = res.configs.emplace_back();
    a.name = k;
    a.config_operation = 1;  // DELETE
    a.value = std::nullopt;
  }
  auto resp = co_await s.send(std::move(target), std::move(req));
  if (!resp) co_return unexpected(std::move(resp.error()));
  ChangeOutcome outcome;
  for (auto& r : resp->responses) {
    if (r.error_code != client::codes::kNone && outcome.error_code == client::codes::kNone) {
      outcome.error_code = r.error_code;
      outcome.error_message = std::move(r.error_message);
    }
  }
  co_return outcome;
}

void config_json(Json& j, const ConfigEntry& c) {
  j.key("name").value(c.name).key("value");
  if (c.is_sensitive || !c.value) {
    j.null();
  } else {
    j.value(*c.value);
  }
  j.key("source").value(config_source_name(c.config_source)).key("sensitive").value(c.is_sensitive);
}

std::string config_text(const ConfigEntry& c) {
  return fmt::format("{}={} ({})", c.name, c.is_sensitive ? "(sensitive)" : c.value.value_or("null"),
                     config_source_name(c.config_source));
}

}  // namespace weir::cli
