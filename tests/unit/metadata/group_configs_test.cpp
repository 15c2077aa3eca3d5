// Group configs (GROUP resource, KIP-848): validation, storage as ConfigRecords, DescribeConfigs,
// and the capped values the consumer coordinator uses. Expected codes and messages are Kafka
// 4.3.1's (GroupConfig, ControllerConfigurationValidator, ConfigHelper).
#include "metadata/group_configs.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "controller_test_util.h"

namespace weir::metadata {
namespace {

using AC = protocol::AlterConfigsRequest;
using DC = protocol::DescribeConfigsRequest;

constexpr std::int8_t kSet = 0, kDelete = 1, kAppend = 2;
constexpr int kInvalidConfig = 40, kInvalidRequest = 42;

class GroupConfigsTest : public testing::ControllerFixture {
 protected:
  using Op = testing::ConfigOp;

  // One IncrementalAlterConfigs of one group, applied; its (code, message).
  std::pair<int, std::optional<std::string>> alter(std::string group, std::vector<Op> ops) {
    auto result = controller_.incremental_alter_configs(
        testing::incremental_request(kConfigResourceGroup, std::move(group), std::move(ops), false), 1);
    records_ = result.records;
    commit(result.records);
    const auto& r = result.response.responses.at(0);
    return {r.error_code, r.error_message};
  }

  protocol::DescribeConfigsResponse::DescribeConfigsResult describe(std::string group, bool synonyms = true,
                                                                    bool documentation = false) {
    DC::DescribeConfigsResource res;
    res.resource_type = kConfigResourceGroup;
    res.resource_name = std::move(group);
    res.configuration_keys = std::nullopt;
    return controller_.describe_group(res, synonyms, documentation);
  }

  static const protocol::DescribeConfigsResponse::DescribeConfigsResourceResult& entry(
      const protocol::DescribeConfigsResponse::DescribeConfigsResult& r, std::string_view name) {
    for (const auto& c : r.configs) {
      if (c.name == name) return c;
    }
    ADD_FAILURE() << "no entry " << name;
    static const protocol::DescribeConfigsResponse::DescribeConfigsResourceResult none;
    return none;
  }

  const ConfigMap& group_configs(std::string_view group) {
    return controller_.image().configs(kConfigResourceGroup, group);
  }

  std::vector<MetadataRecord> records_;
};

TEST_F(GroupConfigsTest, SetStoresConfigRecordsOfTheGroupResource) {
  EXPECT_EQ(
      alter("g1", {{"consumer.session.timeout.ms", kSet, "50000"}, {"consumer.heartbeat.interval.ms", kSet, "6000"}}),
      std::make_pair(0, std::optional<std::string>()));
  ASSERT_EQ(records_.size(), 2u);
  const auto& r = std::get<ConfigRecord>(records_[0]);
  EXPECT_EQ(r.resource_type, 32);
  EXPECT_EQ(r.resource_name, "g1");
  EXPECT_EQ(group_configs("g1"),
            (ConfigMap{{"consumer.heartbeat.interval.ms", "6000"}, {"consumer.session.timeout.ms", "50000"}}));
  // The same value again writes nothing; DELETE removes the key and then the resource.
  EXPECT_EQ(alter("g1", {{"consumer.session.timeout.ms", kSet, "50000"}}).first, 0);
  EXPECT_TRUE(records_.empty());
  EXPECT_EQ(alter("g1", {{"consumer.session.timeout.ms", kDelete, std::nullopt},
                         {"consumer.heartbeat.interval.ms", kDelete, std::nullopt}})
                .first,
            0);
  EXPECT_TRUE(group_configs("g1").empty());
  EXPECT_TRUE(controller_.image().config_resources(kConfigResourceGroup).empty());
}

TEST_F(GroupConfigsTest, BadValuesGetKafkasInvalidConfigMessages) {
  const std::pair<Op, std::string> cases[] = {
      {{"consumer.session.timeout.ms", kSet, "1000"},
       "consumer.session.timeout.ms must be greater than or equal to group.consumer.min.session.timeout.ms"},
      {{"consumer.session.timeout.ms", kSet, "70000"},
       "consumer.session.timeout.ms must be less than or equal to group.consumer.max.session.timeout.ms"},
      {{"consumer.heartbeat.interval.ms", kSet, "20000"},
       "consumer.heartbeat.interval.ms must be less than or equal to group.consumer.max.heartbeat.interval.ms"},
      {{"consumer.heartbeat.interval.ms", kSet, "4999"},
       "consumer.heartbeat.interval.ms must be greater than or equal to group.consumer.min.heartbeat.interval.ms"},
      {{"consumer.assignment.interval.ms", kSet, "15001"},
       "consumer.assignment.interval.ms must be less than or equal to group.consumer.max.assignment.interval.ms"},
      {{"consumer.session.timeout.ms", kSet, "abc"},
       "Invalid value abc for configuration consumer.session.timeout.ms: Not a number of type INT"},
      {{"consumer.session.timeout.ms", kSet, "0"},
       "Invalid value 0 for configuration consumer.session.timeout.ms: Value must be at least 1"},
      {{"share.record.lock.duration.ms", kSet, "999"},
       "Invalid value 999 for configuration share.record.lock.duration.ms: Value must be at least 1000"},
      {{"share.delivery.count.limit", kSet, "11"},
       "share.delivery.count.limit must be less than or equal to group.share.max.delivery.count.limit"},
      {{"streams.num.standby.replicas", kSet, "3"},
       "streams.num.standby.replicas must be less than or equal to group.streams.max.standby.replicas"},
      {{"share.isolation.level", kSet, "none"},
       "Invalid value none for configuration share.isolation.level: String must be one of: read_committed, "
       "read_uncommitted"},
      {{"share.auto.offset.reset", kSet, "none"},
       "Invalid value none for configuration share.auto.offset.reset: Invalid value `none` for configuration "
       "share.auto.offset.reset. The value must be either 'earliest', 'latest' or of the format "
       "'by_duration:<PnDTnHnMn.nS>'."},
      {{"share.auto.offset.reset", kSet, "by_duration:-PT1H"},
       "Invalid value by_duration:-PT1H for configuration share.auto.offset.reset: Invalid value "
       "`by_duration:-PT1H` for configuration share.auto.offset.reset. The value must be either 'earliest', "
       "'latest' or of the format 'by_duration:<PnDTnHnMn.nS>'."},
      {{"no.such.key", kSet, "1"}, "Unknown group config name: no.such.key"},
  };
  for (const auto& [op, message] : cases) {
    EXPECT_EQ(alter("g1", {op}), std::make_pair(kInvalidConfig, std::optional<std::string>(message)))
        << std::get<0>(op) << "=" << *std::get<2>(op);
  }
  EXPECT_TRUE(group_configs("g1").empty());
}

TEST_F(GroupConfigsTest, ValidValuesOfEveryKindAreAccepted) {
  EXPECT_EQ(alter("g1", {{"share.auto.offset.reset", kSet, "by_duration:P1DT2H3M4.5S"},
                         {"share.isolation.level", kSet, "read_committed"},
                         {"share.renew.acknowledge.enable", kSet, "false"},
                         {"consumer.assignment.interval.ms", kSet, "0"},
                         {"streams.num.standby.replicas", kSet, "2"}})
                .first,
            0);
  EXPECT_EQ(group_configs("g1").size(), 5u);
}

TEST_F(GroupConfigsTest, SessionTimeoutMustExceedHeartbeatInterval) {
  // Each value alone is inside its bounds; together they are not.
  EXPECT_EQ(alter("g1", {{"consumer.session.timeout.ms", kSet, "45000"}}).first, 0);
  EXPECT_EQ(alter("g1", {{"consumer.heartbeat.interval.ms", kSet, "15000"}}).first, 0);
  EXPECT_TRUE(validate_group_configs({{"consumer.session.timeout.ms", "45000"}}, {}).is_ok());
  ConfigMap wide{{"group.consumer.max.heartbeat.interval.ms", "60000"}};
  const ApiError e =
      validate_group_configs({{"consumer.session.timeout.ms", "45000"}, {"consumer.heartbeat.interval.ms", "45000"}},
                             {nullptr, nullptr, &wide});
  EXPECT_EQ(e.message, "consumer.session.timeout.ms must be greater than consumer.heartbeat.interval.ms");
}

TEST_F(GroupConfigsTest, BoundsComeFromTheBrokersConfig) {
  const ConfigMap statics{{"group.consumer.min.session.timeout.ms", "10000"}};
  EXPECT_TRUE(validate_group_configs({{"consumer.session.timeout.ms", "10000"}}, {nullptr, nullptr, &statics}).is_ok());
  EXPECT_FALSE(validate_group_configs({{"consumer.session.timeout.ms", "10000"}}, {}).is_ok());
}

TEST_F(GroupConfigsTest, EmptyGroupNameAndNonListOperationsAreRefused) {
  EXPECT_EQ(alter("", {{"consumer.session.timeout.ms", kSet, "50000"}}),
            std::make_pair(kInvalidRequest, std::optional<std::string>("Default group resources are not allowed.")));
  EXPECT_EQ(alter("g1", {{"consumer.session.timeout.ms", kAppend, "1"}}),
            std::make_pair(kInvalidConfig, std::optional<std::string>(
                                               "Can't APPEND to key consumer.session.timeout.ms because its type is "
                                               "not LIST.")));
  // A topic key's list type does not make it a group key.
  EXPECT_EQ(alter("g1", {{"cleanup.policy", kAppend, "compact"}}).first, kInvalidConfig);
}

TEST_F(GroupConfigsTest, LegacyAlterConfigsReplacesTheGroupsOverrides) {
  EXPECT_EQ(alter("g1", {{"consumer.session.timeout.ms", kSet, "50000"}}).first, 0);
  AC request;
  AC::AlterConfigsResource resource;
  resource.resource_type = kConfigResourceGroup;
  resource.resource_name = "g1";
  AC::AlterableConfig c;
  c.name = "consumer.heartbeat.interval.ms";
  c.value = "7000";
  resource.configs.push_back(c);
  request.resources.push_back(resource);
  auto result = controller_.alter_configs(request, 2);
  commit(result.records);
  EXPECT_EQ(result.response.responses.at(0).error_code, 0);
  EXPECT_EQ(group_configs("g1"), (ConfigMap{{"consumer.heartbeat.interval.ms", "7000"}}));
}

TEST_F(GroupConfigsTest, DescribeShowsGroupValuesThenBrokerValues) {
  EXPECT_EQ(alter("g1", {{"consumer.session.timeout.ms", kSet, " 50000 "}}).first, 0);
  const auto r = describe("g1");
  EXPECT_EQ(r.error_code, 0);
  EXPECT_EQ(r.configs.size(), group_config_defs().size());
  const auto& session = entry(r, "consumer.session.timeout.ms");
  EXPECT_EQ(session.value, "50000");
  EXPECT_EQ(session.config_source, 8);  // GROUP_CONFIG
  EXPECT_EQ(session.config_type, 3);    // INT
  EXPECT_FALSE(session.read_only);
  ASSERT_EQ(session.synonyms.size(), 2u);
  EXPECT_EQ(session.synonyms[0].name, "consumer.session.timeout.ms");
  EXPECT_EQ(session.synonyms[1].name, "group.consumer.session.timeout.ms");
  EXPECT_EQ(session.synonyms[1].value, "45000");
  EXPECT_EQ(session.synonyms[1].source, 5);
  const auto& heartbeat = entry(r, "consumer.heartbeat.interval.ms");
  EXPECT_EQ(heartbeat.value, "5000");
  EXPECT_EQ(heartbeat.config_source, 5);  // DEFAULT_CONFIG, from group.consumer.heartbeat.interval.ms
  const auto& isolation = entry(r, "share.isolation.level");
  EXPECT_EQ(isolation.value, "read_uncommitted");
  EXPECT_EQ(isolation.config_type, 2);
  ASSERT_EQ(isolation.synonyms.size(), 1u);
  EXPECT_EQ(isolation.synonyms[0].name, "share.isolation.level");
  EXPECT_EQ(entry(r, "share.renew.acknowledge.enable").config_type, 1);
  EXPECT_FALSE(session.documentation.has_value());
  EXPECT_TRUE(entry(describe("g1", false, true), "consumer.session.timeout.ms").documentation.has_value());
  EXPECT_TRUE(entry(describe("g1", false), "consumer.session.timeout.ms").synonyms.empty());
}

TEST_F(GroupConfigsTest, DescribeOfAnUnknownGroupListsDefaultsAndOfNoNameIsRefused) {
  const auto r = describe("never-seen");
  EXPECT_EQ(r.error_code, 0);
  EXPECT_EQ(entry(r, "consumer.session.timeout.ms").config_source, 5);
  const auto bad = describe("");
  EXPECT_EQ(bad.error_code, kInvalidRequest);
  EXPECT_EQ(bad.error_message, "Group name must not be empty");
}

TEST_F(GroupConfigsTest, ConfigsSurviveAReplayOfTheirRecords) {
  EXPECT_EQ(alter("g1", {{"consumer.heartbeat.interval.ms", kSet, "6000"}}).first, 0);
  const auto saved = records_;
  MetadataImage fresh;
  for (const auto& r : saved) ASSERT_TRUE(fresh.replay(r).has_value());
  EXPECT_EQ(fresh.configs(kConfigResourceGroup, "g1"), (ConfigMap{{"consumer.heartbeat.interval.ms", "6000"}}));
}

TEST(ConsumerGroupValues, GroupValuesAreCappedToTheBrokersBounds) {
  const ConfigMap statics{{"group.consumer.max.session.timeout.ms", "50000"}};
  const BrokerConfigLayers broker{nullptr, nullptr, &statics};
  const auto v = consumer_group_values(
      {{"consumer.session.timeout.ms", "55000"}, {"consumer.heartbeat.interval.ms", "6000"}}, broker);
  EXPECT_EQ(v.session_timeout_ms, 50000);
  EXPECT_EQ(v.heartbeat_interval_ms, 6000);
  EXPECT_FALSE(v.assignment_interval_ms.has_value());
  EXPECT_FALSE(consumer_group_values({}, broker).session_timeout_ms.has_value());
}

}  // namespace
}  // namespace weir::metadata
