#include "broker/partition.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <limits>

#include "base/assert.h"
#include "broker/errors.h"
#include "broker/storage_errors.h"
#include "protocol/record/batch_splitter.h"
#include "protocol/record/control_record.h"
#include "protocol/record/record.h"

namespace weir::broker {

namespace {

constexpr std::int64_t kLatest = -1;
constexpr std::int64_t kEarliest = -2;
constexpr std::int64_t kMaxTimestamp = -3;
constexpr std::int64_t kEarliestLocal = -4;

// A batch's last sequence number (sequences wrap at 2^31), -1 without one.
std::int32_t last_sequence(const record::RecordBatchView& b) {
  if (b.base_sequence() < 0) return -1;
  return static_cast<std::int32_t>((static_cast<std::int64_t>(b.base_sequence()) + b.last_offset_delta()) %
                                   2147483648LL);
}

// Producer fields of each batch, read from the headers; empty when the framing is broken (the
// append then refuses the request anyway).
std::vector<storage::BatchInfo> batch_infos(std::span<const std::byte> bytes) {
  std::vector<storage::BatchInfo> out;
  record::BatchSplitter splitter(bytes);
  for (;;) {
    auto next = splitter.next();
    if (!next) return {};
    if (!*next) break;
    const auto& b = **next;
    const std::int32_t count = b.last_offset_delta() + 1;
    const std::int32_t last_seq = last_sequence(b);
    out.push_back(storage::BatchInfo{b.has_producer_id() ? b.producer_id() : -1, b.producer_epoch(), b.base_sequence(),
                                     last_seq, count, b.max_timestamp(), b.is_transactional()});
  }
  return out;
}

// An answer that carries only its error (and -1 for every offset, as Kafka's answers do).
template <class R>
R refused(std::int16_t error) {
  R r;
  r.error = error;
  return r;
}

PartitionAppend failed_append(ErrorCode e) { return refused<PartitionAppend>(code(e)); }
PartitionRead failed_read(std::int16_t error) { return refused<PartitionRead>(error); }

// The slices of a read, as file regions that keep their files open.
std::shared_ptr<const FileBytes> in_files(storage::ReadResult read) {
  auto owner = std::make_shared<const storage::ReadResult>(std::move(read));
  auto bytes = std::make_shared<FileBytes>();
  bytes->regions.reserve(owner->slices.size());
  for (const storage::FileSlice& slice : owner->slices) {
    bytes->regions.push_back(FileRegion{slice.fd(), slice.position, slice.size});
  }
  bytes->size = owner->size_bytes;
  bytes->owner = std::move(owner);
  return bytes;
}

}  // namespace

PartitionAppend Partition::append(std::span<std::byte> batches, AppendOrigin origin,
                                  const storage::RecordsSummaries* summaries, std::optional<VerificationGuard> guard) {
  WEIR_ASSERT(origin != AppendOrigin::kMarker, "markers are written by write_marker");
  const bool client = origin == AppendOrigin::kClient;
  if (role_ == Role::kFollower) return failed_append(ErrorCode::kNotLeaderOrFollower);
  std::vector<storage::BatchInfo> infos;
  if (client) {
    // Idempotence: a retried batch is answered with the offsets it was first written at.
    infos = batch_infos(batches);
    auto check = producers().check(infos);
    if (check.outcome == storage::ProducerCheck::kDuplicate) {
      PartitionAppend o;
      o.base_offset = check.duplicate->first_offset;
      // An acks=all retry is acknowledged once the first write is (replicated, synced).
      o.end_offset = check.duplicate->last_offset + 1;
      o.log_start_offset = log_->log_start_offset();
      return o;
    }
    // KIP-890: a transactional batch opens a transaction here only once verified, with the
    // guard still current (a marker in between cleared it: the transaction it was verified for
    // is over).
    if (guard) {
      for (const storage::BatchInfo& b : infos) {
        if (!b.transactional || producers().has_ongoing_transaction(b.producer_id, b.epoch)) continue;
        if (*guard == 0 || verification_guard(b.producer_id) != *guard) {
          return failed_append(ErrorCode::kInvalidTxnState);
        }
      }
    }
    switch (check.outcome) {
      case storage::ProducerCheck::kOk:
      case storage::ProducerCheck::kDuplicate:
        break;
      case storage::ProducerCheck::kInvalidProducerEpoch:
        return failed_append(ErrorCode::kInvalidProducerEpoch);
      case storage::ProducerCheck::kOutOfOrderSequence:
        return failed_append(ErrorCode::kOutOfOrderSequenceNumber);
    }
  }
  auto appended = log_->append_as_leader(batches, leader_epoch_, summaries);
  if (!appended) {
    PartitionAppend o = failed_append(storage_error_code(appended.error()));
    o.error_message = std::string(storage::to_string(appended.error()));
    o.storage_error = appended.error();
    return o;
  }
  note_appended();
  if (client) {
    // Recorded from the batches as stored (maxTimestamp as the log set it), as a rebuild from the
    // log after a restart sees them.
    producers().update(batch_infos(batches), appended->first_offset);
    std::uint64_t messages = 0;
    for (const auto& b : infos) {
      messages += static_cast<std::uint64_t>(b.record_count);
      if (b.transactional) clear_verification(b.producer_id);  // the transaction is open now
    }
    count_produced(batches.size(), messages);
    sync_first_unstable_offset();
  } else {
    // A coordinator's batches (a producer's transactional offsets in __consumer_offsets) open
    // the producer's transaction here as a client's would: the LSO and DescribeProducers see it
    // (Kafka's coordinator appends skip only the sequence checks).
    const std::vector<storage::BatchInfo> written = batch_infos(batches);
    if (std::any_of(written.begin(), written.end(), [](const auto& b) { return b.producer_id >= 0; })) {
      producers().update(written, appended->first_offset);  // batches without a producer are skipped
      sync_first_unstable_offset();
    }
  }
  advance_high_watermark();
  PartitionAppend o;
  o.base_offset = appended->first_offset;
  o.end_offset = appended->last_offset + 1;
  o.log_append_time_ms = appended->log_append_time_ms;
  o.log_start_offset = appended->log_start_offset;
  o.appended = true;
  o.flush_due = log_->unflushed_messages() >= log_->config().flush_messages;
  return o;
}

PartitionAppend Partition::write_marker(std::int64_t producer_id, std::int16_t producer_epoch,
                                        std::int32_t coordinator_epoch, bool commit, std::int16_t transaction_version) {
  switch (producers().check_marker(producer_id, producer_epoch, coordinator_epoch, transaction_version)) {
    case storage::MarkerCheck::kOk:
      break;
    case storage::MarkerCheck::kInvalidProducerEpoch:
      return failed_append(ErrorCode::kInvalidProducerEpoch);
    case storage::MarkerCheck::kCoordinatorFenced:
      return failed_append(ErrorCode::kTransactionCoordinatorFenced);
  }
  const std::int64_t now_ms = log_->clock().wall_ms();
  const std::vector<std::byte> batch = record::build_end_txn_marker_batch({
      .producer_id = producer_id,
      .producer_epoch = producer_epoch,
      .coordinator_epoch = coordinator_epoch,
      .commit = commit,
      .timestamp_ms = now_ms,
      .base_offset = log_->log_end_offset(),
      .partition_leader_epoch = leader_epoch_,
      .log_append_time = log_->config().log_append_time,
  });
  auto appended = log_->append_with_offsets(batch);
  if (!appended) {
    PartitionAppend o = failed_append(storage_error_code(appended.error()));
    o.error_message = std::string(storage::to_string(appended.error()));
    o.storage_error = appended.error();
    return o;
  }
  note_appended();
  const std::int64_t marker_offset = appended->first_offset;
  const std::optional<storage::CompletedTxn> done =
      producers().end_transaction(producer_id, producer_epoch, coordinator_epoch, commit, marker_offset, now_ms);
  clear_verification(producer_id);
  sync_first_unstable_offset();
  PartitionAppend o;
  if (done && done->aborted) {
    // Fetches at read_committed learn of the aborted data from the .txnindex.
    if (auto ok = log_->append_aborted_transaction(
            {done->producer_id, done->first_offset, done->last_offset, done->last_stable_offset});
        !ok) {
      o.error = code(storage_error_code(ok.error()));
      o.error_message = std::string(storage::to_string(ok.error()));
      o.storage_error = ok.error();
    }
  }
  advance_high_watermark();
  o.base_offset = marker_offset;
  o.end_offset = marker_offset + 1;
  o.log_start_offset = appended->log_start_offset;
  o.appended = true;
  o.flush_due = log_->unflushed_messages() >= log_->config().flush_messages;
  return o;
}

std::int64_t Partition::last_stable_offset() const {
  const std::int64_t hw = high_watermark();
  const std::optional<std::int64_t> first = producer_state_->table().first_unstable_offset(hw);
  if (!first) return hw;
  return std::min(hw, std::max(*first, log_->log_start_offset()));
}

void Partition::sync_first_unstable_offset() {
  // A transaction whose marker is not under the high watermark yet is still unstable (Kafka).
  const std::int64_t hw = high_watermark();
  producers().on_high_watermark(hw);
  log_->set_first_unstable_offset(producers().first_unstable_offset(hw));
}

VerificationGuard Partition::start_verification(std::span<const std::byte> batches) {
  for (const storage::BatchInfo& b : batch_infos(batches)) {
    if (!b.transactional || b.producer_id < 0) continue;
    if (producers().has_ongoing_transaction(b.producer_id, b.epoch)) return 0;
    auto [it, created] = verification_guards_.try_emplace(b.producer_id, next_guard_);
    if (created) ++next_guard_;
    return it->second;
  }
  return 0;
}

VerificationGuard Partition::verification_guard(std::int64_t producer_id) const {
  auto it = verification_guards_.find(producer_id);
  return it == verification_guards_.end() ? 0 : it->second;
}

void Partition::advance_high_watermark() {
  if (role_ == Role::kSolo) {
    log_->update_high_watermark(log_->log_end_offset());
  } else if (role_ == Role::kLeader) {
    (void)maybe_increment_high_watermark();
  }
  if (role_ == Role::kSolo) sync_first_unstable_offset();
  notify_watchers();
  if (role_ != Role::kSolo) complete_acks();
}

bool Partition::maybe_increment_high_watermark() {
  const std::int64_t now_ms = log_->clock().now_ms();
  const auto eligible = [this](std::int32_t id) { return std::ranges::find(eligible_, id) != eligible_.end(); };
  const std::optional<std::int64_t> hw = tracker_.high_watermark(log_->log_end_offset(), now_ms, replica_lag_ms_,
                                                                 log_->config().min_insync_replicas, eligible);
  if (!hw || *hw <= log_->high_watermark()) return false;
  log_->update_high_watermark(*hw);
  sync_first_unstable_offset();
  return true;
}

std::int64_t Partition::ack_watermark() const {
  if (role_ == Role::kSolo) return log_->recovery_point();
  const std::int64_t hw = log_->high_watermark();
  return durable_acks_ ? std::min(hw, log_->recovery_point()) : hw;
}

void Partition::complete_acks() {
  if (role_ != Role::kLeader) return;
  purgatory_->complete_through(ack_watermark());
}

void Partition::fail_waiting_appends() {
  constexpr std::int64_t kAll = std::numeric_limits<std::int64_t>::max();
  purgatory_->fail_through(kAll, code(ErrorCode::kNotLeaderOrFollower));
  flush_purgatory_->fail_through(kAll, code(ErrorCode::kNotLeaderOrFollower));
}

Partition::RoleChange Partition::apply_leadership(const Leadership& l) {
  const bool lead = l.leader == l.self;
  const bool new_epoch = l.leader_epoch != leader_epoch_ || role_ == Role::kSolo;
  eligible_ = l.eligible;
  RoleChange change = RoleChange::kNone;
  if (lead) {
    if (role_ != Role::kLeader || new_epoch) {
      const bool was_follower = role_ == Role::kFollower;
      role_ = Role::kLeader;
      leader_epoch_ = l.leader_epoch;
      leader_id_ = l.leader;
      tracker_.reset(l.self, l.replicas, l.isr, l.leader_epoch, l.partition_epoch, log_->clock().now_ms());
      log_->assign_leader_epoch(l.leader_epoch);
      epoch_start_offset_ = log_->log_end_offset();
      if (was_follower) {
        // The follower's producer state was rebuilt as data arrived; the cleaner's view follows.
        sync_first_unstable_offset();
      }
      change = RoleChange::kBecameLeader;
    } else {
      tracker_.update_from_metadata(l.replicas, l.isr, l.partition_epoch);
      change = RoleChange::kUpdated;
    }
    advance_high_watermark();
    return change;
  }
  if (role_ != Role::kFollower || new_epoch || leader_id_ != l.leader) {
    const bool was_leader = role_ != Role::kFollower;
    role_ = Role::kFollower;
    leader_epoch_ = l.leader_epoch;
    leader_id_ = l.leader;
    verification_guards_.clear();
    if (was_leader) fail_waiting_appends();
    // Long polls read again and learn that this replica no longer leads.
    std::vector<Watcher> waiting = std::move(watchers_);
    watchers_.clear();
    for (auto& w : waiting) w.on_data();
    change = RoleChange::kBecameFollower;
  }
  return change;
}

PartitionRead Partition::read_for_follower(const FollowerFetch& f) {
  PartitionRead r;
  if (const std::int16_t e = leader_epoch_error(f.current_leader_epoch); e != 0) return failed_read(e);
  if (role_ != Role::kLeader) return failed_read(code(ErrorCode::kNotLeaderOrFollower));
  const std::int64_t now_ms = log_->clock().now_ms();
  const std::int64_t leader_end = log_->log_end_offset();
  r.leader_epoch = leader_epoch_;
  r.log_start_offset = log_->log_start_offset();
  r.high_watermark = high_watermark();
  r.last_stable_offset = last_stable_offset();
  if (tracker_.follower(f.replica_id) == nullptr) return failed_read(code(ErrorCode::kNotLeaderOrFollower));
  if (f.last_fetched_epoch >= 0) {
    // Kafka's divergence check: the follower's last epoch ends here before its fetch offset, or
    // this log has no such epoch.
    const EpochEndOffset end = end_offset_for_epoch(-1, f.last_fetched_epoch);
    if (end.leader_epoch < f.last_fetched_epoch || end.end_offset < f.fetch_offset) {
      r.diverging = std::make_pair(end.leader_epoch, end.end_offset);
      return r;
    }
  }
  auto read = log_->read(f.fetch_offset, f.max_bytes, leader_end, /*min_one_batch=*/true);
  if (!read) return failed_read(code(storage_error_code(read.error())));
  if (read->size_bytes > 0) r.records = in_files(std::move(*read));
  (void)tracker_.on_fetch(f.replica_id, f.fetch_offset, f.log_start_offset, f.replica_epoch, now_ms, leader_end);
  const bool eligible = std::ranges::find(eligible_, f.replica_id) != eligible_.end();
  r.isr_change = tracker_.maybe_expand(f.replica_id, log_->high_watermark(), epoch_start_offset_, eligible);
  if (maybe_increment_high_watermark()) {
    notify_watchers();
    complete_acks();
  }
  return r;
}

std::optional<IsrProposal> Partition::maybe_shrink_isr() {
  if (role_ != Role::kLeader) return std::nullopt;
  if (auto again = tracker_.take_resend()) return again;
  return tracker_.maybe_shrink(log_->log_end_offset(), log_->clock().now_ms(), replica_lag_ms_);
}

void Partition::isr_change_answered(std::int16_t error, const std::vector<std::int32_t>& isr,
                                    std::int32_t partition_epoch) {
  if (role_ != Role::kLeader) return;
  if (error != 0) {
    // The controller may have applied the change after any error but two (a lost answer, a
    // retry that met its own earlier success): dropping it would let the high watermark pass an
    // ISR member the controller counts, and a later leader from that ISR would lack
    // acknowledged records.
    const IsrChangeFailure failure = classify_isr_change_error(error);
    if (failure == IsrChangeFailure::kNotApplied) {
      tracker_.failed();
    } else {
      tracker_.unanswered(/*resend=*/failure == IsrChangeFailure::kResend);
    }
    return;
  }
  tracker_.committed(isr, partition_epoch);
  // A smaller ISR may let the high watermark move (and a larger one under min ISR, too).
  advance_high_watermark();
}

namespace {

// A transaction marker's fields, read from a control batch; nullopt for other control records.
struct MarkerFields {
  bool commit = false;
  std::int32_t coordinator_epoch = -1;
};

std::optional<MarkerFields> read_marker(const record::RecordBatchView& batch) {
  std::optional<MarkerFields> out;
  bool first = true;
  (void)record::for_each_record(batch, [&](const record::RecordView& r) {
    if (!first || !r.key || !r.value) return;
    first = false;
    auto key = record::parse_control_key(*r.key);
    if (!key || !key->is_transaction_marker()) return;
    auto marker = record::parse_end_txn_marker(*r.value);
    if (!marker) return;
    out = MarkerFields{key->is(record::ControlRecordType::commit), marker->coordinator_epoch};
  });
  return out;
}

// The whole batches at the front of `records` (a Kafka leader's answer may end in a partial one).
std::span<const std::byte> whole_batches(std::span<const std::byte> records) {
  record::BatchSplitter splitter(records);
  for (;;) {
    auto next = splitter.next();
    if (!next || !*next) break;
  }
  return records.first(splitter.consumed_bytes());
}

}  // namespace

void Partition::track_replicated_batches(std::span<const std::byte> batches) {
  record::BatchSplitter splitter(batches);
  for (;;) {
    auto next = splitter.next();
    if (!next || !*next) break;
    const record::RecordBatchView& b = **next;
    if (!b.has_producer_id()) continue;
    if (b.is_control()) {
      if (b.records_count() == 0) continue;
      const std::optional<MarkerFields> m = read_marker(b);
      if (!m) continue;
      const std::optional<storage::CompletedTxn> done = producers().end_transaction(
          b.producer_id(), b.producer_epoch(), m->coordinator_epoch, m->commit, b.base_offset(), b.max_timestamp());
      if (done && done->aborted) {
        if (auto ok = log_->append_aborted_transaction(
                {done->producer_id, done->first_offset, done->last_offset, done->last_stable_offset});
            !ok) {
          spdlog::warn("event=txn_index_append_failed partition={}-{} error=\"{}\"", topic_, index_, ok.error());
        }
      }
      continue;
    }
    storage::LoggedBatch lb;
    lb.producer_id = b.producer_id();
    lb.epoch = b.producer_epoch();
    lb.first_seq = b.base_sequence();
    lb.last_seq = last_sequence(b);
    lb.first_offset = b.base_offset();
    lb.last_offset = b.last_offset();
    lb.max_timestamp_ms = b.max_timestamp();
    lb.transactional = b.is_transactional();
    producers().replay(lb);
  }
  sync_first_unstable_offset();
}

FollowerAppend Partition::append_from_leader(std::span<const std::byte> records, std::int64_t leader_high_watermark,
                                             std::int64_t leader_log_start_offset) {
  FollowerAppend o;
  if (role_ != Role::kFollower) {
    o.error = code(ErrorCode::kNotLeaderOrFollower);
    return o;
  }
  const std::span<const std::byte> batches = whole_batches(records);
  if (!batches.empty()) {
    auto appended = log_->append_as_follower(batches);
    if (!appended) {
      o.error = code(storage_error_code(appended.error()));
      o.error_message = std::string(storage::to_string(appended.error()));
      return o;
    }
    note_appended();
    track_replicated_batches(batches);
  }
  // Kafka's follower: the log start follows the leader's (DeleteRecords, retention there).
  if (leader_log_start_offset > log_->log_start_offset()) {
    const std::int64_t target = std::min(leader_log_start_offset, log_->log_end_offset());
    if (target > log_->log_start_offset()) (void)log_->delete_records_before(target);
  }
  log_->update_high_watermark(std::min(leader_high_watermark, log_->log_end_offset()));
  sync_first_unstable_offset();
  notify_watchers();
  o.log_end_offset = log_->log_end_offset();
  o.high_watermark = log_->high_watermark();
  return o;
}

std::int16_t Partition::truncate_to_leader(std::int32_t epoch, std::int64_t end_offset) {
  // Kafka's follower: the end of the leader's epoch, or of this log's own largest epoch at or
  // below it when that ends sooner; without an epoch in common, the high watermark.
  std::int64_t target = log_->high_watermark();
  if (epoch >= 0 && end_offset >= 0) {
    target = end_offset;
    if (auto mine = log_->end_offset_for_epoch(epoch)) {
      // This log's end of the same epoch, or (an older epoch than the leader's) where its own
      // epoch ended: the next fetch checks the epoch before it.
      target = mine->first == epoch ? std::min(end_offset, mine->second) : mine->second;
    }
  }
  target = std::min(target, log_->log_end_offset());
#ifdef WEIR_SIM_MUTATION_TRUNCATE_BELOW_HW
  // Deliberately wrong, for tests/sim's mutation check only: one offset too far.
  if (target > 0) --target;
#endif
  if (auto ok = log_->truncate_to(target); !ok) return code(storage_error_code(ok.error()));
  spdlog::info("event=replica_truncated partition={}-{} epoch={} offset={} log_end_offset={}", topic_, index_, epoch,
               target, log_->log_end_offset());
  return 0;
}

std::int16_t Partition::reset_to_leader(std::int64_t leader_log_start, std::int64_t leader_log_end) {
  if (log_->log_end_offset() > leader_log_end && leader_log_end >= 0) {
    if (auto ok = log_->truncate_to(leader_log_end); !ok) return code(storage_error_code(ok.error()));
    return 0;
  }
  if (auto ok = log_->truncate_fully_and_restart_at(std::max<std::int64_t>(0, leader_log_start)); !ok) {
    return code(storage_error_code(ok.error()));
  }
  return 0;
}

void Partition::notify_watchers() {
  // Each watcher waits for its bound to pass its offset; the others keep waiting.
  std::vector<Watcher> due;
  std::erase_if(watchers_, [&](Watcher& w) {
    if (bound_offset(w.bound) <= w.offset) return false;
    due.push_back(std::move(w));
    return true;
  });
  for (auto& w : due) w.on_data();
}

std::int16_t Partition::leader_epoch_error(std::int32_t current_leader_epoch) const {
  if (current_leader_epoch < 0 || current_leader_epoch == leader_epoch_) return 0;
  return code(current_leader_epoch > leader_epoch_ ? ErrorCode::kUnknownLeaderEpoch : ErrorCode::kFencedLeaderEpoch);
}

std::int32_t Partition::preferred_read_replica(std::int64_t fetch_offset,
                                               const std::function<bool(std::int32_t)>& in_client_rack) const {
  if (role_ != Role::kLeader || in_client_rack(leader_id_)) return -1;
  const ReplicaTracker::Follower* best = nullptr;
  for (const ReplicaTracker::Follower& f : tracker_.followers()) {
    if (std::ranges::find(tracker_.isr(), f.id) == tracker_.isr().end()) continue;
    if (f.log_end_offset < fetch_offset || f.log_start_offset > fetch_offset || !in_client_rack(f.id)) continue;
    if (best == nullptr || f.log_end_offset > best->log_end_offset ||
        (f.log_end_offset == best->log_end_offset && f.last_caught_up_ms > best->last_caught_up_ms)) {
      best = &f;
    }
  }
  return best == nullptr ? -1 : best->id;
}

PartitionRead Partition::read(std::int64_t fetch_offset, std::int32_t max_bytes, std::int32_t current_leader_epoch,
                              ReadBound bound, bool min_one_batch, bool follower_reads) {
  PartitionRead r;
  r.leader_epoch = leader_epoch_;
  r.high_watermark = high_watermark();
  r.log_start_offset = log_->log_start_offset();
  if (const std::int16_t e = leader_epoch_error(current_leader_epoch); e != 0) return failed_read(e);
  if (role_ == Role::kFollower && !follower_reads) return failed_read(code(ErrorCode::kNotLeaderOrFollower));
  r.last_stable_offset = last_stable_offset();
  const std::int64_t max_offset = bound == ReadBound::kLastStable ? r.last_stable_offset : r.high_watermark;
  auto read = log_->read(fetch_offset, max_bytes, max_offset, min_one_batch);
  if (!read) return failed_read(code(storage_error_code(read.error())));
  if (bound == ReadBound::kLastStable) {
    // The aborted transactions overlapping the data returned (Kafka's collectAbortedTxns).
    r.aborted.emplace();
    if (read->size_bytes > 0) {
      auto aborted = log_->collect_aborted_transactions(fetch_offset, read->next_offset);
      if (!aborted) return failed_read(code(storage_error_code(aborted.error())));
      r.aborted = std::move(*aborted);
    }
  }
  if (read->size_bytes > 0) r.records = in_files(std::move(*read));
  count_fetched(static_cast<std::size_t>(r.size()));  // bytes read for a fetch (a long-poll re-read counts again)
  return r;
}

OffsetLookup Partition::lookup_offset(std::int64_t timestamp, std::int32_t current_leader_epoch,
                                      ReadBound bound) const {
  if (const std::int16_t e = leader_epoch_error(current_leader_epoch); e != 0) return refused<OffsetLookup>(e);
  if (role_ == Role::kFollower) return refused<OffsetLookup>(code(ErrorCode::kNotLeaderOrFollower));
  OffsetLookup r;
  if (timestamp == kLatest) {
    r.offset = bound_offset(bound);
    r.leader_epoch = leader_epoch_;
  } else if (timestamp == kEarliest || timestamp == kEarliestLocal) {
    r.offset = log_->log_start_offset();
    r.leader_epoch = leader_epoch_;
  } else if (timestamp == kMaxTimestamp) {
    if (auto m = log_->max_timestamp()) {
      r.timestamp = m->timestamp_ms;
      r.offset = m->offset;
      r.leader_epoch = m->leader_epoch;
    }
  } else if (timestamp >= 0) {
    if (auto f = log_->find_offset_by_timestamp(timestamp)) {
      r.timestamp = f->timestamp_ms;
      r.offset = f->offset;
      r.leader_epoch = f->leader_epoch;
    }
  }
  // Other negative values (tiered-storage lookups) find nothing without remote storage.
  return r;
}

DeleteRecordsOutcome Partition::delete_records(std::int64_t offset) {
  if (role_ == Role::kFollower) return refused<DeleteRecordsOutcome>(code(ErrorCode::kNotLeaderOrFollower));
  const std::int64_t hw = high_watermark();
  // -1 means "up to the high watermark".
  const std::int64_t target = offset == -1 ? hw : offset;
  if (target < 0 || target > hw) return refused<DeleteRecordsOutcome>(code(ErrorCode::kOffsetOutOfRange));
  if (target > log_->log_start_offset()) {
    if (auto r = log_->delete_records_before(target); !r) {
      return refused<DeleteRecordsOutcome>(code(storage_error_code(r.error())));
    }
  }
  DeleteRecordsOutcome o;
  o.low_watermark = log_->log_start_offset();
  return o;
}

EpochEndOffset Partition::end_offset_for_epoch(std::int32_t current_leader_epoch, std::int32_t epoch) const {
  if (const std::int16_t e = leader_epoch_error(current_leader_epoch); e != 0) return refused<EpochEndOffset>(e);
  if (role_ == Role::kFollower) return refused<EpochEndOffset>(code(ErrorCode::kNotLeaderOrFollower));
  EpochEndOffset o;
  if (epoch == leader_epoch_) {
    o.leader_epoch = epoch;
    o.end_offset = log_->log_end_offset();
  } else if (auto found = log_->end_offset_for_epoch(epoch)) {
    o.leader_epoch = found->first;
    o.end_offset = found->second;
  }
  return o;
}

void Partition::note_appended() {
  if (flush_watch_ == nullptr || flush_watched_) return;
  const storage::PartitionLog& log = *log_;
  if (log.unflushed_messages() <= 0) return;
  if (log.recovery_point() < log.active_segment_base_offset() ||
      log.config().flush_ms != std::numeric_limits<std::int64_t>::max()) {
    watch_flush();
  }
}

}  // namespace weir::broker
