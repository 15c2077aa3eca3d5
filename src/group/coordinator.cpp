#include "group/coordinator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <set>

#include "base/assert.h"
#include "protocol/consumer_protocol.h"
#include "protocol/gen/group_metadata_key.h"
#include "protocol/gen/group_metadata_value.h"
#include "protocol/gen/offset_commit_key.h"
#include "protocol/gen/offset_commit_value.h"

namespace weir::group {

namespace {

namespace p = weir::protocol;

constexpr std::int16_t kGroupMetadataKeyVersion = 2;
constexpr std::int16_t kGroupMetadataValueVersion = 3;
constexpr std::int64_t kDisarmed = std::numeric_limits<std::int64_t>::max();

p::JoinGroupResponse join_error(Error e, std::string member_id = {}) {
  p::JoinGroupResponse r;
  r.error_code = code(e);
  r.protocol_name = std::nullopt;  // Kafka's error answers carry a null protocol name (v7+)
  r.member_id = std::move(member_id);
  return r;
}

p::SyncGroupResponse sync_error(Error e) {
  p::SyncGroupResponse r;
  r.error_code = code(e);
  return r;
}

bool iequals(std::string_view a, std::string_view b) {
  return std::ranges::equal(a, b, [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
  });
}

}  // namespace

// One JoinGroup request, with the defaults of old versions resolved.
struct GroupCoordinator::JoinContext {
  RequestHandle handle;
  const p::JoinGroupRequest& req;
  std::int16_t version;
  const std::string& client_id;
  const std::string& client_host;
  std::int64_t now_ms;
  std::vector<Protocol> protocols;
  std::int32_t rebalance_timeout_ms;

  void reply(Effects& fx, p::JoinGroupResponse r) const {
    fx.joins.push_back(JoinReply{handle, version, std::move(r)});
  }
};

GroupCoordinator::GroupCoordinator(GroupConfig config)
    : config_(config), consumer_(config.consumer, config.member_id_seed), offsets_(config.offset_metadata_max_bytes) {
  if (config_.member_id_seed != 0) {
    rng_.seed(config_.member_id_seed);
  } else {
    std::random_device rd;
    rng_.seed((static_cast<std::uint64_t>(rd()) << 32) ^ rd());
  }
}

ClassicGroup& GroupCoordinator::get_or_create(const std::string& group_id) {
  auto& slot = groups_[group_id];
  if (!slot) slot = std::make_unique<ClassicGroup>(group_id);
  return *slot;
}

ClassicGroup* GroupCoordinator::find_group(const std::string& group_id) {
  auto it = groups_.find(group_id);
  return it == groups_.end() ? nullptr : it->second.get();
}

const ClassicGroup* GroupCoordinator::group(const std::string& group_id) const {
  auto it = groups_.find(group_id);
  return it == groups_.end() ? nullptr : it->second.get();
}

std::optional<CommittedOffset> GroupCoordinator::committed(const std::string& group_id, const std::string& topic,
                                                           std::int32_t partition) const {
  return offsets_.committed(group_id, topic, partition);
}

// Java's UUID.randomUUID().toString() form: 8-4-4-4-12 lowercase hex, version 4.
std::string GroupCoordinator::new_member_id(const std::string& prefix) {
  std::uint64_t hi = rng_();
  std::uint64_t lo = rng_();
  hi = (hi & ~0xF000ull) | 0x4000ull;
  lo = (lo & ~(0xC000ull << 48)) | (0x8000ull << 48);
  return fmt::format("{}-{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", prefix, hi >> 32, (hi >> 16) & 0xFFFF, hi & 0xFFFF,
                     lo >> 48, lo & 0xFFFF'FFFF'FFFFull);
}

Error GroupCoordinator::validate_member(const ClassicGroup& g, const std::string& member_id,
                                        const std::optional<std::string>& instance_id) const {
  if (instance_id) {
    auto id = g.static_member_id(*instance_id);
    if (!id) return Error::kUnknownMemberId;
    if (*id != member_id) return Error::kFencedInstanceId;
    return Error::kNone;
  }
  return g.has_member(member_id) ? Error::kNone : Error::kUnknownMemberId;
}

// ---- JoinGroup ------------------------------------------------------------------------------

Effects GroupCoordinator::join_group(RequestHandle handle, const p::JoinGroupRequest& req, std::int16_t version,
                                     const std::string& client_id, const std::string& client_host,
                                     std::int64_t now_ms) {
  Effects fx;
  JoinContext c{
      handle,      req,    version, client_id,
      client_host, now_ms, {},      req.rebalance_timeout_ms == -1 ? req.session_timeout_ms : req.rebalance_timeout_ms};
  for (const auto& proto : req.protocols) c.protocols.push_back(Protocol{proto.name, proto.metadata});

  if (req.group_id.empty()) {
    c.reply(fx, join_error(Error::kInvalidGroupId, req.member_id));
    return fx;
  }
  if (req.session_timeout_ms < config_.min_session_timeout_ms ||
      req.session_timeout_ms > config_.max_session_timeout_ms) {
    c.reply(fx, join_error(Error::kInvalidSessionTimeout, req.member_id));
    return fx;
  }
  if (const ConsumerGroup* cg = consumer_.group(req.group_id)) {
    if (!cg->members().empty()) {
      join_consumer_group(c, fx);
      return fx;
    }
    // An empty consumer group gives way to a classic group, as Kafka's maybeDeleteEmptyConsumerGroup.
    std::vector<Record> tombstones = consumer_.delete_records(*cg);
    consumer_.apply(tombstones);
    for (Record& r : tombstones) fx.records.push_back(std::move(r));
  }
  const bool unknown_member = req.member_id.empty();
  ClassicGroup* g = find_group(req.group_id);
  if (g == nullptr) {
    if (!unknown_member) {
      c.reply(fx, join_error(Error::kUnknownMemberId, req.member_id));
      return fx;
    }
    g = &get_or_create(req.group_id);
  }

  // Kafka's acceptJoiningMember: a full group takes no new members.
  const Member* existing = g->find(req.member_id);
  bool accept = true;
  const auto max_size = static_cast<std::size_t>(config_.max_size);
  if (g->is(GroupState::kPreparingRebalance)) {
    accept = (existing && existing->awaiting_join) || g->awaiting_join_count() < max_size;
  } else if (g->is(GroupState::kCompletingRebalance) || g->is(GroupState::kStable)) {
    accept = existing != nullptr || g->size() < max_size;
  }
  if (!accept) {
    c.reply(fx, join_error(Error::kGroupMaxSizeReached));
    if (existing) remove_member_and_update(*g, req.member_id, now_ms, fx);
  } else if (unknown_member) {
    join_new_member(*g, c, fx);
  } else {
    join_existing_member(*g, c, fx);
  }

  // As in Kafka, a group created here stays (Empty) even if the join failed.
  g->check_invariants();
  return fx;
}

void GroupCoordinator::join_consumer_group(const JoinContext& c, Effects& fx) {
  ClassicJoinRequest j;
  j.group_id = c.req.group_id;
  j.member_id = c.req.member_id;
  j.instance_id = c.req.group_instance_id;
  j.session_timeout_ms = c.req.session_timeout_ms;
  j.rebalance_timeout_ms = c.rebalance_timeout_ms;
  j.protocol_type = c.req.protocol_type;
  j.protocols = c.protocols;
  j.requires_known_member_id = c.version >= 4 && c.req.member_id.empty() && !c.req.group_instance_id;
  auto joined = consumer_.classic_join(j, ClientInfo{c.client_id, c.client_host}, topic_image(), c.now_ms);
  if (!joined) return c.reply(fx, join_error(joined.error().code, c.req.member_id));
  if (joined->error != Error::kNone) return c.reply(fx, join_error(joined->error, joined->member_id));
  p::JoinGroupResponse r;
  r.member_id = joined->member_id;
  r.generation_id = joined->generation_id;
  r.protocol_type = std::string(p::kConsumerProtocolType);
  r.protocol_name = joined->protocol_name;
  for (Record& rec : joined->records) fx.records.push_back(std::move(rec));
  c.reply(fx, std::move(r));
  apply_downgrades(c.now_ms, fx);
}

const TopicImage& GroupCoordinator::topic_image() const {
  static const TopicImage kNoTopics;
  return topics_ != nullptr ? *topics_ : kNoTopics;
}

void GroupCoordinator::join_new_member(ClassicGroup& g, const JoinContext& c, Effects& fx) {
  if (g.is(GroupState::kDead)) return c.reply(fx, join_error(Error::kCoordinatorNotAvailable));
  if (!g.supports_protocols(c.req.protocol_type, c.protocols)) {
    return c.reply(fx, join_error(Error::kInconsistentGroupProtocol));
  }
  if (c.req.group_instance_id) return join_new_static_member(g, c, fx);

  std::string member_id = new_member_id(c.client_id);
  if (c.version >= 4) {
    // KIP-394: the client must come back with this id before it counts as a member.
    g.pending_members()[member_id] = c.now_ms + c.req.session_timeout_ms;
    return c.reply(fx, join_error(Error::kMemberIdRequired, member_id));
  }
  add_member_and_rebalance(g, c, std::move(member_id), fx);
}

void GroupCoordinator::join_new_static_member(ClassicGroup& g, const JoinContext& c, Effects& fx) {
  const std::string& instance_id = *c.req.group_instance_id;
  std::string member_id = new_member_id(instance_id);
  auto old_id = g.static_member_id(instance_id);
  if (!old_id) return add_member_and_rebalance(g, c, std::move(member_id), fx);

  // A known instance restarted: the new member id replaces the old one (KIP-345).
  Member& old = *g.find(*old_id);
  if (old.awaiting_join) {
    fx.joins.push_back({*old.awaiting_join, old.join_version, join_error(Error::kFencedInstanceId, *old_id)});
    old.awaiting_join.reset();
  }
  if (old.awaiting_sync) {
    fx.syncs.push_back({*old.awaiting_sync, old.sync_version, sync_error(Error::kFencedInstanceId)});
    old.awaiting_sync.reset();
  }
  const std::string previous_leader = g.leader_id();
  Member& m = g.replace_static_member(instance_id, member_id);
  m.protocols = c.protocols;
  m.session_timeout_ms = c.req.session_timeout_ms;
  m.rebalance_timeout_ms = c.rebalance_timeout_ms;
  m.client_id = c.client_id;
  m.client_host = c.client_host;
  m.heartbeat_deadline_ms = c.now_ms + m.session_timeout_ms;

  switch (g.state()) {
    case GroupState::kStable: {
      // As Kafka: no rebalance unless the rejoin would change the group's selected protocol.
      if (g.protocol_name() != g.select_protocol()) {
        m.awaiting_join = c.handle;
        m.join_version = c.version;
        return prepare_rebalance(g, c.now_ms, fx);
      }
      fx.records.push_back(group_metadata_record(g, c.now_ms));
      const bool is_leader = g.leader_id() == member_id;
      p::JoinGroupResponse r = current_generation_response(g, m, is_leader && c.version >= 9);
      if (c.version >= 9) {
        // The leader learns it leads but keeps the current assignment (KIP-814).
        r.skip_assignment = is_leader;
      } else {
        // Older clients would reassign if told they lead; the old leader id keeps them following.
        r.leader = previous_leader;
      }
      return c.reply(fx, std::move(r));
    }
    case GroupState::kCompletingRebalance:
      // The leader may already hold the old member id in its assignment: start over.
      m.awaiting_join = c.handle;
      m.join_version = c.version;
      return prepare_rebalance(g, c.now_ms, fx);
    case GroupState::kPreparingRebalance:
      m.awaiting_join = c.handle;
      m.join_version = c.version;
      return maybe_complete_join(g, c.now_ms, fx);
    case GroupState::kEmpty:
    case GroupState::kDead:
      break;
  }
  WEIR_UNREACHABLE("static member {} in a group in state {}", instance_id, to_string(g.state()));
}

void GroupCoordinator::join_existing_member(ClassicGroup& g, const JoinContext& c, Effects& fx) {
  const std::string& member_id = c.req.member_id;
  if (g.is(GroupState::kDead)) {
    return c.reply(fx, join_error(Error::kCoordinatorNotAvailable, member_id));
  }
  if (!g.supports_protocols(c.req.protocol_type, c.protocols)) {
    return c.reply(fx, join_error(Error::kInconsistentGroupProtocol, member_id));
  }
  if (g.pending_members().contains(member_id)) {
    return add_member_and_rebalance(g, c, member_id, fx);
  }
  if (Error e = validate_member(g, member_id, c.req.group_instance_id); e != Error::kNone) {
    return c.reply(fx, join_error(e, member_id));
  }
  Member& m = *g.find(member_id);
  m.heartbeat_deadline_ms = c.now_ms + m.session_timeout_ms;
  const bool is_leader = g.leader_id() == member_id;
  switch (g.state()) {
    case GroupState::kPreparingRebalance:
      return update_member_and_rebalance(g, m, c, fx);
    case GroupState::kCompletingRebalance:
      // Same metadata: it probably missed the JoinGroup response; send it again.
      if (m.matches(c.protocols)) return c.reply(fx, current_generation_response(g, m, is_leader));
      return update_member_and_rebalance(g, m, c, fx);
    case GroupState::kStable:
      if (is_leader || !m.matches(c.protocols)) return update_member_and_rebalance(g, m, c, fx);
      return c.reply(fx, current_generation_response(g, m, false));
    case GroupState::kEmpty:
    case GroupState::kDead:
      return c.reply(fx, join_error(Error::kUnknownMemberId, member_id));
  }
}

void GroupCoordinator::add_member_and_rebalance(ClassicGroup& g, const JoinContext& c, std::string member_id,
                                                Effects& fx) {
  Member m;
  m.member_id = std::move(member_id);
  m.group_instance_id = c.req.group_instance_id;
  m.client_id = c.client_id;
  m.client_host = c.client_host;
  m.session_timeout_ms = c.req.session_timeout_ms;
  m.rebalance_timeout_ms = c.rebalance_timeout_ms;
  m.protocols = c.protocols;
  m.awaiting_join = c.handle;
  m.join_version = c.version;
  // A new member cannot heartbeat until it has an id and a generation: it gets longer.
  m.is_new = true;
  m.heartbeat_deadline_ms = c.now_ms + config_.new_member_join_timeout_ms;
  // During an initial rebalance (one that started from Empty, whatever the generation, as
  // Kafka's check of the previous state) a newcomer extends the initial delay.
  if (g.is(GroupState::kPreparingRebalance) && g.previous_state() == GroupState::kEmpty) {
    g.new_member_added = true;
  }
  if (g.size() == 0) g.set_protocol_type(c.req.protocol_type);
  g.pending_members().erase(m.member_id);
  g.add(std::move(m));
  maybe_prepare_rebalance_or_complete_join(g, c.now_ms, fx);
}

void GroupCoordinator::update_member_and_rebalance(ClassicGroup& g, Member& m, const JoinContext& c, Effects& fx) {
  if (m.awaiting_join) {
    // A retried JoinGroup replaces the one still held; the held one must still be answered.
    fx.joins.push_back({*m.awaiting_join, m.join_version, join_error(Error::kRebalanceInProgress, m.member_id)});
  }
  m.protocols = c.protocols;
  m.session_timeout_ms = c.req.session_timeout_ms;
  m.rebalance_timeout_ms = c.rebalance_timeout_ms;
  m.awaiting_join = c.handle;
  m.join_version = c.version;
  maybe_prepare_rebalance_or_complete_join(g, c.now_ms, fx);
}

void GroupCoordinator::maybe_prepare_rebalance_or_complete_join(ClassicGroup& g, std::int64_t now_ms, Effects& fx) {
  if (g.can_rebalance()) {
    prepare_rebalance(g, now_ms, fx);
  } else {
    maybe_complete_join(g, now_ms, fx);
  }
}

void GroupCoordinator::prepare_rebalance(ClassicGroup& g, std::int64_t now_ms, Effects& fx) {
  if (g.is(GroupState::kCompletingRebalance)) {
    // The assignment being computed is for a generation that will not happen.
    for (const auto& [id, member] : g.members()) {
      Member& m = *g.find(id);
      m.assignment.clear();
      if (m.awaiting_sync) {
        fx.syncs.push_back({*m.awaiting_sync, m.sync_version, sync_error(Error::kRebalanceInProgress)});
        m.awaiting_sync.reset();
      }
    }
  }
  g.pending_sync.clear();
  g.sync_deadline_ms = -1;
  const bool initial = g.is(GroupState::kEmpty);
  g.transition_to(GroupState::kPreparingRebalance, now_ms);
  if (initial) {
    const std::int32_t delay_ms = config_.initial_rebalance_delay_ms;
    g.new_member_added = false;
    g.initial_join_remaining_ms = std::max<std::int64_t>(g.rebalance_timeout_ms() - delay_ms, 0);
    // Even with no delay the join completes from the timer, as Kafka's does: JoinGroups already
    // on their way (members started together) join this first generation instead of forcing a
    // second rebalance, and each round with new arrivals is followed by another.
    g.join_deadline_ms = now_ms + delay_ms;
    return;
  }
  g.initial_join_remaining_ms = -1;
  g.join_deadline_ms = now_ms + g.rebalance_timeout_ms();
  maybe_complete_join(g, now_ms, fx);
}

void GroupCoordinator::maybe_complete_join(ClassicGroup& g, std::int64_t now_ms, Effects& fx) {
  // The initial rebalance of an empty group waits out its delay for more members to arrive.
  if (g.is(GroupState::kPreparingRebalance) && g.all_members_joined() && g.previous_state() != GroupState::kEmpty) {
    complete_join(g, now_ms, fx);
  }
}

void GroupCoordinator::complete_join(ClassicGroup& g, std::int64_t now_ms, Effects& fx) {
  if (g.is(GroupState::kDead)) return;
  g.join_deadline_ms = -1;
  g.initial_join_remaining_ms = -1;
  // Dynamic members that did not rejoin are dropped; static ones keep their place (KIP-345)
  // until their session expires.
  std::vector<std::string> not_rejoined;
  for (const auto& [id, m] : g.members()) {
    if (!m.awaiting_join && !m.is_static()) not_rejoined.push_back(id);
  }
  for (const std::string& id : not_rejoined) g.remove(id);
  if (!g.elect_joined_leader() && g.size() > 0) {
    // Nobody rejoined: wait another rebalance timeout for sessions to expire the absent.
    g.join_deadline_ms = now_ms + g.rebalance_timeout_ms();
    return;
  }
  g.init_next_generation(now_ms);
  if (g.is(GroupState::kEmpty)) {
    fx.records.push_back(group_metadata_record(g, now_ms));
    return;
  }
  for (const auto& [id, member] : g.members()) {
    Member& m = *g.find(id);
    if (m.awaiting_join) {
      fx.joins.push_back({*m.awaiting_join, m.join_version, current_generation_response(g, m, id == g.leader_id())});
    }
    m.awaiting_join.reset();
    m.is_new = false;
    m.heartbeat_deadline_ms = now_ms + m.session_timeout_ms;
    g.pending_sync.push_back(id);
  }
  g.sync_deadline_ms = now_ms + g.rebalance_timeout_ms();
}

p::JoinGroupResponse GroupCoordinator::current_generation_response(const ClassicGroup& g, const Member& m,
                                                                   bool with_members) const {
  p::JoinGroupResponse r;
  r.generation_id = g.generation_id();
  r.protocol_type = g.protocol_type();
  r.protocol_name = g.protocol_name();
  r.leader = g.leader_id();
  r.member_id = m.member_id;
  if (!with_members) return r;
  for (const auto& [id, other] : g.members()) {
    p::JoinGroupResponse::JoinGroupResponseMember rm;
    rm.member_id = id;
    rm.group_instance_id = other.group_instance_id;
    if (const Bytes* md = other.metadata_for(g.protocol_name().value_or(""))) rm.metadata = *md;
    r.members.push_back(std::move(rm));
  }
  return r;
}

void GroupCoordinator::remove_member_and_update(ClassicGroup& g, const std::string& member_id, std::int64_t now_ms,
                                                Effects& fx) {
  Member* m = g.find(member_id);
  if (m == nullptr) return;
  // Answer what it is waiting on so that a live client rejoins.
  if (m->awaiting_join) {
    fx.joins.push_back({*m->awaiting_join, m->join_version, join_error(Error::kUnknownMemberId, member_id)});
  }
  if (m->awaiting_sync) {
    fx.syncs.push_back({*m->awaiting_sync, m->sync_version, sync_error(Error::kUnknownMemberId)});
  }
  g.remove(member_id);
  switch (g.state()) {
    case GroupState::kStable:
    case GroupState::kCompletingRebalance:
      return prepare_rebalance(g, now_ms, fx);
    case GroupState::kPreparingRebalance:
      return maybe_complete_join(g, now_ms, fx);
    case GroupState::kEmpty:
    case GroupState::kDead:
      return;
  }
}

// ---- SyncGroup / Heartbeat / LeaveGroup ------------------------------------------------------

Effects GroupCoordinator::sync_group(RequestHandle handle, const p::SyncGroupRequest& req, std::int16_t version,
                                     std::int64_t now_ms) {
  Effects fx;
  auto reply = [&](p::SyncGroupResponse r) { fx.syncs.push_back({handle, version, std::move(r)}); };
  if (req.group_id.empty()) return reply(sync_error(Error::kInvalidGroupId)), fx;
  if (consumer_.group(req.group_id) != nullptr) {
    auto assignment = consumer_.classic_sync(req.group_id, req.member_id, req.group_instance_id, req.generation_id,
                                             req.protocol_type, req.protocol_name, topic_image(), now_ms);
    if (!assignment) return reply(sync_error(assignment.error().code)), fx;
    p::SyncGroupResponse r;
    r.protocol_type = req.protocol_type;
    r.protocol_name = req.protocol_name;
    r.assignment = std::move(*assignment);
    return reply(std::move(r)), fx;
  }
  ClassicGroup* g = find_group(req.group_id);
  if (g == nullptr) return reply(sync_error(Error::kUnknownMemberId)), fx;
  if (g->is(GroupState::kDead)) return reply(sync_error(Error::kCoordinatorNotAvailable)), fx;
  if (Error e = validate_member(*g, req.member_id, req.group_instance_id); e != Error::kNone) {
    return reply(sync_error(e)), fx;
  }
  if (req.generation_id != g->generation_id()) return reply(sync_error(Error::kIllegalGeneration)), fx;
  if ((req.protocol_type && req.protocol_type != g->protocol_type()) ||
      (req.protocol_name && req.protocol_name != g->protocol_name())) {
    return reply(sync_error(Error::kInconsistentGroupProtocol)), fx;
  }
  if (g->is(GroupState::kEmpty)) return reply(sync_error(Error::kUnknownMemberId)), fx;
  if (g->is(GroupState::kPreparingRebalance)) return reply(sync_error(Error::kRebalanceInProgress)), fx;

  Member& m = *g->find(req.member_id);
  std::erase(g->pending_sync, req.member_id);
  if (g->pending_sync.empty()) g->sync_deadline_ms = -1;
  auto assignment_response = [&](const Member& who) {
    p::SyncGroupResponse r;
    r.protocol_type = g->protocol_type();
    r.protocol_name = g->protocol_name();
    r.assignment = who.assignment;
    return r;
  };
  m.heartbeat_deadline_ms = now_ms + m.session_timeout_ms;
  if (g->is(GroupState::kStable)) return reply(assignment_response(m)), fx;

  // CompletingRebalance: followers wait for the leader's assignment.
  if (m.awaiting_sync) {
    fx.syncs.push_back({*m.awaiting_sync, m.sync_version, sync_error(Error::kRebalanceInProgress)});
  }
  m.awaiting_sync = handle;
  m.sync_version = version;
  if (g->leader_id() != req.member_id) return fx;

  for (const auto& [id, member] : g->members()) g->find(id)->assignment.clear();
  for (const auto& a : req.assignments) {
    if (Member* target = g->find(a.member_id)) target->assignment = a.assignment;
  }
  g->transition_to(GroupState::kStable, now_ms);
  fx.records.push_back(group_metadata_record(*g, now_ms));
  for (const auto& [id, member] : g->members()) {
    Member& waiting = *g->find(id);
    if (!waiting.awaiting_sync) continue;
    fx.syncs.push_back({*waiting.awaiting_sync, waiting.sync_version, assignment_response(waiting)});
    waiting.awaiting_sync.reset();
    waiting.heartbeat_deadline_ms = now_ms + waiting.session_timeout_ms;
  }
  g->check_invariants();
  return fx;
}

Reply<p::HeartbeatResponse> GroupCoordinator::heartbeat(const p::HeartbeatRequest& req, std::int16_t /*version*/,
                                                        std::int64_t now_ms) {
  Reply<p::HeartbeatResponse> out;
  auto result = [&](Error e) {
    out.response.error_code = code(e);
    return out;
  };
  if (req.group_id.empty()) return result(Error::kInvalidGroupId);
  if (consumer_.group(req.group_id) != nullptr) {
    return result(
        consumer_.classic_heartbeat(req.group_id, req.member_id, req.group_instance_id, req.generation_id, now_ms)
            .code);
  }
  ClassicGroup* g = find_group(req.group_id);
  if (g == nullptr) return result(Error::kUnknownMemberId);
  if (g->is(GroupState::kDead)) return result(Error::kCoordinatorNotAvailable);
  if (Error e = validate_member(*g, req.member_id, req.group_instance_id); e != Error::kNone) {
    return result(e);
  }
  if (req.generation_id != g->generation_id()) return result(Error::kIllegalGeneration);
  if (g->is(GroupState::kEmpty)) return result(Error::kUnknownMemberId);
  Member& m = *g->find(req.member_id);
  m.heartbeat_deadline_ms = now_ms + m.session_timeout_ms;
  if (g->is(GroupState::kPreparingRebalance)) return result(Error::kRebalanceInProgress);
  return result(Error::kNone);
}

Reply<p::LeaveGroupResponse> GroupCoordinator::leave_group(const p::LeaveGroupRequest& req, std::int16_t version,
                                                           std::int64_t now_ms) {
  Reply<p::LeaveGroupResponse> out;
  std::vector<p::LeaveGroupRequest::MemberIdentity> identities = req.members;
  if (version < 3) {
    identities.clear();
    identities.emplace_back().member_id = req.member_id;
  }
  if (req.group_id.empty()) {
    out.response.error_code = code(Error::kInvalidGroupId);
    return out;
  }
  if (consumer_.group(req.group_id) != nullptr) {
    std::vector<ConsumerGroupCoordinator::Leaving> leaving;
    for (const auto& who : identities) leaving.push_back({who.member_id, who.group_instance_id});
    auto left = consumer_.classic_leave(req.group_id, leaving, topics_, now_ms);
    for (std::size_t i = 0; i < identities.size(); ++i) {
      auto& r = out.response.members.emplace_back();
      r.member_id = left.members[i].first;
      r.group_instance_id = identities[i].group_instance_id;
      r.error_code = code(left.members[i].second);
    }
    out.effects.records = std::move(left.records);
    if (version < 3) {
      out.response.error_code = out.response.members.front().error_code;
      out.response.members.clear();
    }
    return out;
  }
  ClassicGroup* g = find_group(req.group_id);
  if (g != nullptr && g->is(GroupState::kDead)) {
    out.response.error_code = code(Error::kCoordinatorNotAvailable);
    return out;
  }
  std::vector<std::string> leaving;
  for (const auto& who : identities) {
    p::LeaveGroupResponse::MemberResponse r;
    r.member_id = who.member_id;
    r.group_instance_id = who.group_instance_id;
    Error e = Error::kNone;
    if (g == nullptr) {
      e = Error::kUnknownMemberId;  // as Kafka: an unknown group answers per member
    } else if (who.group_instance_id) {
      auto id = g->static_member_id(*who.group_instance_id);
      if (!id) {
        e = Error::kUnknownMemberId;
      } else if (!who.member_id.empty() && who.member_id != *id) {
        e = Error::kFencedInstanceId;
      } else {
        leaving.push_back(*id);
      }
    } else if (g->pending_members().erase(who.member_id) > 0) {
      if (g->is(GroupState::kPreparingRebalance)) maybe_complete_join(*g, now_ms, out.effects);
    } else if (!g->has_member(who.member_id)) {
      e = Error::kUnknownMemberId;
    } else {
      leaving.push_back(who.member_id);
    }
    r.error_code = code(e);
    out.response.members.push_back(std::move(r));
  }
  for (const std::string& id : leaving) remove_member_and_update(*g, id, now_ms, out.effects);
  if (version < 3) {
    out.response.error_code = out.response.members.front().error_code;
    out.response.members.clear();
  }
  if (g != nullptr) g->check_invariants();
  return out;
}

// ---- Offsets --------------------------------------------------------------------------------

Error GroupCoordinator::validate_commit(const ClassicGroup& g, const std::string& member_id,
                                        const std::optional<std::string>& instance_id, std::int32_t generation,
                                        bool transactional) const {
  if (g.is(GroupState::kDead)) return Error::kCoordinatorNotAvailable;
  // A standalone consumer (or an admin) commits without membership, only to an empty group.
  if (generation < 0 && g.is(GroupState::kEmpty)) return Error::kNone;
  if (generation >= 0 || !member_id.empty() || instance_id) {
    if (Error e = validate_member(g, member_id, instance_id); e != Error::kNone) return e;
    if (generation != g.generation_id()) return Error::kIllegalGeneration;
  } else if (!transactional && !g.is(GroupState::kEmpty)) {
    // Without a member (OffsetCommit v0-1, TxnOffsetCommit v0-2 send none) a plain commit needs
    // an empty group; a transactional one is fenced by its producer epoch instead.
    return Error::kUnknownMemberId;
  }
  // It has the new generation from its JoinGroup response but not yet its assignment.
  if (g.is(GroupState::kCompletingRebalance)) return Error::kRebalanceInProgress;
  return Error::kNone;
}

Reply<p::OffsetCommitResponse> GroupCoordinator::offset_commit(const p::OffsetCommitRequest& req, std::int16_t version,
                                                               std::int64_t now_ms) {
  Reply<p::OffsetCommitResponse> out;
  Error group_error = Error::kNone;
  // As Kafka, the empty group id is a valid group here (backwards compatibility; also for
  // OffsetFetch, DescribeGroups and DeleteGroups), unlike for JoinGroup and the rest.
  if (const ConsumerGroup* cg = consumer_.group(req.group_id)) {
    return consumer_offset_commit(*cg, req, version, now_ms);
  }
  if (ClassicGroup* g = find_group(req.group_id)) {
    group_error = validate_commit(*g, req.member_id, req.group_instance_id, req.generation_id_or_member_epoch, false);
  } else if (req.generation_id_or_member_epoch < 0) {
    get_or_create(req.group_id);  // a "simple" group: offsets only
  } else {
    group_error = version >= 9 ? Error::kGroupIdNotFound : Error::kIllegalGeneration;
  }
  out.response = offsets_.commit(req, version, now_ms, group_error, out.effects.records);
  return out;
}

Reply<p::TxnOffsetCommitResponse> GroupCoordinator::txn_offset_commit(const p::TxnOffsetCommitRequest& req,
                                                                      std::int16_t version, std::int64_t now_ms) {
  Reply<p::TxnOffsetCommitResponse> out;
  Error group_error = Error::kNone;
  if (const ConsumerGroup* cg = consumer_.group(req.group_id)) {
    // Kafka's OffsetMetadataManager.validateTransactionalOffsetCommit: ConsumerGroup's
    // validateOffsetCommit (transactional: any version, and no member at all with generation -1
    // passes, which is what v0-2 send); a stale epoch, for the request or for one partition
    // (KIP-1251, checked as the offsets are written, skipping those whose metadata is too large),
    // fails the whole request with ILLEGAL_GENERATION.
    CommitCheck check =
        consumer_.validate_commit(*cg, req.member_id, req.group_instance_id, req.generation_id, true, version, topics_);
    group_error = check.group_error.code;
    if (group_error == Error::kNone && check.per_partition) {
      for (const auto& topic : req.topics) {
        for (const auto& part : topic.partitions) {
          if (offsets_.metadata_too_large(part.committed_metadata)) continue;
          if (check.per_partition(topic.name, part.partition_index).code != Error::kNone) {
            group_error = Error::kStaleMemberEpoch;
          }
        }
      }
    }
    if (group_error == Error::kStaleMemberEpoch) group_error = Error::kIllegalGeneration;
  } else if (const ClassicGroup* g = find_group(req.group_id)) {
    group_error = validate_commit(*g, req.member_id, req.group_instance_id, req.generation_id, true);
  } else if (req.generation_id < 0) {
    get_or_create(req.group_id);  // a "simple" group, as for OffsetCommit
  } else {
    group_error = Error::kIllegalGeneration;
  }
  out.response = offsets_.commit_transactional(req, now_ms, group_error, out.effects.records);
  if (!out.effects.records.empty()) {
    out.effects.transactional = TransactionalBatch{req.producer_id, req.producer_epoch};
  }
  return out;
}

Effects GroupCoordinator::complete_transaction(std::int64_t producer_id, bool commit) {
  offsets_.end_transaction(producer_id, commit);
  return {};
}

p::OffsetFetchResponse GroupCoordinator::offset_fetch(const p::OffsetFetchRequest& req, std::int16_t version) const {
  using Wanted = OffsetManager::Wanted;
  const bool require_stable = version >= 7 && req.require_stable;
  p::OffsetFetchResponse resp;
  if (version < 8) {
    Wanted want;
    if (req.topics) {
      want.emplace();
      for (const auto& t : *req.topics) want->emplace_back(t.name, t.partition_indexes);
    }
    for (auto& t : offsets_.fetch(req.group_id, want, require_stable)) {
      auto& rt = resp.topics.emplace_back();
      rt.name = t.name;
      for (auto& part : t.partitions) {
        auto& rp = rt.partitions.emplace_back();
        rp.partition_index = part.partition_index;
        rp.committed_offset = part.committed_offset;
        rp.committed_leader_epoch = part.committed_leader_epoch;
        rp.metadata = part.metadata;
        rp.error_code = part.error_code;
      }
    }
    return resp;
  }
  for (const auto& group_req : req.groups) {
    Wanted want;
    if (group_req.topics) {
      want.emplace();
      for (const auto& t : *group_req.topics) want->emplace_back(t.name, t.partition_indexes);
    }
    auto& rg = resp.groups.emplace_back();
    rg.group_id = group_req.group_id;
    rg.topics = offsets_.fetch(group_req.group_id, want, require_stable);
  }
  return resp;
}

namespace {

// The topics a "consumer" protocol member subscribes to, from its ConsumerProtocolSubscription
// (int16 version, then an int32-counted array of int16-length strings); nullopt if unreadable.
std::optional<std::vector<std::string>> subscribed_topics(const Bytes& metadata) {
  p::Reader r(metadata);
  const std::int16_t v = r.i16();
  const std::int32_t n = r.i32();
  if (!r.ok() || v < 0 || n < 0 || static_cast<std::size_t>(n) > metadata.size()) return std::nullopt;
  std::vector<std::string> out;
  for (std::int32_t i = 0; i < n; ++i) {
    const std::int16_t len = r.i16();
    if (!r.ok() || len < 0) return std::nullopt;
    auto bytes = r.take(static_cast<std::size_t>(len));
    if (!r.ok()) return std::nullopt;
    out.emplace_back(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  }
  return out;
}

// Kafka's ClassicGroup.subscribedTopics: the union of the members' subscriptions when the group
// uses the consumer protocol and every member's metadata for the chosen protocol reads as a
// subscription; nullopt when that is not known.
std::optional<std::set<std::string>> subscriptions(const ClassicGroup& g) {
  if (g.protocol_type() != std::optional<std::string>("consumer") || !g.protocol_name()) return std::nullopt;
  std::set<std::string> all;
  for (const auto& [id, m] : g.members()) {
    const Bytes* md = m.metadata_for(*g.protocol_name());
    if (md == nullptr) return std::nullopt;
    auto topics = subscribed_topics(*md);
    if (!topics) return std::nullopt;
    all.insert(topics->begin(), topics->end());
  }
  return all;
}

// Kafka's ClassicGroup.isSubscribedToTopic (false when the subscriptions are not known).
bool is_subscribed_to(const ClassicGroup& g, const std::string& topic) {
  auto subs = subscriptions(g);
  return subs && subs->contains(topic);
}

}  // namespace

Reply<p::OffsetDeleteResponse> GroupCoordinator::offset_delete(const p::OffsetDeleteRequest& req,
                                                               std::int16_t /*version*/, std::int64_t /*now_ms*/) {
  Reply<p::OffsetDeleteResponse> out;
  ClassicGroup* g = req.group_id.empty() ? nullptr : find_group(req.group_id);
  if (req.group_id.empty()) {
    out.response.error_code = code(Error::kInvalidGroupId);
    return out;
  }
  // Every requested partition is answered; a topic the group is subscribed to keeps its offsets
  // (GROUP_SUBSCRIBED_TO_TOPIC), the others lose theirs.
  const auto delete_unless_subscribed = [&](const auto& subscribed_to) {
    for (const auto& topic : req.topics) {
      auto& rt = out.response.topics.emplace_back();
      rt.name = topic.name;
      const bool keep = subscribed_to(topic.name);
      for (const auto& part : topic.partitions) {
        auto& rp = rt.partitions.emplace_back();
        rp.partition_index = part.partition_index;
        if (keep) {
          rp.error_code = code(Error::kGroupSubscribedToTopic);
          continue;
        }
        offsets_.remove(req.group_id, topic.name, part.partition_index, out.effects.records);
      }
    }
  };
  if (const ConsumerGroup* cg = consumer_.group(req.group_id)) {
    // Kafka's ConsumerGroup.validateOffsetDelete accepts every state; a topic some member
    // subscribes to, by name or through a resolved regex (isSubscribedToTopic), keeps its offsets.
    const std::set<std::string> subscribed = cg->subscribed_topic_names();
    delete_unless_subscribed([&subscribed](const std::string& topic) { return subscribed.contains(topic); });
    return out;
  }
  if (g == nullptr || g->is(GroupState::kDead)) {
    out.response.error_code = code(Error::kGroupIdNotFound);
    return out;
  }
  // A group with members may only lose offsets of topics it does not consume, which is only
  // known for the consumer protocol.
  if (!g->is(GroupState::kEmpty) && g->protocol_type() != std::optional<std::string>("consumer")) {
    out.response.error_code = code(Error::kNonEmptyGroup);
    return out;
  }
  delete_unless_subscribed(
      [g](const std::string& topic) { return !g->is(GroupState::kEmpty) && is_subscribed_to(*g, topic); });
  return out;
}

Effects GroupCoordinator::expire_offsets(std::int64_t now_ms) {
  Effects fx;
  std::vector<std::string> emptied;
  std::vector<std::pair<std::string, std::pair<std::string, std::int32_t>>> expired;
  for (const auto& [group_id, partitions] : offsets_.offsets()) {
    const ClassicGroup* g = find_group(group_id);
    const ConsumerGroup* cg = consumer_.group(group_id);
    // The timestamp each offset's retention counts from; nullopt: this group's offsets do not expire now.
    std::optional<std::int64_t> since_state;
    bool by_commit = false;
    bool skip_subscribed = false;
    std::set<std::string> consumer_topics;
    if (cg != nullptr) {
      // Kafka's ConsumerGroup: by commit time, except topics some member subscribes to.
      by_commit = true;
      consumer_topics = cg->subscribed_topic_names();
    } else if (g == nullptr || !g->protocol_type()) {
      by_commit = true;
    } else if (g->is(GroupState::kEmpty)) {
      if (g->state_timestamp_ms() >= 0) {
        since_state = g->state_timestamp_ms();
      } else {
        by_commit = true;
      }
    } else if (g->is(GroupState::kStable) && subscriptions(*g)) {
      by_commit = true;
      skip_subscribed = true;
    } else {
      continue;
    }
    std::size_t kept = 0;
    for (const auto& [tp, o] : partitions) {
      bool due = false;
      if (offsets_.has_pending(group_id, tp.first, tp.second)) {
        due = false;  // as Kafka: an offset a transaction may still replace stays
      } else if (skip_subscribed && is_subscribed_to(*g, tp.first)) {
        due = false;
      } else if (consumer_topics.contains(tp.first)) {
        due = false;
      } else if (o.expire_timestamp_ms >= 0) {
        due = now_ms >= o.expire_timestamp_ms;
      } else {
        const std::int64_t base = by_commit ? o.commit_timestamp_ms : *since_state;
        due = now_ms - base >= config_.offsets_retention_ms;
      }
      if (due) {
        expired.emplace_back(group_id, tp);
      } else {
        ++kept;
      }
    }
    if (kept == 0 && !offsets_.has_pending(group_id)) emptied.push_back(group_id);
  }
  for (const auto& [group_id, tp] : expired) offsets_.remove(group_id, tp.first, tp.second, fx.records);
  for (const auto& id : emptied) {
    if (const ConsumerGroup* cg = consumer_.group(id)) {
      if (!cg->members().empty()) continue;
      auto tombstones = consumer_.delete_records(*cg);
      consumer_.apply(tombstones);
      for (auto& t : tombstones) fx.records.push_back(std::move(t));
      continue;
    }
    ClassicGroup* g = find_group(id);
    if (g == nullptr || !g->is(GroupState::kEmpty)) continue;
    fx.records.push_back(Record{group_key(id), std::nullopt});
    groups_.erase(id);
  }
  return fx;
}

// ---- DescribeGroups / ListGroups / DeleteGroups ---------------------------------------------

p::DescribeGroupsResponse GroupCoordinator::describe_groups(const p::DescribeGroupsRequest& req,
                                                            std::int16_t version) const {
  p::DescribeGroupsResponse resp;
  for (const std::string& id : req.groups) {
    auto& d = resp.groups.emplace_back();
    d.group_id = id;
    const ClassicGroup* g = group(id);
    if (g == nullptr && consumer_.group(id) != nullptr) {
      // Kafka 4.3.1 describes a consumer-protocol group only through ConsumerGroupDescribe.
      d.group_state = to_string(GroupState::kDead);
      if (version >= 6) {
        d.error_code = code(Error::kGroupIdNotFound);
        d.error_message = fmt::format("Group {} is not a classic group.", id);
      }
      continue;
    }
    if (g == nullptr) {
      d.group_state = to_string(GroupState::kDead);
      if (version >= 6) {
        d.error_code = code(Error::kGroupIdNotFound);
        d.error_message = fmt::format("Group {} not found.", id);
      }
      continue;
    }
    d.group_state = to_string(g->state());
    d.protocol_type = g->protocol_type().value_or("");
    const bool stable = g->is(GroupState::kStable);
    if (stable) d.protocol_data = g->protocol_name().value_or("");
    for (const auto& [member_id, m] : g->members()) {
      auto& dm = d.members.emplace_back();
      dm.member_id = member_id;
      dm.group_instance_id = m.group_instance_id;
      dm.client_id = m.client_id;
      dm.client_host = m.client_host;
      if (!stable) continue;
      if (const Bytes* md = m.metadata_for(d.protocol_data)) dm.member_metadata = *md;
      dm.member_assignment = m.assignment;
    }
  }
  return resp;
}

p::ListGroupsResponse GroupCoordinator::list_groups(const p::ListGroupsRequest& req, std::int16_t /*version*/) const {
  p::ListGroupsResponse resp;
  auto wanted = [](const std::vector<std::string>& filter, std::string_view value) {
    return filter.empty() || std::ranges::any_of(filter, [&](const std::string& f) { return iequals(f, value); });
  };
  for (const auto& [id, g] : groups_) {
    if (!wanted(req.states_filter, to_string(g->state())) || !wanted(req.types_filter, "classic")) continue;
    auto& lg = resp.groups.emplace_back();
    lg.group_id = id;
    lg.protocol_type = g->protocol_type().value_or("");
    lg.group_state = to_string(g->state());
    lg.group_type = "classic";  // Kafka's GroupType spelling
  }
  for (const auto& [id, g] : consumer_.groups()) {
    const std::string_view state = to_string(g.state());
    if (!wanted(req.states_filter, state) || !wanted(req.types_filter, "consumer")) continue;
    auto& lg = resp.groups.emplace_back();
    lg.group_id = id;
    lg.protocol_type = "consumer";
    lg.group_state = std::string(state);
    lg.group_type = "consumer";
  }
  std::ranges::sort(resp.groups, {}, [](const auto& lg) { return lg.group_id; });
  return resp;
}

Reply<p::DeleteGroupsResponse> GroupCoordinator::delete_groups(const p::DeleteGroupsRequest& req,
                                                               std::int16_t /*version*/, std::int64_t /*now_ms*/) {
  Reply<p::DeleteGroupsResponse> out;
  for (const std::string& id : req.groups_names) {
    auto& r = out.response.results.emplace_back();
    r.group_id = id;
    if (const ConsumerGroup* cg = consumer_.group(id)) {
      if (!cg->members().empty()) {
        r.error_code = code(Error::kNonEmptyGroup);
        continue;
      }
      offsets_.remove_group(id, out.effects.records);
      auto tombstones = consumer_.delete_records(*cg);
      consumer_.apply(tombstones);
      for (auto& t : tombstones) out.effects.records.push_back(std::move(t));
      groups_.erase(id);
      continue;
    }
    ClassicGroup* g = find_group(id);
    Error e = Error::kNone;
    if (g == nullptr || g->is(GroupState::kDead)) {  // "" is a group id here, as in Kafka
      e = Error::kGroupIdNotFound;
    } else if (!g->is(GroupState::kEmpty)) {
      e = Error::kNonEmptyGroup;
    }
    r.error_code = code(e);
    if (e != Error::kNone) continue;
    offsets_.remove_group(id, out.effects.records);
    out.effects.records.push_back(Record{group_key(id), std::nullopt});
    groups_.erase(id);
  }
  return out;
}

// ---- Timers ---------------------------------------------------------------------------------

Effects GroupCoordinator::tick(std::int64_t now_ms) {
  Effects fx;
  std::vector<std::string> ids;
  for (const auto& [id, g] : groups_) ids.push_back(id);
  for (const std::string& id : ids) {
    ClassicGroup* g = find_group(id);
    if (g == nullptr) continue;
    std::vector<std::string> expired_pending;
    for (const auto& [member_id, deadline] : g->pending_members()) {
      if (deadline <= now_ms) expired_pending.push_back(member_id);
    }
    for (const std::string& member_id : expired_pending) {
      g->pending_members().erase(member_id);
      if (g->is(GroupState::kPreparingRebalance)) maybe_complete_join(*g, now_ms, fx);
    }
    std::vector<std::string> expired;
    for (const auto& [member_id, m] : g->members()) {
      if (m.heartbeat_deadline_ms > now_ms) continue;
      if (!m.is_new && (m.awaiting_join || m.awaiting_sync)) {
        // Waiting on a rebalance counts as alive; look again one session later.
        g->find(member_id)->heartbeat_deadline_ms = now_ms + m.session_timeout_ms;
      } else {
        expired.push_back(member_id);
      }
    }
    for (const std::string& member_id : expired) remove_member_and_update(*g, member_id, now_ms, fx);
    if (g->join_deadline_ms >= 0 && g->join_deadline_ms <= now_ms) fire_join_timer(*g, now_ms, fx);
    if (g->sync_deadline_ms >= 0 && g->sync_deadline_ms <= now_ms) fire_sync_timer(*g, now_ms, fx);
    g->check_invariants();
  }
  for (Record& r : consumer_.tick(topics_, now_ms)) fx.records.push_back(std::move(r));
  apply_downgrades(now_ms, fx);
  return fx;
}

void GroupCoordinator::fire_join_timer(ClassicGroup& g, std::int64_t now_ms, Effects& fx) {
  if (!g.is(GroupState::kPreparingRebalance)) {
    g.join_deadline_ms = -1;
    return;
  }
  const std::int64_t remaining_ms = g.initial_join_remaining_ms;
  if (remaining_ms > 0 && g.new_member_added) {
    // Members are still arriving at a new group: wait one more delay, within the rebalance timeout.
    g.new_member_added = false;
    const std::int64_t delay_ms = std::min<std::int64_t>(config_.initial_rebalance_delay_ms, remaining_ms);
    g.initial_join_remaining_ms = std::max<std::int64_t>(remaining_ms - config_.initial_rebalance_delay_ms, 0);
    g.join_deadline_ms = now_ms + delay_ms;
    return;
  }
  complete_join(g, now_ms, fx);
}

void GroupCoordinator::fire_sync_timer(ClassicGroup& g, std::int64_t now_ms, Effects& fx) {
  g.sync_deadline_ms = -1;
  if (g.pending_sync.empty()) return;
  if (!g.is(GroupState::kCompletingRebalance) && !g.is(GroupState::kStable)) return;
  const std::vector<std::string> late = g.pending_sync;
  for (const std::string& id : late) {
    Member* m = g.find(id);
    if (m != nullptr && m->awaiting_sync) {
      fx.syncs.push_back({*m->awaiting_sync, m->sync_version, sync_error(Error::kUnknownMemberId)});
    }
    g.remove(id);
  }
  prepare_rebalance(g, now_ms, fx);
}

std::optional<std::int64_t> GroupCoordinator::next_deadline_ms() const {
  std::int64_t next = kDisarmed;
  for (const auto& [id, g] : groups_) {
    for (const auto& [member_id, deadline] : g->pending_members()) next = std::min(next, deadline);
    for (const auto& [member_id, m] : g->members()) next = std::min(next, m.heartbeat_deadline_ms);
    if (g->join_deadline_ms >= 0) next = std::min(next, g->join_deadline_ms);
    if (g->sync_deadline_ms >= 0) next = std::min(next, g->sync_deadline_ms);
  }
  if (auto consumer_next = consumer_.next_deadline_ms()) next = std::min(next, *consumer_next);
  if (next == kDisarmed) return std::nullopt;
  return next;
}

// ---- Records --------------------------------------------------------------------------------

Bytes GroupCoordinator::group_key(const std::string& group_id) {
  Bytes key;
  p::Writer kw(key);
  kw.i16(kGroupMetadataKeyVersion);
  p::GroupMetadataKey k;
  k.group = group_id;
  k.encode(kw, 0);
  return key;
}

Record GroupCoordinator::group_metadata_record(const ClassicGroup& g, std::int64_t /*now_ms*/) const {
  Record rec;
  rec.key = group_key(g.group_id());

  p::GroupMetadataValue v;
  v.protocol_type = g.protocol_type().value_or("");
  v.generation = g.generation_id();
  v.protocol = g.protocol_name();
  v.leader = g.leader_id().empty() ? std::nullopt : std::optional<std::string>(g.leader_id());
  v.current_state_timestamp = g.state_timestamp_ms();
  for (const auto& [id, m] : g.members()) {
    auto& mm = v.members.emplace_back();
    mm.member_id = id;
    mm.group_instance_id = m.group_instance_id;
    mm.client_id = m.client_id;
    mm.client_host = m.client_host;
    mm.rebalance_timeout = m.rebalance_timeout_ms;
    mm.session_timeout = m.session_timeout_ms;
    if (g.protocol_name()) {
      if (const Bytes* md = m.metadata_for(*g.protocol_name())) mm.subscription = *md;
    }
    mm.assignment = m.assignment;
  }
  Bytes value;
  p::Writer vw(value);
  vw.i16(kGroupMetadataValueVersion);
  v.encode(vw, kGroupMetadataValueVersion);
  rec.value = std::move(value);
  return rec;
}

Status<ReplayError> GroupCoordinator::replay(std::span<const std::uint8_t> key,
                                             std::optional<std::span<const std::uint8_t>> value, RecordContext at) {
  p::Reader kr(key);
  const std::int16_t key_version = kr.i16();
  if (!kr.ok()) return unexpected(ReplayError::kMalformedKey);
  if (key_version == 0 || key_version == 1) {
    auto group_id = offsets_.replay(kr, value, at);
    if (!group_id) return unexpected(group_id.error());
    // Offsets committed without joining make a "simple" group, as in Kafka, unless a consumer
    // group has the id.
    if (value && consumer_.group(*group_id) == nullptr) get_or_create(*group_id);
    return {};
  }
  if (key_version == kGroupMetadataKeyVersion) return replay_group(kr, value);
  if (is_consumer_record_type(key_version)) return consumer_.replay(key_version, kr, value);
  return unexpected(ReplayError::kUnknownKeyVersion);
}

void GroupCoordinator::replay_end_transaction(std::int64_t producer_id, bool commit) {
  offsets_.end_transaction(producer_id, commit);
}

Status<ReplayError> GroupCoordinator::replay_group(p::Reader& kr, std::optional<std::span<const std::uint8_t>> value) {
  p::GroupMetadataKey k;
  k.decode(kr, 0);
  if (!kr.ok() || kr.remaining() != 0) return unexpected(ReplayError::kMalformedKey);
  if (!value) {
    groups_.erase(k.group);
    return {};
  }
  p::Reader vr(*value);
  const std::int16_t version = vr.i16();
  if (!vr.ok() || version < p::GroupMetadataValue::kMinVersion) return unexpected(ReplayError::kMalformedValue);
  p::GroupMetadataValue v;
  v.decode(vr, std::min(version, p::GroupMetadataValue::kMaxVersion));
  if (!vr.ok()) return unexpected(ReplayError::kMalformedValue);
  std::vector<Member> members;
  for (const auto& mm : v.members) {
    Member& m = members.emplace_back();
    m.member_id = mm.member_id;
    m.group_instance_id = mm.group_instance_id;
    m.client_id = mm.client_id;
    m.client_host = mm.client_host;
    m.session_timeout_ms = mm.session_timeout;
    m.rebalance_timeout_ms = mm.rebalance_timeout == -1 ? mm.session_timeout : mm.rebalance_timeout;
    if (v.protocol) m.protocols.push_back(Protocol{*v.protocol, mm.subscription});
    m.assignment = mm.assignment;
    m.heartbeat_deadline_ms = kDisarmed;
  }
  std::optional<std::string> protocol_type;
  if (!v.protocol_type.empty()) protocol_type = v.protocol_type;
  get_or_create(k.group).restore(std::move(protocol_type), v.generation, v.protocol, v.leader.value_or(""),
                                 v.current_state_timestamp, std::move(members));
  groups_.at(k.group)->check_invariants();
  return {};
}

void GroupCoordinator::finish_replay(std::int64_t now_ms) {
  consumer_.finish_replay(now_ms);
  for (auto& [id, g] : groups_) {
    for (const auto& [member_id, m] : g->members()) {
      g->find(member_id)->heartbeat_deadline_ms = now_ms + m.session_timeout_ms;
    }
  }
}

}  // namespace weir::group

namespace weir::group {

// ---- Consumer protocol (KIP-848) -------------------------------------------------------------

Reply<p::ConsumerGroupHeartbeatResponse> GroupCoordinator::consumer_group_heartbeat(
    const p::ConsumerGroupHeartbeatRequest& req, std::int16_t version, const ClientInfo& client,
    const TopicImage& topics, std::int64_t now_ms) {
  Reply<p::ConsumerGroupHeartbeatResponse> out;
  auto error = [&](GroupError e) {
    out.response.error_code = code(e.code);
    out.response.error_message = std::move(e.message);
    return out;
  };
  if (GroupError e = consumer_.validate(req, version); e.code != Error::kNone) return error(std::move(e));
  if (ClassicGroup* g = find_group(req.group_id)) {
    // An empty classic group (or one holding only offsets) is replaced by the consumer group on
    // the first join, as Kafka does; one with members is converted (the online upgrade).
    if (req.member_epoch != 0) {
      return error({Error::kGroupIdNotFound, fmt::format("Group {} is not a consumer group.", req.group_id)});
    }
    std::vector<Record> records{Record{group_key(req.group_id), std::nullopt}};
    if (!g->is(GroupState::kEmpty)) {
      if (GroupError e = upgrade_refusal(*g); e.code != Error::kNone) return error(std::move(e));
      auto converted = consumer_.convert_from_classic(*g, topics, now_ms);
      if (!converted) return error(std::move(converted.error()));
      for (Record& r : *converted) records.push_back(std::move(r));
    }
    auto hb = consumer_.heartbeat(req, client, topics, now_ms);
    if (hb.response.error_code != 0) {
      consumer_.forget(req.group_id);  // the classic group stays as it was
      out.response = std::move(hb.response);
      return out;
    }
    // Members waiting on a JoinGroup or SyncGroup of the old generation rejoin the new group.
    for (const auto& [id, m] : g->members()) {
      if (m.awaiting_join)
        out.effects.joins.push_back({*m.awaiting_join, m.join_version, join_error(Error::kRebalanceInProgress, id)});
      if (m.awaiting_sync)
        out.effects.syncs.push_back({*m.awaiting_sync, m.sync_version, sync_error(Error::kRebalanceInProgress)});
    }
    groups_.erase(req.group_id);
    out.response = std::move(hb.response);
    out.effects.records = std::move(records);
    for (auto& r : hb.records) out.effects.records.push_back(std::move(r));
    return out;
  }
  auto hb = consumer_.heartbeat(req, client, topics, now_ms);
  out.response = std::move(hb.response);
  out.effects.records = std::move(hb.records);
  apply_downgrades(now_ms, out.effects);
  return out;
}

GroupError GroupCoordinator::upgrade_refusal(const ClassicGroup& g) const {
  auto refused = [&g](std::string_view why) {
    return GroupError{Error::kGroupIdNotFound,
                      fmt::format("Cannot upgrade classic group {} to consumer group because {}.", g.group_id(), why)};
  };
  if (!upgrade_enabled(config_.consumer.migration_policy)) return refused("online upgrade is disabled");
  if (g.protocol_type() != std::optional<std::string>(p::kConsumerProtocolType)) {
    return refused("the group does not use the consumer embedded protocol");
  }
  if (g.size() > static_cast<std::size_t>(config_.consumer.max_size)) {
    return refused("the group size exceeds the consumer group maximum size");
  }
  return {};
}

void GroupCoordinator::apply_downgrades(std::int64_t now_ms, Effects& fx) {
  for (Downgrade& d : consumer_.take_downgrades()) {
    const ConsumerGroup& cg = d.group;
    std::vector<Member> members;
    std::vector<std::string> ids;
    for (const auto& [id, cm] : cg.members()) {
      if (id != d.leaving_member_id && id != d.joining_member_id) ids.push_back(id);
    }
    if (!d.joining_member_id.empty()) ids.push_back(d.joining_member_id);  // added last, as Kafka does
    for (const std::string& id : ids) {
      const ConsumerMember& cm = cg.members().at(id);
      WEIR_ASSERT(cm.classic.has_value(), "downgrading group {} with consumer-protocol member {}", cg.group_id(), id);
      Member m;
      m.member_id = id;
      m.group_instance_id = cm.instance_id;
      m.client_id = cm.client_id;
      m.client_host = cm.client_host;
      m.rebalance_timeout_ms = cm.rebalance_timeout_ms;
      m.session_timeout_ms = cm.classic->session_timeout_ms;
      m.protocols = cm.classic->protocols;
      m.heartbeat_deadline_ms = now_ms + m.session_timeout_ms;
      members.push_back(std::move(m));
    }
    ClassicGroup& g = get_or_create(cg.group_id());
    // The first member leads, as the first one added leads in Kafka's ClassicGroup.
    const std::string leader = members.front().member_id;
    g.restore(std::string(p::kConsumerProtocolType), cg.group_epoch(), std::nullopt, leader, now_ms,
              std::move(members));
    g.set_protocol_name(g.select_protocol());
    // Each member's assignment is its target, at the version of its metadata.
    for (const auto& [id, member] : g.members()) {
      Member& m = *g.find(id);
      const Bytes* md = m.metadata_for(*g.protocol_name());
      p::Reader r(md != nullptr ? *md : Bytes{});
      const std::int16_t v = std::clamp<std::int16_t>(r.ok() ? r.i16() : 0, 0, p::kConsumerProtocolVersion);
      p::ConsumerAssignment a;
      for (const auto& [topic, partitions] : cg.target_of(id)) {
        const TopicImage::Topic* t = topic_image().by_id(topic);
        if (t == nullptr) continue;
        for (std::int32_t partition : partitions) a.partitions.emplace_back(t->name, partition);
      }
      m.assignment = p::encode_assignment(a, v);
    }
    fx.records.push_back(group_metadata_record(g, now_ms));
    prepare_rebalance(g, now_ms, fx);
    g.check_invariants();
  }
}

p::ConsumerGroupDescribeResponse GroupCoordinator::consumer_group_describe(const p::ConsumerGroupDescribeRequest& req,
                                                                           std::int16_t /*version*/,
                                                                           const TopicImage& topics) const {
  p::ConsumerGroupDescribeResponse resp;
  for (const std::string& id : req.group_ids) {
    if (consumer_.group(id) == nullptr && group(id) != nullptr) {
      auto& d = resp.groups.emplace_back();
      d.group_id = id;
      d.error_code = code(Error::kGroupIdNotFound);
      d.error_message = fmt::format("Group {} is not a consumer group.", id);
      continue;
    }
    resp.groups.push_back(consumer_.describe(id, topics));
  }
  return resp;
}

Reply<p::OffsetCommitResponse> GroupCoordinator::consumer_offset_commit(const ConsumerGroup& g,
                                                                        const p::OffsetCommitRequest& req,
                                                                        std::int16_t version, std::int64_t now_ms) {
  Reply<p::OffsetCommitResponse> out;
  CommitCheck check = consumer_.validate_commit(g, req.member_id, req.group_instance_id,
                                                req.generation_id_or_member_epoch, false, version, topics_);
  if (check.group_error.code != Error::kNone || !check.per_partition) {
    out.response = offsets_.commit(req, version, now_ms, check.group_error.code, out.effects.records);
    return out;
  }
  // Older epoch: commit the partitions the member held at that epoch, refuse the others.
  p::OffsetCommitRequest allowed = req;
  std::map<std::pair<std::string, std::int32_t>, Error> refused;
  for (auto& topic : allowed.topics) {
    std::erase_if(topic.partitions, [&](const auto& part) {
      GroupError e = check.per_partition(topic.name, part.partition_index);
      if (e.code == Error::kNone) return false;
      refused[{topic.name, part.partition_index}] = e.code;
      return true;
    });
  }
  p::OffsetCommitResponse done = offsets_.commit(allowed, version, now_ms, Error::kNone, out.effects.records);
  std::map<std::pair<std::string, std::int32_t>, std::int16_t> results;
  for (const auto& t : done.topics) {
    for (const auto& part : t.partitions) results[{t.name, part.partition_index}] = part.error_code;
  }
  for (const auto& topic : req.topics) {
    auto& rt = out.response.topics.emplace_back();
    rt.name = topic.name;
    rt.topic_id = topic.topic_id;
    for (const auto& part : topic.partitions) {
      auto& rp = rt.partitions.emplace_back();
      rp.partition_index = part.partition_index;
      auto r = refused.find({topic.name, part.partition_index});
      rp.error_code = r != refused.end() ? code(r->second) : results[{topic.name, part.partition_index}];
    }
  }
  return out;
}

}  // namespace weir::group
