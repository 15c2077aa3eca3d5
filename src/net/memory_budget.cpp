#include "net/memory_budget.h"

#include <algorithm>

#include "base/assert.h"

namespace weir::net {

MemoryBudget::MemoryBudget(std::int64_t limit_bytes, std::int64_t per_connection_bytes)
    : limit_bytes_(limit_bytes), per_connection_bytes_(std::min(per_connection_bytes, limit_bytes)) {
  WEIR_ASSERT(limit_bytes_ > 0 && per_connection_bytes_ > 0);
}

bool MemoryBudget::try_acquire(ConnectionMemory& conn, std::int64_t n) {
  WEIR_ASSERT(n >= 0);
  std::lock_guard lock(mutex_);
  if (in_use_bytes_ + n > limit_bytes_ || conn.held_bytes + n > per_connection_bytes_) return false;
  in_use_bytes_ += n;
  conn.held_bytes += n;
  peak_bytes_ = std::max(peak_bytes_, in_use_bytes_);
  return true;
}

void MemoryBudget::release(ConnectionMemory& conn, std::int64_t n) {
  std::vector<std::function<void()>> wake;
  {
    std::lock_guard lock(mutex_);
    WEIR_ASSERT(n >= 0 && n <= in_use_bytes_ && n <= conn.held_bytes);
    in_use_bytes_ -= n;
    conn.held_bytes -= n;
    if (!closed_) wake.swap(waiters_);
  }
  for (auto& w : wake) w();
}

void MemoryBudget::add_waiter(std::function<void()> wake) {
  {
    std::lock_guard lock(mutex_);
    if (closed_) return;
    if (in_use_bytes_ > 0) {
      waiters_.push_back(std::move(wake));
      return;
    }
  }
  wake();  // nothing is held, so no release would ever come
}

std::int64_t MemoryBudget::in_use_bytes() const {
  std::lock_guard lock(mutex_);
  return in_use_bytes_;
}

std::int64_t MemoryBudget::held_by(const ConnectionMemory& conn) const {
  std::lock_guard lock(mutex_);
  return conn.held_bytes;
}

void MemoryBudget::close() {
  std::vector<std::function<void()>> dropped;
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
    dropped.swap(waiters_);
  }
}

std::int64_t MemoryBudget::peak_bytes() const {
  std::lock_guard lock(mutex_);
  return peak_bytes_;
}

}  // namespace weir::net
