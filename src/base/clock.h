// Time as a dependency. Code that needs the time takes a Clock& so tests can drive it.
//
//   now_ms():  monotonic milliseconds from an arbitrary origin; never goes backwards. Use it for
//              timeouts, deadlines and durations.
//   wall_ms(): milliseconds since the Unix epoch (UTC). Use it for timestamps that leave the
//              process (record LogAppendTime, retention by time); it may jump.
//
// Thread safety: both implementations may be read from any thread; ManualClock's setters may be
// called concurrently with readers.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "base/assert.h"

namespace weir {

class Clock {
 public:
  virtual ~Clock() = default;
  [[nodiscard]] virtual std::int64_t now_ms() const noexcept = 0;
  [[nodiscard]] virtual std::int64_t wall_ms() const noexcept = 0;
};

// The real clocks: std::chrono::steady_clock and system_clock.
class SystemClock final : public Clock {
 public:
  [[nodiscard]] std::int64_t now_ms() const noexcept override {
    return to_ms(std::chrono::steady_clock::now().time_since_epoch());
  }
  [[nodiscard]] std::int64_t wall_ms() const noexcept override {
    return to_ms(std::chrono::system_clock::now().time_since_epoch());
  }

  // A process-wide instance for code that has no better place to get one from.
  static SystemClock& instance() noexcept {
    static SystemClock clock;
    return clock;
  }

 private:
  template <class D>
  static std::int64_t to_ms(D d) noexcept {
    return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  }
};

// A clock that moves only when told to. advance_ms() moves both readings; set_wall_ms() moves the
// wall clock alone (in either direction), as an NTP step would.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(std::int64_t now_ms = 0, std::int64_t wall_ms = kDefaultWallMs) noexcept
      : now_ms_(now_ms), wall_ms_(wall_ms) {}

  [[nodiscard]] std::int64_t now_ms() const noexcept override {
    return now_ms_.load(std::memory_order_acquire);
  }
  [[nodiscard]] std::int64_t wall_ms() const noexcept override {
    return wall_ms_.load(std::memory_order_acquire);
  }

  void advance_ms(std::int64_t delta_ms) noexcept {
    WEIR_ASSERT(delta_ms >= 0, "monotonic time cannot go back by {} ms", -delta_ms);
    now_ms_.fetch_add(delta_ms, std::memory_order_acq_rel);
    wall_ms_.fetch_add(delta_ms, std::memory_order_acq_rel);
  }

  void set_wall_ms(std::int64_t wall_ms) noexcept {
    wall_ms_.store(wall_ms, std::memory_order_release);
  }

  // 2024-01-01T00:00:00Z: a fixed, realistic default so tests are reproducible.
  static constexpr std::int64_t kDefaultWallMs = 1'704'067'200'000;

 private:
  std::atomic<std::int64_t> now_ms_;
  std::atomic<std::int64_t> wall_ms_;
};

}  // namespace weir
