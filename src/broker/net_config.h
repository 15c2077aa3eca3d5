// Connection and request-memory settings of a Config (handed to net::ServerOptions by the
// composition root). Parsed and validated by Config::finalize() as well, so a bad value stops
// the start-up there.
#pragma once

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "broker/config.h"

namespace weir::broker {

struct NetLimits {
  std::optional<std::int32_t> max_connections;  // unset: derived from RLIMIT_NOFILE at start-up
  std::int32_t max_connections_per_ip = 2147483647;
  std::vector<std::pair<std::string, std::int32_t>> max_connections_per_ip_overrides;
  std::int32_t max_connection_creation_rate = 2147483647;
  std::int64_t connections_max_idle_ms = 600000;
  std::int64_t partial_request_timeout_ms = 30000;  // weir.partial.request.timeout.ms
  std::int64_t queued_max_request_bytes = 0;        // effective value (the -1 default resolved)
};

std::expected<NetLimits, std::string> net_limits(const Config& config);

}  // namespace weir::broker
