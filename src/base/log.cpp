#include "base/log.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <algorithm>
#include <cctype>
#include <mutex>
#include <string>

namespace weir::log {

namespace {

constexpr const char* kPattern = "ts=%Y-%m-%dT%H:%M:%S.%eZ level=%l logger=%n %v";
constexpr const char* kRootName = "weir";

struct State {
  std::mutex mu;
  spdlog::sink_ptr sink;  // null until init()
  spdlog::level::level_enum level = spdlog::level::info;
};

State& state() {
  static State s;
  return s;
}

bool equals_ignore_case(std::string_view a, std::string_view b) noexcept {
  return std::ranges::equal(a, b, [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) ==
           std::tolower(static_cast<unsigned char>(y));
  });
}

bool needs_quotes(std::string_view v) noexcept {
  if (v.empty()) return true;
  return std::ranges::any_of(v, [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return c == ' ' || c == '=' || c == '"' || c == '\\' || u < 0x20 || u == 0x7f;
  });
}

// Requires s.mu held.
void init_locked(State& s, spdlog::level::level_enum level) {
  if (!s.sink) {
    s.sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
    s.sink->set_formatter(
        std::make_unique<spdlog::pattern_formatter>(kPattern, spdlog::pattern_time_type::utc));
    auto root = std::make_shared<spdlog::logger>(kRootName, s.sink);
    spdlog::set_default_logger(root);
  }
  s.level = level;
  spdlog::set_level(level);  // every registered logger, the default one included
}

}  // namespace

std::optional<spdlog::level::level_enum> parse_level(std::string_view name) noexcept {
  using spdlog::level::level_enum;
  struct Entry {
    std::string_view name;
    level_enum level;
  };
  static constexpr Entry kLevels[] = {
      {"trace", level_enum::trace},       {"debug", level_enum::debug},
      {"info", level_enum::info},         {"warn", level_enum::warn},
      {"warning", level_enum::warn},      {"error", level_enum::err},
      {"critical", level_enum::critical}, {"fatal", level_enum::critical},
      {"off", level_enum::off},
  };
  for (const auto& e : kLevels) {
    if (equals_ignore_case(name, e.name)) return e.level;
  }
  return std::nullopt;
}

bool init(std::string_view level_name) {
  const auto level = parse_level(level_name);
  State& s = state();
  std::lock_guard lock(s.mu);
  init_locked(s, level.value_or(spdlog::level::info));
  return level.has_value();
}

bool set_level(std::string_view level_name) {
  const auto level = parse_level(level_name);
  if (!level) return false;
  State& s = state();
  std::lock_guard lock(s.mu);
  init_locked(s, *level);
  return true;
}

std::shared_ptr<spdlog::logger> get(std::string_view component) {
  State& s = state();
  std::lock_guard lock(s.mu);
  if (!s.sink) init_locked(s, s.level);
  const std::string name(component);
  if (auto existing = spdlog::get(name)) return existing;
  auto logger = std::make_shared<spdlog::logger>(name, s.sink);
  logger->set_level(s.level);
  spdlog::register_logger(logger);
  return logger;
}

namespace detail {

void append_field(fmt::memory_buffer& out, std::string_view key, std::string_view value) {
  out.append(key);
  out.push_back('=');
  if (!needs_quotes(value)) {
    out.append(value);
    return;
  }
  out.push_back('"');
  for (char c : value) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (c == '\n') {
      out.append(std::string_view("\\n"));
    } else if (u < 0x20 || u == 0x7f) {
      fmt::format_to(std::back_inserter(out), "\\x{:02x}", u);
    } else {
      out.push_back(c);
    }
  }
  out.push_back('"');
}

}  // namespace detail

}  // namespace weir::log
