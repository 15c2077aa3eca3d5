// Reading __cluster_metadata segments and KRaft snapshots: synthetic batches for the error
// paths, and files Apache Kafka 4.3.1 wrote (data/kafka-4.3.1-cluster-metadata, made by
// data/record_kafka_cluster_metadata.py) for the differential check.
#include "metadata/snapshot.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "protocol/codec.h"
#include "protocol/gen/snapshot_footer_record.h"
#include "protocol/gen/snapshot_header_record.h"
#include "protocol/record/control_record.h"
#include "protocol/record/record_batch_builder.h"

namespace weir::metadata {
namespace {

using Bytes = std::vector<std::byte>;

const Uuid kOrders(0x1111, 0x2222);

TopicRecord topic(std::string name, Uuid id) {
  TopicRecord r;
  r.name = std::move(name);
  r.topic_id = id;
  return r;
}

PartitionRecord partition(Uuid id, std::int32_t index) {
  PartitionRecord r;
  r.topic_id = id;
  r.partition_id = index;
  r.replicas = {1};
  r.isr = {1};
  r.leader = 1;
  r.leader_epoch = 0;
  r.partition_epoch = 0;
  return r;
}

ByteSpan span_of(const protocol::Bytes& b) { return std::as_bytes(std::span(b)); }

// A data batch of metadata records at base_offset.
Bytes data_batch(std::int64_t base_offset, const std::vector<MetadataRecord>& records) {
  record::RecordBatchBuilder builder({.base_offset = base_offset});
  for (const auto& r : records) {
    const protocol::Bytes value = encode_record(r);
    builder.append(1000, std::nullopt, span_of(value));
  }
  return builder.build();
}

// A control batch with one record of `type` whose value is `message` at version 0 (as Kafka's
// ControlRecordUtils writes them: no version prefix).
template <class M>
Bytes control_batch(std::int64_t base_offset, record::ControlRecordType type, const M& message) {
  record::RecordBatchBuilder builder({.base_offset = base_offset, .control = true});
  protocol::Bytes value;
  protocol::Writer w(value);
  message.encode(w, 0);
  const auto key = record::encode_control_key(type);
  builder.append(1000, ByteSpan(key), span_of(value));
  return builder.build();
}

Bytes header_batch(std::int64_t offset) {
  protocol::SnapshotHeaderRecord h;
  h.last_contained_log_timestamp = 4242;
  return control_batch(offset, record::ControlRecordType::snapshot_header, h);
}

Bytes footer_batch(std::int64_t offset) {
  return control_batch(offset, record::ControlRecordType::snapshot_footer, protocol::SnapshotFooterRecord{});
}

Bytes concat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

TEST(MetadataBatchesTest, ReplaysDataBatchesAndSkipsControlBatches) {
  const Bytes bytes = concat({header_batch(0), data_batch(1, {topic("orders", kOrders), partition(kOrders, 0)}),
                              data_batch(3, {partition(kOrders, 1)})});
  MetadataImage image;
  auto stats = replay_metadata_batches(bytes, image);
  ASSERT_TRUE(stats.has_value()) << stats.error().detail;
  EXPECT_EQ(stats->batches, 3);
  EXPECT_EQ(stats->control_batches, 1);
  EXPECT_EQ(stats->records, 3);
  EXPECT_EQ(stats->next_offset, 4);
  EXPECT_EQ(stats->trailing_bytes, 0u);
  ASSERT_NE(image.topic("orders"), nullptr);
  EXPECT_EQ(image.topic("orders")->partitions.size(), 2u);
}

TEST(MetadataBatchesTest, RecordsComeWithTheirOffsets) {
  const Bytes bytes = concat({data_batch(10, {topic("orders", kOrders), partition(kOrders, 0)}),
                              data_batch(12, {NoOpRecord{}})});
  std::vector<std::int64_t> offsets;
  auto stats = for_each_metadata_record(bytes, [&](std::int64_t offset, const VersionedRecord&) -> Status<MetadataReadError> {
    offsets.push_back(offset);
    return {};
  });
  ASSERT_TRUE(stats.has_value());
  EXPECT_EQ(offsets, (std::vector<std::int64_t>{10, 11, 12}));
}

TEST(MetadataBatchesTest, AnIncompleteLastBatchIsLeftOver) {
  const Bytes first = data_batch(0, {topic("orders", kOrders)});
  const Bytes second = data_batch(1, {partition(kOrders, 0)});
  Bytes bytes = concat({first, second});
  bytes.resize(first.size() + second.size() / 2);
  MetadataImage image;
  auto stats = replay_metadata_batches(bytes, image);
  ASSERT_TRUE(stats.has_value());
  EXPECT_EQ(stats->batches, 1);
  EXPECT_EQ(stats->trailing_bytes, second.size() / 2);
  EXPECT_NE(image.topic("orders"), nullptr);
}

TEST(MetadataBatchesTest, CorruptBatchesAreErrorsWithTheirOffset) {
  Bytes bytes = concat({data_batch(0, {topic("orders", kOrders)}), data_batch(1, {partition(kOrders, 0)})});
  bytes[bytes.size() - 3] ^= std::byte{0x5a};  // inside the second batch: CRC mismatch
  MetadataImage image;
  auto stats = replay_metadata_batches(bytes, image);
  ASSERT_FALSE(stats.has_value());
  EXPECT_EQ(stats.error().code, StoreErrc::corrupt_log);
  EXPECT_EQ(stats.error().offset, 1);
}

TEST(MetadataBatchesTest, UnknownRecordTypeIsAnErrorNamingIt) {
  record::RecordBatchBuilder builder({.base_offset = 5});
  const std::vector<std::uint8_t> value = {1, 99, 0, 0};  // frame 1, type 99, version 0
  builder.append(1000, std::nullopt, std::as_bytes(std::span(value)));
  const Bytes bytes = builder.build();
  MetadataImage image;
  auto stats = replay_metadata_batches(bytes, image);
  ASSERT_FALSE(stats.has_value());
  EXPECT_EQ(stats.error().code, StoreErrc::unknown_record_type);
  EXPECT_EQ(stats.error().offset, 5);
  EXPECT_NE(stats.error().detail.find("record type 99"), std::string::npos) << stats.error().detail;
}

TEST(MetadataBatchesTest, UnsupportedVersionNamesTheType) {
  record::RecordBatchBuilder builder({.base_offset = 0});
  const std::vector<std::uint8_t> value = {1, 17, 9, 0};  // BrokerRegistrationChangeRecord v9
  builder.append(1000, std::nullopt, std::as_bytes(std::span(value)));
  const Bytes bytes = builder.build();
  MetadataImage image;
  auto stats = replay_metadata_batches(bytes, image);
  ASSERT_FALSE(stats.has_value());
  EXPECT_EQ(stats.error().code, StoreErrc::unsupported_version);
  EXPECT_NE(stats.error().detail.find("BrokerRegistrationChangeRecord"), std::string::npos) << stats.error().detail;
}

TEST(MetadataBatchesTest, InconsistentRecordsStopTheReplayAtTheirOffset) {
  const Bytes bytes = concat({data_batch(0, {topic("orders", kOrders)}), data_batch(1, {topic("orders", kOrders)})});
  MetadataImage image;
  auto stats = replay_metadata_batches(bytes, image);
  ASSERT_FALSE(stats.has_value());
  EXPECT_EQ(stats.error().code, StoreErrc::inconsistent_record);
  EXPECT_EQ(stats.error().offset, 1);
  EXPECT_NE(image.topic("orders"), nullptr);  // the records before stay applied
}

TEST(MetadataBatchesTest, OffsetsGoingBackwardsAreCorrupt) {
  const Bytes bytes = concat({data_batch(5, {topic("orders", kOrders)}), data_batch(3, {partition(kOrders, 0)})});
  MetadataImage image;
  auto stats = replay_metadata_batches(bytes, image);
  ASSERT_FALSE(stats.has_value());
  EXPECT_EQ(stats.error().code, StoreErrc::corrupt_log);
}

TEST(MetadataBatchesTest, EveryTruncationAndBitFlipIsHandled) {
  const std::vector<Bytes> parts = {header_batch(0), data_batch(1, {topic("orders", kOrders), partition(kOrders, 0)}),
                                    footer_batch(3)};
  const Bytes whole = concat({parts[0], parts[1], parts[2]});
  for (std::size_t n = 0; n <= whole.size(); ++n) {
    MetadataImage image;
    auto stats = replay_metadata_batches(ByteSpan(whole.data(), n), image);
    EXPECT_TRUE(stats.has_value()) << "a cut at " << n << " is an incomplete batch, not corruption";
    EXPECT_EQ(load_snapshot(ByteSpan(whole.data(), n)).has_value(), n == whole.size());
  }
  // Where each flipped byte lies within its batch: bytes 0-15 (base offset, length, partition
  // leader epoch) are outside the CRC; a flip there may leave a valid stream. Every other flip
  // must be caught.
  std::vector<std::size_t> position_in_batch;
  for (const auto& p : parts) {
    for (std::size_t i = 0; i < p.size(); ++i) position_in_batch.push_back(i);
  }
  for (std::size_t i = 0; i < whole.size(); ++i) {
    Bytes bytes = whole;
    bytes[i] ^= std::byte{0x41};
    MetadataImage image;
    auto stats = replay_metadata_batches(bytes, image);
    auto snap = load_snapshot(bytes);
    if (position_in_batch[i] >= 16) {
      EXPECT_FALSE(snap.has_value()) << "flip at " << i << " accepted";
      EXPECT_FALSE(stats.has_value() && stats->trailing_bytes == 0 && stats->batches == 3) << "flip at " << i;
    }
  }
}

// ---- snapshots -----------------------------------------------------------------------------

TEST(SnapshotTest, LoadsTheRecordsBetweenHeaderAndFooter) {
  const Bytes bytes = concat({header_batch(0), data_batch(1, {topic("orders", kOrders), partition(kOrders, 0)}),
                              footer_batch(3)});
  auto snap = load_snapshot(bytes);
  ASSERT_TRUE(snap.has_value()) << snap.error().detail;
  EXPECT_EQ(snap->last_contained_log_timestamp_ms, 4242);
  EXPECT_EQ(snap->stats.records, 2);
  EXPECT_EQ(snap->stats.control_batches, 2);
  ASSERT_NE(snap->image.topic("orders"), nullptr);
}

TEST(SnapshotTest, HeaderAndFooterAreRequired) {
  const Bytes body = data_batch(1, {topic("orders", kOrders)});
  EXPECT_FALSE(load_snapshot(concat({body, footer_batch(2)})).has_value());
  EXPECT_FALSE(load_snapshot(concat({header_batch(0), body})).has_value());
  EXPECT_FALSE(load_snapshot(concat({header_batch(0), footer_batch(1), data_batch(2, {NoOpRecord{}})})).has_value());
  EXPECT_FALSE(load_snapshot(Bytes{}).has_value());
  // A trailing partial batch after the footer is refused too.
  Bytes cut = concat({header_batch(0), body, footer_batch(2), body});
  cut.resize(cut.size() - 5);
  EXPECT_FALSE(load_snapshot(cut).has_value());
}

TEST(SnapshotTest, EndingInsideATransactionIsRefused) {
  const Bytes bytes = concat({header_batch(0), data_batch(1, {BeginTransactionRecord{}, topic("orders", kOrders)}),
                              footer_batch(3)});
  auto snap = load_snapshot(bytes);
  ASSERT_FALSE(snap.has_value());
  EXPECT_EQ(snap.error().code, StoreErrc::inconsistent_record);
}

// ---- what Kafka 4.3.1 wrote ----------------------------------------------------------------

const std::filesystem::path kKafkaDir = std::filesystem::path(WEIR_METADATA_TEST_DATA) / "kafka-4.3.1-cluster-metadata";

Bytes read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Bytes out(chars.size());
  std::transform(chars.begin(), chars.end(), out.begin(), [](char c) { return static_cast<std::byte>(c); });
  return out;
}

std::filesystem::path snapshot_path() {
  for (const auto& entry : std::filesystem::directory_iterator(kKafkaDir)) {
    if (entry.path().extension() == ".checkpoint") return entry.path();
  }
  return {};
}

std::string join(const std::vector<std::int32_t>& ids) { return fmt::format("{}", fmt::join(ids, ",")); }

// The image as the lines record_kafka_cluster_metadata.py derives from Kafka's Admin API (see
// expected_lines() there).
std::vector<std::string> image_lines(const MetadataImage& image) {
  static const std::set<std::string, std::less<>> kInternal = {"__consumer_offsets", "__transaction_state",
                                                               "__share_group_state"};
  std::vector<std::string> lines;
  for (const auto& [name, id] : image.topic_ids_by_name()) {
    if (kInternal.contains(name)) continue;
    const TopicImage* t = image.topic(id);
    lines.push_back(fmt::format("topic {} {} partitions={}", name, id.to_string(), t->partitions.size()));
    for (const PartitionImage& p : t->partitions) {
      lines.push_back(fmt::format("partition {} {} leader={} replicas={} isr={}", name, p.partition_id, p.leader,
                                  join(p.replicas), join(p.isr)));
    }
    for (const auto& [key, value] : image.topic_configs(name)) lines.push_back(fmt::format("config 2 {} {}={}", name, key, value));
  }
  for (const std::string broker : {"1", ""}) {
    for (const auto& [key, value] : image.configs(kConfigResourceBroker, broker)) {
      lines.push_back(fmt::format("config 4 {} {}={}", broker, key, value));
    }
  }
  for (const auto& [entity, values] : image.client_quotas()) {
    std::vector<std::string> parts;
    for (const auto& [type, name] : entity) {
      const std::string short_type = type == "client-id" ? "client-id" : type;
      parts.push_back(fmt::format("{}={}", short_type, name.value_or("<default>")));
    }
    for (const auto& [key, value] : values) {
      lines.push_back(fmt::format("quota {} {}={:g}", fmt::join(parts, ","), key, value));
    }
  }
  for (const auto& [key, c] : image.scram_credentials()) {
    lines.push_back(fmt::format("scram {} {} iterations={}", key.user, key.mechanism, c.iterations));
  }
  for (const auto& [id, acl] : image.acls()) {
    lines.push_back(fmt::format("acl {} {} {} {} {} {} {}", acl.resource_type, acl.resource_name, acl.pattern_type,
                                acl.principal, acl.host, acl.operation, acl.permission_type));
  }
  std::ranges::sort(lines);
  return lines;
}

std::vector<std::string> expected_lines() {
  std::ifstream in(kKafkaDir / "expected-image.txt");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

TEST(KafkaClusterMetadataTest, SegmentReplaysToWhatKafkasAdminApiReports) {
  const Bytes bytes = read_file(kKafkaDir / "00000000000000000000.log");
  ASSERT_FALSE(bytes.empty());
  // The Admin API was asked just before the final shutdown, whose first record is a
  // BrokerRegistrationChangeRecord entering controlled shutdown: compare the image before it.
  std::int64_t final_shutdown = -1;
  auto scan = for_each_metadata_record(bytes, [&](std::int64_t offset, const VersionedRecord& r) -> Status<MetadataReadError> {
    const auto* change = std::get_if<BrokerRegistrationChangeRecord>(&r.record);
    if (change != nullptr && change->in_controlled_shutdown == kControlledShutdownChangeEnter) final_shutdown = offset;
    return {};
  });
  ASSERT_TRUE(scan.has_value()) << "offset " << scan.error().offset << ": " << scan.error().detail;
  ASSERT_GT(final_shutdown, 0);
  MetadataImage before_shutdown;
  MetadataImage image;
  auto stats = for_each_metadata_record(bytes, [&](std::int64_t offset, const VersionedRecord& r) -> Status<MetadataReadError> {
    if (offset < final_shutdown) {
      if (auto ok = before_shutdown.replay(r.record); !ok) return unexpected(MetadataReadError{ok.error(), offset, "replay"});
    }
    return {};
  });
  ASSERT_TRUE(stats.has_value()) << stats.error().detail;
  auto all = replay_metadata_batches(bytes, image);
  ASSERT_TRUE(all.has_value()) << "offset " << all.error().offset << ": " << all.error().detail;
  EXPECT_EQ(all->trailing_bytes, 0u);
  EXPECT_GT(all->control_batches, 0);
  EXPECT_FALSE(image.in_transaction());

  const auto expected = expected_lines();
  ASSERT_GT(expected.size(), 10u);
  EXPECT_EQ(image_lines(before_shutdown.committed()), expected);
  EXPECT_FALSE(before_shutdown.is_fenced(1));
  EXPECT_EQ(before_shutdown.active_broker_count(), 1u);
  EXPECT_EQ(*image.feature_level("metadata.version"), 30);  // 4.3-IV0
  EXPECT_GT(image.next_producer_id(), 0);
  EXPECT_FALSE(image.controllers().empty());

  // After the final controlled shutdown: the broker is fenced and in controlled shutdown, and
  // every partition lost its only leader, which went to the ELR (ELR is on at 4.3).
  ASSERT_NE(image.broker(1), nullptr);
  EXPECT_TRUE(image.is_fenced(1));
  EXPECT_TRUE(image.in_controlled_shutdown(1));
  EXPECT_EQ(image.active_broker_count(), 0u);
  for (const auto& [name, id] : image.topic_ids_by_name()) {
    for (const PartitionImage& p : image.topic(id)->partitions) {
      SCOPED_TRACE(fmt::format("{}-{}", name, p.partition_id));
      const PartitionImage& was = before_shutdown.topic(id)->partitions[static_cast<std::size_t>(p.partition_id)];
      EXPECT_EQ(p.leader, kNoLeader);
      EXPECT_TRUE(p.isr.empty());
      EXPECT_EQ(p.eligible_leader_replicas, std::vector<std::int32_t>{1});
      EXPECT_EQ(p.last_known_elr, std::vector<std::int32_t>{1});
      EXPECT_EQ(p.leader_epoch, was.leader_epoch + 1);
      EXPECT_EQ(p.partition_epoch, was.partition_epoch + 1);
    }
  }
}

TEST(KafkaClusterMetadataTest, SnapshotEqualsTheLogReplayedUpToIt) {
  const std::filesystem::path path = snapshot_path();
  ASSERT_FALSE(path.empty());
  auto snap = load_snapshot(read_file(path));
  ASSERT_TRUE(snap.has_value()) << "offset " << snap.error().offset << ": " << snap.error().detail;
  // <end offset, exclusive>-<epoch>.checkpoint
  const std::int64_t end_offset = std::stoll(path.stem().string().substr(0, 20));
  ASSERT_GT(end_offset, 0);
  MetadataImage prefix;
  auto stats = for_each_metadata_record(read_file(kKafkaDir / "00000000000000000000.log"),
                                        [&](std::int64_t offset, const VersionedRecord& r) -> Status<MetadataReadError> {
                                          if (offset >= end_offset) return {};
                                          if (auto ok = prefix.replay(r.record); !ok) {
                                            return unexpected(MetadataReadError{ok.error(), offset, "replay"});
                                          }
                                          return {};
                                        });
  ASSERT_TRUE(stats.has_value()) << stats.error().detail;
  const MetadataImage& log = prefix.committed();
  EXPECT_EQ(image_lines(snap->image), image_lines(log));
  // Part by part, so that a difference is easy to find; then the whole.
  EXPECT_EQ(snap->image.features(), log.features());
  EXPECT_EQ(snap->image.next_producer_id(), log.next_producer_id());
  for (const auto& [id, b] : log.brokers()) {
    SCOPED_TRACE(fmt::format("broker {}", id));
    const BrokerRegistration* a = snap->image.broker(id);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->broker_epoch, b.broker_epoch);
    EXPECT_EQ(a->incarnation_id, b.incarnation_id);
    EXPECT_EQ(a->fenced, b.fenced);
    EXPECT_EQ(a->in_controlled_shutdown, b.in_controlled_shutdown);
    EXPECT_EQ(a->log_dirs, b.log_dirs);
    EXPECT_EQ(a->cordoned_log_dirs, b.cordoned_log_dirs);
    EXPECT_EQ(a->end_points, b.end_points);
    EXPECT_EQ(a->features, b.features);
    EXPECT_EQ(a->rack, b.rack);
    EXPECT_EQ(a->unknown_tagged_fields, b.unknown_tagged_fields);
  }
  EXPECT_EQ(snap->image.brokers(), log.brokers());
  EXPECT_EQ(snap->image.controllers(), log.controllers());
  EXPECT_EQ(snap->image.acls(), log.acls());
  EXPECT_EQ(snap->image.client_quotas(), log.client_quotas());
  EXPECT_EQ(snap->image.scram_credentials(), log.scram_credentials());
  EXPECT_EQ(snap->image.delegation_tokens(), log.delegation_tokens());
  EXPECT_EQ(snap->image.zk_migration_state(), log.zk_migration_state());
  for (const auto& [name, id] : log.topic_ids_by_name()) {
    ASSERT_NE(snap->image.topic(id), nullptr) << name;
    const auto& a = snap->image.topic(id)->partitions;
    const auto& b = log.topic(id)->partitions;
    ASSERT_EQ(a.size(), b.size()) << name;
    for (std::size_t i = 0; i < a.size(); ++i) {
      SCOPED_TRACE(fmt::format("{}-{}", name, i));
      EXPECT_EQ(a[i].leader_epoch, b[i].leader_epoch);
      EXPECT_EQ(a[i].partition_epoch, b[i].partition_epoch);
      EXPECT_EQ(a[i].directories, b[i].directories);
      EXPECT_EQ(a[i].eligible_leader_replicas, b[i].eligible_leader_replicas);
      EXPECT_EQ(a[i].last_known_elr, b[i].last_known_elr);
      EXPECT_EQ(a[i], b[i]);
    }
  }
  EXPECT_TRUE(snap->image.same_content(log));
}

}  // namespace
}  // namespace weir::metadata
