// `weir group list|describe`: consumer groups and, per partition, the committed offset, log end
// offset, lag and owner, printed as kafka-consumer-groups --describe prints them.
#pragma once

#include <CLI/CLI.hpp>

namespace weir::cli {

void add_group_command(CLI::App& app, int& exit_code);

}  // namespace weir::cli
