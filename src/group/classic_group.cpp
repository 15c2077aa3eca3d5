#include "group/classic_group.h"

#include <algorithm>

#include "base/assert.h"

namespace weir::group {

std::string_view to_string(GroupState state) {
  switch (state) {
    case GroupState::kEmpty: return "Empty";
    case GroupState::kPreparingRebalance: return "PreparingRebalance";
    case GroupState::kCompletingRebalance: return "CompletingRebalance";
    case GroupState::kStable: return "Stable";
    case GroupState::kDead: return "Dead";
  }
  WEIR_UNREACHABLE();
}

const Bytes* Member::metadata_for(std::string_view protocol_name) const {
  for (const Protocol& p : protocols) {
    if (p.name == protocol_name) return &p.metadata;
  }
  return nullptr;
}

void ClassicGroup::transition_to(GroupState next, std::int64_t now_ms) {
  if (next == GroupState::kPreparingRebalance && rebalance_started_ms_ < 0) {  // a re-join mid-rebalance continues it
    rebalance_started_ms_ = now_ms;
  } else if (next == GroupState::kStable && rebalance_started_ms_ >= 0) {
    ++rebalances_;
    last_rebalance_ms_ = now_ms - rebalance_started_ms_;
    rebalance_started_ms_ = -1;
  } else if (next == GroupState::kEmpty || next == GroupState::kDead) {
    rebalance_started_ms_ = -1;
  }
  previous_state_ = state_;
  state_ = next;
  state_timestamp_ms_ = now_ms;
}

Member* ClassicGroup::find(std::string_view member_id) {
  auto it = members_.find(std::string(member_id));
  return it == members_.end() ? nullptr : &it->second;
}

std::optional<std::string> ClassicGroup::static_member_id(std::string_view instance_id) const {
  auto it = static_members_.find(std::string(instance_id));
  if (it == static_members_.end()) return std::nullopt;
  return it->second;
}

void ClassicGroup::add(Member member) {
  WEIR_ASSERT(!members_.contains(member.member_id), "member {} added twice", member.member_id);
  if (members_.empty()) leader_id_ = member.member_id;
  if (member.group_instance_id) static_members_[*member.group_instance_id] = member.member_id;
  std::string id = member.member_id;
  members_.emplace(std::move(id), std::move(member));
}

void ClassicGroup::remove(std::string_view member_id) {
  auto it = members_.find(std::string(member_id));
  if (it == members_.end()) return;
  if (it->second.group_instance_id) static_members_.erase(*it->second.group_instance_id);
  members_.erase(it);
  std::erase(pending_sync, std::string(member_id));
  if (leader_id_ != member_id) return;
  leader_id_.clear();
  if (members_.empty()) return;
  if (!elect_joined_leader()) leader_id_ = members_.begin()->first;
}

Member& ClassicGroup::replace_static_member(std::string_view instance_id,
                                            const std::string& new_member_id) {
  auto old_id = static_member_id(instance_id);
  WEIR_ASSERT(old_id.has_value(), "no static member {}", instance_id);
  auto node = members_.extract(*old_id);
  node.key() = new_member_id;
  node.mapped().member_id = new_member_id;
  members_.insert(std::move(node));
  static_members_[std::string(instance_id)] = new_member_id;
  if (leader_id_ == *old_id) leader_id_ = new_member_id;
  for (std::string& id : pending_sync) {
    if (id == *old_id) id = new_member_id;
  }
  return members_.at(new_member_id);
}

std::size_t ClassicGroup::awaiting_join_count() const {
  return static_cast<std::size_t>(std::ranges::count_if(
      members_, [](const auto& kv) { return kv.second.awaiting_join.has_value(); }));
}

bool ClassicGroup::elect_joined_leader() {
  if (auto it = members_.find(leader_id_); it != members_.end() && it->second.awaiting_join) {
    return true;
  }
  // Kafka prefers a dynamic member that joined over a static one; any joined member will do.
  const Member* chosen = nullptr;
  for (const auto& [id, m] : members_) {
    if (!m.awaiting_join) continue;
    if (chosen == nullptr || (chosen->is_static() && !m.is_static())) chosen = &m;
  }
  if (chosen == nullptr) return false;
  leader_id_ = chosen->member_id;
  return true;
}

bool ClassicGroup::supports_protocols(std::string_view protocol_type,
                                      const std::vector<Protocol>& protocols) const {
  if (protocol_type.empty() || protocols.empty()) return false;
  if (members_.empty()) return true;
  if (!protocol_type_ || *protocol_type_ != protocol_type) return false;
  return std::ranges::any_of(protocols, [&](const Protocol& p) {
    return std::ranges::all_of(members_, [&](const auto& kv) { return kv.second.supports(p.name); });
  });
}

std::string ClassicGroup::select_protocol() const {
  WEIR_ASSERT(!members_.empty());
  // Candidates: protocols every member supports, in the first member's order of preference.
  std::vector<std::string> candidates;
  for (const Protocol& p : members_.begin()->second.protocols) {
    const bool everyone = std::ranges::all_of(
        members_, [&](const auto& kv) { return kv.second.supports(p.name); });
    if (everyone) candidates.push_back(p.name);
  }
  WEIR_ASSERT(!candidates.empty(), "group {} has no common protocol", group_id_);
  std::map<std::string, int> votes;
  for (const auto& [id, m] : members_) {
    for (const Protocol& p : m.protocols) {
      if (std::ranges::find(candidates, p.name) != candidates.end()) {
        ++votes[p.name];
        break;
      }
    }
  }
  std::string best = candidates.front();
  for (const std::string& c : candidates) {
    if (votes[c] > votes[best]) best = c;
  }
  return best;
}

void ClassicGroup::init_next_generation(std::int64_t now_ms) {
  ++generation_id_;
  if (members_.empty()) {
    protocol_name_.reset();
    transition_to(GroupState::kEmpty, now_ms);
  } else {
    protocol_name_ = select_protocol();
    transition_to(GroupState::kCompletingRebalance, now_ms);
  }
}

std::int32_t ClassicGroup::rebalance_timeout_ms() const {
  std::int32_t max_ms = 0;
  for (const auto& [id, m] : members_) max_ms = std::max(max_ms, m.rebalance_timeout_ms);
  return max_ms;
}

void ClassicGroup::restore(std::optional<std::string> protocol_type, std::int32_t generation_id,
                           std::optional<std::string> protocol_name, std::string leader_id,
                           std::int64_t state_timestamp_ms, std::vector<Member> members) {
  members_.clear();
  static_members_.clear();
  pending_members_.clear();
  pending_sync.clear();
  protocol_type_ = std::move(protocol_type);
  generation_id_ = generation_id;
  protocol_name_ = std::move(protocol_name);
  for (Member& m : members) add(std::move(m));
  leader_id_ = members_.empty() ? std::string() : std::move(leader_id);
  state_ = members_.empty() ? GroupState::kEmpty : GroupState::kStable;
  previous_state_ = state_;
  state_timestamp_ms_ = state_timestamp_ms;
  join_deadline_ms = -1;
  initial_join_remaining_ms = -1;
  sync_deadline_ms = -1;
  if (members_.empty()) protocol_name_.reset();
}

void ClassicGroup::check_invariants() const {
  WEIR_ASSERT(leader_id_.empty() == members_.empty(), "group {}: leader '{}' with {} members",
              group_id_, leader_id_, members_.size());
  WEIR_ASSERT(leader_id_.empty() || members_.contains(leader_id_));
  for (const auto& [instance, id] : static_members_) {
    auto it = members_.find(id);
    WEIR_ASSERT(it != members_.end() && it->second.group_instance_id == instance);
  }
}

}  // namespace weir::group
