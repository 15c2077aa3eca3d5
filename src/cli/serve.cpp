#include "cli/serve.h"

#include <memory>

#include "server/server.h"

namespace weir::cli {

void add_serve_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<server::ServeOptions>();
  auto* serve = app.add_subcommand("serve", "Run the broker");
  serve->add_option("--config", options->config_file, "A server.properties file (Kafka key names)");
  serve->add_option("--set", options->overrides, "Override a config key: --set key=value (repeatable)");
  serve->add_flag("--dev", options->dev, "Development mode: trade fsync for speed");
  serve->add_option("--log-level", options->log_level, "trace, debug, info, warn, error");
  serve->callback([options, &exit_code]() { exit_code = server::serve(*options); });
}

}  // namespace weir::cli
