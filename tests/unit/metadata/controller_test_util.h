// A controller on one registered, unfenced broker (node 1), bootstrapped as weir's first start
// does, with deterministic topic ids; records are applied as the host would apply them.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "metadata/controller.h"

namespace weir::metadata::testing {

inline const Uuid kLogDir(0xd1d1, 0xd1d1);

inline protocol::CreateTopicsRequest::CreatableTopic topic(std::string name, std::int32_t partitions,
                                                           std::int16_t replication_factor) {
  protocol::CreateTopicsRequest::CreatableTopic t;
  t.name = std::move(name);
  t.num_partitions = partitions;
  t.replication_factor = replication_factor;
  return t;
}

inline protocol::CreateTopicsRequest::CreatableTopic with_config(protocol::CreateTopicsRequest::CreatableTopic t,
                                                                 std::string key, std::optional<std::string> value) {
  protocol::CreateTopicsRequest::CreatableTopicConfig c;
  c.name = std::move(key);
  c.value = std::move(value);
  t.configs.push_back(std::move(c));
  return t;
}

// (key, operation: 0 SET 1 DELETE 2 APPEND 3 SUBTRACT, value) of IncrementalAlterConfigs.
using ConfigOp = std::tuple<std::string, std::int8_t, std::optional<std::string>>;

// An IncrementalAlterConfigs request of one resource.
inline protocol::IncrementalAlterConfigsRequest incremental_request(std::int8_t type, std::string name,
                                                                    std::vector<ConfigOp> ops, bool validate_only) {
  protocol::IncrementalAlterConfigsRequest request;
  protocol::IncrementalAlterConfigsRequest::AlterConfigsResource resource;
  resource.resource_type = type;
  resource.resource_name = std::move(name);
  for (auto& [key, op, value] : ops) {
    protocol::IncrementalAlterConfigsRequest::AlterableConfig c;
    c.name = key;
    c.config_operation = op;
    c.value = value;
    resource.configs.push_back(c);
  }
  request.resources.push_back(resource);
  request.validate_only = validate_only;
  return request;
}

class ControllerFixture : public ::testing::Test {
 protected:
  ControllerFixture() : controller_(make_config()) {
    commit(controller_.bootstrap_records({{"metadata.version", 30}}));
    BrokerInfo broker;
    broker.broker_id = 1;
    broker.broker_epoch = 1;
    broker.incarnation_id = Uuid(7, 7);
    broker.endpoints.push_back({"PLAINTEXT", "localhost", 9092, 0});
    broker.log_dirs = {kLogDir};
    commit(controller_.register_broker(broker));
  }

  ControllerConfig make_config() {
    ControllerConfig config;
    config.node_id = 1;
    config.new_topic_id = [this] { return Uuid(0xabc, ++next_id_); };
    return config;
  }

  void commit(const std::vector<MetadataRecord>& records) {
    for (const auto& r : records) {
      ASSERT_TRUE(controller_.replay(r).has_value()) << record_name(r);
    }
  }

  // Creates (and applies) topics; returns the controller's answer.
  ControllerResult<protocol::CreateTopicsResponse> create(
      std::vector<protocol::CreateTopicsRequest::CreatableTopic> topics, bool validate_only = false,
      TopicDefaults defaults = {}) {
    protocol::CreateTopicsRequest request;
    request.topics = std::move(topics);
    request.validate_only = validate_only;
    auto result = controller_.create_topics(request, 7, defaults);
    commit(result.records);
    return result;
  }

  // The one result of a single-topic create.
  protocol::CreateTopicsResponse::CreatableTopicResult create_one(protocol::CreateTopicsRequest::CreatableTopic t) {
    auto result = create({std::move(t)});
    EXPECT_EQ(result.response.topics.size(), 1u);
    return result.response.topics.at(0);
  }

  Controller controller_;
  std::uint64_t next_id_ = 0;
};

}  // namespace weir::metadata::testing
