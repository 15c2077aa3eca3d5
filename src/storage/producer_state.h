// Per-partition state of idempotent producers, checked on every leader append so a retried batch
// is answered with its original offsets instead of being written again, and a gap or a stale
// epoch is refused with the error Apache Kafka returns.
//
// Per producer id: the epoch and the sequence/offset ranges of its last 5 batches (a producer
// has at most 5 requests in flight per partition). Rules, for a batch (pid, epoch, first_seq,
// last_seq) of a producer with state:
//   epoch <  current                     -> INVALID_PRODUCER_EPOCH
//   epoch >  current                     -> first_seq must be 0, else OUT_OF_ORDER_SEQUENCE_NUMBER
//   epoch == current, same seq range as one of the last 5 batches -> duplicate (original offsets)
//   epoch == current, first_seq != last_seq + 1 (mod 2^31)         -> OUT_OF_ORDER_SEQUENCE_NUMBER
// A producer without state (new, or its state expired) is accepted at any sequence.
//
// Besides the batches, each entry keeps what Kafka's producer state snapshots hold (the epoch of
// the transaction coordinator that wrote the producer's last marker, and the first offset of its
// open transaction), so the state survives restarts (producer_state_manager.h) and round-trips
// Kafka's snapshot files (producer_snapshot.h).
//
// Pure: no I/O, no clock; times are passed in. Owned by the partition's shard.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <unordered_map>
#include <vector>

namespace weir::storage {

struct BatchMetadata {
  std::int32_t first_seq = -1;
  std::int32_t last_seq = -1;
  std::int64_t first_offset = -1;
  std::int64_t last_offset = -1;
  std::int64_t timestamp_ms = -1;
};

struct ProducerEntry {
  std::int16_t epoch = -1;
  std::deque<BatchMetadata> batches;  // oldest first, at most kMaxCachedBatches
  std::int64_t last_timestamp_ms = -1;
  std::int32_t coordinator_epoch = -1;                   // of the last transaction marker; -1: none
  std::optional<std::int64_t> current_txn_first_offset;  // the open transaction's first offset
};

// What the caller needs to know about one batch of an append.
struct BatchInfo {
  std::int64_t producer_id = -1;
  std::int16_t epoch = -1;
  std::int32_t first_seq = -1;
  std::int32_t last_seq = -1;     // first_seq + lastOffsetDelta (mod 2^31)
  std::int32_t record_count = 0;  // lastOffsetDelta + 1: offsets the batch occupies
  std::int64_t max_timestamp_ms = -1;
  bool transactional = false;
};

// A batch as the log holds it, replayed to rebuild the table after a restart or a truncation:
// data batches as update() records them, control batches (transaction markers) end the
// producer's open transaction.
struct LoggedBatch {
  std::int64_t producer_id = -1;
  std::int16_t epoch = -1;
  std::int32_t first_seq = -1;  // baseSequence
  std::int32_t last_seq = -1;   // baseSequence + lastOffsetDelta (mod 2^31)
  std::int64_t first_offset = -1;
  std::int64_t last_offset = -1;
  std::int64_t max_timestamp_ms = -1;
  bool transactional = false;
  bool control = false;
  std::int32_t coordinator_epoch = -1;  // control: the marker's; -1 if it could not be read
};

enum class ProducerCheck { kOk, kDuplicate, kInvalidProducerEpoch, kOutOfOrderSequence };

// Whether a transaction marker (commit or abort) may be written for a producer (Kafka's
// ProducerAppendInfo.appendEndTxnMarker): an epoch below the producer's is refused with
// INVALID_PRODUCER_EPOCH, a coordinator epoch below the one of its last marker with
// TRANSACTION_COORDINATOR_FENCED. A producer without state (or without an open transaction)
// gets its marker written anyway.
enum class MarkerCheck { kOk, kInvalidProducerEpoch, kCoordinatorFenced };

// A transaction a marker ended, when the producer had written data in it (a marker ending
// nothing completes nothing: it changes neither the last stable offset nor the .txnindex).
struct CompletedTxn {
  std::int64_t producer_id = -1;
  std::int64_t first_offset = -1;
  std::int64_t last_offset = -1;         // the marker's offset
  std::int64_t last_stable_offset = -1;  // once it completed: the oldest other open transaction's first
                                         // offset, else last_offset + 1 (what the .txnindex entry records)
  bool aborted = false;
};

struct CheckResult {
  ProducerCheck outcome = ProducerCheck::kOk;
  std::optional<BatchMetadata> duplicate;  // for kDuplicate: where the original was written
  std::size_t batch_index = 0;             // which batch decided the outcome
};

class ProducerStateTable {
 public:
  static constexpr std::size_t kMaxCachedBatches = 5;
  using Map = std::unordered_map<std::int64_t, ProducerEntry>;

  // Checks the batches of one append, in order, as if each earlier one had been written.
  [[nodiscard]] CheckResult check(const std::vector<BatchInfo>& batches) const;
  // Records the batches after they were written starting at `first_offset`.
  void update(const std::vector<BatchInfo>& batches, std::int64_t first_offset);
  // Records one stored batch (rebuilding from the log): no checks, as Kafka replays its log.
  void replay(const LoggedBatch& batch);
  // Drops producers idle for expiration_ms or longer (producer.id.expiration.ms): their last
  // batch's timestamp is at least that old and they have no open transaction (Kafka's rule).
  // Returns how many were dropped.
  std::size_t expire(std::int64_t now_ms, std::int64_t expiration_ms);
  [[nodiscard]] static bool expired(const ProducerEntry& e, std::int64_t now_ms, std::int64_t expiration_ms) {
    return !e.current_txn_first_offset && now_ms - e.last_timestamp_ms >= expiration_ms;
  }

  // Transaction markers: the check, then the marker written at `offset` ends the producer's
  // open transaction (its epoch and coordinator epoch become the marker's).
  // `transaction_version` 2 (WriteTxnMarkers v2): the coordinator bumped the epoch, so the
  // marker's must be higher than the producer's, unless it repeats a marker already written
  // (same epoch, no open transaction) — Kafka's ProducerAppendInfo.checkProducerEpoch.
  [[nodiscard]] MarkerCheck check_marker(std::int64_t producer_id, std::int16_t epoch, std::int32_t coordinator_epoch,
                                         std::int16_t transaction_version = 0) const;
  std::optional<CompletedTxn> end_transaction(std::int64_t producer_id, std::int16_t epoch,
                                              std::int32_t coordinator_epoch, bool commit, std::int64_t offset,
                                              std::int64_t timestamp_ms);

  // The first offset of the oldest transaction that is open, or that a marker ended at or above
  // `high_watermark` (its marker not replicated yet: Kafka's unreplicatedTxns, which keep the last
  // stable offset below a transaction until its marker is under the high watermark). nullopt: none.
  [[nodiscard]] std::optional<std::int64_t> first_unstable_offset(std::int64_t high_watermark) const;
  // The high watermark moved: transactions whose markers are below it are stable.
  void on_high_watermark(std::int64_t high_watermark) {
    std::erase_if(unreplicated_, [&](const auto& kv) { return kv.second < high_watermark; });
  }
  // True when the producer has an open transaction at this epoch (Kafka's hasOngoingTransaction).
  [[nodiscard]] bool has_ongoing_transaction(std::int64_t producer_id, std::int16_t epoch) const;

  // Puts a producer's entry as a snapshot holds it (replacing any).
  void restore(std::int64_t producer_id, ProducerEntry entry);
  void clear() {
    producers_.clear();
    ongoing_.clear();
    unreplicated_.clear();
  }

  [[nodiscard]] const ProducerEntry* find(std::int64_t producer_id) const;
  [[nodiscard]] std::size_t size() const { return producers_.size(); }
  [[nodiscard]] const Map& entries() const { return producers_; }

 private:
  // Records an entry's open transaction in ongoing_ (after its first offset was set).
  void track(std::int64_t producer_id, const ProducerEntry& e);
  void untrack(const ProducerEntry& e);

  Map producers_;
  // The open transactions by first offset (Kafka's ongoingTxns): first offset -> producer id.
  std::map<std::int64_t, std::int64_t> ongoing_;
  // The transactions a marker ended, until the high watermark passes the marker: first offset ->
  // the marker's offset.
  std::map<std::int64_t, std::int64_t> unreplicated_;
};

}  // namespace weir::storage
