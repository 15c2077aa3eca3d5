// RangeAssignor (assignor.h): Kafka 4.3.1's range assignment for the consumer protocol.
//
// For each topic, its subscribers in the sorted member order receive consecutive ranges: each
// gets partitions / subscribers, and the first partitions % subscribers of them one more. A member
// whose range would be empty gets no entry for that topic. Members sort static first (by instance
// id), then dynamic (by member id), so a static member bounced under a new member id keeps its
// place and its ranges.
#include <algorithm>
#include <cstddef>
#include <unordered_map>

#include "group/assignor.h"

namespace weir::group {
namespace {

struct TopicRanges {
  std::int32_t partition_count = 0;
  std::int32_t subscriber_count = 0;
  std::int32_t next_start = 0;
  std::int32_t extra_left = -1;  // members still owed one partition above the minimum; -1: not computed

  // The next subscriber's range [start, end); empty once the partitions ran out.
  std::pair<std::int32_t, std::int32_t> next_range() {
    if (extra_left < 0) extra_left = partition_count % subscriber_count;
    std::int32_t size = partition_count / subscriber_count;
    if (extra_left > 0) {
      ++size;
      --extra_left;
    }
    const std::int32_t start = next_start;
    next_start = std::min(start + size, partition_count);
    return {start, next_start};
  }
};

// Kafka compares ids with String.compareTo (UTF-16 units); byte order is the same for every id
// that has no character above U+FFFF, which covers the ids clients generate. Stable, as Java's
// List.sort is: members that tie (a shared instance id) keep their spec order.
std::vector<const AssignmentMemberSpec*> sorted_members(const AssignmentGroupSpec& spec) {
  std::vector<const AssignmentMemberSpec*> members;
  members.reserve(spec.members.size());
  for (const auto& m : spec.members) members.push_back(&m);
  std::stable_sort(members.begin(), members.end(), [](const AssignmentMemberSpec* a, const AssignmentMemberSpec* b) {
    if (a->instance_id && b->instance_id) return *a->instance_id < *b->instance_id;
    if (a->instance_id || b->instance_id) return a->instance_id.has_value();
    return a->member_id < b->member_id;
  });
  return members;
}

void add_range(TopicRanges& topic, const Uuid& topic_id, std::map<Uuid, std::vector<std::int32_t>>& assignment) {
  auto [start, end] = topic.next_range();
  if (start >= end) return;
  auto& partitions = assignment[topic_id];
  for (std::int32_t p = start; p < end; ++p) partitions.push_back(p);
}

}  // namespace

Result<GroupAssignment, AssignorErrc> RangeAssignor::assign(const AssignmentGroupSpec& spec,
                                                            const SubscribedTopicDescriber& topics) const {
  GroupAssignment result;
  if (spec.members.empty()) return result;
  const auto members = sorted_members(spec);

  // Homogeneous groups take the first sorted member's subscription for everyone; heterogeneous
  // ones count subscribers per topic. Either way a topic's ranges are handed out in member order.
  std::unordered_map<Uuid, TopicRanges> ranges;
  const bool homogeneous = spec.subscription_type == SubscriptionType::kHomogeneous;
  for (const auto* member : members) {
    for (const auto& topic_id : member->subscribed_topic_ids) {
      auto it = ranges.find(topic_id);
      if (it == ranges.end()) {
        const auto count = topics.partition_count(topic_id);
        if (!count) return unexpected(AssignorErrc::kSubscribedTopicNotFound);
        it = ranges.emplace(topic_id, TopicRanges{*count, 0, 0, -1}).first;
      }
      it->second.subscriber_count =
          homogeneous ? static_cast<std::int32_t>(members.size()) : it->second.subscriber_count + 1;
    }
    if (homogeneous) break;
  }

  for (const auto* member : members) {
    auto& assignment = result[member->member_id];
    const auto& subscribed = homogeneous ? members.front()->subscribed_topic_ids : member->subscribed_topic_ids;
    for (const auto& topic_id : subscribed) add_range(ranges.at(topic_id), topic_id, assignment);
  }
  return result;
}

}  // namespace weir::group
