// Counters and gauges for weir's sharded design: each one has a single writer, the shard (thread)
// that owns it, and any thread may read it.
//
// A single-writer relaxed load + store compiles to a plain add (no locked instruction), so the
// hot path costs what a plain integer costs; the atomic only makes the cross-thread read
// well-defined. Totals are the sum over the shards' instances, taken when read. Never write one
// from two threads: increments would be lost.
#pragma once

#include <atomic>
#include <cstdint>

namespace weir::metrics {

class Counter {
 public:
  void inc(std::uint64_t n = 1) noexcept {
    value_.store(value_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  [[nodiscard]] std::uint64_t value() const noexcept { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::uint64_t> value_{0};
};

class Gauge {
 public:
  void set(std::int64_t v) noexcept { value_.store(v, std::memory_order_relaxed); }
  void add(std::int64_t d) noexcept {
    value_.store(value_.load(std::memory_order_relaxed) + d, std::memory_order_relaxed);
  }
  [[nodiscard]] std::int64_t value() const noexcept { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::int64_t> value_{0};
};

}  // namespace weir::metrics
