// ReplicaTracker: what a partition leader knows about its followers (Kafka's Replica states and
// the leader side of Partition): each follower's log end offset as its fetches report it, when
// it last caught up with the leader, and the ISR with the change to it in flight (AlterPartition).
// From that it derives the high watermark and the ISR changes to ask the controller for.
//
// Pure: time comes in as now_ms; nothing here does I/O. Owner shard only, like its Partition.
//
// Rules (Kafka 4.3's Partition):
//   - a follower is caught up when its log end offset is the leader's, or it was within
//     replica.lag.time.max.ms (Kafka's isCaughtUp); its catch-up time moves as Replica.
//     updateFetchState moves it;
//   - the high watermark is the lowest log end offset among the leader and the followers in the
//     maximal ISR (the ISR plus a member being added) or caught up and eligible to join; it only
//     moves while the ISR holds at least min(min.insync.replicas, replicas) members, and never back;
//   - a follower joins when it is eligible (registered, unfenced, not shutting down), its log end
//     offset reached the high watermark and the start of the current leader epoch;
//   - an ISR member leaves when it has not been caught up for replica.lag.time.max.ms;
//   - one change is in flight at a time; while a removal is in flight the member still counts.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace weir::broker {

// What a leader does with an AlterPartition error for its ISR change in flight, as Kafka's
// Partition.handleAlterPartitionError: INELIGIBLE_REPLICA and OPERATION_NOT_ATTEMPTED say it was
// not applied (drop it); UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_TOPIC_ID, FENCED_LEADER_EPOCH,
// INVALID_UPDATE_VERSION, INVALID_REQUEST and NEW_LEADER_ELECTED say the leader's view is out of
// date (keep it in flight until new metadata settles it); anything else, a failed request
// included (timeout, no controller), sends it again.
enum class IsrChangeFailure { kNotApplied, kAwaitMetadata, kResend };
[[nodiscard]] IsrChangeFailure classify_isr_change_error(std::int16_t error);

// One member of a proposed ISR, with the broker epoch its fetches carried (-1: unknown).
struct IsrMember {
  std::int32_t broker_id = -1;
  std::int64_t broker_epoch = -1;
};

// An ISR change for the controller (one partition of an AlterPartition request).
struct IsrProposal {
  std::int32_t leader_epoch = -1;
  std::int32_t partition_epoch = -1;
  std::vector<IsrMember> new_isr;
  bool expand = false;  // for the log line
};

class ReplicaTracker {
 public:
  struct Follower {
    std::int32_t id = -1;
    std::int64_t log_end_offset = -1;  // -1: not fetched since this leadership began
    std::int64_t log_start_offset = -1;
    std::int64_t last_caught_up_ms = 0;
    std::int64_t last_fetch_ms = 0;
    std::int64_t last_fetch_leader_log_end = -1;
    std::int64_t broker_epoch = -1;
  };

  // A new leadership (or this node's first view of it): followers start unknown; ISR members are
  // given replica.lag.time.max.ms from now to fetch.
  void reset(std::int32_t self, const std::vector<std::int32_t>& replicas, const std::vector<std::int32_t>& isr,
             std::int32_t leader_epoch, std::int32_t partition_epoch, std::int64_t now_ms);
  // The metadata's view of the same leadership: a partition epoch at or past this one replaces
  // the ISR and replicas (and ends a change in flight, which it answers).
  void update_from_metadata(const std::vector<std::int32_t>& replicas, const std::vector<std::int32_t>& isr,
                            std::int32_t partition_epoch);
  // The controller accepted a change: the ISR and partition epoch it answered.
  void committed(const std::vector<std::int32_t>& isr, std::int32_t partition_epoch);
  // The controller answered that the change in flight was not applied (INELIGIBLE_REPLICA,
  // OPERATION_NOT_ATTEMPTED): the ISR stays as it was.
  void failed() {
    pending_.reset();
    resend_ = false;
  }
  // Any other failure: whether the controller applied the change is not known, so it stays in
  // flight (its members keep counting, Kafka's PendingExpandIsr / PendingShrinkIsr) until the
  // metadata shows the outcome; with `resend` it is sent again by the next lag check (see
  // classify_isr_change_error).
  void unanswered(bool resend) { resend_ = pending_.has_value() && resend; }
  // The change in flight, to send again, once per unanswered(true).
  [[nodiscard]] std::optional<IsrProposal> take_resend();

  // A follower's fetch at fetch_offset while the leader's log ended at leader_log_end. False
  // when `id` is not a replica of the partition.
  bool on_fetch(std::int32_t id, std::int64_t fetch_offset, std::int64_t log_start_offset, std::int64_t broker_epoch,
                std::int64_t now_ms, std::int64_t leader_log_end);

  // The high watermark the followers allow, or nullopt when it must not move (under min ISR).
  // The caller keeps it from going back.
  [[nodiscard]] std::optional<std::int64_t> high_watermark(std::int64_t leader_log_end, std::int64_t now_ms,
                                                           std::int64_t lag_ms, std::int32_t min_insync_replicas,
                                                           const std::function<bool(std::int32_t)>& eligible) const;
  // After follower `id` fetched: the ISR with it added, when it may join now.
  [[nodiscard]] std::optional<IsrProposal> maybe_expand(std::int32_t id, std::int64_t high_watermark,
                                                        std::int64_t epoch_start_offset, bool eligible);
  // The periodic lag check: the ISR without the members that fell behind, when there are any.
  [[nodiscard]] std::optional<IsrProposal> maybe_shrink(std::int64_t leader_log_end, std::int64_t now_ms,
                                                        std::int64_t lag_ms);

  [[nodiscard]] const std::vector<std::int32_t>& isr() const noexcept { return isr_; }
  [[nodiscard]] const std::vector<std::int32_t>& replicas() const noexcept { return replicas_; }
  [[nodiscard]] std::vector<std::int32_t> maximal_isr() const;
  [[nodiscard]] bool in_flight() const noexcept { return pending_.has_value(); }
  [[nodiscard]] std::int32_t partition_epoch() const noexcept { return partition_epoch_; }
  [[nodiscard]] std::int32_t leader_epoch() const noexcept { return leader_epoch_; }
  // acks=all needs this many in-sync replicas: min.insync.replicas, at most the replica count.
  [[nodiscard]] std::int32_t effective_min_isr(std::int32_t min_insync_replicas) const;
  [[nodiscard]] bool under_min_isr(std::int32_t min_insync_replicas) const {
    return static_cast<std::int32_t>(isr_.size()) < effective_min_isr(min_insync_replicas);
  }
  [[nodiscard]] const Follower* follower(std::int32_t id) const;
  [[nodiscard]] const std::vector<Follower>& followers() const noexcept { return followers_; }

 private:
  [[nodiscard]] static bool caught_up(const Follower& f, std::int64_t leader_log_end, std::int64_t now_ms,
                                      std::int64_t lag_ms) {
    return f.log_end_offset == leader_log_end || now_ms - f.last_caught_up_ms <= lag_ms;
  }
  [[nodiscard]] bool in_isr(std::int32_t id) const;
  Follower* find(std::int32_t id);
  IsrProposal propose(std::vector<std::int32_t> isr, bool expand);

  std::int32_t self_ = -1;
  std::vector<std::int32_t> replicas_;
  std::vector<std::int32_t> isr_;
  std::int32_t leader_epoch_ = -1;
  std::int32_t partition_epoch_ = -1;
  std::vector<Follower> followers_;  // every replica but the leader
  std::optional<std::vector<std::int32_t>> pending_;  // the ISR asked for
  bool resend_ = false;
};

}  // namespace weir::broker
