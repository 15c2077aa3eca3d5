#include "storage/batch_filter.h"

#include <algorithm>
#include <limits>

#include "base/assert.h"
#include "base/crc32c.h"
#include "base/varint.h"
#include "protocol/record/compression.h"
#include "protocol/record/record_stream.h"

namespace weir::storage {

namespace {

using record::RecordBatchView;
using record::RecordView;

Errc from_compression_error(record::CompressionError e) {
  switch (e) {
    case record::CompressionError::kCorrupt:
    case record::CompressionError::kOutputTooLarge:
    case record::CompressionError::kUnknownCodec:
      return Errc::kCorruptMessage;
    default:
      return Errc::kInvalidRecord;
  }
}

void append_header(std::vector<std::byte>& out, const RecordBatchView& batch, std::int16_t attributes,
                   std::int64_t base_timestamp, std::int64_t max_timestamp, std::int32_t records) {
  const std::size_t at = out.size();
  out.resize(at + record::kHeaderSize);
  std::byte* p = out.data() + at;
  store_be(p + record::kBaseOffsetOffset, batch.base_offset());
  store_be(p + record::kBatchLengthOffset, record::kMinBatchLength);  // patched by finish_batch()
  store_be(p + record::kPartitionLeaderEpochOffset, batch.partition_leader_epoch());
  store_be(p + record::kMagicOffset, record::kMagicV2);
  store_be(p + record::kCrcOffset, std::uint32_t{0});
  store_be(p + record::kAttributesOffset, attributes);
  store_be(p + record::kLastOffsetDeltaOffset, batch.last_offset_delta());
  store_be(p + record::kBaseTimestampOffset, base_timestamp);
  store_be(p + record::kMaxTimestampOffset, max_timestamp);
  store_be(p + record::kProducerIdOffset, batch.producer_id());
  store_be(p + record::kProducerEpochOffset, batch.producer_epoch());
  store_be(p + record::kBaseSequenceOffset, batch.base_sequence());
  store_be(p + record::kRecordsCountOffset, records);
}

// Sets batchLength and the CRC of the batch that starts at `at` and runs to the end of out.
void finish_batch(std::vector<std::byte>& out, std::size_t at) {
  const std::size_t size = out.size() - at;
  WEIR_ASSERT(size >= record::kHeaderSize && size - record::kLogOverhead <= std::numeric_limits<std::int32_t>::max());
  std::byte* p = out.data() + at;
  store_be(p + record::kBatchLengthOffset, static_cast<std::int32_t>(size - record::kLogOverhead));
  store_be(p + record::kCrcOffset, crc32c(ByteSpan(p + record::kAttributesOffset, size - record::kAttributesOffset)));
}

// Kafka's DefaultRecordBatch.writeEmptyHeader: the batch's offsets and producer fields, no records.
void append_empty_header(std::vector<std::byte>& out, const RecordBatchView& batch) {
  const std::size_t at = out.size();
  const auto attributes = static_cast<std::int16_t>(
      batch.attributes() & (record::kTimestampTypeBit | record::kTransactionalBit | record::kControlBit));
  append_header(out, batch, attributes, record::kNoTimestamp, batch.max_timestamp(), 0);
  finish_batch(out, at);
}

// One record again, with a new timestampDelta; everything after the offsetDelta is copied.
Status<Errc> append_record(ByteBuffer& out, const RecordView& r, std::int64_t timestamp_delta) {
  ByteReader in(r.bytes);
  if (!read_varint(in) || !in.skip(1) || !read_varlong(in) || !read_varint(in)) {
    return unexpected(Errc::kCorruptMessage);
  }
  const ByteSpan tail = in.rest();
  const std::size_t body = 1 + varlong_size(timestamp_delta) + varint_size(r.offset_delta) + tail.size();
  WEIR_ASSERT(body <= static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()));
  append_varint(out, static_cast<std::int32_t>(body));
  out.append_be(r.attributes);
  append_varlong(out, timestamp_delta);
  append_varint(out, r.offset_delta);
  out.append(tail);
  return {};
}

// The batch rebuilt with `kept`, compressed with its codec.
Status<Errc> append_rewritten(std::vector<std::byte>& out, const RecordBatchView& batch,
                              const std::vector<RecordView>& kept, std::int64_t delete_horizon_ms) {
  const bool log_append_time = batch.timestamp_type() == record::TimestampType::log_append_time;
  std::int64_t max_timestamp = record::kNoTimestamp;
  for (const RecordView& r : kept) max_timestamp = std::max(max_timestamp, batch.record_timestamp(r));
  if (log_append_time) max_timestamp = batch.max_timestamp();
  const std::int64_t base_timestamp =
      delete_horizon_ms != record::kNoTimestamp ? delete_horizon_ms : batch.record_timestamp(kept.front());
  auto attributes =
      static_cast<std::int16_t>(batch.attributes() & ~(record::kCompressionMask | record::kDeleteHorizonBit));
  if (delete_horizon_ms != record::kNoTimestamp) {
    attributes = static_cast<std::int16_t>(attributes | record::kDeleteHorizonBit);
  }

  std::vector<std::byte> plain;
  append_header(plain, batch, attributes, base_timestamp, max_timestamp, static_cast<std::int32_t>(kept.size()));
  ByteBuffer records;
  for (const RecordView& r : kept) {
    if (auto ok = append_record(records, r, batch.record_timestamp(r) - base_timestamp); !ok) return ok;
  }
  plain.insert(plain.end(), records.span().begin(), records.span().end());
  finish_batch(plain, 0);
  if (!batch.is_compressed()) {
    out.insert(out.end(), plain.begin(), plain.end());
    return {};
  }
  auto view = RecordBatchView::from(plain);
  WEIR_ASSERT(view.has_value());
  auto compressed = record::compress_batch(*view, batch.compression());
  if (!compressed) return unexpected(from_compression_error(compressed.error()));
  out.insert(out.end(), compressed->begin(), compressed->end());
  return {};
}

}  // namespace

Status<Errc> for_each_stored_record(const RecordBatchView& batch, std::size_t max_decompressed_bytes,
                                    const std::function<void(const RecordView&)>& fn) {
  if (!batch.is_compressed()) {
    if (auto ok = record::for_each_record(batch, fn); !ok) return unexpected(Errc::kCorruptMessage);
    return {};
  }
  if (auto ok = record::for_each_streamed_record(batch, {max_decompressed_bytes, 0}, fn); !ok) {
    // Any failure, a limit included, is a batch the cleaner cannot read.
    return unexpected(Errc::kCorruptMessage);
  }
  return {};
}

Result<BatchFilterResult, Errc> filter_batch(const RecordBatchView& batch, BatchDecision decision,
                                             const RecordPredicate& retain, const FilterContext& context,
                                             std::vector<std::byte>& out) {
  BatchFilterResult result;
  if (decision.retention == BatchRetention::kDelete) return result;

  auto section = record::read_records_section(batch, context.max_decompressed_bytes);
  if (!section) return unexpected(from_compression_error(section.error()));
  std::vector<RecordView> kept;
  bool tombstones = false;
  auto walked = record::for_each_record(section->reader(), [&](const RecordView& r) {
    ++result.records_read;
    if (!retain(batch, r)) return;
    kept.push_back(r);
    if (!r.value) {
      tombstones = true;
      ++result.tombstones_retained;
    }
  });
  if (!walked) return unexpected(Errc::kCorruptMessage);
  result.records_retained = static_cast<std::int32_t>(kept.size());

  if (kept.empty()) {
    if (decision.retention == BatchRetention::kRetainEmpty) {
      append_empty_header(out, batch);
      result.output = BatchFilterResult::Output::kEmptyHeader;
    }
    return result;
  }
  const bool needs_horizon = (tombstones || decision.marker_of_empty_transaction) && !batch.has_delete_horizon();
  if (result.records_retained == result.records_read && !needs_horizon) {
    out.insert(out.end(), batch.bytes().begin(), batch.bytes().end());
    result.output = BatchFilterResult::Output::kOriginal;
    return result;
  }
  std::int64_t horizon = batch.delete_horizon_ms().value_or(record::kNoTimestamp);
  if (needs_horizon && __builtin_add_overflow(context.now_ms, context.delete_retention_ms, &horizon)) {
    horizon = std::numeric_limits<std::int64_t>::max();
  }
  if (auto ok = append_rewritten(out, batch, kept, horizon); !ok) return unexpected(ok.error());
  result.output = BatchFilterResult::Output::kRewritten;
  return result;
}

}  // namespace weir::storage
