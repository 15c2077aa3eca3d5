// PartitionService: the append and read paths of the partitions this broker hosts (Kafka's
// ReplicaManager). Handlers name partitions by (topic, index); the service routes each to its
// owner shard (all of a request's partitions at once, one hop there and one back), runs the
// Partition operation there, and hands the answers back in request order.
//
// It owns:
//   - appends as leader (producer-state check, offsets, high watermark, waking the long polls
//     watching the partition), with the origin an append comes from (client or coordinator;
//     follower appends and transaction markers later);
//   - acks=all completion: an acks=all append (with flush.on.acks.all), or one past
//     flush.messages, waits in its partition's ProducePurgatory until the flush that covers it
//     succeeded (group commit); replication will complete it on the ISR's high watermark instead;
//   - reads up to a bound (the high watermark; the last stable offset and follower reads later),
//     with Fetch's long poll;
//   - ListOffsets, DeleteRecords, OffsetForLeaderEpoch;
//   - flushing partitions on request (sync), for coordinators and periodic flushes.
//
// Thread safety: the asynchronous calls may be made from any executor; the partitions they reach
// are touched only on their owner shards.
#pragma once

#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "broker/catalog.h"
#include "broker/partition.h"
#include "broker/replication_quota.h"
#include "broker/shards.h"

namespace weir::storage {
class Flusher;
}

namespace weir::broker {

class TxnVerifier;

// A partition as a request names it.
struct PartitionRef {
  std::string topic;
  std::int32_t partition = -1;
};

// One partition's part of a Produce: the batches are appended in place (offsets assigned).
struct ProduceSpec {
  PartitionRef ref;
  std::span<std::byte> batches;
  const storage::RecordsSummaries* summaries = nullptr;  // see Partition::append
};

// The transaction side of a Produce request, for KIP-890 verification: the request's
// transactional.id (null for an idempotent producer) and its version (which decides the error
// an unverified partition gets: INVALID_TXN_STATE through v10, TRANSACTION_ABORTABLE from v11).
// The request also carries its timeout: an acks=all append of a replicated partition not
// acknowledged by then is answered REQUEST_TIMED_OUT (Kafka's DelayedProduce).
// What a Produce of `version` answers for a partition the coordinator did not verify (or add)
// with `error` (Kafka's ReplicaManager and AddPartitionsToTxnManager): the code and a message.
[[nodiscard]] std::pair<std::int16_t, std::string> transaction_verification_error(std::int16_t error,
                                                                                 std::int16_t version);

struct ProduceTxn {
  std::optional<std::string> transactional_id;
  std::int16_t version = 0;
  std::int32_t timeout_ms = 30000;
};

// One transaction marker to write (WriteTxnMarkers, or the coordinator completing a
// transaction): a COMMIT or ABORT control batch for the producer on the partition.
struct MarkerSpec {
  PartitionRef ref;
  std::int64_t producer_id = -1;
  std::int16_t producer_epoch = -1;
  std::int32_t coordinator_epoch = -1;
  bool commit = false;
  // The transaction's version (WriteTxnMarkers v2): at 2 the marker's epoch must be higher than
  // the producer's (the coordinator bumped it), a retry of a written marker excepted.
  std::int16_t transaction_version = 0;
};

// Produce's acks: 0 and 1 answer after the append, kAll after the acknowledgement.
enum class Acks : std::int8_t { kNone = 0, kLeader = 1, kAll = -1 };

// One partition of a Fetch, its topic known to exist.
struct FetchSpec {
  PartitionRef ref;
  std::int64_t fetch_offset = 0;
  std::int32_t current_leader_epoch = -1;
  std::int32_t max_bytes = 0;
  std::int16_t error = 0;  // decided before reading (answered without a read; ends the long poll)
  // A follower's fetch only (FetchLimits::replica_id >= 0).
  std::int64_t log_start_offset = -1;
  std::int32_t last_fetched_epoch = -1;
};

// A Fetch's limits: response size, when to answer, how far to read.
struct FetchLimits {
  std::int32_t max_bytes = 0;  // <= 0: no limit
  std::int32_t min_bytes = 0;
  std::int32_t max_wait_ms = 0;
  ReadBound bound = ReadBound::kHighWatermark;
  // A follower replica's fetch (Fetch's ReplicaState): it reads up to the log end, records the
  // follower's position, and waits for the log end to move.
  std::int32_t replica_id = -1;
  std::int64_t replica_epoch = -1;
  // A consumer's Fetch v11+ (Kafka's ClientMetadata): it may read from a follower, and its rack
  // (client.rack) may send it to a follower in that rack (KIP-392).
  bool client_metadata = false;
  std::string client_rack = {};
};

// An ISR change a leader asks the controller for (AlterPartition), and where to answer it.
struct IsrChange {
  PartitionRef ref;
  Uuid topic_id;
  IsrProposal proposal;
};
// Sends an ISR change to the controller; answered on the partition's owner shard through
// PartitionService::isr_change_answered.
using IsrSender = std::function<void(IsrChange)>;

struct OffsetQuery {
  PartitionRef ref;
  std::int64_t timestamp = -1;
  std::int32_t current_leader_epoch = -1;
  ReadBound bound = ReadBound::kHighWatermark;  // latest: the LSO at isolation_level 1
};

struct DeleteRecordsSpec {
  PartitionRef ref;
  std::int64_t offset = -1;
};

struct EpochQuery {
  PartitionRef ref;
  std::int32_t current_leader_epoch = -1;
  std::int32_t leader_epoch = -1;
};

class PartitionService {
 public:
  explicit PartitionService(ShardSet& shards);
  PartitionService(const PartitionService&) = delete;
  PartitionService& operator=(const PartitionService&) = delete;

  // Flushes go to `flusher` (running, and outliving stop()); durable_acks_all: acks=all is
  // answered only once flushed (flush.on.acks.all, off in --dev).
  void start(storage::Flusher& flusher, bool durable_acks_all);
  // No flush is submitted after this; the ones in flight complete their waiters.
  void stop();

  // Appends each partition's batches on its owner shard; answers in spec order once each append
  // is acknowledged as `acks` asks (and once flushed when past flush.messages). Transactional
  // batches of a producer without an open transaction on a partition are verified first (the
  // verifier, when there is one), and refused with the error txn.version maps the coordinator's
  // answer to.
  boost::asio::awaitable<std::vector<PartitionAppend>> append(std::vector<ProduceSpec> specs, Acks acks);
  boost::asio::awaitable<std::vector<PartitionAppend>> append(std::vector<ProduceSpec> specs, Acks acks,
                                                              ProduceTxn txn);
  // Writes each marker on its partition's owner shard (Partition::write_marker); answers one
  // Kafka error code per spec, in order, once each marker is durable (as acks=all).
  boost::asio::awaitable<std::vector<std::int16_t>> write_markers(std::vector<MarkerSpec> specs);
  // KIP-890: who verifies transactional produces (null: nothing is verified). Set before serving.
  void set_verifier(TxnVerifier* verifier) { verifier_ = verifier; }
  // The topics as the metadata knows them: a partition it names that this broker does not host
  // is answered NOT_LEADER_OR_FOLLOWER (another broker leads it, or it is being created), one it
  // does not name UNKNOWN_TOPIC_OR_PARTITION. Before start().
  void set_catalog(std::function<std::shared_ptr<const Catalog>()> catalog) { catalog_ = std::move(catalog); }
  // The error for a partition this broker does not host (see set_catalog).
  [[nodiscard]] std::int16_t not_hosted(const PartitionRef& ref) const;
  // Replication: where ISR changes go (a broker of a cluster); before start().
  void set_isr_sender(IsrSender sender) { isr_sender_ = std::move(sender); }
  // On the owner shard: hands an ISR change a partition made due to the sender.
  void propose_isr_change(const Partition& p, std::optional<IsrProposal> proposal) const;
  // The controller's answer to an ISR change, applied on the partition's owner shard.
  void isr_change_answered(const PartitionRef& ref, std::int32_t leader_epoch, std::int16_t error,
                           std::vector<std::int32_t> isr, std::int32_t partition_epoch);
  // transaction.partition.verification.enable (on by default, as Kafka).
  void set_verification_enabled(bool on) { verification_enabled_.store(on, std::memory_order_relaxed); }
  // replica.selector.class is Kafka's RackAwareReplicaSelector (KIP-392): leaders may send a
  // consumer with a client.rack to a follower in its rack. Before start().
  void set_rack_aware_selector(bool on) { rack_aware_selector_ = on; }
  // The alive brokers whose broker.rack is `rack` (KIP-392's candidates); empty without the
  // selector or a rack.
  [[nodiscard]] std::vector<std::int32_t> brokers_in_rack(const std::string& rack) const;
  [[nodiscard]] bool verification_enabled() const { return verification_enabled_.load(std::memory_order_relaxed); }
  // The leader side of the replication throttle (null: none): a follower outside the ISR gets no
  // records of a throttled partition while the quota is exceeded, and the bytes every follower
  // fetch returns of throttled partitions are recorded. Before start(); outlives this service.
  void set_leader_quota(ReplicationQuota* quota) { leader_quota_ = quota; }
  [[nodiscard]] ReplicationQuota* leader_quota() const { return leader_quota_; }
  // Reads each partition; waits (long poll) until min_bytes are there, a read fails, or
  // max_wait_ms passes, woken by the high watermark of a watched partition moving.
  boost::asio::awaitable<std::vector<PartitionRead>> fetch(const FetchLimits& limits,
                                                           const std::vector<FetchSpec>& specs);
  boost::asio::awaitable<std::vector<OffsetLookup>> list_offsets(const std::vector<OffsetQuery>& queries);
  boost::asio::awaitable<std::vector<DeleteRecordsOutcome>> delete_records(const std::vector<DeleteRecordsSpec>& specs);
  boost::asio::awaitable<std::vector<EpochEndOffset>> end_offsets_for_epochs(const std::vector<EpochQuery>& queries);
  // Waits until everything appended so far to these partitions is fdatasync'd (group commit);
  // 0 or the Kafka error code.
  boost::asio::awaitable<std::int16_t> sync(const std::vector<PartitionRef>& parts);
  // Coordinators' writes: waits until everything appended so far to these partitions is
  // acknowledged as an acks=all append is (Kafka's coordinators write with acks=all). On one node
  // that is sync(); a replicated leader waits for the ISR (high watermark), and for its own sync
  // with flush.on.acks.all; REQUEST_TIMED_OUT after 30 s, NOT_LEADER_OR_FOLLOWER when the
  // leadership leaves meanwhile.
  boost::asio::awaitable<std::int16_t> replicate(const std::vector<PartitionRef>& parts);

  // On the owner shard only: the partition, or null.
  [[nodiscard]] Partition* local(std::size_t shard, const PartitionRef& ref) const {
    return shards_.table(shard).find(ref.topic, ref.partition);
  }

 private:
  // On the owner shard: flushes what the partition holds so far; done(error, end offset covered)
  // runs there once the flush finished (at once when nothing is unsynced).
  void flush_on_owner(std::size_t shard, const PartitionRef& ref, Partition& p,
                      std::function<void(std::int16_t, std::int64_t)> done);
  // On the owner shard: parks an append in the partition's purgatory until a flush covers
  // end_offset; done(error) answers it.
  void await_ack(std::size_t shard, const PartitionRef& ref, Partition& p, std::int64_t end_offset,
                 ProducePurgatory::Completion done);
  // On the owner shard, a replicated partition: parks an acks=all append until the ack watermark
  // (high watermark; and synced with flush.on.acks.all) passes end_offset or timeout_ms passes;
  // an acks=1 append past flush.messages until its flush.
  void await_replicated_ack(std::size_t shard, const PartitionRef& ref, Partition& p, std::int64_t end_offset,
                            bool all, bool flush_due, std::int32_t timeout_ms, ProducePurgatory::Completion done);

  ShardSet& shards_;
  storage::Flusher* flusher_ = nullptr;
  bool durable_acks_all_ = true;
  std::function<std::shared_ptr<const Catalog>()> catalog_;
  TxnVerifier* verifier_ = nullptr;
  IsrSender isr_sender_;
  std::atomic<bool> verification_enabled_{true};  // transaction.partition.verification.enable (dynamic)
  bool rack_aware_selector_ = false;
  ReplicationQuota* leader_quota_ = nullptr;
};

}  // namespace weir::broker
