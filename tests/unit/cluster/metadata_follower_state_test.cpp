#include "cluster/metadata_follower_state.h"

#include <gtest/gtest.h>

#include <cstring>

#include "cluster/kafka_codes.h"
#include "protocol/record/control_record.h"
#include "protocol/record/record_batch_builder.h"
#include "metadata_batches.h"

namespace weir::cluster {
namespace {

using protocol::Bytes;
using namespace test_batches;  // NOLINT(google-build-using-namespace): the shared batch builders
using protocol::FetchResponse;
using protocol::FetchSnapshotResponse;

constexpr std::int16_t kFetchVersion = 17;  // what Kafka 4.3.1's controllers and this codec share
constexpr std::int64_t kNow = 1'000;

const std::vector<ControllerAddress> kBootstrap = {{-1, {"c1", 9093}}, {-1, {"c2", 9094}}};

FollowerOptions options() {
  FollowerOptions o;
  o.cluster_id = "cluster-A";
  o.node_id = 7;
  return o;
}

// A batch of raw record values (to carry bytes that do not decode).
Bytes raw_batch(std::int64_t base_offset, std::int32_t epoch, const std::vector<Bytes>& values) {
  record::RecordBatchBuilder b({.base_offset = base_offset, .partition_leader_epoch = epoch});
  for (const auto& v : values) b.append(0, std::nullopt, ByteSpan(reinterpret_cast<const std::byte*>(v.data()), v.size()));
  return to_bytes(b.build());
}

// Encodes and decodes at the wire version, so the state sees what the wire can carry.
template <class M>
M over_the_wire(const M& m, std::int16_t version) {
  Bytes bytes;
  protocol::Writer w(bytes);
  m.encode(w, version);
  protocol::Reader r(bytes);
  M out;
  out.decode(r, version);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.remaining(), 0u);
  return out;
}

struct Answer {
  std::int16_t error = 0;
  std::int64_t high_watermark = 0;
  std::int32_t leader_id = 1;
  std::int32_t leader_epoch = 1;
  std::optional<Bytes> records = std::nullopt;
  std::optional<std::pair<std::int32_t, std::int64_t>> diverging = std::nullopt;  // epoch, end offset
  std::optional<std::pair<std::int32_t, std::int64_t>> snapshot = std::nullopt;   // epoch, end offset
  std::vector<FetchResponse::NodeEndpoint> endpoints = {};
};

FetchResponse fetch_answer(const Answer& a) {
  FetchResponse r;
  FetchResponse::FetchableTopicResponse t;
  t.topic_id = Uuid::metadata_topic_id();
  FetchResponse::PartitionData p;
  p.partition_index = 0;
  p.error_code = a.error;
  p.high_watermark = a.high_watermark;
  p.current_leader.leader_id = a.leader_id;
  p.current_leader.leader_epoch = a.leader_epoch;
  p.records = a.records ? *a.records : Bytes{};
  if (a.diverging) {
    p.diverging_epoch.epoch = a.diverging->first;
    p.diverging_epoch.end_offset = a.diverging->second;
  }
  if (a.snapshot) {
    p.snapshot_id.epoch = a.snapshot->first;
    p.snapshot_id.end_offset = a.snapshot->second;
  }
  t.partitions.push_back(p);
  r.responses.push_back(t);
  r.node_endpoints = a.endpoints;
  return over_the_wire(r, kFetchVersion);
}

FetchResponse::NodeEndpoint endpoint(std::int32_t id, std::string host, std::int32_t port) {
  FetchResponse::NodeEndpoint e;
  e.node_id = id;
  e.host = std::move(host);
  e.port = port;
  return e;
}

const FetchToSend& fetch_of(const FollowerStep& s) {
  EXPECT_TRUE(std::holds_alternative<FetchToSend>(s.send));
  return std::get<FetchToSend>(s.send);
}

const protocol::FetchRequest::FetchPartition& partition_of(const FollowerStep& s) {
  return fetch_of(s).request.topics.at(0).partitions.at(0);
}

// A follower that knows leader 1 (epoch 1) at c1:9093.
MetadataFollowerState with_leader() {
  MetadataFollowerState s(options(), kBootstrap);
  (void)s.start(kNow);
  (void)s.on_fetch_response(fetch_answer({.error = code::kNotLeaderOrFollower, .high_watermark = -1, .leader_id = 1,
                                          .leader_epoch = 1, .endpoints = {endpoint(1, "c1", 9093)}}),
                            kNow);
  return s;
}

TEST(MetadataFollowerStateTest, FirstFetchGoesToABootstrapServerAsAnObserver) {
  MetadataFollowerState s(options(), kBootstrap);
  const FollowerStep step = s.start(kNow);
  const auto& f = fetch_of(step);
  EXPECT_EQ(f.target, kBootstrap[0]);
  EXPECT_EQ(step.send_at_ms, kNow);
  EXPECT_EQ(f.request.cluster_id, "cluster-A");
  EXPECT_EQ(f.request.replica_state.replica_id, 7);
  EXPECT_EQ(f.request.replica_state.replica_epoch, -1);
  EXPECT_EQ(f.request.max_wait_ms, 500);
  ASSERT_EQ(f.request.topics.size(), 1u);
  EXPECT_EQ(f.request.topics[0].topic_id, Uuid::metadata_topic_id());
  EXPECT_EQ(f.request.topics[0].topic, "__cluster_metadata");
  const auto& p = partition_of(step);
  EXPECT_EQ(p.partition, 0);
  // Kafka answers INVALID_REQUEST to a negative epoch or last fetched epoch: an empty log says 0.
  EXPECT_EQ(p.current_leader_epoch, 0);
  EXPECT_EQ(p.fetch_offset, 0);
  EXPECT_EQ(p.last_fetched_epoch, 0);
}

TEST(MetadataFollowerStateTest, NotLeaderAnswerNamingTheLeaderMovesToItAtOnce) {
  MetadataFollowerState s(options(), kBootstrap);
  (void)s.start(kNow);
  const FollowerStep step = s.on_fetch_response(
      fetch_answer({.error = code::kNotLeaderOrFollower, .high_watermark = -1, .leader_id = 3, .leader_epoch = 5,
                    .endpoints = {endpoint(3, "c3", 9095)}}),
      kNow);
  EXPECT_EQ(fetch_of(step).target, (ControllerAddress{3, {"c3", 9095}}));
  EXPECT_EQ(step.send_at_ms, kNow);
  EXPECT_EQ(partition_of(step).current_leader_epoch, 5);
  EXPECT_EQ(s.leader(), (LeaderInfo{3, 5, client::Endpoint{"c3", 9095}}));
}

TEST(MetadataFollowerStateTest, FencedEpochWithNoLeaderNamedAsksTheBootstrapServersAgain) {
  MetadataFollowerState s = with_leader();
  const FollowerStep step =
      s.on_fetch_response(fetch_answer({.error = code::kFencedLeaderEpoch, .leader_id = -1, .leader_epoch = 2}), kNow);
  EXPECT_EQ(fetch_of(step).target.id, -1);
  EXPECT_EQ(partition_of(step).current_leader_epoch, 2);
  EXPECT_EQ(s.leader().id, -1);
}

TEST(MetadataFollowerStateTest, AnOlderEpochInAnAnswerDoesNotReplaceTheLeader) {
  MetadataFollowerState s = with_leader();
  (void)s.on_fetch_response(fetch_answer({.high_watermark = 0, .leader_id = 2, .leader_epoch = 0,
                                          .endpoints = {endpoint(2, "old", 1)}}),
                            kNow);
  EXPECT_EQ(s.leader(), (LeaderInfo{1, 1, client::Endpoint{"c1", 9093}}));
}

TEST(MetadataFollowerStateTest, HandsOnOnlyBatchesBelowTheHighWatermarkInOrder) {
  MetadataFollowerState s = with_leader();
  FollowerStep step = s.on_fetch_response(
      fetch_answer({.high_watermark = 2, .records = concat({data_batch(0, 1, {"a", "b"}), data_batch(2, 1, {"c"})})}),
      kNow);
  ASSERT_EQ(step.deliver.size(), 1u);
  EXPECT_EQ(topic_names(step.deliver[0]), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(step.deliver[0].offsets, (std::vector<std::int64_t>{0, 1}));
  EXPECT_EQ(step.deliver[0].last_offset, 1);
  EXPECT_EQ(step.deliver[0].epoch, 1);
  EXPECT_FALSE(step.deliver[0].snapshot);
  EXPECT_EQ(s.last_delivered_offset(), 1);
  EXPECT_EQ(partition_of(step).fetch_offset, 3);
  EXPECT_EQ(partition_of(step).last_fetched_epoch, 1);
  EXPECT_EQ(s.pending_batches(), 1u);

  step = s.on_fetch_response(fetch_answer({.high_watermark = 3}), kNow);
  ASSERT_EQ(step.deliver.size(), 1u);
  EXPECT_EQ(topic_names(step.deliver[0]), (std::vector<std::string>{"c"}));
  EXPECT_EQ(step.deliver[0].offsets, (std::vector<std::int64_t>{2}));
  EXPECT_EQ(s.last_delivered_offset(), 2);
  EXPECT_EQ(s.high_watermark(), 3);
}

TEST(MetadataFollowerStateTest, ControlBatchesAreConsumedButMoveTheOffset) {
  MetadataFollowerState s = with_leader();
  const FollowerStep step = s.on_fetch_response(
      fetch_answer({.high_watermark = 3,
                    .records = concat({control_batch(0, 1, record::ControlRecordType::leader_change),
                                       data_batch(1, 1, {"a"}),
                                       control_batch(2, 1, record::ControlRecordType::kraft_voters)})}),
      kNow);
  ASSERT_EQ(step.deliver.size(), 3u);
  EXPECT_TRUE(step.deliver[0].records.empty());
  EXPECT_EQ(step.deliver[0].last_offset, 0);
  EXPECT_EQ(topic_names(step.deliver[1]), (std::vector<std::string>{"a"}));
  EXPECT_TRUE(step.deliver[2].records.empty());
  EXPECT_EQ(s.last_delivered_offset(), 2);
  EXPECT_TRUE(step.record_errors.empty());
}

TEST(MetadataFollowerStateTest, AnUndecodableRecordIsReportedAndTheOthersDelivered) {
  MetadataFollowerState s = with_leader();
  metadata::TopicRecord a;
  a.name = "a";
  a.topic_id = Uuid(1, 2);
  const Bytes good = metadata::encode_record(a);
  const Bytes unknown_type = {1, 0xFF, 0x7F, 0};  // frame version 1, record type 16383: not a metadata record
  const FollowerStep step =
      s.on_fetch_response(fetch_answer({.high_watermark = 2, .records = raw_batch(0, 1, {unknown_type, good})}), kNow);
  ASSERT_EQ(step.deliver.size(), 1u);
  EXPECT_EQ(topic_names(step.deliver[0]), (std::vector<std::string>{"a"}));
  EXPECT_EQ(step.deliver[0].offsets, (std::vector<std::int64_t>{1}));
  ASSERT_EQ(step.record_errors.size(), 1u);
  EXPECT_EQ(step.record_errors[0].offset, 0);
  EXPECT_NE(step.record_errors[0].message.find("undecodable"), std::string::npos);
  EXPECT_FALSE(step.fatal);
}

TEST(MetadataFollowerStateTest, ACorruptBatchIsFatal) {
  MetadataFollowerState s = with_leader();
  Bytes batch = data_batch(0, 1, {"a"});
  batch.back() ^= 0xFF;  // breaks the CRC
  const FollowerStep step = s.on_fetch_response(fetch_answer({.high_watermark = 1, .records = batch}), kNow);
  ASSERT_TRUE(step.fatal);
  EXPECT_EQ(step.fatal->kind, client::ErrorKind::kProtocol);
  EXPECT_TRUE(s.stopped());
  EXPECT_TRUE(std::holds_alternative<std::monostate>(step.send));
}

TEST(MetadataFollowerStateTest, DivergingEpochTruncatesTheUncommittedTail) {
  MetadataFollowerState s = with_leader();
  (void)s.on_fetch_response(
      fetch_answer({.high_watermark = 1,
                    .records = concat({data_batch(0, 1, {"a"}), data_batch(1, 1, {"b"}), data_batch(2, 1, {"c"})})}),
      kNow);
  ASSERT_EQ(s.fetch_offset(), 3);
  const FollowerStep step =
      s.on_fetch_response(fetch_answer({.high_watermark = 1, .leader_epoch = 2, .diverging = {{1, 2}}}), kNow);
  EXPECT_FALSE(step.fatal);
  EXPECT_EQ(partition_of(step).fetch_offset, 2);
  EXPECT_EQ(partition_of(step).last_fetched_epoch, 1);
  EXPECT_EQ(s.pending_batches(), 1u);  // "b" stays; "c" is gone
  const FollowerStep next =
      s.on_fetch_response(fetch_answer({.high_watermark = 3, .leader_epoch = 2, .records = data_batch(2, 2, {"z"})}), kNow);
  ASSERT_EQ(next.deliver.size(), 2u);
  EXPECT_EQ(topic_names(next.deliver[0]), (std::vector<std::string>{"b"}));
  EXPECT_EQ(topic_names(next.deliver[1]), (std::vector<std::string>{"z"}));
  EXPECT_EQ(next.deliver[1].epoch, 2);
}

TEST(MetadataFollowerStateTest, TruncationBelowWhatWasHandedOnIsFatal) {
  MetadataFollowerState s = with_leader();
  (void)s.on_fetch_response(
      fetch_answer({.high_watermark = 2, .records = concat({data_batch(0, 1, {"a"}), data_batch(1, 1, {"b"})})}), kNow);
  ASSERT_EQ(s.last_delivered_offset(), 1);
  const FollowerStep step = s.on_fetch_response(fetch_answer({.leader_epoch = 2, .diverging = {{1, 1}}}), kNow);
  ASSERT_TRUE(step.fatal);
  EXPECT_NE(step.fatal->message.find("below offset 2 already applied"), std::string::npos) << step.fatal->message;
  EXPECT_TRUE(s.stopped());
}

// A snapshot as Kafka writes one: header control batch, records, footer control batch.
Bytes snapshot_bytes() {
  return concat({control_batch(0, 2, record::ControlRecordType::snapshot_header), data_batch(1, 2, {"s1", "s2"}),
                 data_batch(3, 2, {"s3"}), control_batch(4, 2, record::ControlRecordType::snapshot_footer)});
}

FetchSnapshotResponse snapshot_chunk(const Bytes& whole, std::size_t from, std::size_t to, std::int64_t position,
                                     std::int16_t error = 0) {
  FetchSnapshotResponse r;
  FetchSnapshotResponse::TopicSnapshot t;
  t.name = "__cluster_metadata";
  FetchSnapshotResponse::PartitionSnapshot p;
  p.index = 0;
  p.error_code = error;
  p.snapshot_id.end_offset = 10;
  p.snapshot_id.epoch = 2;
  p.current_leader.leader_id = 1;
  p.current_leader.leader_epoch = 2;
  p.size = static_cast<std::int64_t>(whole.size());
  p.position = position;
  p.unaligned_records = Bytes(whole.begin() + static_cast<std::ptrdiff_t>(from), whole.begin() + static_cast<std::ptrdiff_t>(to));
  t.partitions.push_back(p);
  r.topics.push_back(t);
  return over_the_wire(r, 1);
}

TEST(MetadataFollowerStateTest, SnapshotIdFetchesTheSnapshotInChunksAndReplacesTheImage) {
  MetadataFollowerState s = with_leader();
  FollowerStep step = s.on_fetch_response(fetch_answer({.high_watermark = 10, .leader_epoch = 2, .snapshot = {{2, 10}}}), kNow);
  ASSERT_TRUE(std::holds_alternative<SnapshotChunkToSend>(step.send));
  const auto& first = std::get<SnapshotChunkToSend>(step.send).request;
  EXPECT_EQ(first.topics.at(0).name, "__cluster_metadata");
  EXPECT_EQ(first.topics[0].partitions.at(0).snapshot_id.end_offset, 10);
  EXPECT_EQ(first.topics[0].partitions[0].snapshot_id.epoch, 2);
  EXPECT_EQ(first.topics[0].partitions[0].position, 0);
  EXPECT_EQ(first.replica_id, 7);
  EXPECT_TRUE(s.fetching_snapshot());

  const Bytes whole = snapshot_bytes();
  const std::size_t cut = 37;  // inside the first batch: chunks are not aligned to batches
  step = s.on_snapshot_response(snapshot_chunk(whole, 0, cut, 0), kNow);
  ASSERT_TRUE(std::holds_alternative<SnapshotChunkToSend>(step.send));
  EXPECT_EQ(std::get<SnapshotChunkToSend>(step.send).request.topics[0].partitions[0].position, static_cast<std::int64_t>(cut));
  EXPECT_TRUE(step.deliver.empty());

  step = s.on_snapshot_response(snapshot_chunk(whole, cut, whole.size(), static_cast<std::int64_t>(cut)), kNow);
  ASSERT_EQ(step.deliver.size(), 1u);
  const MetadataBatch& b = step.deliver[0];
  EXPECT_TRUE(b.snapshot);
  EXPECT_EQ(topic_names(b), (std::vector<std::string>{"s1", "s2", "s3"}));
  EXPECT_EQ(b.last_offset, 9);
  EXPECT_EQ(b.epoch, 2);
  EXPECT_FALSE(s.fetching_snapshot());
  EXPECT_EQ(s.last_delivered_offset(), 9);
  EXPECT_EQ(partition_of(step).fetch_offset, 10);
  EXPECT_EQ(partition_of(step).last_fetched_epoch, 2);
}

TEST(MetadataFollowerStateTest, ASnapshotChunkAtTheWrongPositionIsFatal) {
  MetadataFollowerState s = with_leader();
  (void)s.on_fetch_response(fetch_answer({.high_watermark = 10, .leader_epoch = 2, .snapshot = {{2, 10}}}), kNow);
  const Bytes whole = snapshot_bytes();
  const FollowerStep step = s.on_snapshot_response(snapshot_chunk(whole, 5, 20, 5), kNow);
  ASSERT_TRUE(step.fatal);
  EXPECT_EQ(step.fatal->kind, client::ErrorKind::kProtocol);
}

TEST(MetadataFollowerStateTest, AMissingSnapshotStartsOverWithAFetch) {
  MetadataFollowerState s = with_leader();
  (void)s.on_fetch_response(fetch_answer({.high_watermark = 10, .leader_epoch = 2, .snapshot = {{2, 10}}}), kNow);
  const FollowerStep step = s.on_snapshot_response(snapshot_chunk({}, 0, 0, 0, code::kSnapshotNotFound), kNow);
  EXPECT_FALSE(step.fatal);
  EXPECT_EQ(partition_of(step).fetch_offset, 0);
  EXPECT_EQ(step.send_at_ms, kNow + 20);
  EXPECT_FALSE(s.fetching_snapshot());
}

TEST(MetadataFollowerStateTest, InconsistentClusterIdIsFatal) {
  MetadataFollowerState partition_level = with_leader();
  FollowerStep step = partition_level.on_fetch_response(fetch_answer({.error = code::kInconsistentClusterId}), kNow);
  ASSERT_TRUE(step.fatal);
  EXPECT_EQ(step.fatal->code, code::kInconsistentClusterId);

  MetadataFollowerState top_level = with_leader();
  FetchResponse r;
  r.error_code = code::kInconsistentClusterId;
  step = top_level.on_fetch_response(over_the_wire(r, kFetchVersion), kNow);
  ASSERT_TRUE(step.fatal);
  EXPECT_EQ(step.fatal->code, code::kInconsistentClusterId);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(step.send));
}

TEST(MetadataFollowerStateTest, BrokerNotAvailableBacksOff) {
  MetadataFollowerState s = with_leader();
  FetchResponse r;
  r.error_code = code::kBrokerNotAvailable;
  const FollowerStep step = s.on_fetch_response(over_the_wire(r, kFetchVersion), kNow);
  EXPECT_FALSE(step.fatal);
  EXPECT_EQ(step.send_at_ms, kNow + 20);
}

TEST(MetadataFollowerStateTest, UnknownLeaderEpochBacksOffAndKeepsTheLeader) {
  MetadataFollowerState s = with_leader();
  const FollowerStep step = s.on_fetch_response(fetch_answer({.error = code::kUnknownLeaderEpoch}), kNow);
  EXPECT_EQ(step.send_at_ms, kNow + 20);
  EXPECT_EQ(fetch_of(step).target, (ControllerAddress{1, {"c1", 9093}}));
}

TEST(MetadataFollowerStateTest, ATransportFailureBacksOffAndAsksTheBootstrapServers) {
  MetadataFollowerState s = with_leader();
  const FollowerStep step = s.on_failure(client::Error::transport("connection refused"), kNow);
  EXPECT_EQ(step.send_at_ms, kNow + 20);
  EXPECT_EQ(fetch_of(step).target.id, -1);
  EXPECT_EQ(s.leader().id, 1);  // the epoch and id stay; only the endpoint is forgotten
  EXPECT_FALSE(s.leader().endpoint);
  // The bootstrap servers are taken in turn.
  const FollowerStep again = s.on_failure(client::Error::timeout("no answer"), kNow);
  EXPECT_NE(fetch_of(again).target, fetch_of(step).target);
}

TEST(MetadataFollowerStateTest, NoUsableFetchVersionIsFatal) {
  MetadataFollowerState s(options(), kBootstrap);
  (void)s.start(kNow);
  const FollowerStep step = s.on_failure(client::Error::unsupported("no Fetch version"), kNow);
  ASSERT_TRUE(step.fatal);
}

TEST(MetadataFollowerStateTest, CaughtUpOnceTheFirstHighWatermarkIsDelivered) {
  MetadataFollowerState s = with_leader();
  EXPECT_FALSE(s.caught_up());
  (void)s.on_fetch_response(fetch_answer({.high_watermark = 2, .records = data_batch(0, 1, {"a"})}), kNow);
  EXPECT_EQ(s.initial_high_watermark(), 2);
  EXPECT_FALSE(s.caught_up());  // offset 1 is not here yet
  (void)s.on_fetch_response(fetch_answer({.high_watermark = 5, .records = data_batch(1, 1, {"b"})}), kNow);
  EXPECT_TRUE(s.caught_up());  // the first answer's high watermark counts, not the latest
  EXPECT_EQ(s.initial_high_watermark(), 2);
}

TEST(MetadataFollowerStateTest, ABatchSentAgainIsNotAppendedTwice) {
  MetadataFollowerState s = with_leader();
  (void)s.on_fetch_response(fetch_answer({.high_watermark = 0, .records = data_batch(0, 1, {"a"})}), kNow);
  const FollowerStep step = s.on_fetch_response(
      fetch_answer({.high_watermark = 2, .records = concat({data_batch(0, 1, {"a"}), data_batch(1, 1, {"b"})})}), kNow);
  ASSERT_EQ(step.deliver.size(), 2u);
  EXPECT_EQ(topic_names(step.deliver[0]), (std::vector<std::string>{"a"}));
  EXPECT_EQ(topic_names(step.deliver[1]), (std::vector<std::string>{"b"}));
}

TEST(MetadataFollowerStateTest, AGapInOffsetsIsFatal) {
  MetadataFollowerState s = with_leader();
  const FollowerStep step = s.on_fetch_response(fetch_answer({.high_watermark = 5, .records = data_batch(3, 1, {"a"})}), kNow);
  ASSERT_TRUE(step.fatal);
}

// ---- Resuming from a local copy ----------------------------------------------------------------

TEST(MetadataFollowerStateTest, DeliveredBatchesCarryTheirBytesAsFetched) {
  MetadataFollowerState s = with_leader();
  const Bytes b0 = data_batch(0, 1, {"a"});
  const Bytes b1 = control_batch(1, 1, record::ControlRecordType::leader_change);
  const FollowerStep step = s.on_fetch_response(fetch_answer({.high_watermark = 2, .records = concat({b0, b1})}), kNow);
  ASSERT_EQ(step.deliver.size(), 2u);
  EXPECT_EQ(step.deliver[0].raw, b0);
  EXPECT_EQ(step.deliver[1].raw, b1);
}

TEST(MetadataFollowerStateTest, RestoredBatchesAreHeldUntilTheHighWatermarkCoversThem) {
  MetadataFollowerState s(options(), kBootstrap);
  s.restore(std::nullopt, {decoded(data_batch(0, 1, {"a"})), decoded(data_batch(1, 1, {"b", "c"}))});
  EXPECT_EQ(s.pending_batches(), 2u);
  const FollowerStep first = s.start(kNow);
  EXPECT_EQ(partition_of(first).fetch_offset, 3);
  EXPECT_EQ(partition_of(first).last_fetched_epoch, 1);
  EXPECT_FALSE(s.caught_up());
  // The leader's high watermark covers the first batch only.
  FollowerStep step = s.on_fetch_response(fetch_answer({.high_watermark = 1, .records = Bytes{}}), kNow);
  ASSERT_EQ(step.deliver.size(), 1u);
  EXPECT_EQ(topic_names(step.deliver[0]), std::vector<std::string>{"a"});
  EXPECT_TRUE(s.caught_up());  // to the high watermark of the first answer
  EXPECT_EQ(s.pending_batches(), 1u);
  step = s.on_fetch_response(fetch_answer({.high_watermark = 4, .records = data_batch(3, 1, {"d"})}), kNow);
  ASSERT_EQ(step.deliver.size(), 2u);
  EXPECT_EQ(topic_names(step.deliver[0]), (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(topic_names(step.deliver[1]), std::vector<std::string>{"d"});
  EXPECT_EQ(s.pending_batches(), 0u);
}

TEST(MetadataFollowerStateTest, ARestoredTailTheLeaderDoesNotHaveIsCutAndReported) {
  MetadataFollowerState s(options(), kBootstrap);
  s.restore(std::nullopt, {decoded(data_batch(0, 1, {"a"})), decoded(data_batch(1, 2, {"b"}))});
  (void)s.start(kNow);
  FollowerStep step =
      s.on_fetch_response(fetch_answer({.high_watermark = 1, .leader_epoch = 3, .diverging = {{1, 1}}}), kNow);
  EXPECT_TRUE(step.deliver.empty());
  EXPECT_EQ(partition_of(step).fetch_offset, 1);
  EXPECT_EQ(partition_of(step).last_fetched_epoch, 1);
  EXPECT_EQ(s.take_truncation(), std::optional<std::int64_t>(1));
  EXPECT_EQ(s.take_truncation(), std::nullopt);
  step = s.on_fetch_response(fetch_answer({.high_watermark = 2, .leader_epoch = 3, .records = data_batch(1, 3, {"x"})}),
                             kNow);
  ASSERT_EQ(step.deliver.size(), 2u);
  EXPECT_EQ(topic_names(step.deliver[1]), std::vector<std::string>{"x"});
}

TEST(MetadataFollowerStateTest, ARestoredSnapshotCountsAsDelivered) {
  const Bytes whole = snapshot_bytes();
  std::vector<RecordError> errors;
  auto snap = decode_metadata_snapshot(std::vector<std::uint8_t>(whole.begin(), whole.end()), 5, 2, errors);
  ASSERT_TRUE(snap);
  EXPECT_TRUE(snap->snapshot);
  EXPECT_EQ(snap->raw, whole);
  MetadataFollowerState s(options(), kBootstrap);
  s.restore(*snap, {decoded(data_batch(5, 2, {"t"}))});
  EXPECT_EQ(s.last_delivered_offset(), 4);
  const FollowerStep first = s.start(kNow);
  EXPECT_EQ(partition_of(first).fetch_offset, 6);
  EXPECT_EQ(partition_of(first).last_fetched_epoch, 2);
  // A DivergingEpoch into the snapshot is refused, as below anything delivered.
  const FollowerStep step = s.on_fetch_response(fetch_answer({.high_watermark = 6, .diverging = {{1, 3}}}), kNow);
  EXPECT_TRUE(step.fatal);
}

}  // namespace
}  // namespace weir::cluster
