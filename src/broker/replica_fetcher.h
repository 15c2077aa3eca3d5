// ReplicaFetcher: the follower side of replication for the partitions one shard follows from one
// leader broker (Kafka's ReplicaFetcherThread; weir runs one per source broker on each executor,
// so every partition it touches is its own shard's). It sends Fetch with this broker's
// ReplicaState (id, broker epoch), each partition at its log end with its last fetched epoch and
// the leader epoch it follows, and acts on the answers:
//   - data: appended as the leader wrote it, high watermark and log start following the leader;
//   - DivergingEpoch: the log is truncated to where it agrees with the leader's;
//   - OFFSET_OUT_OF_RANGE: truncated to the leader's log end, or restarted at its log start;
//   - leadership errors (NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH,
//     unknown topic): the partition waits replica.fetch.backoff.ms, then tries again (the metadata
//     moves it to another fetcher when the leadership changed);
//   - a failed request: the connection is closed; every partition waits the backoff.
// With flush.on.acks.all a fetch asks for a higher offset only once the data below it is
// synced, so the leader's high watermark never counts data a follower could lose in a crash.
//
// Threading: created, used and stopped on its shard's executor.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "base/uuid.h"
#include "broker/partition_service.h"
#include "broker/replica_link.h"
#include "broker/replication_quota.h"

namespace weir::broker {

struct ReplicaFetcherOptions {
  std::int32_t self = -1;
  std::int32_t wait_max_ms = 500;                  // replica.fetch.wait.max.ms
  std::int32_t min_bytes = 1;                      // replica.fetch.min.bytes
  std::int32_t max_bytes = 10 * 1024 * 1024;       // replica.fetch.response.max.bytes
  std::int32_t partition_max_bytes = 1024 * 1024;  // replica.fetch.max.bytes
  std::int32_t backoff_ms = 1000;                  // replica.fetch.backoff.ms
  std::int32_t socket_timeout_ms = 30000;          // replica.socket.timeout.ms
  bool durable = true;                             // flush.on.acks.all
  std::string rack;                                // broker.rack (the request's rack id)
  // The follower side of the replication throttle (null: none): a partition it covers is left
  // out of the fetch while it lags the leader's high watermark and the quota is exceeded; the
  // bytes fetched of covered partitions are recorded. Outlives the fetcher.
  ReplicationQuota* quota = nullptr;
};

class ReplicaFetcher : public std::enable_shared_from_this<ReplicaFetcher> {
 public:
  ReplicaFetcher(boost::asio::any_io_executor executor, std::size_t shard, PartitionService& partitions,
                 std::int32_t leader, ReplicaFetcherOptions options, ReplicaChannelFactory channels,
                 std::function<std::int64_t()> broker_epoch);
  ReplicaFetcher(const ReplicaFetcher&) = delete;
  ReplicaFetcher& operator=(const ReplicaFetcher&) = delete;
  ~ReplicaFetcher();

  // Follows `ref` from this fetcher's leader at leader_epoch (replacing what it followed).
  void add(const PartitionRef& ref, const Uuid& topic_id, std::int32_t leader_epoch);
  void remove(const PartitionRef& ref);
  [[nodiscard]] bool empty() const { return partitions_.empty(); }
  [[nodiscard]] bool follows(const PartitionRef& ref) const;
  // Where the leader is (from the metadata); a change closes the connection.
  void set_endpoint(const std::string& host, std::int32_t port);
  // Starts the loop (which keeps the fetcher alive until it ends).
  void start();
  // Ends the loop; partitions are dropped.
  void stop();

 private:
  struct Followed {
    Uuid topic_id;
    std::int32_t leader_epoch = -1;
    std::int64_t delayed_until_ms = 0;  // steady ms
    // Kafka's isReplicaInSync for the throttle: the last answer left no lag behind the leader's
    // high watermark (unknown until the first answer).
    bool caught_up = false;
  };
  struct Key {
    std::string topic;
    std::int32_t partition = -1;
    auto operator<=>(const Key&) const = default;
  };

  boost::asio::awaitable<void> run();
  boost::asio::awaitable<void> sleep_ms(std::int64_t ms);
  // One Fetch round; false when the request failed (the caller backs off).
  boost::asio::awaitable<bool> fetch_once();
  boost::asio::awaitable<void> reset_out_of_range(const Key& key);
  void delay(const Key& key);
  [[nodiscard]] static std::int64_t now_ms();

  boost::asio::any_io_executor executor_;
  std::size_t shard_;
  PartitionService& partitions_service_;
  std::int32_t leader_;
  ReplicaFetcherOptions options_;
  ReplicaChannelFactory channels_;
  std::function<std::int64_t()> broker_epoch_;
  std::map<Key, Followed> partitions_;
  std::string host_;
  std::int32_t port_ = 0;
  std::unique_ptr<ReplicaChannel> channel_;
  bool reconnect_ = false;  // the endpoint changed: a new channel before the next round
  boost::asio::steady_timer wake_;
  bool stopped_ = false;
};

}  // namespace weir::broker
