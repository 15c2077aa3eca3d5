// The broker-wide budget for request bytes read from sockets but not yet released by their
// handlers (Kafka's queued.max.request.bytes).
//
// A frame takes its whole size from the budget when its size prefix has arrived, before any
// of its bytes are read (its buffer still grows only as they arrive, so RSS never exceeds what
// the budget counts), and each connection may hold at most `per_connection_bytes` of it, so one
// connection cannot take the whole budget by pipelining. When an acquisition does not fit, the reader asks
// to be woken (add_waiter) and stops reading: the socket's receive buffer fills and TCP pushes
// back on the client. Every release wakes the waiters, which retry. (A connection's share is at
// least socket.request.max.bytes, so any valid frame fits; the budget cannot be spent by
// one connection alone unless it is the whole budget.) While a reader waits, connections whose
// partial frame holds memory but has received nothing for a while are closed to give it back
// (Connection::reclaim_if_stalled), so clients that stall mid-request cannot hold complete
// requests back until weir.partial.request.timeout.ms.
//
// Invariants: 0 <= in_use <= limit; 0 <= a connection's held bytes <= per_connection_bytes.
// Thread safety: every member may be called from any thread; callbacks run outside the lock.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace weir::net {

// What one connection holds of the budget (shared with the leases of its frames, which may be
// released on another thread after the connection has gone).
struct ConnectionMemory {
  std::int64_t held_bytes = 0;  // guarded by the budget's mutex
};

class MemoryBudget {
 public:
  MemoryBudget(std::int64_t limit_bytes, std::int64_t per_connection_bytes);

  // Takes n bytes for `conn` if both the budget and the connection's share allow it.
  [[nodiscard]] bool try_acquire(ConnectionMemory& conn, std::int64_t n);
  void release(ConnectionMemory& conn, std::int64_t n);
  // `wake` is called once, after the next release (or at once if nothing is held at all).
  void add_waiter(std::function<void()> wake);

  [[nodiscard]] std::int64_t limit_bytes() const noexcept { return limit_bytes_; }
  [[nodiscard]] std::int64_t per_connection_bytes() const noexcept { return per_connection_bytes_; }
  [[nodiscard]] std::int64_t in_use_bytes() const;
  [[nodiscard]] std::int64_t held_by(const ConnectionMemory& conn) const;
  // At shutdown: forgets the waiters and wakes nobody from now on (their executors may be gone).
  void close();
  // Highest in_use_bytes seen.
  [[nodiscard]] std::int64_t peak_bytes() const;

 private:
  const std::int64_t limit_bytes_;
  const std::int64_t per_connection_bytes_;
  mutable std::mutex mutex_;
  std::int64_t in_use_bytes_ = 0;
  std::int64_t peak_bytes_ = 0;
  std::vector<std::function<void()>> waiters_;
  bool closed_ = false;
};

// The part of the budget one frame holds; returned when the frame is destroyed, i.e. when the
// handler and everything it handed the bytes to have let go of them.
class MemoryLease {
 public:
  MemoryLease() = default;
  MemoryLease(std::shared_ptr<MemoryBudget> budget, std::shared_ptr<ConnectionMemory> conn)
      : budget_(std::move(budget)), conn_(std::move(conn)) {}
  ~MemoryLease() { reset(); }
  MemoryLease(MemoryLease&& o) noexcept
      : budget_(std::move(o.budget_)), conn_(std::move(o.conn_)), bytes_(std::exchange(o.bytes_, 0)) {}
  MemoryLease& operator=(MemoryLease&& o) noexcept {
    if (this != &o) {
      reset();
      budget_ = std::move(o.budget_);
      conn_ = std::move(o.conn_);
      bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
  }
  MemoryLease(const MemoryLease&) = delete;
  MemoryLease& operator=(const MemoryLease&) = delete;

  // Records n more bytes, already acquired from the budget for this lease's connection.
  void add(std::int64_t n) noexcept { bytes_ += n; }
  [[nodiscard]] std::int64_t bytes() const noexcept { return bytes_; }
  void reset() {
    if (budget_ && bytes_ > 0) budget_->release(*conn_, bytes_);
    bytes_ = 0;
  }

 private:
  std::shared_ptr<MemoryBudget> budget_;
  std::shared_ptr<ConnectionMemory> conn_;
  std::int64_t bytes_ = 0;
};

}  // namespace weir::net
