#include "storage/producer_state_manager.h"

#include <algorithm>

#include "base/log.h"
#include "protocol/record/control_record.h"
#include "protocol/record/record.h"
#include "protocol/record/record_batch.h"
#include "storage/file.h"
#include "storage/producer_snapshot.h"

namespace weir::storage {

namespace {

// Largest snapshot file read (about 23 million producers).
constexpr std::size_t kMaxSnapshotBytes = std::size_t{1} << 30;

std::int32_t last_sequence(std::int32_t base_sequence, std::int32_t last_offset_delta) {
  if (base_sequence < 0) return -1;
  return static_cast<std::int32_t>((static_cast<std::int64_t>(base_sequence) + last_offset_delta) % 2147483648LL);
}

// The coordinator epoch of a transaction marker batch; nullopt if the batch holds no commit or
// abort marker (another control record type), -1 inside if the marker cannot be read.
std::optional<std::int32_t> marker_coordinator_epoch(ByteSpan batch) {
  if (batch.empty()) return -1;
  auto view = record::RecordBatchView::from(batch);
  if (!view) return -1;
  std::optional<std::int32_t> out = -1;
  bool first = true;
  auto walked = record::for_each_record(*view, [&](const record::RecordView& r) {
    if (!first) return;
    first = false;
    if (!r.key) return;
    auto key = record::parse_control_key(*r.key);
    if (!key) return;
    if (!key->is_transaction_marker()) {
      out = std::nullopt;
      return;
    }
    if (!r.value) return;
    if (auto marker = record::parse_end_txn_marker(*r.value)) out = marker->coordinator_epoch;
  });
  if (!walked) return -1;
  return out;
}

}  // namespace

Status<storage::Errc> ProducerStateManager::load(storage::PartitionLog& log) {
  auto lg = log::get("txn");
  table_.clear();
  snapshots_.clear();
  batches_replayed_ = 0;
  storage::FileSystem& fs = log.file_system();
  // The log's load listed them (or its summary named them).
  if (std::optional<std::vector<std::int64_t>> offsets = log.take_snapshot_offsets()) {
    snapshots_ = std::move(*offsets);
  } else {
    auto entries = fs.list(log.dir());
    if (!entries) return unexpected(storage::Errc::kStorageError);
    for (const storage::DirEntry& e : *entries) {
      if (e.is_directory) continue;
      if (auto offset = parse_snapshot_file_name(e.name)) snapshots_.push_back(*offset);
    }
  }
  std::sort(snapshots_.begin(), snapshots_.end());

  const std::int64_t log_start = log.log_start_offset();
  const std::int64_t log_end = log.log_end_offset();
  // Kafka's truncateAndReload: snapshots past the log end describe data recovery or a truncation
  // removed; those at or below the log start, data that was deleted.
  for (std::int64_t offset : std::vector<std::int64_t>(snapshots_)) {
    if (offset > log_end || offset <= log_start) delete_snapshot(log, offset);
  }

  const std::int64_t now_ms = log.clock().wall_ms();
  std::int64_t from = log_start;
  while (!snapshots_.empty()) {
    const std::int64_t offset = snapshots_.back();
    const auto path = [&] { return log.dir() / snapshot_file_name(offset); };  // built when used
    // The log dir's clean-shutdown summary may carry the file's bytes.
    std::optional<std::vector<std::byte>> carried = log.take_carried_snapshot(offset);
    storage::IoResult<std::string> text = std::string();
    if (!carried) text = storage::read_file(fs, path(), kMaxSnapshotBytes);
    if (!text) {
      lg->error("event=producer_snapshot_unreadable {} {}", log::kv("file", path().string()),
                log::kv("error", storage::to_string(text.error())));
      return unexpected(storage::Errc::kStorageError);
    }
    auto decoded = decode_snapshot(carried ? ByteSpan(*carried) : as_bytes(*text));
    if (!decoded) {
      lg->warn("event=producer_snapshot_corrupt {} {} action=deleted", log::kv("file", path().string()),
               log::kv("error", to_string(decoded.error())));
      delete_snapshot(log, offset);
      continue;
    }
    for (auto& [id, entry] : *decoded) {
      if (!ProducerStateTable::expired(entry, now_ms, expiration_ms_)) table_.restore(id, std::move(entry));
    }
    from = offset;
    break;
  }

  // Replay the batches after the snapshot (or of the whole log).
  auto scanned = log.scan_batches(from, [&](const storage::BatchHeader& h, ByteSpan control_batch) {
    if (h.producer_id < 0) return;
    LoggedBatch b;
    b.producer_id = h.producer_id;
    b.epoch = h.producer_epoch;
    b.first_offset = h.base_offset;
    b.last_offset = h.last_offset();
    b.max_timestamp_ms = h.max_timestamp;
    b.transactional = h.is_transactional();
    b.control = h.is_control();
    if (b.control) {
      // An empty control batch: the cleaner removed its transaction entirely (Kafka skips it).
      if (h.records_count == 0) return;
      auto epoch = marker_coordinator_epoch(control_batch);
      if (!epoch) return;  // not a transaction marker
      b.coordinator_epoch = *epoch;
    } else {
      b.first_seq = h.base_sequence;
      b.last_seq = last_sequence(h.base_sequence, h.last_offset_delta);
    }
    table_.replay(b);
    ++batches_replayed_;
  });
  if (!scanned) {
    lg->error("event=producer_state_rebuild_failed {} {}", log::kv("dir", log.dir().string()),
              log::kv("error", storage::to_string(scanned.error())));
    return unexpected(scanned.error());
  }
  lg->log(from < log_end ? spdlog::level::info : spdlog::level::debug,  // info when batches were replayed
          "event=producer_state_loaded {} {} {} {} {}", log::kv("dir", log.dir().string()),
           log::kv("snapshot_offset", snapshots_.empty() ? -1 : snapshots_.back()), log::kv("scanned_from", from),
           log::kv("log_end_offset", log_end), log::kv("producers", table_.size()));
  if (from < log_end) {
    if (auto ok = write_snapshot(log, log_end); !ok) return ok;
  }
  prune(log);
  return {};
}

Status<storage::Errc> ProducerStateManager::take_snapshot(storage::PartitionLog& log) {
  const std::int64_t offset = log.log_end_offset();
  // At or below the log start a snapshot describes nothing and the next load deletes it. An
  // empty log (Kafka takes none for one either) would otherwise leave one at every shutdown.
  Status<storage::Errc> ok;
  if (offset > log.log_start_offset() && !std::binary_search(snapshots_.begin(), snapshots_.end(), offset)) {
    ok = write_snapshot(log, offset);
    prune(log);
  }
  // For the log dir's summary: the next start then reads no snapshot file.
  storage::CarriedProducerState carried{snapshots_, -1, {}};
  if (std::binary_search(snapshots_.begin(), snapshots_.end(), offset)) {
    carried.carried_offset = offset;
    carried.carried_bytes = encode_snapshot(table_);
  }
  log.carry_producer_state(std::move(carried));
  return ok;
}

void ProducerStateManager::on_roll(storage::PartitionLog& log, std::int64_t base_offset) {
  (void)write_snapshot(log, base_offset);  // logged; the roll itself succeeded
  prune(log);
}

void ProducerStateManager::on_segments_deleted(storage::PartitionLog& log) { prune(log); }

void ProducerStateManager::on_truncated(storage::PartitionLog& log) {
  (void)load(log);  // logged
}

Status<storage::Errc> ProducerStateManager::write_snapshot(storage::PartitionLog& log, std::int64_t offset) {
  const auto path = log.dir() / snapshot_file_name(offset);
  const std::vector<std::byte> bytes = encode_snapshot(table_);
  const std::string_view content(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  if (auto ok = storage::write_file_atomically(log.file_system(), path, content); !ok) {
    log::get("txn")->error("event=producer_snapshot_write_failed {} {}", log::kv("file", path.string()),
                           log::kv("error", storage::to_string(ok.error())));
    return unexpected(storage::Errc::kStorageError);
  }
  auto at = std::lower_bound(snapshots_.begin(), snapshots_.end(), offset);
  if (at == snapshots_.end() || *at != offset) snapshots_.insert(at, offset);
  log::get("txn")->debug("event=producer_snapshot_written {} {}", log::kv("file", path.string()),
                         log::kv("producers", table_.size()));
  return {};
}

void ProducerStateManager::delete_snapshot(storage::PartitionLog& log, std::int64_t offset) {
  const auto path = log.dir() / snapshot_file_name(offset);
  auto removed = log.file_system().remove(path);
  if (!removed && !removed.error().not_found()) {
    log::get("txn")->warn("event=producer_snapshot_delete_failed {} {}", log::kv("file", path.string()),
                          log::kv("error", storage::to_string(removed.error())));
  }
  std::erase(snapshots_, offset);
}

void ProducerStateManager::prune(storage::PartitionLog& log) {
  const std::int64_t log_start = log.log_start_offset();
  while (!snapshots_.empty() && (snapshots_.front() < log_start || snapshots_.size() > kMaxSnapshots)) {
    delete_snapshot(log, snapshots_.front());
  }
}

}  // namespace weir::storage
