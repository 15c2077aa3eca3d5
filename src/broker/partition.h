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
#include <utility>
#include <vector>

#include "base/file_bytes.h"
#include "base/uuid.h"
#include "broker/produce_purgatory.h"
#include "broker/replica_tracker.h"
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

// How far a fetch may read: the high watermark (read_uncommitted), the last stable offset
// (read_committed), or the log end offset (a follower replica's fetch).
enum class ReadBound { kHighWatermark, kLastStable, kLogEnd };

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
  // A follower's fetch only: where its log diverges from the leader's (Fetch's DivergingEpoch:
  // the largest epoch at or below its last fetched epoch and that epoch's end offset here), and
  // the ISR change its fetch made due (for the controller).
  std::optional<std::pair<std::int32_t, std::int64_t>> diverging;
  std::optional<IsrProposal> isr_change;
  // KIP-392: the replica the consumer should fetch from instead (no records then); -1 none.
  std::int32_t preferred_read_replica = -1;
  // A follower's fetch of a partition the leader's replication throttle covers (its bytes count
  // toward the throttle's rate, in sync or not).
  bool replication_throttled = false;
  bool held_by_throttle = false;  // ... whose records were held back (the quota was exceeded)
  [[nodiscard]] std::int64_t size() const noexcept { return records ? records->size : 0; }
};

// A follower replica's fetch of this partition, as its Fetch request carries it.
struct FollowerFetch {
  std::int32_t replica_id = -1;
  std::int64_t replica_epoch = -1;  // the follower's broker epoch (-1: not sent)
  std::int64_t fetch_offset = 0;
  std::int64_t log_start_offset = -1;
  std::int32_t last_fetched_epoch = -1;
  std::int32_t current_leader_epoch = -1;
  std::int32_t max_bytes = 0;
};

// The metadata's view of a partition, as a broker of a cluster applies it to its replica.
struct Leadership {
  std::int32_t self = -1;  // this node
  std::int32_t leader = -1;
  std::int32_t leader_epoch = 0;
  std::int32_t partition_epoch = 0;
  std::vector<std::int32_t> replicas;
  std::vector<std::int32_t> isr;
  std::vector<std::int32_t> eligible;  // brokers that may join an ISR (registered, unfenced)
};

// What a follower's append of fetched data did.
struct FollowerAppend {
  std::int16_t error = 0;
  std::int64_t log_end_offset = -1;
  std::int64_t high_watermark = -1;
  std::string error_message;
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

// The partitions of one shard that its periodic flush check (Broker::flush_due_logs) looks at:
// each is put here by its own append when its log may become due (a rolled segment not yet
// flushed, or a topic with a finite flush.ms holding unflushed messages), and when it is hosted
// or its topic's config changes. The check takes the list, so it does not walk every partition
// of the shard each second (at 100,000 partitions that walk alone held each shard for
// milliseconds). Used only on the shard's executor.
class FlushWatch {
 public:
  struct Entry {
    std::string topic;
    std::int32_t index = -1;
  };
  void add(const std::string& topic, std::int32_t index) { entries_.push_back(Entry{topic, index}); }
  [[nodiscard]] std::vector<Entry> take() { return std::exchange(entries_, {}); }
  [[nodiscard]] std::size_t size() const { return entries_.size(); }

 private:
  std::vector<Entry> entries_;
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
  // The metadata's leadership of this replica (a broker of a cluster learns it from the
  // controller quorum; on one node the replica is its partition's only one and always leads). A
  // replica that does not lead refuses client appends and reads with NOT_LEADER_OR_FOLLOWER.
  // Becoming the leader starts a leader epoch at the log end and forgets what was known of the
  // followers; leaving the leadership answers the appends still waiting for acknowledgement with
  // NOT_LEADER_OR_FOLLOWER and wakes the waiting fetches. Returns what changed.
  enum class RoleChange : std::uint8_t { kNone, kBecameLeader, kBecameFollower, kUpdated };
  RoleChange apply_leadership(const Leadership& l);
  [[nodiscard]] bool is_leader() const { return role_ != Role::kFollower; }
  // A replica of a replicated partition (a cluster's broker), as opposed to the one replica of a
  // single node, whose high watermark is its log end.
  [[nodiscard]] bool replicated() const { return role_ != Role::kSolo; }
  [[nodiscard]] std::int32_t leader_id() const { return leader_id_; }
  [[nodiscard]] const ReplicaTracker& replicas() const { return tracker_; }
  // replica.lag.time.max.ms; flush.on.acks.all (acks=all waits for the leader's own fsync too).
  void set_replication_options(std::int64_t replica_lag_ms, bool durable_acks) {
    replica_lag_ms_ = replica_lag_ms;
    durable_acks_ = durable_acks;
  }

  // Leader: a follower's fetch (Kafka's Partition.fetchRecords for a follower): its epochs
  // checked, divergence reported, data read up to the log end, its position recorded, the ISR
  // change it makes due proposed, the high watermark moved.
  PartitionRead read_for_follower(const FollowerFetch& f);
  // Leader, periodically: the ISR without the followers that fell behind, when any did.
  std::optional<IsrProposal> maybe_shrink_isr();
  // Leader: the controller's answer to an ISR change (error 0: the ISR and partition epoch it
  // committed).
  void isr_change_answered(std::int16_t error, const std::vector<std::int32_t>& isr, std::int32_t partition_epoch);
  // acks=all needs min.insync.replicas in the ISR (NOT_ENOUGH_REPLICAS before the append).
  [[nodiscard]] bool under_min_isr() const {
    return role_ == Role::kLeader && tracker_.under_min_isr(log_->config().min_insync_replicas);
  }
  // Where acks=all appends are acknowledged up to: the high watermark (the ISR has the data),
  // and with flush.on.acks.all also synced here; on one node, synced.
  [[nodiscard]] std::int64_t ack_watermark() const;
  // Answers the acks=all appends the ack watermark has passed.
  void complete_acks();

  // Follower: data fetched from the leader (whole batches; a partial batch at the end, as a
  // Kafka leader may send, is left for the next fetch), appended as the leader wrote it, with
  // producer state and aborted transactions following; the high watermark becomes the leader's
  // (within this log), the log start moves up to the leader's.
  FollowerAppend append_from_leader(std::span<const std::byte> records, std::int64_t leader_high_watermark,
                                    std::int64_t leader_log_start_offset);
  // Follower: the leader's log diverges (DivergingEpoch): this log is truncated to the end of the
  // leader's epoch `epoch`, or to the end of this log's own largest epoch below it. Returns the
  // new log end offset, or the storage error code.
  std::int16_t truncate_to_leader(std::int32_t epoch, std::int64_t end_offset);
  // Follower: the leader no longer has this log's fetch offset (OFFSET_OUT_OF_RANGE): truncated
  // to the leader's log end when beyond it, or restarted empty at the leader's log start.
  std::int16_t reset_to_leader(std::int64_t leader_log_start, std::int64_t leader_log_end);
  // Follower: the epoch of the last batch this log holds (a fetch's LastFetchedEpoch), -1 if none.
  [[nodiscard]] std::int32_t last_fetched_epoch() const { return log_->latest_epoch().value_or(-1); }
  [[nodiscard]] storage::PartitionLog& log() { return *log_; }
  [[nodiscard]] const storage::PartitionLog& log() const { return *log_; }

  // On one node the high watermark is the log end offset: every replica (this one) has the data.
  // In a cluster the leader moves it as the ISR's fetches show they have the data, and a
  // follower learns it from the leader.
  [[nodiscard]] std::int64_t high_watermark() const {
    return role_ == Role::kSolo ? log_->log_end_offset() : log_->high_watermark();
  }

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
  // producer's (at transaction version 2: not above it, a repeated marker excepted),
  // TRANSACTION_COORDINATOR_FENCED for a coordinator epoch below its last marker's.
  // Ends the producer's open transaction (an abort adds its .txnindex entry), clears its
  // verification guard, moves the last stable offset and the high watermark.
  PartitionAppend write_marker(std::int64_t producer_id, std::int16_t producer_epoch, std::int32_t coordinator_epoch,
                               bool commit, std::int16_t transaction_version = 0);
  // The last stable offset: the high watermark, or below it the first offset of the oldest open
  // transaction (not below the log start offset: a log start past it leaves the LSO there).
  [[nodiscard]] std::int64_t last_stable_offset() const;
  [[nodiscard]] std::int64_t bound_offset(ReadBound bound) const {
    switch (bound) {
      case ReadBound::kLastStable:
        return last_stable_offset();
      case ReadBound::kLogEnd:
        return log_->log_end_offset();
      case ReadBound::kHighWatermark:
        break;
    }
    return high_watermark();
  }

  // Kafka's maybeStartTransactionVerification for the append of `batches` (one producer's
  // request): 0 when nothing needs verifying (no transactional batch, or the producer's
  // transaction is open here at that epoch), else the producer's guard (created, or the one
  // already pending).
  VerificationGuard start_verification(std::span<const std::byte> batches);
  [[nodiscard]] VerificationGuard verification_guard(std::int64_t producer_id) const;
  // Whole batches from fetch_offset, up to the bound (see PartitionLog::read); counts the bytes.
  // A follower serves the read too when `follower_reads` (a consumer's Fetch v11+, as Kafka's
  // ClientMetadata allows), up to its own high watermark.
  PartitionRead read(std::int64_t fetch_offset, std::int32_t max_bytes, std::int32_t current_leader_epoch,
                     ReadBound bound, bool min_one_batch, bool follower_reads = false);
  // Leader, KIP-392 (Kafka's RackAwareReplicaSelector): the in-sync follower a consumer in the
  // rack `in_client_rack` recognises should read from instead — none (-1) when the leader is in
  // that rack or no follower there has fetch_offset in its log; the one with the highest log end
  // offset (then the latest caught up) otherwise.
  [[nodiscard]] std::int32_t preferred_read_replica(std::int64_t fetch_offset,
                                                    const std::function<bool(std::int32_t)>& in_client_rack) const;
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
  // Replicated partitions: acks=1 appends past flush.messages wait here for their flush alone
  // (acks=all ones wait in purgatory() for the ack watermark).
  [[nodiscard]] const std::shared_ptr<ProducePurgatory>& flush_purgatory() const { return flush_purgatory_; }

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
  // producer.id.expiration.ms as it is now (a dynamic broker config may change it).
  void set_producer_id_expiration_ms(std::int64_t ms) { producer_state_->set_expiration_ms(ms); }
  // producer.id.expiration.ms: drops producers idle that long at now_ms (wall clock).
  std::size_t expire_producers(std::int64_t now_ms) { return producer_state_->expire(now_ms); }

  // The shard's flush watch, set by the table that hosts the partition.
  void attach_flush_watch(FlushWatch* watch) {
    flush_watch_ = watch;
    flush_watched_ = false;
  }
  // Puts the partition on its shard's flush watch, unless it is on it already.
  void watch_flush() {
    if (flush_watch_ == nullptr || flush_watched_) return;
    flush_watched_ = true;
    flush_watch_->add(topic_, index_);
  }
  // The flush check took this partition's entry: true if the entry was current (an entry left by
  // an earlier incarnation of the partition, or one already taken, is not).
  bool take_flush_watch() { return std::exchange(flush_watched_, false); }

 private:
  // After an append: on the flush watch if the log may become due for a periodic flush.
  void note_appended();
  FlushWatch* flush_watch_ = nullptr;
  bool flush_watched_ = false;
  std::string topic_;
  Uuid topic_id_;
  std::int32_t index_;
  std::int32_t leader_epoch_;
  enum class Role : std::uint8_t { kSolo, kLeader, kFollower };
  Role role_ = Role::kSolo;
  std::int32_t leader_id_ = -1;
  ReplicaTracker tracker_;
  std::vector<std::int32_t> eligible_;  // brokers that may join the ISR
  std::int64_t epoch_start_offset_ = 0;  // where this leader's epoch began
  std::int64_t replica_lag_ms_ = 30000;
  bool durable_acks_ = true;
  storage::PartitionLog* log_;
  // After an append or a follower's fetch: on one node the high watermark is the log end; a
  // leader moves it to what the ISR has. Wakes the fetches it satisfies and answers the acks.
  void advance_high_watermark();
  // The leader's high watermark from its followers' positions; true if it moved.
  bool maybe_increment_high_watermark();
  // Leaving the leadership: the waiting appends are answered NOT_LEADER_OR_FOLLOWER.
  void fail_waiting_appends();
  // Producer state and the .txnindex after a follower append of `batches`.
  void track_replicated_batches(std::span<const std::byte> batches);
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
  std::shared_ptr<ProducePurgatory> flush_purgatory_ = std::make_shared<ProducePurgatory>();
  Traffic traffic_;
  std::shared_ptr<storage::ProducerStateManager> producer_state_;
};

}  // namespace weir::broker
