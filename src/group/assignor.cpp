#include "group/assignor.h"

#include <algorithm>
#include <cstddef>
#include <numeric>

#include "base/assert.h"
#include "base/java_hash.h"

namespace weir::group {

void TopicTableDescriber::add_topic(const Uuid& topic_id, std::int32_t partition_count,
                                    std::vector<std::vector<std::string>> replica_racks) {
  WEIR_ASSERT(partition_count >= 0);
  WEIR_ASSERT(replica_racks.empty() || replica_racks.size() == static_cast<std::size_t>(partition_count));
  topics_[topic_id] = Topic{partition_count, std::move(replica_racks)};
}

std::optional<std::int32_t> TopicTableDescriber::partition_count(const Uuid& topic_id) const {
  auto it = topics_.find(topic_id);
  if (it == topics_.end()) return std::nullopt;
  return it->second.partition_count;
}

std::vector<std::string> TopicTableDescriber::partition_racks(const Uuid& topic_id, std::int32_t partition) const {
  auto it = topics_.find(topic_id);
  if (it == topics_.end() || partition < 0 || static_cast<std::size_t>(partition) >= it->second.replica_racks.size()) {
    return {};
  }
  return it->second.replica_racks[static_cast<std::size_t>(partition)];
}

std::string_view to_string(AssignorErrc e) noexcept {
  switch (e) {
    case AssignorErrc::kSubscribedTopicNotFound:
      return "subscribed topic not found";
    case AssignorErrc::kPartitionsLeftUnassigned:
      return "partitions left unassigned";
    case AssignorErrc::kPartitionOutOfRange:
      return "assigned partition out of range";
  }
  return "unknown assignor error";
}

const PartitionAssignor* find_assignor(std::string_view name) {
  static const UniformAssignor uniform;
  static const RangeAssignor range;
  if (name == UniformAssignor::kName) return &uniform;
  if (name == RangeAssignor::kName) return &range;
  return nullptr;
}

std::vector<std::string_view> builtin_assignor_names() { return {UniformAssignor::kName, RangeAssignor::kName}; }

// ---- Java hash order ----

namespace {

// HashMap.hash(): the high half folded into the low half, since the table index uses low bits.
std::uint32_t java_spread(std::int32_t h) {
  const auto u = static_cast<std::uint32_t>(h);
  return u ^ (u >> 16);
}

// The table a default HashMap ends with after n insertions: 16, doubled each time the size
// passes 3/4 of it.
std::size_t java_grown_capacity(std::size_t n) {
  std::size_t capacity = 16;
  while (n > capacity / 4 * 3) capacity *= 2;
  return capacity;
}

// HashSet(Collection): HashMap(max((int) (n / .75f) + 1, 16)), whose table is the next power of two.
std::size_t java_copy_capacity(std::size_t n) {
  const auto wanted = std::max<std::size_t>(static_cast<std::size_t>(static_cast<float>(n) / 0.75f) + 1, 16);
  std::size_t capacity = 1;
  while (capacity < wanted) capacity *= 2;
  return capacity;
}

// Stable: keys in one bucket keep their insertion order, as a bucket's chain does.
template <class T, class Hash>
std::vector<T> order_by_bucket(std::vector<T> keys, std::size_t capacity, Hash hash) {
  std::vector<std::size_t> bucket(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) bucket[i] = java_spread(hash(keys[i])) & (capacity - 1);
  std::vector<std::size_t> index(keys.size());
  std::iota(index.begin(), index.end(), 0);
  std::stable_sort(index.begin(), index.end(), [&](std::size_t a, std::size_t b) { return bucket[a] < bucket[b]; });
  std::vector<T> ordered;
  ordered.reserve(keys.size());
  for (std::size_t i : index) ordered.push_back(std::move(keys[i]));
  return ordered;
}

}  // namespace

std::int32_t java_uuid_hash(const Uuid& id) noexcept {
  const std::uint64_t hilo = id.msb() ^ id.lsb();
  return static_cast<std::int32_t>(static_cast<std::uint32_t>(hilo >> 32) ^ static_cast<std::uint32_t>(hilo));
}

bool java_uuid_less(const Uuid& a, const Uuid& b) noexcept {
  const auto a_msb = static_cast<std::int64_t>(a.msb());
  const auto b_msb = static_cast<std::int64_t>(b.msb());
  if (a_msb != b_msb) return a_msb < b_msb;
  return static_cast<std::int64_t>(a.lsb()) < static_cast<std::int64_t>(b.lsb());
}

std::vector<std::string> java_hash_order(std::vector<std::string> keys) {
  const std::size_t capacity = java_grown_capacity(keys.size());
  return order_by_bucket(std::move(keys), capacity, [](const std::string& k) { return java_string_hash(k); });
}

std::vector<Uuid> java_hash_order(std::vector<Uuid> keys) {
  const std::size_t capacity = java_grown_capacity(keys.size());
  return order_by_bucket(std::move(keys), capacity, java_uuid_hash);
}

std::vector<std::int32_t> java_hash_order(std::vector<std::int32_t> keys) {
  const std::size_t capacity = java_grown_capacity(keys.size());
  return order_by_bucket(std::move(keys), capacity, [](std::int32_t k) { return k; });
}

std::vector<Uuid> detail::java_hash_set_copy_order(std::vector<Uuid> keys) {
  const std::size_t capacity = java_copy_capacity(keys.size());
  return order_by_bucket(std::move(keys), capacity, java_uuid_hash);
}

}  // namespace weir::group
