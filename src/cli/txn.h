// `weir txn list|describe|producers|find-hanging|abort`: the transactional state of producers, as
// kafka-transactions shows it (its columns and layout), and the abort of a hanging transaction.
#pragma once

#include <CLI/CLI.hpp>

namespace weir::cli {

void add_txn_command(CLI::App& app, int& exit_code);

}  // namespace weir::cli
