// ProducePurgatory: the appends of one partition whose answer waits (Kafka's DelayedProduce in
// the produce purgatory). An acks=all append, or one past flush.messages, waits until every
// offset it wrote is below the partition's acknowledgement watermark: on one node the end offset
// of the last successful flush (the group-commit cycle that covered the append); on a replicated
// leader the high watermark the ISR moves (and the leader's own flush with flush.on.acks.all).
//
// Waiters are kept in offset order, so completing a watermark completes a prefix. Owner shard
// only: not synchronised. Pure: the caller says when the watermark moves or a flush fails;
// completions run inline.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <utility>

#include "base/assert.h"

namespace weir::broker {

class ProducePurgatory {
 public:
  // 0 (acknowledged) or the Kafka error code the append is answered with.
  using Completion = std::function<void(std::int16_t error_code)>;

  ProducePurgatory() = default;
  ProducePurgatory(const ProducePurgatory&) = delete;
  ProducePurgatory& operator=(const ProducePurgatory&) = delete;
  // Nothing may be left waiting: every waiter has a flush in flight that completes it.
  ~ProducePurgatory() = default;

  // Waits until offsets below end_offset (the append's last offset + 1) are acknowledged.
  // Appends arrive in offset order; an idempotent retry of an earlier batch (waiting for its
  // first write) or a coordinator's wait may come later with a lower end offset and is placed in
  // order.
  void add(std::int64_t end_offset, Completion done) {
    auto at = std::upper_bound(waiters_.begin(), waiters_.end(), end_offset,
                               [](std::int64_t end, const Waiter& w) { return end < w.end_offset; });
    waiters_.insert(at, Waiter{end_offset, std::move(done)});
  }

  // The watermark reached `watermark`: every waiter whose offsets lie below it is answered with
  // success. Returns how many were answered.
  std::size_t complete_through(std::int64_t watermark) { return finish(watermark, 0); }

  // A flush covering offsets below `end_offset` failed: the waiters it covered (and not yet
  // answered by an earlier success) are answered with `error_code`.
  std::size_t fail_through(std::int64_t end_offset, std::int16_t error_code) {
    WEIR_ASSERT(error_code != 0, "a failure needs an error code");
    return finish(end_offset, error_code);
  }

  [[nodiscard]] std::size_t waiting() const noexcept { return waiters_.size(); }

 private:
  struct Waiter {
    std::int64_t end_offset;
    Completion done;
  };

  std::size_t finish(std::int64_t through, std::int16_t error_code) {
    std::size_t n = 0;
    while (!waiters_.empty() && waiters_.front().end_offset <= through) {
      Completion done = std::move(waiters_.front().done);
      waiters_.pop_front();
      done(error_code);
      ++n;
    }
    return n;
  }

  std::deque<Waiter> waiters_;
};

}  // namespace weir::broker
