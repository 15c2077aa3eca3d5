// weir: a Kafka-compatible event streaming broker. One binary; see `weir --help`.
#include <cstdio>

#include <CLI/CLI.hpp>

#include "cli/config_check.h"
#include "cli/format.h"
#include "cli/serve.h"

int main(int argc, char** argv) {
  CLI::App app{"weir: an event streaming broker that speaks the Apache Kafka protocol"};
  app.require_subcommand(1);

  int exit_code = 0;
  weir::cli::add_serve_command(app, exit_code);
  weir::cli::add_config_command(app, exit_code);
  weir::cli::add_format_command(app, exit_code);
  app.add_subcommand("version", "Print the version")->callback([]() { std::puts("weir 0.1.0"); });

  CLI11_PARSE(app, argc, argv);
  return exit_code;
}
