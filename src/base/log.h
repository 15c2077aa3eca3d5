// Logging: spdlog loggers writing one key=value line per event to stderr.
//
//   ts=2024-05-01T12:00:00.123Z level=info logger=storage event=segment_rolled topic=t partition=3
//
// Call log::init() once at start-up (before other threads log). Each component takes its own
// named logger with log::get("storage"); all share the same sink and level. Messages should be an
// event name followed by fields, using kv() so values with spaces or quotes are quoted:
//
//   log::get("net")->info("event=connection_closed {} {}", log::kv("peer", peer),
//                         log::kv("reason", reason));
//
// Thread safety: get(), set_level() and the loggers themselves are thread-safe; init() is not
// (call it before starting threads).
#pragma once

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>

namespace weir::log {

// Parses "trace", "debug", "info", "warn"/"warning", "error", "critical"/"fatal", "off"
// (case-insensitive). nullopt for anything else.
[[nodiscard]] std::optional<spdlog::level::level_enum> parse_level(std::string_view name) noexcept;

// Installs the stderr sink and line format as spdlog's default logger (named "weir") and sets the
// level. Returns false, and uses "info", if level_name is not a level. May be called again to
// change the level.
bool init(std::string_view level_name = "info");

// Sets the level of every weir logger; false (and no change) if level_name is not a level.
bool set_level(std::string_view level_name);

// The logger for a component, created on first use with the shared sink and current level.
// Calls init() with the defaults if it has not run.
[[nodiscard]] std::shared_ptr<spdlog::logger> get(std::string_view component);

// A key=value field for a log line. The value is formatted with fmt and quoted ("...", with \"
// \\ \n escaped) when it is empty or contains a space, '=', '"', '\\' or a control character.
// A Kv refers to its value: create it inside the log call, do not store it.
template <class T>
struct Kv {
  std::string_view key;
  const T& value;
};

template <class T>
[[nodiscard]] Kv<T> kv(std::string_view key, const T& value) noexcept {
  return Kv<T>{key, value};
}

namespace detail {
// Appends `key=value` to out, quoting value as described for Kv.
void append_field(fmt::memory_buffer& out, std::string_view key, std::string_view value);
}  // namespace detail

}  // namespace weir::log

template <class T>
struct fmt::formatter<weir::log::Kv<T>> {
  constexpr auto parse(fmt::format_parse_context& ctx) { return ctx.begin(); }

  template <class FormatContext>
  auto format(const weir::log::Kv<T>& field, FormatContext& ctx) const {
    fmt::memory_buffer value;
    fmt::format_to(std::back_inserter(value), "{}", field.value);
    fmt::memory_buffer line;
    weir::log::detail::append_field(line, field.key, std::string_view(value.data(), value.size()));
    return std::copy(line.begin(), line.end(), ctx.out());
  }
};

namespace weir::log {

// Bounds how many lines an event may write (a flood of bad requests must not fill the disk): a
// token bucket of `burst` lines refilled at `per_second`. It counts the lines it refuses so the
// next line written can say how many were dropped. Not thread-safe: one per thread (shard).
class RateLimiter {
 public:
  RateLimiter(double per_second, double burst) noexcept
      : per_ms_(per_second / 1000.0), burst_(burst), tokens_(burst) {}

  // True if a line may be written at now_ms (a monotonic clock); false counts a dropped line.
  bool allow(std::int64_t now_ms) noexcept {
    if (last_ms_ >= 0 && now_ms > last_ms_) {
      tokens_ = std::min(burst_, tokens_ + static_cast<double>(now_ms - last_ms_) * per_ms_);
    }
    if (now_ms > last_ms_) last_ms_ = now_ms;
    if (tokens_ >= 1.0) {
      tokens_ -= 1.0;
      return true;
    }
    ++dropped_;
    ++dropped_total_;
    return false;
  }
  // Lines dropped since the last call.
  std::uint64_t take_dropped() noexcept { return std::exchange(dropped_, 0); }
  [[nodiscard]] std::uint64_t dropped_total() const noexcept { return dropped_total_; }

 private:
  double per_ms_;
  double burst_;
  double tokens_;
  std::int64_t last_ms_ = -1;
  std::uint64_t dropped_ = 0;
  std::uint64_t dropped_total_ = 0;
};

}  // namespace weir::log
