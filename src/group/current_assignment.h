// Reconciliation of one consumer-protocol member towards the group's target assignment (Kafka's
// CurrentAssignmentBuilder). A partition reaches its new owner only once no other member owns it:
// the old owner must first stop reporting it (UNREVOKED_PARTITIONS), and the new owner waits
// for it meanwhile (UNRELEASED_PARTITIONS). Pure: the group is only read.
//
//   STABLE                 at the target epoch: nothing to do; behind it: compute the next step
//   UNREVOKED_PARTITIONS   waits until the owned partitions the member reports exclude every
//                          partition pending revocation, then moves to epoch + 1 and goes on
//   UNRELEASED_PARTITIONS  recomputes: partitions released since are handed over
// A newly assigned partition carries the epoch at which it was given (KIP-1251's assignment
// epochs), a kept one keeps its epoch.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "base/result.h"
#include "group/consumer_group.h"
#include "protocol/gen/consumer_group_heartbeat_request.h"

namespace weir::group {

using OwnedPartitions = std::optional<std::vector<protocol::ConsumerGroupHeartbeatRequest::TopicPartitions>>;

struct ReconcileInput {
  std::int32_t target_epoch = 0;
  const TopicPartitionSet* target = nullptr;
  // Owned partitions reported by the member; nullopt: not reported in this heartbeat.
  const OwnedPartitions* owned = nullptr;
  // Whether the partition is owned by a member other than this one.
  std::function<bool(const Uuid&, std::int32_t)> owned_by_other;
  // When set (the member's subscription just changed), target partitions of other topics are
  // ignored until the target catches up.
  std::optional<std::set<Uuid>> subscribed_topics;
};

enum class ReconcileErrc { kUnknownState };

// The member after one reconciliation step (possibly unchanged). kUnknownState: the member is
// in a state this version does not know and did not report an empty assignment.
Result<ConsumerMember, ReconcileErrc> reconcile(const ConsumerMember& member, const ReconcileInput& in);

// Whether `owned` (nullopt: not reported) is a subset of `assigned` (Kafka's isSubset).
bool owned_is_subset(const OwnedPartitions& owned, const PartitionEpochs& assigned);

}  // namespace weir::group
