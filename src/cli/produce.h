// `weir produce TOPIC`: records from stdin or a file, one per line, idempotent by default; keys
// with --key-separator go where Kafka's default partitioner puts them (murmur2).
#pragma once

#include <CLI/CLI.hpp>

namespace weir::cli {

void add_produce_command(CLI::App& app, int& exit_code);

}  // namespace weir::cli
