// ListOffsets: earliest (-2), latest (-1), max timestamp (-3), earliest local (-4), latest tiered
// (-5), earliest pending upload (-6), or the first offset at/after a timestamp; answered on each
// partition's owner shard.
#include "broker/async.h"
#include "broker/broker.h"
#include "broker/errors.h"
#include "broker/handlers/handlers.h"

namespace weir::broker {

namespace {

struct Lookup {
  std::int16_t error = 0;
  std::int64_t timestamp = -1;
  std::int64_t offset = -1;
  std::int32_t leader_epoch = -1;
};

constexpr std::int64_t kLatest = -1;
constexpr std::int64_t kEarliest = -2;
constexpr std::int64_t kMaxTimestamp = -3;
constexpr std::int64_t kEarliestLocal = -4;

Lookup lookup(Partition* p, std::int64_t timestamp, std::int32_t current_leader_epoch) {
  Lookup r;
  if (p == nullptr) {
    r.error = code(ErrorCode::kUnknownTopicOrPartition);
    return r;
  }
  if (current_leader_epoch >= 0 && current_leader_epoch != p->leader_epoch()) {
    r.error = code(current_leader_epoch > p->leader_epoch() ? ErrorCode::kUnknownLeaderEpoch
                                                             : ErrorCode::kFencedLeaderEpoch);
    return r;
  }
  const auto& log = p->log();
  if (timestamp == kLatest) {
    r.offset = p->high_watermark();
    r.leader_epoch = p->leader_epoch();
  } else if (timestamp == kEarliest || timestamp == kEarliestLocal) {
    r.offset = log.log_start_offset();
    r.leader_epoch = p->leader_epoch();
  } else if (timestamp == kMaxTimestamp) {
    if (auto m = log.max_timestamp()) {
      r.timestamp = m->timestamp_ms;
      r.offset = m->offset;
      r.leader_epoch = m->leader_epoch;
    }
  } else if (timestamp >= 0) {
    if (auto f = log.find_offset_by_timestamp(timestamp)) {
      r.timestamp = f->timestamp_ms;
      r.offset = f->offset;
      r.leader_epoch = f->leader_epoch;
    }
  }
  // Other negative values (tiered-storage lookups) find nothing without remote storage.
  return r;
}

}  // namespace

boost::asio::awaitable<HandlerResult<ListOffsetsHandler::Response>> ListOffsetsHandler::handle(RequestContext& ctx,
                                                                                               Request& req) {
  Broker& broker = ctx.broker;
  FanOut<Lookup> fan;
  std::vector<std::optional<Lookup>> immediate;
  for (const auto& t : req.topics) {
    const bool exists = broker.topic_exists(t.name);
    for (const auto& p : t.partitions) {
      if (!exists) {
        Lookup unknown;
        unknown.error = code(ErrorCode::kUnknownTopicOrPartition);
        immediate.emplace_back(unknown);
        continue;
      }
      immediate.emplace_back(std::nullopt);
      const std::size_t shard = broker.shards().owner(t.name, p.partition_index);
      fan.add(broker.shards().executor(shard),
              [&broker, shard, topic = t.name, index = p.partition_index, ts = p.timestamp,
               epoch = p.current_leader_epoch]() { return lookup(broker.shards().table(shard).find(topic, index), ts, epoch); });
    }
  }
  auto results = co_await fan.run();
  Response resp;
  std::size_t i = 0;
  std::size_t k = 0;
  for (const auto& t : req.topics) {
    auto& out_topic = resp.topics.emplace_back();
    out_topic.name = t.name;
    for (const auto& p : t.partitions) {
      const Lookup& r = immediate[i] ? *immediate[i] : results[k++];
      ++i;
      auto& out = out_topic.partitions.emplace_back();
      out.partition_index = p.partition_index;
      out.error_code = r.error;
      out.timestamp = r.timestamp;
      out.offset = r.offset;
      out.leader_epoch = r.leader_epoch;
    }
  }
  co_return resp;
}

}  // namespace weir::broker
