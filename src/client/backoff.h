// Exponential backoff with jitter, as Kafka's clients compute it between retries
// (retry.backoff.ms, retry.backoff.max.ms) and reconnects (reconnect.backoff.ms/.max.ms):
//
//   backoff(n) = min(max_ms, initial_ms * 2^min(n, log2(max_ms / initial_ms)) * U(1 - jitter, 1 + jitter))
//
// where n counts the failures so far (0 for the first retry). Pure: the random factor comes from
// the caller (a uniform draw in [0, 1)), so tests choose it.
#pragma once

#include <cstdint>

namespace weir::client {

struct BackoffPolicy {
  std::int64_t initial_ms = 100;  // retry.backoff.ms
  std::int64_t max_ms = 1000;     // retry.backoff.max.ms
  int multiplier = 2;
  double jitter = 0.2;
};

class ExponentialBackoff {
 public:
  explicit ExponentialBackoff(BackoffPolicy policy) noexcept;

  // The wait before retry number attempts + 1; uniform01 in [0, 1) picks the jitter.
  [[nodiscard]] std::int64_t backoff_ms(std::int64_t attempts, double uniform01) const noexcept;

 private:
  BackoffPolicy policy_;
  double exp_max_ = 0;
};

}  // namespace weir::client
