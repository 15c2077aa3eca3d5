// `weir cluster info|api-versions`: the cluster's id, controller and brokers, and the API
// versions each broker offers beside the ones the weir client uses.
#pragma once

#include <CLI/CLI.hpp>

namespace weir::cli {

void add_cluster_command(CLI::App& app, int& exit_code);

}  // namespace weir::cli
