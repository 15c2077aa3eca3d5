// ReplicationQuota: one side of a broker's replication throttle (Kafka's ReplicationQuotaManager):
// the leader side limits what this broker sends to out-of-sync followers, the follower side what
// it fetches while it is behind; each applies only to the partitions a topic's
// leader.replication.throttled.replicas / follower.replication.throttled.replicas name for this
// broker ("*" for all of them).
//
// The rate is measured as Kafka's SimpleRate over replication.quota.window.num samples of
// replication.quota.window.size.seconds: the bytes of the samples still in the window divided by
// the time since the oldest of them started (at least one window). Bytes of every throttled
// partition count, in sync or not (Kafka counts both so the total stays under the rate); the
// quota is exceeded while that rate is above the bound (leader.replication.throttled.rate /
// follower.replication.throttled.rate, unlimited by default).
//
// Threading: shared by every shard and the metadata path; a mutex guards it. Time comes in as
// now_ms (steady milliseconds).
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace weir::broker {

// The partitions of one topic a throttle applies to on this broker.
struct ThrottledPartitions {
  bool all = false;
  std::set<std::int32_t> partitions;
  auto operator<=>(const ThrottledPartitions&) const = default;
};

// A topic's *.replication.throttled.replicas value ("", "*", or "partition:broker,..." as the
// topic config validator accepts) as it applies to `broker`: null when it names nothing here.
std::optional<ThrottledPartitions> throttled_partitions_for(std::string_view value, std::int32_t broker);

class ReplicationQuota {
 public:
  static constexpr std::int64_t kUnlimited = std::numeric_limits<std::int64_t>::max();

  ReplicationQuota(std::int32_t samples, std::int32_t window_seconds);

  // The bound in bytes per second (kUnlimited: no bound).
  void set_rate(std::int64_t bytes_per_second);
  [[nodiscard]] std::int64_t rate() const;
  // Replaces the throttled partitions of every topic.
  void set_throttled(std::map<std::string, ThrottledPartitions, std::less<>> topics);
  [[nodiscard]] bool throttled(std::string_view topic, std::int32_t partition) const;
  [[nodiscard]] bool any_throttled() const;

  void record(std::int64_t bytes, std::int64_t now_ms);
  [[nodiscard]] bool exceeded(std::int64_t now_ms);
  // The measured rate, bytes per second.
  [[nodiscard]] double measure(std::int64_t now_ms);

 private:
  struct Sample {
    double value = 0;
    std::int64_t start_ms = 0;
    std::int64_t last_event_ms = 0;
    void reset(std::int64_t now) {
      value = 0;
      start_ms = now;
      last_event_ms = now;
    }
  };
  void purge(std::int64_t now_ms);
  double measure_locked(std::int64_t now_ms);

  const std::int32_t samples_;
  const std::int64_t window_ms_;
  mutable std::mutex mu_;
  std::int64_t rate_ = kUnlimited;
  std::map<std::string, ThrottledPartitions, std::less<>> topics_;
  std::vector<Sample> ring_;  // samples_ + 1 (one overlapping the window's start), as Kafka keeps
  std::size_t current_ = 0;
};

}  // namespace weir::broker
