#include "cli/config_check.h"

#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <optional>

#include "config/load.h"
#include "config/properties.h"
#include "server/server.h"

namespace weir::cli {

namespace {

int check_rows(const ConfigCheckOptions& options) {
  std::ifstream in(options.rows_file);
  if (!in) {
    fmt::print(stderr, "cannot read rows file {}\n", options.rows_file);
    return 1;
  }
  std::string out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line.front() == '#') continue;
    const auto tab = line.find('\t');
    if (tab == std::string::npos) {
      fmt::print(stderr, "rows file {}: line without a tab: {}\n", options.rows_file, line);
      return 1;
    }
    std::vector<std::string> overrides = options.overrides;
    overrides.push_back(line.substr(0, tab) + "=" + line.substr(tab + 1));
    auto r = config::load_broker_config(options.config_file, overrides);
    std::optional<std::string> error = r ? server::check_group_assignors(r->typed()) : r.error();
    out += line + (!error ? std::string("\tok\n") : "\terror\t" + *error + "\n");
  }
  std::fputs(out.c_str(), stdout);
  return 0;
}

}  // namespace

int config_check(const ConfigCheckOptions& options) {
  if (!options.rows_file.empty()) return check_rows(options);
  auto r = config::load_broker_config(options.config_file, options.overrides);
  if (std::optional<std::string> error = r ? server::check_group_assignors(r->typed()) : r.error()) {
    fmt::print(stderr, "config error=\"{}\"\n", *error);
    return 1;
  }
  for (const auto& k : r->unknown_keys()) fmt::print(stderr, "config unknown key={} (ignored)\n", k);
  std::puts("config ok");
  return 0;
}

int config_defs() {
  std::string out;
  for (const auto& def : config::broker_config_defs()) {
    const std::string dflt = def.required() ? "<none>"
                             : def.null_default()
                                 ? "<null>"
                                 : config::to_string(*config::parse(def, def.default_value)).value_or("");
    out += fmt::format("{}\t{}\t{}\t{}\t{}\t{}\n", def.name, config::type_name(def.type), dflt,
                       config::validator_text(def.validator), config::importance_name(def.importance),
                       config::update_mode_name(def.mode));
  }
  std::fputs(out.c_str(), stdout);
  return 0;
}

int config_read_properties(const std::vector<std::string>& files) {
  auto hex = [](std::string_view s) {
    std::string h;
    for (unsigned char c : s) h += fmt::format("{:02x}", c);
    return h;
  };
  std::string out;
  for (const auto& f : files) {
    out += "file\t" + f + "\n";
    auto entries = config::load_properties_file(f);
    if (!entries) {
      out += "error\t" + entries.error() + "\n";
      continue;
    }
    std::map<std::string, std::string> sorted;  // last duplicate wins, as in Properties
    for (auto& [k, v] : *entries) sorted[k] = v;
    for (const auto& [k, v] : sorted) out += "entry\t" + hex(k) + "\t" + hex(v) + "\n";
  }
  std::fputs(out.c_str(), stdout);
  return 0;
}

void add_config_command(CLI::App& app, int& exit_code) {
  auto* config_cmd = app.add_subcommand("config", "Broker configuration tools");
  config_cmd->require_subcommand(1);

  auto check_opts = std::make_shared<ConfigCheckOptions>();
  auto* check = config_cmd->add_subcommand("check", "Validate a broker configuration as `weir serve` does at start-up");
  check->add_option("--config", check_opts->config_file, "A server.properties file (Kafka key names)");
  check->add_option("--set", check_opts->overrides, "Override a config key: --set key=value (repeatable)");
  check->add_option("--rows", check_opts->rows_file,
                    "Check each \"key<TAB>value\" row of this file on its own; print a verdict per row");
  check->callback([check_opts, &exit_code]() { exit_code = config_check(*check_opts); });

  config_cmd->add_subcommand("defs", "Print every broker key weir knows: type, default, validator, mode")
      ->callback([&exit_code]() { exit_code = config_defs(); });

  auto files = std::make_shared<std::vector<std::string>>();
  auto* read_props =
      config_cmd->add_subcommand("read-properties", "Print what the .properties reader makes of files (hex)");
  read_props->add_option("files", *files, "Files to read")->required();
  read_props->callback([files, &exit_code]() { exit_code = config_read_properties(*files); });
}

}  // namespace weir::cli
