#include "storage/io_throttle.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/assert.h"

namespace weir::storage {

IoThrottle::IoThrottle(double bytes_per_second, std::int64_t burst_bytes) noexcept
    : bytes_per_second_(bytes_per_second),
      burst_bytes_(static_cast<double>(burst_bytes)),
      tokens_(static_cast<double>(burst_bytes)) {
  WEIR_ASSERT(bytes_per_second > 0 && burst_bytes > 0, "rate {} burst {}", bytes_per_second, burst_bytes);
}

void IoThrottle::refill(std::int64_t now_ms) noexcept {
  if (last_ms_ && now_ms > *last_ms_) {
    const double earned = bytes_per_second_ * static_cast<double>(now_ms - *last_ms_) / 1000.0;
    tokens_ = std::min(burst_bytes_, tokens_ + earned);  // inf + x stays inf; min() caps it
  }
  if (!last_ms_ || now_ms > *last_ms_) last_ms_ = now_ms;
}

std::int64_t IoThrottle::available(std::int64_t now_ms) noexcept {
  refill(now_ms);
  return tokens_ <= 0 ? 0 : static_cast<std::int64_t>(tokens_);
}

std::int64_t IoThrottle::wait_ms(std::int64_t now_ms, std::int64_t bytes) noexcept {
  refill(now_ms);
  const double missing = std::min(static_cast<double>(bytes), burst_bytes_) - tokens_;
  if (missing <= 0) return 0;
  const double ms = std::ceil(missing * 1000.0 / bytes_per_second_);
  return ms >= static_cast<double>(std::numeric_limits<std::int64_t>::max()) ? std::numeric_limits<std::int64_t>::max()
                                                                              : static_cast<std::int64_t>(ms);
}

}  // namespace weir::storage
