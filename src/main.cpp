// weir: a Kafka-compatible event streaming broker. One binary; see `weir --help`.
#include <cstdio>

#include <CLI/CLI.hpp>

#include "cli/client_command.h"
#include "cli/cluster.h"
#include "cli/config_check.h"
#include "cli/consume.h"
#include "cli/format.h"
#include "cli/group.h"
#include "cli/produce.h"
#include "cli/serve.h"
#include "cli/topic.h"
#include "cli/txn.h"

int main(int argc, char** argv) {
  CLI::App app{"weir: an event streaming broker that speaks the Apache Kafka protocol"};
  app.require_subcommand(1);

  int exit_code = 0;
  weir::cli::add_serve_command(app, exit_code);
  weir::cli::add_config_command(app, exit_code);
  weir::cli::add_format_command(app, exit_code);
  weir::cli::add_topic_command(app, exit_code);
  weir::cli::add_cluster_command(app, exit_code);
  weir::cli::add_produce_command(app, exit_code);
  weir::cli::add_consume_command(app, exit_code);
  weir::cli::add_group_command(app, exit_code);
  weir::cli::add_txn_command(app, exit_code);
  app.add_subcommand("version", "Print the version")->callback([]() { std::puts("weir 0.1.0"); });

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help prints and succeeds; any other parse error is bad usage: exit status 2.
    return app.exit(e) == 0 ? 0 : weir::cli::kExitUsage;
  }
  return exit_code;
}
