// An immutable view of the topics, derived from the metadata image after every change and shared
// with every shard (readers load the current snapshot; shard 0 publishes new ones).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/uuid.h"

namespace weir::group {
class TopicImage;
}  // namespace weir::group

namespace weir::broker {

// A partition as the metadata describes it (leader, replicas, ISR; ELR per KIP-966).
struct PartitionInfo {
  std::int32_t leader = -1;  // -1: no leader
  std::int32_t leader_epoch = 0;
  std::int32_t partition_epoch = 0;
  std::vector<std::int32_t> replicas;
  std::vector<std::int32_t> isr;
  std::vector<std::int32_t> eligible_leader_replicas;
  std::vector<std::int32_t> last_known_elr;
  std::vector<std::int32_t> offline_replicas;  // replicas on brokers that are fenced or unregistered
};

struct TopicInfo {
  std::string name;
  Uuid id;
  std::int32_t partitions = 0;
  std::vector<PartitionInfo> parts;  // per partition, parts.size() == partitions
  bool internal = false;
  std::map<std::string, std::string> configs;  // explicitly set topic configs
};

// A broker clients may be sent to: registered, not fenced, with an endpoint on this node's
// listener name.
struct BrokerEndpoint {
  std::int32_t id = -1;
  std::string host;
  std::int32_t port = 0;
  std::optional<std::string> rack;
};

struct Catalog {
  std::uint64_t version = 0;  // increases with every published catalog
  std::vector<BrokerEndpoint> brokers;  // by id
  // What Metadata and DescribeCluster answer as the controller: this node on one node; in a
  // cluster, an alive broker (Kafka's brokers hide the KRaft controllers from clients).
  std::int32_t controller_id = -1;
  // Finalized feature levels as the quorum's metadata holds them (broker-only; a
  // broker,controller node reports none yet), and the metadata offset they are as of.
  std::map<std::string, std::int16_t> finalized_features;
  std::int64_t features_epoch = -1;
  // Where followers fetch from each alive broker: its endpoint on the inter-broker listener
  // (inter.broker.listener.name, else the one named PLAINTEXT, as Kafka).
  std::vector<BrokerEndpoint> replication_endpoints;
  // Dynamic broker configs (ConfigRecords of the BROKER resource): this node's own, and the
  // cluster-wide defaults (resource name "").
  std::map<std::string, std::string, std::less<>> dynamic_broker_configs;
  std::map<std::string, std::string, std::less<>> dynamic_default_broker_configs;
  // Group configs (ConfigRecords of the GROUP resource, KIP-848) by group id; groups without
  // overrides are absent.
  std::map<std::string, std::map<std::string, std::string, std::less<>>, std::less<>> group_configs;
  // A broker key's dynamic value here: this node's, else the cluster default; null if neither
  // is set (server.properties, then the default, apply).
  [[nodiscard]] const std::string* dynamic_broker_value(std::string_view key) const {
    if (auto it = dynamic_broker_configs.find(key); it != dynamic_broker_configs.end()) return &it->second;
    if (auto it = dynamic_default_broker_configs.find(key); it != dynamic_default_broker_configs.end()) {
      return &it->second;
    }
    return nullptr;
  }
  [[nodiscard]] const BrokerEndpoint* replication_endpoint(std::int32_t id) const {
    for (const auto& b : replication_endpoints) {
      if (b.id == id) return &b;
    }
    return broker(id);
  }
  [[nodiscard]] const BrokerEndpoint* broker(std::int32_t id) const {
    for (const auto& b : brokers) {
      if (b.id == id) return &b;
    }
    return nullptr;
  }
  // The leader of a partition, -1 if the topic or partition is unknown or has no leader.
  [[nodiscard]] std::int32_t leader_of(const std::string& topic, std::int32_t partition) const;
  std::unordered_map<std::string, TopicInfo> topics;
  std::unordered_map<Uuid, std::string> names_by_id;
  // The same topics as the consumer group protocol's coordinators read them (name, id, partition
  // count); built with the catalog, so a coordinator holding this catalog holds its image.
  std::shared_ptr<const group::TopicImage> topic_image;

  [[nodiscard]] const TopicInfo* find(const std::string& name) const {
    auto it = topics.find(name);
    return it == topics.end() ? nullptr : &it->second;
  }
  [[nodiscard]] bool has_partition(const std::string& topic, std::int32_t partition) const {
    const TopicInfo* t = find(topic);
    return t != nullptr && partition >= 0 && partition < t->partitions;
  }
  [[nodiscard]] std::optional<std::string> name_of(const Uuid& id) const {
    auto it = names_by_id.find(id);
    if (it == names_by_id.end()) return std::nullopt;
    return it->second;
  }
};

inline std::int32_t Catalog::leader_of(const std::string& topic, std::int32_t partition) const {
  if (!has_partition(topic, partition)) return -1;
  return find(topic)->parts[static_cast<std::size_t>(partition)].leader;
}

}  // namespace weir::broker
