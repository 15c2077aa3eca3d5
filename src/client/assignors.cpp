#include "client/assignors.h"

#include <algorithm>
#include <deque>
#include <set>

namespace weir::client {

namespace {

// Kafka's MemberInfo order: members with a group instance id first (by it), then by member id.
bool member_before(const GroupMemberSubscription& a, const GroupMemberSubscription& b) {
  if (a.group_instance_id && b.group_instance_id) return *a.group_instance_id < *b.group_instance_id;
  if (a.group_instance_id.has_value() != b.group_instance_id.has_value()) return a.group_instance_id.has_value();
  return a.member_id < b.member_id;
}

bool subscribes(const GroupMemberSubscription& m, const std::string& topic) {
  return std::ranges::find(m.subscription.topics, topic) != m.subscription.topics.end();
}

GroupAssignment empty_assignment(const std::vector<GroupMemberSubscription>& members) {
  GroupAssignment out;
  for (const auto& m : members) out[m.member_id];
  return out;
}

void sort_each(GroupAssignment& a) {
  for (auto& [member, partitions] : a) std::ranges::sort(partitions);
}

// The generation a member's owned partitions belong to: the subscription's field (v2+), else
// the cooperative-sticky user data, else -1 (Kafka's DEFAULT_GENERATION).
std::int32_t owned_generation(const ConsumerSubscription& s) {
  if (s.generation_id) return *s.generation_id;
  if (!s.user_data) return -1;
  return decode_generation_user_data(*s.user_data).value_or(-1);
}

// Each member's owned partitions that still count: of an existing partition of a topic it
// subscribes to, and not claimed by another member of a higher generation. Partitions claimed
// by two members of the same generation count for neither and are listed in `contested`.
struct Claims {
  std::map<std::string, std::vector<TopicPartition>> owned;
  std::set<TopicPartition> contested;
};

Claims valid_claims(const PartitionCounts& topics, const std::vector<GroupMemberSubscription>& members) {
  Claims c;
  std::map<TopicPartition, std::string> claimed_by;
  std::map<std::string, std::int32_t> generation;
  for (const auto& m : members) generation[m.member_id] = owned_generation(m.subscription);
  for (const auto& m : members) {
    auto& mine = c.owned[m.member_id];
    for (const auto& tp : m.subscription.owned_partitions) {
      const auto count = topics.find(tp.first);
      if (count == topics.end() || tp.second < 0 || tp.second >= count->second || !subscribes(m, tp.first)) continue;
      if (std::ranges::find(mine, tp) != mine.end()) continue;
      const auto other = claimed_by.find(tp);
      if (other == claimed_by.end()) {
        mine.push_back(tp);
        claimed_by[tp] = m.member_id;
        continue;
      }
      const std::int32_t theirs = generation[other->second];
      auto& their_list = c.owned[other->second];
      if (generation[m.member_id] == theirs) {
        c.contested.insert(tp);
        std::erase(their_list, tp);
        other->second = m.member_id;
      } else if (generation[m.member_id] > theirs) {
        mine.push_back(tp);
        std::erase(their_list, tp);
        other->second = m.member_id;
      }
    }
  }
  for (auto& [member, list] : c.owned) {
    std::erase_if(list, [&](const TopicPartition& tp) { return c.contested.contains(tp); });
  }
  return c;
}

// Every member subscribes to the same topics.
bool same_subscriptions(const std::vector<GroupMemberSubscription>& members) {
  if (members.empty()) return true;
  const std::set<std::string> first(members[0].subscription.topics.begin(), members[0].subscription.topics.end());
  return std::ranges::all_of(members, [&](const GroupMemberSubscription& m) {
    return std::set<std::string>(m.subscription.topics.begin(), m.subscription.topics.end()) == first;
  });
}

// Kafka's constrained sticky assignment (all subscriptions equal): members keep up to their
// quota (floor or ceil of partitions / members) of what they own, the rest is handed round-robin
// to the members still under quota.
GroupAssignment constrained_sticky(const PartitionCounts& topics, const std::vector<GroupMemberSubscription>& members,
                                   const Claims& claims) {
  GroupAssignment out = empty_assignment(members);
  std::vector<TopicPartition> all;
  for (const auto& topic : members[0].subscription.topics) {
    const auto count = topics.find(topic);
    if (count == topics.end()) continue;
    for (std::int32_t p = 0; p < count->second; ++p) all.emplace_back(topic, p);
  }
  std::ranges::sort(all);
  all.erase(std::unique(all.begin(), all.end()), all.end());
  const auto n = static_cast<std::int64_t>(members.size());
  const auto total = static_cast<std::int64_t>(all.size());
  const std::int64_t min_quota = total / n;
  const std::int64_t max_quota = (total + n - 1) / n;
  const std::int64_t expected_over_min = total % n;
  std::int64_t over_min = 0;

  std::vector<std::string> under_min;
  std::deque<std::string> at_min;
  std::set<TopicPartition> assigned;
  for (const auto& [member, owned_list] : claims.owned) {
    std::vector<TopicPartition> owned = owned_list;
    // Kept in partition order across topics, as Kafka keeps them.
    std::ranges::sort(owned, [](const TopicPartition& a, const TopicPartition& b) {
      return a.second != b.second ? a.second < b.second : a.first < b.first;
    });
    auto& mine = out[member];
    const auto keep = [&](std::int64_t k) {
      mine.insert(mine.end(), owned.begin(), owned.begin() + k);
      assigned.insert(owned.begin(), owned.begin() + k);
    };
    const auto size = static_cast<std::int64_t>(owned.size());
    if (size < min_quota) {
      keep(size);
      under_min.push_back(member);
    } else if (size >= max_quota && over_min < expected_over_min) {
      ++over_min;
      if (over_min == expected_over_min) at_min.clear();
      keep(max_quota);
    } else {
      keep(min_quota);
      if (over_min < expected_over_min) at_min.push_back(member);
    }
  }

  std::vector<TopicPartition> unassigned;
  for (const auto& tp : all) {
    if (!assigned.contains(tp)) unassigned.push_back(tp);
  }
  std::ranges::sort(under_min);
  std::ranges::sort(at_min);
  std::size_t next = 0;
  for (const auto& tp : unassigned) {
    std::string member;
    bool from_under_min = false;
    if (next < under_min.size()) {
      member = under_min[next++];
      from_under_min = true;
    } else if (under_min.empty()) {
      if (at_min.empty()) break;  // more partitions than quotas: cannot happen
      member = at_min.front();
      at_min.pop_front();
    } else {
      next = 0;
      member = under_min[next++];
      from_under_min = true;
    }
    auto& mine = out[member];
    mine.push_back(tp);
    const auto count = static_cast<std::int64_t>(mine.size());
    if (count == min_quota && from_under_min) {
      under_min.erase(under_min.begin() + static_cast<std::ptrdiff_t>(--next));
      at_min.push_back(member);
    } else if (count == max_quota) {
      ++over_min;
    }
  }
  return out;
}

// Sticky assignment for members with different subscriptions: each keeps what it owns; the
// other partitions go, those with the fewest possible members first, to the member subscribed
// to their topic that has the fewest; then partitions move from members with more to members
// with two or more fewer that subscribe to their topic until none can.
GroupAssignment general_sticky(const PartitionCounts& topics, const std::vector<GroupMemberSubscription>& members,
                               const Claims& claims) {
  GroupAssignment out = empty_assignment(members);
  std::map<std::string, std::vector<std::string>> eligible;  // topic -> members, by id
  for (const auto& m : members) {
    for (const auto& t : m.subscription.topics) {
      if (topics.contains(t) && std::ranges::find(eligible[t], m.member_id) == eligible[t].end()) {
        eligible[t].push_back(m.member_id);
      }
    }
  }
  for (auto& [t, list] : eligible) std::ranges::sort(list);
  std::set<TopicPartition> assigned;
  for (const auto& [member, owned] : claims.owned) {
    out[member] = owned;
    assigned.insert(owned.begin(), owned.end());
  }
  std::vector<TopicPartition> unassigned;
  for (const auto& [topic, list] : eligible) {
    for (std::int32_t p = 0; p < topics.at(topic); ++p) {
      if (!assigned.contains({topic, p})) unassigned.emplace_back(topic, p);
    }
  }
  std::ranges::stable_sort(unassigned, [&](const TopicPartition& a, const TopicPartition& b) {
    return eligible[a.first].size() < eligible[b.first].size();
  });
  const auto fewest = [&](const std::string& topic, std::size_t below) -> const std::string* {
    const std::string* best = nullptr;
    for (const auto& m : eligible[topic]) {
      if (out[m].size() >= below) continue;
      if (best == nullptr || out[m].size() < out[*best].size()) best = &m;
    }
    return best;
  };
  for (const auto& tp : unassigned) {
    if (const std::string* m = fewest(tp.first, SIZE_MAX)) out[*m].push_back(tp);
  }
  for (;;) {
    std::vector<std::string> by_size;
    for (const auto& [member, list] : out) by_size.push_back(member);
    std::ranges::stable_sort(by_size,
                             [&](const std::string& a, const std::string& b) { return out[a].size() > out[b].size(); });
    bool moved = false;
    for (const auto& from : by_size) {
      auto& list = out[from];
      if (list.size() < 2) break;
      const auto& kept = claims.owned.contains(from) ? claims.owned.at(from) : std::vector<TopicPartition>{};
      // Partitions the member did not own before move first.
      std::vector<std::size_t> order(list.size());
      for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::ranges::stable_sort(order, [&](std::size_t a, std::size_t b) {
        const bool a_new = std::ranges::find(kept, list[a]) == kept.end();
        const bool b_new = std::ranges::find(kept, list[b]) == kept.end();
        return a_new && !b_new;
      });
      for (const std::size_t i : order) {
        const TopicPartition tp = list[i];
        const std::string* to = fewest(tp.first, list.size() - 1);
        if (to == nullptr) continue;
        out[*to].push_back(tp);
        list.erase(list.begin() + static_cast<std::ptrdiff_t>(i));
        moved = true;
        break;
      }
      if (moved) break;
    }
    if (!moved) break;
  }
  return out;
}

}  // namespace

GroupAssignment assign_range(const PartitionCounts& topics, const std::vector<GroupMemberSubscription>& members) {
  GroupAssignment out = empty_assignment(members);
  std::vector<const GroupMemberSubscription*> ordered;
  for (const auto& m : members) ordered.push_back(&m);
  std::ranges::sort(ordered, [](const auto* a, const auto* b) { return member_before(*a, *b); });
  for (const auto& [topic, count] : topics) {
    std::vector<const GroupMemberSubscription*> consumers;
    for (const auto* m : ordered) {
      if (subscribes(*m, topic)) consumers.push_back(m);
    }
    if (consumers.empty() || count <= 0) continue;
    const auto n = static_cast<std::int32_t>(consumers.size());
    const std::int32_t per = count / n;
    const std::int32_t extra = count % n;
    for (std::int32_t i = 0; i < n; ++i) {
      const std::int32_t start = per * i + std::min(i, extra);
      const std::int32_t length = per + (i < extra ? 1 : 0);
      for (std::int32_t p = start; p < start + length; ++p) out[consumers[i]->member_id].emplace_back(topic, p);
    }
  }
  sort_each(out);
  return out;
}

GroupAssignment assign_cooperative_sticky(const PartitionCounts& topics,
                                          const std::vector<GroupMemberSubscription>& members) {
  if (members.empty()) return {};
  std::vector<GroupMemberSubscription> sorted = members;
  std::ranges::sort(sorted, {}, &GroupMemberSubscription::member_id);
  const Claims claims = valid_claims(topics, sorted);
  GroupAssignment out =
      same_subscriptions(sorted) ? constrained_sticky(topics, sorted, claims) : general_sticky(topics, sorted, claims);

  // Cooperative: a partition some member gives up (it claimed it and its new assignment lacks
  // it) is not given to another member in the same rebalance.
  std::set<TopicPartition> given_up;
  for (const auto& m : sorted) {
    const auto& now = out[m.member_id];
    for (const auto& tp : m.subscription.owned_partitions) {
      if (std::ranges::find(now, tp) == now.end()) given_up.insert(tp);
    }
  }
  for (auto& [member, list] : out) {
    const auto& kept = claims.owned.at(member);
    std::erase_if(list, [&](const TopicPartition& tp) {
      return given_up.contains(tp) && std::ranges::find(kept, tp) == kept.end();
    });
  }
  sort_each(out);
  return out;
}

bool is_known_assignor(std::string_view name) { return name == kRangeAssignor || name == kCooperativeStickyAssignor; }

GroupAssignment assign(std::string_view assignor, const PartitionCounts& topics,
                       const std::vector<GroupMemberSubscription>& members) {
  if (assignor == kCooperativeStickyAssignor) return assign_cooperative_sticky(topics, members);
  return assign_range(topics, members);
}

}  // namespace weir::client
