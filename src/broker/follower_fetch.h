// The follower's side of one partition in a replica fetch, apart from the transport: what it
// asks the leader for, and what it does with the leader's answer. ReplicaFetcher runs these for
// every partition of each Fetch it sends; the deterministic simulation (tests/sim) runs the same
// functions over its own simulated network.
//
// Owner shard only, like the Partition they act on.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "broker/partition.h"

namespace weir::broker {

// Where the follower's next fetch of the partition starts (Fetch's FetchOffset,
// LastFetchedEpoch, LogStartOffset).
struct FollowerPosition {
  std::int64_t fetch_offset = 0;
  std::int32_t last_fetched_epoch = -1;
  std::int64_t log_start_offset = 0;
};
[[nodiscard]] FollowerPosition follower_position(const Partition& p);

// With flush.on.acks.all the follower syncs its log before asking for more: the leader counts
// the data below a fetch offset as the follower's, so it must be durable first.
[[nodiscard]] inline bool follower_must_sync(const Partition& p, bool durable) {
  return durable && p.log().recovery_point() < p.log().log_end_offset();
}

// One partition of the leader's answer.
struct LeaderAnswer {
  std::int16_t error = 0;
  std::int32_t diverging_epoch = -1;  // DivergingEpoch (-1: none)
  std::int64_t diverging_end_offset = -1;
  std::span<const std::byte> records;
  std::int64_t high_watermark = -1;
  std::int64_t log_start_offset = -1;
};

enum class FollowerStep : std::uint8_t {
  kAppended,    // the data (maybe none) is in the log, the high watermark follows the leader's
  kTruncated,   // the log diverged and was truncated where it agrees with the leader's
  kOutOfRange,  // the leader no longer has the fetch offset: ask its log start and end (reset)
  kBackOff,     // an error: wait replica.fetch.backoff.ms before fetching the partition again
};
struct FollowerOutcome {
  FollowerStep step = FollowerStep::kAppended;
  // After an append: nothing is left between this log's end and the leader's high watermark
  // (Kafka's isReplicaInSync, for the follower's replication throttle).
  bool caught_up = false;
  std::int16_t error = 0;  // kBackOff: the partition's or the append's error
  std::string message;     // a failed append's storage error
};
[[nodiscard]] FollowerOutcome apply_leader_answer(Partition& p, const LeaderAnswer& answer);

}  // namespace weir::broker
