// Produce: checks each partition's entry as Kafka's KafkaApis does before the log sees it, then
// hands the valid ones to the partition service, which appends them on their owner shards (all
// at once) and answers once each is acknowledged as acks asks (acks=all with flush.on.acks.all:
// after the group-commit flush covering it).
#include "broker/broker.h"
#include "broker/compressed_batches.h"
#include "broker/errors.h"
#include "broker/handlers/handlers.h"
#include "broker/partition_service.h"
#include "protocol/record/batch_splitter.h"

namespace weir::broker {

namespace {

using PartitionResponse = ProduceHandler::Response::PartitionProduceResponse;

// The checks Kafka's ProduceRequest.validateRecords makes on a partition's records (v3+).
std::int16_t framing_error(const std::vector<std::uint8_t>& records, std::int16_t version) {
  record::BatchSplitter splitter(std::as_bytes(std::span<const std::uint8_t>(records)));
  auto first = splitter.next();
  if (!first || !*first) return 0;  // broken framing: the log's validation answers it
  const auto& batch = **first;
  if (batch.magic() != 2) return code(ErrorCode::kInvalidRecord);
  if (version < 7 && batch.compression_id() == 4) return code(ErrorCode::kUnsupportedCompressionType);
  auto second = splitter.next();
  if (second && *second) return code(ErrorCode::kInvalidRecord);
  return 0;
}

// The error a partition entry is answered with before any append, 0 if it goes to the log.
std::int16_t entry_error(const Broker& broker, const std::optional<std::string>& topic,
                         const std::optional<std::vector<std::uint8_t>>& records, std::int16_t acks,
                         std::int16_t version) {
  if (acks != -1 && acks != 0 && acks != 1) return code(ErrorCode::kInvalidRequiredAcks);
  if (!topic || !broker.topic_exists(*topic)) {
    return code(version >= 13 ? ErrorCode::kUnknownTopicId : ErrorCode::kUnknownTopicOrPartition);
  }
  // Kafka refuses a partition entry without record batches as an invalid record set.
  if (!records || records->empty()) return code(ErrorCode::kInvalidRecord);
  // ProduceRequest.validateRecords, as KafkaApis applies it before the log sees anything:
  // magic 2 only, no zstd before v7, exactly one batch per partition.
  return framing_error(*records, version);
}

void answer(PartitionResponse& out, const PartitionAppend& o, const CompressedBatches& compressed) {
  out.error_code = o.error;
  out.base_offset = o.base_offset;
  out.log_append_time_ms = o.log_append_time_ms;
  out.log_start_offset = o.log_start_offset;
  if (o.error == 0) return;
  if (o.storage_error) {
    out.error_message = compressed.error_message(*o.storage_error);  // names a decompression limit
  } else if (!o.error_message.empty()) {
    out.error_message = o.error_message;
  }
}

// ProduceRequest.hasTransactionalRecords: a partition's (first) batch is transactional.
bool has_transactional_records(const ProduceHandler::Request& req) {
  for (const auto& td : req.topic_data) {
    for (const auto& pd : td.partition_data) {
      if (!pd.records) continue;
      record::BatchSplitter splitter(std::as_bytes(std::span<const std::uint8_t>(*pd.records)));
      auto first = splitter.next();
      if (first && *first && (**first).is_transactional()) return true;
    }
  }
  return false;
}

}  // namespace

boost::asio::awaitable<HandlerResult<ProduceHandler::Response>> ProduceHandler::handle(RequestContext& ctx,
                                                                                       Request& req) {
  Broker& broker = ctx.broker;
  const std::int16_t version = ctx.version();
  Response resp;
  CompressedBatches::Produce compressed(broker.compressed_batches(), ctx.client, broker.request_stats(ctx.client.shard));
  // Kafka: transactional records need the request's transactional.id (else every partition is
  // refused with TRANSACTIONAL_ID_AUTHORIZATION_FAILED, as an unauthorized one is).
  const bool unauthorized_transactional = !req.transactional_id && has_transactional_records(req);
  std::vector<ProduceSpec> specs;
  std::vector<PartitionResponse*> appended;  // the answer of each spec
  resp.responses.reserve(req.topic_data.size());
  for (auto& td : req.topic_data) {
    auto& out_topic = resp.responses.emplace_back();
    out_topic.name = td.name;
    out_topic.topic_id = td.topic_id;
    out_topic.partition_responses.reserve(td.partition_data.size());
    const std::optional<std::string> name = version >= 13 ? broker.topic_name(td.topic_id) : td.name;
    for (auto& pd : td.partition_data) {
      auto& out = out_topic.partition_responses.emplace_back();
      out.index = pd.index;
      const std::int16_t e = unauthorized_transactional ? code(ErrorCode::kTransactionalIdAuthorizationFailed)
                                                        : entry_error(broker, name, pd.records, req.acks, version);
      if (e != 0) {
        PartitionAppend refused;
        refused.error = e;
        answer(out, refused, broker.compressed_batches());
        continue;
      }
      auto& records = *pd.records;
      std::span<std::byte> bytes(reinterpret_cast<std::byte*>(records.data()), records.size());
      specs.push_back(ProduceSpec{PartitionRef{*name, pd.index}, bytes, compressed.add(bytes)});
      appended.push_back(&out);
    }
  }
  // Compressed batches are checked on worker threads first; the turn of this connection passes on
  // right before the appends are posted, so they keep the connection's request order.
  co_await compressed.run();
  compressed.release();
  std::vector<PartitionAppend> outcomes;
  if (!specs.empty()) {
    ProduceTxn txn{req.transactional_id, version};
    outcomes = co_await broker.partitions().append(std::move(specs), static_cast<Acks>(req.acks), std::move(txn));
  }
  if (req.acks == 0) co_return std::nullopt;
  for (std::size_t i = 0; i < outcomes.size(); ++i) answer(*appended[i], outcomes[i], broker.compressed_batches());
  co_return resp;
}

}  // namespace weir::broker
