// WriteTxnMarkers: the transaction coordinator (or an admin client: `kafka-transactions abort`)
// asks this broker to end producers' transactions on partitions it leads. Every marker of the
// request is written by the partition service (a COMMIT or ABORT control batch per partition,
// acks=all), and the answer gives one error per partition, grouped by producer id as Kafka's
// response is: UNKNOWN_TOPIC_OR_PARTITION for a partition not hosted here,
// TRANSACTION_COORDINATOR_FENCED for a coordinator epoch older than the producer's last marker,
// INVALID_PRODUCER_EPOCH for an epoch older than the producer's (v2, transaction version 2: not
// newer than the producer's, a repeated marker excepted).
#include <map>

#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "broker/partition_service.h"

namespace weir::broker {

namespace {

using Response = WriteTxnMarkersHandler::Response;

}  // namespace

boost::asio::awaitable<HandlerResult<Response>> WriteTxnMarkersHandler::handle(RequestContext& ctx, Request& req) {
  std::vector<MarkerSpec> specs;
  for (const auto& m : req.markers) {
    for (const auto& t : m.topics) {
      for (const std::int32_t index : t.partition_indexes) {
        // v2 carries the transaction's version (0 before: no epoch bump per transaction).
        specs.push_back(MarkerSpec{PartitionRef{t.name, index}, m.producer_id, m.producer_epoch, m.coordinator_epoch,
                                   m.transaction_result, m.transaction_version});
      }
    }
  }
  // Written, and for __consumer_offsets the group coordinator told (Broker::write_txn_markers).
  std::vector<MarkerSpec> written = specs;
  const std::vector<std::int16_t> errors = co_await ctx.broker.write_txn_markers(std::move(written));

  // One result per producer id (a producer named twice is answered once, as Kafka merges them),
  // its topics and partitions in request order.
  Response resp;
  std::map<std::int64_t, std::size_t> by_producer;
  std::size_t i = 0;
  for (const auto& m : req.markers) {
    auto [it, added] = by_producer.try_emplace(m.producer_id, resp.markers.size());
    if (added) resp.markers.emplace_back().producer_id = m.producer_id;
    auto& out = resp.markers[it->second];
    for (const auto& t : m.topics) {
      auto& out_topic = out.topics.emplace_back();
      out_topic.name = t.name;
      for (const std::int32_t index : t.partition_indexes) {
        auto& p = out_topic.partitions.emplace_back();
        p.partition_index = index;
        p.error_code = errors[i++];
      }
    }
  }
  co_return resp;
}

}  // namespace weir::broker
