// Fetch: read whole batches from each partition's owner shard; long-poll until min_bytes are
// available or max_wait_ms passes, woken as soon as an append lands on a watched partition.
// Fetch sessions (KIP-227) are not offered yet: the response session id 0 makes the Java client
// send full fetches, as it does when a Kafka broker's session cache is full.
#include <chrono>

#include <boost/asio/steady_timer.hpp>

#include "broker/async.h"
#include "broker/broker.h"
#include "broker/errors.h"
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
  std::vector<std::uint8_t> records;
};

struct Wanted {
  std::string topic;
  std::int32_t partition;
  std::int64_t fetch_offset;
  std::int32_t current_leader_epoch;
  std::int32_t max_bytes;
  std::int16_t error;  // set when the topic cannot be resolved
};

PartitionRead read_partition(Partition* p, const Wanted& w, std::int32_t max_bytes, bool min_one) {
  PartitionRead r;
  if (p == nullptr) {
    r.error = code(ErrorCode::kUnknownTopicOrPartition);
    return r;
  }
  r.leader_epoch = p->leader_epoch();
  r.high_watermark = p->high_watermark();
  r.log_start_offset = p->log().log_start_offset();
  if (w.current_leader_epoch >= 0) {
    if (w.current_leader_epoch > p->leader_epoch()) {
      r.error = code(ErrorCode::kUnknownLeaderEpoch);
      return r;
    }
    if (w.current_leader_epoch < p->leader_epoch()) {
      r.error = code(ErrorCode::kFencedLeaderEpoch);
      return r;
    }
  }
  auto read = p->log().read(w.fetch_offset, max_bytes, r.high_watermark, min_one);
  if (!read) {
    r.error = code(storage_error_code(read.error()));
    return r;
  }
  if (auto copied = read->append_to(r.records); !copied) {
    r.error = code(storage_error_code(copied.error()));
    r.records.clear();
  }
  p->count_fetched(r.records.size());  // bytes read for a fetch (a long-poll re-read counts again)
  return r;
}

}  // namespace

asio::awaitable<HandlerResult<FetchHandler::Response>> FetchHandler::handle(RequestContext& ctx, Request& req) {
  Broker& broker = ctx.broker;
  const std::int16_t version = ctx.version();
  std::vector<Wanted> wanted;
  Response resp;
  for (const auto& t : req.topics) {
    std::optional<std::string> name = version >= 13 ? broker.topic_name(t.topic_id) : std::optional(t.topic);
    std::int16_t topic_error = 0;
    if (!name) {
      topic_error = code(ErrorCode::kUnknownTopicId);
    } else if (!broker.topic_exists(*name)) {
      topic_error = code(version >= 13 ? ErrorCode::kUnknownTopicId : ErrorCode::kUnknownTopicOrPartition);
    }
    for (const auto& p : t.partitions) {
      wanted.push_back(Wanted{name.value_or(""), p.partition, p.fetch_offset, p.current_leader_epoch,
                              p.partition_max_bytes, topic_error});
    }
  }

  const std::int32_t response_max_bytes = req.max_bytes > 0 ? req.max_bytes : std::numeric_limits<std::int32_t>::max();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(std::max(0, req.max_wait_ms));
  std::vector<PartitionRead> reads;
  for (;;) {
    FanOut<PartitionRead> fan;
    std::vector<std::size_t> fanned;
    reads.assign(wanted.size(), PartitionRead{});
    for (std::size_t i = 0; i < wanted.size(); ++i) {
      const Wanted& w = wanted[i];
      if (w.error != 0) {
        reads[i].error = w.error;
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
    bool any_error = false;
    for (std::size_t k = 0; k < fanned.size(); ++k) {
      auto& r = results[k];
      // The response limit is soft only for the first partition with data.
      if (total > 0 && total + static_cast<std::int64_t>(r.records.size()) > response_max_bytes) r.records.clear();
      total += static_cast<std::int64_t>(r.records.size());
      any_error = any_error || r.error != 0;
      reads[fanned[k]] = std::move(r);
    }
    for (const auto& w : wanted) any_error = any_error || w.error != 0;
    if (total >= std::max(1, req.min_bytes) || any_error || std::chrono::steady_clock::now() >= deadline ||
        fanned.empty()) {
      break;
    }
    // Wait for an append to any watched partition, or the deadline.
    auto ex = co_await asio::this_coro::executor;
    auto timer = std::make_shared<asio::steady_timer>(ex);
    timer->expires_at(deadline);
    FanOut<bool> watch;
    for (std::size_t i : fanned) {
      const Wanted& w = wanted[i];
      const std::size_t shard = broker.shards().owner(w.topic, w.partition);
      watch.add(broker.shards().executor(shard), [&broker, shard, w, timer, ex]() {
        Partition* p = broker.shards().table(shard).find(w.topic, w.partition);
        if (p == nullptr) return false;
        if (p->log().log_end_offset() > w.fetch_offset) {
          asio::post(ex, [timer]() { timer->cancel(); });
          return true;
        }
        std::weak_ptr<asio::steady_timer> weak = timer;
        p->watch([weak, ex]() {
          asio::post(ex, [weak]() {
            if (auto t = weak.lock()) t->cancel();
          });
        });
        return true;
      });
    }
    co_await watch.run();
    boost::system::error_code ec;
    co_await timer->async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }

  resp.session_id = 0;
  std::size_t i = 0;
  for (const auto& t : req.topics) {
    auto& out_topic = resp.responses.emplace_back();
    out_topic.topic = t.topic;
    out_topic.topic_id = t.topic_id;
    for (const auto& p : t.partitions) {
      auto& out = out_topic.partitions.emplace_back();
      auto& r = reads[i++];
      out.partition_index = p.partition;
      out.error_code = r.error;
      out.high_watermark = r.high_watermark;
      out.last_stable_offset = r.high_watermark;
      out.log_start_offset = r.log_start_offset;
      // read_committed gets the aborted transactions in range (none until transactions land);
      // read_uncommitted gets null, as Kafka sends.
      if (req.isolation_level == 1) {
        out.aborted_transactions.emplace();
      } else {
        out.aborted_transactions.reset();
      }
      out.records = std::move(r.records);
    }
  }
  co_return resp;
}

}  // namespace weir::broker
