#include "base/assert.h"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>

namespace weir::detail {

void assert_failed(const char* expr, const char* file, int line,
                   const std::string& message) noexcept {
  // Logging can itself fail (for instance on allocation); the stderr line below is the fallback
  // that always gets out before the abort.
  try {
    if (auto logger = spdlog::default_logger(); logger) {
      logger->critical("event=assertion_failed expr=\"{}\" at={}:{} msg=\"{}\"", expr, file, line,
                       message);
      logger->flush();
    }
  } catch (...) {
  }
  std::fprintf(stderr, "weir: assertion failed: %s at %s:%d%s%s\n", expr, file, line,
               message.empty() ? "" : ": ", message.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace weir::detail
