#include "cli/format.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <system_error>

#include "base/uuid.h"
#include "config/load.h"

namespace weir::cli {

namespace fs = std::filesystem;

namespace {

// Writes path atomically (a temporary file, fsync'd, renamed over it).
bool write_file(const fs::path& path, const std::string& text, std::string& error) {
  const fs::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc | std::ios::binary);
    out << text;
    out.flush();
    if (!out) {
      error = "cannot write " + tmp.string();
      return false;
    }
  }
  if (std::FILE* f = std::fopen(tmp.c_str(), "rb")) {
    (void)::fsync(::fileno(f));
    std::fclose(f);
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    error = "cannot write " + path.string() + ": " + ec.message();
    return false;
  }
  return true;
}

}  // namespace

int format_log_dirs(const FormatOptions& options) {
  auto config = config::load_broker_config(options.config_file, {});
  if (!config) {
    fmt::print(stderr, "config error=\"{}\"\n", config.error());
    return 1;
  }
  // Kafka takes any non-empty string (kafka-storage random-uuid makes a base64 Uuid).
  if (options.cluster_id.empty()) {
    std::fputs("The cluster id must not be empty\n", stderr);
    return 1;
  }
  const auto& typed = config->typed();
  const auto& dirs = typed.is_null("log.dirs") ? typed.get_list("log.dir") : typed.get_list("log.dirs");
  std::vector<fs::path> unformatted;
  for (const auto& d : dirs) {
    const fs::path dir(d);
    if (fs::exists(dir / "meta.properties")) {
      if (!options.ignore_formatted) {
        fmt::print(stderr,
                   "Log directory {} is already formatted. Use --ignore-formatted to ignore this directory "
                   "and format the others.\n",
                   dir.string());
        return 1;
      }
      continue;
    }
    unformatted.push_back(dir);
  }
  if (unformatted.empty()) {
    std::puts("All of the log directories are already formatted.");
    return 0;
  }
  for (const auto& dir : unformatted) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) {
      fmt::print(stderr, "cannot create log directory {}: {}\n", dir.string(), ec.message());
      return 1;
    }
    const std::string text =
        fmt::format("#\n#written by weir format\nnode.id={}\ndirectory.id={}\nversion=1\ncluster.id={}\n",
                    config->node_id, Uuid::random().to_string(), options.cluster_id);
    std::string error;
    if (!write_file(dir / "meta.properties", text, error)) {
      fmt::print(stderr, "{}\n", error);
      return 1;
    }
    fmt::print("Formatting log directory {} for cluster {} node {}.\n", dir.string(), options.cluster_id,
               config->node_id);
  }
  return 0;
}

void add_format_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<FormatOptions>();
  auto* cmd = app.add_subcommand("format", "Format the log directories of a node (as kafka-storage format)");
  cmd->add_option("-t,--cluster-id", options->cluster_id, "The cluster id (kafka-storage random-uuid)")->required();
  cmd->add_option("-c,--config", options->config_file, "The node's server.properties")->required();
  cmd->add_flag("-g,--ignore-formatted", options->ignore_formatted, "Skip directories that are already formatted");
  // kafka-storage format's controller-side options: feature levels are the controllers' business.
  cmd->add_option("-f,--feature,-r,--release-version", options->ignored,
                  "Accepted for compatibility: a broker takes feature levels from the controller quorum");
  cmd->add_flag("-s,--standalone", options->standalone,
                "Accepted for compatibility (a broker,controller node is its own quorum)");
  cmd->callback([options, &exit_code]() { exit_code = format_log_dirs(*options); });
}

}  // namespace weir::cli
