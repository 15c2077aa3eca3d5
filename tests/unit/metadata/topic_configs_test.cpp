#include "metadata/topic_configs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace weir::metadata {
namespace {

std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> out;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, sep)) out.push_back(field);
  if (!line.empty() && line.back() == sep) out.emplace_back();
  return out;
}

std::vector<std::vector<std::string>> data_rows(const std::string& file, char sep) {
  std::ifstream in(std::string(WEIR_METADATA_TEST_DATA) + "/" + file);
  EXPECT_TRUE(in.good()) << file;
  std::vector<std::vector<std::string>> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    rows.push_back(split(line, sep));
  }
  return rows;
}

// After weir's bootstrap, as after Kafka's storage format: min.insync.replicas=1 cluster-wide.
const ConfigMap kClusterDefaults = {{"min.insync.replicas", "1"}};
const BrokerConfigLayers kBootstrapped{.dynamic_cluster = &kClusterDefaults};

TEST(TopicConfigsTest, KnowsExactlyTheKeysKafkaReports) {
  std::set<std::string> kafka;
  for (const auto& row : data_rows("kafka-4.3.1-describe-configs-default.txt", '|')) {
    kafka.insert(row[0]);
  }
  std::set<std::string> weir;
  for (const auto& def : topic_config_defs()) weir.insert(std::string(def.name));
  EXPECT_EQ(weir, kafka);
}

// The output of `kafka-configs --describe --all --topic probe-a` against Kafka 4.3.1: every
// implemented key has the same default value in weir.
TEST(TopicConfigsTest, DefaultsMatchKafkaConfigsDescribeAll) {
  std::ifstream in(std::string(WEIR_METADATA_TEST_DATA) + "/kafka-4.3.1-kafka-configs-describe-all.txt");
  ASSERT_TRUE(in.good());
  const auto described = describe_topic_configs({}, kBootstrapped, std::nullopt, false);
  std::string line;
  int checked = 0;
  while (std::getline(in, line)) {
    if (line.rfind("  ", 0) != 0) continue;
    const auto eq = line.find('=');
    const auto end = line.find(" sensitive=");
    const std::string name = line.substr(2, eq - 2);
    const std::string value = line.substr(eq + 1, end - eq - 1);
    const TopicConfigDef* def = find_topic_config(name);
    ASSERT_NE(def, nullptr) << name;
    EXPECT_EQ(def->default_value, value) << name;
    auto it =
        std::ranges::find(described, name, &protocol::DescribeConfigsResponse::DescribeConfigsResourceResult::name);
    EXPECT_EQ(it != described.end(), def->implemented) << name;
    if (it != described.end()) {
      EXPECT_EQ(it->value, value) << name;
    }
    ++checked;
  }
  EXPECT_EQ(checked, static_cast<int>(topic_config_defs().size()));
}

// Each row: one config on a new topic and Kafka's answer, code and message.
TEST(TopicConfigsTest, ValidationMatchesKafkaForEveryRecordedCase) {
  const auto rows = data_rows("kafka-4.3.1-topic-config-validation.tsv", '\t');
  ASSERT_GT(rows.size(), 200u);
  for (const auto& row : rows) {
    ASSERT_EQ(row.size(), 4u);
    SCOPED_TRACE(row[0] + "=" + row[1]);
    const ApiError e = validate_topic_configs({{row[0], row[1]}}, kBootstrapped);
    EXPECT_EQ(e.kafka_code(), std::stoi(row[2]));
    EXPECT_EQ(e.message.value_or(""), row[3]);
  }
}

TEST(TopicConfigsTest, DescribeMatchesKafkaForATopicWithoutOverrides) {
  const auto described = describe_topic_configs({}, kBootstrapped, std::nullopt, true);
  std::map<std::string, const protocol::DescribeConfigsResponse::DescribeConfigsResourceResult*> by_name;
  for (const auto& r : described) by_name[r.name] = &r;
  for (const auto& row : data_rows("kafka-4.3.1-describe-configs-default.txt", '|')) {
    SCOPED_TRACE(row[0]);
    const TopicConfigDef* def = find_topic_config(row[0]);
    ASSERT_NE(def, nullptr);
    auto it = by_name.find(row[0]);
    if (!def->implemented) {
      EXPECT_EQ(it, by_name.end()) << "keys weir does not implement are not reported";
      continue;
    }
    ASSERT_NE(it, by_name.end());
    const auto& r = *it->second;
    EXPECT_EQ(r.value.value_or("<null>"), row[1]);
    EXPECT_EQ(r.read_only, row[2] == "1");
    EXPECT_EQ(r.config_source, std::stoi(row[3]));
    EXPECT_EQ(r.is_sensitive, row[4] == "1");
    EXPECT_EQ(r.config_type, std::stoi(row[5]));
    std::string synonyms;
    for (const auto& s : r.synonyms) {
      synonyms += s.name + "=" + s.value.value_or("") + "/" + std::to_string(s.source) + ";";
    }
    EXPECT_EQ(synonyms, row.size() > 6 ? row[6] : "");
  }
}

TEST(TopicConfigsTest, DescribeNormalisesOverridesAndListsTheTopicSynonymFirst) {
  // Kafka 4.3.1 answered this for a topic created with these two values.
  const ConfigMap overrides = {{"cleanup.policy", "compact , delete"}, {"retention.ms", " 1000 "}};
  auto described = describe_topic_configs(overrides, kBootstrapped,
                                          std::vector<std::string>{"cleanup.policy", "retention.ms"}, true);
  ASSERT_EQ(described.size(), 2u);
  EXPECT_EQ(described[0].name, "cleanup.policy");
  EXPECT_EQ(described[0].value, "compact,delete");
  EXPECT_EQ(described[0].config_source, 1);
  ASSERT_EQ(described[0].synonyms.size(), 2u);
  EXPECT_EQ(described[0].synonyms[0].name, "cleanup.policy");
  EXPECT_EQ(described[0].synonyms[0].value, "compact,delete");
  EXPECT_EQ(described[0].synonyms[0].source, 1);
  EXPECT_EQ(described[0].synonyms[1].name, "log.cleanup.policy");
  EXPECT_EQ(described[0].synonyms[1].value, "delete");
  EXPECT_EQ(described[0].synonyms[1].source, 5);
  EXPECT_EQ(described[1].name, "retention.ms");
  EXPECT_EQ(described[1].value, "1000");
  ASSERT_EQ(described[1].synonyms.size(), 1u);
  EXPECT_EQ(described[1].synonyms[0].source, 1);
}

TEST(TopicConfigsTest, DescribeWithoutSynonymsLeavesThemOut) {
  auto described = describe_topic_configs({}, kBootstrapped, std::nullopt, false);
  for (const auto& r : described) EXPECT_TRUE(r.synonyms.empty()) << r.name;
}

TEST(TopicConfigsTest, UnimplementedKeysAreReportedOnceATopicSetsThem) {
  auto described = describe_topic_configs({}, kBootstrapped, std::nullopt, false);
  auto has = [&described](std::string_view name) {
    return std::ranges::find(described, name, &protocol::DescribeConfigsResponse::DescribeConfigsResourceResult::name) !=
           described.end();
  };
  EXPECT_FALSE(has("local.retention.ms"));
  const ConfigMap overrides = {{"local.retention.ms", "1000"}};
  described = describe_topic_configs(overrides, kBootstrapped, std::nullopt, false);
  auto it = std::ranges::find(described, "local.retention.ms",
                              &protocol::DescribeConfigsResponse::DescribeConfigsResourceResult::name);
  ASSERT_NE(it, described.end());
  EXPECT_EQ(it->value, "1000");
  EXPECT_EQ(it->config_source, 1);
}

TEST(TopicConfigsTest, ThrottledReplicasAreReportedAsKafkaDoes) {
  // Replication throttles are implemented: listed with their empty default, and a topic's value.
  auto described = describe_topic_configs({}, kBootstrapped, std::nullopt, false);
  auto it = std::ranges::find(described, "leader.replication.throttled.replicas",
                              &protocol::DescribeConfigsResponse::DescribeConfigsResourceResult::name);
  ASSERT_NE(it, described.end());
  EXPECT_EQ(it->value, "");
  EXPECT_EQ(it->config_source, 5);
  const ConfigMap overrides = {{"leader.replication.throttled.replicas", "0:1"}};
  described = describe_topic_configs(overrides, kBootstrapped, std::nullopt, false);
  it = std::ranges::find(described, "leader.replication.throttled.replicas",
                         &protocol::DescribeConfigsResponse::DescribeConfigsResourceResult::name);
  ASSERT_NE(it, described.end());
  EXPECT_EQ(it->value, "0:1");
  EXPECT_EQ(it->config_source, 1);
}

TEST(TopicConfigsTest, UnknownKeysInAFilterAreLeftOut) {
  auto described =
      describe_topic_configs({}, kBootstrapped, std::vector<std::string>{"retention.ms", "no.such.key"}, false);
  ASSERT_EQ(described.size(), 1u);
  EXPECT_EQ(described[0].name, "retention.ms");
}

TEST(TopicConfigsTest, StaticBrokerSynonymsConvertUnitsAndWinOverDefaults) {
  const ConfigMap static_configs = {{"log.retention.hours", "24"}, {"log.segment.bytes", "2000000"}};
  const BrokerConfigLayers broker{.dynamic_cluster = &kClusterDefaults, .static_node = &static_configs};
  auto effective = effective_topic_configs({}, broker);
  auto find = [&](std::string_view name) { return *std::ranges::find(effective, name, &EffectiveConfig::name); };
  EXPECT_EQ(find("retention.ms").value, "86400000");
  EXPECT_EQ(find("retention.ms").source, ConfigSource::static_broker);
  EXPECT_EQ(find("segment.bytes").value, "2000000");
  EXPECT_EQ(find("segment.bytes").source, ConfigSource::static_broker);
  EXPECT_EQ(find("min.insync.replicas").source, ConfigSource::dynamic_default_broker);
  EXPECT_EQ(find("segment.ms").source, ConfigSource::default_config);
}

TEST(TopicConfigsTest, DescribeListsBrokerSynonymsOnlyFromThePrimaryOne) {
  // Kafka lists retention.ms's broker synonyms from log.retention.ms on; with only
  // log.retention.hours set it lists none and calls the (converted) value a default.
  const ConfigMap hours = {{"log.retention.hours", "24"}};
  auto described = describe_topic_configs({}, {.static_node = &hours}, std::vector<std::string>{"retention.ms"}, true);
  ASSERT_EQ(described.size(), 1u);
  EXPECT_EQ(described[0].value, "86400000");
  EXPECT_EQ(described[0].config_source, 5);
  EXPECT_TRUE(described[0].synonyms.empty());

  const ConfigMap ms = {{"log.retention.ms", "5000"}};
  described = describe_topic_configs({}, {.static_node = &ms}, std::vector<std::string>{"retention.ms"}, true);
  EXPECT_EQ(described[0].value, "5000");
  EXPECT_EQ(described[0].config_source, 4);
  ASSERT_EQ(described[0].synonyms.size(), 2u);
  EXPECT_EQ(described[0].synonyms[0].name, "log.retention.ms");
  EXPECT_EQ(described[0].synonyms[1].name, "log.retention.hours");
  EXPECT_EQ(described[0].synonyms[1].value, "168");
  EXPECT_EQ(described[0].synonyms[1].source, 5);
}

// Kafka 4.3.1 with static broker overrides: the controller's CreateTopics configs and the
// broker's DescribeConfigs disagree on sources in exactly the way recorded here.
TEST(TopicConfigsTest, StaticBrokerConfigsMatchKafka) {
  const ConfigMap static_configs = {{"log.retention.hours", "24"},
                                    {"log.segment.bytes", "2000000"},
                                    {"log.roll.ms", "3600000"},
                                    {"num.partitions", "2"}};
  const BrokerConfigLayers broker{.dynamic_cluster = &kClusterDefaults, .static_node = &static_configs};
  std::ifstream in(std::string(WEIR_METADATA_TEST_DATA) + "/kafka-4.3.1-static-broker-configs.txt");
  ASSERT_TRUE(in.good());
  const auto effective = effective_topic_configs({}, broker);
  const auto described = describe_topic_configs({}, broker, std::nullopt, true);
  std::string line;
  int checked = 0;
  while (std::getline(in, line)) {
    if (line.rfind("config ", 0) == 0) {
      const std::string rest = line.substr(7);
      const auto eq = rest.find('=');
      const auto space = rest.rfind(' ');
      const std::string name = rest.substr(0, eq);
      const TopicConfigDef* def = find_topic_config(name);
      ASSERT_NE(def, nullptr) << name;
      auto it = std::ranges::find(effective, name, &EffectiveConfig::name);
      if (!def->implemented) {
        EXPECT_EQ(it, effective.end()) << name;
        continue;
      }
      ASSERT_NE(it, effective.end()) << name;
      EXPECT_EQ(it->value, rest.substr(eq + 1, space - eq - 1)) << name;
      EXPECT_EQ(static_cast<int>(it->source), std::stoi(rest.substr(space + 1))) << name;
      ++checked;
    } else if (line.rfind("describe ", 0) == 0) {
      const auto fields = split(line.substr(9), '|');
      auto it = std::ranges::find(described, fields[0],
                                  &protocol::DescribeConfigsResponse::DescribeConfigsResourceResult::name);
      ASSERT_NE(it, described.end()) << fields[0];
      EXPECT_EQ(it->value, fields[1]) << fields[0];
      EXPECT_EQ(it->config_source, std::stoi(fields[2])) << fields[0];
      std::string synonyms;
      for (const auto& syn : it->synonyms) {
        synonyms += syn.name + "=" + syn.value.value_or("") + "/" + std::to_string(syn.source) + ";";
      }
      EXPECT_EQ(synonyms, fields.size() > 3 ? fields[3] : "") << fields[0];
      ++checked;
    }
  }
  EXPECT_GE(checked, 30);
}

TEST(TopicConfigsTest, EffectiveConfigsKeepTopicValuesVerbatimAndSortByName) {
  auto effective = effective_topic_configs({{"retention.ms", " 1000 "}}, kBootstrapped);
  EXPECT_TRUE(std::ranges::is_sorted(effective, {}, &EffectiveConfig::name));
  auto it = std::ranges::find(effective, "retention.ms", &EffectiveConfig::name);
  ASSERT_NE(it, effective.end());
  EXPECT_EQ(it->value, " 1000 ");
  EXPECT_EQ(it->source, ConfigSource::dynamic_topic);
  // Implemented keys only, unless set.
  EXPECT_EQ(std::ranges::count(effective, "remote.storage.enable", &EffectiveConfig::name), 0);
}

TEST(TopicConfigsTest, CompactionLagsMustBeOrdered) {
  const ApiError e =
      validate_topic_configs({{"min.compaction.lag.ms", "100"}, {"max.compaction.lag.ms", "10"}}, kBootstrapped);
  EXPECT_EQ(e.code, Errc::invalid_config);
  EXPECT_EQ(e.message,
            "conflict topic config setting min.compaction.lag.ms (100) > max.compaction.lag.ms "
            "(10)");
}

TEST(TopicConfigsTest, UnknownNamesAreReportedBeforeBadValues) {
  const ApiError e = validate_topic_configs({{"retention.ms", "x"}, {"zzz", "1"}}, kBootstrapped);
  EXPECT_EQ(e.message, "Unknown topic config name: zzz");
}

TEST(TopicConfigsTest, ResolvesTypedValues) {
  const ConfigMap static_configs = {{"log.retention.minutes", "10"}};
  TopicConfig c = resolve_topic_config({{"cleanup.policy", "compact"},
                                        {"message.timestamp.type", "LogAppendTime"},
                                        {"max.message.bytes", " 2048 "},
                                        {"min.cleanable.dirty.ratio", "0.25"}},
                                       {.static_node = &static_configs});
  EXPECT_TRUE(c.cleanup_compact);
  EXPECT_FALSE(c.cleanup_delete);
  EXPECT_TRUE(c.message_timestamp_log_append_time);
  EXPECT_EQ(c.max_message_bytes, 2048);
  EXPECT_DOUBLE_EQ(c.min_cleanable_dirty_ratio, 0.25);
  EXPECT_EQ(c.retention_ms, 600'000);
  EXPECT_EQ(c.segment_bytes, 1'073'741'824);
  EXPECT_EQ(c.flush_messages, kNoLimit);
}

TEST(TopicConfigsTest, DefaultsAreKafkas) {
  const TopicConfig c = resolve_topic_config({}, {});
  EXPECT_TRUE(c.cleanup_delete);
  EXPECT_EQ(c.retention_ms, 604'800'000);
  EXPECT_EQ(c.retention_bytes, -1);
  EXPECT_EQ(c.segment_ms, 604'800'000);
  EXPECT_EQ(c.max_message_bytes, 1'048'588);
  EXPECT_EQ(c.min_insync_replicas, 1);
  EXPECT_EQ(c.message_timestamp_after_max_ms, 3'600'000);
  EXPECT_EQ(c.compression_type, "producer");
  EXPECT_EQ(c.delete_retention_ms, 86'400'000);
}

TEST(JavaCompatTest, DoubleToStringFollowsJava) {
  EXPECT_EQ(java::double_to_string(0.5), "0.5");
  EXPECT_EQ(java::double_to_string(1.0), "1.0");
  EXPECT_EQ(java::double_to_string(-1.0), "-1.0");
  EXPECT_EQ(java::double_to_string(100.0), "100.0");
  EXPECT_EQ(java::double_to_string(0.001), "0.001");
  EXPECT_EQ(java::double_to_string(1e-4), "1.0E-4");
  EXPECT_EQ(java::double_to_string(-1e10), "-1.0E10");
  EXPECT_EQ(java::double_to_string(1e7), "1.0E7");
  EXPECT_EQ(java::double_to_string(9999999.0), "9999999.0");
  EXPECT_EQ(java::double_to_string(12345678.9), "1.23456789E7");
  EXPECT_EQ(java::double_to_string(0.1), "0.1");
  EXPECT_EQ(java::double_to_string(0.0), "0.0");
}

TEST(JavaCompatTest, ParsesIntegersAsLongParseLong) {
  EXPECT_EQ(java::parse_integer("+12", 64), 12);
  EXPECT_EQ(java::parse_integer("-9223372036854775808", 64), INT64_MIN);
  EXPECT_EQ(java::parse_integer("9223372036854775807", 64), INT64_MAX);
  EXPECT_EQ(java::parse_integer("9223372036854775808", 64), std::nullopt);
  EXPECT_EQ(java::parse_integer("2147483648", 32), std::nullopt);
  EXPECT_EQ(java::parse_integer("-2147483648", 32), -2147483648LL);
  EXPECT_EQ(java::parse_integer("", 64), std::nullopt);
  EXPECT_EQ(java::parse_integer("-", 64), std::nullopt);
  EXPECT_EQ(java::parse_integer("1 ", 64), std::nullopt);
}

TEST(JavaCompatTest, ParsesDoublesAsDoubleParseDouble) {
  EXPECT_EQ(java::parse_double("2f"), 2.0);
  EXPECT_EQ(java::parse_double(" .5 "), 0.5);
  EXPECT_EQ(java::parse_double("1e-1"), 0.1);
  EXPECT_EQ(java::parse_double("-Infinity"), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(*java::parse_double("NaN")));
  EXPECT_EQ(java::parse_double("1e400"), std::numeric_limits<double>::infinity());
  EXPECT_EQ(java::parse_double("e5"), std::nullopt);
  EXPECT_EQ(java::parse_double("1.2.3"), std::nullopt);
  EXPECT_EQ(java::parse_double(""), std::nullopt);
}

TEST(JavaCompatTest, SplitsListsAsConfigDef) {
  EXPECT_TRUE(java::split_list("").empty());
  EXPECT_EQ(java::split_list("a , b"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(java::split_list("a,"), (std::vector<std::string>{"a", ""}));
  EXPECT_EQ(java::split_list(","), (std::vector<std::string>{"", ""}));
}

}  // namespace
}  // namespace weir::metadata
