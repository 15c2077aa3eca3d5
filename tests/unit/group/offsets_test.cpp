#include <gtest/gtest.h>

#include "group/coordinator.h"
#include "group_test_util.h"
#include "protocol/gen/group_metadata_value.h"
#include "protocol/gen/offset_commit_key.h"
#include "protocol/gen/offset_commit_value.h"

namespace weir::group::testing {
namespace {

constexpr const char* kGroup = "g1";

p::OffsetCommitRequest commit_request(const std::string& group, std::int32_t generation,
                                      const std::string& member_id,
                                      std::vector<std::tuple<std::string, std::int32_t, std::int64_t>> offsets) {
  p::OffsetCommitRequest req;
  req.group_id = group;
  req.generation_id_or_member_epoch = generation;
  req.member_id = member_id;
  for (auto& [topic, partition, offset] : offsets) {
    if (req.topics.empty() || req.topics.back().name != topic) req.topics.emplace_back().name = topic;
    auto& part = req.topics.back().partitions.emplace_back();
    part.partition_index = partition;
    part.committed_offset = offset;
    part.committed_metadata = "m";
  }
  return req;
}

std::int16_t commit(GroupHarness& h, const p::OffsetCommitRequest& req, std::int16_t version = 9) {
  auto r = h.coordinator.offset_commit(req, version, h.now());
  h.absorb(std::move(r.effects));
  return r.response.topics.at(0).partitions.at(0).error_code;
}

p::OffsetFetchResponse fetch(const GroupCoordinator& c, const std::string& group,
                             std::optional<std::vector<std::pair<std::string, std::vector<std::int32_t>>>> topics,
                             std::int16_t version = 7) {
  p::OffsetFetchRequest req;
  req.group_id = group;
  if (topics) {
    req.topics.emplace();
    for (auto& [name, parts] : *topics) {
      auto& t = req.topics->emplace_back();
      t.name = name;
      t.partition_indexes = parts;
    }
  } else {
    req.topics.reset();
  }
  return c.offset_fetch(req, version);
}

// A stable group of one dynamic member; returns (member id, generation).
std::pair<std::string, std::int32_t> one_member_group(GroupHarness& h) {
  auto [id, handle] = h.join_with_required_id(kGroup, JoinOptions{});
  h.advance(3000);
  auto r = h.take_join(handle);
  EXPECT_TRUE(r);
  h.sync(kGroup, id, r->response.generation_id, {{id, "all"}});
  EXPECT_EQ(h.state(kGroup), GroupState::kStable);
  return {id, r->response.generation_id};
}

TEST(Offsets, StandaloneCommitCreatesAnEmptyGroupAndFetchReturnsIt) {
  GroupHarness h;
  EXPECT_EQ(commit(h, commit_request(kGroup, -1, "", {{"orders", 0, 42}, {"orders", 2, 7}})), 0);
  EXPECT_EQ(h.state(kGroup), GroupState::kEmpty);
  auto r = fetch(h.coordinator, kGroup, {{{"orders", {0, 1, 2}}}});
  ASSERT_EQ(r.topics.size(), 1u);
  ASSERT_EQ(r.topics[0].partitions.size(), 3u);
  EXPECT_EQ(r.topics[0].partitions[0].committed_offset, 42);
  EXPECT_EQ(r.topics[0].partitions[0].metadata, "m");
  EXPECT_EQ(r.topics[0].partitions[1].committed_offset, -1);  // nothing committed
  EXPECT_EQ(r.topics[0].partitions[1].metadata, "");
  EXPECT_EQ(r.topics[0].partitions[2].committed_offset, 7);
  EXPECT_EQ(r.error_code, 0);
}

TEST(Offsets, FetchOfAllTopicsAndOfUnknownGroup) {
  GroupHarness h;
  commit(h, commit_request(kGroup, -1, "", {{"a", 0, 1}, {"b", 3, 2}}));
  auto all = fetch(h.coordinator, kGroup, std::nullopt);
  ASSERT_EQ(all.topics.size(), 2u);
  EXPECT_EQ(all.topics[1].name, "b");
  EXPECT_EQ(all.topics[1].partitions[0].partition_index, 3);
  EXPECT_TRUE(fetch(h.coordinator, "nobody", std::nullopt).topics.empty());
  auto unknown = fetch(h.coordinator, "nobody", {{{"a", {0}}}});
  EXPECT_EQ(unknown.topics.at(0).partitions.at(0).committed_offset, -1);
}

TEST(Offsets, BatchedFetchAnswersPerGroup) {
  GroupHarness h;
  commit(h, commit_request(kGroup, -1, "", {{"a", 0, 5}}));
  p::OffsetFetchRequest req;
  auto& g1 = req.groups.emplace_back();
  g1.group_id = kGroup;
  g1.topics.reset();
  auto& g2 = req.groups.emplace_back();
  g2.group_id = "other";
  g2.topics.emplace().emplace_back().name = "a";
  g2.topics->back().partition_indexes = {0};
  auto r = h.coordinator.offset_fetch(req, 8);
  ASSERT_EQ(r.groups.size(), 2u);
  EXPECT_EQ(r.groups[0].topics.at(0).partitions.at(0).committed_offset, 5);
  EXPECT_EQ(r.groups[1].topics.at(0).partitions.at(0).committed_offset, -1);
}

TEST(Offsets, MemberCommitsAreCheckedAgainstMembershipAndGeneration) {
  GroupHarness h;
  auto [id, generation] = one_member_group(h);
  EXPECT_EQ(commit(h, commit_request(kGroup, generation, id, {{"t", 0, 10}})), 0);
  EXPECT_EQ(commit(h, commit_request(kGroup, generation - 1, id, {{"t", 0, 11}})),
            code(Error::kIllegalGeneration));
  EXPECT_EQ(commit(h, commit_request(kGroup, generation, "stranger", {{"t", 0, 11}})),
            code(Error::kUnknownMemberId));
  // A standalone commit is refused while the group has members.
  EXPECT_EQ(commit(h, commit_request(kGroup, -1, "", {{"t", 0, 11}})), code(Error::kUnknownMemberId));
  EXPECT_EQ(h.coordinator.committed(kGroup, "t", 0)->offset, 10);
  // A commit with a generation to a group that does not exist.
  EXPECT_EQ(commit(h, commit_request("ghost", 3, "m", {{"t", 0, 1}}), 8), code(Error::kIllegalGeneration));
  EXPECT_EQ(commit(h, commit_request("ghost", 3, "m", {{"t", 0, 1}}), 9), code(Error::kGroupIdNotFound));
}

TEST(Offsets, OversizedMetadataIsRefused) {
  GroupHarness h;
  auto req = commit_request(kGroup, -1, "", {{"t", 0, 1}});
  req.topics[0].partitions[0].committed_metadata = std::string(4097, 'x');
  EXPECT_EQ(commit(h, req), code(Error::kOffsetMetadataTooLarge));
  EXPECT_FALSE(h.coordinator.committed(kGroup, "t", 0));
}

TEST(Offsets, RecordsUseKafkasKeyAndValueLayouts) {
  GroupHarness h;
  commit(h, commit_request(kGroup, -1, "", {{"orders", 1, 99}}));
  ASSERT_EQ(h.records.size(), 1u);
  const Record& rec = h.records[0];
  p::Reader kr(rec.key);
  EXPECT_EQ(kr.i16(), 1);
  p::OffsetCommitKey key;
  key.decode(kr, 0);
  EXPECT_TRUE(kr.ok());
  EXPECT_EQ(kr.remaining(), 0u);
  EXPECT_EQ(key.group, kGroup);
  EXPECT_EQ(key.topic, "orders");
  EXPECT_EQ(key.partition, 1);
  ASSERT_TRUE(rec.value);
  p::Reader vr(*rec.value);
  EXPECT_EQ(vr.i16(), 3);
  p::OffsetCommitValue value;
  value.decode(vr, 3);
  EXPECT_EQ(vr.remaining(), 0u);
  EXPECT_EQ(value.offset, 99);
  EXPECT_EQ(value.commit_timestamp, h.now());

  // The group's own record, written when the group first settles.
  one_member_group(h);
  const Record& group_rec = h.records.back();
  p::Reader gk(group_rec.key);
  EXPECT_EQ(gk.i16(), 2);
  p::Reader gv(*group_rec.value);
  EXPECT_EQ(gv.i16(), 3);
  p::GroupMetadataValue gmv;
  gmv.decode(gv, 3);
  EXPECT_TRUE(gv.ok());
  EXPECT_EQ(gmv.protocol_type, "consumer");
  EXPECT_EQ(gmv.protocol, "range");
  ASSERT_EQ(gmv.members.size(), 1u);
  EXPECT_EQ(text(gmv.members[0].assignment), "all");
  EXPECT_EQ(text(gmv.members[0].subscription), "sub-a");
}

TEST(Offsets, ReplayRebuildsOffsetsAndGroupState) {
  GroupHarness h;
  auto [id, generation] = one_member_group(h);
  commit(h, commit_request(kGroup, generation, id, {{"orders", 0, 5}, {"orders", 1, 6}}));
  commit(h, commit_request(kGroup, generation, id, {{"orders", 0, 8}}));
  commit(h, commit_request("simple", -1, "", {{"x", 0, 1}}));

  GroupCoordinator restarted(GroupHarness::default_config());
  for (const Record& rec : h.records) {
    std::optional<std::span<const std::uint8_t>> value;
    if (rec.value) value = std::span<const std::uint8_t>(*rec.value);
    ASSERT_TRUE(restarted.replay(rec.key, value).has_value());
  }
  restarted.finish_replay(h.now());
  EXPECT_EQ(restarted.committed(kGroup, "orders", 0)->offset, 8);
  EXPECT_EQ(restarted.committed(kGroup, "orders", 1)->offset, 6);
  EXPECT_EQ(restarted.committed("simple", "x", 0)->offset, 1);
  const ClassicGroup* g = restarted.group(kGroup);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->state(), GroupState::kStable);
  EXPECT_EQ(g->generation_id(), generation);
  EXPECT_EQ(g->leader_id(), id);
  EXPECT_EQ(g->protocol_name(), "range");
  ASSERT_TRUE(g->has_member(id));
  EXPECT_EQ(text(g->members().at(id).assignment), "all");
  EXPECT_EQ(restarted.group("simple")->state(), GroupState::kEmpty);

  // The restored member carries on: heartbeats work, and silence expires it.
  p::HeartbeatRequest hb;
  hb.group_id = kGroup;
  hb.member_id = id;
  hb.generation_id = generation;
  EXPECT_EQ(restarted.heartbeat(hb, 4, h.now()).response.error_code, 0);
  restarted.tick(h.now() + 10'000);
  EXPECT_FALSE(restarted.group(kGroup)->has_member(id));
}

TEST(Offsets, DeleteGroupsRefusesLiveGroupsAndTombstonesEmptyOnes) {
  GroupHarness h;
  auto [id, generation] = one_member_group(h);
  commit(h, commit_request(kGroup, generation, id, {{"t", 0, 3}}));
  commit(h, commit_request("idle", -1, "", {{"t", 0, 4}, {"t", 1, 4}}));
  p::DeleteGroupsRequest req;
  req.groups_names = {kGroup, "idle", "missing"};
  auto r = h.coordinator.delete_groups(req, 2, h.now());
  ASSERT_EQ(r.response.results.size(), 3u);
  EXPECT_EQ(r.response.results[0].error_code, code(Error::kNonEmptyGroup));
  EXPECT_EQ(r.response.results[1].error_code, 0);
  EXPECT_EQ(r.response.results[2].error_code, code(Error::kGroupIdNotFound));
  ASSERT_EQ(r.effects.records.size(), 3u);  // two offset tombstones and the group's
  for (const Record& rec : r.effects.records) EXPECT_FALSE(rec.value);
  EXPECT_EQ(h.coordinator.group("idle"), nullptr);
  EXPECT_FALSE(h.coordinator.committed("idle", "t", 0));

  // Replaying everything, tombstones included, forgets the deleted group.
  h.absorb(std::move(r.effects));
  GroupCoordinator restarted(GroupHarness::default_config());
  for (const Record& rec : h.records) {
    std::optional<std::span<const std::uint8_t>> value;
    if (rec.value) value = std::span<const std::uint8_t>(*rec.value);
    ASSERT_TRUE(restarted.replay(rec.key, value).has_value());
  }
  EXPECT_EQ(restarted.group("idle"), nullptr);
  EXPECT_FALSE(restarted.committed("idle", "t", 1));
  EXPECT_EQ(restarted.committed(kGroup, "t", 0)->offset, 3);
}

TEST(Offsets, ReplayRejectsGarbage) {
  GroupCoordinator c;
  const std::uint8_t short_key[] = {0x00};
  EXPECT_EQ(c.replay(short_key, std::nullopt).error(), ReplayError::kMalformedKey);
  const std::uint8_t unknown[] = {0x00, 0x09, 0x00};
  EXPECT_EQ(c.replay(unknown, std::nullopt).error(), ReplayError::kUnknownKeyVersion);
}


GroupConfig retention_config(std::int64_t retention_ms) {
  GroupConfig c = GroupHarness::default_config();
  c.offsets_retention_ms = retention_ms;
  return c;
}

TEST(OffsetExpiry, StandaloneOffsetsExpireRetentionAfterTheirCommitAndTheGroupGoes) {
  GroupHarness h(retention_config(10'000));
  EXPECT_EQ(commit(h, commit_request(kGroup, -1, "", {{"orders", 0, 5}})), 0);
  h.advance(4'000);
  EXPECT_EQ(commit(h, commit_request(kGroup, -1, "", {{"orders", 1, 6}})), 0);
  h.advance(6'000);  // orders-0 is 10 s old, orders-1 6 s
  h.records.clear();
  h.absorb(h.coordinator.expire_offsets(h.now()));
  ASSERT_EQ(h.records.size(), 1u);
  EXPECT_FALSE(h.records[0].value.has_value());  // a tombstone for orders-0
  EXPECT_FALSE(h.coordinator.committed(kGroup, "orders", 0));
  EXPECT_TRUE(h.coordinator.committed(kGroup, "orders", 1));
  h.advance(4'000);
  h.records.clear();
  h.absorb(h.coordinator.expire_offsets(h.now()));
  ASSERT_EQ(h.records.size(), 2u);  // orders-1's tombstone, then the group's
  EXPECT_FALSE(h.records[1].value.has_value());
  EXPECT_EQ(h.coordinator.group(kGroup), nullptr);
}

TEST(OffsetExpiry, AnEmptyConsumerGroupsOffsetsExpireRetentionAfterItBecameEmpty) {
  GroupHarness h(retention_config(10'000));
  auto [id, gen] = one_member_group(h);
  EXPECT_EQ(commit(h, commit_request(kGroup, gen, id, {{"orders", 0, 5}})), 0);
  for (int i = 0; i < 5; ++i) {  // the commit gets old, but the group keeps its member
    h.advance(4'000);
    EXPECT_EQ(h.heartbeat(kGroup, id, gen), 0);
  }
  h.records.clear();
  h.absorb(h.coordinator.expire_offsets(h.now()));
  EXPECT_TRUE(h.records.empty());
  EXPECT_TRUE(h.coordinator.committed(kGroup, "orders", 0));
  EXPECT_EQ(h.leave(kGroup, id), 0);
  h.advance(9'000);
  h.records.clear();
  h.absorb(h.coordinator.expire_offsets(h.now()));
  EXPECT_TRUE(h.coordinator.committed(kGroup, "orders", 0));  // empty for 9 s only
  h.advance(1'000);
  h.absorb(h.coordinator.expire_offsets(h.now()));
  EXPECT_FALSE(h.coordinator.committed(kGroup, "orders", 0));
  EXPECT_EQ(h.coordinator.group(kGroup), nullptr);
}

TEST(OffsetExpiry, AnExplicitExpireTimestampWins) {
  GroupHarness h(retention_config(1'000'000));
  auto req = commit_request(kGroup, -1, "", {{"orders", 0, 5}});
  req.retention_time_ms = 2'000;
  auto r = h.coordinator.offset_commit(req, 2, h.now());
  h.absorb(std::move(r.effects));
  h.advance(1'999);
  h.absorb(h.coordinator.expire_offsets(h.now()));
  EXPECT_TRUE(h.coordinator.committed(kGroup, "orders", 0));
  h.advance(1);
  h.absorb(h.coordinator.expire_offsets(h.now()));
  EXPECT_FALSE(h.coordinator.committed(kGroup, "orders", 0));
}

}  // namespace
}  // namespace weir::group::testing
