// IoThrottle: pacing for log.cleaner.io.max.bytes.per.second without sleeping. A token bucket:
// the caller asks how many bytes it may use now (available()), does that much work (e.g.
// LogManager::clean with that budget), then says what it used (consume()). Tokens accrue at
// bytes_per_second up to burst_bytes, which also bounds the work of one call. A call may overshoot
// its budget by one batch; the debt is paid before more is available.
//
// Time is monotonic milliseconds (Clock::now_ms). Single-threaded.
#pragma once

#include <cstdint>
#include <optional>

namespace weir::storage {

class IoThrottle {
 public:
  // bytes_per_second: Kafka's default is Double.MAX_VALUE (unlimited); burst_bytes > 0.
  IoThrottle(double bytes_per_second, std::int64_t burst_bytes) noexcept;

  // Bytes that may be used at now_ms (0 while in debt).
  [[nodiscard]] std::int64_t available(std::int64_t now_ms) noexcept;
  void consume(std::int64_t bytes) noexcept { tokens_ -= static_cast<double>(bytes); }
  // How long from now_ms until at least `bytes` are available (0 if they are).
  [[nodiscard]] std::int64_t wait_ms(std::int64_t now_ms, std::int64_t bytes) noexcept;

 private:
  void refill(std::int64_t now_ms) noexcept;

  double bytes_per_second_;
  double burst_bytes_;
  double tokens_;
  std::optional<std::int64_t> last_ms_;
};

}  // namespace weir::storage
