#include "metadata/controller.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <set>

#include "base/assert.h"
#include "config/broker_config.h"
#include "config/config_def.h"
#include "config/java.h"

namespace weir::metadata {
namespace {

using protocol::CreateTopicsRequest;
using protocol::CreateTopicsResponse;

constexpr std::size_t kMaxTopicNameLength = 249;
constexpr std::int8_t kOpSet = 0;
constexpr std::int8_t kOpDelete = 1;
constexpr std::int8_t kOpAppend = 2;
constexpr std::int8_t kOpSubtract = 3;

ApiError error(Errc code, std::string message) { return ApiError{code, std::move(message)}; }

bool legal_topic_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

CreateTopicsResponse::CreatableTopicResult topic_error(const std::string& name, const ApiError& e) {
  CreateTopicsResponse::CreatableTopicResult r;
  r.name = name;
  r.error_code = e.kafka_code();
  r.error_message = e.message;
  return r;
}

// Names that occur more than once, in order of first appearance.
struct Duplicates {
  std::vector<std::string> order;
  std::set<std::string, std::less<>> names;
  [[nodiscard]] bool contains(std::string_view name) const { return names.contains(name); }
  [[nodiscard]] bool empty() const noexcept { return order.empty(); }
};

template <class Range, class Name>
Duplicates duplicates(const Range& items, Name name) {
  std::map<std::string, int, std::less<>> seen;
  Duplicates out;
  for (const auto& item : items) {
    std::string key = name(item);
    if (++seen[key] == 2) {
      out.names.insert(key);
      out.order.push_back(std::move(key));
    }
  }
  return out;
}

// Keeps the first appearance of each value, and notes which values appeared more than once.
template <class T>
class Distinct {
 public:
  void add(const T& v) {
    if (repeated_set_.contains(v)) return;
    if (seen_.insert(v).second) {
      order_.push_back(v);
    } else {
      seen_.erase(v);
      repeated_set_.insert(v);
      repeated_.push_back(v);
    }
  }
  // Values given exactly once, in order.
  [[nodiscard]] std::vector<T> once() const {
    std::vector<T> out;
    for (const auto& v : order_) {
      if (seen_.contains(v)) out.push_back(v);
    }
    return out;
  }
  [[nodiscard]] const std::vector<T>& repeated() const noexcept { return repeated_; }

 private:
  std::vector<T> order_, repeated_;
  std::set<T, std::less<>> seen_, repeated_set_;
};

bool contains(const std::vector<std::string>& v, std::string_view s) { return std::ranges::find(v, s) != v.end(); }

// Java's String.split(","): trailing empty strings are dropped, and "" splits into [""].
std::vector<std::string> java_split_commas(std::string_view s) {
  if (s.empty()) return {std::string()};
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = s.find(',', start);
    parts.emplace_back(s.substr(start, comma == s.npos ? s.npos : comma - start));
    if (comma == s.npos) break;
    start = comma + 1;
  }
  while (!parts.empty() && parts.back().empty()) parts.pop_back();
  return parts;
}

// Kafka's getParts: the value (or the key's default when unset) split at commas, empties dropped.
std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? std::string(sep) : "") + items[i];
  return out;
}

ConfigRecord config_record(std::int8_t type, const std::string& resource, const std::string& key,
                           std::optional<std::string> value) {
  ConfigRecord r;
  r.resource_type = type;
  r.resource_name = resource;
  r.name = key;
  r.value = std::move(value);
  return r;
}

// A resource's records from `current` to `next` overrides: each key whose value changes, and a
// deletion for each key `next` lacks.
void changed_config_records(std::int8_t type, const std::string& resource, const ConfigMap& current,
                            const ConfigMap& next, std::vector<MetadataRecord>& records) {
  for (const auto& [key, value] : next) {
    auto it = current.find(key);
    if (it == current.end() || it->second != value) records.emplace_back(config_record(type, resource, key, value));
  }
  for (const auto& [key, value] : current) {
    if (!next.contains(key)) records.emplace_back(config_record(type, resource, key, std::nullopt));
  }
}

ApiError all_fenced(std::int32_t partition) {
  return error(Errc::invalid_replica_assignment,
               fmt::format("All brokers specified in the manual partition assignment for partition "
                           "{} are fenced or in controlled shutdown.",
                           partition));
}

}  // namespace

std::optional<std::string> topic_name_error(std::string_view name) {
  auto invalid = [](std::string_view why) { return "Topic name is invalid: " + std::string(why); };
  if (name.empty()) return invalid("the empty string is not allowed");
  if (name == ".") return invalid("'.' is not allowed");
  if (name == "..") return invalid("'..' is not allowed");
  if (name.size() > kMaxTopicNameLength) {
    return invalid(
        fmt::format("the length of '{}' is longer than the max allowed length {}", name, kMaxTopicNameLength));
  }
  if (!std::ranges::all_of(name, legal_topic_char)) {
    return invalid(
        fmt::format("'{}' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'", name));
  }
  return std::nullopt;
}

struct Controller::TopicPlan {
  std::vector<std::vector<std::int32_t>> replicas;  // per partition
};

Controller::Controller(ControllerConfig config, MetadataImage image)
    : config_(std::move(config)), image_(std::move(image)) {
  WEIR_ASSERT(config_.producer_id_block_size > 0);
}

BrokerConfigLayers Controller::broker_layers() const {
  return BrokerConfigLayers{
      .dynamic_node = &image_.configs(kConfigResourceBroker, std::to_string(config_.node_id)),
      .dynamic_cluster = &image_.configs(kConfigResourceBroker, ""),
      .static_node = &config_.static_broker_configs,
  };
}

Uuid Controller::fresh_topic_id(std::set<Uuid>& taken) const {
  for (;;) {
    const Uuid id = config_.new_topic_id ? config_.new_topic_id() : Uuid::random();
    if (!id.is_zero() && image_.topic(id) == nullptr && taken.insert(id).second) return id;
  }
}

bool Controller::any_active(const std::vector<std::int32_t>& replicas) const {
  return std::ranges::any_of(replicas, [&](std::int32_t id) {
    const BrokerRegistration* b = image_.broker(id);
    return b != nullptr && !b->fenced && !b->in_controlled_shutdown;
  });
}

ApiError Controller::check_manual_assignment(const std::vector<std::int32_t>& replicas,
                                             std::optional<std::size_t> replication_factor) const {
  auto bad = [](std::string message) { return error(Errc::invalid_replica_assignment, std::move(message)); };
  if (replicas.empty()) return bad("The manual partition assignment includes an empty replica list.");
  std::vector<std::int32_t> sorted = replicas;
  std::ranges::sort(sorted);
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    if (image_.broker(sorted[i]) == nullptr) {
      return bad(
          fmt::format("The manual partition assignment includes broker {}, but no such "
                      "broker is registered.",
                      sorted[i]));
    }
    if (i > 0 && sorted[i] == sorted[i - 1]) {
      return bad(fmt::format("The manual partition assignment includes the broker {} more than once.", sorted[i]));
    }
  }
  if (replication_factor && sorted.size() != *replication_factor) {
    return bad(
        fmt::format("The manual partition assignment includes a partition with {} "
                    "replica(s), but this is not consistent with previous partitions, "
                    "which have {} replica(s).",
                    sorted.size(), *replication_factor));
  }
  return ApiError::ok();
}

// Replicas for partitions [first, first + count): the active brokers in id order, rotated by one
// per partition so leadership spreads. (Kafka's striped placer also weighs racks.)
Result<std::vector<std::vector<std::int32_t>>, ApiError> Controller::place_replicas(
    std::int32_t first, std::int32_t count, std::int16_t replication_factor) const {
  std::vector<std::int32_t> active;
  for (const auto& [id, b] : image_.brokers()) {
    if (!b.fenced && !b.in_controlled_shutdown) active.push_back(id);
  }
  if (replication_factor <= 0 || static_cast<std::size_t>(replication_factor) > active.size()) {
    return unexpected(error(Errc::invalid_replication_factor,
                            fmt::format("The target replication factor of {} cannot be reached because only {} "
                                        "broker(s) are registered or some brokers have all their log directories "
                                        "cordoned.",
                                        replication_factor, active.size())));
  }
  std::vector<std::vector<std::int32_t>> out;
  out.reserve(static_cast<std::size_t>(count));
  for (std::int32_t p = first; p < first + count; ++p) {
    std::vector<std::int32_t> replicas;
    for (std::int16_t i = 0; i < replication_factor; ++i) {
      replicas.push_back(active[static_cast<std::size_t>(p + i) % active.size()]);
    }
    out.push_back(std::move(replicas));
  }
  return out;
}

PartitionRecord Controller::partition_record(const Uuid& topic_id, std::int32_t partition,
                                             const std::vector<std::int32_t>& replicas) const {
  PartitionRecord r;
  r.partition_id = partition;
  r.topic_id = topic_id;
  r.replicas = replicas;
  for (std::int32_t id : replicas) {
    const BrokerRegistration* b = image_.broker(id);
    if (b != nullptr && !b->fenced && !b->in_controlled_shutdown) r.isr.push_back(id);
    // A broker with a single log directory hosts the replica there; else it is unassigned.
    r.directories.push_back(b != nullptr && b->log_dirs.size() == 1 ? b->log_dirs.front() : Uuid::zero());
  }
  WEIR_ASSERT(!r.isr.empty(), "partition {} has no active replica", partition);
  r.leader = r.isr.front();
  r.leader_recovery_state = 0;
  r.leader_epoch = 0;
  r.partition_epoch = 0;
  return r;
}

ApiError Controller::plan_topic(const CreateTopicsRequest::CreatableTopic& topic, const TopicDefaults& defaults,
                                TopicPlan& plan) const {
  if (!topic.assignments.empty()) {
    if (topic.replication_factor != -1) {
      return error(Errc::invalid_request,
                   "A manual partition assignment was specified, but replication factor was not "
                   "set to -1.");
    }
    if (topic.num_partitions != -1) {
      return error(Errc::invalid_request,
                   "A manual partition assignment was specified, but numPartitions was not set "
                   "to -1.");
    }
    std::map<std::int32_t, std::vector<std::int32_t>> parts;
    std::optional<std::size_t> replication_factor;
    for (const auto& a : topic.assignments) {
      if (parts.contains(a.partition_index)) {
        return error(Errc::invalid_replica_assignment,
                     fmt::format("Found multiple manual partition assignments for partition {}", a.partition_index));
      }
      if (auto e = check_manual_assignment(a.broker_ids, replication_factor); !e.is_ok()) return e;
      if (!any_active(a.broker_ids)) return all_fenced(a.partition_index);
      replication_factor = a.broker_ids.size();
      parts.emplace(a.partition_index, a.broker_ids);
    }
    for (std::int32_t i = 0; i < static_cast<std::int32_t>(parts.size()); ++i) {
      if (!parts.contains(i)) {
        return error(Errc::invalid_replica_assignment, "partitions should be a consecutive 0-based integer sequence");
      }
    }
    for (auto& [index, replicas] : parts) plan.replicas.push_back(std::move(replicas));
    return ApiError::ok();
  }
  if (topic.replication_factor < -1 || topic.replication_factor == 0) {
    return error(Errc::invalid_replication_factor,
                 "Replication factor must be larger than 0, or -1 to use the default value.");
  }
  if (topic.num_partitions < -1 || topic.num_partitions == 0) {
    return error(Errc::invalid_partitions, "Number of partitions was set to an invalid non-positive value.");
  }
  const std::int32_t count = topic.num_partitions == -1 ? defaults.num_partitions : topic.num_partitions;
  const std::int16_t replication_factor =
      topic.replication_factor == -1 ? defaults.replication_factor : topic.replication_factor;
  auto placed = place_replicas(0, count, replication_factor);
  if (!placed) {
    return error(Errc::invalid_replication_factor,
                 fmt::format("Unable to replicate the partition {} time(s): {}", replication_factor,
                             placed.error().message.value_or("")));
  }
  plan.replicas = std::move(*placed);
  return ApiError::ok();
}

ControllerResult<CreateTopicsResponse> Controller::create_topics(const CreateTopicsRequest& request,
                                                                 std::int16_t version,
                                                                 const TopicDefaults& defaults) const {
  WEIR_ASSERT(version >= CreateTopicsRequest::kMinVersion && version <= CreateTopicsRequest::kMaxVersion);
  WEIR_ASSERT(defaults.num_partitions > 0, "num.partitions is {}", defaults.num_partitions);
  ControllerResult<CreateTopicsResponse> out;
  auto& results = out.response.topics;
  // Failures of the whole request: every topic of the request gets the error, nothing is made.
  auto fail_all = [&](const ApiError& e) {
    results.clear();
    for (const auto& t : request.topics) results.push_back(topic_error(t.name, e));
    out.records.clear();
    return out;
  };

  const auto dups = duplicates(request.topics, [](const auto& t) { return t.name; });
  std::vector<const CreateTopicsRequest::CreatableTopic*> topics;
  bool metadata_topic = false;
  for (const auto& t : request.topics) {
    if (dups.contains(t.name)) continue;
    if (t.name == kClusterMetadataTopic) {
      metadata_topic = true;
      continue;
    }
    topics.push_back(&t);
  }

  std::int64_t total_partitions = 0;
  for (const auto* t : topics) {
    if (!t->assignments.empty()) {
      total_partitions += static_cast<std::int64_t>(t->assignments.size());
    } else if (t->num_partitions == -1) {
      total_partitions += defaults.num_partitions;
    } else if (t->num_partitions > 0) {
      total_partitions += t->num_partitions;
    }
  }
  if (total_partitions > static_cast<std::int64_t>(kMaxRecordsPerOperation)) {
    return fail_all(error(Errc::policy_violation, "Excessively large number of partitions per request."));
  }

  const BrokerConfigLayers layers = broker_layers();
  std::map<std::string, std::string> created_unified;  // '.'->'_' form -> name, this request
  std::set<Uuid> new_ids;
  for (const auto* t : topics) {
    if (out.records.size() > kMaxRecordsPerOperation) break;  // the request fails below
    ApiError e = ApiError::ok();
    if (auto why = topic_name_error(t->name)) e = error(Errc::invalid_topic, *why);
    if (auto other = image_.colliding_topic(t->name)) {
      e = error(Errc::invalid_topic, fmt::format("Topic '{}' collides with existing topic: {}", t->name, *other));
    }
    // As in Kafka, an existing name is reported as such even where it also collides.
    if (image_.topic(t->name) != nullptr) {
      e = error(Errc::topic_already_exists, fmt::format("Topic '{}' already exists.", t->name));
    }
    if (auto it = created_unified.find(unify_collision_chars(t->name)); e.is_ok() && it != created_unified.end()) {
      e = error(Errc::invalid_topic, fmt::format("Topic '{}' collides with existing topic: {}", t->name, it->second));
    }
    ConfigMap configs;
    std::vector<std::string> null_configs;
    for (const auto& c : t->configs) {
      if (!c.value) {
        null_configs.push_back(c.name);
      } else {
        configs[c.name] = *c.value;
      }
    }
    if (e.is_ok() && !null_configs.empty()) {
      e = error(Errc::invalid_config, "Null value not supported for topic configs: " + join(null_configs, ","));
    }
    if (e.is_ok()) e = validate_topic_configs(configs, layers);
    TopicPlan plan;
    if (e.is_ok()) e = plan_topic(*t, defaults, plan);
    if (!e.is_ok()) {
      results.push_back(topic_error(t->name, e));
      continue;
    }

    TopicRecord topic_record;
    topic_record.name = t->name;
    topic_record.topic_id = fresh_topic_id(new_ids);
    out.records.emplace_back(topic_record);
    // As in Kafka: TopicRecord, then its ConfigRecords, then the PartitionRecords.
    for (const auto& [key, value] : configs) {
      out.records.emplace_back(config_record(kConfigResourceTopic, t->name, key, value));
    }
    for (std::size_t p = 0; p < plan.replicas.size(); ++p) {
      out.records.emplace_back(partition_record(topic_record.topic_id, static_cast<std::int32_t>(p), plan.replicas[p]));
    }
    created_unified.emplace(unify_collision_chars(t->name), t->name);

    CreateTopicsResponse::CreatableTopicResult r;
    r.name = t->name;
    r.topic_id = topic_record.topic_id;
    r.error_code = 0;
    r.error_message = std::nullopt;
    r.num_partitions = static_cast<std::int32_t>(plan.replicas.size());
    r.replication_factor = static_cast<std::int16_t>(plan.replicas.front().size());
    r.topic_config_error_code = 0;
    r.configs.emplace();
    for (auto& c : effective_topic_configs(configs, layers)) {
      CreateTopicsResponse::CreatableTopicConfigs entry;
      entry.name = std::move(c.name);
      entry.value = std::move(c.value);
      entry.read_only = false;
      entry.config_source = static_cast<std::int8_t>(c.source);
      entry.is_sensitive = false;
      r.configs->push_back(std::move(entry));
    }
    results.push_back(std::move(r));
  }
  if (out.records.size() > kMaxRecordsPerOperation) {
    return fail_all(error(Errc::policy_violation, "Unable to perform excessively large batch operation."));
  }
  for (const auto& name : dups.order) {
    results.push_back(topic_error(name, error(Errc::invalid_request, "Duplicate topic name.")));
  }
  if (metadata_topic) {
    results.push_back(
        topic_error(std::string(kClusterMetadataTopic),
                    error(Errc::invalid_request,
                          fmt::format("Creation of internal topic {} is prohibited.", kClusterMetadataTopic))));
  }
  if (request.validate_only) out.records.clear();
  return out;
}

ControllerResult<protocol::DeleteTopicsResponse> Controller::delete_topics(const protocol::DeleteTopicsRequest& request,
                                                                           std::int16_t version) const {
  WEIR_ASSERT(version >= protocol::DeleteTopicsRequest::kMinVersion &&
              version <= protocol::DeleteTopicsRequest::kMaxVersion);
  ControllerResult<protocol::DeleteTopicsResponse> out;
  auto respond = [&](std::optional<std::string> name, const Uuid& id, const ApiError& e) {
    protocol::DeleteTopicsResponse::DeletableTopicResult r;
    r.name = std::move(name);
    r.topic_id = id;
    r.error_code = e.kafka_code();
    r.error_message = e.message;
    out.response.responses.push_back(std::move(r));
  };

  // The names and ids asked for, each once; repeats are answered as duplicates.
  Distinct<std::string> names;
  Distinct<Uuid> ids;
  for (const auto& name : request.topic_names) names.add(name);
  for (const auto& t : request.topics) {
    if (!t.name) {
      if (t.topic_id.is_zero()) {
        respond(std::nullopt, Uuid::zero(), error(Errc::invalid_request, "Neither topic name nor id were specified."));
      } else {
        ids.add(t.topic_id);
      }
    } else if (t.topic_id.is_zero()) {
      names.add(*t.name);
    } else {
      respond(t.name, t.topic_id, error(Errc::invalid_request, "You may not specify both topic name and topic id."));
    }
  }
  for (const auto& name : names.repeated()) {
    respond(name, Uuid::zero(), error(Errc::invalid_request, "Duplicate topic name."));
  }
  for (const auto& id : ids.repeated()) {
    respond(std::nullopt, id, error(Errc::invalid_request, "Duplicate topic id."));
  }

  // Topics to delete, by id, in the order they were named.
  std::map<Uuid, std::string> by_id;
  std::vector<Uuid> order;
  for (const auto& id : ids.once()) {
    const TopicImage* t = image_.topic(id);
    if (t == nullptr) {
      respond(std::nullopt, id, ApiError::of(Errc::unknown_topic_id));
    } else {
      by_id.emplace(id, t->name);
      order.push_back(id);
    }
  }
  for (const auto& name : names.once()) {
    const TopicImage* t = image_.topic(name);
    if (t == nullptr) {
      respond(name, Uuid::zero(), ApiError::of(Errc::unknown_topic_or_partition));
      continue;
    }
    if (by_id.erase(t->id) > 0) {
      respond(name, t->id,
              error(Errc::invalid_request, "The provided topic name maps to an ID that was already supplied."));
      continue;
    }
    by_id.emplace(t->id, name);
    order.push_back(t->id);
  }
  for (const auto& id : order) {
    auto it = by_id.find(id);
    if (it == by_id.end()) continue;
    if (out.records.size() == kMaxRecordsPerOperation) {
      respond(it->second, id, error(Errc::policy_violation, "Unable to perform excessively large batch operation."));
      continue;
    }
    RemoveTopicRecord r;
    r.topic_id = id;
    out.records.emplace_back(r);
    respond(it->second, id, ApiError::ok());
  }
  return out;
}

ControllerResult<protocol::CreatePartitionsResponse> Controller::create_partitions(
    const protocol::CreatePartitionsRequest& request, std::int16_t version) const {
  WEIR_ASSERT(version >= protocol::CreatePartitionsRequest::kMinVersion &&
              version <= protocol::CreatePartitionsRequest::kMaxVersion);
  ControllerResult<protocol::CreatePartitionsResponse> out;
  auto respond = [&](const std::string& name, const ApiError& e) {
    protocol::CreatePartitionsResponse::CreatePartitionsTopicResult r;
    r.name = name;
    r.error_code = e.kafka_code();
    r.error_message = e.message;
    out.response.results.push_back(std::move(r));
  };
  const auto dups = duplicates(request.topics, [](const auto& t) { return t.name; });
  for (const auto& name : dups.order) {
    respond(name, error(Errc::invalid_request, "Duplicate topic name."));
  }

  std::size_t new_partitions = 0;
  for (const auto& t : request.topics) {
    if (dups.contains(t.name)) continue;
    const TopicImage* topic = image_.topic(t.name);
    if (topic == nullptr) {
      respond(t.name, ApiError{Errc::unknown_topic_or_partition, std::nullopt});
      continue;
    }
    const auto current = static_cast<std::int32_t>(topic->partitions.size());
    if (t.count == current) {
      respond(t.name, error(Errc::invalid_partitions, fmt::format("Topic already has {} partition(s).", current)));
      continue;
    }
    if (t.count < current) {
      respond(t.name, error(Errc::invalid_partitions,
                            fmt::format("The topic {} currently has {} partition(s); {} would not be an "
                                        "increase.",
                                        t.name, current, t.count)));
      continue;
    }
    const std::int32_t additional = t.count - current;
    if (t.assignments && t.assignments->size() != static_cast<std::size_t>(additional)) {
      respond(t.name, error(Errc::invalid_replica_assignment,
                            fmt::format("Attempted to add {} additional partition(s), but only {} "
                                        "assignment(s) were specified.",
                                        additional, t.assignments->size())));
      continue;
    }
    if (new_partitions + static_cast<std::size_t>(additional) > kMaxRecordsPerOperation) {
      respond(t.name, error(Errc::policy_violation, "Unable to perform excessively large batch operation."));
      continue;
    }
    WEIR_ASSERT(current > 0, "topic {} has no partitions", t.name);
    const auto replication_factor = static_cast<std::int16_t>(topic->partitions.front().replicas.size());
    std::vector<std::vector<std::int32_t>> replicas;
    ApiError e = ApiError::ok();
    if (t.assignments) {
      for (std::size_t i = 0; i < t.assignments->size() && e.is_ok(); ++i) {
        const auto& ids = (*t.assignments)[i].broker_ids;
        e = check_manual_assignment(ids, static_cast<std::size_t>(replication_factor));
        if (e.is_ok() && !any_active(ids)) e = all_fenced(current + static_cast<std::int32_t>(i));
        replicas.push_back(ids);
      }
    } else {
      auto placed = place_replicas(current, additional, replication_factor);
      if (placed) {
        replicas = std::move(*placed);
      } else {
        e = placed.error();
      }
    }
    if (!e.is_ok()) {
      respond(t.name, e);
      continue;
    }
    for (std::int32_t i = 0; i < additional; ++i) {
      out.records.emplace_back(partition_record(topic->id, current + i, replicas[static_cast<std::size_t>(i)]));
    }
    new_partitions += static_cast<std::size_t>(additional);
    respond(t.name, ApiError{Errc::none, std::nullopt});
  }
  if (request.validate_only) out.records.clear();
  return out;
}

ControllerResult<protocol::ElectLeadersResponse> Controller::elect_leaders(const protocol::ElectLeadersRequest& request,
                                                                          std::int16_t version) const {
  using Response = protocol::ElectLeadersResponse;
  ControllerResult<Response> out;
  constexpr std::int8_t kPreferred = 0;
  constexpr std::int8_t kUnclean = 1;
  const std::int8_t type = request.election_type;
  const bool known_type = type == kPreferred || type == kUnclean;
  auto active = [this](std::int32_t id) {
    const BrokerRegistration* b = image_.broker(id);
    return b != nullptr && !b->fenced && !b->in_controlled_shutdown;
  };
  auto elect = [&](const std::string& topic_name, std::int32_t partition) -> ApiError {
    if (!known_type) return error(Errc::invalid_request, fmt::format("Unknown election type {}", type));
    const TopicImage* t = image_.topic(topic_name);
    if (t == nullptr) return error(Errc::unknown_topic_or_partition, "No such topic as " + topic_name);
    if (partition < 0 || static_cast<std::size_t>(partition) >= t->partitions.size()) {
      return error(Errc::unknown_topic_or_partition, fmt::format("No such partition as {}-{}", topic_name, partition));
    }
    const PartitionImage& p = t->partitions[static_cast<std::size_t>(partition)];
    const std::int32_t preferred = p.replicas.empty() ? kNoLeader : p.replicas.front();
    if (type == kPreferred ? p.leader == preferred : p.leader != kNoLeader) {
      return ApiError{Errc::election_not_needed, std::nullopt};
    }
    PartitionChangeRecord change;
    change.topic_id = t->id;
    change.partition_id = partition;
    auto in_isr = [&p](std::int32_t id) { return std::ranges::find(p.isr, id) != p.isr.end(); };
    if (type == kPreferred) {
      if (preferred == kNoLeader || !in_isr(preferred) || !active(preferred)) {
        return ApiError{Errc::preferred_leader_not_available, std::nullopt};
      }
      change.leader = preferred;
    } else {
      auto clean = std::ranges::find_if(p.replicas, [&](std::int32_t id) { return in_isr(id) && active(id); });
      if (clean != p.replicas.end()) {
        change.leader = *clean;
      } else {
        auto any = std::ranges::find_if(p.replicas, active);
        if (any == p.replicas.end()) return ApiError{Errc::eligible_leaders_not_available, std::nullopt};
        change.leader = *any;
        change.isr = std::vector<std::int32_t>{*any};
        change.leader_recovery_state = 1;  // RECOVERING: the new leader may lack acknowledged records
      }
    }
    out.records.emplace_back(std::move(change));
    return ApiError::ok();
  };
  auto result = [](std::int32_t partition, const ApiError& e) {
    Response::PartitionResult r;
    r.partition_id = partition;
    r.error_code = e.kafka_code();
    r.error_message = e.message ? *e.message : std::string(default_message(e.code));
    if (e.code == Errc::none) r.error_message = std::nullopt;
    return r;
  };
  if (!request.topic_partitions) {
    for (const auto& [name, id] : image_.topic_ids_by_name()) {
      auto& topic_result = out.response.replica_election_results.emplace_back();
      topic_result.topic = name;
      for (const auto& p : image_.topic(id)->partitions) {
        const ApiError e = elect(name, p.partition_id);
        if (e.code != Errc::election_not_needed) topic_result.partition_result.push_back(result(p.partition_id, e));
      }
    }
  } else {
    for (const auto& t : *request.topic_partitions) {
      auto& topic_result = out.response.replica_election_results.emplace_back();
      topic_result.topic = t.topic;
      for (std::int32_t partition : t.partitions) topic_result.partition_result.push_back(result(partition, elect(t.topic, partition)));
    }
  }
  if (!known_type && version >= 1) out.response.error_code = kafka_code(Errc::invalid_request);
  return out;
}

protocol::AlterPartitionReassignmentsResponse Controller::alter_partition_reassignments(
    const protocol::AlterPartitionReassignmentsRequest& request) const {
  protocol::AlterPartitionReassignmentsResponse out;
  out.allow_replication_factor_change = request.allow_replication_factor_change;
  out.error_message = std::nullopt;
  for (const auto& t : request.topics) {
    auto& topic_result = out.responses.emplace_back();
    topic_result.name = t.name;
    const TopicImage* topic = image_.topic(t.name);
    for (const auto& p : t.partitions) {
      ApiError e = ApiError::ok();
      if (topic == nullptr) {
        e = error(Errc::unknown_topic_or_partition, fmt::format("Unable to find a topic named {}.", t.name));
      } else if (p.partition_index < 0 || static_cast<std::size_t>(p.partition_index) >= topic->partitions.size()) {
        e = error(Errc::unknown_topic_or_partition, fmt::format("Unable to find partition {}:{}.", t.name, p.partition_index));
      } else {
        const PartitionImage& current = topic->partitions[static_cast<std::size_t>(p.partition_index)];
        const bool in_progress = !current.adding_replicas.empty() || !current.removing_replicas.empty();
        // Moving replicas, or cancelling a move, is only reachable with brokers this node's
        // controller never registers.
        const ApiError needs_quorum = error(Errc::invalid_replica_assignment, "Moving replicas needs a controller quorum.");
        if (!p.replicas) {
          e = in_progress ? needs_quorum : ApiError{Errc::no_reassignment_in_progress, std::nullopt};
        } else if (e = check_manual_assignment(*p.replicas, std::nullopt); e.code == Errc::none &&
                                                                             *p.replicas != current.replicas) {
          e = needs_quorum;
        }
      }
      auto& r = topic_result.partitions.emplace_back();
      r.partition_index = p.partition_index;
      r.error_code = e.kafka_code();
      r.error_message = e.message;
    }
  }
  return out;
}

protocol::ListPartitionReassignmentsResponse Controller::list_partition_reassignments(
    const protocol::ListPartitionReassignmentsRequest& request) const {
  protocol::ListPartitionReassignmentsResponse out;
  out.error_message = std::nullopt;
  auto list = [&out](const TopicImage& t, const PartitionImage& p) {
    if (p.adding_replicas.empty() && p.removing_replicas.empty()) return;
    if (out.topics.empty() || out.topics.back().name != t.name) out.topics.emplace_back().name = t.name;
    auto& r = out.topics.back().partitions.emplace_back();
    r.partition_index = p.partition_id;
    r.replicas = p.replicas;
    r.adding_replicas = p.adding_replicas;
    r.removing_replicas = p.removing_replicas;
  };
  if (!request.topics) {
    for (const auto& [name, id] : image_.topic_ids_by_name()) {
      const TopicImage& t = *image_.topic(id);
      for (const auto& p : t.partitions) list(t, p);
    }
    return out;
  }
  for (const auto& named : *request.topics) {
    const TopicImage* t = image_.topic(named.name);
    if (t == nullptr) continue;
    for (std::int32_t index : named.partition_indexes) {
      if (index >= 0 && static_cast<std::size_t>(index) < t->partitions.size()) {
        list(*t, t->partitions[static_cast<std::size_t>(index)]);
      }
    }
  }
  return out;
}

ApiError Controller::check_config_resource(std::int8_t type, const std::string& name) const {
  if (type == kConfigResourceBroker) {
    // Kafka's ControllerConfigurationValidator: "" (the cluster default) or a broker id. The
    // broker that took the request has checked the values (and, for an id, that it is its own).
    if (name.empty()) return ApiError::ok();
    const auto id = config::java::parse_integer(name, 32);
    if (!id) return error(Errc::invalid_request, "Unable to parse broker name as a base 10 number.");
    if (*id < 0) return error(Errc::invalid_request, "Invalid negative broker ID.");
    return ApiError::ok();
  }
  if (type == kConfigResourceGroup) {
    if (name.empty()) return error(Errc::invalid_request, "Default group resources are not allowed.");
    return ApiError::ok();
  }
  if (type != kConfigResourceTopic) {
    return error(Errc::invalid_request, fmt::format("Unknown resource type {}", type));
  }
  if (name.empty()) return error(Errc::invalid_request, "Default topic resources are not allowed.");
  if (auto why = topic_name_error(name)) return error(Errc::invalid_topic, *why);
  return ApiError::ok();
}

ApiError Controller::alter_topic_configs(const std::string& topic, const ConfigMap& new_overrides,
                                         std::vector<MetadataRecord>& records) const {
  if (auto e = validate_topic_configs(new_overrides, broker_layers()); !e.is_ok()) return e;
  if (image_.topic(topic) == nullptr) {
    return error(Errc::unknown_topic_or_partition, fmt::format("The topic '{}' does not exist.", topic));
  }
  changed_config_records(kConfigResourceTopic, topic, image_.topic_configs(topic), new_overrides, records);
  return ApiError::ok();
}

ApiError Controller::alter_group_configs(const std::string& group, const ConfigMap& new_overrides,
                                         std::vector<MetadataRecord>& records) const {
  if (auto e = validate_group_configs(new_overrides, broker_layers()); !e.is_ok()) return e;
  changed_config_records(kConfigResourceGroup, group, image_.configs(kConfigResourceGroup, group), new_overrides,
                         records);
  return ApiError::ok();
}

void Controller::alter_broker_configs(const std::string& broker, const ConfigMap& new_overrides,
                                      const std::vector<std::string>& named, std::vector<MetadataRecord>& records) const {
  // As Kafka's controller: a record for every key the request names, changed or not (brokers
  // reload on it, KAFKA-14136), and a deletion for each other key the new set lacks.
  for (const auto& key : named) {
    auto it = new_overrides.find(key);
    records.emplace_back(config_record(kConfigResourceBroker, broker, key,
                                       it == new_overrides.end() ? std::nullopt : std::optional<std::string>(it->second)));
  }
  for (const auto& [key, value] : image_.configs(kConfigResourceBroker, broker)) {
    if (!new_overrides.contains(key) && !contains(named, key)) {
      records.emplace_back(config_record(kConfigResourceBroker, broker, key, std::nullopt));
    }
  }
}

ControllerResult<protocol::AlterConfigsResponse> Controller::alter_configs(const protocol::AlterConfigsRequest& request,
                                                                           std::int16_t version) const {
  WEIR_ASSERT(version >= protocol::AlterConfigsRequest::kMinVersion &&
              version <= protocol::AlterConfigsRequest::kMaxVersion);
  ControllerResult<protocol::AlterConfigsResponse> out;
  const auto dup_resources = duplicates(
      request.resources, [](const auto& r) { return fmt::format("{}/{}", r.resource_type, r.resource_name); });
  for (const auto& resource : request.resources) {
    std::vector<MetadataRecord> records;
    ApiError e = ApiError::ok();
    if (dup_resources.contains(fmt::format("{}/{}", resource.resource_type, resource.resource_name))) {
      e = error(Errc::invalid_request, "Each resource must appear at most once.");
    } else if (!duplicates(resource.configs, [](const auto& c) { return c.name; }).empty()) {
      e = error(Errc::invalid_request, "Error due to duplicate config keys");
    } else {
      std::vector<std::string> nulls;
      ConfigMap overrides;
      for (const auto& c : resource.configs) {
        if (c.value) {
          overrides[c.name] = *c.value;
        } else {
          nulls.push_back(c.name);
        }
      }
      if (!nulls.empty()) {
        e = error(Errc::invalid_request, "Null value not supported for : " + join(nulls, ", "));
      }
      if (e.is_ok()) e = check_config_resource(resource.resource_type, resource.resource_name);
      if (e.is_ok() && resource.resource_type == kConfigResourceBroker) {
        std::vector<std::string> named;
        for (const auto& c : resource.configs) named.push_back(c.name);
        alter_broker_configs(resource.resource_name, overrides, named, records);
      } else if (e.is_ok() && resource.resource_type == kConfigResourceGroup) {
        e = alter_group_configs(resource.resource_name, overrides, records);
      } else if (e.is_ok()) {
        e = alter_topic_configs(resource.resource_name, overrides, records);
      }
    }
    protocol::AlterConfigsResponse::AlterConfigsResourceResponse r;
    r.error_code = e.kafka_code();
    r.error_message = e.message;
    r.resource_type = resource.resource_type;
    r.resource_name = resource.resource_name;
    if (e.is_ok() && out.records.size() + records.size() > kMaxRecordsPerOperation) {
      r.error_code = kafka_code(Errc::policy_violation);
      r.error_message = "Unable to perform excessively large batch operation.";
    } else if (e.is_ok()) {
      std::ranges::move(records, std::back_inserter(out.records));
    }
    out.response.responses.push_back(std::move(r));
  }
  if (request.validate_only) out.records.clear();
  return out;
}

ControllerResult<protocol::IncrementalAlterConfigsResponse> Controller::incremental_alter_configs(
    const protocol::IncrementalAlterConfigsRequest& request, std::int16_t version) const {
  WEIR_ASSERT(version >= protocol::IncrementalAlterConfigsRequest::kMinVersion &&
              version <= protocol::IncrementalAlterConfigsRequest::kMaxVersion);
  ControllerResult<protocol::IncrementalAlterConfigsResponse> out;
  const auto dup_resources = duplicates(
      request.resources, [](const auto& r) { return fmt::format("{}/{}", r.resource_type, r.resource_name); });
  for (const auto& resource : request.resources) {
    std::vector<MetadataRecord> records;
    ApiError e = ApiError::ok();
    if (dup_resources.contains(fmt::format("{}/{}", resource.resource_type, resource.resource_name))) {
      e = error(Errc::invalid_request, "Each resource must appear at most once.");
    } else if (!duplicates(resource.configs, [](const auto& c) { return c.name; }).empty()) {
      e = error(Errc::invalid_request, "Error due to duplicate config keys");
    } else {
      std::vector<std::string> nulls;
      for (const auto& c : resource.configs) {
        if (c.config_operation != kOpDelete && !c.value) nulls.push_back(c.name);
      }
      if (!nulls.empty()) {
        e = error(Errc::invalid_request, "Null value not supported for : " + join(nulls, ", "));
      }
    }
    if (e.is_ok()) e = check_config_resource(resource.resource_type, resource.resource_name);
    if (e.is_ok()) {
      const bool broker = resource.resource_type == kConfigResourceBroker;
      ConfigMap overrides = image_.configs(resource.resource_type, resource.resource_name);
      for (const auto& c : resource.configs) {
        if (c.config_operation == kOpSet) {
          overrides[c.name] = *c.value;
        } else if (c.config_operation == kOpDelete) {
          overrides.erase(c.name);
        } else if (c.config_operation == kOpAppend || c.config_operation == kOpSubtract) {
          // The key's default when it has no value yet; nullopt: not a LIST key.
          std::optional<std::string> list_default;
          if (broker) {
            const auto& defs = config::broker_config_defs();
            auto d = std::ranges::find_if(defs, [&](const config::KeyDef& k) { return k.name == c.name; });
            if (d != defs.end() && d->type == config::Type::list) {
              list_default = d->null_default() ? std::string() : std::string(d->default_value);
            }
          } else if (const TopicConfigDef* def = find_topic_config(c.name);
                     resource.resource_type == kConfigResourceTopic && def != nullptr &&
                     def->type == ConfigType::list) {
            list_default = std::string(def->default_value);
          }
          if (!list_default) {
            e = error(Errc::invalid_config,
                      fmt::format("Can't {} to key {} because its type is not LIST.",
                                  c.config_operation == kOpAppend ? "APPEND" : "SUBTRACT", c.name));
            break;
          }
          auto it = overrides.find(c.name);
          std::vector<std::string> parts;
          for (auto& part : java_split_commas(it == overrides.end() ? *list_default : it->second)) {
            if (!part.empty()) parts.push_back(std::move(part));
          }
          for (auto& v : java_split_commas(*c.value)) {
            if (c.config_operation == kOpAppend) {
              if (!contains(parts, v)) parts.push_back(std::move(v));
            } else if (auto at = std::ranges::find(parts, v); at != parts.end()) {
              parts.erase(at);
            }
          }
          overrides[c.name] = join(parts, ",");
        } else {
          e = error(Errc::invalid_request, fmt::format("Unknown operation type {}", c.config_operation));
          break;
        }
      }
      if (e.is_ok() && broker) {
        std::vector<std::string> named;
        for (const auto& c : resource.configs) named.push_back(c.name);
        alter_broker_configs(resource.resource_name, overrides, named, records);
      } else if (e.is_ok() && resource.resource_type == kConfigResourceGroup) {
        e = alter_group_configs(resource.resource_name, overrides, records);
      } else if (e.is_ok()) {
        e = alter_topic_configs(resource.resource_name, overrides, records);
      }
    }
    protocol::IncrementalAlterConfigsResponse::AlterConfigsResourceResponse r;
    r.error_code = e.kafka_code();
    r.error_message = e.message;
    r.resource_type = resource.resource_type;
    r.resource_name = resource.resource_name;
    if (e.is_ok() && out.records.size() + records.size() > kMaxRecordsPerOperation) {
      r.error_code = kafka_code(Errc::policy_violation);
      r.error_message = "Unable to perform excessively large batch operation.";
    } else if (e.is_ok()) {
      std::ranges::move(records, std::back_inserter(out.records));
    }
    out.response.responses.push_back(std::move(r));
  }
  if (request.validate_only) out.records.clear();
  return out;
}

protocol::DescribeConfigsResponse::DescribeConfigsResult Controller::describe_topic(
    const protocol::DescribeConfigsRequest::DescribeConfigsResource& resource, bool include_synonyms) const {
  WEIR_ASSERT(resource.resource_type == kConfigResourceTopic);
  protocol::DescribeConfigsResponse::DescribeConfigsResult out;
  out.resource_type = resource.resource_type;
  out.resource_name = resource.resource_name;
  if (auto why = topic_name_error(resource.resource_name)) {
    out.error_code = kafka_code(Errc::invalid_topic);
    out.error_message = *why;
    return out;
  }
  if (image_.topic(resource.resource_name) == nullptr) {
    out.error_code = kafka_code(Errc::unknown_topic_or_partition);
    return out;
  }
  out.configs = describe_topic_configs(image_.topic_configs(resource.resource_name), broker_layers(),
                                       resource.configuration_keys, include_synonyms);
  return out;
}

protocol::DescribeConfigsResponse::DescribeConfigsResult Controller::describe_group(
    const protocol::DescribeConfigsRequest::DescribeConfigsResource& resource, bool include_synonyms,
    bool include_documentation) const {
  WEIR_ASSERT(resource.resource_type == kConfigResourceGroup);
  protocol::DescribeConfigsResponse::DescribeConfigsResult out;
  out.resource_type = resource.resource_type;
  out.resource_name = resource.resource_name;
  if (resource.resource_name.empty()) {
    out.error_code = kafka_code(Errc::invalid_request);
    out.error_message = "Group name must not be empty";
    return out;
  }
  out.configs = describe_group_configs(image_.configs(kConfigResourceGroup, resource.resource_name), broker_layers(),
                                       resource.configuration_keys, include_synonyms, include_documentation);
  return out;
}

std::optional<TopicConfig> Controller::topic_config(std::string_view topic) const {
  if (image_.topic(topic) == nullptr) return std::nullopt;
  return resolve_topic_config(image_.topic_configs(topic), broker_layers());
}

Result<ControllerResult<ProducerIdBlock>, ApiError> Controller::allocate_producer_ids(std::int32_t broker_id,
                                                                                      std::int64_t broker_epoch) const {
  const std::int64_t first = image_.next_producer_id();
  const std::int32_t size = config_.producer_id_block_size;
  if (first > std::numeric_limits<std::int64_t>::max() - size) {
    return unexpected(error(Errc::unknown_server_error,
                            "Exhausted all producerIds as the next block's end producerId has "
                            "exceeded the int64 type limit"));
  }
  ControllerResult<ProducerIdBlock> out;
  out.response = ProducerIdBlock{broker_id, first, size};
  ProducerIdsRecord r;
  r.broker_id = broker_id;
  r.broker_epoch = broker_epoch;
  r.next_producer_id = out.response.next_block_first_id();
  out.records.emplace_back(r);
  return out;
}

std::vector<MetadataRecord> Controller::register_broker(const BrokerInfo& broker) const {
  RegisterBrokerRecord r;
  r.broker_id = broker.broker_id;
  r.is_migrating_zk_broker = false;
  r.incarnation_id = broker.incarnation_id;
  r.broker_epoch = broker.broker_epoch;
  for (const auto& e : broker.endpoints) {
    RegisterBrokerRecord::BrokerEndpoint ep;
    ep.name = e.listener_name;
    ep.host = e.host;
    ep.port = e.port;
    ep.security_protocol = e.security_protocol;
    r.end_points.push_back(std::move(ep));
  }
  for (const auto& f : broker.supported_features) {
    RegisterBrokerRecord::BrokerFeature feature;
    feature.name = f.name;
    feature.min_supported_version = f.min_supported;
    feature.max_supported_version = f.max_supported;
    r.features.push_back(std::move(feature));
  }
  r.rack = broker.rack;
  r.fenced = false;
  r.in_controlled_shutdown = false;
  r.log_dirs = broker.log_dirs;
  return {MetadataRecord(std::move(r))};
}

std::vector<MetadataRecord> Controller::finalize_features(
    const std::map<std::string, std::int16_t, std::less<>>& levels) const {
  std::vector<MetadataRecord> out;
  for (const auto& [name, level] : levels) {
    const auto current = image_.feature_level(name);
    if (current.value_or(0) == level) continue;
    FeatureLevelRecord r;
    r.name = name;
    r.feature_level = level;
    out.emplace_back(std::move(r));
  }
  return out;
}

std::vector<MetadataRecord> Controller::bootstrap_records(
    const std::map<std::string, std::int16_t, std::less<>>& features) const {
  std::vector<MetadataRecord> out = finalize_features(features);
  auto it = config_.static_broker_configs.find("min.insync.replicas");
  out.emplace_back(config_record(kConfigResourceBroker, "", "min.insync.replicas",
                                 it == config_.static_broker_configs.end() ? std::string("1") : it->second));
  return out;
}

}  // namespace weir::metadata
