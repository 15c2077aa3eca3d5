// weir: a Kafka-compatible event streaming broker. One binary; see `weir --help`.
#include <CLI/CLI.hpp>

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

  app.add_subcommand("version", "Print the version")->callback([]() { std::puts("weir 0.1.0"); });

  CLI11_PARSE(app, argc, argv);
  if (serve->parsed()) return weir::cli::serve(serve_opts);
  return 0;
}
