// weir: a Kafka-compatible event streaming broker. One binary; see `weir help`.
#include <CLI/CLI.hpp>
#include <string>

#include "cli/app.h"
#include "cli/client_command.h"

int main(int argc, char** argv) {
  CLI::App app{"weir: an event streaming broker that speaks the Apache Kafka protocol",
               std::string(weir::cli::kProgram)};
  int exit_code = 0;
  weir::cli::build_app(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help prints and succeeds; any other parse error is bad usage: exit status 2.
    return app.exit(e) == 0 ? 0 : weir::cli::kExitUsage;
  }
  return exit_code;
}
