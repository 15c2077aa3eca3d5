// Fetch: the partition service reads whole batches from each partition's owner shard and
// long-polls until min_bytes are available or max_wait_ms passes, woken as soon as the high
// watermark of a watched partition moves (the last stable offset at read_committed, which reads
// only up to it and names the aborted transactions overlapping the data returned).
// Fetch sessions (KIP-227, broker/fetch_session.h) decide which partitions a fetch reads (an
// incremental fetch reads its whole session) and which of them the answer carries.
//
// As Kafka: partitions whose topic is unknown are answered after the others without being read,
// and do not end the long poll; read errors do. The answer groups consecutive partitions of the
// same topic.
#include "broker/broker.h"
#include "broker/errors.h"
#include "broker/fetch_session.h"
#include "broker/handlers/handlers.h"
#include "broker/partition_service.h"

namespace weir::broker {

namespace asio = boost::asio;

namespace {

// The partitions to read (their topics exist), and where each stands in the fetch context.
struct Wanted {
  std::vector<FetchSpec> specs;
  std::vector<std::size_t> index;  // into FetchContext::partitions()
};

// A partition answered without reading: its topic or partition does not exist.
struct Unknown {
  std::size_t index;
  std::int16_t error;
};

// The request's partitions (and forgotten partitions) with topic ids resolved to names.
FetchSessionRequest session_request(const FetchHandler::Request& req, std::int16_t version, const Catalog& catalog) {
  FetchSessionRequest out;
  out.version = version;
  out.session_id = req.session_id;
  out.session_epoch = req.session_epoch;
  out.from_follower = (version >= 15 ? req.replica_state.replica_id : req.replica_id) >= 0;
  auto name_of = [&](const std::string& topic, const Uuid& id) {
    return version >= 13 ? catalog.name_of(id).value_or("") : topic;
  };
  for (const auto& t : req.topics) {
    const Uuid id = version >= 13 ? t.topic_id : Uuid::zero();
    const std::string name = name_of(t.topic, id);
    for (const auto& p : t.partitions) {
      out.partitions.push_back(FetchPartitionSpec{id, name, p.partition, p.fetch_offset, p.log_start_offset,
                                                  p.partition_max_bytes, p.current_leader_epoch, p.last_fetched_epoch});
    }
  }
  dedupe_fetch_partitions(out.partitions);
  for (const auto& t : req.forgotten_topics_data) {
    const Uuid id = version >= 13 ? t.topic_id : Uuid::zero();
    const std::string name = name_of(t.topic, id);
    for (std::int32_t p : t.partitions)
      out.forgotten.push_back(FetchPartitionSpec{.topic_id = id, .topic = name, .partition = p});
  }
  return out;
}

// Splits the context's partitions into those to read and those whose topic is unknown.
void classify(const FetchContext& fctx, const Catalog& catalog, Wanted& wanted, std::vector<Unknown>& unknown) {
  const auto& parts = fctx.partitions();
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const FetchPartitionSpec& p = parts[i];
    if (p.topic.empty() && !p.topic_id.is_zero()) {
      unknown.push_back(Unknown{i, code(ErrorCode::kUnknownTopicId)});
      continue;
    }
    const TopicInfo* info = catalog.find(p.topic);
    if (info == nullptr || p.partition < 0 || p.partition >= info->partitions) {
      unknown.push_back(Unknown{i, code(ErrorCode::kUnknownTopicOrPartition)});
      continue;
    }
    // A session keeps the id its topic had; a topic deleted and created again has a new one.
    const bool stale_id = !p.topic_id.is_zero() && p.topic_id != info->id;
    wanted.specs.push_back(FetchSpec{PartitionRef{p.topic, p.partition}, p.fetch_offset, p.current_leader_epoch,
                                     p.max_bytes, stale_id ? code(ErrorCode::kInconsistentTopicId) : std::int16_t{0},
                                     p.log_start_offset, p.last_fetched_epoch});
    wanted.index.push_back(i);
  }
}

// The answer's partitions, in the order the session says, consecutive partitions of a topic
// grouped; `reads` holds the data of the partitions read (the outcomes before reads.size()).
void answer(FetchHandler::Response& resp, const FetchHandler::Request& req, const FetchContext& fctx,
            const FetchSessionAnswer& session, const std::vector<FetchPartitionOutcome>& outcomes,
            std::vector<PartitionRead>& reads) {
  resp.error_code = session.error_code;
  resp.session_id = session.session_id;
  for (std::size_t k : session.send) {
    const FetchPartitionOutcome& o = outcomes[k];
    const FetchPartitionSpec& spec = fctx.partitions()[o.index];
    const bool same_topic =
        !resp.responses.empty() && (spec.topic_id.is_zero() ? resp.responses.back().topic == spec.topic
                                                            : resp.responses.back().topic_id == spec.topic_id);
    if (!same_topic) {
      auto& t = resp.responses.emplace_back();
      t.topic = spec.topic;
      t.topic_id = spec.topic_id;
    }
    auto& out = resp.responses.back().partitions.emplace_back();
    out.partition_index = spec.partition;
    out.error_code = o.error_code;
    out.high_watermark = o.high_watermark;
    out.last_stable_offset = o.last_stable_offset;
    out.log_start_offset = o.log_start_offset;
    // As Kafka sends them: a partition that was read has its aborted transactions in range under
    // read_committed (those overlapping the data returned) and null otherwise or after a read
    // error; a partition of an unknown topic has an empty list.
    const bool was_read = k < reads.size();
    if (!was_read || (req.isolation_level == 1 && o.error_code == 0)) {
      auto& aborted = out.aborted_transactions.emplace();
      if (was_read && reads[k].aborted) {
        for (const storage::AbortedTxn& a : *reads[k].aborted) {
          auto& t = aborted.emplace_back();
          t.producer_id = a.producer_id;
          t.first_offset = a.first_offset;
        }
      }
    } else {
      out.aborted_transactions.reset();
    }
    out.records.emplace();
    if (was_read) {
      out.records_in_files = std::move(reads[k].records);
      out.preferred_read_replica = reads[k].preferred_read_replica;
      if (reads[k].diverging) {
        out.diverging_epoch.epoch = reads[k].diverging->first;
        out.diverging_epoch.end_offset = reads[k].diverging->second;
      }
    }
  }
}

}  // namespace

asio::awaitable<HandlerResult<FetchHandler::Response>> FetchHandler::handle(RequestContext& ctx, Request& req) {
  Broker& broker = ctx.broker;
  const std::int16_t version = ctx.version();
  const std::shared_ptr<const Catalog> catalog = broker.catalog();
  FetchSessionCache& sessions = broker.fetch_sessions();
  const auto names = [&catalog](const Uuid& id) { return catalog->name_of(id); };
  FetchContext fctx = sessions.new_context(session_request(req, version, *catalog), names, broker.now_ms());

  Wanted wanted;
  std::vector<Unknown> unknown;
  classify(fctx, *catalog, wanted, unknown);
  std::vector<PartitionRead> reads;
  if (!wanted.specs.empty()) {
    // isolation_level 1 (read_committed) reads up to the last stable offset.
    const ReadBound bound = req.isolation_level == 1 ? ReadBound::kLastStable : ReadBound::kHighWatermark;
    FetchLimits limits{req.max_bytes, req.min_bytes, req.max_wait_ms, bound};
    // A follower replica (ReplicaState from v15, ReplicaId before) reads up to the log end.
    limits.replica_id = version >= 15 ? req.replica_state.replica_id : req.replica_id;
    limits.replica_epoch = version >= 15 ? req.replica_state.replica_epoch : -1;
    if (limits.replica_id < 0) limits.replica_id = -1;
    // Fetch v11 added the consumer's rack (Kafka's ClientMetadata from v11).
    limits.client_metadata = limits.replica_id < 0 && version >= 11;
    if (limits.client_metadata) limits.client_rack = req.rack_id;
    reads = co_await broker.partitions().fetch(limits, wanted.specs);
  }

  // What the answer says, in Kafka's order: the partitions read, then the unknown ones.
  std::vector<FetchPartitionOutcome> outcomes;
  outcomes.reserve(reads.size() + unknown.size());
  for (std::size_t i = 0; i < reads.size(); ++i) {
    const PartitionRead& r = reads[i];
    outcomes.push_back(FetchPartitionOutcome{wanted.index[i], r.error, r.high_watermark, r.log_start_offset,
                                             r.size() > 0 || r.diverging.has_value() || r.preferred_read_replica >= 0,
                                             r.error == 0 ? r.last_stable_offset : -1});
  }
  for (const Unknown& u : unknown) outcomes.push_back(FetchPartitionOutcome{u.index, u.error, -1, -1, false});
  const FetchSessionAnswer session = sessions.finish(fctx, outcomes, broker.now_ms());

  Response resp;
  answer(resp, req, fctx, session, outcomes, reads);
  co_return resp;
}

}  // namespace weir::broker
