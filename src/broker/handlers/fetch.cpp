// Fetch: read whole batches from each partition's owner shard; long-poll until min_bytes are
// available or max_wait_ms passes, woken as soon as an append lands on a watched partition.
// Fetch sessions (KIP-227, broker/fetch_session.h) decide which partitions a fetch reads (an
// incremental fetch reads its whole session) and which of them the answer carries.
//
// As Kafka: partitions whose topic is unknown are answered after the others without being read,
// and do not end the long poll; read errors do. The answer groups consecutive partitions of the
// same topic.
#include <chrono>

#include <boost/asio/steady_timer.hpp>

#include "broker/async.h"
#include "broker/broker.h"
#include "broker/errors.h"
#include "broker/fetch_session.h"
#include "broker/storage_errors.h"
#include "broker/handlers/handlers.h"

namespace weir::broker {

namespace asio = boost::asio;

namespace {

struct PartitionRead {
  std::int16_t error = 0;
  std::int64_t high_watermark = -1;
  std::int64_t log_start_offset = -1;
  std::int32_t leader_epoch = -1;
  // The record data, left in the segment files: the connection sends it with sendfile(2).
  std::shared_ptr<const FileBytes> records;
  [[nodiscard]] std::int64_t size() const noexcept { return records ? records->size : 0; }
};

// The slices of a read, as file regions that keep their files open.
std::shared_ptr<const FileBytes> in_files(storage::ReadResult read) {
  auto owner = std::make_shared<const storage::ReadResult>(std::move(read));
  auto bytes = std::make_shared<FileBytes>();
  bytes->regions.reserve(owner->slices.size());
  for (const storage::FileSlice& slice : owner->slices) {
    bytes->regions.push_back(FileRegion{slice.fd(), slice.position, slice.size});
  }
  bytes->size = owner->size_bytes;
  bytes->owner = std::move(owner);
  return bytes;
}

// A partition to read: one of the fetch context's partitions whose topic exists.
struct Wanted {
  std::size_t index;  // into FetchContext::partitions()
  std::string topic;
  std::int32_t partition;
  std::int64_t fetch_offset;
  std::int32_t current_leader_epoch;
  std::int32_t max_bytes;
  std::int16_t error;  // known before reading (a session's topic id that is no longer the topic's)
};

// A partition answered without reading: its topic or partition does not exist.
struct Unknown {
  std::size_t index;
  std::int16_t error;
};

// A failed read tells no offsets (-1), as Kafka's answer does.
PartitionRead failed_read(std::int16_t error) {
  PartitionRead r;
  r.error = error;
  return r;
}

PartitionRead read_partition(Partition* p, const Wanted& w, std::int32_t max_bytes, bool min_one) {
  if (p == nullptr) return failed_read(code(ErrorCode::kUnknownTopicOrPartition));
  PartitionRead r;
  r.leader_epoch = p->leader_epoch();
  r.high_watermark = p->high_watermark();
  r.log_start_offset = p->log().log_start_offset();
  if (w.current_leader_epoch >= 0) {
    if (w.current_leader_epoch > p->leader_epoch()) return failed_read(code(ErrorCode::kUnknownLeaderEpoch));
    if (w.current_leader_epoch < p->leader_epoch()) return failed_read(code(ErrorCode::kFencedLeaderEpoch));
  }
  auto read = p->log().read(w.fetch_offset, max_bytes, r.high_watermark, min_one);
  if (!read) return failed_read(code(storage_error_code(read.error())));
  if (read->size_bytes > 0) r.records = in_files(std::move(*read));
  p->count_fetched(static_cast<std::size_t>(r.size()));  // bytes read for a fetch (a long-poll re-read counts again)
  return r;
}

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
    for (std::int32_t p : t.partitions) out.forgotten.push_back(FetchPartitionSpec{.topic_id = id, .topic = name, .partition = p});
  }
  return out;
}

// Splits the context's partitions into those to read and those whose topic is unknown.
void classify(const FetchContext& fctx, const Catalog& catalog, std::vector<Wanted>& wanted,
              std::vector<Unknown>& unknown) {
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
    wanted.push_back(Wanted{i, p.topic, p.partition, p.fetch_offset, p.current_leader_epoch, p.max_bytes,
                            stale_id ? code(ErrorCode::kInconsistentTopicId) : std::int16_t{0}});
  }
}

// Reads the wanted partitions; waits (long poll) until min_bytes are there, a read fails, or the
// deadline passes.
asio::awaitable<std::vector<PartitionRead>> read_all(Broker& broker, const FetchHandler::Request& req,
                                                     const std::vector<Wanted>& wanted) {
  const std::int32_t response_max_bytes = req.max_bytes > 0 ? req.max_bytes : std::numeric_limits<std::int32_t>::max();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(std::max(0, req.max_wait_ms));
  std::vector<PartitionRead> reads;
  for (;;) {
    FanOut<PartitionRead> fan;
    std::vector<std::size_t> fanned;
    reads.assign(wanted.size(), PartitionRead{});
    bool any_error = false;
    for (std::size_t i = 0; i < wanted.size(); ++i) {
      const Wanted& w = wanted[i];
      if (w.error != 0) {
        reads[i] = failed_read(w.error);
        any_error = true;
        continue;
      }
      const std::size_t shard = broker.shards().owner(w.topic, w.partition);
      const std::int32_t limit = std::min(w.max_bytes, response_max_bytes);
      // Every partition may return one batch above its limit; the response limit below then
      // keeps such an oversized batch only for the first partition with data, as Kafka does.
      const bool min_one = true;
      fanned.push_back(i);
      fan.add(broker.shards().executor(shard), [&broker, shard, w, limit, min_one]() {
        return read_partition(broker.shards().table(shard).find(w.topic, w.partition), w, limit, min_one);
      });
    }
    auto results = co_await fan.run();
    std::int64_t total = 0;
    for (std::size_t k = 0; k < fanned.size(); ++k) {
      auto& r = results[k];
      // The response limit is soft only for the first partition with data. Partitions are read in
      // parallel, each up to its own limit, so a later one that does not fit is left out whole
      // (the client fetches it next); Kafka reads them in turn and sends the batches that still
      // fit. Both keep the response within fetch.max.bytes and always make progress.
      if (total > 0 && total + r.size() > response_max_bytes) r.records.reset();
      total += r.size();
      any_error = any_error || r.error != 0;
      reads[fanned[k]] = std::move(r);
    }
    if (total >= std::max(1, req.min_bytes) || any_error || std::chrono::steady_clock::now() >= deadline ||
        fanned.empty()) {
      break;
    }
    // Wait for an append to any watched partition, or the deadline. A wake-up moves the timer's
    // expiry into the past rather than cancelling its wait: it may run before the wait starts
    // (an append right after a watch was set, while the other partitions' watches are still
    // being set), and a cancel would then be lost and the fetch would sleep to its deadline.
    auto ex = co_await asio::this_coro::executor;
    auto timer = std::make_shared<asio::steady_timer>(ex);
    timer->expires_at(deadline);
    const auto wake = [](asio::steady_timer& t) { t.expires_at(asio::steady_timer::time_point::min()); };
    FanOut<bool> watch;
    for (std::size_t i : fanned) {
      const Wanted& w = wanted[i];
      const std::size_t shard = broker.shards().owner(w.topic, w.partition);
      watch.add(broker.shards().executor(shard), [&broker, shard, w, timer, ex, wake]() {
        Partition* p = broker.shards().table(shard).find(w.topic, w.partition);
        if (p == nullptr) return false;
        if (p->log().log_end_offset() > w.fetch_offset) {
          asio::post(ex, [timer, wake]() { wake(*timer); });
          return true;
        }
        std::weak_ptr<asio::steady_timer> weak = timer;
        p->watch([weak, ex, wake]() {
          asio::post(ex, [weak, wake]() {
            if (auto t = weak.lock()) wake(*t);
          });
        });
        return true;
      });
    }
    co_await watch.run();
    boost::system::error_code ec;
    co_await timer->async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
  co_return reads;
}

}  // namespace

asio::awaitable<HandlerResult<FetchHandler::Response>> FetchHandler::handle(RequestContext& ctx, Request& req) {
  Broker& broker = ctx.broker;
  const std::int16_t version = ctx.version();
  const std::shared_ptr<const Catalog> catalog = broker.catalog();
  FetchSessionCache& sessions = broker.fetch_sessions();
  const auto names = [&catalog](const Uuid& id) { return catalog->name_of(id); };
  FetchContext fctx = sessions.new_context(session_request(req, version, *catalog), names, broker.now_ms());

  std::vector<Wanted> wanted;
  std::vector<Unknown> unknown;
  classify(fctx, *catalog, wanted, unknown);
  std::vector<PartitionRead> reads;
  if (!wanted.empty()) reads = co_await read_all(broker, req, wanted);

  // What the answer says, in Kafka's order: the partitions read, then the unknown ones.
  std::vector<FetchPartitionOutcome> outcomes;
  outcomes.reserve(wanted.size() + unknown.size());
  for (std::size_t i = 0; i < wanted.size(); ++i) {
    const PartitionRead& r = reads[i];
    outcomes.push_back(FetchPartitionOutcome{wanted[i].index, r.error, r.high_watermark, r.log_start_offset,
                                             r.size() > 0});
  }
  for (const Unknown& u : unknown) outcomes.push_back(FetchPartitionOutcome{u.index, u.error, -1, -1, false});
  const FetchSessionAnswer answer = sessions.finish(fctx, outcomes, broker.now_ms());

  Response resp;
  resp.error_code = answer.error_code;
  resp.session_id = answer.session_id;
  for (std::size_t k : answer.send) {
    const FetchPartitionOutcome& o = outcomes[k];
    const FetchPartitionSpec& spec = fctx.partitions()[o.index];
    const bool same_topic = !resp.responses.empty() &&
                            (spec.topic_id.is_zero() ? resp.responses.back().topic == spec.topic
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
    out.last_stable_offset = o.high_watermark;
    out.log_start_offset = o.log_start_offset;
    // As Kafka sends them: a partition that was read has its aborted transactions in range under
    // read_committed (none until transactions land) and null otherwise or after a read error; a
    // partition of an unknown topic has an empty list.
    const bool was_read = k < wanted.size();
    if (!was_read || (req.isolation_level == 1 && o.error_code == 0)) {
      out.aborted_transactions.emplace();
    } else {
      out.aborted_transactions.reset();
    }
    out.records.emplace();
    if (was_read) out.records_in_files = std::move(reads[k].records);
  }
  co_return resp;
}

}  // namespace weir::broker
