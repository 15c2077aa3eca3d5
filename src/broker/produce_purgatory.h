// ProducePurgatory: the appends of one partition whose answer waits (Kafka's DelayedProduce in
// the produce purgatory). An acks=all append, or one past flush.messages, waits until every
// offset it wrote is below the partition's acknowledgement watermark: on one node the end offset
// of the last successful flush (the group-commit cycle that covered the append); on a replicated
// leader the high watermark the ISR moves (and the leader's own flush with flush.on.acks.all).
//
// Waiters are kept in offset order, so completing a watermark completes a prefix. An empty
// purgatory holds no heap memory (a broker has two per partition; a deque would allocate a block
// for each even while empty). Owner shard only: not synchronised. Pure: the caller says when the watermark moves or a
// flush fails; completions run inline.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

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
    const auto first = waiters_.begin() + static_cast<std::ptrdiff_t>(head_);
    auto at = std::upper_bound(first, waiters_.end(), end_offset,
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

  [[nodiscard]] std::size_t waiting() const noexcept { return waiters_.size() - head_; }

 private:
  static constexpr std::size_t kKeptCapacity = 16;

  struct Waiter {
    std::int64_t end_offset;
    Completion done;
  };

  std::size_t finish(std::int64_t through, std::int16_t error_code) {
    std::size_t n = 0;
    // A completion may add a waiter (which may move the vector): index, never hold references.
    while (head_ < waiters_.size() && waiters_[head_].end_offset <= through) {
      Completion done = std::move(waiters_[head_].done);
      ++head_;
      ++n;
      done(error_code);
    }
    if (head_ == waiters_.size()) {
      // A burst's room is given back: memory stays bounded by what waits, not by the peak.
      if (waiters_.capacity() > kKeptCapacity) {
        std::vector<Waiter>().swap(waiters_);
      } else {
        waiters_.clear();
      }
      head_ = 0;
    } else if (head_ > 32 && head_ * 2 > waiters_.size()) {
      waiters_.erase(waiters_.begin(), waiters_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
    return n;
  }

  // waiters_[head_..] wait, in offset order; the ones before head_ were answered.
  std::vector<Waiter> waiters_;
  std::size_t head_ = 0;
};

}  // namespace weir::broker
