// DeleteRecords (advance the log start offset) and OffsetForLeaderEpoch (where an epoch ended),
// each answered on the partition's owner shard.
#include "broker/async.h"
#include "broker/broker.h"
#include "broker/errors.h"
#include "broker/handlers/handlers.h"
#include "broker/storage_errors.h"

namespace weir::broker {

namespace {

struct DeleteOutcome {
  std::int16_t error = 0;
  std::int64_t low_watermark = -1;
};

struct EpochOutcome {
  std::int16_t error = 0;
  std::int32_t leader_epoch = -1;
  std::int64_t end_offset = -1;
};

}  // namespace

boost::asio::awaitable<HandlerResult<DeleteRecordsHandler::Response>> DeleteRecordsHandler::handle(
    RequestContext& ctx, Request& req) {
  Broker& broker = ctx.broker;
  FanOut<DeleteOutcome> fan;
  for (const auto& t : req.topics) {
    const bool exists = broker.topic_exists(t.name);
    for (const auto& p : t.partitions) {
      const std::size_t shard = broker.shards().owner(t.name, p.partition_index);
      fan.add(broker.shards().executor(shard),
              [&broker, shard, exists, topic = t.name, index = p.partition_index, offset = p.offset]() {
                DeleteOutcome o;
                Partition* part = exists ? broker.shards().table(shard).find(topic, index) : nullptr;
                if (part == nullptr) {
                  o.error = code(ErrorCode::kUnknownTopicOrPartition);
                  return o;
                }
                const std::int64_t hw = part->high_watermark();
                // -1 means "up to the high watermark".
                const std::int64_t target = offset == -1 ? hw : offset;
                if (target < 0 || target > hw) {
                  o.error = code(ErrorCode::kOffsetOutOfRange);
                  return o;
                }
                if (target > part->log().log_start_offset()) {
                  if (auto r = part->log().delete_records_before(target); !r) {
                    o.error = code(storage_error_code(r.error()));
                    return o;
                  }
                }
                o.low_watermark = part->log().log_start_offset();
                return o;
              });
    }
  }
  auto results = co_await fan.run();
  Response resp;
  std::size_t i = 0;
  for (const auto& t : req.topics) {
    auto& out_topic = resp.topics.emplace_back();
    out_topic.name = t.name;
    for (const auto& p : t.partitions) {
      auto& out = out_topic.partitions.emplace_back();
      out.partition_index = p.partition_index;
      out.error_code = results[i].error;
      out.low_watermark = results[i].low_watermark;
      ++i;
    }
  }
  co_return resp;
}

boost::asio::awaitable<HandlerResult<OffsetForLeaderEpochHandler::Response>> OffsetForLeaderEpochHandler::handle(
    RequestContext& ctx, Request& req) {
  Broker& broker = ctx.broker;
  FanOut<EpochOutcome> fan;
  for (const auto& t : req.topics) {
    const bool exists = broker.topic_exists(t.topic);
    for (const auto& p : t.partitions) {
      const std::size_t shard = broker.shards().owner(t.topic, p.partition);
      fan.add(broker.shards().executor(shard), [&broker, shard, exists, topic = t.topic, index = p.partition,
                                                current = p.current_leader_epoch, wanted = p.leader_epoch]() {
        EpochOutcome o;
        Partition* part = exists ? broker.shards().table(shard).find(topic, index) : nullptr;
        if (part == nullptr) {
          o.error = code(ErrorCode::kUnknownTopicOrPartition);
          return o;
        }
        if (current >= 0 && current != part->leader_epoch()) {
          o.error = code(current > part->leader_epoch() ? ErrorCode::kUnknownLeaderEpoch
                                                        : ErrorCode::kFencedLeaderEpoch);
          return o;
        }
        if (wanted == part->leader_epoch()) {
          o.leader_epoch = wanted;
          o.end_offset = part->log().log_end_offset();
        } else if (auto found = part->log().end_offset_for_epoch(wanted)) {
          o.leader_epoch = found->first;
          o.end_offset = found->second;
        }
        return o;
      });
    }
  }
  auto results = co_await fan.run();
  Response resp;
  std::size_t i = 0;
  for (const auto& t : req.topics) {
    auto& out_topic = resp.topics.emplace_back();
    out_topic.topic = t.topic;
    for (const auto& p : t.partitions) {
      auto& out = out_topic.partitions.emplace_back();
      out.partition = p.partition;
      out.error_code = results[i].error;
      out.leader_epoch = results[i].leader_epoch;
      out.end_offset = results[i].end_offset;
      ++i;
    }
  }
  co_return resp;
}

}  // namespace weir::broker
