#include "storage/producer_state.h"

#include <limits>

namespace weir::storage {

namespace {

bool in_sequence(std::int32_t last_seq, std::int32_t next_seq) {
  return static_cast<std::int64_t>(next_seq) == static_cast<std::int64_t>(last_seq) + 1 ||
         (next_seq == 0 && last_seq == std::numeric_limits<std::int32_t>::max());
}

// A new epoch forgets the batches of the old one (Kafka's maybeUpdateProducerEpoch).
void set_epoch(ProducerEntry& e, std::int16_t epoch) {
  if (epoch != e.epoch) {
    e.epoch = epoch;
    e.batches.clear();
  }
}

void add_batch(ProducerEntry& e, std::int16_t epoch, const BatchMetadata& m) {
  set_epoch(e, epoch);
  e.batches.push_back(m);
  while (e.batches.size() > ProducerStateTable::kMaxCachedBatches) e.batches.pop_front();
  e.last_timestamp_ms = m.timestamp_ms;
}

void apply(ProducerEntry& e, const BatchInfo& b, std::int64_t first_offset) {
  const std::int64_t last_offset = first_offset + b.record_count - 1;
  add_batch(e, b.epoch, BatchMetadata{b.first_seq, b.last_seq, first_offset, last_offset, b.max_timestamp_ms});
  if (b.transactional && !e.current_txn_first_offset) e.current_txn_first_offset = first_offset;
}

}  // namespace

CheckResult ProducerStateTable::check(const std::vector<BatchInfo>& batches) const {
  // Work on copies of the entries this append touches, so later batches see earlier ones.
  std::unordered_map<std::int64_t, ProducerEntry> pending;
  for (std::size_t i = 0; i < batches.size(); ++i) {
    const BatchInfo& b = batches[i];
    if (b.producer_id < 0) continue;
    auto pit = pending.find(b.producer_id);
    if (pit == pending.end()) {
      auto it = producers_.find(b.producer_id);
      pit = pending.emplace(b.producer_id, it == producers_.end() ? ProducerEntry{} : it->second).first;
    }
    ProducerEntry& e = pit->second;
    const bool has_state = e.epoch >= 0;
    if (has_state && b.epoch < e.epoch) return CheckResult{ProducerCheck::kInvalidProducerEpoch, std::nullopt, i};
    if (has_state && b.epoch == e.epoch) {
      for (const auto& m : e.batches) {
        if (m.first_seq == b.first_seq && m.last_seq == b.last_seq) {
          return CheckResult{ProducerCheck::kDuplicate, m, i};
        }
      }
      const std::int32_t last = e.batches.empty() ? -1 : e.batches.back().last_seq;
      if (!e.batches.empty() && !in_sequence(last, b.first_seq)) {
        return CheckResult{ProducerCheck::kOutOfOrderSequence, std::nullopt, i};
      }
    } else if (has_state && b.epoch > e.epoch && b.first_seq != 0) {
      return CheckResult{ProducerCheck::kOutOfOrderSequence, std::nullopt, i};
    }
    apply(e, b, 0);
  }
  return CheckResult{};
}

void ProducerStateTable::update(const std::vector<BatchInfo>& batches, std::int64_t first_offset) {
  std::int64_t offset = first_offset;
  for (const auto& b : batches) {
    if (b.producer_id >= 0) {
      ProducerEntry& e = producers_[b.producer_id];
      apply(e, b, offset);
      track(b.producer_id, e);
    }
    offset += b.record_count;
  }
}

void ProducerStateTable::track(std::int64_t producer_id, const ProducerEntry& e) {
  if (e.current_txn_first_offset) ongoing_.emplace(*e.current_txn_first_offset, producer_id);
}

void ProducerStateTable::untrack(const ProducerEntry& e) {
  if (e.current_txn_first_offset) ongoing_.erase(*e.current_txn_first_offset);
}

void ProducerStateTable::restore(std::int64_t producer_id, ProducerEntry entry) {
  if (auto it = producers_.find(producer_id); it != producers_.end()) untrack(it->second);
  ProducerEntry& e = producers_[producer_id] = std::move(entry);
  track(producer_id, e);
}

MarkerCheck ProducerStateTable::check_marker(std::int64_t producer_id, std::int16_t epoch,
                                             std::int32_t coordinator_epoch, std::int16_t transaction_version) const {
  const ProducerEntry* e = find(producer_id);
  if (e == nullptr) return MarkerCheck::kOk;
  const bool bumped = transaction_version >= 2;
  if (bumped ? epoch <= e->epoch : epoch < e->epoch) {
    const bool retried_marker = bumped && epoch == e->epoch &&
                                (!e->current_txn_first_offset || epoch == std::numeric_limits<std::int16_t>::max());
    if (!retried_marker) return MarkerCheck::kInvalidProducerEpoch;
  }
  if (e->coordinator_epoch > coordinator_epoch) return MarkerCheck::kCoordinatorFenced;
  return MarkerCheck::kOk;
}

std::optional<CompletedTxn> ProducerStateTable::end_transaction(std::int64_t producer_id, std::int16_t epoch,
                                                                std::int32_t coordinator_epoch, bool commit,
                                                                std::int64_t offset, std::int64_t timestamp_ms) {
  ProducerEntry& e = producers_[producer_id];
  std::optional<CompletedTxn> done;
  if (e.current_txn_first_offset) {
    untrack(e);
    unreplicated_[*e.current_txn_first_offset] = offset;
    done = CompletedTxn{producer_id, *e.current_txn_first_offset, offset, offset + 1, !commit};
    // The other open transactions all started before this marker: the oldest bounds the LSO.
    if (!ongoing_.empty()) done->last_stable_offset = ongoing_.begin()->first;
  }
  set_epoch(e, epoch);
  e.coordinator_epoch = coordinator_epoch;
  e.current_txn_first_offset.reset();
  e.last_timestamp_ms = timestamp_ms;
  return done;
}

std::optional<std::int64_t> ProducerStateTable::first_unstable_offset(std::int64_t high_watermark) const {
  std::optional<std::int64_t> first;
  if (!ongoing_.empty()) first = ongoing_.begin()->first;
  for (const auto& [txn_first, marker] : unreplicated_) {
    if (marker < high_watermark) continue;  // stable already (on_high_watermark not called yet)
    if (!first || txn_first < *first) first = txn_first;
    break;  // ordered by first offset: the first one still unreplicated is the oldest
  }
  return first;
}

bool ProducerStateTable::has_ongoing_transaction(std::int64_t producer_id, std::int16_t epoch) const {
  const ProducerEntry* e = find(producer_id);
  return e != nullptr && e->current_txn_first_offset.has_value() && e->epoch == epoch;
}

void ProducerStateTable::replay(const LoggedBatch& b) {
  if (b.producer_id < 0) return;
  ProducerEntry& e = producers_[b.producer_id];
  if (b.control) {
    // A transaction marker (Kafka's appendEndTxnMarker): the transaction is over; no sequence.
    set_epoch(e, b.epoch);
    if (b.coordinator_epoch >= 0) e.coordinator_epoch = b.coordinator_epoch;
    untrack(e);
    if (e.current_txn_first_offset) unreplicated_[*e.current_txn_first_offset] = b.last_offset;
    e.current_txn_first_offset.reset();
    e.last_timestamp_ms = b.max_timestamp_ms;
    return;
  }
  add_batch(e, b.epoch, BatchMetadata{b.first_seq, b.last_seq, b.first_offset, b.last_offset, b.max_timestamp_ms});
  if (b.transactional && !e.current_txn_first_offset) {
    e.current_txn_first_offset = b.first_offset;
    track(b.producer_id, e);
  }
}

std::size_t ProducerStateTable::expire(std::int64_t now_ms, std::int64_t expiration_ms) {
  return std::erase_if(producers_, [&](const auto& kv) { return expired(kv.second, now_ms, expiration_ms); });
}

const ProducerEntry* ProducerStateTable::find(std::int64_t producer_id) const {
  auto it = producers_.find(producer_id);
  return it == producers_.end() ? nullptr : &it->second;
}

}  // namespace weir::storage
