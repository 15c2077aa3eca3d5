// `weir group list|describe|seek|delete|delete-offsets`: consumer groups and, per partition, the
// committed offset, log end offset, lag and owner, printed as kafka-consumer-groups prints them.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"

namespace weir::cli {

void add_group_command(CLI::App& app, int& exit_code);

// A --from-file reset plan: per group, per (topic, partition), the new offset.
using GroupResetPlans = std::map<std::string, std::map<std::pair<std::string, std::int32_t>, std::int64_t>>;

// Reads a reset plan in the CSV that `weir group seek --export` and `kafka-consumer-groups
// --reset-offsets --export` write: `topic,partition,offset` rows for one group (`single_group`,
// the one group the command names; empty when it names several or --all-groups), or
// `group,topic,partition,offset` rows. Blank lines are skipped. An error names the line.
[[nodiscard]] Result<GroupResetPlans, std::string> parse_reset_plan(std::string_view csv,
                                                                    const std::string& single_group);

// A CSV line's fields: quoted fields may hold commas and "" for a quote (Kafka's tool quotes
// long fields); nullopt for a quote that does not close.
[[nodiscard]] std::optional<std::vector<std::string>> split_csv_line(std::string_view line);
// A value as a CSV field: quoted when it holds a comma, a quote or a line break.
[[nodiscard]] std::string csv_field(std::string_view value);

}  // namespace weir::cli
