// weir: a Kafka-compatible event streaming broker. One binary; see `weir --help`.
#include <CLI/CLI.hpp>

#include "cli/config_check.h"
#include "cli/serve.h"

int main(int argc, char** argv) {
  CLI::App app{"weir: an event streaming broker that speaks the Apache Kafka protocol"};
  app.require_subcommand(1);

  weir::cli::ServeOptions serve_opts;
  auto* serve = app.add_subcommand("serve", "Run the broker");
  serve->add_option("--config", serve_opts.config_file, "A server.properties file (Kafka key names)");
  serve->add_option("--set", serve_opts.overrides, "Override a config key: --set key=value (repeatable)");
  serve->add_flag("--dev", serve_opts.dev, "Development mode: trade fsync for speed");
  serve->add_option("--log-level", serve_opts.log_level, "trace, debug, info, warn, error");

  weir::cli::ConfigCheckOptions check_opts;
  auto* config_cmd = app.add_subcommand("config", "Broker configuration tools");
  config_cmd->require_subcommand(1);
  auto* check = config_cmd->add_subcommand("check", "Validate a broker configuration as `weir serve` does at start-up");
  check->add_option("--config", check_opts.config_file, "A server.properties file (Kafka key names)");
  check->add_option("--set", check_opts.overrides, "Override a config key: --set key=value (repeatable)");
  check->add_option("--rows", check_opts.rows_file,
                    "Check each \"key<TAB>value\" row of this file on its own; print a verdict per row");

  auto* defs = config_cmd->add_subcommand("defs", "Print every broker key weir knows: type, default, validator, mode");
  std::vector<std::string> property_files;
  auto* read_props =
      config_cmd->add_subcommand("read-properties", "Print what the .properties reader makes of files (hex)");
  read_props->add_option("files", property_files, "Files to read")->required();

  app.add_subcommand("version", "Print the version")->callback([]() { std::puts("weir 0.1.0"); });

  CLI11_PARSE(app, argc, argv);
  if (serve->parsed()) return weir::cli::serve(serve_opts);
  if (check->parsed()) return weir::cli::config_check(check_opts);
  if (defs->parsed()) return weir::cli::config_defs();
  if (read_props->parsed()) return weir::cli::config_read_properties(property_files);
  return 0;
}
