// TransactionCoordinator: the transactional ids one `__transaction_state` partition owns, as a
// pure state machine (DESIGN.md, "Coordinators are pure state machines"), following Kafka
// 4.3.1's TransactionCoordinator / TransactionStateManager / TransactionMetadata. Events take the
// wall-clock time `now_ms` and return Effects; nothing here does I/O or reads a clock.
//
// Transaction versions (KIP-890): a client on transaction protocol v0/v1 keeps its epoch for
// the producer's life; one on v2 (EndTxn v5+, partitions added by the broker from Produce v12+
// and TxnOffsetCommit v5+) gets its epoch bumped by every EndTxn, which answers the new producer
// id and epoch, and may abort without a transaction. Fences (InitProducerId meeting an Ongoing
// transaction) and timeouts end transactions at the server's finalized transaction.version
// (TxnConfig::server_transaction_version), as Kafka does.
//
// Every change of a transactional id is a transition: it is prepared (the id gets a pending
// state and the effects carry an Append with its `__transaction_state` record), the host appends
// and makes the record durable, then calls on_appended(id, error), which completes the
// transition (or rolls it back when the append failed) and gives the answers and further work
// that depend on it. While a transition is pending, requests for the id get
// CONCURRENT_TRANSACTIONS. Transitions are checked against Kafka's valid-previous-state table.
//
// Requests carry a RequestHandle; every handle is answered exactly once, by an Answer in the
// effects of the call itself or of a later on_appended.
//
// Markers: once PrepareCommit / PrepareAbort is durable the coordinator answers the EndTxn (Kafka
// answers before the markers are written) and asks for markers (MarkerRequest); the host writes
// them and calls on_markers_written, after which the CompleteCommit / CompleteAbort record is
// appended. Partitions whose marker failed are retried after `marker_retry_backoff_ms` (tick()).
//
// Producer ids come from the host: an InitProducerId that needs a fresh id (new transactional id,
// exhausted epoch) returns `needs_producer_id` and no answer; the host allocates one and calls
// again with it.
//
// Records (Kafka's TransactionLog): key = int16 version 0 + TransactionLogKey; value = int16
// version + TransactionLogValue (`value_version`, 1 as Kafka 4.3.1 writes with transaction.version
// 2 finalized: flexible, tagged fields only when not default); Dead is written as a tombstone.
//
// Single-threaded: owned by one shard.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "protocol/codec.h"
#include "protocol/gen/describe_transactions_response.h"
#include "protocol/gen/list_transactions_response.h"

namespace weir::txn {

using Bytes = protocol::Bytes;
using RequestHandle = std::uint64_t;

// Kafka's TransactionState ids.
enum class State : std::int8_t {
  kEmpty = 0,
  kOngoing = 1,
  kPrepareCommit = 2,
  kPrepareAbort = 3,
  kCompleteCommit = 4,
  kCompleteAbort = 5,
  kDead = 6,
  kPrepareEpochFence = 7,
};
[[nodiscard]] std::string_view state_name(State s);
[[nodiscard]] std::optional<State> state_from_name(std::string_view name);
[[nodiscard]] std::optional<State> state_from_id(std::int8_t id);
// Kafka's validPreviousStates: may an id in `from` move to `to`?
[[nodiscard]] bool valid_transition(State from, State to);

// Kafka error codes this module answers with.
enum class Error : std::int16_t {
  kNone = 0,
  kUnknownServerError = -1,
  kUnknownTopicOrPartition = 3,
  kCoordinatorLoadInProgress = 14,
  kCoordinatorNotAvailable = 15,
  kNotCoordinator = 16,
  kInvalidRequest = 42,
  kInvalidProducerEpoch = 47,
  kInvalidTxnState = 48,
  kInvalidProducerIdMapping = 49,
  kInvalidTransactionTimeout = 50,
  kConcurrentTransactions = 51,
  kProducerFenced = 90,
  kTransactionalIdNotFound = 105,
  kTransactionAbortable = 120,
};
[[nodiscard]] constexpr std::int16_t code(Error e) { return static_cast<std::int16_t>(e); }

inline constexpr std::int64_t kNoProducerId = -1;
inline constexpr std::int16_t kNoProducerEpoch = -1;

struct TopicPartition {
  std::string topic;
  std::int32_t partition = 0;
  auto operator<=>(const TopicPartition&) const = default;
};

// The order in which a java.util.HashSet<TopicPartition> filled with `parts` (in that order)
// iterates, as Kafka lists a transaction's partitions (DescribeTransactions, the log decoder).
[[nodiscard]] std::vector<TopicPartition> java_hash_set_order(const std::vector<TopicPartition>& parts);

struct TxnConfig {
  std::int32_t max_timeout_ms = 900000;                     // transaction.max.timeout.ms
  std::int64_t transactional_id_expiration_ms = 604800000;  // transactional.id.expiration.ms
  std::int32_t coordinator_epoch = 0;                       // leader epoch of the `__transaction_state` partition
  std::int16_t value_version = 1;                           // TransactionLogValue version written (0 or 1)
  std::int64_t marker_retry_backoff_ms = 100;
  // The finalized transaction.version: fences and timeouts end transactions at it.
  std::int16_t server_transaction_version = 0;
};

// One transactional id's state (Kafka's TransactionMetadata).
struct TxnMetadata {
  std::string transactional_id;
  std::int64_t producer_id = kNoProducerId;
  std::int64_t previous_producer_id = kNoProducerId;
  std::int64_t next_producer_id = kNoProducerId;
  std::int16_t producer_epoch = kNoProducerEpoch;
  std::int16_t last_producer_epoch = kNoProducerEpoch;
  std::int32_t timeout_ms = 0;
  State state = State::kEmpty;
  std::vector<TopicPartition> partitions;  // insertion order, no duplicates
  std::int64_t start_ms = -1;
  std::int64_t last_update_ms = -1;
  std::int16_t client_transaction_version = 0;
  std::optional<State> pending;
  bool has_failed_epoch_fence = false;

  [[nodiscard]] bool contains(const TopicPartition& tp) const;
};

struct Record {
  Bytes key;
  std::optional<Bytes> value;  // nullopt: tombstone
};

// A prepared transition's record; the host appends it and calls on_appended(transactional_id).
struct Append {
  std::string transactional_id;
  Record record;
};

// The final answer to a request: InitProducerId, AddPartitionsToTxn (v0-v3, every partition
// carries `error`), AddOffsetsToTxn and EndTxn all fit this shape. `error` is the coordinator's;
// the handler maps it to what the request version knows.
struct Answer {
  RequestHandle handle = 0;
  Error error = Error::kNone;
  std::int64_t producer_id = kNoProducerId;
  std::int16_t producer_epoch = kNoProducerEpoch;
};

// Write COMMIT/ABORT markers for one transaction to `partitions`.
struct MarkerRequest {
  std::string transactional_id;
  std::int64_t producer_id = 0;
  std::int16_t producer_epoch = 0;
  std::int32_t coordinator_epoch = 0;
  bool commit = false;
  // The transaction version the transaction ended at (WriteTxnMarkers v2 carries it: a marker
  // of v2 must have a higher epoch than the producer's data).
  std::int16_t transaction_version = 0;
  std::vector<TopicPartition> partitions;
};

struct Effects {
  std::vector<Append> appends;
  std::vector<Answer> answers;
  std::vector<MarkerRequest> markers;
  // InitProducerId, EndTxn (v2, at an exhausted epoch) and abort_timed_out: call again with a
  // freshly allocated producer id.
  bool needs_producer_id = false;
};

enum class ReplayError { kMalformedKey, kMalformedValue, kUnknownKeyVersion, kUnknownValueVersion };
[[nodiscard]] std::string_view to_string(ReplayError e);

struct TxnStats {
  std::uint64_t committed = 0;  // CompleteCommit records appended
  std::uint64_t aborted = 0;    // CompleteAbort records appended
  std::uint64_t timed_out = 0;  // transactions aborted for exceeding their timeout
};

class TransactionCoordinator {
 public:
  explicit TransactionCoordinator(TxnConfig config = {});

  // InitProducerId with a transactional id (the handler answers null ids itself).
  // `producer_id` / `producer_epoch`: the request's (v3+, KIP-360), -1 when absent.
  Effects init_producer_id(RequestHandle handle, const std::string& transactional_id, std::int32_t timeout_ms,
                           std::int64_t producer_id, std::int16_t producer_epoch,
                           std::optional<std::int64_t> fresh_producer_id, std::int64_t now_ms);
  // AddPartitionsToTxn (v0-v3; v5 from a broker adding the partitions of a Produce v12+ or a
  // TxnOffsetCommit v5+: client_transaction_version 2) and AddOffsetsToTxn (one
  // `__consumer_offsets` partition).
  Effects add_partitions(RequestHandle handle, const std::string& transactional_id, std::int64_t producer_id,
                         std::int16_t producer_epoch, const std::vector<TopicPartition>& partitions,
                         std::int64_t now_ms, std::int16_t client_transaction_version = 0);
  // AddPartitionsToTxn v4+ verify_only (KIP-890): per partition, 0 when it is in the ongoing
  // transaction of that producer, else the coordinator's error (TRANSACTION_ABORTABLE when the
  // partition is not in it).
  [[nodiscard]] std::vector<Error> verify(const std::string& transactional_id, std::int64_t producer_id,
                                          std::int16_t producer_epoch,
                                          const std::vector<TopicPartition>& partitions) const;
  // EndTxn; client_transaction_version 2 for EndTxn v5+. At v2 the answer carries the producer
  // id and epoch the client continues with; an exhausted epoch needs a fresh producer id.
  Effects end_txn(RequestHandle handle, const std::string& transactional_id, std::int64_t producer_id,
                  std::int16_t producer_epoch, bool commit, std::int64_t now_ms,
                  std::int16_t client_transaction_version = 0, std::optional<std::int64_t> fresh_producer_id = {});
  void set_server_transaction_version(std::int16_t version) { config_.server_transaction_version = version; }

  // The host's report on an Append it was given: error 0 when durable, else the append's
  // Kafka error (mapped as Kafka's appendTransactionToLog does).
  Effects on_appended(const std::string& transactional_id, std::int16_t error, std::int64_t now_ms);
  // The host's report on a MarkerRequest: one error per partition of the request, in order.
  Effects on_markers_written(const MarkerRequest& request, const std::vector<std::int16_t>& errors,
                             std::int64_t now_ms);

  // transaction.abort.timed.out.transaction.cleanup.interval.ms: fences and aborts every
  // Ongoing transaction older than its timeout. At transaction version 2 an exhausted epoch
  // rotates the producer id: one that needs it is skipped with needs_producer_id set; call again
  // with `fresh_producer_id` for it.
  Effects abort_timed_out(std::int64_t now_ms, std::optional<std::int64_t> fresh_producer_id = {});
  // transaction.remove.expired.transaction.cleanup.interval.ms: tombstones ids idle (Empty,
  // CompleteCommit, CompleteAbort) for transactional.id.expiration.ms.
  Effects expire_transactional_ids(std::int64_t now_ms);
  // Marker retries.
  Effects tick(std::int64_t now_ms);
  [[nodiscard]] std::optional<std::int64_t> next_deadline_ms() const;

  [[nodiscard]] protocol::DescribeTransactionsResponse::TransactionState describe(
      const std::string& transactional_id) const;
  // ListTransactions filters (empty = any); unknown state names are reported in `unknown_states`.
  void list(const std::vector<std::string>& states, const std::vector<std::int64_t>& producer_ids,
            std::int64_t duration_ms, std::int64_t now_ms,
            std::vector<protocol::ListTransactionsResponse::TransactionState>& out) const;

  // Loading: one `__transaction_state` record (`value` nullopt for a tombstone).
  Status<ReplayError> replay(std::span<const std::uint8_t> key, std::optional<std::span<const std::uint8_t>> value);
  // Ends loading: transactions left in PrepareCommit / PrepareAbort get their markers.
  Effects finish_replay(std::int64_t now_ms);

  [[nodiscard]] const std::map<std::string, TxnMetadata>& transactions() const { return txns_; }
  [[nodiscard]] const TxnMetadata* find(const std::string& transactional_id) const;
  [[nodiscard]] const TxnStats& stats() const { return stats_; }
  [[nodiscard]] const TxnConfig& config() const { return config_; }

  [[nodiscard]] static Bytes key_bytes(const std::string& transactional_id);
  // The record value of `m` (as it will be after its pending transition), at `version`.
  [[nodiscard]] static Bytes value_bytes(const TxnMetadata& m, std::int16_t version);

 private:
  // What to do once a pending transition's record is durable.
  enum class Then : std::uint8_t {
    kAnswerInit,    // answer InitProducerId with the new id/epoch
    kAnswerAdd,     // answer AddPartitions / AddOffsets
    kEndTxn,        // answer EndTxn (if from a client), then ask for markers
    kFenceAbort,    // InitProducerId fence: answer CONCURRENT_TRANSACTIONS, then markers
    kTimeoutAbort,  // timed-out transaction: markers
    kComplete,      // CompleteCommit / CompleteAbort written
    kDead,          // tombstone written: forget the id
  };
  struct Pending {
    TxnMetadata target;  // the metadata after the transition
    Then then = Then::kAnswerAdd;
    std::optional<RequestHandle> handle;
    bool epoch_fence = false;  // the Prepare was an epoch fence (Kafka's isEpochFence)
  };

  TxnMetadata* lookup(const std::string& transactional_id);
  // Kafka's prepareTransitionTo: checks the table, sets the pending state, emits the record.
  void prepare(TxnMetadata& m, TxnMetadata target, Then then, std::optional<RequestHandle> handle, Effects& fx,
               bool epoch_fence = false);
  // Kafka's endTransaction at transaction version 0/1 (endTransactionWithTV1) and 2;
  // `from_client` false for fences and timeouts. `fresh_id`: a producer id for a v2 rotation
  // (consumed when used; needs_producer_id is set when one is needed and missing).
  void end_transaction(TxnMetadata& m, std::int64_t producer_id, std::int16_t producer_epoch, bool commit,
                       bool from_client, std::int16_t transaction_version, std::optional<RequestHandle> handle,
                       Then then, std::int64_t now_ms, std::optional<std::int64_t>& fresh_id, Effects& fx);
  void end_transaction_v1(TxnMetadata& m, std::int64_t producer_id, std::int16_t producer_epoch, bool commit,
                          bool from_client, std::optional<RequestHandle> handle, Then then, std::int64_t now_ms,
                          Effects& fx);
  void end_transaction_v2(TxnMetadata& m, std::int64_t producer_id, std::int16_t producer_epoch, bool commit,
                          bool from_client, std::int16_t transaction_version, std::optional<RequestHandle> handle,
                          Then then, std::int64_t now_ms, std::optional<std::int64_t>& fresh_id, Effects& fx);
  // Kafka's prepareFenceProducerEpoch.
  [[nodiscard]] static TxnMetadata fence_target(const TxnMetadata& m);
  // After Prepare is durable: set CompleteX pending and ask for markers.
  void send_markers(TxnMetadata& m, std::int64_t now_ms, Effects& fx);
  static void answer(Effects& fx, std::optional<RequestHandle> handle, Error error,
                     std::int64_t producer_id = kNoProducerId, std::int16_t producer_epoch = kNoProducerEpoch);

  struct MarkerRetry {
    MarkerRequest request;
    std::int64_t due_ms = 0;
  };

  TxnConfig config_;
  std::map<std::string, TxnMetadata> txns_;
  std::map<std::string, Pending> pending_;
  // Markers in flight or to retry, per transactional id: partitions not yet done.
  std::map<std::string, std::set<TopicPartition>> markers_left_;
  std::vector<MarkerRetry> retries_;
  TxnStats stats_;
};

}  // namespace weir::txn
