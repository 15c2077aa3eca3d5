// CreateTopics, DeleteTopics and CreatePartitions. Expected codes and messages are what Apache
// Kafka 4.3.1 answered to the same requests (see tests/unit/metadata/README.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <string>

#include "controller_test_util.h"

namespace weir::metadata {
namespace {

using protocol::CreateTopicsRequest;
using testing::topic;
using testing::with_config;

class CreateTopicsTest : public testing::ControllerFixture {};

TEST_F(CreateTopicsTest, CreatesATopicWithAFreshIdAndThisNodeAsLeader) {
  auto result = create({topic("orders", 3, 1)});
  ASSERT_EQ(result.response.topics.size(), 1u);
  const auto& r = result.response.topics[0];
  EXPECT_EQ(r.name, "orders");
  EXPECT_EQ(r.error_code, 0);
  EXPECT_EQ(r.error_message, std::nullopt);
  EXPECT_FALSE(r.topic_id.is_zero());
  EXPECT_EQ(r.num_partitions, 3);
  EXPECT_EQ(r.replication_factor, 1);
  EXPECT_EQ(r.topic_config_error_code, 0);

  ASSERT_EQ(result.records.size(), 4u);
  const auto& t = std::get<TopicRecord>(result.records[0]);
  EXPECT_EQ(t.name, "orders");
  EXPECT_EQ(t.topic_id, r.topic_id);
  for (int i = 0; i < 3; ++i) {
    const auto& p = std::get<PartitionRecord>(result.records[static_cast<std::size_t>(i) + 1]);
    EXPECT_EQ(p.partition_id, i);
    EXPECT_EQ(p.topic_id, r.topic_id);
    EXPECT_EQ(p.replicas, (std::vector<std::int32_t>{1}));
    EXPECT_EQ(p.isr, (std::vector<std::int32_t>{1}));
    EXPECT_EQ(p.leader, 1);
    EXPECT_EQ(p.leader_epoch, 0);
    EXPECT_EQ(p.partition_epoch, 0);
    EXPECT_EQ(p.directories, (std::vector<Uuid>{testing::kLogDir}));
  }
  const TopicImage* image = controller_.image().topic("orders");
  ASSERT_NE(image, nullptr);
  EXPECT_EQ(image->id, r.topic_id);
  EXPECT_EQ(image->partitions.size(), 3u);
}

TEST_F(CreateTopicsTest, ResponseCarriesEffectiveConfigsWithTheirSources) {
  const auto r = create_one(with_config(topic("orders", 1, 1), "retention.ms", " 1000 "));
  ASSERT_TRUE(r.configs.has_value());
  std::map<std::string, std::pair<std::string, int>> configs;
  for (const auto& c : *r.configs) configs[c.name] = {c.value.value_or("<null>"), c.config_source};
  EXPECT_EQ(configs["retention.ms"], std::make_pair(std::string(" 1000 "), 1));
  EXPECT_EQ(configs["min.insync.replicas"], std::make_pair(std::string("1"), 3));
  EXPECT_EQ(configs["cleanup.policy"], std::make_pair(std::string("delete"), 5));
  EXPECT_EQ(configs["segment.ms"], std::make_pair(std::string("604800000"), 5));
  EXPECT_EQ(configs["max.message.bytes"], std::make_pair(std::string("1048588"), 5));
  EXPECT_TRUE(std::ranges::is_sorted(*r.configs, {}, [](const auto& c) { return c.name; }));
}

TEST_F(CreateTopicsTest, ExplicitConfigsAreWrittenBetweenTopicAndPartitionRecords) {
  auto result =
      create({with_config(with_config(topic("orders", 2, 1), "retention.ms", "1000"), "cleanup.policy", "compact")});
  ASSERT_EQ(result.records.size(), 5u);
  EXPECT_TRUE(std::holds_alternative<TopicRecord>(result.records[0]));
  const auto& c1 = std::get<ConfigRecord>(result.records[1]);
  const auto& c2 = std::get<ConfigRecord>(result.records[2]);
  EXPECT_EQ(c1.resource_type, kConfigResourceTopic);
  EXPECT_EQ(c1.resource_name, "orders");
  EXPECT_EQ(c1.name, "cleanup.policy");
  EXPECT_EQ(c2.name, "retention.ms");
  EXPECT_EQ(c2.value, "1000");
  EXPECT_TRUE(std::holds_alternative<PartitionRecord>(result.records[3]));
  EXPECT_EQ(controller_.image().topic_configs("orders").at("retention.ms"), "1000");
}

TEST_F(CreateTopicsTest, MinusOneUsesTheBrokerDefaults) {
  auto result = create({topic("dflt", -1, -1)}, false, {.num_partitions = 4, .replication_factor = 1});
  EXPECT_EQ(result.response.topics[0].error_code, 0);
  EXPECT_EQ(result.response.topics[0].num_partitions, 4);
  EXPECT_EQ(result.response.topics[0].replication_factor, 1);
}

TEST_F(CreateTopicsTest, AnExistingNameIsTopicAlreadyExists) {
  create({topic("probe-a", 3, 1)});
  const auto r = create_one(topic("probe-a", 3, 1));
  EXPECT_EQ(r.error_code, 36);
  EXPECT_EQ(r.error_message, "Topic 'probe-a' already exists.");
  EXPECT_TRUE(r.topic_id.is_zero());
  EXPECT_EQ(r.num_partitions, -1);
  EXPECT_EQ(r.replication_factor, -1);
}

TEST_F(CreateTopicsTest, InvalidNamesAreInvalidTopicException) {
  const std::pair<std::string, std::string> cases[] = {
      {"bad name",
       "Topic name is invalid: 'bad name' contains one or more characters other than ASCII "
       "alphanumerics, '.', '_' and '-'"},
      {".", "Topic name is invalid: '.' is not allowed"},
      {"..", "Topic name is invalid: '..' is not allowed"},
      {"", "Topic name is invalid: the empty string is not allowed"},
      {std::string(250, 'x'), "Topic name is invalid: the length of '" + std::string(250, 'x') +
                                  "' is longer than the max allowed length 249"},
  };
  for (const auto& [name, message] : cases) {
    const auto r = create_one(topic(name, 1, 1));
    EXPECT_EQ(r.error_code, 17) << name;
    EXPECT_EQ(r.error_message, message);
  }
  EXPECT_EQ(create_one(topic(std::string(249, 'x'), 1, 1)).error_code, 0);
}

TEST_F(CreateTopicsTest, NamesCollidingByDotAndUnderscoreAreInvalid) {
  create({topic("probe.b", 1, 1)});
  const auto r = create_one(topic("probe_b", 1, 1));
  EXPECT_EQ(r.error_code, 17);
  EXPECT_EQ(r.error_message, "Topic 'probe_b' collides with existing topic: probe.b");
  // The same name again is TOPIC_ALREADY_EXISTS, as in Kafka.
  EXPECT_EQ(create_one(topic("probe.b", 1, 1)).error_code, 36);
}

TEST_F(CreateTopicsTest, NamesCollidingWithinOneRequestAreRefused) {
  // Deliberately stricter than Kafka, which creates both.
  auto result = create({topic("coll.x", 1, 1), topic("coll_x", 1, 1)});
  ASSERT_EQ(result.response.topics.size(), 2u);
  EXPECT_EQ(result.response.topics[0].error_code, 0);
  EXPECT_EQ(result.response.topics[1].error_code, 17);
  EXPECT_EQ(result.response.topics[1].error_message, "Topic 'coll_x' collides with existing topic: coll.x");
}

TEST_F(CreateTopicsTest, NonPositivePartitionCountsAreInvalidPartitions) {
  for (std::int32_t n : {0, -2}) {
    const auto r = create_one(topic("p", n, 1));
    EXPECT_EQ(r.error_code, 37);
    EXPECT_EQ(r.error_message, "Number of partitions was set to an invalid non-positive value.");
  }
}

TEST_F(CreateTopicsTest, BadReplicationFactorsAreInvalidReplicationFactor) {
  for (std::int16_t rf : {0, -2}) {
    const auto r = create_one(topic("rf", 1, rf));
    EXPECT_EQ(r.error_code, 38);
    EXPECT_EQ(r.error_message, "Replication factor must be larger than 0, or -1 to use the default value.");
  }
  const auto r = create_one(topic("rf3", 1, 3));
  EXPECT_EQ(r.error_code, 38);
  EXPECT_EQ(r.error_message,
            "Unable to replicate the partition 3 time(s): The target replication factor of 3 "
            "cannot be reached because only 1 broker(s) are registered or some brokers have all "
            "their log directories cordoned.");
  // The replication factor is checked before the partition count.
  EXPECT_EQ(create_one(topic("both", 0, 0)).error_code, 38);
}

TEST_F(CreateTopicsTest, ConfigErrorsAreInvalidConfigAndComeBeforeSizeChecks) {
  auto r = create_one(with_config(topic("c1", 1, 1), "foo.bar", "1"));
  EXPECT_EQ(r.error_code, 40);
  EXPECT_EQ(r.error_message, "Unknown topic config name: foo.bar");
  r = create_one(with_config(topic("c2", 1, 1), "retention.ms", "abc"));
  EXPECT_EQ(r.error_message, "Invalid value abc for configuration retention.ms: Not a number of type LONG");
  r = create_one(with_config(topic("zz", 1, 3), "foo", "1"));
  EXPECT_EQ(r.error_code, 40);
  r = create_one(with_config(topic("zz", 0, 0), "foo", "1"));
  EXPECT_EQ(r.error_message, "Unknown topic config name: foo");
  r = create_one(with_config(topic("c16", 1, 1), "remote.storage.enable", "true"));
  EXPECT_EQ(r.error_message,
            "Tiered Storage functionality is disabled in the broker. Topic cannot be configured "
            "with remote log storage.");
}

TEST_F(CreateTopicsTest, NullConfigValuesAreListed) {
  const auto r =
      create_one(with_config(with_config(topic("c6", 1, 1), "retention.ms", std::nullopt), "segment.ms", std::nullopt));
  EXPECT_EQ(r.error_code, 40);
  EXPECT_EQ(r.error_message, "Null value not supported for topic configs: retention.ms,segment.ms");
}

CreateTopicsRequest::CreatableTopic assigned(std::string name, std::vector<std::pair<int, std::vector<int>>> parts,
                                             int partitions = -1, int rf = -1) {
  auto t = testing::topic(std::move(name), partitions, static_cast<std::int16_t>(rf));
  for (auto& [index, brokers] : parts) {
    CreateTopicsRequest::CreatableReplicaAssignment a;
    a.partition_index = index;
    a.broker_ids = brokers;
    t.assignments.push_back(a);
  }
  return t;
}

TEST_F(CreateTopicsTest, ManualAssignmentsAreCheckedAsKafkaChecksThem) {
  const std::tuple<CreateTopicsRequest::CreatableTopic, int, std::string> cases[] = {
      {assigned("a1", {{0, {1}}}, -1, 1), 42,
       "A manual partition assignment was specified, but replication factor was not set to -1."},
      {assigned("a2", {{0, {1}}}, 1, -1), 42,
       "A manual partition assignment was specified, but numPartitions was not set to -1."},
      {assigned("a3", {{0, {1}}, {0, {1}}}), 39, "Found multiple manual partition assignments for partition 0"},
      {assigned("a4", {{0, {}}}), 39, "The manual partition assignment includes an empty replica list."},
      {assigned("a5", {{0, {2}}}), 39,
       "The manual partition assignment includes broker 2, but no such broker is registered."},
      {assigned("a6", {{0, {1, 1}}}), 39, "The manual partition assignment includes the broker 1 more than once."},
      {assigned("a7", {{0, {1}}, {2, {1}}}), 39, "partitions should be a consecutive 0-based integer sequence"},
      {assigned("a8", {{1, {1}}}), 39, "partitions should be a consecutive 0-based integer sequence"},
  };
  for (const auto& [t, code, message] : cases) {
    const auto r = create_one(t);
    EXPECT_EQ(r.error_code, code) << t.name;
    EXPECT_EQ(r.error_message, message) << t.name;
  }
  const auto ok = create_one(assigned("a9", {{1, {1}}, {0, {1}}}));
  EXPECT_EQ(ok.error_code, 0);
  EXPECT_EQ(ok.num_partitions, 2);
}

TEST_F(CreateTopicsTest, AssignmentsToOnlyFencedBrokersAreRefused) {
  RegisterBrokerRecord fenced;
  fenced.broker_id = 2;
  fenced.fenced = true;
  commit({fenced});
  const auto r = create_one(assigned("f", {{0, {2}}}));
  EXPECT_EQ(r.error_code, 39);
  EXPECT_EQ(r.error_message,
            "All brokers specified in the manual partition assignment for partition 0 are fenced "
            "or in controlled shutdown.");
  // With one active replica the ISR holds just that one, and it leads.
  auto result = create({assigned("g", {{0, {2, 1}}})});
  ASSERT_EQ(result.response.topics.at(0).error_code, 0);
  const auto& p = std::get<PartitionRecord>(result.records.at(1));
  EXPECT_EQ(p.replicas, (std::vector<std::int32_t>{2, 1}));
  EXPECT_EQ(p.isr, (std::vector<std::int32_t>{1}));
  EXPECT_EQ(p.leader, 1);
  EXPECT_EQ(p.directories, (std::vector<Uuid>{Uuid::zero(), testing::kLogDir}));
}

TEST_F(CreateTopicsTest, DuplicateNamesAreAnsweredOnceAfterTheOthers) {
  auto result = create({topic("dup", 1, 1), topic("ok", 1, 1), topic("dup", 1, 1)});
  ASSERT_EQ(result.response.topics.size(), 2u);
  EXPECT_EQ(result.response.topics[0].name, "ok");
  EXPECT_EQ(result.response.topics[0].error_code, 0);
  EXPECT_EQ(result.response.topics[1].name, "dup");
  EXPECT_EQ(result.response.topics[1].error_code, 42);
  EXPECT_EQ(result.response.topics[1].error_message, "Duplicate topic name.");
  EXPECT_EQ(controller_.image().topic("dup"), nullptr);
}

TEST_F(CreateTopicsTest, TheMetadataTopicCannotBeCreated) {
  const auto r = create_one(topic("__cluster_metadata", 1, 1));
  EXPECT_EQ(r.error_code, 42);
  EXPECT_EQ(r.error_message, "Creation of internal topic __cluster_metadata is prohibited.");
}

TEST_F(CreateTopicsTest, ValidateOnlyAnswersInFullButWritesNothing) {
  auto result = create({topic("vo", 2, 1)}, true);
  EXPECT_TRUE(result.records.empty());
  const auto& r = result.response.topics.at(0);
  EXPECT_EQ(r.error_code, 0);
  EXPECT_FALSE(r.topic_id.is_zero());
  EXPECT_EQ(r.num_partitions, 2);
  EXPECT_EQ(controller_.image().topic("vo"), nullptr);
}

TEST_F(CreateTopicsTest, MoreThanTenThousandPartitionsFailTheWholeRequest) {
  auto result = create({topic("b1", 10001, 1), topic("b2", 1, 1)}, true);
  ASSERT_EQ(result.response.topics.size(), 2u);
  for (const auto& r : result.response.topics) {
    EXPECT_EQ(r.error_code, 44);
    EXPECT_EQ(r.error_message, "Excessively large number of partitions per request.");
  }
  // Default counts and invalid topics count too.
  result = create({topic("b1", 9999, 1), topic("b2 x", 3, 1)}, true);
  EXPECT_EQ(result.response.topics[1].error_code, 44);
}

TEST_F(CreateTopicsTest, MoreThanTenThousandRecordsFailTheWholeRequest) {
  auto result = create({topic("b1", 5000, 1), topic("b2", 5000, 1)}, true);
  for (const auto& r : result.response.topics) {
    EXPECT_EQ(r.error_code, 44);
    EXPECT_EQ(r.error_message, "Unable to perform excessively large batch operation.");
  }
  result = create({topic("b1", 4999, 1), topic("b2", 4999, 1)}, true);
  for (const auto& r : result.response.topics) EXPECT_EQ(r.error_code, 0);
  // Failed topics write nothing, so they do not count.
  result = create({topic("b1", 9998, 1), topic("b2", 1, 3)}, true);
  EXPECT_EQ(result.response.topics[0].error_code, 0);
  EXPECT_EQ(result.response.topics[1].error_code, 38);
}

TEST_F(CreateTopicsTest, ErrorsOfOneTopicDoNotStopTheOthers) {
  auto result = create({topic("good", 1, 1), topic("bad name", 1, 1), topic("good2", 2, 1)});
  ASSERT_EQ(result.response.topics.size(), 3u);
  EXPECT_EQ(result.response.topics[0].error_code, 0);
  EXPECT_EQ(result.response.topics[1].error_code, 17);
  EXPECT_EQ(result.response.topics[2].error_code, 0);
  EXPECT_NE(controller_.image().topic("good2"), nullptr);
}

class DeleteTopicsTest : public testing::ControllerFixture {
 protected:
  DeleteTopicsTest() {
    create({topic("d1", 2, 1), topic("d2", 1, 1)});
    d1_ = controller_.image().topic("d1")->id;
  }

  static protocol::DeleteTopicsRequest::DeleteTopicState state(std::optional<std::string> name,
                                                               Uuid id = Uuid::zero()) {
    protocol::DeleteTopicsRequest::DeleteTopicState s;
    s.name = std::move(name);
    s.topic_id = id;
    return s;
  }

  ControllerResult<protocol::DeleteTopicsResponse> remove(
      std::vector<protocol::DeleteTopicsRequest::DeleteTopicState> topics) {
    protocol::DeleteTopicsRequest request;
    request.topics = std::move(topics);
    auto result = controller_.delete_topics(request, 6);
    commit(result.records);
    return result;
  }

  Uuid d1_;
};

TEST_F(DeleteTopicsTest, DeletesByNameAndById) {
  auto result = remove({state("d2"), state(std::nullopt, d1_)});
  ASSERT_EQ(result.records.size(), 2u);
  EXPECT_EQ(std::get<RemoveTopicRecord>(result.records[0]).topic_id, d1_);
  ASSERT_EQ(result.response.responses.size(), 2u);
  for (const auto& r : result.response.responses) {
    EXPECT_EQ(r.error_code, 0);
    EXPECT_EQ(r.error_message, std::nullopt);
    EXPECT_FALSE(r.topic_id.is_zero());
  }
  EXPECT_EQ(result.response.responses[0].name, "d1");
  EXPECT_EQ(controller_.image().topic_count(), 0u);
}

TEST_F(DeleteTopicsTest, UnknownNamesAndIdsUseKafkasDefaultMessages) {
  auto result = remove({state("nope"), state(std::nullopt, Uuid(0, 1))});
  ASSERT_EQ(result.response.responses.size(), 2u);
  const auto& by_id = result.response.responses[0];
  EXPECT_EQ(by_id.name, std::nullopt);
  EXPECT_EQ(by_id.error_code, 100);
  EXPECT_EQ(by_id.error_message, "This server does not host this topic ID.");
  const auto& by_name = result.response.responses[1];
  EXPECT_EQ(by_name.name, "nope");
  EXPECT_EQ(by_name.error_code, 3);
  EXPECT_EQ(by_name.error_message, "This server does not host this topic-partition.");
  EXPECT_TRUE(result.records.empty());
}

TEST_F(DeleteTopicsTest, MalformedEntriesAreInvalidRequest) {
  auto r = remove({state(std::nullopt)}).response.responses.at(0);
  EXPECT_EQ(r.error_code, 42);
  EXPECT_EQ(r.error_message, "Neither topic name nor id were specified.");
  r = remove({state("d1", Uuid(0, 1))}).response.responses.at(0);
  EXPECT_EQ(r.error_message, "You may not specify both topic name and topic id.");
  r = remove({state("d1"), state("d1")}).response.responses.at(0);
  EXPECT_EQ(r.error_message, "Duplicate topic name.");
  r = remove({state(std::nullopt, d1_), state(std::nullopt, d1_)}).response.responses.at(0);
  EXPECT_EQ(r.error_message, "Duplicate topic id.");
  auto both = remove({state(std::nullopt, d1_), state("d1")});
  ASSERT_EQ(both.response.responses.size(), 1u);
  EXPECT_EQ(both.response.responses[0].error_message,
            "The provided topic name maps to an ID that was already supplied.");
  EXPECT_TRUE(both.records.empty());
  EXPECT_NE(controller_.image().topic("d1"), nullptr);
}

TEST_F(DeleteTopicsTest, OldVersionsDeleteByNameList) {
  protocol::DeleteTopicsRequest request;
  request.topic_names = {"d2", "nope"};
  auto result = controller_.delete_topics(request, 5);
  ASSERT_EQ(result.response.responses.size(), 2u);
  EXPECT_EQ(result.response.responses[0].error_code, 3);
  EXPECT_EQ(result.response.responses[1].error_code, 0);
  EXPECT_EQ(result.records.size(), 1u);
}

TEST_F(DeleteTopicsTest, ANameIsFreeAgainOnceTheDeletionIsApplied) {
  remove({state("d1")});
  const auto r = create_one(topic("d1", 1, 1));
  EXPECT_EQ(r.error_code, 0);
  EXPECT_NE(r.topic_id, d1_);
}

class CreatePartitionsTest : public testing::ControllerFixture {
 protected:
  CreatePartitionsTest() { create({topic("d1", 2, 1)}); }

  static protocol::CreatePartitionsRequest::CreatePartitionsTopic grow(
      std::string name, std::int32_t count,
      std::optional<std::vector<std::vector<std::int32_t>>> assignments = std::nullopt) {
    protocol::CreatePartitionsRequest::CreatePartitionsTopic t;
    t.name = std::move(name);
    t.count = count;
    if (assignments) {
      t.assignments.emplace();
      for (auto& ids : *assignments) {
        protocol::CreatePartitionsRequest::CreatePartitionsAssignment a;
        a.broker_ids = ids;
        t.assignments->push_back(a);
      }
    } else {
      t.assignments = std::nullopt;
    }
    return t;
  }

  ControllerResult<protocol::CreatePartitionsResponse> run(
      std::vector<protocol::CreatePartitionsRequest::CreatePartitionsTopic> topics, bool validate_only = false) {
    protocol::CreatePartitionsRequest request;
    request.topics = std::move(topics);
    request.validate_only = validate_only;
    auto result = controller_.create_partitions(request, 3);
    commit(result.records);
    return result;
  }

  protocol::CreatePartitionsResponse::CreatePartitionsTopicResult run_one(
      protocol::CreatePartitionsRequest::CreatePartitionsTopic t) {
    return run({std::move(t)}).response.results.at(0);
  }
};

TEST_F(CreatePartitionsTest, AddsPartitionsAfterTheExistingOnes) {
  auto result = run({grow("d1", 4)});
  EXPECT_EQ(result.response.results.at(0).error_code, 0);
  EXPECT_EQ(result.response.results.at(0).error_message, std::nullopt);
  ASSERT_EQ(result.records.size(), 2u);
  EXPECT_EQ(std::get<PartitionRecord>(result.records[0]).partition_id, 2);
  EXPECT_EQ(std::get<PartitionRecord>(result.records[1]).partition_id, 3);
  EXPECT_EQ(std::get<PartitionRecord>(result.records[1]).leader, 1);
  EXPECT_EQ(controller_.image().topic("d1")->partitions.size(), 4u);
}

TEST_F(CreatePartitionsTest, CountsThatDoNotGrowAreInvalidPartitions) {
  auto r = run_one(grow("d1", 2));
  EXPECT_EQ(r.error_code, 37);
  EXPECT_EQ(r.error_message, "Topic already has 2 partition(s).");
  r = run_one(grow("d1", 1));
  EXPECT_EQ(r.error_message, "The topic d1 currently has 2 partition(s); 1 would not be an increase.");
  r = run_one(grow("d1", -1));
  EXPECT_EQ(r.error_message, "The topic d1 currently has 2 partition(s); -1 would not be an increase.");
}

TEST_F(CreatePartitionsTest, AnUnknownTopicHasNoMessage) {
  const auto r = run_one(grow("nope", 3));
  EXPECT_EQ(r.error_code, 3);
  EXPECT_EQ(r.error_message, std::nullopt);
}

TEST_F(CreatePartitionsTest, ManualAssignmentsAreChecked) {
  auto r = run_one(grow("d1", 4, std::vector<std::vector<std::int32_t>>{{1}}));
  EXPECT_EQ(r.error_code, 39);
  EXPECT_EQ(r.error_message, "Attempted to add 2 additional partition(s), but only 1 assignment(s) were specified.");
  r = run_one(grow("d1", 3, std::vector<std::vector<std::int32_t>>{{2}}));
  EXPECT_EQ(r.error_message, "The manual partition assignment includes broker 2, but no such broker is registered.");
  r = run_one(grow("d1", 3, std::vector<std::vector<std::int32_t>>{{1, 1}}));
  EXPECT_EQ(r.error_message, "The manual partition assignment includes the broker 1 more than once.");
  r = run_one(grow("d1", 3, std::vector<std::vector<std::int32_t>>{{}}));
  EXPECT_EQ(r.error_message, "The manual partition assignment includes an empty replica list.");
  r = run_one(grow("d1", 3, std::vector<std::vector<std::int32_t>>{{1}}));
  EXPECT_EQ(r.error_code, 0);
}

TEST_F(CreatePartitionsTest, DuplicateNamesAreInvalidRequest) {
  auto result = run({grow("d1", 3), grow("d1", 4)});
  ASSERT_EQ(result.response.results.size(), 1u);
  EXPECT_EQ(result.response.results[0].error_code, 42);
  EXPECT_EQ(result.response.results[0].error_message, "Duplicate topic name.");
  EXPECT_TRUE(result.records.empty());
}

TEST_F(CreatePartitionsTest, ValidateOnlyWritesNothing) {
  auto result = run({grow("d1", 5)}, true);
  EXPECT_EQ(result.response.results.at(0).error_code, 0);
  EXPECT_TRUE(result.records.empty());
  EXPECT_EQ(controller_.image().topic("d1")->partitions.size(), 2u);
}

TEST_F(CreatePartitionsTest, MoreThanTenThousandNewPartitionsArePolicyViolation) {
  auto r = run_one(grow("d1", 10003));
  EXPECT_EQ(r.error_code, 44);
  EXPECT_EQ(r.error_message, "Unable to perform excessively large batch operation.");
  EXPECT_EQ(run_one(grow("d1", 10002)).error_code, 0);
}

class ProducerIdsTest : public testing::ControllerFixture {};

TEST_F(ProducerIdsTest, BlocksFollowEachOtherFromZero) {
  std::int64_t expected = 0;
  for (int i = 0; i < 3; ++i) {
    auto result = controller_.allocate_producer_ids(1, 5);
    ASSERT_TRUE(result.has_value());
    EXPECT_EQ(result->response.first_producer_id, expected);
    EXPECT_EQ(result->response.size, 1000);
    const auto& r = std::get<ProducerIdsRecord>(result->records.at(0));
    EXPECT_EQ(r.broker_id, 1);
    EXPECT_EQ(r.broker_epoch, 5);
    EXPECT_EQ(r.next_producer_id, expected + 1000);
    commit(result->records);
    expected += 1000;
  }
  EXPECT_EQ(controller_.image().next_producer_id(), 3000);
}

TEST_F(ProducerIdsTest, AnExhaustedIdSpaceIsAnError) {
  ProducerIdsRecord near_end;
  near_end.broker_id = 1;
  near_end.next_producer_id = std::numeric_limits<std::int64_t>::max() - 999;
  commit({near_end});
  auto result = controller_.allocate_producer_ids(1, 5);
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().kafka_code(), -1);
  EXPECT_EQ(result.error().message,
            "Exhausted all producerIds as the next block's end producerId has exceeded the int64 "
            "type limit");
}

class RegistrationTest : public testing::ControllerFixture {};

TEST_F(RegistrationTest, TheBrokerIsRegisteredUnfenced) {
  const BrokerRegistration* b = controller_.image().broker(1);
  ASSERT_NE(b, nullptr);
  EXPECT_FALSE(b->fenced);
  EXPECT_EQ(b->end_points.at(0).port, 9092);
  EXPECT_EQ(b->log_dirs, (std::vector<Uuid>{testing::kLogDir}));
  EXPECT_EQ(controller_.image().active_broker_count(), 1u);
}

TEST_F(RegistrationTest, BootstrapWritesFeaturesAndTheClusterMinInsyncReplicas) {
  EXPECT_EQ(controller_.image().feature_level("metadata.version"), 30);
  EXPECT_EQ(controller_.image().configs(kConfigResourceBroker, "").at("min.insync.replicas"), "1");
}

TEST_F(RegistrationTest, OnlyChangedFeatureLevelsAreWritten) {
  auto records =
      controller_.finalize_features({{"metadata.version", 30}, {"transaction.version", 2}, {"group.version", 0}});
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(std::get<FeatureLevelRecord>(records[0]).name, "transaction.version");
}

}  // namespace
}  // namespace weir::metadata
