// The transaction coordinator's I/O half (DESIGN.md, "Coordinators are pure state machines").
//
// TxnHost runs the TransactionCoordinator of one `__transaction_state` partition on the shard
// owning that partition: it loads it by replaying the partition's log, appends the records it
// returns (AppendOrigin::kCoordinator, one batch per transition) and makes them durable when
// acks=all writes are (flush.on.acks.all) before reporting them appended, delivers answers to
// the connections waiting on them, writes the markers it asks for (Broker::write_txn_markers),
// and runs its timers: marker retries, the abort of timed-out transactions
// (transaction.abort.timed.out.transaction.cleanup.interval.ms) and the expiration of idle
// transactional ids (transaction.remove.expired.transaction.cleanup.interval.ms).
//
// TxnService is how handlers reach the coordinators: it creates `__transaction_state` on the
// first FindCoordinator(key_type=1) (as Kafka does; compacted, transaction.state.log.* partitions
// and segment bytes, one replica on one node), routes each transactional id to the host of its
// partition (Kafka's Utils.abs(hashCode) % partitions), allocates producer ids for the
// coordinator, and fans DescribeTransactions / ListTransactions out.
//
// Every TxnHost member is used only on its shard's executor; TxnService's hosts_ are touched
// only on their shard; a TxnWaiter belongs to the connection waiting on it.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/clock.h"
#include "broker/partition_service.h"
#include "broker/txn_verifier.h"
#include "protocol/gen/describe_transactions_response.h"
#include "protocol/gen/list_transactions_response.h"
#include "txn/coordinator.h"

namespace weir::broker {

class Broker;
class Partition;

inline constexpr std::string_view kTransactionStateTopic = "__transaction_state";


// An answer the coordinator gives later, posted to the waiting connection's executor.
struct TxnWaiter {
  explicit TxnWaiter(boost::asio::any_io_executor ex);
  boost::asio::steady_timer timer;
  std::optional<txn::Answer> answer;
  bool done = false;
  boost::asio::awaitable<void> wait();
};

struct TxnHostConfig {
  txn::TxnConfig coordinator;
  std::int64_t abort_interval_ms = 10000;     // transaction.abort.timed.out.transaction.cleanup.interval.ms
  std::int64_t expiry_interval_ms = 3600000;  // transaction.remove.expired.transaction.cleanup.interval.ms
};

class TxnHost {
 public:
  TxnHost(Broker& broker, std::size_t shard, std::int32_t partition_index, boost::asio::any_io_executor executor,
          TxnHostConfig config, const Clock& clock);
  ~TxnHost();
  TxnHost(const TxnHost&) = delete;
  TxnHost& operator=(const TxnHost&) = delete;

  // Rebuilds the coordinator from the partition's log, then completes transactions left in a
  // Prepare state (their markers). False (and logged) if the log cannot be read.
  bool load();

  [[nodiscard]] std::int32_t partition_index() const { return partition_index_; }
  [[nodiscard]] txn::TransactionCoordinator& coordinator() { return *coordinator_; }
  [[nodiscard]] std::int64_t now_ms() const { return clock_.wall_ms(); }

  // A handle whose answer goes to `waiter`.
  txn::RequestHandle hold(std::shared_ptr<TxnWaiter> waiter);
  // Carries out effects: answers, appends (then on_appended), markers (then on_markers_written).
  void apply(txn::Effects effects);
  // Answers every held request with `error`.
  void fail_held(txn::Error error = txn::Error::kCoordinatorNotAvailable);
  // Forgets a handle without answering it (an event that answered nothing).
  void release(txn::RequestHandle handle) { waiters_.erase(handle); }

 private:
  void deliver(const txn::Answer& a);
  void append(std::vector<txn::Append> appends);
  void write_markers(txn::MarkerRequest request);
  void rearm();
  void arm_periodic(boost::asio::steady_timer& timer, std::int64_t interval_ms, bool abort);
  void abort_with_new_producer_id();
  [[nodiscard]] Partition* partition() const;

  Broker& broker_;
  std::size_t shard_;
  std::int32_t partition_index_;
  boost::asio::any_io_executor executor_;
  TxnHostConfig config_;
  const Clock& clock_;
  std::unique_ptr<txn::TransactionCoordinator> coordinator_;
  std::unordered_map<txn::RequestHandle, std::shared_ptr<TxnWaiter>> waiters_;
  txn::RequestHandle next_handle_ = 1;
  boost::asio::steady_timer retry_timer_;
  boost::asio::steady_timer abort_timer_;
  boost::asio::steady_timer expiry_timer_;
  std::optional<std::int64_t> armed_deadline_ms_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

// Coordinator counts summed over this node's transaction coordinators (for /metrics).
struct TxnMetrics {
  std::uint64_t ongoing = 0;
  std::uint64_t committed = 0;
  std::uint64_t aborted = 0;
  std::uint64_t timed_out = 0;
  std::int64_t oldest_ongoing_age_ms = 0;  // age of the oldest Ongoing transaction, 0 if none
};

class TxnService;

// KIP-890 verification against this node's transaction coordinators (TxnService::verify).
class CoordinatorTxnVerifier final : public TxnVerifier {
 public:
  explicit CoordinatorTxnVerifier(TxnService& service) : service_(service) {}
  boost::asio::awaitable<std::vector<std::int16_t>> verify(std::string transactional_id, std::int64_t producer_id,
                                                           std::int16_t producer_epoch,
                                                           std::vector<PartitionRef> partitions, bool add) override;

 private:
  TxnService& service_;
};

class TxnService {
 public:
  explicit TxnService(Broker& broker);
  ~TxnService();

  // Partitions of __transaction_state (the topic's, once it exists; else the config).
  [[nodiscard]] std::int32_t partitions() const;
  [[nodiscard]] std::int32_t partition_for(std::string_view transactional_id) const;
  // Creates __transaction_state if it does not exist yet. False if it cannot be created.
  boost::asio::awaitable<bool> ensure_topic();
  // Before the executors run: creates (and loads) the host of every existing partition.
  void start();
  // After the executors have stopped: drops every host.
  void stop();
  // On `shard`, a broker of a cluster: the coordinator of a __transaction_state partition arrives
  // (loaded from the log) with the partition's leadership and leaves with it.
  void leadership_changed(std::size_t shard, std::int32_t partition, bool leader);

  // Requests; every one answers in the coordinator's terms (txn::Answer). NOT_COORDINATOR
  // when the transactional id's partition is not hosted (the topic does not exist yet).
  boost::asio::awaitable<txn::Answer> init_producer_id(std::string transactional_id, std::int32_t timeout_ms,
                                                       std::int64_t producer_id, std::int16_t producer_epoch);
  // client_transaction_version: 2 when the broker adds partitions for a transaction version 2
  // client (Produce v12+, TxnOffsetCommit v5+), 0 for AddPartitionsToTxn v0-v4 and AddOffsetsToTxn.
  boost::asio::awaitable<txn::Answer> add_partitions(std::string transactional_id, std::int64_t producer_id,
                                                     std::int16_t producer_epoch,
                                                     std::vector<txn::TopicPartition> partitions,
                                                     std::int16_t client_transaction_version = 0);
  // client_transaction_version: 2 for EndTxn v5+ (the epoch is bumped; the answer carries the
  // producer id and epoch to continue with).
  boost::asio::awaitable<txn::Answer> end_txn(std::string transactional_id, std::int64_t producer_id,
                                              std::int16_t producer_epoch, bool commit,
                                              std::int16_t client_transaction_version = 0);
  // A broker of a cluster whose transaction coordinator for the id is elsewhere: that broker
  // (-1 if no leader is known); nullopt when the coordinator is here (or on a single node).
  [[nodiscard]] std::optional<std::int32_t> remote_coordinator(std::string_view transactional_id) const;
  // KIP-890 at a remote coordinator: AddPartitionsToTxn v4 (verify only) or v5 (`add`) to it,
  // one error code per partition (NETWORK_EXCEPTION when no answer came).
  boost::asio::awaitable<std::vector<std::int16_t>> verify_remote(std::int32_t coordinator,
                                                                  std::string transactional_id,
                                                                  std::int64_t producer_id,
                                                                  std::int16_t producer_epoch,
                                                                  std::vector<PartitionRef> partitions, bool add);
  // KIP-890 verification (AddPartitionsToTxn verify_only): one error code per partition.
  boost::asio::awaitable<std::vector<std::int16_t>> verify(std::string transactional_id, std::int64_t producer_id,
                                                           std::int16_t producer_epoch,
                                                           std::vector<txn::TopicPartition> partitions);
  boost::asio::awaitable<protocol::DescribeTransactionsResponse::TransactionState> describe(
      std::string transactional_id);
  // Every hosted partition's matching transactions; error COORDINATOR_NOT_AVAILABLE... never:
  // a node without the topic has no transactions.
  boost::asio::awaitable<std::vector<protocol::ListTransactionsResponse::TransactionState>> list(
      std::vector<std::string> states, std::vector<std::int64_t> producer_ids, std::int64_t duration_ms);
  boost::asio::awaitable<TxnMetrics> metrics();
  // The verifier the partition service asks (KIP-890).
  [[nodiscard]] TxnVerifier& verifier() { return verifier_; }

 private:
  // On `shard` only: the host of a partition, created and loaded on first use; null if the
  // shard does not hold that partition.
  TxnHost* host(std::size_t shard, std::int32_t partition);
  // Runs an event on the partition's host: op(coordinator, handle, now, fresh_pid) -> Effects.
  template <class Op>
  boost::asio::awaitable<txn::Answer> run(std::int32_t partition, Op& op);

  Broker& broker_;
  TxnHostConfig config_;
  std::int32_t configured_partitions_ = 50;
  std::int32_t segment_bytes_ = 104857600;
  std::vector<std::unordered_map<std::int32_t, std::unique_ptr<TxnHost>>> hosts_;  // per shard
  CoordinatorTxnVerifier verifier_{*this};
};

}  // namespace weir::broker
