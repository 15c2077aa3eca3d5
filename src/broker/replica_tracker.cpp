#include "broker/replica_tracker.h"

#include <algorithm>

#include "broker/errors.h"

namespace weir::broker {

IsrChangeFailure classify_isr_change_error(std::int16_t error) {
  switch (static_cast<ErrorCode>(error)) {
    case ErrorCode::kIneligibleReplica:
    case ErrorCode::kOperationNotAttempted:
      return IsrChangeFailure::kNotApplied;
    case ErrorCode::kUnknownTopicOrPartition:
    case ErrorCode::kUnknownTopicId:
    case ErrorCode::kFencedLeaderEpoch:
    case ErrorCode::kInvalidUpdateVersion:
    case ErrorCode::kInvalidRequest:
    case ErrorCode::kNewLeaderElected:
      return IsrChangeFailure::kAwaitMetadata;
    default:
      return IsrChangeFailure::kResend;
  }
}

void ReplicaTracker::reset(std::int32_t self, const std::vector<std::int32_t>& replicas,
                           const std::vector<std::int32_t>& isr, std::int32_t leader_epoch,
                           std::int32_t partition_epoch, std::int64_t now_ms) {
  self_ = self;
  replicas_ = replicas;
  isr_ = isr;
  leader_epoch_ = leader_epoch;
  partition_epoch_ = partition_epoch;
  pending_.reset();
  resend_ = false;
  followers_.clear();
  for (std::int32_t id : replicas) {
    if (id == self) continue;
    Follower f;
    f.id = id;
    // Kafka's resetReplicaState: an ISR member counts as caught up now, so that it has the lag
    // time to show it still is.
    f.last_caught_up_ms = in_isr(id) ? now_ms : 0;
    followers_.push_back(f);
  }
}

void ReplicaTracker::update_from_metadata(const std::vector<std::int32_t>& replicas,
                                          const std::vector<std::int32_t>& isr, std::int32_t partition_epoch) {
  if (partition_epoch < partition_epoch_) return;
  if (partition_epoch > partition_epoch_) {
    pending_.reset();
    resend_ = false;
  }
  partition_epoch_ = partition_epoch;
  isr_ = isr;
  if (replicas != replicas_) {
    // A reassignment changed the replicas: keep what is known of those that stay.
    std::vector<Follower> kept;
    for (std::int32_t id : replicas) {
      if (id == self_) continue;
      if (const Follower* f = follower(id)) {
        kept.push_back(*f);
      } else {
        kept.push_back(Follower{.id = id});
      }
    }
    followers_ = std::move(kept);
    replicas_ = replicas;
  }
}

void ReplicaTracker::committed(const std::vector<std::int32_t>& isr, std::int32_t partition_epoch) {
  pending_.reset();
  resend_ = false;
  if (partition_epoch < partition_epoch_) return;
  partition_epoch_ = partition_epoch;
  isr_ = isr;
}

bool ReplicaTracker::on_fetch(std::int32_t id, std::int64_t fetch_offset, std::int64_t log_start_offset,
                              std::int64_t broker_epoch, std::int64_t now_ms, std::int64_t leader_log_end) {
  Follower* f = find(id);
  if (f == nullptr) return false;
  // Kafka's Replica.updateFetchStateOrThrow: caught up now when the fetch reached the leader's
  // end; caught up as of the previous fetch when it reached the end the leader had then.
  if (fetch_offset >= leader_log_end) {
    f->last_caught_up_ms = std::max(f->last_caught_up_ms, now_ms);
  } else if (f->last_fetch_leader_log_end >= 0 && fetch_offset >= f->last_fetch_leader_log_end) {
    f->last_caught_up_ms = std::max(f->last_caught_up_ms, f->last_fetch_ms);
  }
  f->log_start_offset = log_start_offset;
  f->log_end_offset = fetch_offset;
  f->last_fetch_leader_log_end = leader_log_end;
  f->last_fetch_ms = now_ms;
  f->broker_epoch = broker_epoch;
  return true;
}

std::optional<std::int64_t> ReplicaTracker::high_watermark(std::int64_t leader_log_end, std::int64_t now_ms,
                                                           std::int64_t lag_ms, std::int32_t min_insync_replicas,
                                                           const std::function<bool(std::int32_t)>& eligible) const {
  if (under_min_isr(min_insync_replicas)) return std::nullopt;
  const std::vector<std::int32_t> maximal = maximal_isr();
  std::int64_t hw = leader_log_end;
  for (const Follower& f : followers_) {
    const bool counted = std::ranges::find(maximal, f.id) != maximal.end() ||
                         (caught_up(f, leader_log_end, now_ms, lag_ms) && eligible && eligible(f.id));
#ifndef WEIR_SIM_MUTATION_HW_BEFORE_ISR
    // A counted follower that has not fetched yet holds the high watermark where it is.
    if (counted && f.log_end_offset < hw) hw = f.log_end_offset;
  }
#else
    // Deliberately wrong, for tests/sim's mutation check only: the furthest follower decides,
    // so the high watermark passes data the rest of the ISR does not have.
    (void)counted;
  }
  std::int64_t furthest = -1;
  for (const Follower& f : followers_) furthest = std::max(furthest, f.log_end_offset);
  hw = std::min(hw, furthest);
#endif
  return hw;
}

std::optional<IsrProposal> ReplicaTracker::maybe_expand(std::int32_t id, std::int64_t high_watermark,
                                                        std::int64_t epoch_start_offset, bool eligible) {
  if (pending_ || in_isr(id) || !eligible) return std::nullopt;
  const Follower* f = follower(id);
  if (f == nullptr || f->log_end_offset < high_watermark || f->log_end_offset < epoch_start_offset) return std::nullopt;
  std::vector<std::int32_t> isr = isr_;
  isr.push_back(id);
  return propose(std::move(isr), true);
}

std::optional<IsrProposal> ReplicaTracker::maybe_shrink(std::int64_t leader_log_end, std::int64_t now_ms,
                                                        std::int64_t lag_ms) {
  if (pending_) return std::nullopt;
  std::vector<std::int32_t> isr;
  bool dropped = false;
  for (std::int32_t id : isr_) {
    const Follower* f = id == self_ ? nullptr : follower(id);
    if (f != nullptr && !caught_up(*f, leader_log_end, now_ms, lag_ms)) {
      dropped = true;
      continue;
    }
    isr.push_back(id);
  }
  if (!dropped) return std::nullopt;
  return propose(std::move(isr), false);
}

std::optional<IsrProposal> ReplicaTracker::take_resend() {
  if (!resend_ || !pending_) return std::nullopt;
  resend_ = false;
  std::vector<std::int32_t> isr = *pending_;
  const bool expand = isr.size() > isr_.size();
  return propose(std::move(isr), expand);
}

IsrProposal ReplicaTracker::propose(std::vector<std::int32_t> isr, bool expand) {
  IsrProposal p;
  p.leader_epoch = leader_epoch_;
  p.partition_epoch = partition_epoch_;
  p.expand = expand;
  for (std::int32_t id : isr) {
    const Follower* f = id == self_ ? nullptr : follower(id);
    p.new_isr.push_back(IsrMember{id, f != nullptr ? f->broker_epoch : -1});
  }
  pending_ = std::move(isr);
  return p;
}

std::vector<std::int32_t> ReplicaTracker::maximal_isr() const {
  // Kafka's maximalIsr: a member being removed still counts until the controller agrees; one
  // being added counts at once (waiting for more replicas is the safe side).
  std::vector<std::int32_t> out = isr_;
  if (pending_) {
    for (std::int32_t id : *pending_) {
      if (std::ranges::find(out, id) == out.end()) out.push_back(id);
    }
  }
  return out;
}

std::int32_t ReplicaTracker::effective_min_isr(std::int32_t min_insync_replicas) const {
  return std::min<std::int32_t>(min_insync_replicas, static_cast<std::int32_t>(std::max<std::size_t>(1, replicas_.size())));
}

const ReplicaTracker::Follower* ReplicaTracker::follower(std::int32_t id) const {
  for (const Follower& f : followers_) {
    if (f.id == id) return &f;
  }
  return nullptr;
}

ReplicaTracker::Follower* ReplicaTracker::find(std::int32_t id) {
  for (Follower& f : followers_) {
    if (f.id == id) return &f;
  }
  return nullptr;
}

bool ReplicaTracker::in_isr(std::int32_t id) const { return std::ranges::find(isr_, id) != isr_.end(); }

}  // namespace weir::broker
