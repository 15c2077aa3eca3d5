// ListOffsets: earliest (-2), latest (-1), max timestamp (-3), earliest local (-4), latest tiered
// (-5), earliest pending upload (-6), or the first offset at/after a timestamp; the partition
// service looks each up on the partition's owner shard. Latest at read_committed is the LSO.
#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "broker/partition_service.h"

namespace weir::broker {

boost::asio::awaitable<HandlerResult<ListOffsetsHandler::Response>> ListOffsetsHandler::handle(RequestContext& ctx,
                                                                                               Request& req) {
  std::vector<OffsetQuery> queries;
  // isolation_level 1 (read_committed, v2+): latest is the last stable offset.
  const ReadBound bound = req.isolation_level == 1 ? ReadBound::kLastStable : ReadBound::kHighWatermark;
  for (const auto& t : req.topics) {
    for (const auto& p : t.partitions) {
      queries.push_back(
          OffsetQuery{PartitionRef{t.name, p.partition_index}, p.timestamp, p.current_leader_epoch, bound});
    }
  }
  const std::vector<OffsetLookup> found = co_await ctx.broker.partitions().list_offsets(queries);
  Response resp;
  std::size_t i = 0;
  for (const auto& t : req.topics) {
    auto& out_topic = resp.topics.emplace_back();
    out_topic.name = t.name;
    for (const auto& p : t.partitions) {
      const OffsetLookup& r = found[i++];
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
