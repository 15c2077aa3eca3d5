#include "broker/fetch_session.h"

#include <algorithm>
#include <limits>
#include <list>
#include <mutex>
#include <random>
#include <set>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "base/assert.h"
#include "base/log.h"
#include "broker/errors.h"

namespace weir::broker {

namespace {

std::shared_ptr<spdlog::logger> logger() { return log::get("fetch"); }

// How a session tells its partitions apart: by topic id when it uses ids (a partition whose
// topic is not known yet is the same partition once it is), by name otherwise.
struct SessionKey {
  Uuid topic_id;
  std::string topic;
  std::int32_t partition = 0;
  bool operator==(const SessionKey&) const = default;
};

struct SessionKeyHash {
  std::size_t operator()(const SessionKey& k) const noexcept {
    std::size_t h = std::hash<Uuid>{}(k.topic_id);
    h = h * 31 + std::hash<std::string>{}(k.topic);
    return h * 31 + std::hash<std::int32_t>{}(k.partition);
  }
};

}  // namespace

std::int32_t next_fetch_session_epoch(std::int32_t epoch) {
  if (epoch < 0) return kFinalFetchSessionEpoch;
  if (epoch == std::numeric_limits<std::int32_t>::max()) return 1;
  return epoch + 1;
}

void dedupe_fetch_partitions(std::vector<FetchPartitionSpec>& partitions) {
  std::unordered_map<SessionKey, std::size_t, SessionKeyHash> first;
  std::vector<FetchPartitionSpec> out;
  out.reserve(partitions.size());
  for (auto& p : partitions) {
    auto [it, inserted] = first.try_emplace(SessionKey{p.topic_id, p.topic, p.partition}, out.size());
    if (inserted) {
      out.push_back(std::move(p));
    } else {
      out[it->second] = std::move(p);
    }
  }
  partitions = std::move(out);
}

struct FetchContext::Session {
  struct Cached {
    FetchPartitionSpec ask;
    std::int64_t high_watermark = -1;          // as last answered; -1 after an error
    std::int64_t local_log_start_offset = -1;  // as last answered
    std::int64_t last_stable_offset = -1;      // as last answered
  };

  std::int32_t id = 0;
  bool privileged = false;
  bool uses_topic_ids = false;
  std::int64_t creation_ms = 0;
  std::int64_t last_used_ms = 0;
  std::int32_t epoch = 0;
  // The size the shard indexed this session under (evictable keys, partition count); -1 before.
  std::int64_t cached_size = -1;
  std::list<Cached> order;
  std::unordered_map<SessionKey, std::list<Cached>::iterator, SessionKeyHash> index;

  [[nodiscard]] std::int64_t size() const { return static_cast<std::int64_t>(order.size()); }

  [[nodiscard]] SessionKey key_of(const FetchPartitionSpec& p) const {
    if (uses_topic_ids) return SessionKey{p.topic_id, {}, p.partition};
    return SessionKey{Uuid::zero(), p.topic, p.partition};
  }

  Cached* find(const FetchPartitionSpec& p) {
    auto it = index.find(key_of(p));
    return it == index.end() ? nullptr : &*it->second;
  }

  // False if the partition is already there.
  bool add(FetchPartitionSpec ask, std::int64_t high_watermark, std::int64_t log_start_offset,
           std::int64_t last_stable_offset = -1) {
    SessionKey key = key_of(ask);
    if (index.contains(key)) return false;
    order.push_back(Cached{std::move(ask), high_watermark, log_start_offset, last_stable_offset});
    index.emplace(std::move(key), std::prev(order.end()));
    return true;
  }

  bool remove(const FetchPartitionSpec& p) {
    auto it = index.find(key_of(p));
    if (it == index.end()) return false;
    order.erase(it->second);
    index.erase(it);
    return true;
  }

  void move_to_end(const FetchPartitionSpec& p) {
    auto it = index.find(key_of(p));
    if (it != index.end()) order.splice(order.end(), order, it->second);
  }
};

struct FetchSessionCache::Shard {
  // (privileged, size, id): the first entry is the least valuable session.
  using EvictableKey = std::tuple<bool, std::int64_t, std::int32_t>;

  mutable std::mutex mu;
  std::int32_t number = 0;
  std::int32_t max_entries = 0;
  std::int64_t max_partitions = 0;
  std::unordered_map<std::int32_t, std::shared_ptr<Session>> sessions;
  std::set<std::pair<std::int64_t, std::int32_t>> last_used;  // (last_used_ms, id)
  std::set<EvictableKey> evictable_by_all;         // idle or not, older than eviction_ms
  std::set<EvictableKey> evictable_by_privileged;  // the above plus every unprivileged session
  std::int64_t num_partitions = 0;
  std::mt19937_64 rng;

  static EvictableKey evictable_key(const Session& s) { return {s.privileged, s.cached_size, s.id}; }

  std::int32_t new_session_id(std::int32_t id_range) {
    const std::int32_t low = std::max(1, number * id_range);
    std::uniform_int_distribution<std::int32_t> pick(low, (number + 1) * id_range - 1);
    std::int32_t id = 0;
    do {
      id = pick(rng);
    } while (id == kInvalidFetchSessionId || sessions.contains(id));
    return id;
  }

  // Re-indexes a session after use or change.
  void touch(Session& s, std::int64_t now_ms, std::int64_t eviction_ms) {
    last_used.erase({s.last_used_ms, s.id});
    s.last_used_ms = now_ms;
    last_used.emplace(s.last_used_ms, s.id);
    if (s.cached_size != -1) {
      evictable_by_all.erase(evictable_key(s));
      evictable_by_privileged.erase(evictable_key(s));
      num_partitions -= s.cached_size;
    }
    s.cached_size = s.size();
    const bool old_enough = now_ms - s.creation_ms > eviction_ms;
    if (!s.privileged || old_enough) evictable_by_privileged.insert(evictable_key(s));
    if (old_enough) evictable_by_all.insert(evictable_key(s));
    num_partitions += s.cached_size;
  }

  bool remove(std::int32_t id) {
    auto it = sessions.find(id);
    if (it == sessions.end()) return false;
    Session& s = *it->second;
    last_used.erase({s.last_used_ms, s.id});
    evictable_by_all.erase(evictable_key(s));
    evictable_by_privileged.erase(evictable_key(s));
    num_partitions -= s.cached_size;
    sessions.erase(it);
    WEIR_ASSERT(num_partitions >= 0, "fetch session shard {} counts {} partitions", number, num_partitions);
    return true;
  }

  // Makes room for a new session of `size` partitions: evicts the least recently used session if
  // it has been idle longer than eviction_ms, else the least valuable evictable session if it is
  // worth less than the new one (unprivileged before privileged, then fewer partitions).
  bool try_evict(bool privileged, std::int64_t size, std::int64_t now_ms, std::int64_t eviction_ms) {
    if (last_used.empty()) return false;
    if (const auto& [used_ms, id] = *last_used.begin(); now_ms - used_ms > eviction_ms) {
      logger()->debug("event=fetch_session_evicted {} reason=idle", log::kv("id", id));
      return remove(id);
    }
    const auto& candidates = privileged ? evictable_by_privileged : evictable_by_all;
    if (candidates.empty()) return false;
    const EvictableKey proposed{privileged, size, 0};
    const EvictableKey& least = *candidates.begin();
    if (proposed < least) return false;
    logger()->debug("event=fetch_session_evicted {} {} {}", log::kv("id", std::get<2>(least)),
                    log::kv("partitions", std::get<1>(least)), log::kv("new_session_partitions", size));
    return remove(std::get<2>(least));
  }
};

FetchSessionCache::FetchSessionCache(FetchSessionConfig config) : config_(config) {
  WEIR_ASSERT(config_.shards > 0, "fetch session cache needs shards");
  id_range_ = std::numeric_limits<std::int32_t>::max() / config_.shards;
  std::random_device device;
  for (std::int32_t i = 0; i < config_.shards; ++i) {
    auto shard = std::make_unique<Shard>();
    shard->number = i;
    shard->max_entries = std::max(0, config_.cache_slots) / config_.shards;
    shard->max_partitions = std::max<std::int64_t>(0, config_.max_cached_partitions) / config_.shards;
    shard->rng.seed(config_.seed != 0 ? config_.seed + static_cast<std::uint64_t>(i)
                                      : (static_cast<std::uint64_t>(device()) << 32) ^ device());
    shards_.push_back(std::move(shard));
  }
}

FetchSessionCache::~FetchSessionCache() = default;

FetchSessionCache::Shard* FetchSessionCache::shard_of(std::int32_t session_id) const {
  // Division truncates toward zero, so small negative ids land in shard 0, as in Kafka.
  const std::int32_t n = session_id / id_range_;
  return n >= 0 && n < static_cast<std::int32_t>(shards_.size()) ? shards_[static_cast<std::size_t>(n)].get()
                                                                 : nullptr;
}

FetchContext FetchSessionCache::no_shard_context(std::int32_t session_id) {
  // Kafka fails such a request as a whole (its shard lookup throws): UNKNOWN_SERVER_ERROR, with
  // the session id echoed.
  FetchContext ctx;
  ctx.kind_ = FetchContext::Kind::kSessionError;
  ctx.error_code_ = code(ErrorCode::kUnknownServerError);
  ctx.error_session_id_ = session_id;
  return ctx;
}

FetchContext FetchSessionCache::new_context(FetchSessionRequest req, const TopicNames& names, std::int64_t now_ms) {
  FetchContext ctx;
  const bool full = req.session_epoch == kInitialFetchSessionEpoch || req.session_epoch == kFinalFetchSessionEpoch;
  if (!full) {
    Shard* shard = shard_of(req.session_id);
    if (shard == nullptr) return no_shard_context(req.session_id);
    return incremental_context(*shard, req, names, now_ms);
  }
  if (req.session_id != kInvalidFetchSessionId) {
    // A full fetch naming a session closes it.
    Shard* shard = shard_of(req.session_id);
    if (shard == nullptr) return no_shard_context(req.session_id);
    std::scoped_lock lock(shard->mu);
    if (shard->remove(req.session_id)) logger()->debug("event=fetch_session_closed {}", log::kv("id", req.session_id));
  }
  ctx.kind_ = req.session_epoch == kFinalFetchSessionEpoch ? FetchContext::Kind::kSessionless
                                                           : FetchContext::Kind::kFull;
  ctx.partitions_ = std::move(req.partitions);
  ctx.from_follower_ = req.from_follower;
  ctx.uses_topic_ids_ = req.version >= 13;
  return ctx;
}

FetchContext FetchSessionCache::incremental_context(Shard& shard, FetchSessionRequest& req, const TopicNames& names,
                                                    std::int64_t now_ms) {
  FetchContext ctx;
  ctx.kind_ = FetchContext::Kind::kSessionError;
  std::scoped_lock lock(shard.mu);
  auto it = shard.sessions.find(req.session_id);
  if (it == shard.sessions.end()) {
    logger()->debug("event=fetch_session_error {} error=FETCH_SESSION_ID_NOT_FOUND", log::kv("id", req.session_id));
    ctx.error_code_ = code(ErrorCode::kFetchSessionIdNotFound);
    return ctx;
  }
  std::shared_ptr<Session> session = it->second;
  if (session->epoch != req.session_epoch) {
    logger()->debug("event=fetch_session_error {} error=INVALID_FETCH_SESSION_EPOCH {} {}", log::kv("id", session->id),
                    log::kv("expected_epoch", session->epoch), log::kv("epoch", req.session_epoch));
    ctx.error_code_ = code(ErrorCode::kInvalidFetchSessionEpoch);
    return ctx;
  }
  if (session->uses_topic_ids != (req.version >= 13)) {
    logger()->debug("event=fetch_session_error {} error=FETCH_SESSION_TOPIC_ID_ERROR {} {}", log::kv("id", session->id),
                    log::kv("session_topic_ids", session->uses_topic_ids), log::kv("version", req.version));
    ctx.error_code_ = code(ErrorCode::kFetchSessionTopicIdError);
    return ctx;
  }
  std::size_t added = 0;
  std::size_t updated = 0;
  std::size_t removed = 0;
  for (const auto& p : req.partitions) {
    if (Session::Cached* c = session->find(p)) {
      // The ask changes; the name a session resolved stays.
      std::string topic = std::move(c->ask.topic);
      c->ask = p;
      c->ask.topic = std::move(topic);
      ++updated;
    } else {
      session->add(p, -1, -1);
      ++added;
    }
  }
  for (const auto& p : req.forgotten) removed += session->remove(p) ? 1 : 0;

  if (shard.num_partitions - std::max<std::int64_t>(0, session->cached_size) + session->size() > shard.max_partitions) {
    logger()->warn("event=fetch_session_dropped {} {} reason=cached_partition_limit", log::kv("id", session->id),
                   log::kv("partitions", session->size()));
    shard.remove(session->id);
    ctx.error_code_ = code(ErrorCode::kFetchSessionIdNotFound);
    return ctx;
  }
  if (session->order.empty()) {
    logger()->debug("event=fetch_session_closed {} reason=no_partitions_left", log::kv("id", session->id));
    shard.remove(session->id);
    // Forgotten partitions go after listed ones are added: a request may list and forget the
    // same partition. It is then served without a session.
    ctx.kind_ = FetchContext::Kind::kSessionless;
    ctx.partitions_ = std::move(req.partitions);
    return ctx;
  }
  shard.touch(*session, now_ms, config_.eviction_ms);
  session->epoch = next_fetch_session_epoch(session->epoch);
  incremental_fetches_.fetch_add(1, std::memory_order_relaxed);
  logger()->debug("event=incremental_fetch {} {} {} {} {} {}", log::kv("id", session->id),
                  log::kv("epoch", session->epoch), log::kv("added", added), log::kv("updated", updated),
                  log::kv("removed", removed), log::kv("partitions", session->size()));

  ctx.kind_ = FetchContext::Kind::kIncremental;
  ctx.partitions_.reserve(session->order.size());
  for (auto& c : session->order) {
    if (session->uses_topic_ids && c.ask.topic.empty()) {
      if (auto name = names(c.ask.topic_id)) c.ask.topic = std::move(*name);
    }
    ctx.partitions_.push_back(c.ask);
  }
  ctx.session_ = std::move(session);
  ctx.request_epoch_ = req.session_epoch;
  return ctx;
}

FetchSessionAnswer FetchSessionCache::finish(FetchContext& ctx, std::span<const FetchPartitionOutcome> outcomes,
                                             std::int64_t now_ms) {
  switch (ctx.kind_) {
    case FetchContext::Kind::kSessionError:
      return FetchSessionAnswer{ctx.error_code_, ctx.error_session_id_, {}};
    case FetchContext::Kind::kFull:
      return create_session(ctx, outcomes, now_ms);
    case FetchContext::Kind::kIncremental:
      return answer_incremental(ctx, outcomes);
    case FetchContext::Kind::kSessionless:
      break;
  }
  FetchSessionAnswer answer;
  for (std::size_t i = 0; i < outcomes.size(); ++i) answer.send.push_back(i);
  return answer;
}

FetchSessionAnswer FetchSessionCache::create_session(FetchContext& ctx, std::span<const FetchPartitionOutcome> outcomes,
                                                     std::int64_t now_ms) {
  FetchSessionAnswer answer;
  for (std::size_t i = 0; i < outcomes.size(); ++i) answer.send.push_back(i);
  Shard& shard = *shards_[next_shard_.fetch_add(1, std::memory_order_relaxed) % shards_.size()];
  const auto size = static_cast<std::int64_t>(outcomes.size());
  std::scoped_lock lock(shard.mu);
  if (shard.num_partitions + size > shard.max_partitions) {
    logger()->debug("event=fetch_session_not_created {} reason=cached_partition_limit", log::kv("partitions", size));
    return answer;
  }
  if (static_cast<std::int64_t>(shard.sessions.size()) >= shard.max_entries) {
    if (!shard.try_evict(ctx.from_follower_, size, now_ms, config_.eviction_ms)) {
      logger()->debug("event=fetch_session_not_created {} {} reason=cache_full",
                      log::kv("privileged", ctx.from_follower_), log::kv("partitions", size));
      return answer;
    }
    evictions_.fetch_add(1, std::memory_order_relaxed);
  }
  auto session = std::make_shared<Session>();
  session->id = shard.new_session_id(id_range_);
  session->privileged = ctx.from_follower_;
  session->uses_topic_ids = ctx.uses_topic_ids_;
  session->creation_ms = now_ms;
  session->last_used_ms = now_ms;
  session->epoch = next_fetch_session_epoch(kInitialFetchSessionEpoch);
  for (const auto& o : outcomes) {
    WEIR_ASSERT(o.index < ctx.partitions_.size(), "fetch outcome {} of {} partitions", o.index, ctx.partitions_.size());
    session->add(ctx.partitions_[o.index], o.high_watermark, o.log_start_offset, o.last_stable_offset);
  }
  shard.sessions.emplace(session->id, session);
  shard.touch(*session, now_ms, config_.eviction_ms);
  logger()->debug("event=fetch_session_created {} {} {} {}", log::kv("id", session->id),
                  log::kv("partitions", session->size()), log::kv("privileged", session->privileged),
                  log::kv("topic_ids", session->uses_topic_ids));
  answer.session_id = session->id;
  return answer;
}

FetchSessionAnswer FetchSessionCache::answer_incremental(FetchContext& ctx,
                                                         std::span<const FetchPartitionOutcome> outcomes) {
  Session& session = *ctx.session_;
  Shard* shard = shard_of(session.id);
  WEIR_ASSERT(shard != nullptr, "fetch session id {} has no shard", session.id);
  std::scoped_lock lock(shard->mu);
  FetchSessionAnswer answer;
  answer.session_id = session.id;
  // Another fetch on this session got in between (a retried request): its answer counts.
  if (session.epoch != next_fetch_session_epoch(ctx.request_epoch_)) {
    logger()->info("event=fetch_session_epoch_moved {} {} {} reason=possible_duplicate_request",
                   log::kv("id", session.id), log::kv("expected_epoch", next_fetch_session_epoch(ctx.request_epoch_)),
                   log::kv("epoch", session.epoch));
    answer.error_code = code(ErrorCode::kInvalidFetchSessionEpoch);
    return answer;
  }
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    const FetchPartitionOutcome& o = outcomes[i];
    WEIR_ASSERT(o.index < ctx.partitions_.size(), "fetch outcome {} of {} partitions", o.index, ctx.partitions_.size());
    const FetchPartitionSpec& spec = ctx.partitions_[o.index];
    Session::Cached* c = session.find(spec);
    if (c == nullptr) {
      answer.send.push_back(i);
      continue;
    }
    // Records, a moved high watermark or log start offset, and errors are news; the rest is not.
    bool news = o.has_records;
    if (c->high_watermark != o.high_watermark) {
      news = true;
      c->high_watermark = o.high_watermark;
    }
    if (c->local_log_start_offset != o.log_start_offset) {
      news = true;
      c->local_log_start_offset = o.log_start_offset;
    }
    // A transaction ending moves the last stable offset without new records (read_committed).
    if (o.last_stable_offset != -1 && c->last_stable_offset != o.last_stable_offset) {
      news = true;
      c->last_stable_offset = o.last_stable_offset;
    }
    if (o.error_code != 0) {
      news = true;
      c->high_watermark = -1;  // so the partition is sent again once the error is gone
    }
    if (!news) continue;
    answer.send.push_back(i);
    if (o.has_records) session.move_to_end(spec);
  }
  return answer;
}

std::size_t FetchSessionCache::size() const {
  std::size_t n = 0;
  for (const auto& s : shards_) {
    std::scoped_lock lock(s->mu);
    n += s->sessions.size();
  }
  return n;
}

std::int64_t FetchSessionCache::cached_partitions() const {
  std::int64_t n = 0;
  for (const auto& s : shards_) {
    std::scoped_lock lock(s->mu);
    n += s->num_partitions;
  }
  return n;
}

bool FetchSessionCache::contains(std::int32_t session_id) const {
  const Shard* shard = shard_of(session_id);
  if (shard == nullptr) return false;
  std::scoped_lock lock(shard->mu);
  return shard->sessions.contains(session_id);
}

}  // namespace weir::broker
