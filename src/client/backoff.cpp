#include "client/backoff.h"

#include <algorithm>
#include <cmath>

#include "base/assert.h"

namespace weir::client {

ExponentialBackoff::ExponentialBackoff(BackoffPolicy policy) noexcept : policy_(policy) {
  WEIR_ASSERT(policy_.initial_ms >= 0 && policy_.max_ms >= 0 && policy_.multiplier >= 2, "bad backoff policy");
  WEIR_ASSERT(policy_.jitter >= 0 && policy_.jitter < 1, "jitter {} outside [0, 1)", policy_.jitter);
  policy_.initial_ms = std::min(policy_.initial_ms, policy_.max_ms);
  if (policy_.max_ms > policy_.initial_ms) {
    exp_max_ = std::log(static_cast<double>(policy_.max_ms) /
                        static_cast<double>(std::max<std::int64_t>(policy_.initial_ms, 1))) /
               std::log(static_cast<double>(policy_.multiplier));
  }
}

std::int64_t ExponentialBackoff::backoff_ms(std::int64_t attempts, double uniform01) const noexcept {
  if (exp_max_ == 0) return policy_.initial_ms;
  const double exp = std::min(static_cast<double>(std::max<std::int64_t>(attempts, 0)), exp_max_);
  const double term = static_cast<double>(policy_.initial_ms) * std::pow(policy_.multiplier, exp);
  const double u = std::clamp(uniform01, 0.0, 1.0);
  const double factor = policy_.jitter == 0 ? 1.0 : (1 - policy_.jitter) + u * 2 * policy_.jitter;
  return std::min(static_cast<std::int64_t>(factor * term), policy_.max_ms);
}

}  // namespace weir::client
