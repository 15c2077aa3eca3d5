// DeleteRecords (advance the log start offset) and OffsetForLeaderEpoch (where an epoch ended),
// each answered by the partition service on the partition's owner shard.
#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "broker/partition_service.h"

namespace weir::broker {

boost::asio::awaitable<HandlerResult<DeleteRecordsHandler::Response>> DeleteRecordsHandler::handle(RequestContext& ctx,
                                                                                                   Request& req) {
  std::vector<DeleteRecordsSpec> specs;
  for (const auto& t : req.topics) {
    for (const auto& p : t.partitions)
      specs.push_back(DeleteRecordsSpec{PartitionRef{t.name, p.partition_index}, p.offset});
  }
  const std::vector<DeleteRecordsOutcome> results = co_await ctx.broker.partitions().delete_records(specs);
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
  std::vector<EpochQuery> queries;
  for (const auto& t : req.topics) {
    for (const auto& p : t.partitions) {
      queries.push_back(EpochQuery{PartitionRef{t.topic, p.partition}, p.current_leader_epoch, p.leader_epoch});
    }
  }
  const std::vector<EpochEndOffset> results = co_await ctx.broker.partitions().end_offsets_for_epochs(queries);
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
