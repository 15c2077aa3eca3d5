// AlterConfigs, IncrementalAlterConfigs and DescribeConfigs of topics. Expected codes and messages
// are what Apache Kafka 4.3.1 answered to the same requests (see README.md).
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "controller_test_util.h"

namespace weir::metadata {
namespace {

using testing::topic;
using IAC = protocol::IncrementalAlterConfigsRequest;
using AC = protocol::AlterConfigsRequest;

constexpr std::int8_t kSet = 0, kDelete = 1, kAppend = 2, kSubtract = 3;

class AlterConfigsTest : public testing::ControllerFixture {
 protected:
  AlterConfigsTest() { create({topic("d1", 2, 1)}); }

  ControllerResult<protocol::IncrementalAlterConfigsResponse> incremental(
      std::int8_t type, std::string name,
      std::vector<std::tuple<std::string, std::int8_t, std::optional<std::string>>> ops, bool validate_only = false) {
    auto result = controller_.incremental_alter_configs(
        testing::incremental_request(type, std::move(name), std::move(ops), validate_only), 1);
    commit(result.records);
    return result;
  }

  // The single resource's (code, message).
  std::pair<int, std::optional<std::string>> incremental_error(
      std::int8_t type, std::string name,
      std::vector<std::tuple<std::string, std::int8_t, std::optional<std::string>>> ops) {
    auto r = incremental(type, std::move(name), std::move(ops)).response.responses.at(0);
    return {r.error_code, r.error_message};
  }

  ControllerResult<protocol::AlterConfigsResponse> legacy(
      std::int8_t type, std::string name, std::vector<std::pair<std::string, std::optional<std::string>>> configs,
      bool validate_only = false) {
    AC request;
    AC::AlterConfigsResource resource;
    resource.resource_type = type;
    resource.resource_name = std::move(name);
    for (auto& [key, value] : configs) {
      AC::AlterableConfig c;
      c.name = key;
      c.value = value;
      resource.configs.push_back(c);
    }
    request.resources.push_back(resource);
    request.validate_only = validate_only;
    auto result = controller_.alter_configs(request, 2);
    commit(result.records);
    return result;
  }

  std::pair<int, std::optional<std::string>> legacy_error(
      std::int8_t type, std::string name, std::vector<std::pair<std::string, std::optional<std::string>>> configs) {
    auto r = legacy(type, std::move(name), std::move(configs)).response.responses.at(0);
    return {r.error_code, r.error_message};
  }

  const ConfigMap& overrides() { return controller_.image().topic_configs("d1"); }
};

using Error = std::pair<int, std::optional<std::string>>;

TEST_F(AlterConfigsTest, LegacyAlterReplacesEveryOverride) {
  auto result = legacy(2, "d1", {{"retention.ms", "1000"}, {"cleanup.policy", "compact"}});
  EXPECT_EQ(result.response.responses.at(0).error_code, 0);
  EXPECT_EQ(result.response.responses.at(0).error_message, std::nullopt);
  EXPECT_EQ(result.response.responses.at(0).resource_type, 2);
  EXPECT_EQ(result.response.responses.at(0).resource_name, "d1");
  EXPECT_EQ(overrides(), (ConfigMap{{"cleanup.policy", "compact"}, {"retention.ms", "1000"}}));
  result = legacy(2, "d1", {{"segment.ms", "5000"}});
  ASSERT_EQ(result.records.size(), 3u);  // set segment.ms, then delete the two others
  EXPECT_EQ(std::get<ConfigRecord>(result.records[0]).name, "segment.ms");
  EXPECT_EQ(std::get<ConfigRecord>(result.records[1]).value, std::nullopt);
  EXPECT_EQ(overrides(), (ConfigMap{{"segment.ms", "5000"}}));
}

TEST_F(AlterConfigsTest, LegacyAlterErrorsAreKafkas) {
  EXPECT_EQ(legacy_error(2, "nope", {{"retention.ms", "1000"}}), Error(3, "The topic 'nope' does not exist."));
  EXPECT_EQ(legacy_error(2, "d1", {{"foo", "1"}}), Error(40, "Unknown topic config name: foo"));
  EXPECT_EQ(legacy_error(2, "d1", {{"retention.ms", "x"}}),
            Error(40, "Invalid value x for configuration retention.ms: Not a number of type LONG"));
  EXPECT_EQ(legacy_error(2, "d1", {{"retention.ms", std::nullopt}}),
            Error(42, "Null value not supported for : retention.ms"));
  EXPECT_EQ(legacy_error(2, "bad name", {{"segment.ms", "5000"}}),
            Error(17,
                  "Topic name is invalid: 'bad name' contains one or more characters other than "
                  "ASCII alphanumerics, '.', '_' and '-'"));
  EXPECT_EQ(legacy_error(2, "", {{"segment.ms", "5000"}}), Error(42, "Default topic resources are not allowed."));
  EXPECT_EQ(legacy_error(7, "x", {{"segment.ms", "5000"}}), Error(42, "Unknown resource type 7"));
  EXPECT_EQ(legacy_error(2, "d1", {{"retention.ms", "5"}, {"retention.ms", "6"}}),
            Error(42, "Error due to duplicate config keys"));
  EXPECT_TRUE(overrides().empty());
}

TEST_F(AlterConfigsTest, ValidateOnlyWritesNothing) {
  auto result = legacy(2, "d1", {{"retention.ms", "1000"}}, true);
  EXPECT_EQ(result.response.responses.at(0).error_code, 0);
  EXPECT_TRUE(result.records.empty());
  auto inc = incremental(2, "d1", {{"retention.ms", kSet, "7"}}, true);
  EXPECT_EQ(inc.response.responses.at(0).error_code, 0);
  EXPECT_TRUE(inc.records.empty());
  EXPECT_TRUE(overrides().empty());
}

TEST_F(AlterConfigsTest, EachResourceMayAppearOnce) {
  IAC request;
  for (int i = 0; i < 2; ++i) {
    IAC::AlterConfigsResource r;
    r.resource_type = 2;
    r.resource_name = "d1";
    request.resources.push_back(r);
  }
  auto result = controller_.incremental_alter_configs(request, 1);
  ASSERT_EQ(result.response.responses.size(), 2u);
  for (const auto& r : result.response.responses) {
    EXPECT_EQ(r.error_code, 42);
    EXPECT_EQ(r.error_message, "Each resource must appear at most once.");
  }
}

TEST_F(AlterConfigsTest, IncrementalSetAndDeleteTouchOnlyTheirKeys) {
  incremental(2, "d1", {{"segment.ms", kSet, "5000"}});
  auto result = incremental(2, "d1", {{"retention.ms", kSet, "2000"}, {"segment.ms", kDelete, {}}});
  EXPECT_EQ(result.response.responses.at(0).error_code, 0);
  EXPECT_EQ(result.records.size(), 2u);
  EXPECT_EQ(overrides(), (ConfigMap{{"retention.ms", "2000"}}));
  // Deleting a key that is not set, even an unknown one, succeeds and writes nothing.
  result = incremental(2, "d1", {{"foo", kDelete, {}}});
  EXPECT_EQ(result.response.responses.at(0).error_code, 0);
  EXPECT_TRUE(result.records.empty());
  // Setting the current value writes nothing either.
  EXPECT_TRUE(incremental(2, "d1", {{"retention.ms", kSet, "2000"}}).records.empty());
}

TEST_F(AlterConfigsTest, AppendAndSubtractWorkOnTheCurrentValueOrTheDefault) {
  // Kafka 4.3.1: APPEND delete to the default "delete" stores "delete" explicitly.
  incremental(2, "d1", {{"cleanup.policy", kAppend, "delete"}});
  EXPECT_EQ(overrides().at("cleanup.policy"), "delete");
  EXPECT_TRUE(incremental(2, "d1", {{"cleanup.policy", kAppend, "delete"}}).records.empty());
  incremental(2, "d1", {{"cleanup.policy", kAppend, "compact"}});
  EXPECT_EQ(overrides().at("cleanup.policy"), "delete,compact");
  incremental(2, "d1", {{"cleanup.policy", kSubtract, "compact"}});
  EXPECT_EQ(overrides().at("cleanup.policy"), "delete");
  incremental(2, "d1", {{"cleanup.policy", kSubtract, "delete"}});
  EXPECT_EQ(overrides().at("cleanup.policy"), "");
  incremental(2, "d1", {{"leader.replication.throttled.replicas", kAppend, "0:1"}});
  incremental(2, "d1", {{"leader.replication.throttled.replicas", kAppend, "1:1"}});
  EXPECT_EQ(overrides().at("leader.replication.throttled.replicas"), "0:1,1:1");
}

TEST_F(AlterConfigsTest, IncrementalErrorsAreKafkas) {
  EXPECT_EQ(incremental_error(2, "nope", {{"retention.ms", kSet, "1000"}}),
            Error(3, "The topic 'nope' does not exist."));
  EXPECT_EQ(incremental_error(2, "d1", {{"retention.ms", kAppend, "5"}}),
            Error(40, "Can't APPEND to key retention.ms because its type is not LIST."));
  EXPECT_EQ(incremental_error(2, "d1", {{"retention.ms", kSubtract, "5"}}),
            Error(40, "Can't SUBTRACT to key retention.ms because its type is not LIST."));
  EXPECT_EQ(incremental_error(2, "d1", {{"retention.ms", kSet, "x"}, {"foo", kAppend, "x"}}),
            Error(40, "Can't APPEND to key foo because its type is not LIST."));
  EXPECT_EQ(incremental_error(2, "d1", {{"retention.ms", kSet, {}}}),
            Error(42, "Null value not supported for : retention.ms"));
  EXPECT_EQ(incremental_error(2, "d1", {{"foo", kSet, "1"}}), Error(40, "Unknown topic config name: foo"));
  EXPECT_EQ(incremental_error(2, "d1", {{"retention.ms", kSet, "1"}, {"retention.ms", kSet, "2"}}),
            Error(42, "Error due to duplicate config keys"));
  EXPECT_EQ(incremental_error(2, "d1", {{"min.compaction.lag.ms", kSet, "100"}, {"max.compaction.lag.ms", kSet, "10"}}),
            Error(40,
                  "conflict topic config setting min.compaction.lag.ms (100) > "
                  "max.compaction.lag.ms (10)"));
  EXPECT_EQ(incremental_error(2, "d1", {{"cleanup.policy", kAppend, "compact,,delete"}}),
            Error(40, "Configuration 'cleanup.policy' values must not be empty."));
  EXPECT_EQ(incremental_error(2, "__cluster_metadata", {{"retention.ms", kSet, "1"}}),
            Error(3, "The topic '__cluster_metadata' does not exist."));
  // weir: an unknown operation is a malformed request (Kafka fails with UNKNOWN_SERVER_ERROR).
  EXPECT_EQ(incremental_error(2, "d1", {{"retention.ms", 4, "5"}}), Error(42, "Unknown operation type 4"));
  EXPECT_TRUE(overrides().empty());
}

// BROKER resources: the controller checks only the name (the broker that took the request
// checked the values); a record for each named key, changed or not, as Kafka (KAFKA-14136).
TEST_F(AlterConfigsTest, BrokerResourcesAreStoredAsKafkasControllerStoresThem) {
  EXPECT_EQ(incremental_error(4, "x", {{"log.retention.ms", kSet, "1"}}),
            Error(42, "Unable to parse broker name as a base 10 number."));
  EXPECT_EQ(incremental_error(4, "-1", {{"log.retention.ms", kSet, "1"}}), Error(42, "Invalid negative broker ID."));

  auto r = incremental(4, "1", {{"log.retention.ms", kSet, "1000"}, {"num.io.threads", kSet, "9"}});
  EXPECT_EQ(r.response.responses.at(0).error_code, 0);
  EXPECT_EQ(r.records.size(), 2u);
  EXPECT_EQ(controller_.image().configs(kConfigResourceBroker, "1").at("log.retention.ms"), "1000");
  // The same value again still makes a record (brokers reload on it).
  EXPECT_EQ(incremental(4, "1", {{"log.retention.ms", kSet, "1000"}}).records.size(), 1u);
  // LIST keys take APPEND and SUBTRACT, from the key's default when unset.
  EXPECT_EQ(incremental_error(4, "", {{"log.cleanup.policy", kAppend, "compact"}}), Error(0, std::nullopt));
  EXPECT_EQ(controller_.image().configs(kConfigResourceBroker, "").at("log.cleanup.policy"), "delete,compact");
  EXPECT_EQ(incremental_error(4, "", {{"log.retention.ms", kAppend, "1"}}),
            Error(40, "Can't APPEND to key log.retention.ms because its type is not LIST."));
  // Delete; a legacy AlterConfigs replaces the resource's whole set.
  incremental(4, "1", {{"num.io.threads", kDelete, std::nullopt}});
  EXPECT_FALSE(controller_.image().configs(kConfigResourceBroker, "1").contains("num.io.threads"));
  EXPECT_EQ(legacy(4, "1", {{"log.flush.interval.ms", "5"}}).response.responses.at(0).error_code, 0);
  const auto& now = controller_.image().configs(kConfigResourceBroker, "1");
  EXPECT_EQ(now.size(), 1u);
  EXPECT_EQ(now.at("log.flush.interval.ms"), "5");
  // validate_only stores nothing.
  incremental(4, "1", {{"log.segment.bytes", kSet, "1048576"}}, true);
  EXPECT_FALSE(controller_.image().configs(kConfigResourceBroker, "1").contains("log.segment.bytes"));
}

TEST_F(AlterConfigsTest, DescribeShowsOverridesWithTheirSource) {
  incremental(2, "d1", {{"retention.ms", kSet, " 1000 "}});
  protocol::DescribeConfigsRequest::DescribeConfigsResource resource;
  resource.resource_type = 2;
  resource.resource_name = "d1";
  resource.configuration_keys = std::vector<std::string>{"retention.ms", "nope"};
  auto result = controller_.describe_topic(resource, true);
  EXPECT_EQ(result.error_code, 0);
  ASSERT_EQ(result.configs.size(), 1u);
  EXPECT_EQ(result.configs[0].value, "1000");
  EXPECT_EQ(result.configs[0].config_source, 1);
  EXPECT_EQ(result.configs[0].synonyms.at(0).value, "1000");

  resource.configuration_keys = std::nullopt;
  EXPECT_GE(controller_.describe_topic(resource, false).configs.size(), 25u);
}

TEST_F(AlterConfigsTest, DescribeErrorsAreKafkas) {
  protocol::DescribeConfigsRequest::DescribeConfigsResource resource;
  resource.resource_type = 2;
  resource.resource_name = "nope";
  auto result = controller_.describe_topic(resource, false);
  EXPECT_EQ(result.error_code, 3);
  EXPECT_EQ(result.error_message, "");
  EXPECT_TRUE(result.configs.empty());
  resource.resource_name = "";
  result = controller_.describe_topic(resource, false);
  EXPECT_EQ(result.error_code, 17);
  EXPECT_EQ(result.error_message, "Topic name is invalid: the empty string is not allowed");
}

TEST_F(AlterConfigsTest, TypedConfigFollowsOverrides) {
  incremental(2, "d1", {{"retention.ms", kSet, "1234"}, {"cleanup.policy", kSet, "compact"}});
  auto config = controller_.topic_config("d1");
  ASSERT_TRUE(config.has_value());
  EXPECT_EQ(config->retention_ms, 1234);
  EXPECT_TRUE(config->cleanup_compact);
  EXPECT_FALSE(config->cleanup_delete);
  EXPECT_EQ(controller_.topic_config("nope"), std::nullopt);
}

TEST_F(AlterConfigsTest, DeletingATopicDropsItsOverrides) {
  incremental(2, "d1", {{"retention.ms", kSet, "1234"}});
  protocol::DeleteTopicsRequest request;
  request.topic_names = {"d1"};
  commit(controller_.delete_topics(request, 5).records);
  create({topic("d1", 1, 1)});
  EXPECT_TRUE(overrides().empty());
}

}  // namespace
}  // namespace weir::metadata
