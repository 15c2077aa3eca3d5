#include "metadata/metadata_record.h"

#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace weir::metadata {
namespace {

using Bytes = protocol::Bytes;

// Clears the "tagged field was on the wire" bits that decoding sets, so a decoded record
// compares equal to the one that was encoded.
MetadataRecord without_wire_state(MetadataRecord r) {
  std::visit(
      [](auto& m) {
        if constexpr (requires { m.tagged_seen; }) m.tagged_seen = 0;
      },
      r);
  return r;
}

std::vector<MetadataRecord> samples() {
  const Uuid id(0x0102030405060708ull, 0x1112131415161718ull);
  TopicRecord topic;
  topic.name = "orders";
  topic.topic_id = id;

  PartitionRecord partition;
  partition.partition_id = 2;
  partition.topic_id = id;
  partition.replicas = {1, 2, 3};
  partition.isr = {1, 2};
  partition.leader = 1;
  partition.leader_epoch = 4;
  partition.partition_epoch = 7;
  partition.directories = {Uuid(1, 2), Uuid::zero(), Uuid(3, 4)};

  ConfigRecord config;
  config.resource_type = kConfigResourceTopic;
  config.resource_name = "orders";
  config.name = "retention.ms";
  config.value = "1000";
  ConfigRecord deletion = config;
  deletion.value = std::nullopt;

  PartitionChangeRecord change;
  change.partition_id = 0;
  change.topic_id = id;
  change.isr = std::vector<std::int32_t>{1};
  change.leader = 1;

  RemoveTopicRecord remove;
  remove.topic_id = id;

  FeatureLevelRecord feature;
  feature.name = "metadata.version";
  feature.feature_level = 30;

  ProducerIdsRecord pids;
  pids.broker_id = 1;
  pids.broker_epoch = 12;
  pids.next_producer_id = 2000;

  RegisterBrokerRecord broker;
  broker.broker_id = 1;
  broker.incarnation_id = Uuid(9, 9);
  broker.broker_epoch = 12;
  RegisterBrokerRecord::BrokerEndpoint endpoint;
  endpoint.name = "PLAINTEXT";
  endpoint.host = "localhost";
  endpoint.port = 9092;
  broker.end_points.push_back(endpoint);
  RegisterBrokerRecord::BrokerFeature mv;
  mv.name = "metadata.version";
  mv.min_supported_version = 7;
  mv.max_supported_version = 30;
  broker.features.push_back(mv);
  broker.rack = std::nullopt;
  broker.fenced = false;
  broker.log_dirs = {Uuid(5, 6)};

  UnregisterBrokerRecord unregister;
  unregister.broker_id = 3;
  unregister.broker_epoch = 40;
  FenceBrokerRecord fence;
  fence.id = 1;
  fence.epoch = 12;
  UnfenceBrokerRecord unfence;
  unfence.id = 1;
  unfence.epoch = 12;
  BrokerRegistrationChangeRecord change_fence;
  change_fence.broker_id = 1;
  change_fence.broker_epoch = 12;
  change_fence.fenced = 1;
  BrokerRegistrationChangeRecord change_shutdown = change_fence;
  change_shutdown.fenced = 0;
  change_shutdown.in_controlled_shutdown = 1;
  BrokerRegistrationChangeRecord change_dirs = change_fence;
  change_dirs.fenced = -1;
  change_dirs.log_dirs = {Uuid(5, 6), Uuid(7, 8)};
  BrokerRegistrationChangeRecord change_cordoned = change_dirs;
  change_cordoned.cordoned_log_dirs = std::vector<Uuid>{Uuid(7, 8)};

  AccessControlEntryRecord acl;
  acl.id = Uuid(11, 12);
  acl.resource_type = 2;
  acl.resource_name = "orders";
  acl.pattern_type = 3;
  acl.principal = "User:alice";
  acl.host = "*";
  acl.operation = 3;
  acl.permission_type = 3;
  RemoveAccessControlEntryRecord remove_acl;
  remove_acl.id = Uuid(11, 12);

  DelegationTokenRecord token;
  token.owner = "User:alice";
  token.requester = "User:admin";
  token.renewers = {"User:bob"};
  token.issue_timestamp = 1000;
  token.max_timestamp = 9000;
  token.expiration_timestamp = 5000;
  token.token_id = "tok-1";
  RemoveDelegationTokenRecord remove_token;
  remove_token.token_id = "tok-1";

  UserScramCredentialRecord scram;
  scram.name = "alice";
  scram.mechanism = 1;
  scram.salt = {1, 2};
  scram.stored_key = {3};
  scram.server_key = {4};
  scram.iterations = 8192;
  RemoveUserScramCredentialRecord remove_scram;
  remove_scram.name = "alice";
  remove_scram.mechanism = 1;

  ClientQuotaRecord quota;
  ClientQuotaRecord::EntityData user;
  user.entity_type = "user";
  user.entity_name = "alice";
  ClientQuotaRecord::EntityData client;
  client.entity_type = "client-id";
  client.entity_name = std::nullopt;  // the default client
  quota.entity = {user, client};
  quota.key = "producer_byte_rate";
  quota.value = 1024.5;
  ClientQuotaRecord quota_removal = quota;
  quota_removal.remove = true;

  ZkMigrationStateRecord zk;
  zk.zk_migration_state = 3;
  BeginTransactionRecord begin;
  begin.name = "bootstrap";
  BeginTransactionRecord begin_unnamed;
  AbortTransactionRecord abort;
  abort.reason = "Controller failover";

  RegisterControllerRecord controller;
  controller.controller_id = 3000;
  controller.incarnation_id = Uuid(21, 22);
  controller.zk_migration_ready = false;
  RegisterControllerRecord::ControllerEndpoint cep;
  cep.name = "CONTROLLER";
  cep.host = "localhost";
  cep.port = 9093;
  controller.end_points.push_back(cep);
  RegisterControllerRecord::ControllerFeature cf;
  cf.name = "kraft.version";
  cf.min_supported_version = 0;
  cf.max_supported_version = 1;
  controller.features.push_back(cf);

  ClearElrRecord clear_one;
  clear_one.topic_name = "orders";
  ClearElrRecord clear_all;

  return {topic,        partition,        config,        deletion,     change,          remove,
          feature,      pids,             broker,        NoOpRecord{}, unregister,      fence,
          unfence,      change_fence,     change_shutdown, change_dirs, change_cordoned, acl,
          remove_acl,   token,            remove_token,  scram,        remove_scram,    quota,
          quota_removal, zk,              begin,         begin_unnamed, EndTransactionRecord{}, abort,
          AbortTransactionRecord{}, controller, clear_one, clear_all};
}

// Every alternative of MetadataRecord appears in samples().
TEST(MetadataRecordTest, SamplesCoverEveryType) {
  std::set<std::int16_t> types;
  for (const auto& r : samples()) types.insert(record_type(r));
  EXPECT_EQ(types.size(), std::variant_size_v<MetadataRecord>);
  // Kafka 4.3.1's metadata record types (MetadataRecordType): 0-5, 7-12, 14, 15, 17-28.
  const std::set<std::int16_t> kafka = {0, 1, 2, 3, 4, 5, 7, 8, 9, 10, 11, 12, 14, 15, 17, 18, 19, 20, 21, 22, 23,
                                        24, 25, 26, 27, 28};
  EXPECT_EQ(types, kafka);
}

// At every version of its schema, each record encodes, decodes and encodes to the same bytes.
TEST(MetadataRecordTest, EveryTypeRoundTripsAtEveryVersion) {
  for (const auto& record : samples()) {
    std::visit(
        [&](const auto& r) {
          using M = std::decay_t<decltype(r)>;
          for (std::int16_t v = M::kMinVersion; v <= M::kMaxVersion; ++v) {
            SCOPED_TRACE(std::string(M::kName) + " v" + std::to_string(v));
            Bytes bytes;
            encode_record(record, v, bytes);
            auto decoded = decode_record(std::span<const std::uint8_t>(bytes));
            ASSERT_TRUE(decoded.has_value()) << to_string(decoded.error());
            EXPECT_EQ(decoded->version, v);
            EXPECT_EQ(record_type(decoded->record), M::kApiKey);
            Bytes again;
            encode_record(decoded->record, v, again);
            EXPECT_EQ(again, bytes);
            if (v == M::kMaxVersion) {
              EXPECT_EQ(without_wire_state(decoded->record), record);
            }
          }
        },
        record);
  }
}

TEST(MetadataRecordTest, TypeNamesByApiKey) {
  EXPECT_EQ(record_type_name(17), "BrokerRegistrationChangeRecord");
  EXPECT_EQ(record_type_name(28), "ClearElrRecord");
  EXPECT_EQ(record_type_name(0), "RegisterBrokerRecord");
  EXPECT_EQ(record_type_name(6), std::nullopt);
  EXPECT_EQ(record_type_name(99), std::nullopt);
  EXPECT_EQ(record_type_name(-1), std::nullopt);
}

TEST(MetadataRecordTest, EveryTypeRoundTripsAtItsDefaultVersion) {
  for (const auto& record : samples()) {
    SCOPED_TRACE(std::string(record_name(record)));
    const Bytes bytes = encode_record(record);
    auto decoded = decode_record(std::span<const std::uint8_t>(bytes));
    ASSERT_TRUE(decoded.has_value()) << to_string(decoded.error());
    EXPECT_EQ(decoded->version, default_version(record));
    EXPECT_EQ(without_wire_state(decoded->record), record);
    EXPECT_EQ(encode_record(decoded->record), bytes);
  }
}

TEST(MetadataRecordTest, FrameIsVersionOneThenTypeThenVersionThenBody) {
  TopicRecord topic;
  topic.name = "t";
  topic.topic_id = Uuid(0, 7);
  const Bytes bytes = encode_record(topic);
  // frame version 1, api key 2, version 0, then compact string "t" (length 1 + 1), 16 uuid
  // bytes, and an empty tagged-field section.
  ASSERT_EQ(bytes.size(), 3u + 2u + 16u + 1u);
  EXPECT_EQ(bytes[0], 1);
  EXPECT_EQ(bytes[1], 2);
  EXPECT_EQ(bytes[2], 0);
  EXPECT_EQ(bytes[3], 2);
  EXPECT_EQ(bytes[4], 't');
  EXPECT_EQ(bytes[20], 7);
  EXPECT_EQ(bytes[21], 0);
}

TEST(MetadataRecordTest, WritesTheVersionsKafka431Writes) {
  EXPECT_EQ(default_version(RegisterBrokerRecord{}), 4);
  EXPECT_EQ(default_version(PartitionRecord{}), 2);
  EXPECT_EQ(default_version(PartitionChangeRecord{}), 2);
  EXPECT_EQ(default_version(TopicRecord{}), 0);
  EXPECT_EQ(default_version(ConfigRecord{}), 0);
  EXPECT_EQ(record_type(ProducerIdsRecord{}), 15);
  EXPECT_EQ(record_type(FeatureLevelRecord{}), 12);
  EXPECT_EQ(record_type(RemoveTopicRecord{}), 9);
}

TEST(MetadataRecordTest, OlderVersionsDecode) {
  PartitionRecord partition;
  partition.partition_id = 0;
  partition.topic_id = Uuid(1, 1);
  partition.replicas = {1};
  partition.isr = {1};
  partition.leader = 1;
  partition.leader_epoch = 0;
  partition.partition_epoch = 0;
  Bytes bytes;
  encode_record(partition, 0, bytes);
  auto decoded = decode_record(std::span<const std::uint8_t>(bytes));
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->version, 0);
  EXPECT_EQ(without_wire_state(decoded->record), MetadataRecord(partition));
}

TEST(MetadataRecordTest, FrameVersionZeroIsRefused) {
  Bytes bytes = encode_record(NoOpRecord{});
  bytes[0] = 0;
  EXPECT_EQ(decode_record(std::span<const std::uint8_t>(bytes)).error(), StoreErrc::unsupported_frame);
}

TEST(MetadataRecordTest, UnknownTypeIsRefused) {
  // 6 is a gap in Kafka's record types, 99 beyond them, 30000 far beyond weir's table.
  for (std::uint8_t type : {6, 13, 16, 29, 99}) {
    const Bytes bytes = {1, type, 0, 0};
    EXPECT_EQ(decode_record(std::span<const std::uint8_t>(bytes)).error(), StoreErrc::unknown_record_type);
  }
  const Bytes far = {1, 0xb0, 0xea, 0x01, 0, 0};  // 30000
  EXPECT_EQ(decode_record(std::span<const std::uint8_t>(far)).error(), StoreErrc::unknown_record_type);
}

TEST(MetadataRecordTest, BrokerRegistrationChangeVersionFollowsItsContent) {
  // As Kafka's ReplicationControlManager writes it: fencing 0, controlled shutdown 1, log dirs 2,
  // cordoned log dirs 3.
  BrokerRegistrationChangeRecord r;
  r.fenced = -1;
  EXPECT_EQ(default_version(r), 0);
  r.in_controlled_shutdown = 1;
  EXPECT_EQ(default_version(r), 1);
  r.log_dirs = {Uuid(1, 1)};
  EXPECT_EQ(default_version(r), 2);
  r.cordoned_log_dirs = std::vector<Uuid>{};
  EXPECT_EQ(default_version(r), 3);
  // Versions above a type's schema are refused: BrokerRegistrationChangeRecord has 0-3.
  const Bytes bytes = {1, 17, 4, 0};
  EXPECT_EQ(decode_record(std::span<const std::uint8_t>(bytes)).error(), StoreErrc::unsupported_version);
}

TEST(MetadataRecordTest, VersionOutsideTheSchemaIsRefused) {
  const Bytes bytes = {1, 2, 5, 0};
  EXPECT_EQ(decode_record(std::span<const std::uint8_t>(bytes)).error(), StoreErrc::unsupported_version);
}

TEST(MetadataRecordTest, TrailingBytesAreRefused) {
  Bytes bytes = encode_record(NoOpRecord{});
  bytes.push_back(0);
  EXPECT_EQ(decode_record(std::span<const std::uint8_t>(bytes)).error(), StoreErrc::trailing_bytes);
}

TEST(MetadataRecordTest, EveryTruncationIsAnErrorNotACrash) {
  for (const auto& record : samples()) {
    const Bytes bytes = encode_record(record);
    for (std::size_t n = 0; n < bytes.size(); ++n) {
      auto decoded = decode_record(std::span<const std::uint8_t>(bytes.data(), n));
      EXPECT_FALSE(decoded.has_value()) << record_name(record) << " cut at " << n;
    }
  }
}

TEST(MetadataRecordTest, MutatedBytesNeverCrashTheDecoder) {
  std::mt19937 rng(42);
  for (const auto& record : samples()) {
    const Bytes original = encode_record(record);
    for (int round = 0; round < 2000; ++round) {
      Bytes bytes = original;
      const int flips = 1 + static_cast<int>(rng() % 4);
      for (int i = 0; i < flips; ++i) bytes[rng() % bytes.size()] = static_cast<std::uint8_t>(rng());
      auto decoded = decode_record(std::span<const std::uint8_t>(bytes));
      if (decoded) (void)encode_record(decoded->record);  // whatever decodes can be written back
    }
  }
}

TEST(MetadataRecordTest, HeaderFieldsAboveInt16AreRefused) {
  // type 32768 as an unsigned varint: 0x80 0x80 0x02
  const Bytes bytes = {1, 0x80, 0x80, 0x02, 0};
  EXPECT_EQ(decode_record(std::span<const std::uint8_t>(bytes)).error(), StoreErrc::truncated_record);
}

Bytes from_hex(const std::string& hex) {
  Bytes out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<std::uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

// Records Kafka 4.3.1 wrote to its own metadata log decode, and encode back to the same bytes.
TEST(MetadataRecordTest, RecordsWrittenByKafkaDecodeAndReencodeByteForByte) {
  std::ifstream in(WEIR_METADATA_TEST_DATA "/kafka-4.3.1-metadata-records.txt");
  ASSERT_TRUE(in.good());
  std::string line;
  int checked = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string name, hex;
    int version = 0;
    fields >> name >> version >> hex;
    SCOPED_TRACE(line.substr(0, 60));
    const Bytes bytes = from_hex(hex);
    auto decoded = decode_record(std::span<const std::uint8_t>(bytes));
    ASSERT_TRUE(decoded.has_value()) << to_string(decoded.error());
    EXPECT_EQ(record_name(decoded->record), name);
    EXPECT_EQ(decoded->version, version);
    Bytes again;
    encode_record(decoded->record, decoded->version, again);
    EXPECT_EQ(again, bytes);
    // weir writes the same version as Kafka for each type.
    EXPECT_EQ(default_version(decoded->record), version);
    ++checked;
  }
  EXPECT_GE(checked, 10);
}

}  // namespace
}  // namespace weir::metadata
