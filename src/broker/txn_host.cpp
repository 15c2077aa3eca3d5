#include "broker/txn_host.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>

#include "base/java_hash.h"
#include "broker/async.h"
#include "broker/broker.h"
#include "broker/coordinator_log.h"
#include "broker/errors.h"
#include "broker/group_service.h"
#include "broker/partition.h"
#include "protocol/record/batch_splitter.h"
#include "protocol/record/compression.h"
#include "protocol/record/record_batch_builder.h"
#include "storage/errc.h"

namespace weir::broker {

namespace asio = boost::asio;

// How long an inter-broker transaction request (markers, verification) waits for its answer:
// Kafka's request.timeout.ms default.
constexpr std::int64_t kInterBrokerRequestTimeoutMs = 30000;

namespace {

std::span<const std::uint8_t> as_u8(ByteSpan b) { return {reinterpret_cast<const std::uint8_t*>(b.data()), b.size()}; }

txn::Answer refused(txn::Error e) {
  txn::Answer a;
  a.error = e;
  return a;
}

}  // namespace

TxnWaiter::TxnWaiter(asio::any_io_executor ex) : timer(std::move(ex)) {
  timer.expires_at(asio::steady_timer::time_point::max());
}

asio::awaitable<void> TxnWaiter::wait() {
  while (!done) {
    boost::system::error_code ec;
    co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
}

// ---- TxnHost --------------------------------------------------------------------------------

TxnHost::TxnHost(Broker& broker, std::size_t shard, std::int32_t partition_index, asio::any_io_executor executor,
                 TxnHostConfig config, const Clock& clock)
    : broker_(broker),
      shard_(shard),
      partition_index_(partition_index),
      executor_(executor),
      config_(config),
      clock_(clock),
      coordinator_(std::make_unique<txn::TransactionCoordinator>(config.coordinator)),
      retry_timer_(executor),
      abort_timer_(executor),
      expiry_timer_(executor) {
  arm_periodic(abort_timer_, config_.abort_interval_ms, true);
  arm_periodic(expiry_timer_, config_.expiry_interval_ms, false);
}

TxnHost::~TxnHost() { *alive_ = false; }

Partition* TxnHost::partition() const {
  return broker_.shards().table(shard_).find(kTransactionStateTopic, partition_index_);
}

bool TxnHost::load() {
  Partition* p = partition();
  txn::TxnConfig cc = config_.coordinator;
  if (p != nullptr) cc.coordinator_epoch = std::max(0, p->leader_epoch());
  coordinator_ = std::make_unique<txn::TransactionCoordinator>(cc);
  if (p == nullptr) return false;
  const auto started = std::chrono::steady_clock::now();
  std::size_t records = 0;
  std::size_t skipped = 0;
  const bool ok = read_coordinator_log(
      p->log(), kTransactionStateTopic, partition_index_, [&](const record::RecordBatchView& batch) {
        if (batch.is_control()) return;
        auto section = record::read_records_section(batch, kMaxCoordinatorBatchBytes);
        if (!section) {
          spdlog::warn("skipping an unreadable batch of {}-{} at offset {}: {}", kTransactionStateTopic,
                       partition_index_, batch.base_offset(), record::to_string(section.error()));
          return;
        }
        auto st = record::for_each_record(section->reader(), [&](const record::RecordView& r) {
          if (!r.key) return;
          std::optional<std::span<const std::uint8_t>> value;
          if (r.value) value = as_u8(*r.value);
          if (auto replayed = coordinator_->replay(as_u8(*r.key), value); !replayed) {
            ++skipped;
          } else {
            ++records;
          }
        });
        if (!st) {
          spdlog::warn("skipping a malformed batch of {}-{} at offset {}", kTransactionStateTopic, partition_index_,
                       batch.base_offset());
        }
      });
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count();
  if (records > 0 || skipped > 0) {
    spdlog::info("loaded transaction coordinator partition={}-{} records={} skipped={} ms={}", kTransactionStateTopic,
                 partition_index_, records, skipped, ms);
  }
  apply(coordinator_->finish_replay(now_ms()));
  return ok;
}

txn::RequestHandle TxnHost::hold(std::shared_ptr<TxnWaiter> waiter) {
  const txn::RequestHandle h = next_handle_++;
  waiters_.emplace(h, std::move(waiter));
  return h;
}

void TxnHost::apply(txn::Effects effects) {
  for (const auto& a : effects.answers) deliver(a);
  if (!effects.appends.empty()) append(std::move(effects.appends));
  for (auto& m : effects.markers) write_markers(std::move(m));
  rearm();
}

void TxnHost::deliver(const txn::Answer& a) {
  auto it = waiters_.find(a.handle);
  if (it == waiters_.end()) return;
  auto w = std::move(it->second);
  waiters_.erase(it);
  auto ex = w->timer.get_executor();
  asio::post(ex, [w = std::move(w), a]() {
    w->answer = a;
    w->done = true;
    w->timer.cancel();
  });
}

void TxnHost::fail_held(txn::Error error) {
  auto held = std::move(waiters_);
  waiters_.clear();
  for (auto& [handle, w] : held) {
    auto ex = w->timer.get_executor();
    asio::post(ex, [w, error]() {
      w->answer = refused(error);
      w->done = true;
      w->timer.cancel();
    });
  }
}

void TxnHost::append(std::vector<txn::Append> appends) {
  Partition* p = partition();
  std::vector<std::string> written;
  for (auto& a : appends) {
    std::int16_t error = 0;
    if (p == nullptr) {
      error = code(ErrorCode::kNotLeaderOrFollower);
    } else {
      record::RecordBatchBuilder builder;
      const ByteSpan key = std::as_bytes(std::span<const std::uint8_t>(a.record.key));
      std::optional<ByteSpan> value;
      if (a.record.value) value = std::as_bytes(std::span<const std::uint8_t>(*a.record.value));
      builder.append(now_ms(), key, value);
      std::vector<std::byte> batch = builder.build();
      const PartitionAppend appended = p->append(batch, AppendOrigin::kCoordinator);
      if (appended.error != 0) {
        spdlog::error("transaction coordinator append failed partition={}-{} error={}", kTransactionStateTopic,
                      partition_index_, appended.error_message);
        error = appended.error;
      }
    }
    if (error != 0) {
      apply(coordinator_->on_appended(a.transactional_id, error, now_ms()));
    } else {
      written.push_back(std::move(a.transactional_id));
    }
  }
  if (written.empty()) return;
  if (!broker_.flush_on_acks_all() && !broker_.config().broker_only) {
    for (const auto& id : written) apply(coordinator_->on_appended(id, 0, now_ms()));
    return;
  }
  // The transitions complete once their records are durable (Kafka writes them with acks=all).
  auto ids = std::make_shared<std::vector<std::string>>(std::move(written));
  asio::co_spawn(
      executor_,
      [this, ids, alive = alive_]() -> asio::awaitable<void> {
        const std::vector<PartitionRef> parts{{std::string(kTransactionStateTopic), partition_index_}};
        const std::int16_t err = co_await broker_.partitions().replicate(parts);
        if (!*alive) co_return;
        const std::int16_t reported = err == 0 ? std::int16_t{0} : code(ErrorCode::kKafkaStorageError);
        for (const auto& id : *ids) apply(coordinator_->on_appended(id, reported, now_ms()));
      },
      asio::detached);
}

void TxnHost::write_markers(txn::MarkerRequest request) {
  auto req = std::make_shared<txn::MarkerRequest>(std::move(request));
  asio::co_spawn(
      executor_,
      [this, req, alive = alive_]() -> asio::awaitable<void> {
        std::vector<MarkerSpec> specs;
        specs.reserve(req->partitions.size());
        for (const auto& tp : req->partitions) {
          specs.push_back(MarkerSpec{PartitionRef{tp.topic, tp.partition}, req->producer_id, req->producer_epoch,
                                     req->coordinator_epoch, req->commit, req->transaction_version});
        }
        std::vector<std::int16_t> errors = co_await broker_.send_txn_markers(shard_, std::move(specs));
        if (!*alive) co_return;
        apply(coordinator_->on_markers_written(*req, errors, now_ms()));
      },
      asio::detached);
}

void TxnHost::rearm() {
  const auto deadline = coordinator_->next_deadline_ms();
  if (deadline == armed_deadline_ms_) return;
  armed_deadline_ms_ = deadline;
  if (!deadline) {
    retry_timer_.cancel();
    return;
  }
  retry_timer_.expires_after(std::chrono::milliseconds(std::max<std::int64_t>(0, *deadline - now_ms())));
  retry_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec) return;
    armed_deadline_ms_.reset();
    apply(coordinator_->tick(now_ms()));
  });
}

void TxnHost::arm_periodic(asio::steady_timer& timer, std::int64_t interval_ms, bool abort) {
  timer.expires_after(std::chrono::milliseconds(std::max<std::int64_t>(1, interval_ms)));
  timer.async_wait([this, &timer, interval_ms, abort](const boost::system::error_code& ec) {
    if (ec) return;
    if (!abort) {
      apply(coordinator_->expire_transactional_ids(now_ms()));
    } else {
      coordinator_->set_server_transaction_version(broker_.transaction_version());
      txn::Effects fx = coordinator_->abort_timed_out(now_ms());
      const bool needs_producer_id = fx.needs_producer_id;
      apply(std::move(fx));
      if (needs_producer_id) abort_with_new_producer_id();
    }
    arm_periodic(timer, interval_ms, abort);
  });
}

void TxnHost::abort_with_new_producer_id() {
  // A timed-out transaction at an exhausted epoch (transaction version 2) rotates its producer
  // id: allocate one and run the abort again for it.
  asio::co_spawn(
      executor_,
      [this, alive = alive_]() -> asio::awaitable<void> {
        auto id = co_await broker_.allocate_producer_id();
        if (!*alive || !id) co_return;
        apply(coordinator_->abort_timed_out(now_ms(), *id));
      },
      asio::detached);
}

asio::awaitable<std::vector<std::int16_t>> Broker::write_txn_markers(std::vector<MarkerSpec> specs) {
  std::vector<MarkerSpec> written = specs;
  std::vector<std::int16_t> errors = co_await partitions().write_markers(std::move(written));
  // A marker in __consumer_offsets ends the producer's pending offsets there: the group
  // coordinator materialises (commit) or drops (abort) them once the marker is durable.
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const MarkerSpec& s = specs[i];
    if (errors[i] != 0 || s.ref.topic != kOffsetsTopic) continue;
    (void)co_await groups().complete_transaction(s.ref.partition, s.producer_id, s.commit);
  }
  co_return errors;
}

asio::awaitable<std::vector<std::int16_t>> Broker::send_txn_markers(std::size_t shard, std::vector<MarkerSpec> specs) {
  if (!config_.broker_only) co_return co_await write_txn_markers(std::move(specs));
  const auto catalog = this->catalog();
  std::vector<std::int16_t> errors(specs.size(), 0);
  std::vector<std::size_t> local;
  std::map<std::int32_t, std::vector<std::size_t>> remote;  // by leader
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const PartitionRef& ref = specs[i].ref;
    const TopicInfo* topic = catalog->find(ref.topic);
    const std::int32_t leader = catalog->leader_of(ref.topic, ref.partition);
    if (topic == nullptr || ref.partition < 0 || ref.partition >= topic->partitions) {
      errors[i] = code(ErrorCode::kUnknownTopicOrPartition);  // deleted: nothing left to mark
    } else if (leader == node_.node_id) {
      local.push_back(i);
    } else if (leader < 0) {
      errors[i] = code(ErrorCode::kNotLeaderOrFollower);  // retried once a leader is elected
    } else {
      remote[leader].push_back(i);
    }
  }
  if (!local.empty()) {
    std::vector<MarkerSpec> mine;
    for (const std::size_t i : local) mine.push_back(specs[i]);
    const std::vector<std::int16_t> written = co_await write_txn_markers(std::move(mine));
    for (std::size_t k = 0; k < local.size(); ++k) errors[local[k]] = written[k];
  }
  // One WriteTxnMarkers per leader (Kafka's TransactionMarkerChannelManager), the leaders in turn.
  for (const auto& [leader, indexes] : remote) {
    protocol::WriteTxnMarkersRequest req;
    for (const std::size_t i : indexes) {
      const MarkerSpec& s = specs[i];
      auto m = std::find_if(req.markers.begin(), req.markers.end(), [&](const auto& w) {
        return w.producer_id == s.producer_id && w.producer_epoch == s.producer_epoch &&
               w.coordinator_epoch == s.coordinator_epoch && w.transaction_result == s.commit &&
               w.transaction_version == s.transaction_version;
      });
      if (m == req.markers.end()) {
        m = req.markers.emplace(req.markers.end());
        m->producer_id = s.producer_id;
        m->producer_epoch = s.producer_epoch;
        m->coordinator_epoch = s.coordinator_epoch;
        m->transaction_result = s.commit;
        m->transaction_version = static_cast<std::int8_t>(s.transaction_version);
      }
      auto t = std::find_if(m->topics.begin(), m->topics.end(), [&](const auto& x) { return x.name == s.ref.topic; });
      if (t == m->topics.end()) {
        t = m->topics.emplace(m->topics.end());
        t->name = s.ref.topic;
      }
      t->partition_indexes.push_back(s.ref.partition);
    }
    std::expected<protocol::WriteTxnMarkersResponse, std::string> resp =
        std::unexpected(std::string("no connection to the leader"));
    if (PeerChannel* channel = peer(shard, leader); channel != nullptr) {
      resp = co_await channel->write_txn_markers(req, kInterBrokerRequestTimeoutMs);
    }
    for (const std::size_t i : indexes) {
      const MarkerSpec& s = specs[i];
      std::int16_t e = code(ErrorCode::kNetworkException);
      if (resp) {
        e = code(ErrorCode::kUnknownServerError);
        for (const auto& m : resp->markers) {
          if (m.producer_id != s.producer_id) continue;
          for (const auto& t : m.topics) {
            if (t.name != s.ref.topic) continue;
            for (const auto& p : t.partitions) {
              if (p.partition_index == s.ref.partition) e = p.error_code;
            }
          }
        }
        // The leader may not know a partition our metadata has yet (or any more): retry; a
        // deletion shows in our own catalog.
        if (e == code(ErrorCode::kUnknownTopicOrPartition)) e = code(ErrorCode::kNotLeaderOrFollower);
      }
      errors[i] = e;
    }
    if (!resp) {
      spdlog::warn("transaction markers to broker {} failed: {} (retried)", leader, resp.error());
    }
  }
  co_return errors;
}

// ---- TxnService -----------------------------------------------------------------------------

TxnService::TxnService(Broker& broker) : broker_(broker) {
  const config::ConfigValues& c = broker.config().typed();
  config_.coordinator.max_timeout_ms = c.get_int("transaction.max.timeout.ms");
  config_.coordinator.transactional_id_expiration_ms = c.get_int("transactional.id.expiration.ms");
  config_.abort_interval_ms = c.get_int("transaction.abort.timed.out.transaction.cleanup.interval.ms");
  config_.expiry_interval_ms = c.get_int("transaction.remove.expired.transaction.cleanup.interval.ms");
  configured_partitions_ = c.get_int("transaction.state.log.num.partitions");
  segment_bytes_ = c.get_int("transaction.state.log.segment.bytes");
  hosts_.resize(broker.shards().count());
}

TxnService::~TxnService() = default;

std::int32_t TxnService::partitions() const {
  if (const TopicInfo* t = broker_.catalog()->find(std::string(kTransactionStateTopic))) return t->partitions;
  return configured_partitions_;
}

std::int32_t TxnService::partition_for(std::string_view transactional_id) const {
  return java_partition_for(transactional_id, partitions());
}

asio::awaitable<bool> TxnService::ensure_topic() {
  if (broker_.topic_exists(std::string(kTransactionStateTopic))) co_return true;
  protocol::CreateTopicsRequest req;
  req.timeout_ms = 30000;
  auto& t = req.topics.emplace_back();
  t.name = std::string(kTransactionStateTopic);
  t.num_partitions = configured_partitions_;
  // One node: one replica, whatever transaction.state.log.replication.factor says.
  t.replication_factor = broker_.quorum() != nullptr
                             ? broker_.config().typed().get_short("transaction.state.log.replication.factor")
                             : std::int16_t{1};
  auto add = [&](std::string name, std::string value) {
    auto& cfg = t.configs.emplace_back();
    cfg.name = std::move(name);
    cfg.value = std::move(value);
  };
  // Kafka's TransactionStateManager.transactionTopicConfigs.
  add("cleanup.policy", "compact");
  add("compression.type", "uncompressed");
  add("unclean.leader.election.enable", "false");
  add("segment.bytes", std::to_string(segment_bytes_));
  const std::int16_t create_version = 7;
  auto resp = co_await broker_.create_topics(req, create_version);
  for (const auto& r : resp.topics) {
    if (r.error_code != 0 && r.error_code != code(ErrorCode::kTopicAlreadyExists)) {
      spdlog::error("cannot create {} error_code={} message=\"{}\"", kTransactionStateTopic, r.error_code,
                    r.error_message.value_or(""));
      co_return false;
    }
  }
  co_return broker_.topic_exists(std::string(kTransactionStateTopic));
}

void TxnService::start() {
  const TopicInfo* t = broker_.catalog()->find(std::string(kTransactionStateTopic));
  if (t == nullptr) return;
  for (std::int32_t i = 0; i < t->partitions; ++i) host(broker_.shards().owner(kTransactionStateTopic, i), i);
}

void TxnService::stop() {
  for (auto& shard : hosts_) shard.clear();
}

void TxnService::leadership_changed(std::size_t shard, std::int32_t partition, bool leader) {
  if (leader) {
    (void)host(shard, partition);
  } else if (auto it = hosts_[shard].find(partition); it != hosts_[shard].end()) {
    // Requests waiting on the coordinator that leaves are answered, so their clients look it up
    // again (Kafka's appends fail NOT_LEADER_OR_FOLLOWER, answered NOT_COORDINATOR).
    it->second->fail_held(txn::Error::kNotCoordinator);
    hosts_[shard].erase(it);
  }
}

TxnHost* TxnService::host(std::size_t shard, std::int32_t partition) {
  auto& hosts = hosts_[shard];
  if (auto it = hosts.find(partition); it != hosts.end()) return it->second.get();
  // Only the leader of the partition coordinates its transactional ids (NOT_COORDINATOR else).
  const Partition* p = broker_.shards().table(shard).find(kTransactionStateTopic, partition);
  if (p == nullptr || !p->is_leader()) return nullptr;
  auto h =
      std::make_unique<TxnHost>(broker_, shard, partition, broker_.shards().executor(shard), config_, broker_.clock());
  TxnHost* raw = hosts.emplace(partition, std::move(h)).first->second.get();
  raw->load();
  return raw;
}

template <class Op>
asio::awaitable<txn::Answer> TxnService::run(std::int32_t partition, Op& op) {
  const std::size_t shard = broker_.shards().owner(kTransactionStateTopic, partition);
  auto waiter = std::make_shared<TxnWaiter>(co_await asio::this_coro::executor);
  std::optional<std::int64_t> fresh;
  enum class Outcome { kHeld, kNoHost, kNeedsProducerId };
  for (int attempt = 0;; ++attempt) {
    const Outcome out =
        co_await run_on(broker_.shards().executor(shard), [this, shard, partition, &op, &waiter, &fresh]() {
          TxnHost* h = host(shard, partition);
          if (h == nullptr) return Outcome::kNoHost;
          const txn::RequestHandle handle = h->hold(waiter);
          h->coordinator().set_server_transaction_version(broker_.transaction_version());
          txn::Effects fx = op(h->coordinator(), handle, h->now_ms(), fresh);
          if (fx.needs_producer_id) {
            // Not answered: withdraw the handle, allocate, run again.
            h->release(handle);
            return Outcome::kNeedsProducerId;
          }
          h->apply(std::move(fx));
          return Outcome::kHeld;
        });
    if (out == Outcome::kNoHost) co_return refused(txn::Error::kNotCoordinator);
    if (out == Outcome::kHeld) break;
    if (attempt > 0 && fresh) co_return refused(txn::Error::kUnknownServerError);
    auto id = co_await broker_.allocate_producer_id();
    if (!id) co_return refused(static_cast<txn::Error>(code(id.error())));
    fresh = *id;
  }
  co_await waiter->wait();
  co_return *waiter->answer;
}

asio::awaitable<txn::Answer> TxnService::init_producer_id(std::string transactional_id, std::int32_t timeout_ms,
                                                          std::int64_t producer_id, std::int16_t producer_epoch) {
  auto op = [&](txn::TransactionCoordinator& c, txn::RequestHandle h, std::int64_t now,
                std::optional<std::int64_t> fresh) {
    return c.init_producer_id(h, transactional_id, timeout_ms, producer_id, producer_epoch, fresh, now);
  };
  co_return co_await run(partition_for(transactional_id), op);
}

asio::awaitable<txn::Answer> TxnService::add_partitions(std::string transactional_id, std::int64_t producer_id,
                                                        std::int16_t producer_epoch,
                                                        std::vector<txn::TopicPartition> partitions,
                                                        std::int16_t client_transaction_version) {
  auto op = [&](txn::TransactionCoordinator& c, txn::RequestHandle h, std::int64_t now, std::optional<std::int64_t>) {
    return c.add_partitions(h, transactional_id, producer_id, producer_epoch, partitions, now,
                            client_transaction_version);
  };
  co_return co_await run(partition_for(transactional_id), op);
}

asio::awaitable<txn::Answer> TxnService::end_txn(std::string transactional_id, std::int64_t producer_id,
                                                 std::int16_t producer_epoch, bool commit,
                                                 std::int16_t client_transaction_version) {
  auto op = [&](txn::TransactionCoordinator& c, txn::RequestHandle h, std::int64_t now,
                std::optional<std::int64_t> fresh) {
    return c.end_txn(h, transactional_id, producer_id, producer_epoch, commit, now, client_transaction_version, fresh);
  };
  co_return co_await run(partition_for(transactional_id), op);
}

asio::awaitable<std::vector<std::int16_t>> CoordinatorTxnVerifier::verify(std::string transactional_id,
                                                                          std::int64_t producer_id,
                                                                          std::int16_t producer_epoch,
                                                                          std::vector<PartitionRef> partitions,
                                                                          bool add) {
  if (std::optional<std::int32_t> remote = service_.remote_coordinator(transactional_id)) {
    co_return co_await service_.verify_remote(*remote, std::move(transactional_id), producer_id, producer_epoch,
                                              std::move(partitions), add);
  }
  std::vector<txn::TopicPartition> parts;
  parts.reserve(partitions.size());
  for (auto& p : partitions) parts.push_back(txn::TopicPartition{std::move(p.topic), p.partition});
  if (!add) {
    co_return co_await service_.verify(std::move(transactional_id), producer_id, producer_epoch, std::move(parts));
  }
  // Transaction version 2: the broker adds the partitions itself (Kafka's AddPartitionsToTxn v5
  // from the broker, verifyOnly false); one answer for all of them.
  const std::size_t n = parts.size();
  const txn::Answer a =
      co_await service_.add_partitions(std::move(transactional_id), producer_id, producer_epoch, std::move(parts), 2);
  co_return std::vector<std::int16_t>(n, txn::code(a.error));
}

std::optional<std::int32_t> TxnService::remote_coordinator(std::string_view transactional_id) const {
  if (!broker_.config().broker_only) return std::nullopt;
  const std::int32_t leader =
      broker_.catalog()->leader_of(std::string(kTransactionStateTopic), partition_for(transactional_id));
  if (leader == broker_.node().node_id) return std::nullopt;
  return leader;  // -1: none known (answered NOT_COORDINATOR)
}

asio::awaitable<std::vector<std::int16_t>> TxnService::verify_remote(std::int32_t coordinator,
                                                                     std::string transactional_id,
                                                                     std::int64_t producer_id,
                                                                     std::int16_t producer_epoch,
                                                                     std::vector<PartitionRef> partitions, bool add) {
  // Kafka's AddPartitionsToTxnManager: AddPartitionsToTxn v4 (verify only) or v5 (add, for a
  // transaction version 2 client) to the coordinator's broker; any failure to get an answer is
  // NETWORK_EXCEPTION (which the produce path turns into the retriable NOT_ENOUGH_REPLICAS).
  const std::size_t n = partitions.size();
  if (coordinator < 0) co_return std::vector<std::int16_t>(n, code(ErrorCode::kNotCoordinator));
  protocol::AddPartitionsToTxnRequest req;
  auto& t = req.transactions.emplace_back();
  t.transactional_id = transactional_id;
  t.producer_id = producer_id;
  t.producer_epoch = producer_epoch;
  t.verify_only = !add;
  for (const auto& p : partitions) {
    auto it = std::find_if(t.topics.begin(), t.topics.end(), [&](const auto& x) { return x.name == p.topic; });
    if (it == t.topics.end()) {
      it = t.topics.emplace(t.topics.end());
      it->name = p.topic;
    }
    it->partitions.push_back(p.partition);
  }
  const std::size_t shard = broker_.shards().owner(kTransactionStateTopic, partition_for(transactional_id));
  using Answer = std::expected<protocol::AddPartitionsToTxnResponse, std::string>;
  FanOut<Answer> fan;
  fan.add_async(broker_.shards().executor(shard), [this, shard, coordinator, &req, add](FanOut<Answer>::Done done) {
    asio::co_spawn(
        broker_.shards().executor(shard),
        [this, shard, coordinator, &req, add, done]() -> asio::awaitable<void> {
          PeerChannel* channel = broker_.peer(shard, coordinator);
          if (channel == nullptr) {
            done(std::unexpected(std::string("the coordinator's broker is not known")));
            co_return;
          }
          done(co_await channel->add_partitions_to_txn(req, add ? 5 : 4, kInterBrokerRequestTimeoutMs));
        },
        asio::detached);
  });
  const Answer resp = std::move((co_await fan.run()).front());
  std::vector<std::int16_t> out(n, code(ErrorCode::kNetworkException));
  if (!resp) {
    spdlog::warn("transaction verification at broker {} failed: {}", coordinator, resp.error());
    co_return out;
  }
  for (std::size_t i = 0; i < n; ++i) {
    out[i] = resp->error_code != 0 ? resp->error_code : code(ErrorCode::kUnknownServerError);
    for (const auto& r : resp->results_by_transaction) {
      if (r.transactional_id != transactional_id) continue;
      for (const auto& tr : r.topic_results) {
        if (tr.name != partitions[i].topic) continue;
        for (const auto& pr : tr.results_by_partition) {
          if (pr.partition_index == partitions[i].partition) out[i] = pr.partition_error_code;
        }
      }
    }
  }
  co_return out;
}

asio::awaitable<std::vector<std::int16_t>> TxnService::verify(std::string transactional_id, std::int64_t producer_id,
                                                              std::int16_t producer_epoch,
                                                              std::vector<txn::TopicPartition> partitions) {
  const std::int32_t partition = partition_for(transactional_id);
  const std::size_t shard = broker_.shards().owner(kTransactionStateTopic, partition);
  co_return co_await run_on(broker_.shards().executor(shard), [&, this]() {
    std::vector<std::int16_t> out;
    TxnHost* h = host(shard, partition);
    if (h == nullptr) {
      out.assign(partitions.size(), code(txn::Error::kNotCoordinator));
      return out;
    }
    for (txn::Error e : h->coordinator().verify(transactional_id, producer_id, producer_epoch, partitions)) {
      out.push_back(txn::code(e));
    }
    return out;
  });
}

asio::awaitable<protocol::DescribeTransactionsResponse::TransactionState> TxnService::describe(
    std::string transactional_id) {
  const std::int32_t partition = partition_for(transactional_id);
  const std::size_t shard = broker_.shards().owner(kTransactionStateTopic, partition);
  co_return co_await run_on(broker_.shards().executor(shard), [&, this]() {
    TxnHost* h = host(shard, partition);
    if (h == nullptr) {
      protocol::DescribeTransactionsResponse::TransactionState s;
      s.transactional_id = transactional_id;
      s.error_code = code(ErrorCode::kNotCoordinator);
      return s;
    }
    return h->coordinator().describe(transactional_id);
  });
}

asio::awaitable<std::vector<protocol::ListTransactionsResponse::TransactionState>> TxnService::list(
    std::vector<std::string> states, std::vector<std::int64_t> producer_ids, std::int64_t duration_ms) {
  using States = std::vector<protocol::ListTransactionsResponse::TransactionState>;
  FanOut<States> fan;
  const std::int32_t n = broker_.topic_exists(std::string(kTransactionStateTopic)) ? partitions() : 0;
  for (std::size_t shard = 0; shard < hosts_.size() && n > 0; ++shard) {
    fan.add(broker_.shards().executor(shard), [this, shard, n, &states, &producer_ids, duration_ms]() {
      States out;
      for (std::int32_t i = 0; i < n; ++i) {
        if (broker_.shards().owner(kTransactionStateTopic, i) != shard) continue;
        TxnHost* h = host(shard, i);
        if (h == nullptr) continue;
        h->coordinator().list(states, producer_ids, duration_ms, h->now_ms(), out);
      }
      return out;
    });
  }
  States all;
  for (auto& part : co_await fan.run()) {
    for (auto& s : part) all.push_back(std::move(s));
  }
  co_return all;
}

asio::awaitable<TxnMetrics> TxnService::metrics() {
  FanOut<TxnMetrics> fan;
  for (std::size_t shard = 0; shard < hosts_.size(); ++shard) {
    fan.add(broker_.shards().executor(shard), [this, shard]() {
      TxnMetrics m;
      for (const auto& [index, h] : hosts_[shard]) {
        const auto& c = h->coordinator();
        m.committed += c.stats().committed;
        m.aborted += c.stats().aborted;
        m.timed_out += c.stats().timed_out;
        const std::int64_t now = h->now_ms();
        for (const auto& [id, t] : c.transactions()) {
          if (t.state != txn::State::kOngoing) continue;
          ++m.ongoing;
          m.oldest_ongoing_age_ms = std::max(m.oldest_ongoing_age_ms, now - t.start_ms);
        }
      }
      return m;
    });
  }
  TxnMetrics sum;
  for (const auto& m : co_await fan.run()) {
    sum.ongoing += m.ongoing;
    sum.committed += m.committed;
    sum.aborted += m.aborted;
    sum.timed_out += m.timed_out;
    sum.oldest_ongoing_age_ms = std::max(sum.oldest_ongoing_age_ms, m.oldest_ongoing_age_ms);
  }
  co_return sum;
}

}  // namespace weir::broker
