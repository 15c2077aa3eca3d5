// An immutable view of the topics, derived from the metadata image after every change and shared
// with every shard (readers load the current snapshot; shard 0 publishes new ones).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/uuid.h"

namespace weir::broker {

struct TopicInfo {
  std::string name;
  Uuid id;
  std::int32_t partitions = 0;
  std::vector<std::int32_t> leader_epochs;  // per partition
  bool internal = false;
  std::map<std::string, std::string> configs;  // explicitly set topic configs
};

struct Catalog {
  std::uint64_t version = 0;  // increases with every published catalog
  std::unordered_map<std::string, TopicInfo> topics;
  std::unordered_map<Uuid, std::string> names_by_id;

  [[nodiscard]] const TopicInfo* find(const std::string& name) const {
    auto it = topics.find(name);
    return it == topics.end() ? nullptr : &it->second;
  }
  [[nodiscard]] std::optional<std::string> name_of(const Uuid& id) const {
    auto it = names_by_id.find(id);
    if (it == names_by_id.end()) return std::nullopt;
    return it->second;
  }
};

}  // namespace weir::broker
