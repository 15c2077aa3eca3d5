// The client's view of the cluster: brokers, topics, partitions and their leaders, as the last
// Metadata responses described them. Pure (no I/O): the client feeds it responses and asks it
// where to route. Not thread-safe.
//
// Refresh rules (as Kafka's clients): the view is refreshed when it is older than
// metadata.max.age.ms, when routing finds no leader or no such topic, and after a response
// says the leader moved (invalidate()). A topic asked about is tracked: later refreshes
// include it, so one Metadata request keeps every topic in use current.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/result.h"
#include "base/uuid.h"
#include "client/bootstrap.h"
#include "protocol/gen/metadata_response.h"

namespace weir::client {

struct PartitionInfo {
  std::int32_t partition = 0;
  std::int32_t leader = -1;
  std::int32_t leader_epoch = -1;
  std::int16_t error_code = 0;
  std::vector<std::int32_t> replicas;
  std::vector<std::int32_t> isr;
};

struct TopicInfo {
  std::string name;
  Uuid id;
  std::int16_t error_code = 0;
  bool internal = false;
  std::vector<PartitionInfo> partitions;  // sorted by partition
};

class MetadataCache {
 public:
  // Takes in a Metadata response received at now_ms: the broker list is replaced; topics named
  // in the response are replaced (with their error codes); other topics are kept.
  void update(const protocol::MetadataResponse& response, std::int64_t now_ms);

  // Adds or moves one node (a coordinator's address from FindCoordinator).
  void add_node(std::int32_t id, Endpoint endpoint);

  // The leader of a partition, or the Kafka error code a client sees when routing to it:
  // UNKNOWN_TOPIC_OR_PARTITION for an unknown topic or partition, the topic's error, or
  // LEADER_NOT_AVAILABLE when there is no leader (or the leader is not among the brokers).
  [[nodiscard]] Result<std::int32_t, std::int16_t> leader(const std::string& topic, std::int32_t partition) const;

  [[nodiscard]] const TopicInfo* topic(const std::string& name) const;
  [[nodiscard]] std::optional<Endpoint> node(std::int32_t id) const;
  [[nodiscard]] std::vector<std::int32_t> node_ids() const;
  [[nodiscard]] const std::optional<std::string>& cluster_id() const noexcept { return cluster_id_; }
  [[nodiscard]] std::int32_t controller_id() const noexcept { return controller_id_; }

  void track(const std::string& topic) { tracked_.insert(topic); }
  [[nodiscard]] const std::set<std::string>& tracked() const noexcept { return tracked_; }

  // Forces the next routing decision to refresh first.
  void invalidate() noexcept { stale_ = true; }
  // Whether the view must be refreshed before routing: never fetched, invalidated, or older than max_age_ms.
  [[nodiscard]] bool needs_refresh(std::int64_t now_ms, std::int64_t max_age_ms) const noexcept;
  [[nodiscard]] bool has_brokers() const noexcept { return !nodes_.empty(); }

 private:
  std::map<std::int32_t, Endpoint> nodes_;
  std::map<std::string, TopicInfo> topics_;
  std::set<std::string> tracked_;
  std::optional<std::string> cluster_id_;
  std::int32_t controller_id_ = -1;
  std::optional<std::int64_t> updated_at_ms_;
  bool stale_ = false;
};

}  // namespace weir::client
