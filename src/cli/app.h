// The weir command tree: every subcommand with its flags and help text, built in one place. The
// same tree parses the command line, prints `weir help [command...]` (the text `weir <command>
// --help` prints), writes the man pages (`weir help --man [command...]`) and generates `weir
// completion bash|zsh`, so help, man pages and completion cannot drift from the commands.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace weir::cli {

// The program's name in usage lines (not argv[0], which may be a path).
inline constexpr std::string_view kProgram = "weir";
inline constexpr std::string_view kVersion = "0.1.0";  // `weir version`, the man pages' footer

// Adds every subcommand to `app` (made with name kProgram): serve, config, format, topic, cluster,
// produce, consume, group, txn, version, help and completion. A parsed command stores its exit
// status in `exit_code`.
void build_app(CLI::App& app, int& exit_code);

// The help of the command at `path` under `app` ("topic", "create"; empty: the whole program),
// exactly as `weir <path> --help` prints it; an error naming the unknown word otherwise.
[[nodiscard]] Result<std::string, std::string> help_text(const CLI::App& app, const std::vector<std::string>& path);

// The manual page (roff, section 1) of the command at `path` (empty: weir(1)), generated from
// the same tree as help_text: NAME, SYNOPSIS, DESCRIPTION, OPTIONS, COMMANDS (when it has
// subcommands) and SEE ALSO; the same for the same tree (no date). An error as help_text's.
[[nodiscard]] Result<std::string, std::string> man_page(const CLI::App& app, const std::vector<std::string>& path);

// The path of every visible command ({} for the program itself, {"topic"}, {"topic", "create"}, ...).
[[nodiscard]] std::vector<std::vector<std::string>> command_paths(const CLI::App& app);

// A completion script for `shell` ("bash" or "zsh") covering every visible command, subcommand
// and flag of `app`; empty for another shell.
[[nodiscard]] std::string completion_script(const CLI::App& app, std::string_view shell);

}  // namespace weir::cli
