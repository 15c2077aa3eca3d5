#include "metadata/image.h"

#include <gtest/gtest.h>

namespace weir::metadata {
namespace {

const Uuid kOrders(0x1111, 0x2222);
const Uuid kLogs(0x3333, 0x4444);

TopicRecord topic(std::string name, Uuid id) {
  TopicRecord r;
  r.name = std::move(name);
  r.topic_id = id;
  return r;
}

PartitionRecord partition(Uuid id, std::int32_t index, std::vector<std::int32_t> replicas) {
  PartitionRecord r;
  r.topic_id = id;
  r.partition_id = index;
  r.replicas = replicas;
  r.isr = replicas;
  r.leader = replicas.front();
  r.leader_epoch = 0;
  r.partition_epoch = 0;
  return r;
}

ConfigRecord config(std::int8_t type, std::string resource, std::string key, std::optional<std::string> value) {
  ConfigRecord r;
  r.resource_type = type;
  r.resource_name = std::move(resource);
  r.name = std::move(key);
  r.value = std::move(value);
  return r;
}

void replay_all(MetadataImage& image, const std::vector<MetadataRecord>& records) {
  for (const auto& r : records) ASSERT_TRUE(image.replay(r).has_value()) << record_name(r);
}

TEST(MetadataImageTest, TopicsAreFoundByNameAndById) {
  MetadataImage image;
  replay_all(image,
             {topic("orders", kOrders), partition(kOrders, 0, {1}), partition(kOrders, 1, {1}), topic("logs", kLogs)});
  ASSERT_NE(image.topic("orders"), nullptr);
  EXPECT_EQ(image.topic("orders"), image.topic(kOrders));
  EXPECT_EQ(image.topic("orders")->partitions.size(), 2u);
  EXPECT_EQ(image.topic("orders")->partitions[1].partition_id, 1);
  EXPECT_EQ(image.topic("orders")->partitions[1].leader, 1);
  EXPECT_EQ(image.topic(kLogs)->name, "logs");
  EXPECT_EQ(image.topic("nope"), nullptr);
  EXPECT_EQ(image.topic_count(), 2u);
  EXPECT_EQ(image.records_replayed(), 4);
  EXPECT_EQ(image.topic_ids_by_name().begin()->first, "logs");
}

TEST(MetadataImageTest, PartitionFieldsComeFromTheRecord) {
  MetadataImage image;
  PartitionRecord p = partition(kOrders, 0, {1, 2, 3});
  p.isr = {1, 2};
  p.leader = 2;
  p.leader_epoch = 5;
  p.partition_epoch = 9;
  p.directories = {Uuid(1, 1), Uuid(2, 2), Uuid(3, 3)};
  replay_all(image, {topic("orders", kOrders), p});
  const PartitionImage& got = image.topic(kOrders)->partitions[0];
  EXPECT_EQ(got.replicas, (std::vector<std::int32_t>{1, 2, 3}));
  EXPECT_EQ(got.isr, (std::vector<std::int32_t>{1, 2}));
  EXPECT_EQ(got.leader, 2);
  EXPECT_EQ(got.leader_epoch, 5);
  EXPECT_EQ(got.partition_epoch, 9);
  EXPECT_EQ(got.directories.size(), 3u);
}

TEST(MetadataImageTest, PartitionChangeBumpsEpochsAsKafkaDoes) {
  MetadataImage image;
  replay_all(image, {topic("orders", kOrders), partition(kOrders, 0, {1, 2})});
  PartitionChangeRecord shrink;
  shrink.topic_id = kOrders;
  shrink.partition_id = 0;
  shrink.isr = std::vector<std::int32_t>{1};  // ISR change only: leader kept (-2)
  replay_all(image, {shrink});
  const PartitionImage* p = &image.topic(kOrders)->partitions[0];
  EXPECT_EQ(p->isr, (std::vector<std::int32_t>{1}));
  EXPECT_EQ(p->leader, 1);
  EXPECT_EQ(p->leader_epoch, 0);
  EXPECT_EQ(p->partition_epoch, 1);

  PartitionChangeRecord elect;
  elect.topic_id = kOrders;
  elect.partition_id = 0;
  elect.leader = 2;
  replay_all(image, {elect});
  p = &image.topic(kOrders)->partitions[0];
  EXPECT_EQ(p->leader, 2);
  EXPECT_EQ(p->leader_epoch, 1);
  EXPECT_EQ(p->partition_epoch, 2);
}

TEST(MetadataImageTest, ContradictingRecordsAreRefusedAndChangeNothing) {
  MetadataImage image;
  replay_all(image, {topic("orders", kOrders), partition(kOrders, 0, {1})});
  EXPECT_EQ(image.replay(topic("orders", kLogs)).error(), StoreErrc::inconsistent_record);
  EXPECT_EQ(image.replay(topic("other", kOrders)).error(), StoreErrc::inconsistent_record);
  EXPECT_EQ(image.replay(partition(kLogs, 0, {1})).error(), StoreErrc::inconsistent_record);
  EXPECT_EQ(image.replay(partition(kOrders, 2, {1})).error(), StoreErrc::inconsistent_record);
  RemoveTopicRecord remove;
  remove.topic_id = kLogs;
  EXPECT_EQ(image.replay(remove).error(), StoreErrc::inconsistent_record);
  PartitionChangeRecord change;
  change.topic_id = kOrders;
  change.partition_id = 1;
  EXPECT_EQ(image.replay(change).error(), StoreErrc::inconsistent_record);
  EXPECT_EQ(image.topic_count(), 1u);
  EXPECT_EQ(image.topic(kOrders)->partitions.size(), 1u);
  EXPECT_EQ(image.records_replayed(), 2);
}

TEST(MetadataImageTest, RemovingATopicFreesItsNameAndDropsItsConfigs) {
  MetadataImage image;
  replay_all(image, {topic("orders", kOrders), partition(kOrders, 0, {1}),
                     config(kConfigResourceTopic, "orders", "retention.ms", "1000")});
  EXPECT_EQ(image.topic_configs("orders").at("retention.ms"), "1000");
  RemoveTopicRecord remove;
  remove.topic_id = kOrders;
  replay_all(image, {remove});
  EXPECT_EQ(image.topic("orders"), nullptr);
  EXPECT_EQ(image.topic(kOrders), nullptr);
  EXPECT_TRUE(image.topic_configs("orders").empty());
  replay_all(image, {topic("orders", kLogs)});
  EXPECT_EQ(image.topic("orders")->id, kLogs);
}

TEST(MetadataImageTest, ConfigRecordsSetAndNullValuesDelete) {
  MetadataImage image;
  replay_all(image, {config(kConfigResourceTopic, "t", "a", "1"), config(kConfigResourceTopic, "t", "b", "2"),
                     config(kConfigResourceBroker, "", "min.insync.replicas", "1"),
                     config(kConfigResourceBroker, "1", "log.retention.ms", "5"),
                     config(kConfigResourceTopic, "t", "a", std::nullopt),
                     config(kConfigResourceTopic, "t", "zz", std::nullopt)});
  EXPECT_EQ(image.topic_configs("t"), (ConfigMap{{"b", "2"}}));
  EXPECT_EQ(image.configs(kConfigResourceBroker, "").at("min.insync.replicas"), "1");
  EXPECT_EQ(image.configs(kConfigResourceBroker, "1").at("log.retention.ms"), "5");
  replay_all(image, {config(kConfigResourceTopic, "t", "b", std::nullopt)});
  EXPECT_TRUE(image.topic_configs("t").empty());
}

TEST(MetadataImageTest, CopiesDoNotSeeLaterReplays) {
  MetadataImage image;
  replay_all(image, {topic("orders", kOrders), partition(kOrders, 0, {1}),
                     config(kConfigResourceTopic, "orders", "retention.ms", "1000")});
  const MetadataImage snapshot = image;
  const TopicImage* shared = snapshot.topic(kOrders);
  replay_all(image, {partition(kOrders, 1, {1}), config(kConfigResourceTopic, "orders", "retention.ms", "2000"),
                     topic("logs", kLogs)});
  EXPECT_EQ(snapshot.topic(kOrders), shared);
  EXPECT_EQ(snapshot.topic(kOrders)->partitions.size(), 1u);
  EXPECT_EQ(snapshot.topic_configs("orders").at("retention.ms"), "1000");
  EXPECT_EQ(snapshot.topic("logs"), nullptr);
  EXPECT_EQ(image.topic(kOrders)->partitions.size(), 2u);
  EXPECT_EQ(image.topic_configs("orders").at("retention.ms"), "2000");
  EXPECT_FALSE(image.same_content(snapshot));
}

TEST(MetadataImageTest, UnsharedTopicsAreUpdatedInPlace) {
  MetadataImage image;
  replay_all(image, {topic("orders", kOrders), partition(kOrders, 0, {1})});
  const TopicImage* before = image.topic(kOrders);
  replay_all(image, {partition(kOrders, 1, {1})});
  EXPECT_EQ(image.topic(kOrders), before);
}

TEST(MetadataImageTest, ProducerIdBlocksOnlyMoveForward) {
  MetadataImage image;
  EXPECT_EQ(image.next_producer_id(), 0);
  ProducerIdsRecord r;
  r.broker_id = 1;
  r.next_producer_id = 1000;
  replay_all(image, {r});
  EXPECT_EQ(image.next_producer_id(), 1000);
  EXPECT_EQ(image.replay(r).error(), StoreErrc::inconsistent_record);
  r.next_producer_id = 999;
  EXPECT_EQ(image.replay(r).error(), StoreErrc::inconsistent_record);
  EXPECT_EQ(image.next_producer_id(), 1000);
}

TEST(MetadataImageTest, FeatureLevelZeroRemovesTheFeature) {
  MetadataImage image;
  FeatureLevelRecord mv;
  mv.name = "metadata.version";
  mv.feature_level = 30;
  FeatureLevelRecord tv;
  tv.name = "transaction.version";
  tv.feature_level = 2;
  replay_all(image, {mv, tv});
  EXPECT_EQ(image.feature_level("metadata.version"), 30);
  tv.feature_level = 0;
  replay_all(image, {tv});
  EXPECT_EQ(image.feature_level("transaction.version"), std::nullopt);
  EXPECT_EQ(image.features().size(), 1u);
}

TEST(MetadataImageTest, BrokerRegistrationsReplaceEarlierOnes) {
  MetadataImage image;
  RegisterBrokerRecord b;
  b.broker_id = 1;
  b.broker_epoch = 3;
  b.fenced = true;
  replay_all(image, {b});
  EXPECT_EQ(image.active_broker_count(), 0u);
  b.broker_epoch = 9;
  b.fenced = false;
  replay_all(image, {b});
  EXPECT_EQ(image.brokers().size(), 1u);
  EXPECT_EQ(image.broker(1)->broker_epoch, 9);
  EXPECT_EQ(image.active_broker_count(), 1u);
  EXPECT_EQ(image.broker(2), nullptr);
}

TEST(MetadataImageTest, NamesDifferingOnlyByDotAndUnderscoreCollide) {
  MetadataImage image;
  replay_all(image, {topic("a.b", kOrders)});
  EXPECT_EQ(image.colliding_topic("a_b"), "a.b");
  EXPECT_EQ(image.colliding_topic("a.b"), "a.b");
  EXPECT_EQ(image.colliding_topic("a-b"), std::nullopt);
  EXPECT_EQ(image.colliding_topic("ab"), std::nullopt);
  RemoveTopicRecord remove;
  remove.topic_id = kOrders;
  replay_all(image, {remove});
  EXPECT_EQ(image.colliding_topic("a_b"), std::nullopt);
}

}  // namespace
}  // namespace weir::metadata
