#include "client/metadata.h"

#include <algorithm>

namespace weir::client {

namespace {
constexpr std::int16_t kUnknownTopicOrPartition = 3;
constexpr std::int16_t kLeaderNotAvailable = 5;
}  // namespace

void MetadataCache::update(const protocol::MetadataResponse& response, std::int64_t now_ms) {
  nodes_.clear();
  for (const auto& b : response.brokers) {
    if (b.port <= 0 || b.port > 65535) continue;
    nodes_[b.node_id] = Endpoint{b.host, static_cast<std::uint16_t>(b.port)};
  }
  cluster_id_ = response.cluster_id;
  controller_id_ = response.controller_id;
  for (const auto& t : response.topics) {
    if (!t.name) continue;
    TopicInfo info;
    info.name = *t.name;
    info.id = t.topic_id;
    info.error_code = t.error_code;
    info.internal = t.is_internal;
    for (const auto& p : t.partitions) {
      info.partitions.push_back(
          PartitionInfo{p.partition_index, p.leader_id, p.leader_epoch, p.error_code, p.replica_nodes, p.isr_nodes});
    }
    std::sort(info.partitions.begin(), info.partitions.end(),
              [](const PartitionInfo& a, const PartitionInfo& b) { return a.partition < b.partition; });
    topics_[info.name] = std::move(info);
  }
  updated_at_ms_ = now_ms;
  stale_ = false;
}

void MetadataCache::add_node(std::int32_t id, Endpoint endpoint) { nodes_[id] = std::move(endpoint); }

Result<std::int32_t, std::int16_t> MetadataCache::leader(const std::string& topic, std::int32_t partition) const {
  const auto it = topics_.find(topic);
  if (it == topics_.end()) return unexpected(kUnknownTopicOrPartition);
  const TopicInfo& t = it->second;
  if (t.error_code != 0) return unexpected(t.error_code);
  const auto p = std::lower_bound(t.partitions.begin(), t.partitions.end(), partition,
                                  [](const PartitionInfo& a, std::int32_t want) { return a.partition < want; });
  if (p == t.partitions.end() || p->partition != partition) return unexpected(kUnknownTopicOrPartition);
  if (p->leader < 0 || !nodes_.contains(p->leader)) return unexpected(kLeaderNotAvailable);
  return p->leader;
}

const TopicInfo* MetadataCache::topic(const std::string& name) const {
  const auto it = topics_.find(name);
  return it == topics_.end() ? nullptr : &it->second;
}

std::optional<Endpoint> MetadataCache::node(std::int32_t id) const {
  const auto it = nodes_.find(id);
  if (it == nodes_.end()) return std::nullopt;
  return it->second;
}

std::vector<std::int32_t> MetadataCache::node_ids() const {
  std::vector<std::int32_t> out;
  out.reserve(nodes_.size());
  for (const auto& [id, ep] : nodes_) out.push_back(id);
  return out;
}

bool MetadataCache::needs_refresh(std::int64_t now_ms, std::int64_t max_age_ms) const noexcept {
  return stale_ || !updated_at_ms_ || now_ms - *updated_at_ms_ >= max_age_ms;
}

}  // namespace weir::client
