// Drives a GroupCoordinator the way the broker will: every request gets a handle, effects are
// collected, and every record is kept so a second coordinator can replay them.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "group/coordinator.h"

namespace weir::group::testing {

namespace p = weir::protocol;

inline Bytes bytes(std::string_view s) { return Bytes(s.begin(), s.end()); }

struct JoinOptions {
  std::string member_id;
  std::optional<std::string> instance_id;
  std::string metadata = "sub-a";
  std::string protocol = "range";
  std::int32_t session_timeout_ms = 10'000;
  std::int32_t rebalance_timeout_ms = 30'000;
  std::int16_t version = 9;
  std::string client_id = "client";
};

class GroupHarness {
 public:
  explicit GroupHarness(GroupConfig config = default_config()) : coordinator(config) {}

  static GroupConfig default_config() {
    GroupConfig c;
    c.member_id_seed = 42;
    return c;
  }

  std::int64_t now() const { return clock.now_ms(); }

  // Sends a JoinGroup; returns its reply if it was answered right away.
  std::optional<JoinReply> join(const std::string& group, const JoinOptions& o,
                                RequestHandle* handle_out = nullptr) {
    p::JoinGroupRequest req;
    req.group_id = group;
    req.member_id = o.member_id;
    req.group_instance_id = o.instance_id;
    req.session_timeout_ms = o.session_timeout_ms;
    req.rebalance_timeout_ms = o.rebalance_timeout_ms;
    req.protocol_type = "consumer";
    auto& proto = req.protocols.emplace_back();
    proto.name = o.protocol;
    proto.metadata = bytes(o.metadata);
    const RequestHandle h = next_handle++;
    if (handle_out) *handle_out = h;
    absorb(coordinator.join_group(h, req, o.version, o.client_id, "/10.0.0.1", now()));
    return take_join(h);
  }

  // A dynamic member's full KIP-394 dance: MEMBER_ID_REQUIRED, then the join with the id.
  // Returns the member id and the handle of the held second JoinGroup.
  std::pair<std::string, RequestHandle> join_with_required_id(const std::string& group,
                                                              JoinOptions o) {
    auto first = join(group, o);
    EXPECT_TRUE(first.has_value());
    EXPECT_EQ(first->response.error_code, code(Error::kMemberIdRequired));
    o.member_id = first->response.member_id;
    RequestHandle h = 0;
    auto second = join(group, o, &h);
    if (second) joins.push_back(*second);  // answered at once: keep it for take_join
    return {o.member_id, h};
  }

  std::optional<SyncReply> sync(const std::string& group, const std::string& member_id,
                                std::int32_t generation,
                                std::vector<std::pair<std::string, std::string>> assignments = {},
                                std::optional<std::string> instance_id = std::nullopt) {
    p::SyncGroupRequest req;
    req.group_id = group;
    req.member_id = member_id;
    req.generation_id = generation;
    req.group_instance_id = instance_id;
    for (auto& [id, a] : assignments) {
      auto& sa = req.assignments.emplace_back();
      sa.member_id = id;
      sa.assignment = bytes(a);
    }
    const RequestHandle h = next_handle++;
    last_sync_handle = h;
    absorb(coordinator.sync_group(h, req, 5, now()));
    return take_sync(h);
  }

  std::int16_t heartbeat(const std::string& group, const std::string& member_id,
                         std::int32_t generation, std::optional<std::string> instance_id = std::nullopt) {
    p::HeartbeatRequest req;
    req.group_id = group;
    req.member_id = member_id;
    req.generation_id = generation;
    req.group_instance_id = instance_id;
    auto r = coordinator.heartbeat(req, 4, now());
    absorb(std::move(r.effects));
    return r.response.error_code;
  }

  std::int16_t leave(const std::string& group, const std::string& member_id) {
    p::LeaveGroupRequest req;
    req.group_id = group;
    req.members.emplace_back().member_id = member_id;
    auto r = coordinator.leave_group(req, 5, now());
    absorb(std::move(r.effects));
    EXPECT_EQ(r.response.members.size(), 1u);
    return r.response.members.front().error_code;
  }

  // OffsetCommit v8 of one partition; returns its error code.
  std::int16_t commit(const std::string& group, const std::string& member_id, std::int32_t generation,
                      const std::string& topic, std::int32_t partition, std::int64_t offset) {
    p::OffsetCommitRequest req;
    req.group_id = group;
    req.member_id = member_id;
    req.generation_id_or_member_epoch = generation;
    auto& t = req.topics.emplace_back();
    t.name = topic;
    auto& part = t.partitions.emplace_back();
    part.partition_index = partition;
    part.committed_offset = offset;
    auto r = coordinator.offset_commit(req, 8, now());
    absorb(std::move(r.effects));
    return r.response.topics.at(0).partitions.at(0).error_code;
  }

  void advance(std::int64_t ms) {
    clock.advance_ms(ms);
    absorb(coordinator.tick(now()));
  }

  void absorb(Effects fx) {
    for (auto& r : fx.records) records.push_back(std::move(r));
    for (auto& j : fx.joins) joins.push_back(std::move(j));
    for (auto& s : fx.syncs) syncs.push_back(std::move(s));
  }

  std::optional<JoinReply> take_join(RequestHandle h) {
    for (auto it = joins.begin(); it != joins.end(); ++it) {
      if (it->handle == h) {
        JoinReply r = std::move(*it);
        joins.erase(it);
        return r;
      }
    }
    return std::nullopt;
  }

  std::optional<SyncReply> take_sync(RequestHandle h) {
    for (auto it = syncs.begin(); it != syncs.end(); ++it) {
      if (it->handle == h) {
        SyncReply r = std::move(*it);
        syncs.erase(it);
        return r;
      }
    }
    return std::nullopt;
  }

  GroupState state(const std::string& group) const {
    const ClassicGroup* g = coordinator.group(group);
    return g ? g->state() : GroupState::kDead;
  }

  ManualClock clock{0};
  GroupCoordinator coordinator;
  RequestHandle next_handle = 1;
  RequestHandle last_sync_handle = 0;
  std::vector<Record> records;
  std::vector<JoinReply> joins;
  std::vector<SyncReply> syncs;
};

inline std::string text(const Bytes& b) { return std::string(b.begin(), b.end()); }

}  // namespace weir::group::testing
