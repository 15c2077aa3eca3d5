// ProducerStateManager: one partition's producer state (ProducerStateTable) kept across restarts,
// as Apache Kafka's ProducerStateManager and LogLoader keep it.
//
//   load()       when the log is opened (and after a truncation): snapshots above the log end
//                offset or at/below the log start are deleted (they describe data that is gone),
//                the newest remaining valid snapshot is loaded (a corrupt one is deleted and the
//                next older tried; producers already expired are skipped), then the headers of
//                every batch from the snapshot's offset (or the log start) to the log end are
//                replayed: data batches as appends, control batches as transaction markers. If
//                batches were replayed, a snapshot is written at the log end, so the next start
//                after a crash need not read them again.
//   on_roll      (a LogListener event) a snapshot at the new segment's base offset.
//   take_snapshot()  at clean shutdown: a snapshot at the log end offset, its bytes and the
//                snapshot files handed to the log for the log dir's summary (log_summary.h), so
//                that the next start reads no file (load() takes the bytes back from the log).
//   expire()     drops producers idle for producer.id.expiration.ms (the broker calls it every
//                producer.id.expiration.check.interval.ms on the partition's owner shard).
//
// At most kMaxSnapshots snapshots are kept (the newest); snapshots below the log start go when
// their segments are deleted. Snapshot files are written atomically (`.tmp`, fsync, rename,
// directory fsync) in Kafka's format (producer_snapshot.h); a half-written `.tmp` is removed by
// the log's own load.
//
// Threading: the partition's owner thread, like the log. Hold it in a shared_ptr and give the
// log a weak_ptr (PartitionLog::set_listener), so either may go first.
#pragma once

#include <cstdint>
#include <vector>

#include "base/result.h"
#include "storage/errc.h"
#include "storage/partition_log.h"
#include "storage/producer_state.h"

namespace weir::storage {

class ProducerStateManager final : public storage::LogListener {
 public:
  static constexpr std::size_t kMaxSnapshots = 2;
  static constexpr std::int64_t kDefaultExpirationMs = 86400000;         // producer.id.expiration.ms
  static constexpr std::int64_t kDefaultExpirationCheckMs = 600000;      // producer.id.expiration.check.interval.ms

  explicit ProducerStateManager(std::int64_t expiration_ms = kDefaultExpirationMs) : expiration_ms_(expiration_ms) {}

  [[nodiscard]] ProducerStateTable& table() { return table_; }
  [[nodiscard]] const ProducerStateTable& table() const { return table_; }
  void set_expiration_ms(std::int64_t ms) { expiration_ms_ = ms; }
  [[nodiscard]] std::int64_t expiration_ms() const { return expiration_ms_; }

  // Rebuilds the table from the log's directory and batches (see above). On an error the table
  // holds what could be rebuilt and the error is returned (the caller logs it).
  [[nodiscard]] Status<storage::Errc> load(storage::PartitionLog& log);
  // A snapshot at the log end offset, unless there is one at that offset already; then the
  // producer state is handed to the log (PartitionLog::carry_producer_state). Clean shutdown only.
  [[nodiscard]] Status<storage::Errc> take_snapshot(storage::PartitionLog& log);
  // Drops producers idle for the expiration time at now_ms (wall clock); returns how many.
  std::size_t expire(std::int64_t now_ms) { return table_.expire(now_ms, expiration_ms_); }

  // The offsets of the snapshot files on disk, ascending.
  [[nodiscard]] const std::vector<std::int64_t>& snapshot_offsets() const { return snapshots_; }
  // How many batches the last load() replayed from the log.
  [[nodiscard]] std::int64_t batches_replayed() const { return batches_replayed_; }

  void on_roll(storage::PartitionLog& log, std::int64_t base_offset) override;
  void on_segments_deleted(storage::PartitionLog& log) override;
  void on_truncated(storage::PartitionLog& log) override;

 private:
  [[nodiscard]] Status<storage::Errc> write_snapshot(storage::PartitionLog& log, std::int64_t offset);
  void delete_snapshot(storage::PartitionLog& log, std::int64_t offset);
  // Deletes the snapshots below the log start, then the oldest beyond kMaxSnapshots.
  void prune(storage::PartitionLog& log);

  std::int64_t expiration_ms_;
  ProducerStateTable table_;
  std::vector<std::int64_t> snapshots_;
  std::int64_t batches_replayed_ = 0;
};

}  // namespace weir::storage
