// Replay of the record types a Kafka 4.3.1 controller writes beyond topics and configs: broker
// fencing and controlled shutdown, controllers, ELR, ACLs, client quotas, SCRAM, delegation
// tokens, ZK migration state and metadata transactions.
#include <gtest/gtest.h>

#include "metadata/image.h"

namespace weir::metadata {
namespace {

const Uuid kOrders(0x1111, 0x2222);
const Uuid kLogs(0x3333, 0x4444);

RegisterBrokerRecord broker(std::int32_t id, std::int64_t epoch, bool fenced = true) {
  RegisterBrokerRecord r;
  r.broker_id = id;
  r.broker_epoch = epoch;
  r.incarnation_id = Uuid(static_cast<std::uint64_t>(id), static_cast<std::uint64_t>(epoch));
  r.fenced = fenced;
  r.rack = "r1";
  r.log_dirs = {Uuid(9, 9)};
  return r;
}

BrokerRegistrationChangeRecord change(std::int32_t id, std::int64_t epoch, std::int8_t fenced,
                                      std::int8_t shutdown = 0) {
  BrokerRegistrationChangeRecord r;
  r.broker_id = id;
  r.broker_epoch = epoch;
  r.fenced = fenced;
  r.in_controlled_shutdown = shutdown;
  return r;
}

TopicRecord topic(std::string name, Uuid id) {
  TopicRecord r;
  r.name = std::move(name);
  r.topic_id = id;
  return r;
}

PartitionRecord partition(Uuid id, std::int32_t index, std::vector<std::int32_t> elr = {}) {
  PartitionRecord r;
  r.topic_id = id;
  r.partition_id = index;
  r.replicas = {1, 2, 3};
  r.isr = {1};
  r.leader = 1;
  r.eligible_leader_replicas = elr;
  r.last_known_elr = std::vector<std::int32_t>{};
  r.leader_epoch = 0;
  r.partition_epoch = 0;
  return r;
}

void replay_all(MetadataImage& image, const std::vector<MetadataRecord>& records) {
  for (const auto& r : records) ASSERT_TRUE(image.replay(r).has_value()) << record_name(r);
}

// ---- brokers -------------------------------------------------------------------------------

TEST(ImageBrokersTest, RegistrationKeepsEveryField) {
  MetadataImage image;
  RegisterBrokerRecord r = broker(1, 10, false);
  RegisterBrokerRecord::BrokerEndpoint ep;
  ep.name = "PLAINTEXT";
  ep.host = "h";
  ep.port = 9092;
  r.end_points.push_back(ep);
  r.in_controlled_shutdown = true;
  replay_all(image, {r});
  ASSERT_NE(image.broker(1), nullptr);
  EXPECT_EQ(*image.broker(1), r);
  EXPECT_FALSE(image.is_fenced(1));
  EXPECT_TRUE(image.in_controlled_shutdown(1));
  EXPECT_EQ(image.active_broker_count(), 0u);
  // Unknown brokers are fenced and not shutting down.
  EXPECT_TRUE(image.is_fenced(2));
  EXPECT_FALSE(image.in_controlled_shutdown(2));
}

TEST(ImageBrokersTest, RegistrationChangeFencesUnfencesAndEntersControlledShutdown) {
  MetadataImage image;
  replay_all(image, {broker(1, 10)});
  EXPECT_TRUE(image.is_fenced(1));
  replay_all(image, {change(1, 10, kFencingChangeUnfence)});
  EXPECT_FALSE(image.is_fenced(1));
  EXPECT_EQ(image.active_broker_count(), 1u);
  // 0 is "no change" for both tri-states.
  replay_all(image, {change(1, 10, kFencingChangeNone, kControlledShutdownChangeEnter)});
  EXPECT_FALSE(image.is_fenced(1));
  EXPECT_TRUE(image.in_controlled_shutdown(1));
  EXPECT_EQ(image.active_broker_count(), 0u);
  replay_all(image, {change(1, 10, kFencingChangeFence)});
  EXPECT_TRUE(image.is_fenced(1));
  EXPECT_TRUE(image.in_controlled_shutdown(1));
  // A new registration (new epoch) replaces the whole state.
  replay_all(image, {broker(1, 20, false)});
  EXPECT_FALSE(image.is_fenced(1));
  EXPECT_FALSE(image.in_controlled_shutdown(1));
  EXPECT_EQ(image.broker(1)->broker_epoch, 20);
}

TEST(ImageBrokersTest, RegistrationChangeReplacesLogDirsOnlyWhenGiven) {
  MetadataImage image;
  replay_all(image, {broker(1, 10)});
  auto r = change(1, 10, kFencingChangeNone);
  replay_all(image, {r});
  EXPECT_EQ(image.broker(1)->log_dirs, std::vector<Uuid>{Uuid(9, 9)});
  EXPECT_EQ(image.broker(1)->cordoned_log_dirs, std::nullopt);
  r.log_dirs = {Uuid(1, 2), Uuid(3, 4)};
  r.cordoned_log_dirs = std::vector<Uuid>{Uuid(3, 4)};
  replay_all(image, {r});
  EXPECT_EQ(image.broker(1)->log_dirs, (std::vector<Uuid>{Uuid(1, 2), Uuid(3, 4)}));
  EXPECT_EQ(image.broker(1)->cordoned_log_dirs, std::vector<Uuid>{Uuid(3, 4)});
}

TEST(ImageBrokersTest, LegacyFenceAndUnfenceRecords) {
  MetadataImage image;
  replay_all(image, {broker(1, 10, false)});
  FenceBrokerRecord fence;
  fence.id = 1;
  fence.epoch = 10;
  replay_all(image, {fence});
  EXPECT_TRUE(image.is_fenced(1));
  UnfenceBrokerRecord unfence;
  unfence.id = 1;
  unfence.epoch = 10;
  replay_all(image, {unfence});
  EXPECT_FALSE(image.is_fenced(1));
}

TEST(ImageBrokersTest, StaleEpochsAndUnknownBrokersAreInconsistent) {
  MetadataImage image;
  replay_all(image, {broker(1, 10, false)});
  const MetadataImage before = image;
  FenceBrokerRecord fence;
  fence.id = 1;
  fence.epoch = 9;
  UnfenceBrokerRecord unfence;
  unfence.id = 2;
  unfence.epoch = 10;
  for (const MetadataRecord& r : std::vector<MetadataRecord>{
           fence, unfence, change(1, 11, kFencingChangeFence), change(7, 10, kFencingChangeFence),
           change(1, 10, 2), change(1, 10, -2), change(1, 10, 0, 2), change(1, 10, 0, -1)}) {
    SCOPED_TRACE(std::string(record_name(r)));
    EXPECT_EQ(image.replay(r).error(), StoreErrc::inconsistent_record);
  }
  EXPECT_TRUE(image.same_content(before));
  EXPECT_FALSE(image.is_fenced(1));
}

TEST(ImageBrokersTest, UnregisterRemovesWhateverTheEpochAsKafkaDoes) {
  MetadataImage image;
  replay_all(image, {broker(1, 10, false), broker(2, 11, false)});
  UnregisterBrokerRecord r;
  r.broker_id = 1;
  r.broker_epoch = 3;  // Kafka's ClusterDelta does not check it
  replay_all(image, {r});
  EXPECT_EQ(image.broker(1), nullptr);
  EXPECT_EQ(image.active_broker_count(), 1u);
  r.broker_id = 42;  // unknown: no error either
  replay_all(image, {r});
  EXPECT_EQ(image.brokers().size(), 1u);
}

TEST(ImageBrokersTest, ControllersAreKeptByIdAndReplaced) {
  MetadataImage image;
  RegisterControllerRecord c;
  c.controller_id = 3000;
  c.incarnation_id = Uuid(1, 1);
  replay_all(image, {c});
  c.incarnation_id = Uuid(2, 2);
  replay_all(image, {c});
  ASSERT_EQ(image.controllers().size(), 1u);
  EXPECT_EQ(image.controllers().at(3000).incarnation_id, Uuid(2, 2));
}

// ---- partitions: PartitionChangeRecord v2 fields and ClearElrRecord ------------------------

TEST(ImagePartitionsTest, LeaderMinusTwoKeepsAndMinusOneRemovesTheLeader) {
  MetadataImage image;
  replay_all(image, {topic("orders", kOrders), partition(kOrders, 0)});
  PartitionChangeRecord keep;
  keep.topic_id = kOrders;
  keep.partition_id = 0;
  keep.isr = std::vector<std::int32_t>{1, 2};
  ASSERT_EQ(keep.leader, kNoLeaderChange);  // the schema default
  replay_all(image, {keep});
  const PartitionImage* p = &image.topic(kOrders)->partitions[0];
  EXPECT_EQ(p->leader, 1);
  EXPECT_EQ(p->leader_epoch, 0);
  EXPECT_EQ(p->partition_epoch, 1);
  PartitionChangeRecord none = keep;
  none.isr.reset();
  none.leader = kNoLeader;
  replay_all(image, {none});
  p = &image.topic(kOrders)->partitions[0];
  EXPECT_EQ(p->leader, kNoLeader);
  EXPECT_EQ(p->leader_epoch, 1);
  EXPECT_EQ(p->partition_epoch, 2);
  EXPECT_EQ(p->isr, (std::vector<std::int32_t>{1, 2}));
}

TEST(ImagePartitionsTest, ElrDirectoriesAndRecoveryStateChange) {
  MetadataImage image;
  replay_all(image, {topic("orders", kOrders), partition(kOrders, 0)});
  PartitionChangeRecord r;
  r.topic_id = kOrders;
  r.partition_id = 0;
  r.eligible_leader_replicas = std::vector<std::int32_t>{2};
  r.last_known_elr = std::vector<std::int32_t>{3};
  r.directories = std::vector<Uuid>{Uuid(1, 1), Uuid(2, 2), Uuid(3, 3)};
  r.leader_recovery_state = 1;
  replay_all(image, {r});
  const PartitionImage& p = image.topic(kOrders)->partitions[0];
  EXPECT_EQ(p.eligible_leader_replicas, std::vector<std::int32_t>{2});
  EXPECT_EQ(p.last_known_elr, std::vector<std::int32_t>{3});
  EXPECT_EQ(p.directories.size(), 3u);
  EXPECT_EQ(p.leader_recovery_state, 1);
  // -1 keeps the recovery state; other values are refused, as are directories not matching
  // the replicas given in the same record.
  PartitionChangeRecord keep;
  keep.topic_id = kOrders;
  keep.partition_id = 0;
  replay_all(image, {keep});
  EXPECT_EQ(image.topic(kOrders)->partitions[0].leader_recovery_state, 1);
  PartitionChangeRecord bad_state = keep;
  bad_state.leader_recovery_state = 2;
  EXPECT_EQ(image.replay(bad_state).error(), StoreErrc::inconsistent_record);
  PartitionChangeRecord bad_dirs = keep;
  bad_dirs.replicas = std::vector<std::int32_t>{1, 2};
  bad_dirs.directories = std::vector<Uuid>{Uuid(1, 1)};
  EXPECT_EQ(image.replay(bad_dirs).error(), StoreErrc::inconsistent_record);
}

TEST(ImagePartitionsTest, PartitionRecordWithUnknownRecoveryStateIsRefused) {
  MetadataImage image;
  replay_all(image, {topic("orders", kOrders)});
  PartitionRecord r = partition(kOrders, 0);
  r.leader_recovery_state = 2;
  EXPECT_EQ(image.replay(r).error(), StoreErrc::inconsistent_record);
  EXPECT_TRUE(image.topic(kOrders)->partitions.empty());
  r.leader_recovery_state = 1;
  replay_all(image, {r});
  EXPECT_EQ(image.topic(kOrders)->partitions[0].leader_recovery_state, 1);
}

TEST(ImagePartitionsTest, ClearElrOfOneTopicOrAll) {
  MetadataImage image;
  replay_all(image, {topic("orders", kOrders), partition(kOrders, 0, {2}), partition(kOrders, 1),
                     topic("logs", kLogs), partition(kLogs, 0, {3})});
  ClearElrRecord one;
  one.topic_name = "orders";
  replay_all(image, {one});
  EXPECT_TRUE(image.topic(kOrders)->partitions[0].eligible_leader_replicas.empty());
  // Kafka replays a merged PartitionChangeRecord for partitions that had an ELR: epoch + 1.
  EXPECT_EQ(image.topic(kOrders)->partitions[0].partition_epoch, 1);
  EXPECT_EQ(image.topic(kOrders)->partitions[1].partition_epoch, 0);
  EXPECT_EQ(image.topic(kLogs)->partitions[0].eligible_leader_replicas, std::vector<std::int32_t>{3});
  const MetadataImage before = image;
  replay_all(image, {ClearElrRecord{}});
  EXPECT_TRUE(image.topic(kLogs)->partitions[0].eligible_leader_replicas.empty());
  EXPECT_EQ(image.topic(kLogs)->partitions[0].partition_epoch, 1);
  EXPECT_EQ(image.topic(kOrders)->partitions[0].partition_epoch, 1);
  // The copy taken before is untouched.
  EXPECT_EQ(before.topic(kLogs)->partitions[0].eligible_leader_replicas, std::vector<std::int32_t>{3});
  ClearElrRecord unknown;
  unknown.topic_name = "nope";
  EXPECT_EQ(image.replay(unknown).error(), StoreErrc::inconsistent_record);
}

// ---- ACLs, quotas, SCRAM, tokens, ZK migration ---------------------------------------------

TEST(ImageSecurityTest, AclsAreAddedReplacedAndRemovedById) {
  MetadataImage image;
  AccessControlEntryRecord acl;
  acl.id = Uuid(5, 5);
  acl.resource_type = 2;
  acl.resource_name = "orders";
  acl.pattern_type = 3;
  acl.principal = "User:alice";
  acl.host = "*";
  acl.operation = 3;
  acl.permission_type = 3;
  replay_all(image, {acl});
  ASSERT_EQ(image.acls().size(), 1u);
  EXPECT_EQ(image.acls().at(Uuid(5, 5)), acl);
  const MetadataImage before = image;
  RemoveAccessControlEntryRecord remove;
  remove.id = Uuid(5, 5);
  replay_all(image, {remove});
  EXPECT_TRUE(image.acls().empty());
  EXPECT_EQ(before.acls().size(), 1u);
  // Removing an ACL that does not exist: Kafka's AclsDelta throws.
  EXPECT_EQ(image.replay(remove).error(), StoreErrc::inconsistent_record);
}

TEST(ImageSecurityTest, ClientQuotasByEntityWithDefaults) {
  MetadataImage image;
  ClientQuotaRecord q;
  ClientQuotaRecord::EntityData user;
  user.entity_type = "user";
  user.entity_name = "alice";
  ClientQuotaRecord::EntityData client;
  client.entity_type = "client-id";
  client.entity_name = std::nullopt;
  q.entity = {user, client};
  q.key = "producer_byte_rate";
  q.value = 1024;
  replay_all(image, {q});
  q.key = "consumer_byte_rate";
  q.value = 2048;
  replay_all(image, {q});
  const ClientQuotaEntity entity{{"client-id", std::nullopt}, {"user", "alice"}};
  ASSERT_EQ(image.client_quotas().size(), 1u);
  EXPECT_EQ(image.client_quotas().at(entity),
            (ClientQuotaValues{{"consumer_byte_rate", 2048.0}, {"producer_byte_rate", 1024.0}}));
  q.remove = true;
  replay_all(image, {q});
  EXPECT_EQ(image.client_quotas().at(entity).size(), 1u);
  q.key = "producer_byte_rate";
  replay_all(image, {q});
  EXPECT_TRUE(image.client_quotas().empty());  // no keys left: the entity goes
  replay_all(image, {q});                      // removing again is no error
}

TEST(ImageSecurityTest, ScramCredentialsByMechanismAndUser) {
  MetadataImage image;
  UserScramCredentialRecord c;
  c.name = "alice";
  c.mechanism = 1;
  c.iterations = 4096;
  replay_all(image, {c});
  c.mechanism = 2;
  replay_all(image, {c});
  c.iterations = 8192;
  replay_all(image, {c});
  ASSERT_EQ(image.scram_credentials().size(), 2u);
  EXPECT_EQ(image.scram_credentials().at(ScramKey{2, "alice"}).iterations, 8192);
  RemoveUserScramCredentialRecord remove;
  remove.name = "alice";
  remove.mechanism = 1;
  replay_all(image, {remove, remove});  // the second finds nothing: no error (Kafka's ScramDelta)
  EXPECT_EQ(image.scram_credentials().size(), 1u);
}

TEST(ImageSecurityTest, DelegationTokensById) {
  MetadataImage image;
  DelegationTokenRecord t;
  t.token_id = "tok";
  t.owner = "User:alice";
  t.expiration_timestamp = 5;
  replay_all(image, {t});
  t.expiration_timestamp = 9;  // a renewal rewrites the record
  replay_all(image, {t});
  EXPECT_EQ(image.delegation_tokens().at("tok").expiration_timestamp, 9);
  RemoveDelegationTokenRecord remove;
  remove.token_id = "tok";
  replay_all(image, {remove, remove});
  EXPECT_TRUE(image.delegation_tokens().empty());
}

TEST(ImageSecurityTest, ZkMigrationState) {
  MetadataImage image;
  EXPECT_EQ(image.zk_migration_state(), 0);
  ZkMigrationStateRecord r;
  r.zk_migration_state = 3;
  replay_all(image, {r});
  EXPECT_EQ(image.zk_migration_state(), 3);
}

// ---- metadata transactions -----------------------------------------------------------------

TEST(ImageTransactionsTest, CompleteTransactionAppliesAtEnd) {
  MetadataImage image;
  replay_all(image, {broker(1, 10, false), BeginTransactionRecord{}, topic("orders", kOrders), partition(kOrders, 0)});
  EXPECT_TRUE(image.in_transaction());
  // Inside: the working image has the topic, the committed one does not yet.
  EXPECT_NE(image.topic("orders"), nullptr);
  EXPECT_EQ(image.committed().topic("orders"), nullptr);
  EXPECT_NE(image.committed().broker(1), nullptr);
  replay_all(image, {EndTransactionRecord{}});
  EXPECT_FALSE(image.in_transaction());
  EXPECT_EQ(&image.committed(), &image);
  ASSERT_NE(image.topic("orders"), nullptr);
  EXPECT_EQ(image.topic("orders")->partitions.size(), 1u);
}

TEST(ImageTransactionsTest, AbortRestoresTheImageAsOfBegin) {
  MetadataImage image;
  replay_all(image, {topic("logs", kLogs), partition(kLogs, 0)});
  const MetadataImage before = image;
  PartitionChangeRecord shrink;
  shrink.topic_id = kLogs;
  shrink.partition_id = 0;
  shrink.isr = std::vector<std::int32_t>{};
  AbortTransactionRecord abort;
  abort.reason = "Controller failover";
  replay_all(image, {BeginTransactionRecord{}, topic("orders", kOrders), partition(kOrders, 0), shrink});
  EXPECT_EQ(image.topic(kLogs)->partitions[0].partition_epoch, 1);
  replay_all(image, {abort});
  EXPECT_FALSE(image.in_transaction());
  EXPECT_EQ(image.topic("orders"), nullptr);
  EXPECT_TRUE(image.same_content(before));
  EXPECT_EQ(image.records_replayed(), 7);
  // After the abort, the next transaction starts clean.
  replay_all(image, {BeginTransactionRecord{}, topic("orders", kOrders), EndTransactionRecord{}});
  EXPECT_NE(image.topic("orders"), nullptr);
}

TEST(ImageTransactionsTest, TruncatedTransactionIsNotCommitted) {
  MetadataImage image;
  replay_all(image, {topic("logs", kLogs), BeginTransactionRecord{}, topic("orders", kOrders)});
  // The log ends here: what a reader publishes is committed(), without "orders".
  const MetadataImage& published = image.committed();
  EXPECT_EQ(published.topic("orders"), nullptr);
  EXPECT_NE(published.topic("logs"), nullptr);
  EXPECT_FALSE(published.in_transaction());
}

TEST(ImageTransactionsTest, MarkersOutOfPlaceAreInconsistent) {
  MetadataImage image;
  EXPECT_EQ(image.replay(EndTransactionRecord{}).error(), StoreErrc::inconsistent_record);
  EXPECT_EQ(image.replay(AbortTransactionRecord{}).error(), StoreErrc::inconsistent_record);
  replay_all(image, {BeginTransactionRecord{}});
  EXPECT_EQ(image.replay(BeginTransactionRecord{}).error(), StoreErrc::inconsistent_record);
  EXPECT_TRUE(image.in_transaction());
}

}  // namespace
}  // namespace weir::metadata
