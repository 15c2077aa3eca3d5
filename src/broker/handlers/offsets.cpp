// Committed offsets: OffsetCommit, OffsetFetch, OffsetDelete. Topics are checked against the
// catalog here (unknown names, ids and partitions answered as Kafka's KafkaApis does before the
// coordinator sees the request); the coordinator itself works with topic names.
#include <map>
#include <set>

#include "broker/broker.h"
#include "broker/errors.h"
#include "broker/group_host.h"
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

}  // namespace

asio::awaitable<HandlerResult<OffsetCommitHandler::Response>> OffsetCommitHandler::handle(RequestContext& ctx,
                                                                                           Request& req) {
  Broker& broker = ctx.broker;
  const std::int16_t version = ctx.version();
  const auto catalog = broker.catalog();
  const bool by_id = version >= 10;

  // What the coordinator gets (known partitions, by name) and the errors decided here.
  Request valid = req;
  valid.topics.clear();
  std::map<TopicPartitionKey, std::int16_t> early;  // (request topic index as name key, partition)
  std::vector<std::string> names(req.topics.size());
  for (std::size_t i = 0; i < req.topics.size(); ++i) {
    const auto& t = req.topics[i];
    std::optional<std::string> name = by_id ? catalog->name_of(t.topic_id) : std::optional(t.name);
    std::int16_t topic_error = 0;
    if (!name) {
      topic_error = code(ErrorCode::kUnknownTopicId);
    } else if (catalog->find(*name) == nullptr) {
      topic_error = code(ErrorCode::kUnknownTopicOrPartition);
    }
    names[i] = name.value_or("");
    Request::OffsetCommitRequestTopic* vt = nullptr;
    for (const auto& p : t.partitions) {
      std::int16_t e = topic_error;
      if (e == 0 && !partition_exists(*catalog, *name, p.partition_index)) e = code(ErrorCode::kUnknownTopicOrPartition);
      if (e != 0) {
        early[{std::to_string(i), p.partition_index}] = e;
        continue;
      }
      if (vt == nullptr) {
        vt = &valid.topics.emplace_back();
        vt->name = *name;
        vt->topic_id = t.topic_id;
      }
      vt->partitions.push_back(p);
    }
  }

  const std::int32_t partition = broker.group_partition(req.group_id);
  struct Out {
    Response response;
    GroupHost::Applied applied;
    bool served = true;
  };
  Out out;
  // As Kafka's KafkaApis: when no partition is left to commit, the coordinator is not asked
  // (so a simple commit naming only unknown partitions creates no group).
  if (!valid.topics.empty()) {
    out = co_await broker.with_group(partition, [&](GroupHost* h) {
      Out o;
      if (h == nullptr) {
        o.served = false;
        return o;
      }
      auto reply = h->coordinator().offset_commit(valid, version, h->now_ms());
      o.response = std::move(reply.response);
      o.applied = h->apply(std::move(reply.effects));
      return o;
    });
  }
  const std::int16_t durable_error = out.served ? co_await GroupHost::make_durable(broker, out.applied, partition)
                                                : code(ErrorCode::kNotCoordinator);
  std::map<TopicPartitionKey, std::int16_t> decided;
  for (const auto& t : out.response.topics) {
    for (const auto& p : t.partitions) {
      decided[{t.name, p.partition_index}] = p.error_code == 0 ? durable_error : p.error_code;
    }
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
    const std::int32_t partition = broker.group_partition(req.group_id);
    auto resp = co_await broker.with_group(partition, [&](GroupHost* h) {
      if (h != nullptr) return h->coordinator().offset_fetch(req, version);
      Response r;
      r.error_code = code(ErrorCode::kNotCoordinator);
      return r;
    });
    co_return resp;
  }

  const bool by_id = version >= 10;
  // Per group: the sub-request (names resolved) and the partitions answered here.
  struct GroupWork {
    protocol::OffsetFetchResponse::OffsetFetchResponseGroup unknown;  // UNKNOWN_TOPIC_ID entries
  };
  std::vector<GroupWork> work(req.groups.size());
  std::map<std::int32_t, Request> by_partition;
  for (std::size_t i = 0; i < req.groups.size(); ++i) {
    auto g = req.groups[i];
    if (by_id && g.topics) {
      std::vector<Request::OffsetFetchRequestTopics> known;
      for (auto& t : *g.topics) {
        auto name = catalog->name_of(t.topic_id);
        if (!name) {
          auto& ut = work[i].unknown.topics.emplace_back();
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
        known.push_back(t);
      }
      g.topics = std::move(known);
    }
    auto& sub = by_partition[broker.group_partition(g.group_id)];
    sub.require_stable = req.require_stable;
    sub.groups.push_back(std::move(g));
  }
  std::map<std::string, protocol::OffsetFetchResponse::OffsetFetchResponseGroup> answered;
  for (auto& [partition, sub] : by_partition) {
    auto part = co_await broker.with_group(partition, [&](GroupHost* h) {
      if (h != nullptr) return h->coordinator().offset_fetch(sub, version);
      Response r;
      for (const auto& g : sub.groups) {
        auto& rg = r.groups.emplace_back();
        rg.group_id = g.group_id;
        rg.error_code = code(ErrorCode::kNotCoordinator);
      }
      return r;
    });
    for (auto& g : part.groups) answered[g.group_id] = std::move(g);
  }
  Response resp;
  for (std::size_t i = 0; i < req.groups.size(); ++i) {
    auto g = answered[req.groups[i].group_id];
    g.group_id = req.groups[i].group_id;
    if (by_id) {
      // Topic ids for the names the coordinator answered with; offsets of topics that no
      // longer exist cannot be named by id and are left out.
      std::vector<protocol::OffsetFetchResponse::OffsetFetchResponseTopics> topics;
      for (auto& t : g.topics) {
        const TopicInfo* info = catalog->find(t.name);
        if (info == nullptr) continue;
        t.topic_id = info->id;
        t.name.clear();
        topics.push_back(std::move(t));
      }
      for (auto& t : work[i].unknown.topics) topics.push_back(std::move(t));
      g.topics = std::move(topics);
    }
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
  const std::int32_t partition = broker.group_partition(req.group_id);
  struct Out {
    Response response;
    GroupHost::Applied applied;
  };
  Out out = co_await broker.with_group(partition, [&](GroupHost* h) {
    Out o;
    if (h == nullptr) {
      o.response.error_code = code(ErrorCode::kNotCoordinator);
      return o;
    }
    auto reply = h->coordinator().offset_delete(valid, version, h->now_ms());
    o.response = std::move(reply.response);
    o.applied = h->apply(std::move(reply.effects));
    return o;
  });
  if (out.response.error_code == 0) {
    if (const std::int16_t err = co_await GroupHost::make_durable(broker, out.applied, partition); err != 0) {
      out.response.error_code = err;
    }
  }
  if (out.response.error_code != 0) {
    Response resp;
    resp.error_code = out.response.error_code;
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
