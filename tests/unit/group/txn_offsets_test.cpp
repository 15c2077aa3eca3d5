// Transactional offsets (TxnOffsetCommit): pending per producer until the transaction's marker,
// the group checks Kafka makes, OffsetFetch require_stable, and the load of a
// `__consumer_offsets` log holding transactional batches and markers (real batch bytes).
#include <gtest/gtest.h>

#include "group/coordinator.h"
#include "group/offsets_load.h"
#include "group_test_util.h"
#include "protocol/record/batch_splitter.h"
#include "protocol/record/control_record.h"
#include "protocol/record/record_batch_builder.h"

namespace weir::group::testing {
namespace {

constexpr const char* kGroup = "g1";
constexpr std::int64_t kProducer = 7;
constexpr std::int16_t kEpoch = 3;

struct TxnCommit {
  std::int64_t producer_id = kProducer;
  std::int32_t generation = -1;
  std::string member_id;
  std::optional<std::string> instance_id;
  std::string metadata = "tx";
};

TxnCommit by(std::int64_t producer_id) {
  TxnCommit o;
  o.producer_id = producer_id;
  return o;
}

TxnCommit as_member(std::int32_t generation, std::string member_id,
                    std::optional<std::string> instance_id = std::nullopt) {
  TxnCommit o;
  o.generation = generation;
  o.member_id = std::move(member_id);
  o.instance_id = std::move(instance_id);
  return o;
}

p::TxnOffsetCommitRequest txn_request(const std::string& group, const TxnCommit& o,
                                      std::vector<std::tuple<std::string, std::int32_t, std::int64_t>> offsets) {
  p::TxnOffsetCommitRequest req;
  req.transactional_id = "app";
  req.group_id = group;
  req.producer_id = o.producer_id;
  req.producer_epoch = kEpoch;
  req.generation_id = o.generation;
  req.member_id = o.member_id;
  req.group_instance_id = o.instance_id;
  for (auto& [topic, partition, offset] : offsets) {
    if (req.topics.empty() || req.topics.back().name != topic) req.topics.emplace_back().name = topic;
    auto& part = req.topics.back().partitions.emplace_back();
    part.partition_index = partition;
    part.committed_offset = offset;
    part.committed_metadata = o.metadata;
  }
  return req;
}

// A log of `__consumer_offsets` as the host writes it: one batch per event.
struct Log {
  std::vector<std::byte> bytes;
  std::int64_t next_offset = 0;

  void append(const Effects& fx) {
    if (fx.records.empty()) return;
    record::BatchOptions options;
    options.base_offset = next_offset;
    if (fx.transactional) {
      options.producer_id = fx.transactional->producer_id;
      options.producer_epoch = fx.transactional->producer_epoch;
      options.base_sequence = 0;  // as Kafka's coordinators write it
      options.transactional = true;
    }
    record::RecordBatchBuilder builder(options);
    for (const Record& r : fx.records) {
      const ByteSpan key = std::as_bytes(std::span<const std::uint8_t>(r.key));
      std::optional<ByteSpan> value;
      if (r.value) value = std::as_bytes(std::span<const std::uint8_t>(*r.value));
      builder.append(1000, key, value);
    }
    next_offset += builder.record_count();
    auto batch = builder.build();
    bytes.insert(bytes.end(), batch.begin(), batch.end());
  }

  void marker(std::int64_t producer_id, bool commit) {
    record::EndTxnMarkerBatch m;
    m.producer_id = producer_id;
    m.producer_epoch = kEpoch;
    m.commit = commit;
    m.timestamp_ms = 1000;
    m.base_offset = next_offset;
    auto batch = record::build_end_txn_marker_batch(m);
    ++next_offset;
    bytes.insert(bytes.end(), batch.begin(), batch.end());
  }

  // A fresh coordinator loaded from the log, as GroupHost::load does it.
  std::unique_ptr<GroupCoordinator> load() const {
    auto c = std::make_unique<GroupCoordinator>(GroupHarness::default_config());
    record::BatchSplitter splitter(bytes);
    for (;;) {
      auto next = splitter.next();
      EXPECT_TRUE(next.has_value());
      if (!next || !*next) break;
      const BatchReplay r = replay_batch(*c, **next, 1 << 20);
      EXPECT_FALSE(r.unreadable);
      EXPECT_EQ(r.skipped, 0u);
    }
    EXPECT_EQ(splitter.remaining().size(), 0u);
    c->finish_replay(0);
    return c;
  }
};

class TxnOffsets : public ::testing::Test {
 protected:
  std::int16_t plain_commit(const std::string& topic, std::int32_t partition, std::int64_t offset) {
    p::OffsetCommitRequest req;
    req.group_id = kGroup;
    req.generation_id_or_member_epoch = -1;
    auto& t = req.topics.emplace_back();
    t.name = topic;
    auto& part = t.partitions.emplace_back();
    part.partition_index = partition;
    part.committed_offset = offset;
    auto r = h.coordinator.offset_commit(req, 8, h.now());
    log.append(r.effects);
    return r.response.topics.at(0).partitions.at(0).error_code;
  }

  // Every partition's error code of a TxnOffsetCommit, in request order.
  std::vector<std::int16_t> txn_commit(const std::string& group, const TxnCommit& o,
                                       std::vector<std::tuple<std::string, std::int32_t, std::int64_t>> offsets) {
    auto r = h.coordinator.txn_offset_commit(txn_request(group, o, std::move(offsets)), 3, h.now());
    if (!r.effects.records.empty()) {
      EXPECT_TRUE(r.effects.transactional);
      EXPECT_EQ(r.effects.transactional->producer_id, o.producer_id);
      EXPECT_EQ(r.effects.transactional->producer_epoch, kEpoch);
    }
    log.append(r.effects);
    std::vector<std::int16_t> errors;
    for (const auto& t : r.response.topics) {
      for (const auto& part : t.partitions) errors.push_back(part.error_code);
    }
    return errors;
  }

  void end_txn(std::int64_t producer_id, bool commit) {
    log.marker(producer_id, commit);
    Effects fx = h.coordinator.complete_transaction(producer_id, commit);
    EXPECT_TRUE(fx.records.empty());
  }

  std::optional<std::int64_t> committed(const GroupCoordinator& c, const std::string& topic, std::int32_t partition) {
    auto o = c.committed(kGroup, topic, partition);
    if (!o) return std::nullopt;
    return o->offset;
  }

  // OffsetFetch v8 of kGroup: (error code, offset) per requested partition of `topic`.
  static std::vector<std::pair<std::int16_t, std::int64_t>> fetch_v8(const GroupCoordinator& c,
                                                                     const std::string& topic,
                                                                     std::vector<std::int32_t> partitions,
                                                                     bool require_stable) {
    p::OffsetFetchRequest req;
    req.require_stable = require_stable;
    auto& g = req.groups.emplace_back();
    g.group_id = kGroup;
    auto& t = g.topics.emplace().emplace_back();
    t.name = topic;
    t.partition_indexes = std::move(partitions);
    auto resp = c.offset_fetch(req, 8);
    EXPECT_EQ(resp.groups.at(0).error_code, 0);
    std::vector<std::pair<std::int16_t, std::int64_t>> out;
    for (const auto& part : resp.groups.at(0).topics.at(0).partitions) {
      out.emplace_back(part.error_code, part.committed_offset);
    }
    return out;
  }

  GroupHarness h;
  Log log;
};

using Answers = std::vector<std::pair<std::int16_t, std::int64_t>>;
const std::int16_t kUnstable = code(Error::kUnstableOffsetCommit);

TEST_F(TxnOffsets, TxnCommitStaysPendingUntilTheCommitMarker) {
  ASSERT_EQ(plain_commit("orders", 0, 5), 0);
  EXPECT_EQ(txn_commit(kGroup, {}, {{"orders", 0, 10}}), std::vector<std::int16_t>{0});

  EXPECT_EQ(committed(h.coordinator, "orders", 0), 5);
  EXPECT_EQ(fetch_v8(h.coordinator, "orders", {0, 1}, false), (Answers{{0, 5}, {0, -1}}));
  EXPECT_EQ(fetch_v8(h.coordinator, "orders", {0, 1}, true), (Answers{{kUnstable, -1}, {0, -1}}));

  end_txn(kProducer, true);
  EXPECT_EQ(committed(h.coordinator, "orders", 0), 10);
  EXPECT_EQ(h.coordinator.committed(kGroup, "orders", 0)->metadata, "tx");
  EXPECT_EQ(fetch_v8(h.coordinator, "orders", {0}, true), (Answers{{0, 10}}));
}

TEST_F(TxnOffsets, AbortMarkerDropsThePendingOffsets) {
  ASSERT_EQ(plain_commit("orders", 0, 5), 0);
  txn_commit(kGroup, {}, {{"orders", 0, 10}, {"orders", 1, 3}});
  end_txn(kProducer, false);
  EXPECT_EQ(committed(h.coordinator, "orders", 0), 5);
  EXPECT_EQ(committed(h.coordinator, "orders", 1), std::nullopt);
  EXPECT_EQ(fetch_v8(h.coordinator, "orders", {0, 1}, true), (Answers{{0, 5}, {0, -1}}));
  // A later commit marker of the same producer finds nothing left to commit.
  end_txn(kProducer, true);
  EXPECT_EQ(committed(h.coordinator, "orders", 0), 5);
}

TEST_F(TxnOffsets, TheCommitWrittenLastWinsWhenTheMarkerLands) {
  // A plain commit written after the transactional one is newer: the marker keeps it.
  txn_commit(kGroup, {}, {{"a", 0, 10}});
  plain_commit("a", 0, 12);
  // A transactional commit written after the plain one replaces it.
  plain_commit("b", 0, 20);
  txn_commit(kGroup, {}, {{"b", 0, 15}});
  end_txn(kProducer, true);
  EXPECT_EQ(committed(h.coordinator, "a", 0), 12);
  EXPECT_EQ(committed(h.coordinator, "b", 0), 15);
  // The same order survives a reload.
  auto loaded = log.load();
  EXPECT_EQ(committed(*loaded, "a", 0), 12);
  EXPECT_EQ(committed(*loaded, "b", 0), 15);
}

TEST_F(TxnOffsets, EachProducerIsCompletedOnItsOwn) {
  txn_commit(kGroup, by(7), {{"a", 0, 1}});
  txn_commit(kGroup, by(8), {{"a", 0, 2}, {"a", 1, 2}});
  end_txn(8, true);
  EXPECT_EQ(committed(h.coordinator, "a", 0), 2);
  EXPECT_EQ(committed(h.coordinator, "a", 1), 2);
  // Producer 7 still holds a pending offset for a-0; a-1 has none.
  EXPECT_EQ(fetch_v8(h.coordinator, "a", {0, 1}, true), (Answers{{kUnstable, -1}, {0, 2}}));
  EXPECT_EQ(h.coordinator.offset_manager().pending(7, kGroup, "a", 0)->offset, 1);
  end_txn(7, true);
  // 7's commit was written before 8's: 8's offset stays.
  EXPECT_EQ(committed(h.coordinator, "a", 0), 2);
  EXPECT_FALSE(h.coordinator.offset_manager().has_pending(kGroup));
}

TEST_F(TxnOffsets, RequireStableInTheSingleGroupShapeAndForAllTopics) {
  plain_commit("a", 0, 4);
  txn_commit(kGroup, {}, {{"a", 0, 9}, {"a", 2, 9}});
  p::OffsetFetchRequest req;
  req.group_id = kGroup;
  req.require_stable = true;
  auto& t = req.topics.emplace().emplace_back();
  t.name = "a";
  t.partition_indexes = {0, 1, 2};
  auto v7 = h.coordinator.offset_fetch(req, 7);
  EXPECT_EQ(v7.error_code, 0);  // as Kafka: per partition only
  ASSERT_EQ(v7.topics.at(0).partitions.size(), 3u);
  EXPECT_EQ(v7.topics[0].partitions[0].error_code, kUnstable);
  EXPECT_EQ(v7.topics[0].partitions[0].committed_offset, -1);
  EXPECT_EQ(v7.topics[0].partitions[1].error_code, 0);
  EXPECT_EQ(v7.topics[0].partitions[2].error_code, kUnstable);
  // v6 has no require_stable: the committed offset, whatever the flag says.
  auto v6 = h.coordinator.offset_fetch(req, 6);
  EXPECT_EQ(v6.topics[0].partitions[0].error_code, 0);
  EXPECT_EQ(v6.topics[0].partitions[0].committed_offset, 4);
  // All topics: the committed offsets only (a-2 has none), a-0 marked unstable.
  req.topics.reset();
  auto all = h.coordinator.offset_fetch(req, 7);
  ASSERT_EQ(all.topics.size(), 1u);
  ASSERT_EQ(all.topics[0].partitions.size(), 1u);
  EXPECT_EQ(all.topics[0].partitions[0].partition_index, 0);
  EXPECT_EQ(all.topics[0].partitions[0].error_code, kUnstable);
}

// A stable group of one member (static when `instance_id` is set): (member id, generation).
std::pair<std::string, std::int32_t> stable_group(GroupHarness& h, std::optional<std::string> instance_id) {
  JoinOptions o;
  o.instance_id = instance_id;
  std::string id;
  RequestHandle handle = 0;
  if (instance_id) {
    h.join(kGroup, o, &handle);
  } else {
    std::tie(id, handle) = h.join_with_required_id(kGroup, o);
  }
  h.advance(3000);
  auto r = h.take_join(handle);
  EXPECT_TRUE(r);
  h.sync(kGroup, r->response.member_id, r->response.generation_id, {{r->response.member_id, "all"}}, instance_id);
  EXPECT_EQ(h.state(kGroup), GroupState::kStable);
  return {r->response.member_id, r->response.generation_id};
}

TEST_F(TxnOffsets, MemberFieldsAreCheckedAsKafkaDoes) {
  auto [id, generation] = stable_group(h, std::nullopt);
  EXPECT_EQ(txn_commit(kGroup, as_member(generation, id), {{"a", 0, 1}}), std::vector<std::int16_t>{0});
  EXPECT_EQ(txn_commit(kGroup, as_member(generation + 1, id), {{"a", 0, 1}}),
            std::vector<std::int16_t>{code(Error::kIllegalGeneration)});
  EXPECT_EQ(txn_commit(kGroup, as_member(generation, "stranger"), {{"a", 0, 1}}),
            std::vector<std::int16_t>{code(Error::kUnknownMemberId)});
  // No member fields (v0-2): a transactional commit is accepted by a group with members.
  EXPECT_EQ(txn_commit(kGroup, {}, {{"a", 0, 1}}), std::vector<std::int16_t>{0});
  // An unknown group takes a commit without a generation only.
  EXPECT_EQ(txn_commit("nobody", as_member(4, "m"), {{"a", 0, 1}}),
            std::vector<std::int16_t>{code(Error::kIllegalGeneration)});
  EXPECT_EQ(h.coordinator.group("nobody"), nullptr);
  EXPECT_EQ(txn_commit("simple", {}, {{"a", 0, 1}}), std::vector<std::int16_t>{0});
  ASSERT_NE(h.coordinator.group("simple"), nullptr);
  EXPECT_EQ(h.coordinator.group("simple")->state(), GroupState::kEmpty);
  // Metadata over offset.metadata.max.bytes is refused per partition.
  TxnCommit big;
  big.metadata = std::string(4097, 'x');
  EXPECT_EQ(txn_commit(kGroup, big, {{"a", 0, 1}}), std::vector<std::int16_t>{code(Error::kOffsetMetadataTooLarge)});
}

TEST_F(TxnOffsets, AStaticMemberReplacedByItsRestartIsFenced) {
  auto [old_id, generation] = stable_group(h, "instance-1");
  JoinOptions o;
  o.instance_id = "instance-1";
  h.join(kGroup, o);  // the restarted instance takes a new member id
  EXPECT_EQ(txn_commit(kGroup, as_member(generation, old_id, "instance-1"), {{"a", 0, 1}}),
            std::vector<std::int16_t>{code(Error::kFencedInstanceId)});
}

TEST_F(TxnOffsets, LoadReplaysTransactionalBatchesAndMarkers) {
  plain_commit("a", 0, 1);
  txn_commit(kGroup, by(7), {{"a", 0, 10}});
  txn_commit(kGroup, by(8), {{"a", 1, 20}});
  txn_commit(kGroup, by(9), {{"a", 2, 30}});
  end_txn(7, true);
  end_txn(8, false);
  // 9's transaction is still open when the log ends.

  auto loaded = log.load();
  EXPECT_EQ(committed(*loaded, "a", 0), 10);
  EXPECT_EQ(committed(*loaded, "a", 1), std::nullopt);
  EXPECT_EQ(committed(*loaded, "a", 2), std::nullopt);
  EXPECT_EQ(fetch_v8(*loaded, "a", {0, 1, 2}, true), (Answers{{0, 10}, {0, -1}, {kUnstable, -1}}));
  // The open transaction commits after the load.
  loaded->complete_transaction(9, true);
  EXPECT_EQ(committed(*loaded, "a", 2), 30);
  ASSERT_NE(loaded->group(kGroup), nullptr);
}

TEST_F(TxnOffsets, LiveCommitsAfterALoadStillOrderAfterTheReplayedOnes) {
  txn_commit(kGroup, by(7), {{"a", 0, 10}});
  plain_commit("a", 0, 11);
  auto loaded = log.load();
  // A plain commit after the load, then the marker of the transaction written before it.
  p::OffsetCommitRequest req;
  req.group_id = kGroup;
  req.generation_id_or_member_epoch = -1;
  auto& t = req.topics.emplace_back();
  t.name = "b";
  auto& part = t.partitions.emplace_back();
  part.partition_index = 0;
  part.committed_offset = 3;
  loaded->offset_commit(req, 8, 0);
  auto r = loaded->txn_offset_commit(txn_request(kGroup, by(8), {{"b", 0, 2}}), 3, 0);
  ASSERT_EQ(r.response.topics.at(0).partitions.at(0).error_code, 0);
  loaded->complete_transaction(7, true);
  loaded->complete_transaction(8, true);
  EXPECT_EQ(committed(*loaded, "a", 0), 11);  // replayed plain commit is newer than 7's
  EXPECT_EQ(committed(*loaded, "b", 0), 2);   // 8's live commit is newer than the live plain one
}

TEST_F(TxnOffsets, ATombstoneDropsPendingOffsetsAndDeleteGroupsCoversThem) {
  txn_commit(kGroup, {}, {{"a", 0, 10}});
  p::DeleteGroupsRequest req;
  req.groups_names = {kGroup};
  auto r = h.coordinator.delete_groups(req, 2, h.now());
  ASSERT_EQ(r.response.results.at(0).error_code, 0);
  // The offset tombstone (for a partition with only pending offsets) and the group's.
  ASSERT_EQ(r.effects.records.size(), 2u);
  log.append(r.effects);
  EXPECT_FALSE(h.coordinator.offset_manager().has_pending(kGroup));
  end_txn(kProducer, true);
  EXPECT_EQ(committed(h.coordinator, "a", 0), std::nullopt);
  auto loaded = log.load();
  EXPECT_EQ(committed(*loaded, "a", 0), std::nullopt);
  EXPECT_EQ(loaded->group(kGroup), nullptr);
}

TEST_F(TxnOffsets, ExpiryKeepsOffsetsATransactionMayStillReplace) {
  GroupConfig config = GroupHarness::default_config();
  config.offsets_retention_ms = 1000;
  GroupCoordinator c(config);
  p::OffsetCommitRequest req;
  req.group_id = kGroup;
  req.generation_id_or_member_epoch = -1;
  auto& t = req.topics.emplace_back();
  t.name = "a";
  t.partitions.emplace_back().partition_index = 0;
  t.partitions.back().committed_offset = 1;
  t.partitions.emplace_back().partition_index = 1;
  t.partitions.back().committed_offset = 1;
  c.offset_commit(req, 8, 0);
  c.txn_offset_commit(txn_request(kGroup, {}, {{"a", 0, 5}}), 3, 0);
  Effects fx = c.expire_offsets(5000);
  ASSERT_EQ(fx.records.size(), 1u);  // a-1 only; the group stays with a-0
  EXPECT_FALSE(c.committed(kGroup, "a", 1));
  EXPECT_TRUE(c.committed(kGroup, "a", 0));
  ASSERT_NE(c.group(kGroup), nullptr);
}

}  // namespace
}  // namespace weir::group::testing
