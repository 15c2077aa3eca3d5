#pragma once

#include <string>
#include <vector>

namespace weir::cli {

struct ServeOptions {
  std::string config_file;
  std::vector<std::string> overrides;  // key=value
  bool dev = false;
  std::string log_level = "info";
};

// Runs the broker until SIGINT/SIGTERM; returns the process exit code.
int serve(const ServeOptions& options);

}  // namespace weir::cli
