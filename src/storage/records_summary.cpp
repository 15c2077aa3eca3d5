#include "storage/records_summary.h"

#include <algorithm>
#include <variant>

#include "protocol/record/batch_splitter.h"

namespace weir::storage {

Errc from_stream_error(const record::StreamError& e) noexcept {
  if (std::holds_alternative<record::Errc>(e)) return Errc::kCorruptMessage;
  switch (std::get<record::CompressionError>(e)) {
    case record::CompressionError::kCorrupt:
    case record::CompressionError::kUnknownCodec:
      return Errc::kCorruptMessage;
    case record::CompressionError::kOutputTooLarge:
      return Errc::kDecompressedBatchTooLarge;
    case record::CompressionError::kRatioTooHigh:
      return Errc::kCompressionRatioTooHigh;
    case record::CompressionError::kInvalidLevel:
    case record::CompressionError::kCodecFailure:
      break;
  }
  return Errc::kInvalidRecord;
}

RecordsSummary summarize_records(const record::RecordBatchView& batch, record::DecompressionLimits limits) {
  RecordsSummary s;
  auto reader = record::StreamingRecordReader::open(batch, limits);
  if (!reader) {
    s.error = from_stream_error(reader.error());
    return s;
  }
  for (;;) {
    auto next = reader->next();
    if (!next) {
      s.error = from_stream_error(next.error());
      break;
    }
    if (!*next) break;
    const record::RecordView& r = **next;
    const std::int64_t ts = batch.record_timestamp(r);
    s.max_timestamp = std::max(s.max_timestamp, ts);
    if (ts == record::kNoTimestamp) {
      s.any_without_timestamp = true;
    } else {
      s.min_timestamp = std::min(s.min_timestamp, ts);
      s.max_timestamp_set = std::max(s.max_timestamp_set, ts);
    }
    s.keyless = s.keyless || !r.key;
  }
  s.decompressed_bytes = reader->decompressed_bytes();
  return s;
}

RecordsSummaries summarize_producer_batches(ByteSpan batches, record::DecompressionLimits limits) {
  RecordsSummaries out;
  record::BatchSplitter splitter(batches);
  for (;;) {
    auto next = splitter.next();
    if (!next || !*next) break;
    const record::RecordBatchView& batch = **next;
    if (!batch.is_compressed() || !batch.validate(record::BatchOrigin::client)) {
      out.emplace_back(std::nullopt);
      continue;
    }
    out.emplace_back(summarize_records(batch, limits));
  }
  return out;
}

bool has_compressed_batch(ByteSpan batches) noexcept {
  record::BatchSplitter splitter(batches);
  for (;;) {
    auto next = splitter.next();
    if (!next || !*next) return false;
    if ((**next).is_compressed()) return true;
  }
}

}  // namespace weir::storage
