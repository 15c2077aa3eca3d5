// `weir consume TOPIC`: prints records from chosen positions (beginning, end, an offset, a time),
// read_uncommitted or read_committed, until Ctrl+C, a record count or an idle timeout.
#pragma once

#include <CLI/CLI.hpp>

namespace weir::cli {

void add_consume_command(CLI::App& app, int& exit_code);

}  // namespace weir::cli
