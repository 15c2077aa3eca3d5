// UniformAssignor (assignor.h): Kafka 4.3.1's default server-side assignor, in its two builders.
//
// Homogeneous (every member subscribes to the same topics): each member has a quota of
// total / members partitions, and total % members of them one more. Walking the members in
// order, a member keeps what it owns up to its quota and gives back the rest; a member that
// cannot fill an extra slot from what it owns passes the slot on while enough members remain to
// take the remaining extra slots, so members already holding one more keep it. Then the free
// partitions (never owned, or given back, in that order) fill the members below quota in order.
//
// Heterogeneous: members keep every owned partition they still subscribe to; the free partitions
// go, topic by topic, to the topic's least loaded subscribers; then, topic by topic, partitions
// move from the topic's most loaded subscribers to its least loaded ones until their counts
// differ by at most one. Topics are taken by partitions per subscriber (descending), then
// subscriber count (ascending), then topic id; members tie by their index in the spec. The
// balancing rounds repeat until a full round moves nothing, at most 16 rounds (overlapping
// subscriptions may converge slowly; the result is then nearly balanced).
#include <algorithm>
#include <cstddef>
#include <numeric>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "base/assert.h"
#include "group/assignor.h"

namespace weir::group {
namespace {

using Partitions = std::set<std::int32_t>;
using MemberTarget = std::map<Uuid, Partitions>;

GroupAssignment to_group_assignment(const std::vector<AssignmentMemberSpec>& members,
                                    std::vector<MemberTarget>& targets) {
  GroupAssignment result;
  for (std::size_t i = 0; i < members.size(); ++i) {
    auto& out = result[members[i].member_id];
    for (auto& [topic_id, partitions] : targets[i]) {
      if (partitions.empty()) continue;
      out.emplace(topic_id, std::vector<std::int32_t>(partitions.begin(), partitions.end()));
    }
  }
  return result;
}

// ---- homogeneous ----

Result<GroupAssignment, AssignorErrc> assign_homogeneous(const AssignmentGroupSpec& spec,
                                                         const SubscribedTopicDescriber& topics) {
  const auto& members = spec.members;
  // Kafka copies the first member's subscription into a HashSet and walks that set.
  const std::vector<Uuid> subscribed = detail::java_hash_set_copy_order(members.front().subscribed_topic_ids);
  if (subscribed.empty()) return GroupAssignment{};
  const std::unordered_set<Uuid> subscribed_set(subscribed.begin(), subscribed.end());

  std::unordered_map<Uuid, std::unordered_set<std::int32_t>> owned;
  for (const auto& m : members) {
    for (const auto& tp : m.current_assignment) owned[tp.topic_id].insert(tp.partitions.begin(), tp.partitions.end());
  }

  std::vector<std::pair<Uuid, std::int32_t>> free_partitions;
  std::int64_t total = 0;
  for (const auto& topic_id : subscribed) {
    const auto count = topics.partition_count(topic_id);
    if (!count) return unexpected(AssignorErrc::kSubscribedTopicNotFound);
    const auto it = owned.find(topic_id);
    for (std::int32_t p = 0; p < *count; ++p) {
      if (it == owned.end() || !it->second.contains(p)) free_partitions.emplace_back(topic_id, p);
    }
    total += *count;
  }

  const auto member_count = static_cast<std::int64_t>(members.size());
  const std::int64_t min_quota = total / member_count;
  std::int64_t extra_left = total % member_count;

  std::vector<MemberTarget> targets(members.size());
  std::vector<std::pair<std::size_t, std::int64_t>> unfilled;  // member index, room left
  for (std::size_t i = 0; i < members.size(); ++i) {
    std::int64_t quota = min_quota;
    bool takes_extra = false;
    if (extra_left > 0) {
      ++quota;
      takes_extra = true;
    }
    for (const auto& tp : members[i].current_assignment) {
      if (!subscribed_set.contains(tp.topic_id)) continue;
      auto& kept = targets[i][tp.topic_id];
      for (std::int32_t p : tp.partitions) {
        // Kafka keeps a whole topic that fits and walks it partition by partition otherwise;
        // both keep the first `quota` partitions in iteration order.
        if (quota > 0) {
          --quota;
          kept.insert(p);
        } else {
          free_partitions.emplace_back(tp.topic_id, p);
        }
      }
    }
    // Could not fill the extra slot from owned partitions: leave it to a later member while the
    // members from this one on outnumber the extra slots left.
    if (quota > 0 && takes_extra && member_count - static_cast<std::int64_t>(i) > extra_left) {
      --quota;
      takes_extra = false;
    }
    if (quota > 0) unfilled.emplace_back(i, quota);
    if (takes_extra) --extra_left;
  }

  std::size_t next_free = 0;
  for (auto [i, room] : unfilled) {
    for (std::int64_t k = 0; k < room && next_free < free_partitions.size(); ++k, ++next_free) {
      const auto& [topic_id, p] = free_partitions[next_free];
      targets[i][topic_id].insert(p);
    }
  }
  if (next_free < free_partitions.size()) return unexpected(AssignorErrc::kPartitionsLeftUnassigned);
  return to_group_assignment(members, targets);
}

// ---- heterogeneous ----

class HeterogeneousBuilder;

// Hands out the least loaded and takes from the most loaded members of one topic's subscribers,
// keeping two ranges over the subscribers sorted by load: [0, least_end) all started at
// least_count, [most_start, most_end) all started at most_count. Each range is walked round
// robin and grows when every member in it has moved one step; the topic is balanced once the two
// levels are within one.
class LoadBalancer {
 public:
  explicit LoadBalancer(const std::vector<std::int32_t>& sizes) : sizes_(sizes) {}

  // Starts over with `members` (not empty); returns the spread between the most and least loaded.
  std::int32_t reset(const std::vector<std::int32_t>& members) {
    WEIR_ASSERT(!members.empty());
    sorted_ = members;
    std::sort(sorted_.begin(), sorted_.end(), [this](std::int32_t a, std::int32_t b) {
      return sizes_[a] != sizes_[b] ? sizes_[a] < sizes_[b] : a < b;
    });
    const auto n = static_cast<std::int32_t>(sorted_.size());
    least_end_ = 0;
    least_count_ = size_at(0) - 1;
    next_least_ = 0;
    most_start_ = n;
    most_end_ = n;
    most_count_ = size_at(n - 1) + 1;
    next_most_ = n - 1;
    return size_at(n - 1) - size_at(0);
  }

  // The member to receive the next partition (assumed given to it).
  std::int32_t next_least_loaded() {
    if (next_least_ >= least_end_) {
      ++least_count_;
      while (least_end_ < static_cast<std::int32_t>(sorted_.size()) && size_at(least_end_) == least_count_) {
        ++least_end_;
      }
      next_least_ = 0;
    }
    return sorted_[next_least_++];
  }

  // The member to give up the next partition (assumed taken from it), or -1 if none is left.
  std::int32_t next_most_loaded() {
    if (next_most_ < most_start_) {
      if (most_end_ <= most_start_ && most_start_ > 0) {
        // Every member of the range was excluded: restart from the level just below it, or
        // the range would not grow and we would return a member outside it.
        most_count_ = size_at(most_start_ - 1);
      } else {
        --most_count_;
      }
      while (most_start_ > 0 && size_at(most_start_ - 1) == most_count_) --most_start_;
      next_most_ = most_end_ - 1;
    }
    if (next_most_ < 0) return -1;
    return sorted_[next_most_--];
  }

  // Drops the member next_most_loaded() just returned from the most loaded range (it has none
  // of the topic's partitions to give) by swapping it past the range's end.
  void exclude_last_most_loaded() {
    std::swap(sorted_[next_most_ + 1], sorted_[most_end_ - 1]);
    --most_end_;
  }

  [[nodiscard]] bool balanced() const { return most_count_ - least_count_ <= 1; }

 private:
  [[nodiscard]] std::int32_t size_at(std::int32_t pos) const { return sizes_[sorted_[pos]]; }

  const std::vector<std::int32_t>& sizes_;  // live: the builder updates it as partitions move
  std::vector<std::int32_t> sorted_;
  std::int32_t least_end_ = 0;
  std::int32_t least_count_ = -1;
  std::int32_t next_least_ = 0;
  std::int32_t most_start_ = 0;
  std::int32_t most_end_ = 0;
  std::int32_t most_count_ = 1;
  std::int32_t next_most_ = -1;
};

class HeterogeneousBuilder {
 public:
  HeterogeneousBuilder(const AssignmentGroupSpec& spec, const SubscribedTopicDescriber& topics)
      : members_(spec.members), topics_(topics), sizes_(members_.size(), 0), targets_(members_.size()) {}

  Result<GroupAssignment, AssignorErrc> build() {
    for (std::size_t i = 0; i < members_.size(); ++i) {
      for (const auto& topic_id : members_[i].subscribed_topic_ids) {
        auto [it, inserted] = topics_info_.try_emplace(topic_id);
        if (inserted) {
          const auto count = topics_.partition_count(topic_id);
          if (!count) return unexpected(AssignorErrc::kSubscribedTopicNotFound);
          it->second.partition_count = *count;
          it->second.owners.assign(static_cast<std::size_t>(*count), -1);
        }
        it->second.subscribers.push_back(static_cast<std::int32_t>(i));
      }
    }
    if (topics_info_.empty()) return GroupAssignment{};

    if (auto kept = keep_subscribed_partitions(); !kept) return unexpected(kept.error());
    assign_free_partitions();
    balance();
    return to_group_assignment(members_, targets_);
  }

 private:
  struct TopicInfo {
    std::int32_t partition_count = 0;
    std::vector<std::int32_t> subscribers;  // member indices, ascending
    std::vector<std::int32_t> owners;       // per partition: member index, -1 if free
  };

  Status<AssignorErrc> keep_subscribed_partitions() {
    for (std::size_t i = 0; i < members_.size(); ++i) {
      const auto& subscribed = members_[i].subscribed_topic_ids;
      for (const auto& tp : members_[i].current_assignment) {
        if (std::find(subscribed.begin(), subscribed.end(), tp.topic_id) == subscribed.end()) continue;
        auto& info = topics_info_.at(tp.topic_id);
        for (std::int32_t p : tp.partitions) {
          if (p < 0 || p >= info.partition_count) return unexpected(AssignorErrc::kPartitionOutOfRange);
          info.owners[static_cast<std::size_t>(p)] = static_cast<std::int32_t>(i);
          targets_[i][tp.topic_id].insert(p);
        }
        // Kafka counts the owned set's size, so a partition owned twice counts for both owners.
        sizes_[i] += static_cast<std::int32_t>(tp.partitions.size());
      }
    }
    return {};
  }

  // Partitions per subscriber descending, then subscriber count ascending, then topic id (Java order).
  [[nodiscard]] std::vector<Uuid> sorted_topics(std::vector<Uuid> ids) const {
    std::sort(ids.begin(), ids.end(), [this](const Uuid& a, const Uuid& b) {
      const auto& ta = topics_info_.at(a);
      const auto& tb = topics_info_.at(b);
      const auto sa = static_cast<double>(ta.subscribers.size());
      const auto sb = static_cast<double>(tb.subscribers.size());
      const double ra = ta.partition_count / sa;
      const double rb = tb.partition_count / sb;
      if (ra != rb) return ra > rb;
      if (sa != sb) return sa < sb;
      return java_uuid_less(a, b);
    });
    return ids;
  }

  void assign_free_partitions() {
    std::vector<Uuid> with_free;
    for (const auto& [topic_id, info] : topics_info_) {
      if (std::find(info.owners.begin(), info.owners.end(), -1) != info.owners.end()) with_free.push_back(topic_id);
    }
    LoadBalancer balancer(sizes_);
    for (const auto& topic_id : sorted_topics(std::move(with_free))) {
      const auto& info = topics_info_.at(topic_id);
      balancer.reset(info.subscribers);
      for (std::int32_t p = 0; p < info.partition_count; ++p) {
        if (info.owners[static_cast<std::size_t>(p)] == -1) move_partition(topic_id, p, balancer.next_least_loaded());
      }
    }
  }

  void balance() {
    std::vector<Uuid> shared;  // only topics with two or more subscribers can move
    for (const auto& [topic_id, info] : topics_info_) {
      if (info.subscribers.size() >= 2) shared.push_back(topic_id);
    }
    if (shared.empty()) return;
    const auto order = sorted_topics(std::move(shared));
    LoadBalancer balancer(sizes_);
    constexpr int kMaxRounds = 16;
    std::optional<std::size_t> last_moved;  // the last topic that moved anything (or the first tried)
    for (int round = 0; round < kMaxRounds; ++round) {
      for (std::size_t t = 0; t < order.size(); ++t) {
        if (last_moved == t) return;  // a whole round since the last move: nothing more will move
        const std::int32_t moved = balance_topic(order[t], balancer);
        if (moved > 0 || !last_moved) last_moved = t;
      }
    }
  }

  std::int32_t balance_topic(const Uuid& topic_id, LoadBalancer& balancer) {
    const auto& info = topics_info_.at(topic_id);
    if (balancer.reset(info.subscribers) <= 1) return 0;

    // The topic's partitions grouped by owner (ascending partition within an owner), and each
    // owner's slice of that list, so an owner's last partition is found in constant time.
    std::vector<std::int32_t> partitions(static_cast<std::size_t>(info.partition_count));
    std::iota(partitions.begin(), partitions.end(), 0);
    std::stable_sort(partitions.begin(), partitions.end(), [&](std::int32_t a, std::int32_t b) {
      return info.owners[static_cast<std::size_t>(a)] < info.owners[static_cast<std::size_t>(b)];
    });
    std::unordered_map<std::int32_t, std::int32_t> slice_start;
    std::unordered_map<std::int32_t, std::int32_t> slice_end;
    for (std::size_t i = 0; i < partitions.size(); ++i) {
      const std::int32_t owner = info.owners[static_cast<std::size_t>(partitions[i])];
      slice_start.try_emplace(owner, static_cast<std::int32_t>(i));
      slice_end[owner] = static_cast<std::int32_t>(i + 1);
    }

    std::int32_t moved = 0;
    while (!balancer.balanced()) {
      std::int32_t giver = -1;
      for (;;) {
        giver = balancer.next_most_loaded();
        if (giver == -1) break;
        auto end = slice_end.find(giver);
        if (end != slice_end.end() && end->second - slice_start.at(giver) > 0) break;
        balancer.exclude_last_most_loaded();
      }
      if (giver == -1) break;  // no loaded subscriber has a partition of this topic left to give

      const std::int32_t partition = partitions[static_cast<std::size_t>(--slice_end[giver])];
      const std::int32_t taker = balancer.next_least_loaded();
      if (balancer.balanced()) break;
      move_partition(topic_id, partition, taker);
      ++moved;
    }
    return moved;
  }

  void move_partition(const Uuid& topic_id, std::int32_t partition, std::int32_t member) {
    auto& owner = topics_info_.at(topic_id).owners[static_cast<std::size_t>(partition)];
    if (owner != -1) {
      auto& previous = targets_[static_cast<std::size_t>(owner)];
      auto it = previous.find(topic_id);
      if (it != previous.end()) {
        it->second.erase(partition);
        if (it->second.empty()) previous.erase(it);
      }
      --sizes_[static_cast<std::size_t>(owner)];
    }
    targets_[static_cast<std::size_t>(member)][topic_id].insert(partition);
    owner = member;
    ++sizes_[static_cast<std::size_t>(member)];
  }

  const std::vector<AssignmentMemberSpec>& members_;
  const SubscribedTopicDescriber& topics_;
  std::unordered_map<Uuid, TopicInfo> topics_info_;
  std::vector<std::int32_t> sizes_;  // partitions per member in the target
  std::vector<MemberTarget> targets_;
};

}  // namespace

Result<GroupAssignment, AssignorErrc> UniformAssignor::assign(const AssignmentGroupSpec& spec,
                                                              const SubscribedTopicDescriber& topics) const {
  if (spec.members.empty()) return GroupAssignment{};
  if (spec.subscription_type == SubscriptionType::kHomogeneous) return assign_homogeneous(spec, topics);
  return HeterogeneousBuilder(spec, topics).build();
}

}  // namespace weir::group
