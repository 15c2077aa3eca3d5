// A partition replica hosted by this broker (Kafka's Partition): its log, its idempotent
// producers, its high watermark, the fetches waiting for data and the appends waiting for their
// acknowledgement. Owned by exactly one executor (its shard): every member is read and written
// only there. PartitionService (partition_service.h) routes requests to it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/file_bytes.h"
#include "base/uuid.h"
#include "broker/produce_purgatory.h"
#include "storage/partition_log.h"
#include "storage/producer_state.h"
#include "storage/producer_state_manager.h"
#include "storage/records_summary.h"
#include "storage/transaction_index.h"

namespace weir::broker {

// Who appends: a producer (producer-state check, traffic counted), a coordinator writing its
// own records to an internal topic, or the broker writing a transaction marker (a control batch
// the partition builds, checked against the producer's epoch and coordinator epoch, ending its
// open transaction). Replication adds follower appends.
enum class AppendOrigin { kClient, kCoordinator, kMarker };

// How far a fetch may read: the high watermark (read_uncommitted) or the last stable offset
// (read_committed); follower reads later.
enum class ReadBound { kHighWatermark, kLastStable };

// A KIP-890 verification guard: a partition records one per producer before asking the
// transaction coordinator whether the partition is in the producer's transaction; the append
// goes ahead only if the guard is still the partition's current one (a marker or the
// transaction's first batch clears it). 0 is no guard (nothing to verify).
using VerificationGuard = std::uint64_t;

// The outcome of an append on this partition.
struct PartitionAppend {
  std::int16_t error = 0;
  std::int64_t base_offset = -1;
  std::int64_t end_offset = -1;  // last offset + 1 (what an acks=all waiter waits for)
  std::int64_t log_append_time_ms = -1;
  std::int64_t log_start_offset = -1;
  std::string error_message;
  std::optional<storage::Errc> storage_error;  // the log's refusal, for a more precise message
  bool appended = false;   // false for a duplicate (answered with the first write's offsets)
  bool flush_due = false;  // flush.messages reached: answered once flushed, as Kafka flushes inline
};

// What a fetch read from this partition. A failed read tells no offsets (-1), as Kafka's answer.
struct PartitionRead {
  std::int16_t error = 0;
  std::int64_t high_watermark = -1;
  std::int64_t log_start_offset = -1;
  std::int64_t last_stable_offset = -1;
  std::int32_t leader_epoch = -1;
  // read_committed only: the aborted transactions overlapping the data returned (empty when none
  // or no data); nullopt at read_uncommitted (Fetch answers null there).
  std::optional<std::vector<storage::AbortedTxn>> aborted;
  // The record data, left in the segment files: the connection sends it with sendfile(2).
  std::shared_ptr<const FileBytes> records;
  [[nodiscard]] std::int64_t size() const noexcept { return records ? records->size : 0; }
};

// ListOffsets' answer for this partition.
struct OffsetLookup {
  std::int16_t error = 0;
  std::int64_t timestamp = -1;
  std::int64_t offset = -1;
  std::int32_t leader_epoch = -1;
};

// DeleteRecords' answer for this partition.
struct DeleteRecordsOutcome {
  std::int16_t error = 0;
  std::int64_t low_watermark = -1;
};

// OffsetForLeaderEpoch's answer for this partition.
struct EpochEndOffset {
  std::int16_t error = 0;
  std::int32_t leader_epoch = -1;
  std::int64_t end_offset = -1;
};

class Partition {
 public:
  // The log is owned by the log manager; the partition is its only user while it exists.
  Partition(std::string topic, Uuid topic_id, std::int32_t index, std::int32_t leader_epoch, storage::PartitionLog* log)
      : topic_(std::move(topic)),
        topic_id_(topic_id),
        index_(index),
        leader_epoch_(leader_epoch),
        log_(log),
        producer_state_(std::make_shared<storage::ProducerStateManager>()) {
    // Producer snapshots follow the log's segments (rolls, deletions, truncations). The log
    // holds the manager weakly, so whichever of the two goes first is fine.
    log_->set_listener(producer_state_);
  }

  [[nodiscard]] const std::string& topic() const { return topic_; }
  [[nodiscard]] const Uuid& topic_id() const { return topic_id_; }
  [[nodiscard]] std::int32_t index() const { return index_; }
  [[nodiscard]] std::int32_t leader_epoch() const { return leader_epoch_; }
  // The metadata's leadership of this replica (a broker-only node learns it from the controller
  // quorum; one node always leads). A replica that does not lead refuses client appends and
  // reads with NOT_LEADER_OR_FOLLOWER.
  void set_leadership(bool leader, std::int32_t leader_epoch) {
    leader_ = leader;
    leader_epoch_ = leader_epoch;
  }
  [[nodiscard]] bool is_leader() const { return leader_; }
  [[nodiscard]] storage::PartitionLog& log() { return *log_; }
  [[nodiscard]] const storage::PartitionLog& log() const { return *log_; }

  // On one node the high watermark is the log end offset: every replica (this one) has the data.
  [[nodiscard]] std::int64_t high_watermark() const { return log_->log_end_offset(); }

  // Appends one producer request's batches (kClient: after the idempotence check; a duplicate
  // is answered with the offsets it was first written at) or a coordinator's batch, then moves
  // the high watermark, which wakes the watching fetches.
  // summaries: the compressed batches' records, checked off the executors (compressed_batches.h),
  // or null to let the log decompress and check them itself.
  // kClient with transactional batches, when verified (`guard` has a value: verification on):
  // a batch of a producer without an open transaction here is refused with INVALID_TXN_STATE
  // unless *guard is the producer's current verification guard (see start_verification).
  // kMarker: use write_marker.
  PartitionAppend append(std::span<std::byte> batches, AppendOrigin origin,
                         const storage::RecordsSummaries* summaries = nullptr,
                         std::optional<VerificationGuard> guard = std::nullopt);
  // A transaction marker (COMMIT or ABORT control batch, one offset, as Kafka writes it) for the
  // producer, appended with AppendOrigin::kMarker: INVALID_PRODUCER_EPOCH for an epoch below the
  // producer's, TRANSACTION_COORDINATOR_FENCED for a coordinator epoch below its last marker's.
  // Ends the producer's open transaction (an abort adds its .txnindex entry), clears its
  // verification guard, moves the last stable offset and the high watermark.
  PartitionAppend write_marker(std::int64_t producer_id, std::int16_t producer_epoch, std::int32_t coordinator_epoch,
                               bool commit);
  // The last stable offset: the high watermark, or below it the first offset of the oldest open
  // transaction (not below the log start offset: a log start past it leaves the LSO there).
  [[nodiscard]] std::int64_t last_stable_offset() const;
  [[nodiscard]] std::int64_t bound_offset(ReadBound bound) const {
    return bound == ReadBound::kLastStable ? last_stable_offset() : high_watermark();
  }

  // Kafka's maybeStartTransactionVerification for the append of `batches` (one producer's
  // request): 0 when nothing needs verifying (no transactional batch, or the producer's
  // transaction is open here at that epoch), else the producer's guard (created, or the one
  // already pending).
  VerificationGuard start_verification(std::span<const std::byte> batches);
  [[nodiscard]] VerificationGuard verification_guard(std::int64_t producer_id) const;
  // Whole batches from fetch_offset, up to the bound (see PartitionLog::read); counts the bytes.
  PartitionRead read(std::int64_t fetch_offset, std::int32_t max_bytes, std::int32_t current_leader_epoch,
                     ReadBound bound, bool min_one_batch);
  // ListOffsets: -1 latest, -2 earliest, -3 max timestamp, -4 earliest local, else by timestamp.
  // Latest is the high watermark, or the last stable offset for kLastStable (read_committed).
  [[nodiscard]] OffsetLookup lookup_offset(std::int64_t timestamp, std::int32_t current_leader_epoch,
                                           ReadBound bound = ReadBound::kHighWatermark) const;
  // DeleteRecords: moves the log start offset to `offset` (-1: the high watermark).
  DeleteRecordsOutcome delete_records(std::int64_t offset);
  // OffsetForLeaderEpoch: the end offset of `epoch`.
  [[nodiscard]] EpochEndOffset end_offset_for_epoch(std::int32_t current_leader_epoch, std::int32_t epoch) const;
  // UNKNOWN_LEADER_EPOCH / FENCED_LEADER_EPOCH when a client's epoch (>= 0) is not this one.
  [[nodiscard]] std::int16_t leader_epoch_error(std::int32_t current_leader_epoch) const;

  // Fetches waiting for data register a callback; the first advance of the bound's offset past
  // `offset` runs and clears it (the plain form: the next high-watermark advance).
  void watch(std::function<void()> on_data) { watch(ReadBound::kHighWatermark, -1, std::move(on_data)); }
  void watch(ReadBound bound, std::int64_t offset, std::function<void()> on_data) {
    watchers_.push_back(Watcher{bound, offset, std::move(on_data)});
  }
  // Appends waiting for their acknowledgement. Shared with flush completions, which may arrive
  // after the partition is gone (its topic deleted) and still answer their waiters.
  [[nodiscard]] const std::shared_ptr<ProducePurgatory>& purgatory() const { return purgatory_; }

  // Traffic since start, for metrics: bytes and records appended by producers, bytes read by
  // fetches. Owner shard only, like everything here.
  struct Traffic {
    std::uint64_t bytes_in = 0;
    std::uint64_t messages_in = 0;
    std::uint64_t bytes_out = 0;
  };
  void count_produced(std::uint64_t bytes, std::uint64_t messages) {
    traffic_.bytes_in += bytes;
    traffic_.messages_in += messages;
  }
  void count_fetched(std::uint64_t bytes) { traffic_.bytes_out += bytes; }
  [[nodiscard]] const Traffic& traffic() const { return traffic_; }

  [[nodiscard]] storage::ProducerStateTable& producers() { return producer_state_->table(); }
  [[nodiscard]] storage::ProducerStateManager& producer_state() { return *producer_state_; }

  // Rebuilds the idempotent producers' state from the log's producer snapshot and the batches
  // after it (producer.id.expiration.ms applies to what the snapshot holds). On a read error the
  // state is what could be rebuilt; the error is logged by the manager.
  void load_producer_state(std::int64_t producer_id_expiration_ms) {
    producer_state_->set_expiration_ms(producer_id_expiration_ms);
    (void)producer_state_->load(*log_);
    sync_first_unstable_offset();
  }
  // Clean shutdown, before the log is closed: a producer snapshot at the log end, so the next
  // start reads no batches.
  void snapshot_producer_state() { (void)producer_state_->take_snapshot(*log_); }
  // producer.id.expiration.ms: drops producers idle that long at now_ms (wall clock).
  std::size_t expire_producers(std::int64_t now_ms) { return producer_state_->expire(now_ms); }

 private:
  std::string topic_;
  Uuid topic_id_;
  std::int32_t index_;
  std::int32_t leader_epoch_;
  bool leader_ = true;
  storage::PartitionLog* log_;
  // One replica: everything appended is replicated, so the high watermark is the log end.
  void advance_high_watermark();
  void notify_watchers();
  // The log's first unstable offset (for the cleaner) follows the producer table.
  void sync_first_unstable_offset();
  // After a verified transactional batch or a marker of the producer: its guard is done.
  void clear_verification(std::int64_t producer_id) { verification_guards_.erase(producer_id); }

  struct Watcher {
    ReadBound bound;
    std::int64_t offset;
    std::function<void()> on_data;
  };
  std::vector<Watcher> watchers_;
  std::unordered_map<std::int64_t, VerificationGuard> verification_guards_;
  VerificationGuard next_guard_ = 1;
  std::shared_ptr<ProducePurgatory> purgatory_ = std::make_shared<ProducePurgatory>();
  Traffic traffic_;
  std::shared_ptr<storage::ProducerStateManager> producer_state_;
};

}  // namespace weir::broker
