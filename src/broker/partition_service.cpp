#include "broker/partition_service.h"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <limits>
#include <ranges>
#include <type_traits>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "base/assert.h"
#include "broker/async.h"
#include "broker/errors.h"
#include "broker/txn_verifier.h"
#include "protocol/record/batch_splitter.h"
#include "storage/flusher.h"

namespace weir::broker {

namespace asio = boost::asio;

namespace {

constexpr std::int16_t kProducerFenced = 90;  // PRODUCER_FENCED, which the coordinator may answer
// How long a transaction marker or a coordinator's write may wait for the ISR (Kafka's
// coordinators use request.timeout.ms).
constexpr std::int32_t kMarkerTimeoutMs = 30000;

template <class R>
R not_hosted_answer(const PartitionService& service, const PartitionRef& ref) {
  R r;
  r.error = service.not_hosted(ref);
  return r;
}

// Runs op(partition, spec) for every spec on the partition's owner shard, all at once; a partition
// this broker does not host is answered UNKNOWN_TOPIC_OR_PARTITION.
template <class R, class Spec, class Op>
asio::awaitable<std::vector<R>> on_owners(const PartitionService& service, ShardSet& shards,
                                          const std::vector<Spec>& specs, Op op) {
  static_assert(std::is_empty_v<Op>, "op must capture nothing (it is copied to every owner)");
  FanOut<R> fan;
  for (const Spec& s : specs) {
    const std::size_t shard = shards.owner(s.ref.topic, s.ref.partition);
    fan.add(shards.executor(shard), [&service, shard, &s, op]() {
      Partition* p = service.local(shard, s.ref);
      return p == nullptr ? not_hosted_answer<R>(service, s.ref) : op(*p, s);
    });
  }
  co_return co_await fan.run();
}

// The producer of a request's transactional batches (Produce carries one producer's batches).
struct ProducerOf {
  std::int64_t id = -1;
  std::int16_t epoch = -1;
};

std::optional<ProducerOf> transactional_producer(const std::vector<ProduceSpec>& specs) {
  for (const ProduceSpec& s : specs) {
    record::BatchSplitter splitter(s.batches);
    auto first = splitter.next();
    if (!first || !*first) continue;
    const auto& b = **first;
    if (b.is_transactional() && b.has_producer_id()) return ProducerOf{b.producer_id(), b.producer_epoch()};
  }
  return std::nullopt;
}

// What a Produce of `version` answers for a partition the coordinator did not verify (Kafka's
// ReplicaManager and AddPartitionsToTxnManager): not in the transaction is INVALID_TXN_STATE
// through v10 and TRANSACTION_ABORTABLE from v11; coordinator trouble becomes the retriable
// NOT_ENOUGH_REPLICAS, which older clients retry without a metadata refresh.
}  // namespace

std::pair<std::int16_t, std::string> transaction_verification_error(std::int16_t error, std::int16_t version) {
  const auto is = [error](ErrorCode e) { return error == code(e); };
  if (is(ErrorCode::kInvalidTxnState) || is(ErrorCode::kTransactionAbortable)) {
    if (version > 10) return {code(ErrorCode::kTransactionAbortable), {}};
    return {code(ErrorCode::kInvalidTxnState), "Partition was not added to the transaction"};
  }
  if (error == kProducerFenced) return {code(ErrorCode::kInvalidProducerEpoch), {}};
  const char* underlying = nullptr;
  if (is(ErrorCode::kNetworkException)) underlying = "NETWORK_EXCEPTION";
  if (is(ErrorCode::kCoordinatorLoadInProgress)) underlying = "COORDINATOR_LOAD_IN_PROGRESS";
  if (is(ErrorCode::kCoordinatorNotAvailable)) underlying = "COORDINATOR_NOT_AVAILABLE";
  if (is(ErrorCode::kNotCoordinator)) underlying = "NOT_COORDINATOR";
  // Produce v12+ (transaction version 2) clients retry CONCURRENT_TRANSACTIONS themselves.
  if (is(ErrorCode::kConcurrentTransactions) && version < 12) underlying = "CONCURRENT_TRANSACTIONS";
  if (underlying != nullptr) {
    return {code(ErrorCode::kNotEnoughReplicas),
            std::string("Unable to verify the partition has been added to the transaction. Underlying error: ") +
                underlying};
  }
  return {error, {}};
}

namespace {

// The last error among per-partition answers, 0 when every one succeeded.
std::int16_t any_error(const std::vector<std::int16_t>& errors) {
  std::int16_t error = 0;
  for (std::int16_t e : errors) {
    if (e != 0) error = e;
  }
  return error;
}

std::int64_t steady_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

PartitionRead failed_read(std::int16_t error) {
  PartitionRead r;
  r.error = error;
  return r;
}

struct ReadRound {
  std::vector<PartitionRead> reads;
  std::int64_t total_bytes = 0;
  bool any_error = false;
};

// One read of every spec, without waiting.
asio::awaitable<ReadRound> read_once(const PartitionService& service, ShardSet& shards, const FetchLimits& limits,
                                     const std::vector<FetchSpec>& specs) {
  const std::int32_t response_max_bytes =
      limits.max_bytes > 0 ? limits.max_bytes : std::numeric_limits<std::int32_t>::max();
  ReadRound round;
  round.reads.assign(specs.size(), PartitionRead{});
  FanOut<PartitionRead> fan;
  std::vector<std::size_t> fanned;
  // KIP-392: the brokers in the consumer's rack (none unless the selector is on).
  const std::vector<std::int32_t> rack = limits.replica_id < 0 && limits.client_metadata
                                             ? service.brokers_in_rack(limits.client_rack)
                                             : std::vector<std::int32_t>{};
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const FetchSpec& s = specs[i];
    if (s.error != 0) {
      round.reads[i] = failed_read(s.error);
      round.any_error = true;
      continue;
    }
    const std::size_t shard = shards.owner(s.ref.topic, s.ref.partition);
    // Every partition may return one batch above its limit; the response limit below then keeps
    // such an oversized batch only for the first partition with data, as Kafka does.
    const std::int32_t limit = std::min(s.max_bytes, response_max_bytes);
    fanned.push_back(i);
    fan.add(shards.executor(shard), [&service, shard, &s, limit, &limits, &rack]() {
      Partition* p = service.local(shard, s.ref);
      if (p == nullptr) return failed_read(service.not_hosted(s.ref));
      if (limits.replica_id >= 0) {
        PartitionRead r = p->read_for_follower(FollowerFetch{limits.replica_id, limits.replica_epoch, s.fetch_offset,
                                                             s.log_start_offset, s.last_fetched_epoch,
                                                             s.current_leader_epoch, limit});
        service.propose_isr_change(*p, std::move(r.isr_change));
        r.isr_change.reset();
        if (ReplicationQuota* quota = service.leader_quota(); quota != nullptr && r.error == 0 &&
                                                             quota->throttled(s.ref.topic, s.ref.partition)) {
          r.replication_throttled = true;
          // Kafka's shouldLeaderThrottle: read (the follower's position counts), then hold the
          // records back from a follower outside the ISR while the quota is exceeded.
          if (std::ranges::find(p->replicas().isr(), limits.replica_id) == p->replicas().isr().end() &&
              quota->exceeded(steady_ms())) {
            r.held_by_throttle = r.records != nullptr;
            r.records.reset();
          }
        }
        return r;
      }
      if (!rack.empty() && p->is_leader()) {
        const auto in_rack = [&rack](std::int32_t id) { return std::ranges::find(rack, id) != rack.end(); };
        if (const std::int32_t to = p->preferred_read_replica(s.fetch_offset, in_rack); to >= 0) {
          // As Kafka: no records, the leader's offsets, answered at once.
          PartitionRead r = p->read(s.fetch_offset, 0, s.current_leader_epoch, limits.bound, /*min_one_batch=*/false);
          r.records.reset();
          r.aborted.reset();
          if (limits.bound == ReadBound::kLastStable && r.error == 0) r.aborted.emplace();
          r.preferred_read_replica = to;
          return r;
        }
      }
      return p->read(s.fetch_offset, limit, s.current_leader_epoch, limits.bound, /*min_one_batch=*/true,
                     /*follower_reads=*/limits.client_metadata);
    });
  }
  auto results = co_await fan.run();
  for (std::size_t k = 0; k < fanned.size(); ++k) {
    auto& r = results[k];
    // The response limit is soft only for the first partition with data. Partitions are read in
    // parallel, each up to its own limit, so a later one that does not fit is left out whole
    // (the client fetches it next); Kafka reads them in turn and sends the batches that still
    // fit. Both keep the response within fetch.max.bytes and always make progress.
    if (round.total_bytes > 0 && round.total_bytes + r.size() > response_max_bytes) r.records.reset();
    round.total_bytes += r.size();
    // A follower told of a divergence truncates first: answered at once, as an error is.
    // So is a consumer sent to another replica (KIP-392).
    round.any_error = round.any_error || r.error != 0 || r.diverging.has_value() || r.preferred_read_replica >= 0;
    round.reads[fanned[k]] = std::move(r);
  }
  co_return round;
}

// Watches every spec's partition; returns at the first high-watermark advance past a fetch
// offset, or at the deadline. A wake-up moves the timer's expiry into the past rather than
// cancelling its wait: it may run before the wait starts (an append right after a watch was
// set, while the other partitions' watches are still being set), and a cancel would then be
// lost and the fetch would sleep to its deadline.
asio::awaitable<void> wait_for_data(const PartitionService& service, ShardSet& shards,
                                    const std::vector<FetchSpec>& specs, ReadBound bound,
                                    std::chrono::steady_clock::time_point deadline) {
  auto ex = co_await asio::this_coro::executor;
  auto timer = std::make_shared<asio::steady_timer>(ex);
  timer->expires_at(deadline);
  const auto wake = [](asio::steady_timer& t) { t.expires_at(asio::steady_timer::time_point::min()); };
  FanOut<bool> watch;
  for (const FetchSpec& s : specs) {
    const std::size_t shard = shards.owner(s.ref.topic, s.ref.partition);
    watch.add(shards.executor(shard), [&service, shard, &s, timer, ex, wake, bound]() {
      Partition* p = service.local(shard, s.ref);
      if (p == nullptr) return false;
      // read_committed waits for the last stable offset, read_uncommitted for the high watermark.
      if (p->bound_offset(bound) > s.fetch_offset) {
        asio::post(ex, [timer, wake]() { wake(*timer); });
        return true;
      }
      std::weak_ptr<asio::steady_timer> weak = timer;
      p->watch(bound, s.fetch_offset, [weak, ex, wake]() {
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

}  // namespace

std::vector<std::int32_t> PartitionService::brokers_in_rack(const std::string& rack) const {
  std::vector<std::int32_t> out;
  if (!rack_aware_selector_ || rack.empty() || !catalog_) return out;
  for (const BrokerEndpoint& b : catalog_()->brokers) {
    if (b.rack && *b.rack == rack) out.push_back(b.id);
  }
  return out;
}

PartitionService::PartitionService(ShardSet& shards) : shards_(shards) {}

void PartitionService::start(storage::Flusher& flusher, bool durable_acks_all) {
  flusher_ = &flusher;
  durable_acks_all_ = durable_acks_all;
}

void PartitionService::stop() { flusher_ = nullptr; }

asio::awaitable<std::vector<PartitionAppend>> PartitionService::append(std::vector<ProduceSpec> specs, Acks acks) {
  ProduceTxn none;
  co_return co_await append(std::move(specs), acks, std::move(none));
}

asio::awaitable<std::vector<PartitionAppend>> PartitionService::append(std::vector<ProduceSpec> specs, Acks acks,
                                                                       ProduceTxn txn) {
  // KIP-890: verification guards for the partitions where this producer has no open
  // transaction, then one question to the coordinator for all of them.
  // Produce v12+ (transaction version 2) adds the partitions to the transaction, whatever
  // transaction.partition.verification.enable says (Kafka's ADD_PARTITION operation).
  const bool adding = txn.version >= 12;
  const bool verifying = (verification_enabled_ || adding) && verifier_ != nullptr && txn.transactional_id.has_value();
  std::vector<std::optional<VerificationGuard>> guards(specs.size());
  std::vector<PartitionAppend> refused(specs.size());
  if (verifying) {
    const std::optional<ProducerOf> producer = transactional_producer(specs);
    if (producer) {
      FanOut<VerificationGuard> started;
      for (const ProduceSpec& s : specs) {
        const std::size_t shard = shards_.owner(s.ref.topic, s.ref.partition);
        started.add(shards_.executor(shard), [this, shard, &s]() -> VerificationGuard {
          Partition* p = local(shard, s.ref);
          return p == nullptr ? 0 : p->start_verification(s.batches);
        });
      }
      const std::vector<VerificationGuard> created = co_await started.run();
      std::vector<PartitionRef> to_verify;
      std::vector<std::size_t> verified_specs;
      for (std::size_t i = 0; i < specs.size(); ++i) {
        guards[i] = created[i];
        if (created[i] != 0) {
          to_verify.push_back(specs[i].ref);
          verified_specs.push_back(i);
        }
      }
      if (!to_verify.empty()) {
        std::string id = *txn.transactional_id;
        const std::vector<std::int16_t> errors =
            co_await verifier_->verify(std::move(id), producer->id, producer->epoch, std::move(to_verify), adding);
        WEIR_ASSERT(errors.size() == verified_specs.size(), "the verifier answers every partition");
        for (std::size_t k = 0; k < verified_specs.size(); ++k) {
          if (errors[k] == 0) continue;
          auto [error, message] = transaction_verification_error(errors[k], txn.version);
          refused[verified_specs[k]].error = error;
          refused[verified_specs[k]].error_message = std::move(message);
        }
      }
    }
  }
  const bool durable = acks == Acks::kAll && durable_acks_all_;
  FanOut<PartitionAppend> fan;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const ProduceSpec& s = specs[i];
    const std::size_t shard = shards_.owner(s.ref.topic, s.ref.partition);
    if (refused[i].error != 0) {
      fan.add(shards_.executor(shard), [o = std::move(refused[i])]() { return o; });
      continue;
    }
    const std::optional<VerificationGuard> guard = verifying ? std::optional(guards[i].value_or(0)) : std::nullopt;
    fan.add_async(shards_.executor(shard), [this, shard, &s, durable, guard, acks,
                                            timeout_ms = txn.timeout_ms](FanOut<PartitionAppend>::Done done) {
      Partition* p = local(shard, s.ref);
      if (p == nullptr) return done(not_hosted_answer<PartitionAppend>(*this, s.ref));
      if (p->replicated()) {
        if (acks == Acks::kAll && p->is_leader() && p->under_min_isr()) {
          // Kafka refuses before the append: nothing is written that could not be replicated.
          PartitionAppend o;
          o.error = code(ErrorCode::kNotEnoughReplicas);
          o.error_message = fmt::format(
              "The size of the current ISR {} is insufficient to satisfy the min.isr requirement of {} for partition "
              "{}-{}",
              p->replicas().isr().size(), p->log().config().min_insync_replicas, s.ref.topic, s.ref.partition);
          return done(std::move(o));
        }
        PartitionAppend o = p->append(s.batches, AppendOrigin::kClient, s.summaries, guard);
        const bool waits = o.error == 0 && o.end_offset >= 0 && (acks == Acks::kAll || (o.appended && o.flush_due));
        if (!waits) return done(std::move(o));
        const std::int64_t end_offset = o.end_offset;
        const bool flush_due = o.flush_due;
        await_replicated_ack(shard, s.ref, *p, end_offset, acks == Acks::kAll, flush_due, timeout_ms,
                             [o = std::move(o), done = std::move(done)](std::int16_t error) mutable {
                               if (error != 0) {
                                 o.error = error;
                                 o.base_offset = -1;
                               }
                               done(std::move(o));
                             });
        return;
      }
      PartitionAppend o = p->append(s.batches, AppendOrigin::kClient, s.summaries, guard);
      if (!o.appended || !(durable || o.flush_due)) return done(std::move(o));
      const std::int64_t end_offset = o.end_offset;
      await_ack(shard, s.ref, *p, end_offset, [o = std::move(o), done = std::move(done)](std::int16_t error) mutable {
        if (error != 0) {
          o.error = error;
          o.base_offset = -1;
        }
        done(std::move(o));
      });
    });
  }
  co_return co_await fan.run();
}

std::int16_t PartitionService::not_hosted(const PartitionRef& ref) const {
  if (catalog_ && catalog_()->has_partition(ref.topic, ref.partition)) return code(ErrorCode::kNotLeaderOrFollower);
  return code(ErrorCode::kUnknownTopicOrPartition);
}

asio::awaitable<std::vector<std::int16_t>> PartitionService::write_markers(std::vector<MarkerSpec> specs) {
  FanOut<std::int16_t> fan;
  for (const MarkerSpec& s : specs) {
    const std::size_t shard = shards_.owner(s.ref.topic, s.ref.partition);
    fan.add_async(shards_.executor(shard), [this, shard, &s](FanOut<std::int16_t>::Done done) {
      Partition* p = local(shard, s.ref);
      if (p == nullptr) return done(not_hosted(s.ref));
      const PartitionAppend o =
          p->write_marker(s.producer_id, s.producer_epoch, s.coordinator_epoch, s.commit, s.transaction_version);
      if (p->replicated()) {
        // As Kafka writes markers: acks=all, on the ISR.
        if (!o.appended) return done(o.error);
        const std::int16_t written = o.error;
        await_replicated_ack(shard, s.ref, *p, o.end_offset, /*all=*/true, o.flush_due, kMarkerTimeoutMs,
                             [written, done = std::move(done)](std::int16_t error) mutable {
                               done(error != 0 ? error : written);
                             });
        return;
      }
      // Markers are written acks=all: answered once durable (or at once without flush.on.acks.all).
      if (!o.appended || !(durable_acks_all_ || o.flush_due)) return done(o.error);
      const std::int16_t written = o.error;
      await_ack(shard, s.ref, *p, o.end_offset,
                [written, done = std::move(done)](std::int16_t error) mutable { done(error != 0 ? error : written); });
    });
  }
  co_return co_await fan.run();
}

void PartitionService::await_ack(std::size_t shard, const PartitionRef& ref, Partition& p, std::int64_t end_offset,
                                 ProducePurgatory::Completion done) {
  std::shared_ptr<ProducePurgatory> purgatory = p.purgatory();
  purgatory->add(end_offset, std::move(done));
  flush_on_owner(shard, ref, p, [purgatory](std::int16_t error, std::int64_t covered) {
    if (error == 0) {
      purgatory->complete_through(covered);
    } else {
      purgatory->fail_through(covered, error);
    }
  });
}

void PartitionService::await_replicated_ack(std::size_t shard, const PartitionRef& ref, Partition& p,
                                            std::int64_t end_offset, bool all, bool flush_due,
                                            std::int32_t timeout_ms, ProducePurgatory::Completion done) {
  // Answered once: by the purgatory, or by the request's timeout (Kafka's DelayedProduce).
  struct Once {
    ProducePurgatory::Completion done;
    bool answered = false;
    void answer(std::int16_t error) {
      if (answered) return;
      answered = true;
      done(error);
    }
  };
  auto once = std::make_shared<Once>(Once{std::move(done)});
  std::shared_ptr<ProducePurgatory> purgatory = all ? p.purgatory() : p.flush_purgatory();
  std::shared_ptr<asio::steady_timer> timer;
  if (all) {
    timer = std::make_shared<asio::steady_timer>(shards_.executor(shard));
    timer->expires_after(std::chrono::milliseconds(std::max(0, timeout_ms)));
    timer->async_wait([once, timer](boost::system::error_code ec) {
      if (!ec) once->answer(code(ErrorCode::kRequestTimedOut));
    });
  }
  purgatory->add(end_offset, [once, timer](std::int16_t error) {
    if (timer) timer->cancel();
    once->answer(error);
  });
  const bool flush = flush_due || (all && durable_acks_all_);
  if (flush) {
    flush_on_owner(shard, ref, p, [this, shard, ref, purgatory, all](std::int16_t error, std::int64_t covered) {
      if (error != 0) {
        purgatory->fail_through(covered, error);
        return;
      }
      Partition* q = local(shard, ref);
      if (!all) {
        purgatory->complete_through(covered);
      } else if (q != nullptr && q->purgatory() == purgatory) {
        q->complete_acks();
      }
    });
  }
  if (all) p.complete_acks();
}

void PartitionService::propose_isr_change(const Partition& p, std::optional<IsrProposal> proposal) const {
  if (!proposal) return;
  if (!isr_sender_) return;
  spdlog::info("event=isr_change_proposed partition={}-{} isr={} leader_epoch={} partition_epoch={}", p.topic(),
               p.index(), fmt::join(proposal->new_isr | std::views::transform([](const IsrMember& m) {
                                      return m.broker_id;
                                    }),
                                    ","),
               proposal->leader_epoch, proposal->partition_epoch);
  isr_sender_(IsrChange{PartitionRef{p.topic(), p.index()}, p.topic_id(), std::move(*proposal)});
}

void PartitionService::isr_change_answered(const PartitionRef& ref, std::int32_t leader_epoch, std::int16_t error,
                                           std::vector<std::int32_t> isr, std::int32_t partition_epoch) {
  const std::size_t shard = shards_.owner(ref.topic, ref.partition);
  asio::post(shards_.executor(shard), [this, shard, ref, leader_epoch, error, isr = std::move(isr), partition_epoch]() {
    Partition* p = local(shard, ref);
    if (p == nullptr || p->leader_epoch() != leader_epoch) return;
    p->isr_change_answered(error, isr, partition_epoch);
  });
}

void PartitionService::flush_on_owner(std::size_t shard, const PartitionRef& ref, Partition& p,
                                      std::function<void(std::int16_t, std::int64_t)> done) {
  storage::SyncToken token = p.log().prepare_sync();
  const std::int64_t covered = token.end_offset;
  if (token.empty()) return done(0, covered);
  if (flusher_ == nullptr) return done(code(ErrorCode::kKafkaStorageError), covered);
  storage::SyncToken copy = token;
  const auto owner = shards_.executor(shard);
  const bool queued = flusher_->submit(
      std::move(token), [this, shard, owner, ref, copy = std::move(copy), done](Status<storage::Errc> st) mutable {
        asio::post(owner, [this, shard, ref, copy = std::move(copy), done = std::move(done), ok = st.has_value()]() {
          Partition* q = local(shard, ref);
          if (ok && q != nullptr && copy.log == &q->log()) q->log().mark_synced(copy);
          done(ok ? 0 : code(ErrorCode::kKafkaStorageError), copy.end_offset);
        });
      });
  if (!queued) done(code(ErrorCode::kKafkaStorageError), covered);
}

asio::awaitable<std::int16_t> PartitionService::sync(const std::vector<PartitionRef>& parts) {
  FanOut<std::int16_t> fan;
  for (const PartitionRef& ref : parts) {
    const std::size_t shard = shards_.owner(ref.topic, ref.partition);
    fan.add_async(shards_.executor(shard), [this, shard, &ref](FanOut<std::int16_t>::Done done) {
      Partition* p = local(shard, ref);
      if (p == nullptr) return done(code(ErrorCode::kUnknownTopicOrPartition));
      flush_on_owner(shard, ref, *p, [done = std::move(done)](std::int16_t error, std::int64_t) { done(error); });
    });
  }
  co_return any_error(co_await fan.run());
}

asio::awaitable<std::int16_t> PartitionService::replicate(const std::vector<PartitionRef>& parts) {
  FanOut<std::int16_t> fan;
  for (const PartitionRef& ref : parts) {
    const std::size_t shard = shards_.owner(ref.topic, ref.partition);
    fan.add_async(shards_.executor(shard), [this, shard, &ref](FanOut<std::int16_t>::Done done) {
      Partition* p = local(shard, ref);
      if (p == nullptr) return done(code(ErrorCode::kUnknownTopicOrPartition));
      if (!p->replicated()) {
        return flush_on_owner(shard, ref, *p,
                              [done = std::move(done)](std::int16_t error, std::int64_t) { done(error); });
      }
      if (!p->is_leader()) return done(code(ErrorCode::kNotLeaderOrFollower));
      await_replicated_ack(shard, ref, *p, p->log().log_end_offset(), /*all=*/true, /*flush_due=*/false,
                           kMarkerTimeoutMs, [done = std::move(done)](std::int16_t error) { done(error); });
    });
  }
  co_return any_error(co_await fan.run());
}

asio::awaitable<std::vector<PartitionRead>> PartitionService::fetch(const FetchLimits& limits,
                                                                    const std::vector<FetchSpec>& specs) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(std::max(0, limits.max_wait_ms));
  for (;;) {
    ReadRound round = co_await read_once(*this, shards_, limits, specs);
    if (round.total_bytes >= std::max(1, limits.min_bytes) || round.any_error || specs.empty() ||
        std::chrono::steady_clock::now() >= deadline) {
      if (limits.replica_id >= 0 && leader_quota_ != nullptr) {
        std::int64_t throttled_bytes = 0;
        for (const PartitionRead& r : round.reads) {
          if (r.replication_throttled) throttled_bytes += r.size();
        }
        if (throttled_bytes > 0) leader_quota_->record(throttled_bytes, steady_ms());
      }
      co_return std::move(round.reads);
    }
    // A partition whose records the throttle held back has data already: waiting on it would
    // wake at once, so the fetch waits for the others (or its deadline), as Kafka's DelayedFetch
    // leaves throttled bytes out.
    std::vector<FetchSpec> watched;
    const std::vector<FetchSpec>* wait_on = &specs;
    if (std::ranges::any_of(round.reads, [](const PartitionRead& r) { return r.held_by_throttle; })) {
      for (std::size_t i = 0; i < specs.size(); ++i) {
        if (!round.reads[i].held_by_throttle) watched.push_back(specs[i]);
      }
      wait_on = &watched;
    }
    co_await wait_for_data(*this, shards_, *wait_on, limits.replica_id >= 0 ? ReadBound::kLogEnd : limits.bound,
                           deadline);
  }
}

asio::awaitable<std::vector<OffsetLookup>> PartitionService::list_offsets(const std::vector<OffsetQuery>& queries) {
  co_return co_await on_owners<OffsetLookup>(*this, shards_, queries, [](Partition& p, const OffsetQuery& q) {
    return p.lookup_offset(q.timestamp, q.current_leader_epoch, q.bound);
  });
}

asio::awaitable<std::vector<DeleteRecordsOutcome>> PartitionService::delete_records(
    const std::vector<DeleteRecordsSpec>& specs) {
  co_return co_await on_owners<DeleteRecordsOutcome>(
      *this, shards_, specs, [](Partition& p, const DeleteRecordsSpec& s) { return p.delete_records(s.offset); });
}

asio::awaitable<std::vector<EpochEndOffset>> PartitionService::end_offsets_for_epochs(
    const std::vector<EpochQuery>& queries) {
  co_return co_await on_owners<EpochEndOffset>(*this, shards_, queries, [](Partition& p, const EpochQuery& q) {
    return p.end_offset_for_epoch(q.current_leader_epoch, q.leader_epoch);
  });
}

}  // namespace weir::broker
