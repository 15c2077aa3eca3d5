#include "group/consumer_group.h"

#include <algorithm>

#include "base/assert.h"
#include "group/assignor.h"
#include "protocol/gen/consumer_group_current_member_assignment_key.h"
#include "protocol/gen/consumer_group_current_member_assignment_value.h"
#include "protocol/gen/consumer_group_member_metadata_key.h"
#include "protocol/gen/consumer_group_member_metadata_value.h"
#include "protocol/gen/consumer_group_metadata_key.h"
#include "protocol/gen/consumer_group_metadata_value.h"
#include "protocol/gen/consumer_group_partition_metadata_key.h"
#include "protocol/gen/consumer_group_regular_expression_key.h"
#include "protocol/gen/consumer_group_regular_expression_value.h"
#include "protocol/gen/consumer_group_target_assignment_member_key.h"
#include "protocol/gen/consumer_group_target_assignment_member_value.h"
#include "protocol/gen/consumer_group_target_assignment_metadata_key.h"
#include "protocol/gen/consumer_group_target_assignment_metadata_value.h"

namespace weir::group {

namespace p = weir::protocol;

// ---- TopicImage ---------------------------------------------------------------------------

void TopicImage::add_topic(std::string name, Uuid id, std::int32_t partition_count,
                           std::vector<std::vector<std::string>> partition_racks) {
  WEIR_ASSERT(partition_count > 0, "topic {} with {} partitions", name, partition_count);
  WEIR_ASSERT(partition_racks.size() <= static_cast<std::size_t>(partition_count),
              "topic {}: racks for {} of {} partitions", name, partition_racks.size(), partition_count);
  names_[id] = name;
  by_name_[name] = Topic{id, name, partition_count, std::move(partition_racks)};
}

const TopicImage::Topic* TopicImage::by_name(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &it->second;
}

const TopicImage::Topic* TopicImage::by_id(const Uuid& id) const {
  auto it = names_.find(id);
  return it == names_.end() ? nullptr : by_name(it->second);
}

// ---- States -------------------------------------------------------------------------------

std::string_view to_string(MemberState s) {
  switch (s) {
    case MemberState::kStable:
      return "STABLE";
    case MemberState::kUnrevokedPartitions:
      return "UNREVOKED_PARTITIONS";
    case MemberState::kUnreleasedPartitions:
      return "UNRELEASED_PARTITIONS";
    case MemberState::kUnknown:
      return "UNKNOWN";
  }
  return "UNKNOWN";
}

std::string_view to_string(ConsumerGroupState s) {
  switch (s) {
    case ConsumerGroupState::kEmpty:
      return "Empty";
    case ConsumerGroupState::kAssigning:
      return "Assigning";
    case ConsumerGroupState::kReconciling:
      return "Reconciling";
    case ConsumerGroupState::kStable:
      return "Stable";
    case ConsumerGroupState::kDead:
      return "Dead";
  }
  return "Dead";
}

TopicPartitionSet partitions_of(const PartitionEpochs& p) {
  TopicPartitionSet out;
  for (const auto& [topic, parts] : p) {
    auto& s = out[topic];
    for (const auto& [partition, epoch] : parts) s.insert(partition);
  }
  return out;
}

bool ConsumerMember::same_subscription_record(const ConsumerMember& o) const {
  return instance_id == o.instance_id && rack_id == o.rack_id && rebalance_timeout_ms == o.rebalance_timeout_ms &&
         client_id == o.client_id && client_host == o.client_host &&
         subscribed_topic_names == o.subscribed_topic_names && subscribed_topic_regex == o.subscribed_topic_regex &&
         server_assignor == o.server_assignor && classic == o.classic;
}

bool ConsumerMember::same_assignment_record(const ConsumerMember& o) const {
  return member_epoch == o.member_epoch && previous_member_epoch == o.previous_member_epoch && state == o.state &&
         assigned == o.assigned && pending_revocation == o.pending_revocation;
}

// ---- ConsumerGroup ------------------------------------------------------------------------

const ConsumerMember* ConsumerGroup::member(const std::string& member_id) const {
  auto it = members_.find(member_id);
  return it == members_.end() ? nullptr : &it->second;
}

const ConsumerMember* ConsumerGroup::static_member(const std::string& instance_id) const {
  auto it = static_members_.find(instance_id);
  return it == static_members_.end() ? nullptr : member(it->second);
}

const TopicPartitionSet& ConsumerGroup::target_of(const std::string& member_id) const {
  static const TopicPartitionSet kEmpty;
  auto it = target_.find(member_id);
  return it == target_.end() ? kEmpty : it->second;
}

ConsumerGroupState ConsumerGroup::state() const {
  if (members_.empty()) return ConsumerGroupState::kEmpty;
  if (group_epoch_ > assignment_epoch_) return ConsumerGroupState::kAssigning;
  for (const auto& [id, m] : members_) {
    if (!m.reconciled_to(assignment_epoch_)) return ConsumerGroupState::kReconciling;
  }
  return ConsumerGroupState::kStable;
}

std::set<std::string> ConsumerGroup::subscribed_topic_names() const {
  std::set<std::string> out;
  for (const auto& [id, m] : members_) out.insert(m.subscribed_topic_names.begin(), m.subscribed_topic_names.end());
  for (const auto& [regex, resolved] : resolved_regexes_) out.insert(resolved.topics.begin(), resolved.topics.end());
  return out;
}

std::set<std::string> ConsumerGroup::member_topic_names(const ConsumerMember& m) const {
  std::set<std::string> out(m.subscribed_topic_names.begin(), m.subscribed_topic_names.end());
  if (const ResolvedRegex* r = m.subscribed_topic_regex.empty() ? nullptr : resolved_regex(m.subscribed_topic_regex)) {
    out.insert(r->topics.begin(), r->topics.end());
  }
  return out;
}

const ResolvedRegex* ConsumerGroup::resolved_regex(const std::string& regex) const {
  auto it = resolved_regexes_.find(regex);
  return it == resolved_regexes_.end() ? nullptr : &it->second;
}

std::size_t ConsumerGroup::regex_subscribers(const std::string& regex) const {
  if (regex.empty()) return 0;
  return static_cast<std::size_t>(
      std::ranges::count_if(members_, [&](const auto& e) { return e.second.subscribed_topic_regex == regex; }));
}

std::map<std::string, std::size_t> ConsumerGroup::subscribed_regexes() const {
  std::map<std::string, std::size_t> out;
  for (const auto& [id, m] : members_) {
    if (!m.subscribed_topic_regex.empty()) ++out[m.subscribed_topic_regex];
  }
  return out;
}

void ConsumerGroup::apply_group_epoch(std::optional<std::pair<std::int32_t, std::int64_t>> epoch_and_hash) {
  WEIR_ASSERT(epoch_and_hash.has_value(), "group epoch tombstones are handled by the caller");
  group_epoch_ = epoch_and_hash->first;
  metadata_hash_ = epoch_and_hash->second;
}

void ConsumerGroup::apply_member_subscription(const std::string& member_id, const ConsumerMember* subscription) {
  if (subscription == nullptr) {
    auto it = members_.find(member_id);
    if (it == members_.end()) return;
    remove_owners(it->second);
    if (it->second.instance_id) {
      auto s = static_members_.find(*it->second.instance_id);
      if (s != static_members_.end() && s->second == member_id) static_members_.erase(s);
    }
    members_.erase(it);
    return;
  }
  auto [it, inserted] = members_.try_emplace(member_id);
  ConsumerMember& m = it->second;
  if (inserted) m.member_id = member_id;
  if (m.instance_id && m.instance_id != subscription->instance_id) static_members_.erase(*m.instance_id);
  m.instance_id = subscription->instance_id;
  m.rack_id = subscription->rack_id;
  m.rebalance_timeout_ms = subscription->rebalance_timeout_ms;
  m.client_id = subscription->client_id;
  m.client_host = subscription->client_host;
  m.subscribed_topic_names = subscription->subscribed_topic_names;
  m.subscribed_topic_regex = subscription->subscribed_topic_regex;
  m.server_assignor = subscription->server_assignor;
  m.classic = subscription->classic;
  if (m.instance_id) static_members_[*m.instance_id] = member_id;
}

void ConsumerGroup::apply_target_metadata(std::optional<std::pair<std::int32_t, std::int64_t>> epoch_and_timestamp) {
  if (!epoch_and_timestamp) {
    assignment_epoch_ = -1;  // as Kafka: a deleted group's assignment epoch
    assignment_timestamp_ms_ = 0;
    return;
  }
  assignment_epoch_ = epoch_and_timestamp->first;
  assignment_timestamp_ms_ = epoch_and_timestamp->second;
}

void ConsumerGroup::apply_target_member(const std::string& member_id, const TopicPartitionSet* target) {
  if (target == nullptr) {
    target_.erase(member_id);
  } else {
    target_[member_id] = *target;
  }
}

void ConsumerGroup::apply_current_assignment(const std::string& member_id, const ConsumerMember* assignment) {
  auto [it, inserted] = members_.try_emplace(member_id);
  ConsumerMember& m = it->second;
  if (inserted) m.member_id = member_id;
  remove_owners(m);
  if (assignment == nullptr) {
    // The member is leaving: it owns nothing any more (its type 5 tombstone follows).
    m.member_epoch = kLeaveGroupMemberEpoch;
    m.previous_member_epoch = kLeaveGroupMemberEpoch;
    m.state = MemberState::kStable;
    m.assigned.clear();
    m.pending_revocation.clear();
    return;
  }
  m.member_epoch = assignment->member_epoch;
  m.previous_member_epoch = assignment->previous_member_epoch;
  m.state = assignment->state;
  m.assigned = assignment->assigned;
  m.pending_revocation = assignment->pending_revocation;
  add_owners(m);
}

void ConsumerGroup::apply_regex(const std::string& regex, const ResolvedRegex* resolved) {
  if (resolved == nullptr) {
    resolved_regexes_.erase(regex);
  } else {
    resolved_regexes_[regex] = *resolved;
  }
}

void ConsumerGroup::remove_owners(const ConsumerMember& m) {
  for (const PartitionEpochs* set : {&m.assigned, &m.pending_revocation}) {
    for (const auto& [topic, parts] : *set) {
      for (const auto& [partition, epoch] : parts) {
        auto it = owners_.find({topic, partition});
        if (it != owners_.end() && it->second == m.member_id) owners_.erase(it);
      }
    }
  }
}

void ConsumerGroup::add_owners(const ConsumerMember& m) {
  for (const PartitionEpochs* set : {&m.assigned, &m.pending_revocation}) {
    for (const auto& [topic, parts] : *set) {
      for (const auto& [partition, epoch] : parts) {
        auto [it, fresh] = owners_.try_emplace({topic, partition}, m.member_id);
        WEIR_ASSERT(fresh || it->second == m.member_id, "group {}: partition {}-{} owned by {} and by {}", group_id_,
                    topic.to_string(), partition, it->second, m.member_id);
      }
    }
  }
}

// ---- Records ------------------------------------------------------------------------------

bool is_consumer_record_type(std::int16_t key_version) {
  return (key_version >= 3 && key_version <= 8) || key_version == 16;
}

namespace consumer_records {
namespace {

constexpr std::int16_t kValueVersion = 0;

template <class Key>
Bytes encode_key(ConsumerRecordType type, const Key& k) {
  Bytes key;
  p::Writer w(key);
  w.i16(static_cast<std::int16_t>(type));
  k.encode(w, 0);
  return key;
}

template <class Value>
Bytes encode_value(const Value& v) {
  Bytes value;
  p::Writer w(value);
  w.i16(kValueVersion);
  v.encode(w, kValueVersion);
  return value;
}

Bytes group_key(ConsumerRecordType type, const std::string& group_id) {
  switch (type) {
    case ConsumerRecordType::kGroupMetadata: {
      p::ConsumerGroupMetadataKey k;
      k.group_id = group_id;
      return encode_key(type, k);
    }
    case ConsumerRecordType::kPartitionMetadata: {
      p::ConsumerGroupPartitionMetadataKey k;
      k.group_id = group_id;
      return encode_key(type, k);
    }
    case ConsumerRecordType::kTargetAssignmentMetadata: {
      p::ConsumerGroupTargetAssignmentMetadataKey k;
      k.group_id = group_id;
      return encode_key(type, k);
    }
    default:
      break;
  }
  WEIR_UNREACHABLE("record type {} is not keyed by group", static_cast<int>(type));
}

template <class Key>
Bytes member_key(ConsumerRecordType type, const std::string& group_id, const std::string& member_id) {
  Key k;
  k.group_id = group_id;
  k.member_id = member_id;
  return encode_key(type, k);
}

Bytes regex_key(const std::string& group_id, const std::string& regex) {
  p::ConsumerGroupRegularExpressionKey k;
  k.group_id = group_id;
  k.regular_expression = regex;
  return encode_key(ConsumerRecordType::kRegularExpression, k);
}

// Topics in the order Kafka's HashMap<Uuid, ...> iterates them; partitions ascending.
std::vector<Uuid> topic_order(const auto& by_topic) {
  std::vector<Uuid> ids;
  for (const auto& [topic, parts] : by_topic) ids.push_back(topic);
  return java_hash_order(std::move(ids));
}

std::vector<p::ConsumerGroupCurrentMemberAssignmentValue::TopicPartitions> with_epochs(const PartitionEpochs& p) {
  std::vector<p::ConsumerGroupCurrentMemberAssignmentValue::TopicPartitions> out;
  for (const Uuid& topic : topic_order(p)) {
    auto& tp = out.emplace_back();
    tp.topic_id = topic;
    tp.assignment_epochs.emplace();
    for (const auto& [partition, epoch] : p.at(topic)) {
      tp.partitions.push_back(partition);
      tp.assignment_epochs->push_back(epoch);
    }
  }
  return out;
}

}  // namespace

Record group_epoch(const std::string& group_id, std::int32_t epoch, std::int64_t metadata_hash) {
  p::ConsumerGroupMetadataValue v;
  v.epoch = epoch;
  v.metadata_hash = metadata_hash;
  return Record{group_key(ConsumerRecordType::kGroupMetadata, group_id), encode_value(v)};
}

Record group_epoch_tombstone(const std::string& group_id) {
  return Record{group_key(ConsumerRecordType::kGroupMetadata, group_id), std::nullopt};
}

Record partition_metadata_tombstone(const std::string& group_id) {
  return Record{group_key(ConsumerRecordType::kPartitionMetadata, group_id), std::nullopt};
}

Record member_subscription(const std::string& group_id, const ConsumerMember& m) {
  p::ConsumerGroupMemberMetadataValue v;
  v.instance_id = m.instance_id;
  v.rack_id = m.rack_id;
  v.client_id = m.client_id;
  v.client_host = m.client_host;
  v.subscribed_topic_names = m.subscribed_topic_names;  // sorted, as Kafka writes them
  v.subscribed_topic_regex = m.subscribed_topic_regex;
  v.rebalance_timeout_ms = m.rebalance_timeout_ms;
  v.server_assignor = m.server_assignor;
  v.classic_member_metadata = std::nullopt;
  if (m.classic) {
    auto& c = v.classic_member_metadata.emplace();
    c.session_timeout_ms = m.classic->session_timeout_ms;
    for (const Protocol& proto : m.classic->protocols) {
      auto& cp = c.supported_protocols.emplace_back();
      cp.name = proto.name;
      cp.metadata = proto.metadata;
    }
  }
  return Record{
      member_key<p::ConsumerGroupMemberMetadataKey>(ConsumerRecordType::kMemberMetadata, group_id, m.member_id),
      encode_value(v)};
}

Record member_subscription_tombstone(const std::string& group_id, const std::string& member_id) {
  return Record{member_key<p::ConsumerGroupMemberMetadataKey>(ConsumerRecordType::kMemberMetadata, group_id, member_id),
                std::nullopt};
}

Record target_metadata(const std::string& group_id, std::int32_t epoch, std::int64_t timestamp_ms) {
  p::ConsumerGroupTargetAssignmentMetadataValue v;
  v.assignment_epoch = epoch;
  v.assignment_timestamp = timestamp_ms;
  return Record{group_key(ConsumerRecordType::kTargetAssignmentMetadata, group_id), encode_value(v)};
}

Record target_metadata_tombstone(const std::string& group_id) {
  return Record{group_key(ConsumerRecordType::kTargetAssignmentMetadata, group_id), std::nullopt};
}

Record target_member(const std::string& group_id, const std::string& member_id, const TopicPartitionSet& target) {
  p::ConsumerGroupTargetAssignmentMemberValue v;
  for (const Uuid& topic : topic_order(target)) {
    auto& tp = v.topic_partitions.emplace_back();
    tp.topic_id = topic;
    const auto& parts = target.at(topic);
    tp.partitions.assign(parts.begin(), parts.end());
  }
  return Record{member_key<p::ConsumerGroupTargetAssignmentMemberKey>(ConsumerRecordType::kTargetAssignmentMember,
                                                                      group_id, member_id),
                encode_value(v)};
}

Record target_member_tombstone(const std::string& group_id, const std::string& member_id) {
  return Record{member_key<p::ConsumerGroupTargetAssignmentMemberKey>(ConsumerRecordType::kTargetAssignmentMember,
                                                                      group_id, member_id),
                std::nullopt};
}

Record current_assignment(const std::string& group_id, const ConsumerMember& m) {
  p::ConsumerGroupCurrentMemberAssignmentValue v;
  v.member_epoch = m.member_epoch;
  v.previous_member_epoch = m.previous_member_epoch;
  v.state = static_cast<std::int8_t>(m.state);
  v.assigned_partitions = with_epochs(m.assigned);
  v.partitions_pending_revocation = with_epochs(m.pending_revocation);
  return Record{member_key<p::ConsumerGroupCurrentMemberAssignmentKey>(ConsumerRecordType::kCurrentMemberAssignment,
                                                                       group_id, m.member_id),
                encode_value(v)};
}

Record current_assignment_tombstone(const std::string& group_id, const std::string& member_id) {
  return Record{member_key<p::ConsumerGroupCurrentMemberAssignmentKey>(ConsumerRecordType::kCurrentMemberAssignment,
                                                                       group_id, member_id),
                std::nullopt};
}

Record regex(const std::string& group_id, const std::string& regex, const ResolvedRegex& resolved) {
  p::ConsumerGroupRegularExpressionValue v;
  v.topics.assign(resolved.topics.begin(), resolved.topics.end());  // sorted, as Kafka writes them
  v.version = resolved.version;
  v.timestamp = resolved.timestamp_ms;
  return Record{regex_key(group_id, regex), encode_value(v)};
}

Record regex_tombstone(const std::string& group_id, const std::string& regex) {
  return Record{regex_key(group_id, regex), std::nullopt};
}

}  // namespace consumer_records

// ---- Replay -------------------------------------------------------------------------------

namespace {

// Reads a value's int16 version and the struct (version 0; newer versions read as 0 with their
// tagged fields kept unknown, as the generated decoder does).
template <class Value>
bool decode_value(std::span<const std::uint8_t> bytes, Value& v) {
  p::Reader r(bytes);
  const std::int16_t version = r.i16();
  if (!r.ok() || version < 0) return false;
  v.decode(r, std::min(version, Value::kMaxVersion));
  return r.ok();
}

PartitionEpochs read_epochs(const std::vector<p::ConsumerGroupCurrentMemberAssignmentValue::TopicPartitions>& tps,
                            std::int32_t default_epoch) {
  PartitionEpochs out;
  for (const auto& tp : tps) {
    const bool have_epochs = tp.assignment_epochs && tp.assignment_epochs->size() == tp.partitions.size();
    auto& parts = out[tp.topic_id];
    for (std::size_t i = 0; i < tp.partitions.size(); ++i) {
      // Records written before 4.3 carry no epochs: Kafka uses the member epoch then.
      parts[tp.partitions[i]] = have_epochs ? (*tp.assignment_epochs)[i] : default_epoch;
    }
  }
  return out;
}

ConsumerGroup& group_for(std::map<std::string, ConsumerGroup>& groups, const std::string& group_id) {
  return groups.try_emplace(group_id, group_id).first->second;
}

}  // namespace

Status<ReplayError> replay_consumer_record(std::map<std::string, ConsumerGroup>& groups, std::int16_t type,
                                           p::Reader& kr, std::optional<std::span<const std::uint8_t>> value) {
  auto key_done = [&] { return kr.ok() && kr.remaining() == 0; };
  switch (static_cast<ConsumerRecordType>(type)) {
    case ConsumerRecordType::kGroupMetadata: {
      p::ConsumerGroupMetadataKey k;
      k.decode(kr, 0);
      if (!key_done()) return unexpected(ReplayError::kMalformedKey);
      if (!value) {
        groups.erase(k.group_id);
        return {};
      }
      p::ConsumerGroupMetadataValue v;
      if (!decode_value(*value, v)) return unexpected(ReplayError::kMalformedValue);
      group_for(groups, k.group_id).apply_group_epoch(std::pair{v.epoch, v.metadata_hash});
      return {};
    }
    case ConsumerRecordType::kPartitionMetadata: {
      // 4.3 writes only its tombstone; of one an older Kafka wrote, only its presence counts.
      p::ConsumerGroupPartitionMetadataKey k;
      k.decode(kr, 0);
      if (!key_done()) return unexpected(ReplayError::kMalformedKey);
      if (value) {
        group_for(groups, k.group_id).apply_partition_metadata(true);
      } else if (auto it = groups.find(k.group_id); it != groups.end()) {
        it->second.apply_partition_metadata(false);
      }
      return {};
    }
    case ConsumerRecordType::kRegularExpression: {
      p::ConsumerGroupRegularExpressionKey k;
      k.decode(kr, 0);
      if (!key_done()) return unexpected(ReplayError::kMalformedKey);
      if (!value) {
        auto it = groups.find(k.group_id);
        if (it != groups.end()) it->second.apply_regex(k.regular_expression, nullptr);
        return {};
      }
      p::ConsumerGroupRegularExpressionValue v;
      if (!decode_value(*value, v)) return unexpected(ReplayError::kMalformedValue);
      ResolvedRegex resolved;
      resolved.topics.insert(v.topics.begin(), v.topics.end());
      resolved.version = v.version;
      resolved.timestamp_ms = v.timestamp;
      group_for(groups, k.group_id).apply_regex(k.regular_expression, &resolved);
      return {};
    }
    case ConsumerRecordType::kMemberMetadata: {
      p::ConsumerGroupMemberMetadataKey k;
      k.decode(kr, 0);
      if (!key_done()) return unexpected(ReplayError::kMalformedKey);
      if (!value) {
        auto it = groups.find(k.group_id);
        if (it != groups.end()) it->second.apply_member_subscription(k.member_id, nullptr);
        return {};
      }
      p::ConsumerGroupMemberMetadataValue v;
      if (!decode_value(*value, v)) return unexpected(ReplayError::kMalformedValue);
      ConsumerMember m;
      m.instance_id = v.instance_id;
      m.rack_id = v.rack_id;
      m.rebalance_timeout_ms = v.rebalance_timeout_ms;
      m.client_id = v.client_id;
      m.client_host = v.client_host;
      m.subscribed_topic_names = v.subscribed_topic_names;
      std::ranges::sort(m.subscribed_topic_names);
      m.subscribed_topic_regex = v.subscribed_topic_regex.value_or("");
      m.server_assignor = v.server_assignor;
      if (v.classic_member_metadata) {
        auto& c = m.classic.emplace();
        c.session_timeout_ms = v.classic_member_metadata->session_timeout_ms;
        for (const auto& cp : v.classic_member_metadata->supported_protocols) {
          c.protocols.push_back(Protocol{cp.name, cp.metadata});
        }
      }
      group_for(groups, k.group_id).apply_member_subscription(k.member_id, &m);
      return {};
    }
    case ConsumerRecordType::kTargetAssignmentMetadata: {
      p::ConsumerGroupTargetAssignmentMetadataKey k;
      k.decode(kr, 0);
      if (!key_done()) return unexpected(ReplayError::kMalformedKey);
      if (!value) {
        auto it = groups.find(k.group_id);
        if (it != groups.end()) it->second.apply_target_metadata(std::nullopt);
        return {};
      }
      p::ConsumerGroupTargetAssignmentMetadataValue v;
      if (!decode_value(*value, v)) return unexpected(ReplayError::kMalformedValue);
      group_for(groups, k.group_id).apply_target_metadata(std::pair{v.assignment_epoch, v.assignment_timestamp});
      return {};
    }
    case ConsumerRecordType::kTargetAssignmentMember: {
      p::ConsumerGroupTargetAssignmentMemberKey k;
      k.decode(kr, 0);
      if (!key_done()) return unexpected(ReplayError::kMalformedKey);
      if (!value) {
        auto it = groups.find(k.group_id);
        if (it != groups.end()) it->second.apply_target_member(k.member_id, nullptr);
        return {};
      }
      p::ConsumerGroupTargetAssignmentMemberValue v;
      if (!decode_value(*value, v)) return unexpected(ReplayError::kMalformedValue);
      TopicPartitionSet target;
      for (const auto& tp : v.topic_partitions) target[tp.topic_id].insert(tp.partitions.begin(), tp.partitions.end());
      group_for(groups, k.group_id).apply_target_member(k.member_id, &target);
      return {};
    }
    case ConsumerRecordType::kCurrentMemberAssignment: {
      p::ConsumerGroupCurrentMemberAssignmentKey k;
      k.decode(kr, 0);
      if (!key_done()) return unexpected(ReplayError::kMalformedKey);
      if (!value) {
        auto it = groups.find(k.group_id);
        if (it != groups.end()) it->second.apply_current_assignment(k.member_id, nullptr);
        return {};
      }
      p::ConsumerGroupCurrentMemberAssignmentValue v;
      if (!decode_value(*value, v)) return unexpected(ReplayError::kMalformedValue);
      ConsumerMember m;
      m.member_id = k.member_id;
      m.member_epoch = v.member_epoch;
      m.previous_member_epoch = v.previous_member_epoch;
      m.state = static_cast<MemberState>(v.state);
      if (m.state != MemberState::kStable && m.state != MemberState::kUnrevokedPartitions &&
          m.state != MemberState::kUnreleasedPartitions) {
        m.state = MemberState::kUnknown;
      }
      m.assigned = read_epochs(v.assigned_partitions, v.member_epoch);
      m.pending_revocation = read_epochs(v.partitions_pending_revocation, v.member_epoch);
      group_for(groups, k.group_id).apply_current_assignment(k.member_id, &m);
      return {};
    }
  }
  return unexpected(ReplayError::kUnknownKeyVersion);
}

}  // namespace weir::group
