#include "broker/shards.h"

#include <algorithm>

#include "base/assert.h"

namespace weir::broker {

Partition* PartitionTable::find(std::string_view topic, std::int32_t index) {
  auto it = by_topic_.find(std::string(topic));
  if (it == by_topic_.end() || index < 0 || static_cast<std::size_t>(index) >= it->second.size()) return nullptr;
  return it->second[static_cast<std::size_t>(index)].get();
}

void PartitionTable::add(std::unique_ptr<Partition> p) {
  // Checked once when hosted (a log may arrive holding unflushed messages), then on its appends.
  p->attach_flush_watch(&flush_watch_);
  p->watch_flush();
  config_changed(*p);
  auto& parts = by_topic_[p->topic()];
  const auto idx = static_cast<std::size_t>(p->index());
  if (parts.size() <= idx) parts.resize(idx + 1);
  parts[idx] = std::move(p);
}

void PartitionTable::config_changed(const Partition& p) {
  if (p.log().config().cleanup_compact) compacted_.insert(p.topic());
}

std::vector<std::string> PartitionTable::topic_names() const {
  std::vector<std::string> names;
  names.reserve(by_topic_.size());
  for (const auto& [name, parts] : by_topic_) names.push_back(name);
  return names;
}

const std::vector<std::unique_ptr<Partition>>* PartitionTable::partitions_of(std::string_view topic) const {
  auto it = by_topic_.find(std::string(topic));
  return it == by_topic_.end() ? nullptr : &it->second;
}

std::vector<std::unique_ptr<Partition>> PartitionTable::remove_topic(std::string_view topic) {
  std::vector<std::unique_ptr<Partition>> out;
  auto it = by_topic_.find(std::string(topic));
  if (it == by_topic_.end()) return out;
  for (auto& p : it->second) {
    if (p) out.push_back(std::move(p));
  }
  by_topic_.erase(it);
  return out;
}

bool PartitionTable::remove(std::string_view topic, std::int32_t index) {
  auto it = by_topic_.find(std::string(topic));
  if (it == by_topic_.end() || index < 0 || static_cast<std::size_t>(index) >= it->second.size() || !it->second[index]) {
    return false;
  }
  it->second[static_cast<std::size_t>(index)].reset();
  if (std::ranges::none_of(it->second, [](const auto& p) { return p != nullptr; })) by_topic_.erase(it);
  return true;
}

ShardSet::ShardSet(std::vector<boost::asio::any_io_executor> executors) : executors_(std::move(executors)) {
  WEIR_ASSERT(!executors_.empty(), "a broker needs at least one executor");
  for (std::size_t i = 0; i < executors_.size(); ++i) tables_.push_back(std::make_unique<PartitionTable>());
}

std::size_t ShardSet::owner(std::string_view topic, std::int32_t partition) const {
  // FNV-1a over the name, mixed with the partition, so a topic's partitions spread over shards.
  std::uint64_t h = 1469598103934665603ull;
  for (char c : topic) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  h ^= static_cast<std::uint64_t>(static_cast<std::uint32_t>(partition)) * 0x9E3779B97F4A7C15ull;
  return static_cast<std::size_t>(h % executors_.size());
}

}  // namespace weir::broker
