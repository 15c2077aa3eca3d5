#include "cli/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <utility>

namespace weir::cli {

using Clock = std::chrono::steady_clock;

std::string progress_text(std::string_view verb, std::int64_t count, std::optional<std::int64_t> total,
                          Clock::duration elapsed) {
  const double seconds = std::chrono::duration<double>(elapsed).count();
  const double rate = seconds > 0 ? static_cast<double>(count) / seconds : 0.0;
  const std::string of = total ? fmt::format(" of {}", *total) : std::string();
  const std::string per_second = rate < 10 ? fmt::format("{:.1f}", rate) : fmt::format("{:.0f}", rate);
  return fmt::format("{}{} records {}, {}/s", count, of, verb, per_second);
}

Progress::Progress(std::string verb, std::optional<std::int64_t> total, bool enabled)
    : verb_(std::move(verb)), total_(total), enabled_(enabled), started_(Clock::now()), drawn_(started_) {}

void Progress::update(std::int64_t count) {
  if (!enabled_) return;
  const auto now = Clock::now();
  if (now - drawn_ < std::chrono::milliseconds(kRefreshMs)) return;
  drawn_ = now;
  // \r and "erase to the end of the line" (ESC [ K): the new text replaces the old.
  std::fprintf(stderr, "\r%s\x1b[K", progress_text(verb_, count, total_, now - started_).c_str());
  std::fflush(stderr);
  shown_ = true;
}

void Progress::clear() {
  if (!shown_) return;
  std::fputs("\r\x1b[K", stderr);
  std::fflush(stderr);
  shown_ = false;
}

bool stderr_is_terminal() { return ::isatty(STDERR_FILENO) == 1; }

}  // namespace weir::cli
