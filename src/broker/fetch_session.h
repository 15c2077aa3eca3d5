// Incremental fetch sessions (KIP-227), as Apache Kafka's broker keeps them.
//
// A fetch names a session by (session_id, session_epoch):
//   (0, -1)  sessionless full fetch;           (0 or X, 0)  full fetch creating a new session
//   (X, -1)  closes X, then a sessionless full fetch;  (X, N>0)  incremental fetch on X at epoch N.
// A full fetch that creates a session answers a new random id; the session remembers, per
// partition, what the fetcher asked (offset, max bytes, epochs) and what it was last told (high
// watermark, log start offset). An incremental fetch lists only partitions whose ask changed
// (plus forgotten ones to drop); the broker reads every partition of the session and answers only
// those with records, a changed high watermark or log start offset, or an error. Partitions that
// returned records move to the end of the session's order, so a response size limit rotates
// between partitions.
//
// The cache is split into 8 shards as Kafka's is: a shard owns one range of session ids, holds
// max.incremental.fetch.session.cache.slots / 8 sessions, and new sessions go to the shards in
// turn. When a shard is full, a new session may evict the least recently used session idle longer
// than eviction_ms, else the smallest session that is older than eviction_ms and smaller than the
// new one (followers' sessions are privileged: only followers may evict them, and they may evict
// any consumer's). Otherwise no session is created (the fetch answers session id 0).
//
// weir bounds memory further: each shard caches at most max_cached_partitions / 8 partitions. A
// new session that would pass it is not created; an incremental fetch that would grow a session
// past it drops the session and answers FETCH_SESSION_ID_NOT_FOUND, so the client starts over.
//
// Pure logic: no I/O, time comes in as now_ms. Thread-safe: each shard has a mutex, taken for
// every read or write of its sessions (a session belongs to the shard of its id); none is held
// while the caller reads logs.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/uuid.h"

namespace weir::broker {

inline constexpr std::int32_t kInvalidFetchSessionId = 0;
inline constexpr std::int32_t kInitialFetchSessionEpoch = 0;
inline constexpr std::int32_t kFinalFetchSessionEpoch = -1;

// The epoch a session expects next: the final epoch stays final, and after INT32_MAX comes 1
// (0 would mean "create a session").
std::int32_t next_fetch_session_epoch(std::int32_t epoch);

// A partition as a fetch asks for it (and as a session remembers the ask).
struct FetchPartitionSpec {
  Uuid topic_id;      // zero before Fetch v13
  std::string topic;  // empty: the topic id is not known to this broker (yet)
  std::int32_t partition = 0;
  std::int64_t fetch_offset = 0;
  std::int64_t log_start_offset = -1;  // the fetcher's own (followers)
  std::int32_t max_bytes = 0;
  std::int32_t current_leader_epoch = -1;
  std::int32_t last_fetched_epoch = -1;
};

// Keeps the first position of each partition and the last values asked for it, as a fetch
// request listing a partition twice means to Kafka. Partitions are the same when topic id, topic
// name and index are.
void dedupe_fetch_partitions(std::vector<FetchPartitionSpec>& partitions);

struct FetchSessionRequest {
  std::int16_t version = 0;
  std::int32_t session_id = kInvalidFetchSessionId;
  std::int32_t session_epoch = kFinalFetchSessionEpoch;
  bool from_follower = false;
  std::vector<FetchPartitionSpec> partitions;  // deduplicated, in request order
  std::vector<FetchPartitionSpec> forgotten;   // topic_id, topic and partition are what count
};

class FetchSessionCache;

// What one fetch reads, decided before reading: the partitions (in the order to read them) and
// how the answer is shaped afterwards (FetchSessionCache::finish).
class FetchContext {
 public:
  enum class Kind { kSessionError, kSessionless, kFull, kIncremental };

  [[nodiscard]] Kind kind() const { return kind_; }
  // kSessionError: the top-level error code of the answer (which then lists no partitions).
  [[nodiscard]] std::int16_t error_code() const { return error_code_; }
  [[nodiscard]] const std::vector<FetchPartitionSpec>& partitions() const { return partitions_; }

 private:
  friend class FetchSessionCache;
  struct Session;

  Kind kind_ = Kind::kSessionless;
  std::int16_t error_code_ = 0;
  std::int32_t error_session_id_ = kInvalidFetchSessionId;  // kSessionError: the id answered
  std::vector<FetchPartitionSpec> partitions_;
  // kFull: the session to create is privileged / keyed by topic id.
  bool from_follower_ = false;
  bool uses_topic_ids_ = false;
  // kIncremental: the session and the epoch the request carried.
  std::shared_ptr<Session> session_;
  std::int32_t request_epoch_ = 0;
};

// What an answer says about one partition, as far as sessions care.
struct FetchPartitionOutcome {
  std::size_t index = 0;  // into FetchContext::partitions()
  std::int16_t error_code = 0;
  std::int64_t high_watermark = -1;
  std::int64_t log_start_offset = -1;
  bool has_records = false;
  std::int64_t last_stable_offset = -1;  // -1: not known (an error); a move is news, as the HW's
};

struct FetchSessionAnswer {
  std::int16_t error_code = 0;
  std::int32_t session_id = kInvalidFetchSessionId;
  std::vector<std::size_t> send;  // positions in the outcomes given to finish(), in order
};

struct FetchSessionConfig {
  std::int32_t cache_slots = 1000;             // max.incremental.fetch.session.cache.slots
  std::int64_t eviction_ms = 120000;           // Kafka's fixed minimum idle time before eviction
  std::int64_t max_cached_partitions = 1000000;  // weir.fetch.session.cache.max.partitions
  std::int32_t shards = 8;                     // Kafka's shard count
  std::uint64_t seed = 0;                      // session id generator; 0: random_device
};

class FetchSessionCache {
 public:
  using TopicNames = std::function<std::optional<std::string>(const Uuid&)>;

  explicit FetchSessionCache(FetchSessionConfig config);
  ~FetchSessionCache();
  FetchSessionCache(const FetchSessionCache&) = delete;
  FetchSessionCache& operator=(const FetchSessionCache&) = delete;

  // Decides how to serve a fetch and applies its session part (close, update, epoch step).
  // `names` resolves topic ids a session holds without a name (topics created since).
  FetchContext new_context(FetchSessionRequest req, const TopicNames& names, std::int64_t now_ms);

  // After reading: given what the answer says about each partition (in answer order), creates the
  // session (kFull), or records what the session was told and picks the partitions to send
  // (kIncremental).
  FetchSessionAnswer finish(FetchContext& ctx, std::span<const FetchPartitionOutcome> outcomes,
                            std::int64_t now_ms);

  // Observability and tests.
  [[nodiscard]] std::size_t size() const;
  [[nodiscard]] std::int64_t cached_partitions() const;
  [[nodiscard]] bool contains(std::int32_t session_id) const;
  [[nodiscard]] std::uint64_t evictions() const { return evictions_.load(std::memory_order_relaxed); }
  [[nodiscard]] std::uint64_t incremental_fetches() const {
    return incremental_fetches_.load(std::memory_order_relaxed);
  }

 private:
  struct Shard;
  using Session = FetchContext::Session;

  // Null for an id outside every shard's range.
  Shard* shard_of(std::int32_t session_id) const;
  static FetchContext no_shard_context(std::int32_t session_id);
  FetchContext incremental_context(Shard& shard, FetchSessionRequest& req, const TopicNames& names,
                                   std::int64_t now_ms);
  FetchSessionAnswer create_session(FetchContext& ctx, std::span<const FetchPartitionOutcome> outcomes,
                                    std::int64_t now_ms);
  FetchSessionAnswer answer_incremental(FetchContext& ctx, std::span<const FetchPartitionOutcome> outcomes);

  FetchSessionConfig config_;
  std::int32_t id_range_;  // session ids per shard
  std::vector<std::unique_ptr<Shard>> shards_;
  std::atomic<std::uint64_t> next_shard_{0};
  std::atomic<std::uint64_t> evictions_{0};
  std::atomic<std::uint64_t> incremental_fetches_{0};
};

}  // namespace weir::broker
