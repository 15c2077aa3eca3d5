// Always-on assertions for invariants (bugs), in every build type.
//
//   WEIR_ASSERT(offset >= 0);
//   WEIR_ASSERT(n <= limit, "batch of {} records exceeds {}", n, limit);
//
// A failed assertion logs the expression, the location and the optional fmt-formatted message at
// critical level (and to stderr if logging is not set up), then aborts. Expected failures, such as
// bad input from the network or disk, are values (see result.h), never assertions.
#pragma once

#include <fmt/format.h>

#include <string>

namespace weir::detail {

[[noreturn]] void assert_failed(const char* expr, const char* file, int line,
                                const std::string& message = {}) noexcept;

}  // namespace weir::detail

#define WEIR_ASSERT(cond, ...)                                                          \
  do {                                                                                  \
    if (!(cond)) [[unlikely]] {                                                         \
      ::weir::detail::assert_failed(#cond, __FILE__,                                    \
                                    __LINE__ __VA_OPT__(, ::fmt::format(__VA_ARGS__))); \
    }                                                                                   \
  } while (false)

// Marks a path that cannot be reached if the program is correct; aborts like a failed assertion.
#define WEIR_UNREACHABLE(...)                            \
  ::weir::detail::assert_failed("unreachable", __FILE__, \
                                __LINE__ __VA_OPT__(, ::fmt::format(__VA_ARGS__)))
