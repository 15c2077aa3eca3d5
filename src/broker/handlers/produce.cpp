// Produce: append each partition's batches on the partition's owner shard, all partitions at
// once; with acks=all (and flush.on.acks.all) answer only after the data is fdatasync'd by the
// group-commit flusher.
#include "broker/async.h"
#include "broker/broker.h"
#include "broker/errors.h"
#include "broker/storage_errors.h"
#include "broker/handlers/handlers.h"
#include "protocol/record/batch_splitter.h"

namespace weir::broker {

namespace {

struct PartitionOutcome {
  std::int16_t error = 0;
  std::int64_t base_offset = -1;
  std::int64_t log_append_time_ms = -1;
  std::int64_t log_start_offset = -1;
  std::string error_message;
  bool appended = false;
  bool flush_due = false;  // flush.messages reached: answered only once flushed, as Kafka flushes inline
};

PartitionOutcome failed(std::int16_t error) {
  PartitionOutcome o;
  o.error = error;
  return o;
}

// Producer fields of each batch, read from the headers; empty when the framing is broken (the
// append then refuses the request anyway).
std::vector<txn::BatchInfo> batch_infos(std::span<const std::byte> bytes) {
  std::vector<txn::BatchInfo> out;
  record::BatchSplitter splitter(bytes);
  for (;;) {
    auto next = splitter.next();
    if (!next) return {};
    if (!*next) break;
    const auto& b = **next;
    const std::int32_t count = b.last_offset_delta() + 1;
    const std::int64_t last_seq = b.base_sequence() < 0 ? -1 : (static_cast<std::int64_t>(b.base_sequence()) + b.last_offset_delta()) % 2147483648LL;
    out.push_back(txn::BatchInfo{b.has_producer_id() ? b.producer_id() : -1, b.producer_epoch(), b.base_sequence(),
                                 static_cast<std::int32_t>(last_seq), count, b.max_timestamp(),
                                 b.is_transactional()});
  }
  return out;
}

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

}  // namespace

boost::asio::awaitable<HandlerResult<ProduceHandler::Response>> ProduceHandler::handle(RequestContext& ctx,
                                                                                       Request& req) {
  Broker& broker = ctx.broker;
  const std::int16_t version = ctx.version();
  const bool valid_acks = req.acks == -1 || req.acks == 0 || req.acks == 1;

  // Resolve every partition first, then start all appends at once.
  struct Target {
    std::size_t topic_index;
    std::size_t partition_index;
    std::string topic;
  };
  std::vector<Target> targets;
  Response resp;
  FanOut<PartitionOutcome> fan;
  CompressedBatches::Produce compressed(broker.compressed_batches(), ctx.client,
                                        broker.request_stats(ctx.client.shard));
  std::vector<std::optional<PartitionOutcome>> immediate;
  for (std::size_t ti = 0; ti < req.topic_data.size(); ++ti) {
    auto& td = req.topic_data[ti];
    auto& out_topic = resp.responses.emplace_back();
    out_topic.name = td.name;
    out_topic.topic_id = td.topic_id;
    std::optional<std::string> name;
    if (version >= 13) {
      name = broker.topic_name(td.topic_id);
    } else {
      name = td.name;
    }
    for (std::size_t pi = 0; pi < td.partition_data.size(); ++pi) {
      auto& pd = td.partition_data[pi];
      auto& out_part = out_topic.partition_responses.emplace_back();
      out_part.index = pd.index;
      targets.push_back(Target{ti, pi, name.value_or("")});
      if (!valid_acks) {
        immediate.emplace_back(failed(code(ErrorCode::kInvalidRequiredAcks)));
        continue;
      }
      if (!name || !broker.topic_exists(*name)) {
        immediate.emplace_back(
            failed(code(version >= 13 ? ErrorCode::kUnknownTopicId : ErrorCode::kUnknownTopicOrPartition)));
        continue;
      }
      // Kafka refuses a partition entry without record batches as an invalid record set.
      if (!pd.records || pd.records->empty()) {
        immediate.emplace_back(failed(code(ErrorCode::kInvalidRecord)));
        continue;
      }
      // ProduceRequest.validateRecords, as KafkaApis applies it before the log sees anything:
      // magic 2 only, no zstd before v7, exactly one batch per partition.
      if (const std::int16_t e = framing_error(*pd.records, version); e != 0) {
        immediate.emplace_back(failed(e));
        continue;
      }
      immediate.emplace_back(std::nullopt);
      const std::size_t shard = broker.shards().owner(*name, pd.index);
      auto* records = &*pd.records;
      const storage::RecordsSummaries* summaries = compressed.add(std::as_bytes(std::span(*records)));
      fan.add(broker.shards().executor(shard), [&broker, shard, topic = *name, index = pd.index, records, summaries]() {
        PartitionOutcome o;
        Partition* p = broker.shards().table(shard).find(topic, index);
        if (p == nullptr) {
          o.error = code(ErrorCode::kUnknownTopicOrPartition);
          return o;
        }
        std::span<std::byte> batches(reinterpret_cast<std::byte*>(records->data()), records->size());
        // Idempotence: a retried batch is answered with the offsets it was first written at.
        std::vector<txn::BatchInfo> infos = batch_infos(batches);
        auto check = p->producers().check(infos);
        switch (check.outcome) {
          case txn::ProducerCheck::kOk:
            break;
          case txn::ProducerCheck::kDuplicate:
            o.base_offset = check.duplicate->first_offset;
            o.log_start_offset = p->log().log_start_offset();
            return o;
          case txn::ProducerCheck::kInvalidProducerEpoch:
            o.error = code(ErrorCode::kInvalidProducerEpoch);
            return o;
          case txn::ProducerCheck::kOutOfOrderSequence:
            o.error = code(ErrorCode::kOutOfOrderSequenceNumber);
            return o;
        }
        auto appended = p->log().append_as_leader(batches, p->leader_epoch(), summaries);
        if (!appended) {
          o.error = code(storage_error_code(appended.error()));
          o.error_message = broker.compressed_batches().error_message(appended.error());
          return o;
        }
        // Recorded from the batches as stored (maxTimestamp as the log set it), as a rebuild
        // from the log after a restart sees them.
        p->producers().update(batch_infos(batches), appended->first_offset);
        // One replica: everything appended is replicated, so the high watermark is the log end.
        p->log().update_high_watermark(p->log().log_end_offset());
        o.base_offset = appended->first_offset;
        o.log_append_time_ms = appended->log_append_time_ms;
        o.log_start_offset = appended->log_start_offset;
        o.appended = true;
        std::uint64_t messages = 0;
        for (const auto& b : infos) messages += static_cast<std::uint64_t>(b.record_count);
        p->count_produced(records->size(), messages);
        o.flush_due = p->log().unflushed_messages() >= p->log().config().flush_messages;
        p->notify_watchers();
        return o;
      });
    }
  }
  // Compressed batches are checked on worker threads first (compressed_batches.h).
  co_await compressed.run();
  compressed.release();
  std::vector<PartitionOutcome> done = co_await fan.run();

  // Durability: acks=all (with flush.on.acks.all) and partitions past flush.messages wait for
  // the flush cycle that covers these appends.
  const bool durable_acks = req.acks == -1 && broker.flush_on_acks_all();
  std::vector<std::pair<std::string, std::int32_t>> to_sync;
  std::size_t next_done = 0;
  std::vector<PartitionOutcome> outcomes;
  outcomes.reserve(targets.size());
  for (std::size_t i = 0; i < targets.size(); ++i) {
    if (immediate[i]) {
      outcomes.push_back(*immediate[i]);
    } else {
      outcomes.push_back(done[next_done++]);
      if (outcomes.back().appended && (durable_acks || outcomes.back().flush_due)) {
        const auto& t = targets[i];
        to_sync.emplace_back(t.topic, req.topic_data[t.topic_index].partition_data[t.partition_index].index);
      }
    }
  }
  if (!to_sync.empty()) {
    const std::int16_t sync_error = co_await broker.sync_partitions(to_sync);
    if (sync_error != 0) {
      for (auto& o : outcomes) {
        if (o.appended && (durable_acks || o.flush_due)) {
          o.error = sync_error;
          o.base_offset = -1;
        }
      }
    }
  }
  if (req.acks == 0) co_return std::nullopt;

  for (std::size_t i = 0; i < targets.size(); ++i) {
    const auto& t = targets[i];
    auto& out = resp.responses[t.topic_index].partition_responses[t.partition_index];
    const auto& o = outcomes[i];
    out.error_code = o.error;
    out.base_offset = o.base_offset;
    out.log_append_time_ms = o.log_append_time_ms;
    out.log_start_offset = o.log_start_offset;
    if (!o.error_message.empty() && o.error != 0) out.error_message = o.error_message;
  }
  co_return resp;
}

}  // namespace weir::broker
