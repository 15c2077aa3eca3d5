// `weir serve`: the command-line face of the broker; the broker itself is built in src/server.
#pragma once

#include <CLI/CLI.hpp>

namespace weir::cli {

// Adds the `serve` subcommand to `app`; when parsed it runs the broker, and `exit_code` receives
// the process's exit status.
void add_serve_command(CLI::App& app, int& exit_code);

}  // namespace weir::cli
