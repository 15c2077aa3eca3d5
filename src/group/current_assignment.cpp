#include "group/current_assignment.h"

namespace weir::group {

namespace {

// Whether the member still reports any of `partitions` (not reporting counts as owning).
bool owns_any(const OwnedPartitions& owned, const PartitionEpochs& partitions) {
  if (!owned) return true;
  for (const auto& tp : *owned) {
    auto it = partitions.find(tp.topic_id);
    if (it == partitions.end()) continue;
    for (std::int32_t p : tp.partitions) {
      if (it->second.contains(p)) return true;
    }
  }
  return false;
}

ConsumerMember with_epoch(const ConsumerMember& m, std::int32_t epoch) {
  ConsumerMember out = m;
  out.previous_member_epoch = m.member_epoch;
  out.member_epoch = epoch;
  return out;
}

ConsumerMember next_assignment(const ConsumerMember& member, std::int32_t epoch, const ReconcileInput& in) {
  const TopicPartitionSet empty;
  const TopicPartitionSet& target = in.target ? *in.target : empty;
  PartitionEpochs assigned;
  PartitionEpochs pending_revocation;
  PartitionEpochs pending_assignment;
  bool unreleased = false;

  std::set<Uuid> topics;
  for (const auto& [t, parts] : target) topics.insert(t);
  for (const auto& [t, parts] : member.assigned) topics.insert(t);
  for (const Uuid& topic : topics) {
    std::set<std::int32_t> wanted;
    if (auto it = target.find(topic); it != target.end()) {
      if (!in.subscribed_topics || in.subscribed_topics->contains(topic)) wanted = it->second;
    }
    if (auto it = member.assigned.find(topic); it != member.assigned.end()) {
      for (const auto& [p, e] : it->second) {
        if (wanted.contains(p)) {
          assigned[topic][p] = e;
        } else {
          pending_revocation[topic][p] = e;
        }
      }
    }
    for (std::int32_t p : wanted) {
      if (assigned.contains(topic) && assigned[topic].contains(p)) continue;
      if (in.owned_by_other && in.owned_by_other(topic, p)) {
        unreleased = true;
        continue;
      }
      pending_assignment[topic][p] = in.target_epoch;
    }
  }

  if (!pending_revocation.empty() && owns_any(*in.owned, pending_revocation)) {
    ConsumerMember out = with_epoch(member, epoch);
    out.state = MemberState::kUnrevokedPartitions;
    out.assigned = std::move(assigned);
    out.pending_revocation = std::move(pending_revocation);
    return out;
  }
  for (auto& [topic, parts] : pending_assignment) assigned[topic].insert(parts.begin(), parts.end());
  ConsumerMember out = with_epoch(member, in.target_epoch);
  out.state = unreleased ? MemberState::kUnreleasedPartitions : MemberState::kStable;
  out.assigned = std::move(assigned);
  out.pending_revocation.clear();
  return out;
}

}  // namespace

bool owned_is_subset(const OwnedPartitions& owned, const PartitionEpochs& assigned) {
  if (!owned) return false;
  for (const auto& tp : *owned) {
    auto it = assigned.find(tp.topic_id);
    if (it == assigned.end()) return false;
    for (std::int32_t p : tp.partitions) {
      if (!it->second.contains(p)) return false;
    }
  }
  return true;
}

Result<ConsumerMember, ReconcileErrc> reconcile(const ConsumerMember& member, const ReconcileInput& in) {
  static const OwnedPartitions kNotReported;
  ReconcileInput input = in;
  if (input.owned == nullptr) input.owned = &kNotReported;
  ConsumerMember out = member;
  switch (member.state) {
    case MemberState::kStable:
      if (member.member_epoch == input.target_epoch) return member;
      out = next_assignment(member, member.member_epoch, input);
      break;
    case MemberState::kUnrevokedPartitions:
      if (owns_any(*input.owned, member.pending_revocation)) return member;
      out = next_assignment(member, member.member_epoch + 1, input);
      break;
    case MemberState::kUnreleasedPartitions:
      out = next_assignment(member, member.member_epoch, input);
      break;
    case MemberState::kUnknown:
      if (!*input.owned || !(*input.owned)->empty()) return unexpected(ReconcileErrc::kUnknownState);
      out = next_assignment(member, input.target_epoch, input);
      break;
  }
  return out;
}

}  // namespace weir::group
