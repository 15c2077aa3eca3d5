#include "txn/coordinator.h"

#include <algorithm>
#include <array>
#include <limits>
#include <utility>

#include "base/assert.h"
#include "base/java_hash.h"
#include "protocol/gen/transaction_log_key.h"
#include "protocol/gen/transaction_log_value.h"

namespace weir::txn {

namespace p = protocol;

namespace {

constexpr std::int16_t kKeyVersion = 0;
constexpr std::int16_t kMaxEpoch = std::numeric_limits<std::int16_t>::max();

constexpr std::array<std::string_view, 8> kStateNames = {
    "Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort", "Dead", "PrepareEpochFence",
};

// Kafka's TransactionMetadata.isEpochExhausted.
bool epoch_exhausted(std::int16_t epoch) { return epoch >= kMaxEpoch - 1; }

bool is_prepare(State s) { return s == State::kPrepareCommit || s == State::kPrepareAbort; }

// Kafka's appendTransactionToLog mapping of a failed append.
Error append_error(std::int16_t e) {
  switch (e) {
    case 3:   // UNKNOWN_TOPIC_OR_PARTITION
    case 19:  // NOT_ENOUGH_REPLICAS
    case 20:  // NOT_ENOUGH_REPLICAS_AFTER_APPEND
    case 7:   // REQUEST_TIMED_OUT
      return Error::kCoordinatorNotAvailable;
    case 6:   // NOT_LEADER_OR_FOLLOWER
    case 56:  // KAFKA_STORAGE_ERROR
      return Error::kNotCoordinator;
    case 10:  // MESSAGE_TOO_LARGE
    case 18:  // RECORD_LIST_TOO_LARGE
      return Error::kUnknownServerError;
    default:
      return static_cast<Error>(e);
  }
}

}  // namespace

std::string_view state_name(State s) { return kStateNames[static_cast<std::size_t>(s)]; }

std::optional<State> state_from_name(std::string_view name) {
  for (std::size_t i = 0; i < kStateNames.size(); ++i) {
    if (kStateNames[i] == name) return static_cast<State>(i);
  }
  return std::nullopt;
}

std::optional<State> state_from_id(std::int8_t id) {
  if (id < 0 || id > 7) return std::nullopt;
  return static_cast<State>(id);
}

bool valid_transition(State from, State to) {
  using enum State;
  switch (to) {
    case kEmpty:
      return from == kEmpty || from == kCompleteCommit || from == kCompleteAbort;
    case kOngoing:
      return from == kOngoing || from == kEmpty || from == kCompleteCommit || from == kCompleteAbort;
    case kPrepareCommit:
      return from == kOngoing;
    case kPrepareAbort:
      // From Empty / CompleteCommit / CompleteAbort: an abort without a transaction (v2).
      return from == kOngoing || from == kPrepareEpochFence || from == kEmpty || from == kCompleteCommit ||
             from == kCompleteAbort;
    case kCompleteCommit:
      return from == kPrepareCommit;
    case kCompleteAbort:
      return from == kPrepareAbort;
    case kDead:
      return from == kEmpty || from == kCompleteCommit || from == kCompleteAbort;
    case kPrepareEpochFence:
      return from == kOngoing;
  }
  return false;
}

std::string_view to_string(ReplayError e) {
  switch (e) {
    case ReplayError::kMalformedKey:
      return "malformed key";
    case ReplayError::kMalformedValue:
      return "malformed value";
    case ReplayError::kUnknownKeyVersion:
      return "unknown key version";
    case ReplayError::kUnknownValueVersion:
      return "unknown value version";
  }
  return "unknown";
}

std::vector<TopicPartition> java_hash_set_order(const std::vector<TopicPartition>& parts) {
  // java.util.HashMap: capacity 16, doubled while size > 0.75 * capacity; bucket = spread hash &
  // (capacity - 1), where spread = h ^ (h >>> 16); a bucket keeps insertion order (resizes split
  // buckets stably). TopicPartition.hashCode = 31 * (31 + partition) + topic.hashCode().
  std::size_t capacity = 16;
  while (static_cast<double>(parts.size()) > 0.75 * static_cast<double>(capacity)) capacity *= 2;
  std::vector<std::pair<std::uint32_t, std::size_t>> keyed;
  keyed.reserve(parts.size());
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const auto h = static_cast<std::uint32_t>(31) * (31u + static_cast<std::uint32_t>(parts[i].partition)) +
                   static_cast<std::uint32_t>(java_string_hash(parts[i].topic));
    const std::uint32_t spread = h ^ (h >> 16);
    keyed.emplace_back(spread & static_cast<std::uint32_t>(capacity - 1), i);
  }
  std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<TopicPartition> out;
  out.reserve(parts.size());
  for (const auto& [bucket, i] : keyed) out.push_back(parts[i]);
  return out;
}

bool TxnMetadata::contains(const TopicPartition& tp) const {
  return std::find(partitions.begin(), partitions.end(), tp) != partitions.end();
}

TransactionCoordinator::TransactionCoordinator(TxnConfig config) : config_(config) {}

TxnMetadata* TransactionCoordinator::lookup(const std::string& transactional_id) {
  auto it = txns_.find(transactional_id);
  return it == txns_.end() ? nullptr : &it->second;
}

const TxnMetadata* TransactionCoordinator::find(const std::string& transactional_id) const {
  auto it = txns_.find(transactional_id);
  return it == txns_.end() ? nullptr : &it->second;
}

void TransactionCoordinator::answer(Effects& fx, std::optional<RequestHandle> handle, Error error,
                                    std::int64_t producer_id, std::int16_t producer_epoch) {
  if (!handle) return;
  fx.answers.push_back(Answer{*handle, error, producer_id, producer_epoch});
}

// ---- Records --------------------------------------------------------------------------------

Bytes TransactionCoordinator::key_bytes(const std::string& transactional_id) {
  Bytes key;
  p::Writer w(key);
  w.i16(kKeyVersion);
  p::TransactionLogKey k;
  k.transactional_id = transactional_id;
  k.encode(w, kKeyVersion);
  return key;
}

Bytes TransactionCoordinator::value_bytes(const TxnMetadata& m, std::int16_t version) {
  WEIR_ASSERT(m.state != State::kEmpty || m.partitions.empty(), "an Empty transaction has no partitions");
  p::TransactionLogValue v;
  v.producer_id = m.producer_id;
  v.previous_producer_id = m.previous_producer_id;
  v.next_producer_id = m.next_producer_id;
  v.producer_epoch = m.producer_epoch;
  v.transaction_timeout_ms = m.timeout_ms;
  v.transaction_status = static_cast<std::int8_t>(m.state);
  if (m.state == State::kEmpty) {
    v.transaction_partitions = std::nullopt;
  } else {
    auto& topics = v.transaction_partitions.emplace();
    for (const auto& tp : java_hash_set_order(m.partitions)) {
      auto it = std::find_if(topics.begin(), topics.end(), [&](const auto& t) { return t.topic == tp.topic; });
      if (it == topics.end()) {
        it = topics.emplace(topics.end());
        it->topic = tp.topic;
      }
      it->partition_ids.push_back(tp.partition);
    }
  }
  v.transaction_last_update_timestamp_ms = m.last_update_ms;
  v.transaction_start_timestamp_ms = m.start_ms;
  v.client_transaction_version = m.client_transaction_version;
  Bytes value;
  p::Writer w(value);
  w.i16(version);
  v.encode(w, version);
  return value;
}

// ---- Transitions ----------------------------------------------------------------------------

void TransactionCoordinator::prepare(TxnMetadata& m, TxnMetadata target, Then then, std::optional<RequestHandle> handle,
                                     Effects& fx, bool epoch_fence) {
  WEIR_ASSERT(!m.pending, "a transition is already pending for {}", m.transactional_id);
  WEIR_ASSERT(valid_transition(m.state, target.state), "{} cannot move from {} to {}", m.transactional_id,
              state_name(m.state), state_name(target.state));
  WEIR_ASSERT(target.producer_id >= 0 && (target.state == State::kDead || target.producer_epoch >= 0));
  m.pending = target.state;
  // Kafka's transit metadata carries the producer id before the transition as the previous one.
  target.previous_producer_id = m.producer_id;
  Append a;
  a.transactional_id = m.transactional_id;
  a.record.key = key_bytes(m.transactional_id);
  if (target.state != State::kDead) a.record.value = value_bytes(target, config_.value_version);
  fx.appends.push_back(std::move(a));
  pending_[m.transactional_id] = Pending{std::move(target), then, handle, epoch_fence};
}

TxnMetadata TransactionCoordinator::fence_target(const TxnMetadata& m) {
  WEIR_ASSERT(m.producer_epoch != kMaxEpoch, "cannot fence {} at the largest epoch", m.transactional_id);
  TxnMetadata t = m;
  t.state = State::kPrepareEpochFence;
  t.producer_epoch = m.has_failed_epoch_fence ? m.producer_epoch : static_cast<std::int16_t>(m.producer_epoch + 1);
  t.last_producer_epoch = kNoProducerEpoch;
  return t;
}

Effects TransactionCoordinator::init_producer_id(RequestHandle handle, const std::string& transactional_id,
                                                 std::int32_t timeout_ms, std::int64_t producer_id,
                                                 std::int16_t producer_epoch, std::optional<std::int64_t> fresh,
                                                 std::int64_t now_ms) {
  Effects fx;
  // A fresh producer id the host allocated, or -1 (none yet, or used to create the id).
  std::int64_t fresh_id = fresh.value_or(kNoProducerId);
  if (transactional_id.empty()) {
    answer(fx, handle, Error::kInvalidRequest);
    return fx;
  }
  if (timeout_ms <= 0 || timeout_ms > config_.max_timeout_ms) {
    answer(fx, handle, Error::kInvalidTransactionTimeout);
    return fx;
  }
  TxnMetadata* m = lookup(transactional_id);
  if (m == nullptr) {
    if (fresh_id < 0) {
      fx.needs_producer_id = true;
      return fx;
    }
    TxnMetadata created;
    created.transactional_id = transactional_id;
    created.producer_id = fresh_id;
    created.timeout_ms = timeout_ms;
    created.state = State::kEmpty;
    created.last_update_ms = now_ms;
    m = &txns_.emplace(transactional_id, std::move(created)).first->second;
    fresh_id = kNoProducerId;  // used
  }
  const bool expected = producer_id != kNoProducerId;
  if (m->pending) {
    answer(fx, handle, Error::kConcurrentTransactions);
    return fx;
  }
  // Kafka's isValidProducerId for the KIP-360 producer id and epoch of the request.
  if (expected && !(m->producer_epoch == kNoProducerEpoch || producer_id == m->producer_id ||
                    (producer_id == m->previous_producer_id && epoch_exhausted(producer_epoch)))) {
    answer(fx, handle, Error::kProducerFenced);
    return fx;
  }
  switch (m->state) {
    case State::kPrepareAbort:
    case State::kPrepareCommit:
      answer(fx, handle, Error::kConcurrentTransactions);
      return fx;
    case State::kEmpty:
    case State::kCompleteAbort:
    case State::kCompleteCommit: {
      TxnMetadata t = *m;
      t.state = State::kEmpty;
      t.timeout_ms = timeout_ms;
      t.partitions.clear();
      t.start_ms = -1;
      t.last_update_ms = now_ms;
      t.next_producer_id = kNoProducerId;
      if (epoch_exhausted(m->producer_epoch) && (!expected || producer_epoch == m->producer_epoch)) {
        // Rotate to a new producer id.
        if (fresh_id < 0) {
          fx.needs_producer_id = true;
          return fx;
        }
        t.previous_producer_id = m->producer_id;
        t.producer_id = fresh_id;
        t.producer_epoch = 0;
        t.last_producer_epoch = expected ? m->producer_epoch : kNoProducerEpoch;
      } else {
        // Kafka's prepareIncrementProducerEpoch.
        const auto bumped = static_cast<std::int16_t>(m->producer_epoch + 1);
        t.previous_producer_id = m->producer_id;
        if (!expected) {
          t.producer_epoch = bumped;
          t.last_producer_epoch = kNoProducerEpoch;
        } else if (m->producer_epoch == kNoProducerEpoch || producer_epoch == m->producer_epoch) {
          t.producer_epoch = bumped;
          t.last_producer_epoch = m->producer_epoch;
        } else if (producer_epoch == m->last_producer_epoch) {
          // A retry of an InitProducerId whose answer was lost: the same epoch again.
          t.producer_epoch = m->producer_epoch;
          t.last_producer_epoch = m->last_producer_epoch;
        } else {
          answer(fx, handle, Error::kProducerFenced);
          return fx;
        }
      }
      prepare(*m, std::move(t), Then::kAnswerInit, handle, fx);
      return fx;
    }
    case State::kOngoing: {
      // Fence the running transaction's producer and abort it; the client retries.
      const TxnMetadata fenced = fence_target(*m);
      m->pending = State::kPrepareEpochFence;
      std::optional<std::int64_t> rotation = fresh;
      end_transaction(*m, fenced.producer_id, fenced.producer_epoch, false, false,
                      config_.server_transaction_version, handle, Then::kFenceAbort, now_ms, rotation, fx);
      if (m->pending == State::kPrepareEpochFence) m->pending.reset();
      return fx;
    }
    case State::kDead:
    case State::kPrepareEpochFence:
      break;
  }
  WEIR_UNREACHABLE("transactional id {} in state {}", transactional_id, state_name(m->state));
}

Effects TransactionCoordinator::add_partitions(RequestHandle handle, const std::string& transactional_id,
                                               std::int64_t producer_id, std::int16_t producer_epoch,
                                               const std::vector<TopicPartition>& partitions, std::int64_t now_ms,
                                               std::int16_t client_transaction_version) {
  Effects fx;
  if (transactional_id.empty()) {
    answer(fx, handle, Error::kInvalidRequest);
    return fx;
  }
  TxnMetadata* m = lookup(transactional_id);
  if (m == nullptr || m->producer_id != producer_id) {
    answer(fx, handle, Error::kInvalidProducerIdMapping);
    return fx;
  }
  if (m->producer_epoch != producer_epoch) {
    answer(fx, handle, Error::kProducerFenced);
    return fx;
  }
  if (m->pending || is_prepare(m->state)) {
    answer(fx, handle, Error::kConcurrentTransactions);
    return fx;
  }
  const bool subset =
      std::all_of(partitions.begin(), partitions.end(), [&](const auto& tp) { return m->contains(tp); });
  if (m->state == State::kOngoing && subset) {
    answer(fx, handle, Error::kNone);
    return fx;
  }
  TxnMetadata t = *m;
  t.state = State::kOngoing;
  for (const auto& tp : partitions) {
    if (!t.contains(tp)) t.partitions.push_back(tp);
  }
  if (m->state == State::kEmpty || m->state == State::kCompleteAbort || m->state == State::kCompleteCommit) {
    t.start_ms = now_ms;
  }
  t.last_update_ms = now_ms;
  t.client_transaction_version = client_transaction_version;
  prepare(*m, std::move(t), Then::kAnswerAdd, handle, fx);
  return fx;
}

std::vector<Error> TransactionCoordinator::verify(const std::string& transactional_id, std::int64_t producer_id,
                                                  std::int16_t producer_epoch,
                                                  const std::vector<TopicPartition>& partitions) const {
  auto all = [&](Error e) { return std::vector<Error>(partitions.size(), e); };
  if (transactional_id.empty()) return all(Error::kInvalidRequest);
  const TxnMetadata* m = find(transactional_id);
  if (m == nullptr || m->producer_id != producer_id) return all(Error::kInvalidProducerIdMapping);
  if (m->producer_epoch != producer_epoch) return all(Error::kProducerFenced);
  if (is_prepare(m->state)) return all(Error::kConcurrentTransactions);
  std::vector<Error> out;
  out.reserve(partitions.size());
  for (const auto& tp : partitions) out.push_back(m->contains(tp) ? Error::kNone : Error::kTransactionAbortable);
  return out;
}

Effects TransactionCoordinator::end_txn(RequestHandle handle, const std::string& transactional_id,
                                        std::int64_t producer_id, std::int16_t producer_epoch, bool commit,
                                        std::int64_t now_ms, std::int16_t client_transaction_version,
                                        std::optional<std::int64_t> fresh_producer_id) {
  Effects fx;
  if (transactional_id.empty()) {
    answer(fx, handle, Error::kInvalidRequest);
    return fx;
  }
  TxnMetadata* m = lookup(transactional_id);
  if (m == nullptr) {
    answer(fx, handle, Error::kInvalidProducerIdMapping);
    return fx;
  }
  end_transaction(*m, producer_id, producer_epoch, commit, true, client_transaction_version, handle, Then::kEndTxn,
                  now_ms, fresh_producer_id, fx);
  return fx;
}

void TransactionCoordinator::end_transaction(TxnMetadata& m, std::int64_t producer_id, std::int16_t producer_epoch,
                                             bool commit, bool from_client, std::int16_t transaction_version,
                                             std::optional<RequestHandle> handle, Then then, std::int64_t now_ms,
                                             std::optional<std::int64_t>& fresh_id, Effects& fx) {
  if (transaction_version >= 2) {
    end_transaction_v2(m, producer_id, producer_epoch, commit, from_client, transaction_version, handle, then, now_ms,
                       fresh_id, fx);
  } else {
    end_transaction_v1(m, producer_id, producer_epoch, commit, from_client, handle, then, now_ms, fx);
  }
}

void TransactionCoordinator::end_transaction_v1(TxnMetadata& m, std::int64_t producer_id, std::int16_t producer_epoch,
                                                bool commit, bool from_client, std::optional<RequestHandle> handle,
                                                Then then, std::int64_t now_ms, Effects& fx) {
  // A fence answers CONCURRENT_TRANSACTIONS where the abort itself would answer NONE.
  auto fail = [&](Error e) {
    if (then == Then::kFenceAbort && e == Error::kNone) e = Error::kConcurrentTransactions;
    if (e == Error::kNone) {
      answer(fx, handle, e, m.producer_id, m.producer_epoch);
    } else {
      answer(fx, handle, e);
    }
  };
  const bool valid_epoch = (!from_client || producer_epoch == m.producer_epoch) && producer_epoch >= m.producer_epoch;
  if (m.producer_id != producer_id) return fail(Error::kInvalidProducerIdMapping);
  if (!valid_epoch) return fail(Error::kProducerFenced);
  if (m.pending && *m.pending != State::kPrepareEpochFence) return fail(Error::kConcurrentTransactions);
  switch (m.state) {
    case State::kOngoing: {
      const State next = commit ? State::kPrepareCommit : State::kPrepareAbort;
      bool epoch_fence = false;
      if (next == State::kPrepareAbort && m.pending == State::kPrepareEpochFence) {
        // Kafka bumps the epoch in memory before the abort is written.
        epoch_fence = true;
        m.pending.reset();
        m.producer_epoch = producer_epoch;
        m.last_producer_epoch = kNoProducerEpoch;
      }
      TxnMetadata t = m;
      t.state = next;
      t.last_update_ms = now_ms;
      t.next_producer_id = kNoProducerId;
      t.client_transaction_version = 0;
      prepare(m, std::move(t), then, handle, fx, epoch_fence);
      return;
    }
    case State::kCompleteCommit:
      return fail(commit ? Error::kNone : Error::kInvalidTxnState);
    case State::kCompleteAbort:
      return fail(commit ? Error::kInvalidTxnState : Error::kNone);
    case State::kPrepareCommit:
      return fail(commit ? Error::kConcurrentTransactions : Error::kInvalidTxnState);
    case State::kPrepareAbort:
      return fail(commit ? Error::kInvalidTxnState : Error::kConcurrentTransactions);
    case State::kEmpty:
      return fail(Error::kInvalidTxnState);
    case State::kDead:
    case State::kPrepareEpochFence:
      break;
  }
  WEIR_UNREACHABLE("transactional id {} in state {}", m.transactional_id, state_name(m.state));
}

void TransactionCoordinator::end_transaction_v2(TxnMetadata& m, std::int64_t producer_id, std::int16_t producer_epoch,
                                                bool commit, bool from_client, std::int16_t transaction_version,
                                                std::optional<RequestHandle> handle, Then then, std::int64_t now_ms,
                                                std::optional<std::int64_t>& fresh_id, Effects& fx) {
  // Kafka answers a successful retry (and NONE for a fence's abort) with the current ids.
  const std::int64_t current_id = m.producer_id;
  const std::int16_t current_epoch = m.producer_epoch;
  auto fail = [&](Error e) {
    if (then == Then::kFenceAbort && e == Error::kNone) e = Error::kConcurrentTransactions;
    if (e == Error::kNone) {
      answer(fx, handle, e, current_id, current_epoch);
    } else {
      answer(fx, handle, e);
    }
  };
  const bool epoch_fence = m.pending == State::kPrepareEpochFence;
  // A retry of an EndTxn whose epoch bump overflowed into a new producer id, or of one that bumped.
  const bool retry_on_overflow = !epoch_fence && m.previous_producer_id == producer_id &&
                                 producer_epoch == kMaxEpoch - 1 && m.producer_epoch == 0;
  const bool retry_on_bump = !epoch_fence && m.producer_epoch == producer_epoch + 1;
  bool valid_epoch = false;
  if (epoch_fence) {
    valid_epoch = (!from_client || producer_epoch == m.producer_epoch) && producer_epoch >= m.producer_epoch;
  } else {
    switch (m.state) {
      case State::kOngoing:
      case State::kEmpty:
      case State::kDead:
      case State::kPrepareEpochFence:
        valid_epoch = producer_epoch == m.producer_epoch;
        break;
      case State::kPrepareCommit:
      case State::kPrepareAbort:
        valid_epoch = retry_on_bump;
        break;
      case State::kCompleteCommit:
      case State::kCompleteAbort:
        valid_epoch = retry_on_bump || retry_on_overflow || producer_epoch == m.producer_epoch;
        break;
    }
  }
  const bool retry = retry_on_bump || retry_on_overflow;
  // Kafka's generateTxnTransitMetadataForTxnCompletion and prepareAbortOrCommit: the epoch is
  // bumped (a new producer id is taken when it is exhausted, used once the markers are written).
  auto complete = [&](State next, bool no_partition_added) {
    std::int64_t next_id = kNoProducerId;
    if (epoch_exhausted(m.producer_epoch)) {
      if (!fresh_id) {
        fx.needs_producer_id = true;
        return;
      }
      next_id = *fresh_id;
      fresh_id.reset();
    }
    if (next == State::kPrepareAbort && epoch_fence) m.pending.reset();
    TxnMetadata t = m;
    t.state = next;
    if (m.producer_epoch == kMaxEpoch && next == State::kPrepareAbort) {
      // Already broken: the abort goes through without overflowing the epoch.
    } else {
      t.producer_epoch = static_cast<std::int16_t>(m.producer_epoch + 1);
    }
    t.last_producer_epoch = m.producer_epoch;
    if (no_partition_added) t.start_ms = now_ms;
    t.next_producer_id = next_id;
    t.last_update_ms = now_ms;
    t.client_transaction_version = transaction_version;
    prepare(m, std::move(t), then, handle, fx, epoch_fence);
  };
  if (m.producer_id != producer_id && !retry_on_overflow) return fail(Error::kInvalidProducerIdMapping);
  if (!valid_epoch) return fail(Error::kProducerFenced);
  if (m.pending && *m.pending != State::kPrepareEpochFence) return fail(Error::kConcurrentTransactions);
  switch (m.state) {
    case State::kOngoing:
      return complete(commit ? State::kPrepareCommit : State::kPrepareAbort, false);
    case State::kCompleteCommit:
      if (commit) return fail(retry ? Error::kNone : Error::kInvalidTxnState);
      if (retry) return fail(Error::kInvalidTxnState);
      return complete(State::kPrepareAbort, true);
    case State::kCompleteAbort:
      if (!commit) {
        if (retry) return fail(Error::kNone);
        return complete(State::kPrepareAbort, true);
      }
      return fail(Error::kInvalidTxnState);
    case State::kPrepareCommit:
      return fail(commit ? Error::kConcurrentTransactions : Error::kInvalidTxnState);
    case State::kPrepareAbort:
      return fail(commit ? Error::kInvalidTxnState : Error::kConcurrentTransactions);
    case State::kEmpty:
      if (!commit) return complete(State::kPrepareAbort, true);
      return fail(Error::kInvalidTxnState);
    case State::kDead:
    case State::kPrepareEpochFence:
      break;
  }
  WEIR_UNREACHABLE("transactional id {} in state {}", m.transactional_id, state_name(m.state));
}

void TransactionCoordinator::send_markers(TxnMetadata& m, std::int64_t now_ms, Effects& fx) {
  WEIR_ASSERT(is_prepare(m.state) && !m.pending);
  const bool commit = m.state == State::kPrepareCommit;
  TxnMetadata t = m;
  t.state = commit ? State::kCompleteCommit : State::kCompleteAbort;
  t.partitions.clear();
  t.last_update_ms = now_ms;
  if (m.client_transaction_version >= 2 && m.next_producer_id != kNoProducerId) {
    // Kafka's prepareComplete after an exhausted epoch: the next transaction has a new id.
    t.producer_id = m.next_producer_id;
    t.producer_epoch = 0;
  }
  t.next_producer_id = kNoProducerId;
  t.previous_producer_id = m.producer_id;
  m.pending = t.state;
  pending_[m.transactional_id] = Pending{std::move(t), Then::kComplete, std::nullopt, false};
  MarkerRequest req;
  req.transactional_id = m.transactional_id;
  req.producer_id = m.producer_id;
  req.producer_epoch = m.producer_epoch;
  req.coordinator_epoch = config_.coordinator_epoch;
  req.commit = commit;
  req.transaction_version = m.client_transaction_version;
  req.partitions = java_hash_set_order(m.partitions);
  if (req.partitions.empty()) {
    // Nothing to mark: the completion is written at once.
    const TxnMetadata& written = pending_[m.transactional_id].target;
    Append a;
    a.transactional_id = m.transactional_id;
    a.record.key = key_bytes(m.transactional_id);
    a.record.value = value_bytes(written, config_.value_version);
    fx.appends.push_back(std::move(a));
    return;
  }
  markers_left_[m.transactional_id] = std::set<TopicPartition>(req.partitions.begin(), req.partitions.end());
  fx.markers.push_back(std::move(req));
}

Effects TransactionCoordinator::on_markers_written(const MarkerRequest& request,
                                                   const std::vector<std::int16_t>& errors, std::int64_t now_ms) {
  Effects fx;
  auto left = markers_left_.find(request.transactional_id);
  auto pend = pending_.find(request.transactional_id);
  if (left == markers_left_.end() || pend == pending_.end() || pend->second.then != Then::kComplete) return fx;
  MarkerRetry retry{request, now_ms + config_.marker_retry_backoff_ms};
  retry.request.partitions.clear();
  for (std::size_t i = 0; i < request.partitions.size(); ++i) {
    const std::int16_t e = i < errors.size() ? errors[i] : code(Error::kUnknownServerError);
    // Done, or the partition is gone (its topic was deleted): nothing left to mark there.
    if (e == 0 || e == code(Error::kUnknownTopicOrPartition)) {
      left->second.erase(request.partitions[i]);
    } else if (left->second.contains(request.partitions[i])) {
      retry.request.partitions.push_back(request.partitions[i]);
    }
  }
  if (!retry.request.partitions.empty()) retries_.push_back(std::move(retry));
  if (!left->second.empty()) return fx;
  markers_left_.erase(left);
  const TxnMetadata* m = find(request.transactional_id);
  WEIR_ASSERT(m != nullptr);
  Append a;
  a.transactional_id = request.transactional_id;
  a.record.key = key_bytes(request.transactional_id);
  a.record.value = value_bytes(pend->second.target, config_.value_version);
  fx.appends.push_back(std::move(a));
  return fx;
}

Effects TransactionCoordinator::on_appended(const std::string& transactional_id, std::int16_t error,
                                            std::int64_t now_ms) {
  Effects fx;
  auto it = pending_.find(transactional_id);
  TxnMetadata* m = lookup(transactional_id);
  if (it == pending_.end() || m == nullptr) return fx;
  Pending pend = std::move(it->second);
  pending_.erase(it);
  if (error != 0) {
    const Error e = append_error(error);
    if (pend.then == Then::kComplete) {
      // Kafka retries writing the completion; the transaction stays in its Prepare state.
      MarkerRetry retry;
      retry.request.transactional_id = transactional_id;
      retry.due_ms = now_ms + config_.marker_retry_backoff_ms;
      retries_.push_back(std::move(retry));
      pending_.emplace(transactional_id, std::move(pend));
      return fx;
    }
    m->pending.reset();
    if (pend.epoch_fence) m->has_failed_epoch_fence = true;
    answer(fx, pend.handle, e);
    return fx;
  }
  TxnMetadata& t = pend.target;
  WEIR_ASSERT(m->pending == t.state, "{} completes {} while {} is pending", transactional_id, state_name(t.state),
              m->pending ? state_name(*m->pending) : "nothing");
  if (t.state == State::kDead) {
    txns_.erase(transactional_id);
    return fx;
  }
  // Kafka 4.3.1's completeTransitionTo takes every field of the transition, the start time too
  // (-1 after an InitProducerId).
  const bool failed_fence = m->has_failed_epoch_fence;
  *m = std::move(t);
  m->pending.reset();
  m->has_failed_epoch_fence = failed_fence;
  switch (pend.then) {
    case Then::kAnswerInit:
      answer(fx, pend.handle, Error::kNone, m->producer_id, m->producer_epoch);
      break;
    case Then::kAnswerAdd:
      answer(fx, pend.handle, Error::kNone);
      break;
    case Then::kEndTxn: {
      send_markers(*m, now_ms, fx);
      // The producer id and epoch of the next transaction (v2: bumped, or a new id at epoch 0).
      const TxnMetadata& next = pending_.at(transactional_id).target;
      answer(fx, pend.handle, Error::kNone, next.producer_id, next.producer_epoch);
      break;
    }
    case Then::kFenceAbort:
      answer(fx, pend.handle, Error::kConcurrentTransactions);
      send_markers(*m, now_ms, fx);
      break;
    case Then::kTimeoutAbort:
      ++stats_.timed_out;
      send_markers(*m, now_ms, fx);
      break;
    case Then::kComplete:
      m->has_failed_epoch_fence = false;
      if (m->state == State::kCompleteCommit) {
        ++stats_.committed;
      } else {
        ++stats_.aborted;
      }
      break;
    case Then::kDead:
      break;
  }
  return fx;
}

Effects TransactionCoordinator::abort_timed_out(std::int64_t now_ms, std::optional<std::int64_t> fresh_producer_id) {
  Effects fx;
  bool needs_producer_id = false;
  for (auto& [id, m] : txns_) {
    if (m.pending || m.state != State::kOngoing || m.start_ms + m.timeout_ms >= now_ms) continue;
    const TxnMetadata fenced = fence_target(m);
    m.pending = State::kPrepareEpochFence;
    fx.needs_producer_id = false;
    end_transaction(m, fenced.producer_id, fenced.producer_epoch, false, false, config_.server_transaction_version,
                    std::nullopt, Then::kTimeoutAbort, now_ms, fresh_producer_id, fx);
    needs_producer_id = needs_producer_id || fx.needs_producer_id;
    if (m.pending == State::kPrepareEpochFence) m.pending.reset();
  }
  fx.needs_producer_id = needs_producer_id;
  return fx;
}

Effects TransactionCoordinator::expire_transactional_ids(std::int64_t now_ms) {
  Effects fx;
  for (auto& [id, m] : txns_) {
    const bool idle = m.state == State::kEmpty || m.state == State::kCompleteCommit || m.state == State::kCompleteAbort;
    if (m.pending || !idle || m.last_update_ms > now_ms - config_.transactional_id_expiration_ms) continue;
    TxnMetadata t = m;
    t.state = State::kDead;
    t.partitions.clear();
    prepare(m, std::move(t), Then::kDead, std::nullopt, fx);
  }
  return fx;
}

Effects TransactionCoordinator::tick(std::int64_t now_ms) {
  Effects fx;
  std::vector<MarkerRetry> due;
  auto split =
      std::stable_partition(retries_.begin(), retries_.end(), [&](const auto& r) { return r.due_ms > now_ms; });
  due.assign(std::make_move_iterator(split), std::make_move_iterator(retries_.end()));
  retries_.erase(split, retries_.end());
  for (auto& r : due) {
    auto pend = pending_.find(r.request.transactional_id);
    const TxnMetadata* m = find(r.request.transactional_id);
    if (pend == pending_.end() || pend->second.then != Then::kComplete || m == nullptr) continue;
    if (r.request.partitions.empty()) {
      // Retry appending the completion.
      Append a;
      a.transactional_id = r.request.transactional_id;
      a.record.key = key_bytes(a.transactional_id);
      a.record.value = value_bytes(pend->second.target, config_.value_version);
      fx.appends.push_back(std::move(a));
    } else {
      fx.markers.push_back(std::move(r.request));
    }
  }
  return fx;
}

std::optional<std::int64_t> TransactionCoordinator::next_deadline_ms() const {
  std::optional<std::int64_t> next;
  for (const auto& r : retries_) {
    if (!next || r.due_ms < *next) next = r.due_ms;
  }
  return next;
}

// ---- Queries --------------------------------------------------------------------------------

protocol::DescribeTransactionsResponse::TransactionState TransactionCoordinator::describe(
    const std::string& transactional_id) const {
  protocol::DescribeTransactionsResponse::TransactionState s;
  s.transactional_id = transactional_id;
  if (transactional_id.empty()) {
    s.error_code = code(Error::kInvalidRequest);
    return s;
  }
  const TxnMetadata* m = find(transactional_id);
  if (m == nullptr || m->state == State::kDead) {
    s.error_code = code(Error::kTransactionalIdNotFound);
    return s;
  }
  for (const auto& tp : java_hash_set_order(m->partitions)) {
    auto it = std::find_if(s.topics.begin(), s.topics.end(), [&](const auto& t) { return t.topic == tp.topic; });
    if (it == s.topics.end()) {
      it = s.topics.emplace(s.topics.end());
      it->topic = tp.topic;
    }
    it->partitions.push_back(tp.partition);
  }
  s.error_code = 0;
  s.producer_id = m->producer_id;
  s.producer_epoch = m->producer_epoch;
  s.transaction_state = std::string(state_name(m->state));
  s.transaction_timeout_ms = m->timeout_ms;
  s.transaction_start_time_ms = m->start_ms;
  return s;
}

void TransactionCoordinator::list(const std::vector<std::string>& states, const std::vector<std::int64_t>& producer_ids,
                                  std::int64_t duration_ms, std::int64_t now_ms,
                                  std::vector<protocol::ListTransactionsResponse::TransactionState>& out) const {
  std::set<State> wanted;
  for (const auto& name : states) {
    if (auto st = state_from_name(name)) wanted.insert(*st);
  }
  for (const auto& [id, m] : txns_) {
    if (m.state == State::kDead) continue;
    if (!producer_ids.empty() &&
        std::find(producer_ids.begin(), producer_ids.end(), m.producer_id) == producer_ids.end()) {
      continue;
    }
    if (!states.empty() && !wanted.contains(m.state)) continue;
    if (duration_ms >= 0 && now_ms - m.start_ms <= duration_ms) continue;
    auto& s = out.emplace_back();
    s.transactional_id = id;
    s.producer_id = m.producer_id;
    s.transaction_state = std::string(state_name(m.state));
  }
}

// ---- Loading --------------------------------------------------------------------------------

Status<ReplayError> TransactionCoordinator::replay(std::span<const std::uint8_t> key,
                                                   std::optional<std::span<const std::uint8_t>> value) {
  p::Reader kr(key);
  const std::int16_t key_version = kr.i16();
  if (!kr.ok()) return unexpected(ReplayError::kMalformedKey);
  if (key_version != kKeyVersion) return unexpected(ReplayError::kUnknownKeyVersion);
  p::TransactionLogKey k;
  k.decode(kr, kKeyVersion);
  if (!kr.ok() || kr.remaining() != 0) return unexpected(ReplayError::kMalformedKey);
  pending_.erase(k.transactional_id);
  markers_left_.erase(k.transactional_id);
  if (!value) {
    txns_.erase(k.transactional_id);
    return {};
  }
  p::Reader vr(*value);
  const std::int16_t version = vr.i16();
  if (!vr.ok()) return unexpected(ReplayError::kMalformedValue);
  if (version < p::TransactionLogValue::kMinVersion || version > p::TransactionLogValue::kMaxVersion) {
    return unexpected(ReplayError::kUnknownValueVersion);
  }
  p::TransactionLogValue v;
  v.decode(vr, version);
  if (!vr.ok()) return unexpected(ReplayError::kMalformedValue);
  const auto state = state_from_id(v.transaction_status);
  if (!state) return unexpected(ReplayError::kMalformedValue);
  TxnMetadata m;
  m.transactional_id = k.transactional_id;
  m.producer_id = v.producer_id;
  m.previous_producer_id = v.previous_producer_id;
  m.next_producer_id = v.next_producer_id;
  m.producer_epoch = v.producer_epoch;
  m.timeout_ms = v.transaction_timeout_ms;
  m.state = *state;
  m.start_ms = v.transaction_start_timestamp_ms;
  m.last_update_ms = v.transaction_last_update_timestamp_ms;
  m.client_transaction_version = v.client_transaction_version;
  if (m.state != State::kEmpty && v.transaction_partitions) {
    for (const auto& t : *v.transaction_partitions) {
      for (const std::int32_t part : t.partition_ids) {
        TopicPartition tp{t.topic, part};
        if (!m.contains(tp)) m.partitions.push_back(std::move(tp));
      }
    }
  }
  txns_[k.transactional_id] = std::move(m);
  return {};
}

Effects TransactionCoordinator::finish_replay(std::int64_t now_ms) {
  Effects fx;
  for (auto& [id, m] : txns_) {
    if (is_prepare(m.state) && !m.pending) send_markers(m, now_ms, fx);
  }
  return fx;
}

}  // namespace weir::txn
