// DescribeProducers (kafka-transactions describe-producers): per requested partition, the
// idempotent and transactional producers its producer state table knows, read on the
// partition's owner shard, ordered by producer id.
//
// Errors as Kafka answers them: an illegal topic name gives INVALID_TOPIC_EXCEPTION and an
// unknown topic UNKNOWN_TOPIC_OR_PARTITION, on every requested partition and with the exception's
// message; a partition the topic does not have gives UNKNOWN_TOPIC_OR_PARTITION without one.
#include <algorithm>

#include "broker/async.h"
#include "broker/broker.h"
#include "broker/errors.h"
#include "broker/handlers/handlers.h"

namespace weir::broker {

namespace {

using Response = DescribeProducersHandler::Response;
using ProducerState = Response::ProducerState;

// Errors.UNKNOWN_TOPIC_OR_PARTITION.message(), which Kafka sends for an unknown topic.
constexpr std::string_view kUnknownTopicMessage = "This server does not host this topic-partition.";

struct PartitionOutcome {
  std::int16_t error = 0;
  std::vector<ProducerState> producers;
};

std::vector<ProducerState> active_producers(const storage::ProducerStateTable& table) {
  std::vector<ProducerState> out;
  out.reserve(table.size());
  for (const auto& [producer_id, entry] : table.entries()) {
    auto& s = out.emplace_back();
    s.producer_id = producer_id;
    s.producer_epoch = entry.epoch;
    s.last_sequence = entry.batches.empty() ? -1 : entry.batches.back().last_seq;
    s.last_timestamp = entry.last_timestamp_ms;
    // The epoch of the coordinator that wrote the producer's last marker, and its open
    // transaction's first offset (-1 when none).
    s.coordinator_epoch = entry.coordinator_epoch;
    s.current_txn_start_offset = entry.current_txn_first_offset.value_or(-1);
  }
  std::ranges::sort(out, {}, &ProducerState::producer_id);
  return out;
}

}  // namespace

boost::asio::awaitable<HandlerResult<DescribeProducersHandler::Response>> DescribeProducersHandler::handle(
    RequestContext& ctx, Request& req) {
  Broker& broker = ctx.broker;
  auto catalog = broker.catalog();

  // Per requested topic: nullopt when its partitions are looked up, else the topic's error.
  struct TopicError {
    std::int16_t code;
    std::string message;
  };
  std::vector<std::optional<TopicError>> topic_errors;
  FanOut<PartitionOutcome> fan;
  for (const auto& t : req.topics) {
    if (auto why = metadata::topic_name_error(t.name)) {
      topic_errors.emplace_back(TopicError{.code = code(ErrorCode::kInvalidTopicException), .message = *why});
      continue;
    }
    const TopicInfo* info = catalog->find(t.name);
    if (info == nullptr) {
      topic_errors.emplace_back(
          TopicError{.code = code(ErrorCode::kUnknownTopicOrPartition), .message = std::string(kUnknownTopicMessage)});
      continue;
    }
    topic_errors.emplace_back(std::nullopt);
    for (const std::int32_t index : t.partition_indexes) {
      const bool in_topic = index >= 0 && index < info->partitions;
      const std::size_t shard = broker.shards().owner(t.name, index);
      fan.add(broker.shards().executor(shard), [&broker, shard, in_topic, topic = t.name, index]() {
        PartitionOutcome o;
        Partition* part = in_topic ? broker.shards().table(shard).find(topic, index) : nullptr;
        if (part == nullptr) {
          // A partition of the topic not (yet) hosted here, or one the topic does not have.
          o.error = code(in_topic ? ErrorCode::kNotLeaderOrFollower : ErrorCode::kUnknownTopicOrPartition);
          return o;
        }
        o.producers = active_producers(part->producers());
        return o;
      });
    }
  }
  auto outcomes = co_await fan.run();

  Response resp;
  std::size_t next = 0;
  for (std::size_t i = 0; i < req.topics.size(); ++i) {
    const auto& t = req.topics[i];
    auto& out_topic = resp.topics.emplace_back();
    out_topic.name = t.name;
    const std::optional<TopicError>& topic_error = topic_errors[i];
    for (const std::int32_t index : t.partition_indexes) {
      auto& out = out_topic.partitions.emplace_back();
      out.partition_index = index;
      if (topic_error.has_value()) {
        out.error_code = topic_error->code;
        out.error_message = topic_error->message;
        continue;
      }
      out.error_code = outcomes[next].error;
      out.active_producers = std::move(outcomes[next].producers);
      ++next;
    }
  }
  co_return resp;
}

}  // namespace weir::broker
