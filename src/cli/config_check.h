// `weir config check`: the start-up validation of `weir serve`, without starting a broker.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace weir::cli {

// Adds `weir config check|defs|read-properties` to `app`; `exit_code` receives the status.
void add_config_command(CLI::App& app, int& exit_code);

struct ConfigCheckOptions {
  std::string config_file;
  std::vector<std::string> overrides;  // key=value
  // A file of "key TAB value" rows: each row is checked on its own, on top of the file and the
  // overrides, and one line is printed per row: "key TAB value TAB ok" or
  // "key TAB value TAB error TAB message" (the format of tests/java/ConfigParity.java check).
  std::string rows_file;
};

// Exit code: 0 if the configuration is valid (with rows_file: if the rows file could be read),
// 1 otherwise, with the error on stderr.
int config_check(const ConfigCheckOptions& options);

// `weir config defs`: one line per registered broker key, in the format of
// tests/java/ConfigParity.java defs (name, type, default, validator, importance, update mode).
int config_defs();

// `weir config read-properties FILE...`: what the .properties reader makes of each file, in the
// format of tests/java/ConfigParity.java props (for the parity test with java.util.Properties).
int config_read_properties(const std::vector<std::string>& files);

}  // namespace weir::cli
