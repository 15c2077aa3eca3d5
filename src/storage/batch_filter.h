// filter_batch(): rewrites one stored batch keeping the records a filter retains, as Kafka's
// MemoryRecords.filterTo does for the log cleaner. Per batch:
//
//  - kDelete: the batch disappears without its records being looked at.
//  - Otherwise every record is offered to `retain`. If all are kept and no delete horizon has to
//    be set, the original bytes are copied unchanged (whatever their codec).
//  - If only some are kept, or the batch gains a delete horizon, the batch is rebuilt: the same
//    baseOffset and lastOffsetDelta (so the producer's last sequence survives), producerId,
//    producerEpoch, baseSequence, partitionLeaderEpoch, timestamp type, transactional and control
//    flags; kept records keep their offsets, keys, values and headers, and the records section is
//    compressed again with the batch's codec (at the codec's default level, as Kafka does).
//    baseTimestamp is the delete horizon when there is one (attribute bit 6), else the first
//    kept record's timestamp; maxTimestamp is the largest kept timestamp (LogAppendTime batches
//    keep theirs).
//  - If no record is kept the batch disappears, unless kRetainEmpty: then its header alone stays
//    (no records, codec none, baseTimestamp -1, the rest as it was), which keeps a producer's last
//    sequence and epoch in the log.
//  - A kept batch holding a tombstone (a record with a null value), or the marker of a transaction
//    whose records are all gone, gets the delete horizon now + delete.retention.ms the first time
//    it is rewritten (KIP-534). Once the horizon has passed the cleaner drops such records.
//
// Pure: no I/O. Memory: the batch's decompressed records plus its rebuilt copy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "base/result.h"
#include "protocol/record/record.h"
#include "protocol/record/record_batch.h"
#include "storage/errc.h"
#include "storage/records_summary.h"

namespace weir::storage {

// Largest records section the cleaner decompresses for one batch (a larger one is an error that
// stops cleaning the partition, as a corrupt batch does in Kafka): whatever produce may have
// accepted (records_summary.h). for_each_stored_record() streams (one record in memory at a
// time); filter_batch() holds the batch's records, as Kafka's cleaner does.
inline constexpr std::size_t kMaxDecompressedBatchBytes = kMaxDecompressedBatchBytesLimit;

// Kafka's RecordFilter.BatchRetention.
enum class BatchRetention : std::uint8_t {
  kDelete,       // drop the batch without reading its records
  kRetainEmpty,  // keep at least the header, even if no record is kept
  kDeleteEmpty,  // drop the batch if no record is kept
};

struct BatchDecision {
  BatchRetention retention = BatchRetention::kDeleteEmpty;
  // A commit or abort marker whose transaction has no records left: it gets a delete horizon.
  bool marker_of_empty_transaction = false;
};

struct FilterContext {
  std::int64_t now_ms = 0;               // the clean's time, against delete horizons
  std::int64_t delete_retention_ms = 0;  // delete.retention.ms
  std::size_t max_decompressed_bytes = kMaxDecompressedBatchBytes;
};

struct BatchFilterResult {
  enum class Output : std::uint8_t {
    kNone,         // the batch disappeared
    kOriginal,     // copied unchanged
    kRewritten,    // rebuilt with the kept records
    kEmptyHeader,  // only the header kept
  };
  Output output = Output::kNone;
  std::int32_t records_read = 0;
  std::int32_t records_retained = 0;
  std::int32_t tombstones_retained = 0;
};

// Decides per record; the batch is there for offsets and timestamps.
using RecordPredicate = std::function<bool(const record::RecordBatchView& batch, const record::RecordView& r)>;

// Appends what remains of `batch` (validated, stored) to `out`. kCorruptMessage if its records do
// not decompress or parse (or are larger than max_decompressed_bytes); kInvalidRecord if they
// cannot be compressed again.
[[nodiscard]] Result<BatchFilterResult, Errc> filter_batch(const record::RecordBatchView& batch, BatchDecision decision,
                                                           const RecordPredicate& retain, const FilterContext& context,
                                                           std::vector<std::byte>& out);

// Calls fn(const RecordView&) for every record of a stored batch, decompressing it if needed
// (streaming: the views are valid during the call only).
[[nodiscard]] Status<Errc> for_each_stored_record(const record::RecordBatchView& batch,
                                                  std::size_t max_decompressed_bytes,
                                                  const std::function<void(const record::RecordView&)>& fn);

}  // namespace weir::storage
