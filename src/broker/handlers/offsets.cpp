// Committed offsets: OffsetCommit, OffsetFetch, OffsetDelete. Topics are checked against the
// catalog here (unknown names, ids and partitions answered as Kafka's KafkaApis does before the
// coordinator sees the request); the coordinator itself works with topic names.
#include <map>
#include <set>

#include "broker/broker.h"
#include "broker/errors.h"
#include "broker/group_service.h"
#include "broker/handlers/handlers.h"

namespace weir::broker {

namespace asio = boost::asio;

namespace {

using TopicPartitionKey = std::pair<std::string, std::int32_t>;

// Whether `partition` exists in the catalog's `topic`.
bool partition_exists(const Catalog& catalog, const std::string& topic, std::int32_t partition) {
  const TopicInfo* t = catalog.find(topic);
  return t != nullptr && partition >= 0 && partition < t->partitions;
}

// OffsetCommit: what the coordinator gets (known partitions, by name) and the errors decided here.
struct CommitSplit {
  protocol::OffsetCommitRequest valid;
  std::map<TopicPartitionKey, std::int16_t> early;  // (request topic index as name key, partition)
  std::vector<std::string> names;                   // per request topic ("" if unknown)
};

CommitSplit split_commit(const Catalog& catalog, const protocol::OffsetCommitRequest& req, bool by_id) {
  CommitSplit out;
  out.valid = req;
  out.valid.topics.clear();
  out.names.resize(req.topics.size());
  for (std::size_t i = 0; i < req.topics.size(); ++i) {
    const auto& t = req.topics[i];
    std::optional<std::string> name = by_id ? catalog.name_of(t.topic_id) : std::optional(t.name);
    std::int16_t topic_error = 0;
    if (!name) {
      topic_error = code(ErrorCode::kUnknownTopicId);
    } else if (catalog.find(*name) == nullptr) {
      topic_error = code(ErrorCode::kUnknownTopicOrPartition);
    }
    out.names[i] = name.value_or("");
    protocol::OffsetCommitRequest::OffsetCommitRequestTopic* vt = nullptr;
    for (const auto& p : t.partitions) {
      std::int16_t e = topic_error;
      if (e == 0 && !partition_exists(catalog, *name, p.partition_index)) e = code(ErrorCode::kUnknownTopicOrPartition);
      if (e != 0) {
        out.early[{std::to_string(i), p.partition_index}] = e;
        continue;
      }
      if (vt == nullptr) {
        vt = &out.valid.topics.emplace_back();
        vt->name = *name;
        vt->topic_id = t.topic_id;
      }
      vt->partitions.push_back(p);
    }
  }
  return out;
}

using FetchedGroup = protocol::OffsetFetchResponse::OffsetFetchResponseGroup;
using FetchedTopic = protocol::OffsetFetchResponse::OffsetFetchResponseTopics;
using FetchTopic = protocol::OffsetFetchRequest::OffsetFetchRequestTopics;

// OffsetFetch v10+: the topics of a group's request with their ids resolved to names; the ids no
// topic has are answered UNKNOWN_TOPIC_ID (into `unknown`) without asking the coordinator.
std::vector<FetchTopic> resolve_topic_ids(const Catalog& catalog, std::vector<FetchTopic> topics,
                                          std::vector<FetchedTopic>& unknown) {
  std::vector<FetchTopic> known;
  for (auto& t : topics) {
    auto name = catalog.name_of(t.topic_id);
    if (!name) {
      auto& ut = unknown.emplace_back();
      ut.topic_id = t.topic_id;
      for (std::int32_t p : t.partition_indexes) {
        auto& up = ut.partitions.emplace_back();
        up.partition_index = p;
        up.committed_offset = -1;
        up.metadata = "";
        up.error_code = code(ErrorCode::kUnknownTopicId);
      }
      continue;
    }
    t.name = *name;
    known.push_back(std::move(t));
  }
  return known;
}

// OffsetFetch v10+: topic ids for the names the coordinator answered with, then the unknown ids.
// Offsets of topics that no longer exist cannot be named by id and are left out.
std::vector<FetchedTopic> topics_by_id(const Catalog& catalog, std::vector<FetchedTopic> answered,
                                       std::vector<FetchedTopic> unknown) {
  std::vector<FetchedTopic> topics;
  for (auto& t : answered) {
    const TopicInfo* info = catalog.find(t.name);
    if (info == nullptr) continue;
    t.topic_id = info->id;
    t.name.clear();
    topics.push_back(std::move(t));
  }
  for (auto& t : unknown) topics.push_back(std::move(t));
  return topics;
}

}  // namespace

asio::awaitable<HandlerResult<OffsetCommitHandler::Response>> OffsetCommitHandler::handle(RequestContext& ctx,
                                                                                          Request& req) {
  Broker& broker = ctx.broker;
  const std::int16_t version = ctx.version();
  const auto catalog = broker.catalog();
  const bool by_id = version >= 10;

  CommitSplit split = split_commit(*catalog, req, by_id);
  const Request& valid = split.valid;
  const auto& early = split.early;
  const auto& names = split.names;

  // As Kafka's KafkaApis: when no partition is left to commit, the coordinator is not asked
  // (so a simple commit naming only unknown partitions creates no group).
  GroupUpdate<Response> out;
  out.served = true;
  if (!valid.topics.empty()) {
    out = co_await broker.groups().update<Response>(
        broker.group_partition(req.group_id),
        [&](group::GroupCoordinator& c, std::int64_t now) { return c.offset_commit(valid, version, now); });
  }
  std::map<TopicPartitionKey, std::int16_t> decided;
  for (const auto& t : out.response.topics) {
    for (const auto& p : t.partitions)
      decided[{t.name, p.partition_index}] = p.error_code == 0 ? out.error : p.error_code;
  }

  Response resp;
  for (std::size_t i = 0; i < req.topics.size(); ++i) {
    const auto& t = req.topics[i];
    auto& rt = resp.topics.emplace_back();
    rt.name = by_id ? std::string() : t.name;
    rt.topic_id = t.topic_id;
    for (const auto& p : t.partitions) {
      auto& rp = rt.partitions.emplace_back();
      rp.partition_index = p.partition_index;
      if (auto e = early.find({std::to_string(i), p.partition_index}); e != early.end()) {
        rp.error_code = e->second;
      } else if (auto d = decided.find({names[i], p.partition_index}); d != decided.end()) {
        rp.error_code = d->second;
      } else {
        rp.error_code = out.served ? code(ErrorCode::kUnknownServerError) : code(ErrorCode::kNotCoordinator);
      }
    }
  }
  co_return resp;
}

asio::awaitable<HandlerResult<OffsetFetchHandler::Response>> OffsetFetchHandler::handle(RequestContext& ctx,
                                                                                        Request& req) {
  Broker& broker = ctx.broker;
  const std::int16_t version = ctx.version();
  const auto catalog = broker.catalog();

  if (version < 8) {
    auto resp =
        co_await broker.groups().read(broker.group_partition(req.group_id),
                                      [&](const group::GroupCoordinator& c) { return c.offset_fetch(req, version); });
    if (resp) co_return std::move(*resp);
    Response r;
    r.error_code = code(ErrorCode::kNotCoordinator);
    co_return r;
  }

  const bool by_id = version >= 10;
  // Per group, the entries of topic ids no topic has; per coordinator partition, its groups.
  std::vector<std::vector<FetchedTopic>> unknown(req.groups.size());
  std::map<std::int32_t, Request> by_partition;
  for (std::size_t i = 0; i < req.groups.size(); ++i) {
    auto g = req.groups[i];
    if (by_id && g.topics) g.topics = resolve_topic_ids(*catalog, std::move(*g.topics), unknown[i]);
    auto& sub = by_partition[broker.group_partition(g.group_id)];
    sub.require_stable = req.require_stable;
    sub.groups.push_back(std::move(g));
  }
  std::map<std::string, FetchedGroup> answered;
  for (auto& [partition, sub] : by_partition) {
    auto part = co_await broker.groups().read(
        partition, [&](const group::GroupCoordinator& c) { return c.offset_fetch(sub, version); });
    if (!part) {
      for (const auto& g : sub.groups) {
        auto& rg = answered[g.group_id];
        rg.group_id = g.group_id;
        rg.error_code = code(ErrorCode::kNotCoordinator);
      }
      continue;
    }
    for (auto& g : part->groups) answered[g.group_id] = std::move(g);
  }
  Response resp;
  for (std::size_t i = 0; i < req.groups.size(); ++i) {
    auto g = answered[req.groups[i].group_id];
    g.group_id = req.groups[i].group_id;
    if (by_id) g.topics = topics_by_id(*catalog, std::move(g.topics), std::move(unknown[i]));
    resp.groups.push_back(std::move(g));
  }
  co_return resp;
}

asio::awaitable<HandlerResult<OffsetDeleteHandler::Response>> OffsetDeleteHandler::handle(RequestContext& ctx,
                                                                                          Request& req) {
  Broker& broker = ctx.broker;
  const std::int16_t version = ctx.version();
  const auto catalog = broker.catalog();
  Request valid = req;
  valid.topics.clear();
  std::map<TopicPartitionKey, std::int16_t> early;
  for (const auto& t : req.topics) {
    Request::OffsetDeleteRequestTopic* vt = nullptr;
    for (const auto& p : t.partitions) {
      if (!partition_exists(*catalog, t.name, p.partition_index)) {
        early[{t.name, p.partition_index}] = code(ErrorCode::kUnknownTopicOrPartition);
        continue;
      }
      if (vt == nullptr) {
        vt = &valid.topics.emplace_back();
        vt->name = t.name;
      }
      vt->partitions.push_back(p);
    }
  }
  auto out = co_await broker.groups().update<Response>(
      broker.group_partition(req.group_id),
      [&](group::GroupCoordinator& c, std::int64_t now) { return c.offset_delete(valid, version, now); });
  const std::int16_t error = out.response.error_code != 0 ? out.response.error_code : out.error;
  if (error != 0) {
    Response resp;
    resp.error_code = error;
    co_return resp;
  }
  std::map<TopicPartitionKey, std::int16_t> decided;
  for (const auto& t : out.response.topics) {
    for (const auto& p : t.partitions) decided[{t.name, p.partition_index}] = p.error_code;
  }
  Response resp;
  for (const auto& t : req.topics) {
    auto& rt = resp.topics.emplace_back();
    rt.name = t.name;
    for (const auto& p : t.partitions) {
      auto& rp = rt.partitions.emplace_back();
      rp.partition_index = p.partition_index;
      if (auto e = early.find({t.name, p.partition_index}); e != early.end()) {
        rp.error_code = e->second;
      } else {
        rp.error_code = decided[{t.name, p.partition_index}];
      }
    }
  }
  co_return resp;
}

}  // namespace weir::broker
