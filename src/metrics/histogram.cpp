#include "metrics/histogram.h"

#include <algorithm>
#include <cmath>

namespace weir::metrics {

std::size_t histogram_bucket(std::uint64_t value) noexcept {
  return static_cast<std::size_t>(std::lower_bound(kHistogramBounds.begin(), kHistogramBounds.end(), value) -
                                  kHistogramBounds.begin());
}

void Histogram::observe(std::uint64_t value) noexcept {
  bump(counts_[histogram_bucket(value)], 1);
  bump(sum_, value);
  if (value > max_.load(std::memory_order_relaxed)) max_.store(value, std::memory_order_relaxed);
}

HistogramSnapshot Histogram::snapshot() const noexcept {
  HistogramSnapshot s;
  for (std::size_t i = 0; i < kHistogramBuckets; ++i) {
    s.counts[i] = counts_[i].load(std::memory_order_relaxed);
    s.count += s.counts[i];
  }
  s.sum = sum_.load(std::memory_order_relaxed);
  s.max = max_.load(std::memory_order_relaxed);
  return s;
}

void HistogramSnapshot::merge(const HistogramSnapshot& other) noexcept {
  for (std::size_t i = 0; i < kHistogramBuckets; ++i) counts[i] += other.counts[i];
  count += other.count;
  sum += other.sum;
  max = std::max(max, other.max);
}

double HistogramSnapshot::percentile(double q) const noexcept {
  if (count == 0) return 0;
  q = std::clamp(q, 0.0, 1.0);
  // The 1-based rank of the wanted value among the observed ones.
  const double rank = std::max(1.0, std::ceil(q * static_cast<double>(count)));
  std::uint64_t below = 0;
  for (std::size_t i = 0; i < kHistogramBuckets; ++i) {
    if (counts[i] == 0) continue;
    if (static_cast<double>(below + counts[i]) >= rank) {
      const double lower = i == 0 ? 0.0 : static_cast<double>(kHistogramBounds[i - 1]);
      const double upper = i < kHistogramBounds.size() ? static_cast<double>(kHistogramBounds[i])
                                                       : static_cast<double>(max);
      const double fraction = (rank - static_cast<double>(below)) / static_cast<double>(counts[i]);
      return std::min(lower + (upper - lower) * fraction, static_cast<double>(max));
    }
    below += counts[i];
  }
  return static_cast<double>(max);
}

}  // namespace weir::metrics
