// Histogram: fixed buckets on a 1-2-5 scale (1, 2, 5, 10, ... 50'000'000, then overflow), in
// whatever unit the caller observes (weir uses microseconds: 1 us to 50 s). Single writer, any
// reader (see metric.h); snapshots of several shards merge by adding.
//
// Percentiles are estimated from the buckets by linear interpolation inside the bucket holding
// the wanted rank, capped by the largest value observed: the error is at most one bucket's width
// (a factor of 2 to 2.5 between neighbouring bounds).
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace weir::metrics {

inline constexpr std::array<std::uint64_t, 24> kHistogramBounds = {
    1,       2,       5,       10,       20,       50,       100,      200,
    500,     1000,    2000,    5000,     10000,    20000,    50000,    100000,
    200000,  500000,  1000000, 2000000,  5000000,  10000000, 20000000, 50000000};
// Bucket i counts values v with bound[i-1] < v <= bound[i]; the last bucket counts v > 50'000'000.
inline constexpr std::size_t kHistogramBuckets = kHistogramBounds.size() + 1;

// The bucket index of a value.
[[nodiscard]] std::size_t histogram_bucket(std::uint64_t value) noexcept;

struct HistogramSnapshot {
  std::array<std::uint64_t, kHistogramBuckets> counts{};
  std::uint64_t count = 0;
  std::uint64_t sum = 0;
  std::uint64_t max = 0;

  void merge(const HistogramSnapshot& other) noexcept;
  // Estimate of the q-quantile (0 <= q <= 1) of the observed values; 0 when empty.
  [[nodiscard]] double percentile(double q) const noexcept;
};

class Histogram {
 public:
  void observe(std::uint64_t value) noexcept;
  [[nodiscard]] HistogramSnapshot snapshot() const noexcept;

 private:
  static void bump(std::atomic<std::uint64_t>& a, std::uint64_t n) noexcept {
    a.store(a.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }

  std::array<std::atomic<std::uint64_t>, kHistogramBuckets> counts_{};
  std::atomic<std::uint64_t> sum_{0};
  std::atomic<std::uint64_t> max_{0};
};

}  // namespace weir::metrics
