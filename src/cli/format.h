// `weir format`: prepares log directories the way `kafka-storage format` does for a broker, by
// writing `meta.properties` (version 1, cluster.id, node.id, a new directory.id) in each of
// log.dirs. A broker-only node (process.roles=broker) refuses to start without it, as Kafka does;
// a broker,controller node writes one itself on first start.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace weir::cli {

// Adds `weir format` to `app`; `exit_code` receives the status.
void add_format_command(CLI::App& app, int& exit_code);

struct FormatOptions {
  std::string config_file;
  std::string cluster_id;
  bool ignore_formatted = false;
  bool standalone = false;           // accepted, no effect
  std::vector<std::string> ignored;  // --feature / --release-version: accepted, no effect
};

// 0 on success; 1 with Kafka's message on stderr otherwise (already formatted without
// --ignore-formatted, a bad cluster id, an unwritable directory, a bad config).
int format_log_dirs(const FormatOptions& options);

}  // namespace weir::cli
