// `weir topic list|create|describe|delete|add-partitions|alter-config`: topic administration
// through src/client, against weir or any Kafka broker.
#pragma once

#include <CLI/CLI.hpp>

namespace weir::cli {

void add_topic_command(CLI::App& app, int& exit_code);

}  // namespace weir::cli
