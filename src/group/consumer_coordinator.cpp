#include "group/consumer_coordinator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "base/assert.h"
#include "group/assignor.h"
#include "group/current_assignment.h"
#include "group/metadata_hash.h"
#include "group/topic_regex.h"
#include "protocol/consumer_protocol.h"

namespace weir::group {

namespace p = weir::protocol;

namespace {

constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();

std::string join(const std::vector<std::string>& v, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i > 0) out += sep;
    out += v[i];
  }
  return out;
}

// Kafka's Utils.throwIfEmptyString: a present string that is blank after trimming.
bool blank(const std::optional<std::string>& s) {
  return s && std::ranges::all_of(*s, [](char c) { return static_cast<unsigned char>(c) <= ' '; });
}

std::set<Uuid> topic_ids(const std::set<std::string>& names, const TopicImage& topics) {
  std::set<Uuid> out;
  for (const std::string& name : names) {
    if (const TopicImage::Topic* t = topics.by_name(name)) out.insert(t->id);
  }
  return out;
}

// Kafka's REGEX_BATCH_REFRESH_MIN_INTERVAL_MS: the regexes of a group are resolved at most once
// in this time, whatever asks for it.
constexpr std::int64_t kRegexRefreshMinIntervalMs = 10000;

// Kafka's lastResolvedRegularExpressionRefreshTimeMs / lastResolvedRegularExpressionVersion: of
// one resolved regex (they are resolved together, so all carry the same), or Long.MIN_VALUE / 0.
std::int64_t last_regex_refresh_ms(const ConsumerGroup& g) {
  const auto& r = g.resolved_regexes();
  return r.empty() ? std::numeric_limits<std::int64_t>::min() : r.begin()->second.timestamp_ms;
}

std::int64_t last_regex_version(const ConsumerGroup& g) {
  const auto& r = g.resolved_regexes();
  return r.empty() ? 0 : r.begin()->second.version;
}

}  // namespace

// One event on one group: records are applied to the coordinator's group as they are emitted
// (a group that did not exist is made empty first); commit() keeps the result and hands back the
// records. An event dropped without commit() puts the group back as it was: a copy is taken before
// its first record, so an event that emits nothing (most heartbeats) copies nothing.
class ConsumerGroupCoordinator::Event {
 public:
  Event(ConsumerGroupCoordinator& owner, const std::string& group_id, std::int64_t now_ms)
      : owner_(owner), group_id_(group_id), now_ms_(now_ms) {
    existed_ = owner.groups_.contains(group_id);
    if (!existed_) owner.groups_.emplace(group_id, ConsumerGroup(group_id));
  }
  ~Event() {
    if (committed_) return;
    if (backup_) {
      owner_.groups_.insert_or_assign(group_id_, std::move(*backup_));
    } else if (!existed_) {
      owner_.groups_.erase(group_id_);
    }
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  // The group as the records emitted so far left it (not to be called once a record deleted it).
  ConsumerGroup& group() {
    auto it = owner_.groups_.find(group_id_);
    WEIR_ASSERT(it != owner_.groups_.end(), "group {} used after its deletion", group_id_);
    return it->second;
  }
  bool existed() const { return existed_; }
  // The metadata hash of the group's subscribed topics now (Kafka's computeMetadataHash).
  std::int64_t metadata_hash(const TopicImage& topics) {
    return group::metadata_hash(group().subscribed_topic_names(), topics, owner_.topic_hashes_);
  }
  // Kafka's setMetadataRefreshDeadline: the group's hash is known for this image at its epoch now.
  void metadata_refreshed(const TopicImage& topics) {
    owner_.metadata_refreshes_[group_id_] = MetadataRefresh{topics.version(), group().group_epoch()};
  }
  std::vector<Record>& records() { return records_; }

  void emit(Record r) {
    if (existed_ && !backup_) {
      if (auto it = owner_.groups_.find(group_id_); it != owner_.groups_.end()) backup_.emplace(it->second);
    }
    p::Reader kr(r.key);
    const std::int16_t type = kr.i16();
    std::optional<std::span<const std::uint8_t>> value;
    if (r.value) value = std::span<const std::uint8_t>(*r.value);
    auto ok = replay_consumer_record(owner_.groups_, type, kr, value);
    WEIR_ASSERT(ok.has_value(), "a record the coordinator wrote does not replay");
    records_.push_back(std::move(r));
  }

  // Keeps the group (or its deletion) and hands back the records.
  std::vector<Record> commit() {
    committed_ = true;
    backup_.reset();
    if (!owner_.groups_.contains(group_id_)) owner_.metadata_refreshes_.erase(group_id_);
    return std::move(records_);
  }

  std::int64_t now_ms() const { return now_ms_; }

 private:
  ConsumerGroupCoordinator& owner_;
  std::string group_id_;
  std::int64_t now_ms_;
  std::optional<ConsumerGroup> backup_;  // the group before the first record, to put back
  bool existed_ = false;
  bool committed_ = false;
  std::vector<Record> records_;
};

namespace {

// Kafka's ConsumerGroup.subscriptionType: homogeneous when every member subscribes to the same
// names and no regex, or every member to the same regex and no name (and no topic is in two
// resolved regexes).
SubscriptionType subscription_type(const ConsumerGroup& g) {
  struct Count {
    std::size_t by_name = 0;
    std::size_t by_regex = 0;
  };
  std::map<std::string, Count> counts;
  for (const auto& [id, m] : g.members()) {
    for (const auto& name : m.subscribed_topic_names) ++counts[name].by_name;
  }
  for (const auto& [regex, resolved] : g.resolved_regexes()) {
    for (const auto& name : resolved.topics) ++counts[name].by_regex;
  }
  const std::size_t members = g.members().size();
  const auto regexes = g.subscribed_regexes();
  if (regexes.empty()) {
    for (const auto& [name, c] : counts) {
      if (c.by_name != members) return SubscriptionType::kHeterogeneous;
    }
    return SubscriptionType::kHomogeneous;
  }
  // One regex all members subscribe to (a member has at most one, so there is no other).
  if (regexes.begin()->second != members) return SubscriptionType::kHeterogeneous;
  for (const auto& [name, c] : counts) {
    if (c.by_regex != 1 || c.by_name > 0) return SubscriptionType::kHeterogeneous;
  }
  return SubscriptionType::kHomogeneous;
}

// Kafka's computePreferredServerAssignor: the assignor most members name, else the default.
std::string preferred_assignor(const ConsumerGroup& g, const std::vector<std::string>& configured) {
  std::map<std::string, int> counts;
  for (const auto& [id, m] : g.members()) {
    if (m.server_assignor) ++counts[*m.server_assignor];
  }
  std::vector<std::string> names;
  for (const auto& [name, n] : counts) names.push_back(name);
  std::string best;
  int best_count = 0;
  for (const std::string& name : java_hash_order(names)) {
    if (counts[name] > best_count) {
      best = name;
      best_count = counts[name];
    }
  }
  if (best_count > 0) return best;
  return configured.empty() ? std::string(UniformAssignor::kName) : configured.front();
}

void fence_member(ConsumerGroupCoordinator::Event& ev, const std::string& member_id, const TopicImage* topics);

}  // namespace

ConsumerGroupCoordinator::ConsumerGroupCoordinator(ConsumerGroupConfig config, std::uint64_t seed)
    : config_(std::move(config)) {
  if (seed != 0) {
    rng_.seed(seed);
  } else {
    std::random_device rd;
    rng_.seed((static_cast<std::uint64_t>(rd()) << 32) ^ rd());
  }
}

const ConsumerGroup* ConsumerGroupCoordinator::group(const std::string& group_id) const {
  auto it = groups_.find(group_id);
  return it == groups_.end() ? nullptr : &it->second;
}

const ConsumerGroupCoordinator::MemberTimers* ConsumerGroupCoordinator::timers(const std::string& group_id,
                                                                               const std::string& member_id) const {
  auto g = timers_.find(group_id);
  if (g == timers_.end()) return nullptr;
  auto m = g->second.find(member_id);
  return m == g->second.end() ? nullptr : &m->second;
}

GroupError ConsumerGroupCoordinator::validate(const p::ConsumerGroupHeartbeatRequest& req, std::int16_t version) const {
  auto invalid = [](std::string m) { return GroupError{Error::kInvalidRequest, std::move(m)}; };
  if ((version >= 1 || req.member_epoch > 0 || req.member_epoch == kLeaveGroupMemberEpoch) && blank(req.member_id)) {
    return invalid("MemberId can't be empty.");
  }
  if (blank(req.group_id)) return invalid("GroupId can't be empty.");
  if (blank(req.instance_id)) return invalid("InstanceId can't be empty.");
  if (blank(req.rack_id)) return invalid("RackId can't be empty.");
  if (req.member_epoch == 0) {
    if (req.rebalance_timeout_ms == -1) return invalid("RebalanceTimeoutMs must be provided in first request.");
    if (!req.topic_partitions || !req.topic_partitions->empty()) {
      return invalid("TopicPartitions must be empty when (re-)joining.");
    }
    if (!req.subscribed_topic_names && !req.subscribed_topic_regex) {
      return invalid("Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining.");
    }
  } else if (req.member_epoch == kLeaveGroupStaticMemberEpoch) {
    if (!req.instance_id) return invalid("InstanceId can't be null.");
  } else if (req.member_epoch < kLeaveGroupStaticMemberEpoch) {
    return invalid("MemberEpoch is invalid.");
  }
  if (req.server_assignor && std::ranges::find(config_.assignors, *req.server_assignor) == config_.assignors.end()) {
    return GroupError{Error::kUnsupportedAssignor,
                      fmt::format("ServerAssignor {} is not supported. Supported assignors: {}.", *req.server_assignor,
                                  join(config_.assignors, ", "))};
  }
  return {};
}

namespace {

using Checked = Result<const ConsumerMember*, GroupError>;

GroupError error(Error code, std::string message) { return GroupError{code, std::move(message)}; }

// Kafka's throwIfConsumerGroupMemberEpochIsInvalid; kNone when the epoch is acceptable.
GroupError check_epoch(const ConsumerMember& m, std::int32_t received, const OwnedPartitions& owned) {
  if (received == 0) return {};  // 4.3.1: a rejoin at epoch 0 is not checked
  if (received > m.member_epoch) {
    return error(Error::kFencedMemberEpoch,
                 fmt::format("The consumer group member has a greater member epoch ({}) than the one known by the "
                             "group coordinator ({}). The member must abandon all its partitions and rejoin.",
                             received, m.member_epoch));
  }
  if (received < m.member_epoch && (received != m.previous_member_epoch || !owned_is_subset(owned, m.assigned))) {
    return error(Error::kFencedMemberEpoch,
                 fmt::format("The consumer group member has a smaller member epoch ({}) than the one known by the "
                             "group coordinator ({}). The member must abandon all its partitions and rejoin.",
                             received, m.member_epoch));
  }
  return {};
}

Checked existing_member(const ConsumerGroup& g, const std::string& member_id) {
  const ConsumerMember* m = g.member(member_id);
  if (m == nullptr) {
    return unexpected(
        error(Error::kUnknownMemberId, fmt::format("Member {} is not a member of group {}.", member_id, g.group_id())));
  }
  return m;
}

Checked static_member_checked(const ConsumerGroup& g, const std::string& instance_id, const std::string& member_id) {
  const ConsumerMember* m = g.static_member(instance_id);
  if (m == nullptr)
    return unexpected(error(Error::kUnknownMemberId, fmt::format("Instance id {} is unknown.", instance_id)));
  if (m->member_id != member_id) {
    return unexpected(
        error(Error::kFencedInstanceId, fmt::format("Static member {} with instance id {} was fenced by member {}.",
                                                    member_id, instance_id, m->member_id)));
  }
  return m;
}

// Removes a member (Kafka's removeMember) and bumps the group epoch (consumerGroupFenceMember).
// Without a topic image (a timer fired with none) the group keeps its metadata hash.
// A regex no member subscribes to any more is deleted with it (maybeDeleteResolvedRegularExpressions).
void remove_member(ConsumerGroupCoordinator::Event& ev, const std::string& member_id) {
  const std::string gid = ev.group().group_id();
  const ConsumerMember* m = ev.group().member(member_id);
  const std::string regex = m != nullptr ? m->subscribed_topic_regex : std::string();
  ev.emit(consumer_records::current_assignment_tombstone(gid, member_id));
  ev.emit(consumer_records::target_member_tombstone(gid, member_id));
  ev.emit(consumer_records::member_subscription_tombstone(gid, member_id));
  if (!regex.empty() && ev.group().regex_subscribers(regex) == 0) {
    ev.emit(consumer_records::regex_tombstone(gid, regex));
  }
}

void fence_member(ConsumerGroupCoordinator::Event& ev, const std::string& member_id, const TopicImage* topics) {
  const std::string gid = ev.group().group_id();
  remove_member(ev, member_id);
  const std::int64_t hash = topics ? ev.metadata_hash(*topics) : ev.group().metadata_hash();
  ev.emit(consumer_records::group_epoch(gid, ev.group().group_epoch() + 1, hash));
}

// Kafka's TargetAssignmentBuilder: runs the assignor over every member and writes the target of
// each member whose target changed (or who had none), then the new assignment epoch.
Status<GroupError> update_target(ConsumerGroupCoordinator::Event& ev, const std::string& assignor_name,
                                 const TopicImage& topics) {
  ConsumerGroup& g = ev.group();
  const PartitionAssignor* assignor = find_assignor(assignor_name);
  WEIR_ASSERT(assignor != nullptr, "configured assignor {} unknown", assignor_name);

  AssignmentGroupSpec spec;
  spec.subscription_type = subscription_type(g);
  TopicTableDescriber describer;
  std::set<Uuid> described;
  std::vector<std::string> ids;
  for (const auto& [id, m] : g.members()) ids.push_back(id);
  for (const std::string& id : java_hash_order(ids)) {
    const ConsumerMember& m = g.members().at(id);
    AssignmentMemberSpec ms;
    ms.member_id = id;
    ms.instance_id = m.instance_id;
    ms.rack_id = m.rack_id;
    std::vector<Uuid> subscribed;
    for (const Uuid& t : topic_ids(g.member_topic_names(m), topics)) {
      subscribed.push_back(t);
      if (described.insert(t).second) describer.add_topic(t, topics.by_id(t)->partition_count);
    }
    ms.subscribed_topic_ids = java_hash_order(std::move(subscribed));
    const TopicPartitionSet& current = g.target_of(id);
    std::vector<Uuid> current_topics;
    for (const auto& [t, parts] : current) current_topics.push_back(t);
    for (const Uuid& t : java_hash_order(std::move(current_topics))) {
      TopicPartitions tp;
      tp.topic_id = t;
      tp.partitions = java_hash_order(std::vector<std::int32_t>(current.at(t).begin(), current.at(t).end()));
      ms.current_assignment.push_back(std::move(tp));
    }
    spec.members.push_back(std::move(ms));
  }
  auto result = assignor->assign(spec, describer);
  if (!result) {
    return unexpected(
        error(Error::kUnknownServerError, fmt::format("Failed to compute a new target assignment for epoch {}: {}",
                                                      g.group_epoch(), to_string(result.error()))));
  }
  std::vector<Record> changed;
  for (const AssignmentMemberSpec& ms : spec.members) {
    TopicPartitionSet next;
    if (auto it = result->find(ms.member_id); it != result->end()) {
      for (const auto& [t, parts] : it->second) {
        if (!parts.empty()) next[t].insert(parts.begin(), parts.end());
      }
    }
    if (!g.target_assignment().contains(ms.member_id) || g.target_of(ms.member_id) != next) {
      changed.push_back(consumer_records::target_member(g.group_id(), ms.member_id, next));
    }
  }
  for (Record& r : changed) ev.emit(std::move(r));
  ev.emit(consumer_records::target_metadata(g.group_id(), g.group_epoch(), ev.now_ms()));
  return {};
}

p::ConsumerGroupHeartbeatResponse::Assignment response_assignment(const PartitionEpochs& assigned) {
  p::ConsumerGroupHeartbeatResponse::Assignment a;
  for (const auto& [topic, parts] : assigned) {
    auto& tp = a.topic_partitions.emplace_back();
    tp.topic_id = topic;
    for (const auto& [partition, epoch] : parts) tp.partitions.push_back(partition);
  }
  return a;
}

// A restarted static member takes over the old member's subscription, target and partitions
// under its new member id (Kafka's replaceMember). Returns the replacement.
ConsumerMember replace_static_member(ConsumerGroupCoordinator::Event& ev, const ConsumerMember& old,
                                     const std::string& member_id) {
  ConsumerGroup& g = ev.group();
  ConsumerMember replacement = old;
  replacement.member_id = member_id;
  replacement.member_epoch = 0;
  replacement.previous_member_epoch = 0;
  const TopicPartitionSet old_target = g.target_of(old.member_id);
  const std::string old_id = old.member_id;
  ev.emit(consumer_records::current_assignment_tombstone(g.group_id(), old_id));
  ev.emit(consumer_records::target_member_tombstone(g.group_id(), old_id));
  ev.emit(consumer_records::member_subscription_tombstone(g.group_id(), old_id));
  ev.emit(consumer_records::member_subscription(g.group_id(), replacement));
  ev.emit(consumer_records::target_member(g.group_id(), member_id, old_target));
  ev.emit(consumer_records::current_assignment(g.group_id(), replacement));
  return replacement;
}

// The member as it stands before a join or heartbeat (Kafka's getOrMaybeSubscribe*Member),
// after the checks on its identity and epoch; a static rejoin replaces the old instance here.
// A classic member (JoinGroup) has no epoch to check, may join under any member id, and a static
// one whose request has a member id must be the instance's current member.
Result<ConsumerMember, GroupError> member_before(ConsumerGroupCoordinator::Event& ev,
                                                 const p::ConsumerGroupHeartbeatRequest& req,
                                                 const std::string& member_id, const ClassicJoinRequest* classic) {
  const ConsumerGroup& g = ev.group();
  const bool joining = req.member_epoch == 0 && (classic == nullptr || classic->member_id.empty());
  ConsumerMember fresh;
  fresh.member_id = member_id;
  if (!req.instance_id) {
    const ConsumerMember* m = g.member(member_id);
    if (m == nullptr && !joining && classic == nullptr) return unexpected(existing_member(g, member_id).error());
    if (m == nullptr) return fresh;
    if (classic != nullptr) return *m;
    if (GroupError e = check_epoch(*m, req.member_epoch, req.topic_partitions); e.code != Error::kNone) {
      return unexpected(std::move(e));
    }
    return *m;
  }
  if (!joining && classic != nullptr) {
    Checked m = static_member_checked(g, *req.instance_id, member_id);
    if (!m) return unexpected(m.error());
    return **m;
  }
  if (!joining) {
    Checked m = static_member_checked(g, *req.instance_id, member_id);
    if (!m) return unexpected(m.error());
    if (GroupError e = check_epoch(**m, req.member_epoch, req.topic_partitions); e.code != Error::kNone) {
      return unexpected(std::move(e));
    }
    return **m;
  }
  if (const ConsumerMember* old = g.static_member(*req.instance_id)) {
    // Only two consumer-protocol instances wait for the old one to leave first.
    if (classic == nullptr && !old->uses_classic() && old->member_epoch != kLeaveGroupStaticMemberEpoch) {
      return unexpected(error(Error::kUnreleasedInstanceId,
                              fmt::format("Static member {} with instance id {} cannot join the group because the "
                                          "instance id is owned by {} member.",
                                          member_id, *req.instance_id, old->member_id)));
    }
    return replace_static_member(ev, *old, member_id);
  }
  if (const ConsumerMember* m = g.member(member_id)) return *m;
  return fresh;
}

// The member with the request's subscription fields (Kafka's ConsumerGroupMember.Builder
// maybeUpdate* calls).
ConsumerMember with_request(ConsumerMember m, const p::ConsumerGroupHeartbeatRequest& req, const ClientInfo& client,
                            const ClassicJoinRequest* classic) {
  if (req.instance_id) m.instance_id = req.instance_id;
  if (req.rack_id) m.rack_id = req.rack_id;
  if (req.rebalance_timeout_ms != -1) m.rebalance_timeout_ms = req.rebalance_timeout_ms;
  if (req.server_assignor) m.server_assignor = req.server_assignor;
  if (req.subscribed_topic_names) {
    std::vector<std::string> names = *req.subscribed_topic_names;
    std::ranges::sort(names);
    names.erase(std::unique(names.begin(), names.end()), names.end());
    m.subscribed_topic_names = std::move(names);
  }
  if (req.subscribed_topic_regex) m.subscribed_topic_regex = *req.subscribed_topic_regex;
  m.client_id = client.client_id;
  m.client_host = client.client_host;
  m.classic.reset();
  if (classic != nullptr) m.classic = ClassicMemberMetadata{classic->session_timeout_ms, classic->protocols};
  return m;
}

// Kafka's UpdateRegularExpressionStatus.
enum class RegexUpdate { kNoChange, kUpdated, kUpdatedAndResolved };

struct RegexDecision {
  RegexUpdate status = RegexUpdate::kNoChange;
  bool tombstone_old = false;  // the member was the last one subscribed to its previous regex
  // The group's regexes to resolve once the heartbeat is done (Kafka schedules this on its
  // executor and applies the result in a later write; weir resolves them in the same event, after
  // the member's own records, which is the order Kafka's log shows).
  std::optional<std::set<std::string>> refresh;
};

// Kafka's maybeUpdateRegularExpressions, on the group as it stands before the member's new
// subscription is written: whether the member's regex changed, whether its previous regex goes,
// whether a new regex is valid, and whether the group's regexes must be resolved (again): a
// regex not resolved yet, topics created since the last resolution, or a resolution older than
// group.consumer.regex.refresh.interval.ms; never twice within 10 s.
Result<RegexDecision, GroupError> decide_regexes(const ConsumerGroup& g, const ConsumerMember& before,
                                                 const ConsumerMember& updated, std::int64_t refresh_interval_ms,
                                                 std::int64_t last_image_with_new_topics, std::int64_t now_ms) {
  const std::string& old_regex = before.subscribed_topic_regex;
  const std::string& new_regex = updated.subscribed_topic_regex;
  RegexDecision d;
  bool require_refresh = false;
  if (old_regex != new_regex) {
    d.status = RegexUpdate::kUpdated;
    d.tombstone_old = !old_regex.empty() && g.regex_subscribers(old_regex) == 1;
    if (!new_regex.empty()) {
      if (g.regex_subscribers(new_regex) == 0) {
        if (auto message = invalid_regex_message(new_regex)) {
          return unexpected(error(Error::kInvalidRegularExpression, std::move(*message)));
        }
        require_refresh = true;
      } else if (g.resolved_regex(new_regex) != nullptr) {
        d.status = RegexUpdate::kUpdatedAndResolved;
      }
    } else if (!old_regex.empty()) {
      d.status = RegexUpdate::kUpdatedAndResolved;  // back to names only
    }
  }
  std::map<std::string, std::size_t> subscribed = g.subscribed_regexes();
  if (!require_refresh && subscribed.empty()) return d;
  const std::int64_t last_refresh = last_regex_refresh_ms(g);
  if (now_ms <= last_refresh + kRegexRefreshMinIntervalMs) return d;
  if (!old_regex.empty()) {
    auto it = subscribed.find(old_regex);
    if (it != subscribed.end() && --it->second == 0) subscribed.erase(it);
  }
  if (!new_regex.empty()) ++subscribed[new_regex];
  require_refresh |= subscribed.size() != g.resolved_regexes().size();
  require_refresh |= last_regex_version(g) < last_image_with_new_topics;
  require_refresh |= now_ms > last_refresh + refresh_interval_ms;
  if (require_refresh && !subscribed.empty()) {
    d.refresh.emplace();
    for (const auto& [regex, n] : subscribed) d.refresh->insert(regex);
  }
  return d;
}

// Kafka's refreshRegularExpressions then handleRegularExpressionsResult: resolves each regex
// against every topic (internal ones too), writes the result of each regex still subscribed to,
// and bumps the group epoch when a regex's topics or the subscribed topics' metadata changed
// (the group's metadata then counts as refreshed).
void resolve_regexes(ConsumerGroupCoordinator::Event& ev, const std::set<std::string>& regexes,
                     const TopicImage& topics) {
  ConsumerGroup& g = ev.group();
  bool bump = false;
  for (const std::string& regex : regexes) {
    if (g.regex_subscribers(regex) == 0) continue;
    ResolvedRegex resolved;
    resolved.version = topics.version();
    resolved.timestamp_ms = ev.now_ms();
    // Every regex here was valid when a member brought it; one that is not any more (a
    // replayed record of another version's syntax) resolves to nothing, as Kafka ignores it.
    if (TopicRegex::Compiled c = TopicRegex::compile(regex); c.regex) {
      for (const auto& [name, topic] : topics.topics()) {
        if (c.regex->matches(name)) resolved.topics.insert(name);
      }
    }
    const ResolvedRegex* before = g.resolved_regex(regex);
    if ((before == nullptr ? std::set<std::string>{} : before->topics) != resolved.topics) bump = true;
    ev.emit(consumer_records::regex(g.group_id(), regex, resolved));
  }
  const std::int64_t hash = ev.metadata_hash(topics);
  if (bump || hash != g.metadata_hash()) {
    ev.emit(consumer_records::group_epoch(g.group_id(), g.group_epoch() + 1, hash));
    ev.metadata_refreshed(topics);
  }
}

// One reconciliation step of `member_id` towards the group's target; writes its record when
// the member changed. Returns the member and whether a record was written.
Result<std::pair<ConsumerMember, bool>, GroupError> reconcile_member(ConsumerGroupCoordinator::Event& ev,
                                                                     const std::string& member_id, bool is_new,
                                                                     const OwnedPartitions& owned,
                                                                     std::optional<std::set<Uuid>> subscribed) {
  const ConsumerGroup& g = ev.group();
  const ConsumerMember before = g.members().at(member_id);
  if (before.reconciled_to(g.assignment_epoch()) && !is_new) return std::pair{before, false};
  ReconcileInput in;
  in.target_epoch = g.assignment_epoch();
  in.target = &g.target_of(member_id);
  in.owned = &owned;
  in.owned_by_other = [&g, &member_id](const Uuid& t, std::int32_t p) {
    const std::string* owner = g.owner_of(t, p);
    return owner != nullptr && *owner != member_id;
  };
  in.subscribed_topics = std::move(subscribed);
  auto next = reconcile(before, in);
  if (!next) {
    return unexpected(error(Error::kFencedMemberEpoch,
                            "The consumer group member is in a unknown state. The member must abandon all its "
                            "partitions and rejoin."));
  }
  const bool write = is_new || !next->same_assignment_record(before);
  if (write) ev.emit(consumer_records::current_assignment(g.group_id(), *next));
  return std::pair{std::move(*next), write};
}

}  // namespace

ConsumerGroupCoordinator::Heartbeat ConsumerGroupCoordinator::heartbeat(const p::ConsumerGroupHeartbeatRequest& req,
                                                                        const ClientInfo& client,
                                                                        const TopicImage& topics, std::int64_t now_ms) {
  observe_topics(topics);
  const bool leaving = req.member_epoch == kLeaveGroupMemberEpoch || req.member_epoch == kLeaveGroupStaticMemberEpoch;
  auto result = leaving ? leave(req, topics, now_ms) : join_or_heartbeat(req, client, topics, now_ms);
  if (result) return std::move(*result);
  Heartbeat err;
  err.response.error_code = code(result.error().code);
  err.response.error_message = std::move(result.error().message);
  return err;
}

Result<ConsumerGroupCoordinator::Heartbeat, GroupError> ConsumerGroupCoordinator::leave(
    const p::ConsumerGroupHeartbeatRequest& req, const TopicImage& topics, std::int64_t now_ms) {
  Event ev(*this, req.group_id, now_ms);
  if (!ev.existed())
    return unexpected(error(Error::kGroupIdNotFound, fmt::format("Group {} not found.", req.group_id)));
  ConsumerGroup& g = ev.group();
  Heartbeat out;
  out.response.member_id = req.member_id;
  out.response.member_epoch = req.member_epoch;
  Checked m =
      req.instance_id ? static_member_checked(g, *req.instance_id, req.member_id) : existing_member(g, req.member_id);
  if (!m) return unexpected(m.error());
  if (req.member_epoch == kLeaveGroupStaticMemberEpoch) {
    // Gone for now: keeps its partitions for a replacement with the same instance id; its
    // session timer keeps running.
    ConsumerMember away = **m;
    away.member_epoch = kLeaveGroupStaticMemberEpoch;
    away.pending_revocation.clear();
    ev.emit(consumer_records::current_assignment(g.group_id(), away));
    out.records = ev.commit();
    timers_[req.group_id][req.member_id].rebalance_deadline_ms = kNever;
    return out;
  }
  fence_or_downgrade(ev, req.member_id, &topics);
  out.records = ev.commit();
  return out;
}

Result<ConsumerGroupCoordinator::Heartbeat, GroupError> ConsumerGroupCoordinator::join_or_heartbeat(
    const p::ConsumerGroupHeartbeatRequest& req, const ClientInfo& client, const TopicImage& topics,
    std::int64_t now_ms, const ClassicJoinRequest* classic) {
  Event ev(*this, req.group_id, now_ms);
  const bool joining = req.member_epoch == 0;
  if (!ev.existed() && !joining) {
    return unexpected(error(Error::kGroupIdNotFound, fmt::format("Consumer group {} not found.", req.group_id)));
  }
  ConsumerGroup& g = ev.group();
  std::string member_id = req.member_id;
  if (g.members().size() >= static_cast<std::size_t>(config_.max_size) &&
      (member_id.empty() || g.member(member_id) == nullptr)) {
    return unexpected(
        error(Error::kGroupMaxSizeReached,
              fmt::format("The consumer group has reached its maximum capacity of {} members.", config_.max_size)));
  }
  if (member_id.empty()) member_id = Uuid::random(rng_).to_string();
  const std::optional<std::string> replaced =
      req.instance_id && joining && g.static_member(*req.instance_id) &&
              g.static_member(*req.instance_id)->member_id != member_id
          ? std::optional<std::string>(g.static_member(*req.instance_id)->member_id)
          : std::nullopt;
  const bool downgrade = classic != nullptr && replaced && downgrades_with_replacement(g, *replaced);
  auto member = member_before(ev, req, member_id, classic);
  if (!member) return unexpected(member.error());
  const bool is_new = g.member(member_id) == nullptr;

  // 1. The member's subscription, and its regex (checked against the group before the change).
  const ConsumerMember updated = with_request(*member, req, client, classic);
  auto regexes =
      decide_regexes(g, *member, updated, config_.regex_refresh_interval_ms, last_image_with_new_topics_, now_ms);
  if (!regexes) return unexpected(regexes.error());
  bool names_changed = false;
  if (is_new || !updated.same_subscription_record(*member)) {
    ev.emit(consumer_records::member_subscription(g.group_id(), updated));
    names_changed = updated.subscribed_topic_names != member->subscribed_topic_names;
  }
  if (regexes->tombstone_old) {
    ev.emit(consumer_records::regex_tombstone(g.group_id(), member->subscribed_topic_regex));
  }
  const bool subscription_changed = names_changed || regexes->status != RegexUpdate::kNoChange;

  // 2. The group epoch (Kafka's updateSubscriptionMetadata): bumped by a new group, a change of
  // subscribed names or a regex already resolved (or dropped); else, when the group's metadata
  // refresh is due, by a change of the metadata hash. A regex not resolved yet bumps it once
  // resolved (step 5). A type 4 record an older Kafka left is tombstoned then.
  const bool bump = g.group_epoch() == 0 || names_changed || regexes->status == RegexUpdate::kUpdatedAndResolved;
  if (bump || metadata_refresh_due(g, topics)) {
    const std::int64_t hash = ev.metadata_hash(topics);
    if (bump || hash != g.metadata_hash()) {
      ev.emit(consumer_records::group_epoch(g.group_id(), g.group_epoch() + 1, hash));
    }
    ev.metadata_refreshed(topics);
    if (g.has_partition_metadata_record()) {
      ev.emit(consumer_records::partition_metadata_tombstone(g.group_id()));
    }
  }

  if (downgrade) return replaced_and_downgraded(ev, member_id, req);

  // 3. The target assignment, at most once per assignment interval.
  const std::int64_t last = g.assignment_timestamp_ms();
  const std::int32_t interval_ms = assignment_interval_ms(g.group_id());
  const bool may_compute = last == 0 || interval_ms == 0 || now_ms >= last + interval_ms;
  if (g.group_epoch() > g.assignment_epoch() && may_compute) {
    if (auto done = update_target(ev, preferred_assignor(g, config_.assignors), topics); !done) {
      return unexpected(done.error());
    }
  }

  // 4. Reconciliation of this member.
  std::optional<std::set<Uuid>> subscribed;
  if (subscription_changed) subscribed = topic_ids(g.member_topic_names(g.members().at(member_id)), topics);
  auto reconciled = reconcile_member(ev, member_id, is_new, req.topic_partitions, std::move(subscribed));
  if (!reconciled) return unexpected(reconciled.error());
  const auto& [after, wrote] = *reconciled;

  Heartbeat out;
  out.response.member_id = member_id;
  out.response.member_epoch = after.member_epoch;
  out.response.heartbeat_interval_ms = heartbeat_interval_ms(req.group_id);
  const bool full_request = req.rebalance_timeout_ms != -1 &&
                            (req.subscribed_topic_names || req.subscribed_topic_regex) && req.topic_partitions;
  if (joining || full_request || partitions_of(after.assigned) != partitions_of(member->assigned)) {
    out.response.assignment = response_assignment(after.assigned);
  }

  // 5. The group's regexes, when they must be resolved (again).
  if (regexes->refresh) resolve_regexes(ev, *regexes->refresh, topics);
  out.records = ev.commit();

  // Timers, as Kafka schedules them: the session on every heartbeat; the rebalance timeout
  // whenever a new assignment state is written (armed in UNREVOKED_PARTITIONS, else cancelled).
  if (replaced) timers_[req.group_id].erase(*replaced);
  MemberTimers& t = timers_[req.group_id][member_id];
  t.session_deadline_ms = now_ms + session_timeout_ms(req.group_id);
  if (wrote && after.state == MemberState::kUnrevokedPartitions) {
    t.rebalance_deadline_ms = now_ms + after.rebalance_timeout_ms;
    t.rebalance_epoch = after.member_epoch;
  } else if (wrote) {
    t.rebalance_deadline_ms = kNever;
    t.rebalance_epoch = -1;
  }
  return out;
}

p::ConsumerGroupDescribeResponse::DescribedGroup ConsumerGroupCoordinator::describe(const std::string& group_id,
                                                                                    const TopicImage& topics) const {
  using Described = p::ConsumerGroupDescribeResponse;
  Described::DescribedGroup d;
  d.group_id = group_id;
  const ConsumerGroup* g = group(group_id);
  if (g == nullptr) {
    d.error_code = code(Error::kGroupIdNotFound);
    d.error_message = fmt::format("Group {} not found.", group_id);
    return d;
  }
  d.group_state = to_string(g->state());
  d.group_epoch = g->group_epoch();
  d.assignment_epoch = g->assignment_epoch();
  d.assignor_name = preferred_assignor(*g, config_.assignors);
  auto assignment = [&](const TopicPartitionSet& parts) {
    Described::Assignment a;
    for (const auto& [topic, ps] : parts) {
      auto& tp = a.topic_partitions.emplace_back();
      tp.topic_id = topic;
      if (const TopicImage::Topic* t = topics.by_id(topic)) tp.topic_name = t->name;
      tp.partitions.assign(ps.begin(), ps.end());
    }
    return a;
  };
  for (const auto& [id, m] : g->members()) {
    auto& dm = d.members.emplace_back();
    dm.member_id = id;
    dm.instance_id = m.instance_id;
    dm.rack_id = m.rack_id;
    dm.member_epoch = m.member_epoch;
    dm.client_id = m.client_id;
    dm.client_host = m.client_host;
    dm.subscribed_topic_names = m.subscribed_topic_names;
    if (!m.subscribed_topic_regex.empty()) dm.subscribed_topic_regex = m.subscribed_topic_regex;
    dm.assignment = assignment(partitions_of(m.assigned));
    dm.target_assignment = assignment(g->target_of(id));
    dm.member_type = m.classic ? 0 : 1;  // v1: 1 = consumer protocol, 0 = classic (Kafka's MemberType)
  }
  return d;
}

CommitCheck ConsumerGroupCoordinator::validate_commit(const ConsumerGroup& g, const std::string& member_id,
                                                      const std::optional<std::string>& instance_id,
                                                      std::int32_t member_epoch, bool transactional,
                                                      std::int16_t version, const TopicImage* topics) const {
  CommitCheck out;
  if (member_epoch < 0 && g.members().empty()) return out;
  if (transactional && member_epoch == -1 && member_id.empty() && !instance_id) return out;
  const ConsumerMember* m = g.member(member_id);
  if (m == nullptr) {
    out.group_error = {Error::kUnknownMemberId,
                       fmt::format("Member {} is not a member of group {}.", member_id, g.group_id())};
    return out;
  }
  // A classic member commits with any version, its generation being its member epoch; its
  // errors are the classic protocol's (ILLEGAL_GENERATION where others get STALE_MEMBER_EPOCH).
  const bool classic = m->classic.has_value();
  const Error stale = classic ? Error::kIllegalGeneration : Error::kStaleMemberEpoch;
  const std::string_view epoch_name = classic ? "generation id" : "member epoch";
  if (!transactional && version < 9 && !classic) {
    out.group_error = {Error::kUnsupportedVersion,
                       "OffsetCommit version 9 or above must be used by members using the consumer group protocol"};
    return out;
  }
  if (member_epoch == m->member_epoch) return out;
  if (member_epoch > m->member_epoch) {
    out.group_error = {stale, fmt::format("Received {} {} is newer than current member epoch {}.", epoch_name,
                                          member_epoch, m->member_epoch)};
    return out;
  }
  // An older epoch may still commit the partitions it was given at or before that epoch.
  const ConsumerMember member = *m;
  out.per_partition = [member, member_epoch, topics, stale, epoch_name](const std::string& topic,
                                                                        std::int32_t partition) -> GroupError {
    const TopicImage::Topic* t = topics ? topics->by_name(topic) : nullptr;
    std::optional<std::int32_t> assigned_at;
    for (const PartitionEpochs* set : {&member.assigned, &member.pending_revocation}) {
      if (t == nullptr) break;
      auto it = set->find(t->id);
      if (it == set->end()) continue;
      auto p = it->second.find(partition);
      if (p != it->second.end()) assigned_at = p->second;
    }
    if (!assigned_at) {
      return {stale,
              fmt::format("Partition {}-{} is not assigned or pending revocation for member.", topic, partition)};
    }
    if (member_epoch < *assigned_at) {
      return {stale, fmt::format("Received {} {} is older than assignment epoch {} for partition {}-{}.", epoch_name,
                                 member_epoch, *assigned_at, topic, partition)};
    }
    return {};
  };
  return out;
}

std::vector<Record> ConsumerGroupCoordinator::delete_records(const ConsumerGroup& g) const {
  WEIR_ASSERT(g.members().empty(), "deleting group {} with {} members", g.group_id(), g.members().size());
  std::vector<Record> out{consumer_records::target_metadata_tombstone(g.group_id())};
  for (const auto& [regex, resolved] : g.resolved_regexes()) {
    out.push_back(consumer_records::regex_tombstone(g.group_id(), regex));
  }
  out.push_back(consumer_records::partition_metadata_tombstone(g.group_id()));
  out.push_back(consumer_records::group_epoch_tombstone(g.group_id()));
  return out;
}

void ConsumerGroupCoordinator::observe_topics(const TopicImage& topics) {
  if (observed_version_ == topics.version()) return;
  topic_hashes_.retain(topics);
  std::set<Uuid> ids;
  for (const auto& [name, t] : topics.topics()) ids.insert(t.id);
  const bool first = !observed_version_.has_value();
  if (first || !std::ranges::includes(observed_topics_, ids)) last_image_with_new_topics_ = topics.version();
  observed_version_ = topics.version();
  observed_topics_ = std::move(ids);
}

void ConsumerGroupCoordinator::apply(const std::vector<Record>& records) {
  for (const Record& r : records) {
    p::Reader kr(r.key);
    const std::int16_t type = kr.i16();
    std::optional<std::span<const std::uint8_t>> value;
    if (r.value) value = std::span<const std::uint8_t>(*r.value);
    auto ok = replay(type, kr, value);
    WEIR_ASSERT(ok.has_value(), "a record the coordinator wrote does not replay");
  }
  std::erase_if(metadata_refreshes_, [&](const auto& e) { return !groups_.contains(e.first); });
}

std::vector<Record> ConsumerGroupCoordinator::tick(const TopicImage* topics, std::int64_t now_ms) {
  std::vector<Record> out;
  std::vector<std::pair<std::string, std::string>> due;
  for (const auto& [gid, members] : timers_) {
    const ConsumerGroup* g = group(gid);
    for (const auto& [mid, t] : members) {
      const ConsumerMember* m = g ? g->member(mid) : nullptr;
      if (m == nullptr) continue;
      const bool session = t.session_deadline_ms <= now_ms;
      const bool rebalance = t.rebalance_deadline_ms <= now_ms && m->member_epoch == t.rebalance_epoch;
      const bool classic = t.join_deadline_ms <= now_ms || t.sync_deadline_ms <= now_ms;
      if (session || rebalance || classic) due.emplace_back(gid, mid);
    }
  }
  for (const auto& [gid, mid] : due) {
    if (group(gid) == nullptr || group(gid)->member(mid) == nullptr) continue;  // gone with a downgrade
    Event ev(*this, gid, now_ms);
    fence_or_downgrade(ev, mid, topics);
    for (Record& r : ev.commit()) out.push_back(std::move(r));
  }
  // Drop timers of members or groups that no longer exist.
  for (auto it = timers_.begin(); it != timers_.end();) {
    const ConsumerGroup* g = group(it->first);
    std::erase_if(it->second, [&](const auto& e) { return g == nullptr || g->member(e.first) == nullptr; });
    it = it->second.empty() ? timers_.erase(it) : std::next(it);
  }
  return out;
}

std::optional<std::int64_t> ConsumerGroupCoordinator::next_deadline_ms() const {
  std::int64_t next = kNever;
  for (const auto& [gid, members] : timers_) {
    for (const auto& [mid, t] : members) {
      next = std::min({next, t.session_deadline_ms, t.rebalance_deadline_ms, t.join_deadline_ms, t.sync_deadline_ms});
    }
  }
  if (next == kNever) return std::nullopt;
  return next;
}

Status<ReplayError> ConsumerGroupCoordinator::replay(std::int16_t type, p::Reader& key_reader,
                                                     std::optional<std::span<const std::uint8_t>> value) {
  return replay_consumer_record(groups_, type, key_reader, value);
}

void ConsumerGroupCoordinator::finish_replay(std::int64_t now_ms) {
  metadata_refreshes_.clear();  // a loaded group refreshes on its first heartbeat
  for (const auto& [gid, g] : groups_) {
    for (const auto& [mid, m] : g.members()) {
      MemberTimers& t = timers_[gid][mid];
      t.session_deadline_ms = now_ms + session_timeout_ms(gid);
      if (m.state == MemberState::kUnrevokedPartitions) {
        t.rebalance_deadline_ms = now_ms + m.rebalance_timeout_ms;
        t.rebalance_epoch = m.member_epoch;
      }
      // A classic member's session is the one it asked for in JoinGroup.
      if (m.classic) t.session_deadline_ms = now_ms + m.classic->session_timeout_ms;
    }
  }
}

// ---- Migration with classic groups ---------------------------------------------------------

std::optional<MigrationPolicy> parse_migration_policy(std::string_view value) {
  std::string lower(value);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "disabled") return MigrationPolicy::kDisabled;
  if (lower == "upgrade") return MigrationPolicy::kUpgrade;
  if (lower == "downgrade") return MigrationPolicy::kDowngrade;
  if (lower == "bidirectional") return MigrationPolicy::kBidirectional;
  return std::nullopt;
}
namespace {

constexpr std::string_view kConsumerProtocolType = "consumer";

// The version a classic member's first protocol metadata starts with (Kafka's
// ConsumerProtocol.deserializeVersion), bounded to what the assignment can be written at.
std::int16_t assignment_version(const ClassicMemberMetadata& c) {
  if (c.protocols.empty()) return p::kConsumerProtocolVersion;
  p::Reader r(c.protocols.front().metadata);
  const std::int16_t v = r.i16();
  if (!r.ok() || v < 0) return p::kConsumerProtocolVersion;
  return std::min(v, p::kConsumerProtocolVersion);
}

// A ConsumerProtocolAssignment of `parts`, by topic name (topics the image lacks are left out,
// as Kafka's Utils.toConsumerProtocolAssignment does).
Bytes classic_assignment(const TopicPartitionSet& parts, const TopicImage& topics, std::int16_t version) {
  p::ConsumerAssignment a;
  for (const auto& [topic, partitions] : parts) {
    const TopicImage::Topic* t = topics.by_id(topic);
    if (t == nullptr) continue;
    for (std::int32_t partition : partitions) a.partitions.emplace_back(t->name, partition);
  }
  return p::encode_assignment(a, version);
}

// Kafka's ConsumerGroup.supportsClassicProtocols: the "consumer" type and a protocol every
// classic member of the group supports (any, when there is none).
bool supports_classic(const ConsumerGroup& g, const std::string& protocol_type,
                      const std::vector<Protocol>& protocols) {
  if (protocol_type != kConsumerProtocolType || protocols.empty()) return false;
  std::size_t classic_members = 0;
  std::map<std::string, std::size_t> supported;
  for (const auto& [id, m] : g.members()) {
    if (!m.classic) continue;
    ++classic_members;
    std::set<std::string> names;
    for (const Protocol& proto : m.classic->protocols) names.insert(proto.name);
    for (const std::string& name : names) ++supported[name];
  }
  return std::ranges::any_of(protocols, [&](const Protocol& proto) {
    auto it = supported.find(proto.name);
    return (it == supported.end() ? 0 : it->second) == classic_members;
  });
}

// Kafka's validateConsumerGroupMember then throwIfMemberDoesNotUseClassicProtocol.
Checked classic_member(const ConsumerGroup& g, const std::string& member_id,
                       const std::optional<std::string>& instance_id) {
  const ConsumerMember* m = nullptr;
  if (!instance_id) {
    Checked found = existing_member(g, member_id);
    if (!found) return found;
    m = *found;
  } else {
    m = g.static_member(*instance_id);
    if (m == nullptr) {
      return unexpected(
          error(Error::kUnknownMemberId,
                fmt::format("Member with instance id {} is not a member of group {}.", *instance_id, g.group_id())));
    }
    Checked checked = static_member_checked(g, *instance_id, member_id);
    if (!checked) return checked;
  }
  if (!m->classic) {
    return unexpected(
        error(Error::kUnknownMemberId, fmt::format("Member {} does not use the classic protocol.", m->member_id)));
  }
  return m;
}

GroupError generation_mismatch(const ConsumerMember& m, std::int32_t generation_id) {
  if (m.member_epoch == generation_id) return {};
  return error(Error::kIllegalGeneration,
               fmt::format("The request generation id {} is not equal to the member epoch {} of member {}.",
                           generation_id, m.member_epoch, m.member_id));
}

// Kafka's ConsumerGroup.waitingOnUnreleasedPartition: a partition of the member's target that it
// does not have is still owned by another member.
bool waiting_on_unreleased(const ConsumerGroup& g, const ConsumerMember& m) {
  if (m.state != MemberState::kUnreleasedPartitions) return false;
  for (const auto& [topic, partitions] : g.target_of(m.member_id)) {
    auto held = m.assigned.find(topic);
    for (std::int32_t partition : partitions) {
      const bool has = held != m.assigned.end() && held->second.contains(partition);
      if (!has && g.partition_owned(topic, partition)) return true;
    }
  }
  return false;
}

// Kafka's createGroupTombstoneRecords of a consumer group: current assignments, targets, the
// target epoch, subscriptions, resolved regexes, partition metadata, the group epoch.
void emit_group_tombstones(ConsumerGroupCoordinator::Event& ev) {
  const ConsumerGroup g = ev.group();
  const std::string& gid = g.group_id();
  for (const auto& [id, m] : g.members()) ev.emit(consumer_records::current_assignment_tombstone(gid, id));
  for (const auto& [id, m] : g.members()) ev.emit(consumer_records::target_member_tombstone(gid, id));
  ev.emit(consumer_records::target_metadata_tombstone(gid));
  for (const auto& [id, m] : g.members()) ev.emit(consumer_records::member_subscription_tombstone(gid, id));
  for (const auto& [regex, resolved] : g.resolved_regexes()) ev.emit(consumer_records::regex_tombstone(gid, regex));
  ev.emit(consumer_records::partition_metadata_tombstone(gid));
  ev.emit(consumer_records::group_epoch_tombstone(gid));
}

}  // namespace

Result<std::vector<Record>, GroupError> ConsumerGroupCoordinator::convert_from_classic(const ClassicGroup& classic,
                                                                                       const TopicImage& topics,
                                                                                       std::int64_t now_ms) {
  const std::string& gid = classic.group_id();
  const std::int32_t generation = classic.generation_id();
  const std::string protocol = classic.protocol_name().value_or("");
  auto refuse = [&gid](std::string_view why) {
    return unexpected(
        error(Error::kGroupIdNotFound, fmt::format("Cannot upgrade classic group {} to consumer group {}.", gid, why)));
  };
  std::vector<ConsumerMember> members;
  std::set<std::pair<Uuid, std::int32_t>> taken;
  for (const auto& [id, cm] : classic.members()) {
    const Bytes* metadata = cm.metadata_for(protocol);
    if (metadata == nullptr) return refuse("because the embedded consumer protocol is malformed");
    auto subscription = p::decode_subscription(*metadata);
    if (!subscription) return refuse("because the embedded consumer protocol is malformed");
    ConsumerMember m;
    m.member_id = id;
    m.member_epoch = generation;
    m.previous_member_epoch = generation;
    m.instance_id = cm.group_instance_id;
    if (subscription->rack_id && !subscription->rack_id->empty()) m.rack_id = subscription->rack_id;
    m.rebalance_timeout_ms = cm.rebalance_timeout_ms;
    m.client_id = cm.client_id;
    m.client_host = cm.client_host;
    m.subscribed_topic_names = subscription->topics;
    std::ranges::sort(m.subscribed_topic_names);
    m.subscribed_topic_names.erase(std::unique(m.subscribed_topic_names.begin(), m.subscribed_topic_names.end()),
                                   m.subscribed_topic_names.end());
    m.classic = ClassicMemberMetadata{cm.session_timeout_ms, cm.protocols};
    if (!cm.assignment.empty()) {
      auto assignment = p::decode_assignment(cm.assignment);
      if (!assignment) return refuse("because the embedded consumer protocol is malformed");
      if (assignment->user_data && !assignment->user_data->empty()) {
        return refuse(
            "because an unsupported custom assignor is in use. Please refer to the documentation or switch to a "
            "default assignor before re-attempting the upgrade");
      }
      for (const auto& [topic, partition] : assignment->partitions) {
        const TopicImage::Topic* t = topics.by_name(topic);
        // A partition the leader gave to two members stays with the first (a consumer group
        // cannot have two owners).
        if (t != nullptr && taken.insert({t->id, partition}).second) m.assigned[t->id][partition] = generation;
      }
    }
    members.push_back(std::move(m));
  }
  forget(gid);
  Event ev(*this, gid, now_ms);
  std::set<std::string> names;
  for (const ConsumerMember& m : members) {
    ev.emit(consumer_records::member_subscription(gid, m));
    names.insert(m.subscribed_topic_names.begin(), m.subscribed_topic_names.end());
  }
  ev.emit(consumer_records::group_epoch(gid, generation, metadata_hash(names, topics, topic_hashes_)));
  for (const ConsumerMember& m : members) {
    ev.emit(consumer_records::target_member(gid, m.member_id, partitions_of(m.assigned)));
  }
  ev.emit(consumer_records::target_metadata(gid, generation, 0));
  for (const ConsumerMember& m : members) ev.emit(consumer_records::current_assignment(gid, m));
  std::vector<Record> records = ev.commit();
  for (const ConsumerMember& m : members) {
    timers_[gid][m.member_id].session_deadline_ms = now_ms + m.classic->session_timeout_ms;
  }
  return records;
}

void ConsumerGroupCoordinator::forget(const std::string& group_id) {
  groups_.erase(group_id);
  timers_.erase(group_id);
  metadata_refreshes_.erase(group_id);
}

bool ConsumerGroupCoordinator::metadata_refresh_due(const ConsumerGroup& g, const TopicImage& topics) const {
  auto it = metadata_refreshes_.find(g.group_id());
  // An epoch below the refresh's: the event that refreshed failed, so its refresh did not happen.
  return it == metadata_refreshes_.end() || it->second.image_version != topics.version() ||
         g.group_epoch() < it->second.group_epoch;
}

Result<ClassicJoined, GroupError> ConsumerGroupCoordinator::classic_join(const ClassicJoinRequest& req,
                                                                         const ClientInfo& client,
                                                                         const TopicImage& topics,
                                                                         std::int64_t now_ms) {
  observe_topics(topics);
  const ConsumerGroup* g = group(req.group_id);
  WEIR_ASSERT(g != nullptr, "classic join to unknown consumer group {}", req.group_id);
  if (config_.migration_policy == MigrationPolicy::kDisabled) {
    return unexpected(error(Error::kInconsistentGroupProtocol,
                            fmt::format("Cannot join the consumer group {} with the classic protocol because the "
                                        "group migration is disabled.",
                                        req.group_id)));
  }
  const std::string member_id = req.member_id.empty() ? Uuid::random(rng_).to_string() : req.member_id;
  if (g->member(member_id) == nullptr && g->members().size() >= static_cast<std::size_t>(config_.max_size)) {
    return unexpected(
        error(Error::kGroupMaxSizeReached,
              fmt::format("The consumer group has reached its maximum capacity of {} members.", config_.max_size)));
  }
  if (!supports_classic(*g, req.protocol_type, req.protocols)) {
    return unexpected(
        error(Error::kInconsistentGroupProtocol, fmt::format("Member {}'s protocols are not supported.", member_id)));
  }
  ClassicJoined out;
  out.member_id = member_id;
  if (req.requires_known_member_id) {
    out.error = Error::kMemberIdRequired;
    return out;
  }
  auto subscription = p::decode_subscription(req.protocols.front().metadata);
  if (!subscription) {
    return unexpected(
        error(Error::kUnknownServerError, "Malformed embedded consumer protocol in subscription deserialization."));
  }
  // The JoinGroup as the heartbeat of a member at epoch 0 that reports what it owns.
  p::ConsumerGroupHeartbeatRequest hb;
  hb.group_id = req.group_id;
  hb.member_id = member_id;
  hb.member_epoch = 0;
  hb.instance_id = req.instance_id;
  if (subscription->rack_id && !subscription->rack_id->empty()) hb.rack_id = subscription->rack_id;
  hb.rebalance_timeout_ms = req.rebalance_timeout_ms;
  hb.subscribed_topic_names = subscription->topics;
  hb.subscribed_topic_regex = std::string();
  std::map<Uuid, std::vector<std::int32_t>> owned;
  for (const auto& [topic, partition] : subscription->owned_partitions) {
    if (const TopicImage::Topic* t = topics.by_name(topic)) owned[t->id].push_back(partition);
  }
  hb.topic_partitions.emplace();
  for (auto& [topic, partitions] : owned) {
    auto& tp = hb.topic_partitions->emplace_back();
    tp.topic_id = topic;
    tp.partitions = std::move(partitions);
  }
  auto joined = join_or_heartbeat(hb, client, topics, now_ms, &req);
  if (!joined) return unexpected(joined.error());
  out.generation_id = joined->response.member_epoch;
  out.protocol_name = req.protocols.front().name;
  out.records = std::move(joined->records);
  if (joined->downgraded) return out;  // the group is classic now: no consumer-group timers
  MemberTimers& t = timers_[req.group_id][member_id];
  t.session_deadline_ms = now_ms + req.session_timeout_ms;
  t.join_deadline_ms = kNever;
  t.sync_deadline_ms = now_ms + req.rebalance_timeout_ms;
  return out;
}

Result<Bytes, GroupError> ConsumerGroupCoordinator::classic_sync(
    const std::string& group_id, const std::string& member_id, const std::optional<std::string>& instance_id,
    std::int32_t generation_id, const std::optional<std::string>& protocol_type,
    const std::optional<std::string>& protocol_name, const TopicImage& topics, std::int64_t now_ms) {
  const ConsumerGroup* g = group(group_id);
  WEIR_ASSERT(g != nullptr, "classic sync to unknown consumer group {}", group_id);
  Checked m = classic_member(*g, member_id, instance_id);
  if (!m) return unexpected(m.error());
  const ConsumerMember& member = **m;
  if (GroupError e = generation_mismatch(member, generation_id); e.code != Error::kNone) return unexpected(e);
  const std::string& chosen = member.classic->protocols.front().name;
  if (protocol_type && *protocol_type != kConsumerProtocolType) {
    return unexpected(error(Error::kInconsistentGroupProtocol,
                            fmt::format("The protocol type {} from member {} request is not equal to the group "
                                        "protocol type consumer.",
                                        *protocol_type, member.member_id)));
  }
  if (protocol_name && *protocol_name != chosen) {
    return unexpected(error(Error::kInconsistentGroupProtocol,
                            fmt::format("The protocol name {} from member {} request is not equal to the protocol "
                                        "name {} returned in the join response.",
                                        *protocol_name, member.member_id, chosen)));
  }
  MemberTimers& t = timers_[group_id][member.member_id];
  if (g->group_epoch() > member.member_epoch && member.state != MemberState::kUnrevokedPartitions) {
    if (t.join_deadline_ms == kNever) t.join_deadline_ms = now_ms + member.rebalance_timeout_ms;
    return unexpected(error(Error::kRebalanceInProgress,
                            fmt::format("A new rebalance is triggered in group {} and member {} should rejoin to "
                                        "catch up.",
                                        group_id, member.member_id)));
  }
  t.sync_deadline_ms = kNever;
  t.session_deadline_ms = now_ms + member.classic->session_timeout_ms;
  return classic_assignment(partitions_of(member.assigned), topics, assignment_version(*member.classic));
}

GroupError ConsumerGroupCoordinator::classic_heartbeat(const std::string& group_id, const std::string& member_id,
                                                       const std::optional<std::string>& instance_id,
                                                       std::int32_t generation_id, std::int64_t now_ms) {
  const ConsumerGroup* g = group(group_id);
  WEIR_ASSERT(g != nullptr, "classic heartbeat to unknown consumer group {}", group_id);
  Checked m = classic_member(*g, member_id, instance_id);
  if (!m) return m.error();
  const ConsumerMember& member = **m;
  if (GroupError e = generation_mismatch(member, generation_id); e.code != Error::kNone) return e;
  MemberTimers& t = timers_[group_id][member.member_id];
  t.session_deadline_ms = now_ms + member.classic->session_timeout_ms;
  // Rejoin: the group moved on, the member must revoke, or what it waits for is free.
  if (member.member_epoch < g->group_epoch() || member.state == MemberState::kUnrevokedPartitions ||
      (member.state == MemberState::kUnreleasedPartitions && !waiting_on_unreleased(*g, member))) {
    if (t.join_deadline_ms == kNever) t.join_deadline_ms = now_ms + member.rebalance_timeout_ms;
    return error(Error::kRebalanceInProgress, "");
  }
  return {};
}

ConsumerGroupCoordinator::LeaveResult ConsumerGroupCoordinator::classic_leave(const std::string& group_id,
                                                                              const std::vector<Leaving>& leaving,
                                                                              const TopicImage* topics,
                                                                              std::int64_t now_ms) {
  Event ev(*this, group_id, now_ms);
  WEIR_ASSERT(ev.existed(), "classic leave from unknown consumer group {}", group_id);
  LeaveResult out;
  bool removed = false;
  for (const Leaving& l : leaving) {
    const ConsumerGroup& g = ev.group();
    const ConsumerMember* m = nullptr;
    Error e = Error::kNone;
    if (!l.instance_id) {
      m = g.member(l.member_id);
    } else {
      m = g.static_member(*l.instance_id);
      // LeaveGroup may remove a static member by instance id alone (administrative removal).
      if (m != nullptr && !l.member_id.empty() && m->member_id != l.member_id) e = Error::kFencedInstanceId;
    }
    if (m == nullptr || (e == Error::kNone && !m->classic)) e = Error::kUnknownMemberId;
    if (e != Error::kNone) {
      out.members.emplace_back(l.member_id, e);
      continue;
    }
    const std::string id = m->member_id;
    remove_member(ev, id);
    timers_[group_id].erase(id);
    out.members.emplace_back(id, Error::kNone);
    removed = true;
  }
  if (removed) {
    const ConsumerGroup& g = ev.group();
    const std::int64_t hash = topics ? ev.metadata_hash(*topics) : g.metadata_hash();
    ev.emit(consumer_records::group_epoch(group_id, g.group_epoch() + 1, hash));
  }
  out.records = ev.commit();
  return out;
}

bool ConsumerGroupCoordinator::downgrades_with_replacement(const ConsumerGroup& g,
                                                           const std::string& replaced_id) const {
  const bool others_classic = std::ranges::all_of(
      g.members(), [&](const auto& e) { return e.first == replaced_id || e.second.classic.has_value(); });
  return others_classic && downgrade_enabled(config_.migration_policy) &&
         g.members().size() <= static_cast<std::size_t>(classic_max_size_);
}

Result<ConsumerGroupCoordinator::Heartbeat, GroupError> ConsumerGroupCoordinator::replaced_and_downgraded(
    Event& ev, const std::string& member_id, const p::ConsumerGroupHeartbeatRequest& req) {
  ConsumerGroup& g = ev.group();
  // As Kafka: no new target; the member reconciles towards its predecessor's unless the group
  // epoch moved past the assignment epoch (a stale target, carried over as it is).
  if (g.assignment_epoch() >= g.group_epoch()) {
    auto reconciled = reconcile_member(ev, member_id, false, req.topic_partitions, std::nullopt);
    if (!reconciled) return unexpected(reconciled.error());
  }
  const ConsumerGroup before = ev.group();
  const ConsumerMember& joined = before.members().at(member_id);
  Heartbeat out;
  out.response.member_id = member_id;
  out.response.member_epoch = joined.member_epoch;
  out.downgraded = true;
  downgrades_.push_back(Downgrade{before, std::string(), member_id});
  emit_group_tombstones(ev);
  out.records = ev.commit();
  timers_.erase(before.group_id());
  return out;
}

bool ConsumerGroupCoordinator::downgrades_without(const ConsumerGroup& g, const std::string& member_id) const {
  const ConsumerMember* leaving = g.member(member_id);
  if (leaving == nullptr || leaving->classic || g.members().size() <= 1) return false;
  const bool others_classic = std::ranges::all_of(
      g.members(), [&](const auto& e) { return e.first == member_id || e.second.classic.has_value(); });
  return others_classic && downgrade_enabled(config_.migration_policy) &&
         g.members().size() - 1 <= static_cast<std::size_t>(classic_max_size_);
}

void ConsumerGroupCoordinator::fence_or_downgrade(Event& ev, const std::string& member_id, const TopicImage* topics) {
  const std::string gid = ev.group().group_id();
  if (!downgrades_without(ev.group(), member_id)) {
    fence_member(ev, member_id, topics);
    timers_[gid].erase(member_id);
    return;
  }
  downgrades_.push_back(Downgrade{ev.group(), member_id, std::string()});
  emit_group_tombstones(ev);
  timers_.erase(gid);
}

std::int32_t ConsumerGroupCoordinator::session_timeout_ms(const std::string& group_id) const {
  if (!config_.overrides) return config_.session_timeout_ms;
  return config_.overrides(group_id).session_timeout_ms.value_or(config_.session_timeout_ms);
}

std::int32_t ConsumerGroupCoordinator::heartbeat_interval_ms(const std::string& group_id) const {
  if (!config_.overrides) return config_.heartbeat_interval_ms;
  return config_.overrides(group_id).heartbeat_interval_ms.value_or(config_.heartbeat_interval_ms);
}

std::int32_t ConsumerGroupCoordinator::assignment_interval_ms(const std::string& group_id) const {
  if (!config_.overrides) return config_.assignment_interval_ms;
  return config_.overrides(group_id).assignment_interval_ms.value_or(config_.assignment_interval_ms);
}

}  // namespace weir::group
