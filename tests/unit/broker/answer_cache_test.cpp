// The encoded answers kept per catalog snapshot and version (issue 18): an answer is found only
// with the snapshot it was built from, each version keeps its own, a newer snapshot's answer
// drops the older ones, a late answer of an older snapshot is not kept, and the cache keeps no
// snapshot alive.
#include "broker/answer_cache.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "protocol/codec.h"

namespace weir::broker {
namespace {

std::shared_ptr<const Catalog> snapshot(std::uint64_t version) {
  auto c = std::make_shared<Catalog>();
  c->version = version;
  return c;
}

std::shared_ptr<const EncodedAnswer> answer(std::uint8_t byte) {
  auto a = std::make_shared<EncodedAnswer>();
  a->body = {byte};
  return a;
}

TEST(AnswerCacheTest, AnAnswerIsFoundOnlyWithItsOwnSnapshot) {
  AnswerCache cache;
  const auto kept = snapshot(5);
  EXPECT_EQ(cache.find(kept, 1), nullptr);
  const auto one = answer(1);
  cache.store(kept, 1, one);
  EXPECT_EQ(cache.find(kept, 1), one);
  // The same version number, the same (empty) contents: another snapshot all the same.
  EXPECT_EQ(cache.find(snapshot(5), 1), nullptr);
  EXPECT_EQ(cache.find(kept, 2), nullptr) << "another version";
}

TEST(AnswerCacheTest, EachVersionKeepsItsOwnAnswer) {
  AnswerCache cache;
  const auto c = snapshot(1);
  const auto v1 = answer(1);
  const auto v12 = answer(12);
  cache.store(c, 1, v1);
  cache.store(c, 12, v12);
  EXPECT_EQ(cache.find(c, 1), v1);
  EXPECT_EQ(cache.find(c, 12), v12);
  EXPECT_EQ(cache.size(), 2u);
  const auto again = answer(2);
  cache.store(c, 1, again);  // one answer per version
  EXPECT_EQ(cache.find(c, 1), again);
  EXPECT_EQ(cache.size(), 2u);
}

TEST(AnswerCacheTest, ANewerSnapshotsAnswerDropsTheOlderOnes) {
  AnswerCache cache;
  const auto older = snapshot(1);
  cache.store(older, 1, answer(1));
  cache.store(older, 9, answer(9));
  const auto newer = snapshot(2);
  const auto fresh = answer(3);
  cache.store(newer, 1, fresh);
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.find(newer, 1), fresh);
  EXPECT_EQ(cache.find(older, 1), nullptr);
  EXPECT_EQ(cache.find(older, 9), nullptr);
}

TEST(AnswerCacheTest, ALateAnswerOfAnOlderSnapshotIsNotKept) {
  AnswerCache cache;
  const auto older = snapshot(1);
  const auto newer = snapshot(2);
  const auto current = answer(2);
  cache.store(newer, 1, current);
  cache.store(older, 1, answer(1));
  EXPECT_EQ(cache.find(newer, 1), current);
  EXPECT_EQ(cache.find(older, 1), nullptr);
  EXPECT_EQ(cache.size(), 1u);
}

TEST(AnswerCacheTest, KeepsNoSnapshotAlive) {
  AnswerCache cache;
  auto c = snapshot(7);
  cache.store(c, 1, answer(1));
  std::weak_ptr<const Catalog> watch = c;
  c.reset();
  EXPECT_TRUE(watch.expired());
  // Whatever is allocated next (maybe where the old one was) is not answered from it.
  const auto next = snapshot(8);
  EXPECT_EQ(cache.find(next, 1), nullptr);
}

// A partition's leader changed: the broker publishes a new snapshot, which the kept answer of the
// old one does not serve, and the answer built from the new one says what changed.
TEST(AnswerCacheTest, ALeaderChangeIsANewSnapshotAnsweredAfresh) {
  NodeInfo node;
  node.cluster_id = "answer-cache-test";
  auto before = std::make_shared<Catalog>();
  before->version = 3;
  before->controller_id = 1;
  before->brokers.push_back(BrokerEndpoint{1, "127.0.0.1", 9092, std::nullopt});
  TopicInfo t;
  t.name = "t";
  t.id = Uuid::random();
  t.partitions = 1;
  PartitionInfo& p0 = t.parts.emplace_back();
  p0.leader = 1;
  p0.replicas = {1, 2};
  p0.isr = {1, 2};
  before->topics.emplace("t", t);
  auto after = std::make_shared<Catalog>(*before);
  after->version = 4;
  after->topics.at("t").parts[0].leader = 2;  // broker 2 has no endpoint: LEADER_NOT_AVAILABLE
  after->topics.at("t").parts[0].leader_epoch = 1;
  after->topics.at("t").parts[0].isr = {2};

  auto encode = [&node](const Catalog& c) {
    auto a = std::make_shared<EncodedAnswer>();
    protocol::Writer w(a->body);
    MetadataHandler::catalog_answer(node, c).encode(w, 12);
    return a;
  };
  AnswerCache cache;
  const std::shared_ptr<const Catalog> old_snapshot = before;
  const std::shared_ptr<const Catalog> new_snapshot = after;
  cache.store(old_snapshot, 12, encode(*before));
  EXPECT_EQ(cache.find(new_snapshot, 12), nullptr);
  const auto fresh = encode(*after);
  EXPECT_NE(fresh->body, cache.find(old_snapshot, 12)->body);
  cache.store(new_snapshot, 12, fresh);

  protocol::MetadataResponse resp;
  protocol::Reader r(cache.find(new_snapshot, 12)->body);
  resp.decode(r, 12);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(resp.topics.size(), 1u);
  ASSERT_EQ(resp.topics[0].partitions.size(), 1u);
  const auto& p = resp.topics[0].partitions[0];
  EXPECT_EQ(p.leader_id, 2);
  EXPECT_EQ(p.leader_epoch, 1);
  EXPECT_EQ(p.isr_nodes, std::vector<std::int32_t>{2});
  EXPECT_EQ(p.error_code, code(ErrorCode::kLeaderNotAvailable));
}

}  // namespace
}  // namespace weir::broker
