#include "broker/replica_fetcher.h"

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <span>
#include <vector>

#include <spdlog/spdlog.h>

#include "broker/errors.h"
#include "broker/follower_fetch.h"

namespace weir::broker {

namespace asio = boost::asio;

namespace {

constexpr std::int64_t kEarliest = -2;
constexpr std::int64_t kLatest = -1;

}  // namespace

ReplicaFetcher::ReplicaFetcher(asio::any_io_executor executor, std::size_t shard, PartitionService& partitions,
                               std::int32_t leader, ReplicaFetcherOptions options, ReplicaChannelFactory channels,
                               std::function<std::int64_t()> broker_epoch)
    : executor_(executor),
      shard_(shard),
      partitions_service_(partitions),
      leader_(leader),
      options_(std::move(options)),
      channels_(std::move(channels)),
      broker_epoch_(std::move(broker_epoch)),
      wake_(executor) {}

ReplicaFetcher::~ReplicaFetcher() = default;

std::int64_t ReplicaFetcher::now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void ReplicaFetcher::add(const PartitionRef& ref, const Uuid& topic_id, std::int32_t leader_epoch) {
  Followed& f = partitions_[Key{ref.topic, ref.partition}];
  f.topic_id = topic_id;
  f.leader_epoch = leader_epoch;
  f.delayed_until_ms = 0;
  f.caught_up = false;
  wake_.cancel();
}

void ReplicaFetcher::remove(const PartitionRef& ref) { partitions_.erase(Key{ref.topic, ref.partition}); }

bool ReplicaFetcher::follows(const PartitionRef& ref) const {
  return partitions_.contains(Key{ref.topic, ref.partition});
}

void ReplicaFetcher::set_endpoint(const std::string& host, std::int32_t port) {
  if (host == host_ && port == port_) return;
  host_ = host;
  port_ = port;
  reconnect_ = true;
  if (channel_) channel_->close();
  wake_.cancel();
}

void ReplicaFetcher::start() {
  auto self = shared_from_this();
  asio::co_spawn(executor_, [self]() { return self->run(); }, asio::detached);
}

void ReplicaFetcher::stop() {
  stopped_ = true;
  partitions_.clear();
  if (channel_) channel_->close();
  wake_.cancel();
}

asio::awaitable<void> ReplicaFetcher::sleep_ms(std::int64_t ms) {
  wake_.expires_after(std::chrono::milliseconds(std::max<std::int64_t>(0, ms)));
  boost::system::error_code ec;
  co_await wake_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
}

void ReplicaFetcher::delay(const Key& key) {
  auto it = partitions_.find(key);
  if (it != partitions_.end()) it->second.delayed_until_ms = now_ms() + options_.backoff_ms;
}

asio::awaitable<void> ReplicaFetcher::run() {
  spdlog::info("event=replica_fetcher_started leader={} shard={}", leader_, shard_);
  while (!stopped_) {
    if (partitions_.empty() || port_ == 0) {
      co_await sleep_ms(options_.backoff_ms);
      continue;
    }
    if (reconnect_ || !channel_) {
      if (channel_) channel_->close();
      channel_ = channels_(executor_, leader_, host_, port_);
      reconnect_ = false;
    }
    const bool ok = co_await fetch_once();
    if (!ok) {
      if (stopped_) break;
      if (channel_) channel_->close();
      channel_.reset();
      co_await sleep_ms(options_.backoff_ms);
    }
  }
  if (channel_) channel_->close();
  spdlog::info("event=replica_fetcher_stopped leader={} shard={}", leader_, shard_);
}

asio::awaitable<bool> ReplicaFetcher::fetch_once() {
  const std::int64_t now = now_ms();
  // The partitions to fetch, each at its log end (and, when durable, synced up to it first).
  std::vector<Key> keys;
  std::vector<PartitionRef> unsynced;
  std::int64_t next_due = now + options_.backoff_ms;
  for (const auto& [key, f] : partitions_) {
    if (f.delayed_until_ms > now) {
      next_due = std::min(next_due, f.delayed_until_ms);
      continue;
    }
    Partition* p = partitions_service_.local(shard_, PartitionRef{key.topic, key.partition});
    if (p == nullptr || p->is_leader()) continue;
    if (options_.quota != nullptr && !f.caught_up && options_.quota->throttled(key.topic, key.partition) &&
        options_.quota->exceeded(now)) {
      continue;  // Kafka's shouldFollowerThrottle: asked again next round
    }
    keys.push_back(key);
    if (follower_must_sync(*p, options_.durable)) {
      unsynced.push_back(PartitionRef{key.topic, key.partition});
    }
  }
  if (keys.empty()) {
    co_await sleep_ms(next_due - now);
    co_return true;
  }
  if (!unsynced.empty()) {
    // The leader counts a follower's data once the follower fetches past it: only synced data.
    const std::int16_t synced = co_await partitions_service_.sync(unsynced);
    if (synced != 0) {
      spdlog::warn("event=replica_sync_failed leader={} error={}", leader_, synced);
      co_return false;
    }
    if (stopped_) co_return true;
  }
  protocol::FetchRequest req;
  req.replica_id = options_.self;
  req.replica_state.replica_id = options_.self;
  req.replica_state.replica_epoch = broker_epoch_ ? broker_epoch_() : -1;
  req.max_wait_ms = options_.wait_max_ms;
  req.min_bytes = options_.min_bytes;
  req.max_bytes = options_.max_bytes;
  req.isolation_level = 0;
  req.session_id = 0;
  req.session_epoch = -1;  // no fetch session: every request names its partitions
  req.rack_id = options_.rack;
  std::vector<Key> sent;
  for (const Key& key : keys) {
    auto it = partitions_.find(key);
    Partition* p = partitions_service_.local(shard_, PartitionRef{key.topic, key.partition});
    if (it == partitions_.end() || p == nullptr) continue;
    if (req.topics.empty() || req.topics.back().topic != key.topic) {
      auto& t = req.topics.emplace_back();
      t.topic = key.topic;
      t.topic_id = it->second.topic_id;
    }
    auto& fp = req.topics.back().partitions.emplace_back();
    fp.partition = key.partition;
    fp.current_leader_epoch = it->second.leader_epoch;
    const FollowerPosition at = follower_position(*p);
    fp.fetch_offset = at.fetch_offset;
    fp.last_fetched_epoch = at.last_fetched_epoch;
    fp.log_start_offset = at.log_start_offset;
    fp.partition_max_bytes = options_.partition_max_bytes;
    sent.push_back(key);
  }
  auto resp = co_await channel_->fetch(req, std::int64_t{options_.wait_max_ms} + options_.socket_timeout_ms);
  if (stopped_) co_return true;
  if (!resp) {
    spdlog::info("event=replica_fetch_failed leader={} error=\"{}\"", leader_, resp.error());
    co_return false;
  }
  if (resp->error_code != 0) {
    spdlog::info("event=replica_fetch_refused leader={} error={}", leader_, resp->error_code);
    co_return false;
  }
  std::vector<Key> out_of_range;
  for (const auto& t : resp->responses) {
    for (const auto& pr : t.partitions) {
      // v13+ answers by topic id.
      std::string topic = t.topic;
      if (topic.empty()) {
        for (const auto& [key, f] : partitions_) {
          if (f.topic_id == t.topic_id) {
            topic = key.topic;
            break;
          }
        }
      }
      const Key key{topic, pr.partition_index};
      auto it = partitions_.find(key);
      if (it == partitions_.end()) continue;  // no longer followed from here
      Partition* p = partitions_service_.local(shard_, PartitionRef{key.topic, key.partition});
      if (p == nullptr || p->is_leader() || p->leader_epoch() != it->second.leader_epoch) continue;
      LeaderAnswer answer;
      answer.error = pr.error_code;
      answer.diverging_epoch = pr.diverging_epoch.epoch;
      answer.diverging_end_offset = pr.diverging_epoch.end_offset;
      if (pr.records) answer.records = std::as_bytes(std::span<const std::uint8_t>(*pr.records));
      answer.high_watermark = pr.high_watermark;
      answer.log_start_offset = pr.log_start_offset;
      const FollowerOutcome out = apply_leader_answer(*p, answer);
      switch (out.step) {
        case FollowerStep::kAppended:
          it->second.caught_up = out.caught_up;
          if (options_.quota != nullptr && !answer.records.empty() &&
              options_.quota->throttled(key.topic, key.partition)) {
            options_.quota->record(static_cast<std::int64_t>(answer.records.size()), now_ms());
          }
          break;
        case FollowerStep::kTruncated:
          break;
        case FollowerStep::kOutOfRange:
          out_of_range.push_back(key);
          break;
        case FollowerStep::kBackOff:
          if (!out.message.empty()) {
            spdlog::warn("event=replica_append_failed partition={}-{} leader={} error={} message=\"{}\"", key.topic,
                         key.partition, leader_, out.error, out.message);
            it->second.caught_up = false;
          } else {
            spdlog::info("event=replica_fetch_partition_error partition={}-{} leader={} error={}", key.topic,
                         key.partition, leader_, out.error);
          }
          delay(key);
          break;
      }
    }
  }
  for (const Key& key : out_of_range) co_await reset_out_of_range(key);
  co_return true;
}

asio::awaitable<void> ReplicaFetcher::reset_out_of_range(const Key& key) {
  auto it = partitions_.find(key);
  if (it == partitions_.end() || !channel_) co_return;
  const std::int32_t epoch = it->second.leader_epoch;
  std::int64_t offsets[2] = {-1, -1};
  const std::int64_t which[2] = {kEarliest, kLatest};
  for (int i = 0; i < 2; ++i) {
    protocol::ListOffsetsRequest req;
    req.replica_id = options_.self;
    auto& t = req.topics.emplace_back();
    t.name = key.topic;
    auto& lp = t.partitions.emplace_back();
    lp.partition_index = key.partition;
    lp.current_leader_epoch = epoch;
    lp.timestamp = which[i];
    auto resp = co_await channel_->list_offsets(req, options_.socket_timeout_ms);
    if (stopped_) co_return;
    if (!resp || resp->topics.empty() || resp->topics[0].partitions.empty() ||
        resp->topics[0].partitions[0].error_code != 0) {
      delay(key);
      co_return;
    }
    offsets[i] = resp->topics[0].partitions[0].offset;
  }
  Partition* p = partitions_service_.local(shard_, PartitionRef{key.topic, key.partition});
  if (p == nullptr || p->is_leader() || p->leader_epoch() != epoch) co_return;
  spdlog::info("event=replica_out_of_range partition={}-{} leader={} log_end_offset={} leader_log_start={} "
               "leader_log_end={}",
               key.topic, key.partition, leader_, p->log().log_end_offset(), offsets[0], offsets[1]);
  if (p->reset_to_leader(offsets[0], offsets[1]) != 0) delay(key);
}

}  // namespace weir::broker
