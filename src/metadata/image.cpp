#include "metadata/image.h"

#include <algorithm>
#include <atomic>

#include "base/assert.h"
#include "base/log.h"

namespace weir::metadata {
namespace {

const ConfigMap kNoConfigs;

bool has_collision_chars(std::string_view name) { return name.find_first_of("._") != std::string_view::npos; }

Status<StoreErrc> inconsistent(std::string_view what) {
  log::get("metadata")->error("event=inconsistent_metadata_record {}", log::kv("detail", what));
  return unexpected(StoreErrc::inconsistent_record);
}

PartitionImage from_record(const PartitionRecord& r) {
  PartitionImage p;
  p.partition_id = r.partition_id;
  p.replicas = r.replicas;
  p.isr = r.isr;
  p.removing_replicas = r.removing_replicas;
  p.adding_replicas = r.adding_replicas;
  p.leader = r.leader;
  p.leader_recovery_state = r.leader_recovery_state;
  p.leader_epoch = r.leader_epoch;
  p.partition_epoch = r.partition_epoch;
  p.directories = r.directories;
  p.eligible_leader_replicas = r.eligible_leader_replicas.value_or(std::vector<std::int32_t>{});
  p.last_known_elr = r.last_known_elr.value_or(std::vector<std::int32_t>{});
  return p;
}

// The object behind p, writable: written in place when only this image holds it, else cloned
// first so that copies of the image never change.
template <class T>
T* unshare(std::shared_ptr<T>& p) {
  if (p.use_count() > 1) {
    p = std::make_shared<T>(*p);
  } else {
    // The last other holder may have let go on another thread: order its reads before our writes.
    std::atomic_thread_fence(std::memory_order_acquire);
  }
  return p.get();
}

}  // namespace

std::string unify_collision_chars(std::string_view name) {
  std::string out(name);
  std::ranges::replace(out, '.', '_');
  return out;
}

Status<StoreErrc> MetadataImage::replay(const MetadataRecord& record) {
  auto status = std::visit([this](const auto& r) { return apply(r); }, record);
  if (status) ++records_replayed_;
  return status;
}

const TopicImage* MetadataImage::topic(std::string_view name) const noexcept {
  auto it = ids_by_name_.find(name);
  return it == ids_by_name_.end() ? nullptr : topic(it->second);
}

const TopicImage* MetadataImage::topic(const Uuid& id) const noexcept {
  auto it = topics_by_id_.find(id);
  return it == topics_by_id_.end() ? nullptr : it->second.get();
}

std::optional<std::string> MetadataImage::colliding_topic(std::string_view name) const {
  if (!has_collision_chars(name)) return std::nullopt;
  auto it = collision_index_.find(unify_collision_chars(name));
  if (it == collision_index_.end() || it->second.empty()) return std::nullopt;
  return it->second.front();
}

const ConfigMap& MetadataImage::configs(std::int8_t resource_type, std::string_view resource_name) const noexcept {
  auto it = configs_.find(ConfigKey{resource_type, std::string(resource_name)});
  return it == configs_.end() ? kNoConfigs : *it->second;
}

const BrokerRegistration* MetadataImage::broker(std::int32_t id) const noexcept {
  auto it = brokers_.find(id);
  return it == brokers_.end() ? nullptr : &it->second;
}

std::size_t MetadataImage::active_broker_count() const noexcept {
  return static_cast<std::size_t>(std::ranges::count_if(
      brokers_, [](const auto& entry) { return !entry.second.fenced && !entry.second.in_controlled_shutdown; }));
}

std::optional<std::int16_t> MetadataImage::feature_level(std::string_view name) const {
  auto it = features_.find(name);
  if (it == features_.end()) return std::nullopt;
  return it->second;
}

bool MetadataImage::same_content(const MetadataImage& other) const {
  if (ids_by_name_ != other.ids_by_name_ || next_producer_id_ != other.next_producer_id_ ||
      brokers_ != other.brokers_ || features_ != other.features_ || configs_.size() != other.configs_.size()) {
    return false;
  }
  for (const auto& [id, t] : topics_by_id_) {
    const TopicImage* o = other.topic(id);
    if (o == nullptr || !(*o == *t)) return false;
  }
  for (const auto& [key, map] : configs_) {
    if (other.configs(key.first, key.second) != *map) return false;
  }
  return true;
}

TopicImage* MetadataImage::mutable_topic(const Uuid& id) {
  auto it = topics_by_id_.find(id);
  if (it == topics_by_id_.end()) return nullptr;
  return unshare(it->second);
}

Status<StoreErrc> MetadataImage::apply(const TopicRecord& r) {
  if (ids_by_name_.contains(r.name)) return inconsistent("duplicate TopicRecord for " + r.name);
  if (topics_by_id_.contains(r.topic_id)) {
    return inconsistent("TopicRecord reuses topic id " + r.topic_id.to_string());
  }
  auto t = std::make_shared<TopicImage>();
  t->name = r.name;
  t->id = r.topic_id;
  topics_by_id_.emplace(r.topic_id, std::move(t));
  ids_by_name_.emplace(r.name, r.topic_id);
  if (has_collision_chars(r.name)) collision_index_[unify_collision_chars(r.name)].push_back(r.name);
  return {};
}

Status<StoreErrc> MetadataImage::apply(const PartitionRecord& r) {
  auto it = topics_by_id_.find(r.topic_id);
  if (it == topics_by_id_.end()) {
    return inconsistent("PartitionRecord for unknown topic id " + r.topic_id.to_string());
  }
  const auto count = static_cast<std::int64_t>(it->second->partitions.size());
  if (r.partition_id < 0 || r.partition_id > count) {
    return inconsistent("PartitionRecord with partition index out of sequence");
  }
  TopicImage* t = mutable_topic(r.topic_id);
  if (r.partition_id == count) {
    t->partitions.push_back(from_record(r));
  } else {
    t->partitions[static_cast<std::size_t>(r.partition_id)] = from_record(r);
  }
  return {};
}

// Kafka's PartitionRegistration.merge: absent fields keep their value; a leader change bumps the
// leader epoch; every change bumps the partition epoch.
Status<StoreErrc> MetadataImage::apply(const PartitionChangeRecord& r) {
  const TopicImage* existing = topic(r.topic_id);
  if (existing == nullptr || r.partition_id < 0 ||
      static_cast<std::size_t>(r.partition_id) >= existing->partitions.size()) {
    return inconsistent("PartitionChangeRecord for an unknown partition");
  }
  TopicImage* t = mutable_topic(r.topic_id);
  PartitionImage& p = t->partitions[static_cast<std::size_t>(r.partition_id)];
  constexpr std::int32_t kNoLeaderChange = -2;
  if (r.replicas) p.replicas = *r.replicas;
  if (r.isr) p.isr = *r.isr;
  if (r.removing_replicas) p.removing_replicas = *r.removing_replicas;
  if (r.adding_replicas) p.adding_replicas = *r.adding_replicas;
  if (r.directories) p.directories = *r.directories;
  if (r.eligible_leader_replicas) p.eligible_leader_replicas = *r.eligible_leader_replicas;
  if (r.last_known_elr) p.last_known_elr = *r.last_known_elr;
  if (r.leader_recovery_state != -1) p.leader_recovery_state = r.leader_recovery_state;
  if (r.leader != kNoLeaderChange) {
    p.leader = r.leader;
    ++p.leader_epoch;
  }
  ++p.partition_epoch;
  return {};
}

Status<StoreErrc> MetadataImage::apply(const RemoveTopicRecord& r) {
  auto it = topics_by_id_.find(r.topic_id);
  if (it == topics_by_id_.end()) {
    return inconsistent("RemoveTopicRecord for unknown topic id " + r.topic_id.to_string());
  }
  const std::string name = it->second->name;
  topics_by_id_.erase(it);
  ids_by_name_.erase(name);
  if (has_collision_chars(name)) {
    auto c = collision_index_.find(unify_collision_chars(name));
    WEIR_ASSERT(c != collision_index_.end());
    std::erase(c->second, name);
    if (c->second.empty()) collision_index_.erase(c);
  }
  // As in Kafka, a topic's configs go with it.
  configs_.erase(ConfigKey{kConfigResourceTopic, name});
  return {};
}

Status<StoreErrc> MetadataImage::apply(const ConfigRecord& r) {
  const ConfigKey key{r.resource_type, r.resource_name};
  auto it = configs_.find(key);
  if (!r.value) {
    if (it == configs_.end() || !it->second->contains(r.name)) return {};
    unshare(it->second)->erase(r.name);
    if (it->second->empty()) configs_.erase(it);
    return {};
  }
  if (it == configs_.end()) it = configs_.emplace(key, std::make_shared<ConfigMap>()).first;
  (*unshare(it->second))[r.name] = *r.value;
  return {};
}

Status<StoreErrc> MetadataImage::apply(const ProducerIdsRecord& r) {
  if (r.next_producer_id <= next_producer_id_) {
    return inconsistent("ProducerIdsRecord does not move the next producer id forward");
  }
  next_producer_id_ = r.next_producer_id;
  return {};
}

Status<StoreErrc> MetadataImage::apply(const RegisterBrokerRecord& r) {
  BrokerRegistration b = r;
  b.tagged_seen = 0;
  brokers_.insert_or_assign(r.broker_id, std::move(b));
  return {};
}

Status<StoreErrc> MetadataImage::apply(const FeatureLevelRecord& r) {
  if (r.feature_level == 0) {
    if (auto it = features_.find(r.name); it != features_.end()) features_.erase(it);
  } else {
    features_.insert_or_assign(r.name, r.feature_level);
  }
  return {};
}

}  // namespace weir::metadata
