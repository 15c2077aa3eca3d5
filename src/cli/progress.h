// A count and rate line on stderr while `weir produce` sends or `weir consume -n N` reads, for a
// person watching a terminal: drawn only when stderr is a terminal (never into a pipe or a file,
// never with --output json), redrawn at most every kRefreshMs, and cleared before records go to
// stdout (which may be the same terminal) and when the command ends. Kafka's console tools have
// no such line; it never reaches stdout.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace weir::cli {

// "1234 records consumed, 456/s" (with " of 5000" after the count when a total is known); the
// rate is records per second over `elapsed`, with one decimal below 10/s.
[[nodiscard]] std::string progress_text(std::string_view verb, std::int64_t count, std::optional<std::int64_t> total,
                                        std::chrono::steady_clock::duration elapsed);

class Progress {
 public:
  static constexpr std::int64_t kRefreshMs = 250;

  // `enabled` false draws nothing (see stderr_is_terminal()).
  Progress(std::string verb, std::optional<std::int64_t> total, bool enabled);
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  ~Progress() { clear(); }

  // The count so far; redraws when kRefreshMs passed since the last drawing.
  void update(std::int64_t count);
  // Erases the line if it is shown (before writing to stdout, and at the end).
  void clear();

 private:
  std::string verb_;
  std::optional<std::int64_t> total_;
  bool enabled_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point started_;
  std::chrono::steady_clock::time_point drawn_;
};

// Whether stderr is a terminal (isatty(2)).
[[nodiscard]] bool stderr_is_terminal();

}  // namespace weir::cli
