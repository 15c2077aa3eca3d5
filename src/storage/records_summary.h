// RecordsSummary: what the produce-time checks of PartitionLog::append_as_leader need from the
// records of one compressed batch, read by streaming decompression (protocol/record/record_stream.h)
// with the broker's limits. It depends on nothing but the batch's bytes and the limits (not on
// topic configs or the time), so it may be computed ahead of the append on any thread -- the
// broker does that on its decompression workers -- and handed to append_as_leader, which then
// applies the topic's rules (timestamps, keys on compacted topics) to it exactly as it would to
// the records themselves.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "base/bytes.h"
#include "protocol/record/record_batch.h"
#include "protocol/record/record_stream.h"
#include "storage/errc.h"

namespace weir::storage {

// Defaults of weir.produce.max.decompressed.batch.bytes and weir.produce.max.compression.ratio.
// Kafka has no such limits. No realistic batch reaches them: a batch is at most message.max.bytes
// compressed (1 MiB by default) and real data compresses 2-20 times (zeros, gzip's best case,
// 1032 times; lz4 at most 255, snappy 22).
inline constexpr std::size_t kDefaultMaxDecompressedBatchBytes = 256 * 1024 * 1024;
inline constexpr std::uint32_t kDefaultMaxCompressionRatio = 5000;
// The largest weir.produce.max.decompressed.batch.bytes (a records section's size is an int32),
// and so what the log cleaner must be able to read back.
inline constexpr std::size_t kMaxDecompressedBatchBytesLimit = std::numeric_limits<std::int32_t>::max();

struct RecordsSummary {
  // kCorruptMessage (a stream that does not decompress, a record that does not parse),
  // kDecompressedBatchTooLarge, kCompressionRatioTooHigh, or kInvalidRecord (the codec failed).
  std::optional<Errc> error;
  std::int64_t max_timestamp = record::kNoTimestamp;                          // of every record
  std::int64_t min_timestamp = std::numeric_limits<std::int64_t>::max();      // of records with a timestamp
  std::int64_t max_timestamp_set = std::numeric_limits<std::int64_t>::min();  // of records with a timestamp
  bool any_without_timestamp = false;                                         // a record timestamp of -1
  bool keyless = false;                                                       // a record without a key
  std::uint64_t decompressed_bytes = 0;
};

// Summary of a validated, compressed batch.
[[nodiscard]] RecordsSummary summarize_records(const record::RecordBatchView& batch,
                                               record::DecompressionLimits limits);

// One entry per batch of a producer's record set, in order: a summary for each compressed batch
// that passes RecordBatchView::validate(client), nullopt for the others (append_as_leader checks
// those itself). Shorter than the batches when the framing breaks (the append refuses it anyway).
using RecordsSummaries = std::vector<std::optional<RecordsSummary>>;
[[nodiscard]] RecordsSummaries summarize_producer_batches(ByteSpan batches, record::DecompressionLimits limits);

// True if some batch of the record set is compressed, i.e. validating it means decompressing.
[[nodiscard]] bool has_compressed_batch(ByteSpan batches) noexcept;

// How a streamed batch's failure is reported (see RecordsSummary::error).
[[nodiscard]] Errc from_stream_error(const record::StreamError& e) noexcept;

}  // namespace weir::storage
