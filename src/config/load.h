// The start-up path of `weir serve` and `weir config check`: the properties file, then the
// overrides in order, then finalize() (every key parsed and validated, Kafka's cross-key rules).
#pragma once

#include <string>
#include <vector>

#include "base/result.h"
#include "config/broker_config.h"

namespace weir::config {

// config_file empty: no file. overrides: "key=value" each (`--set`).
Result<BrokerConfig, std::string> load_broker_config(const std::string& config_file,
                                                     const std::vector<std::string>& overrides);

}  // namespace weir::config
