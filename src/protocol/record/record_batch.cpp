#include "protocol/record/record_batch.h"

#include <limits>

#include "base/assert.h"
#include "base/crc32c.h"
#include "protocol/record/record.h"

namespace weir::record {

namespace {

// Checks that bytes hold exactly one batch, by its batchLength field.
Status<Errc> check_framing(ByteSpan bytes) noexcept {
  auto size = peek_batch_size(bytes);
  if (!size) return unexpected(size.error());
  if (bytes.size() < *size) return unexpected(Errc::truncated);
  if (bytes.size() > *size) return unexpected(Errc::length_mismatch);
  return {};
}

// Kafka's produce-time rules for batches that come from clients.
Status<Errc> validate_client_rules(const RecordBatchView& b) noexcept {
  const std::int32_t count = b.records_count();
  if (count <= 0 || static_cast<std::int64_t>(count) != std::int64_t{b.last_offset_delta()} + 1) {
    return unexpected(Errc::invalid_record_count);
  }
  if (b.is_control()) return unexpected(Errc::control_from_client);
  if (b.has_producer_id() && b.base_sequence() < 0) return unexpected(Errc::invalid_sequence);
  return {};
}

}  // namespace

Result<std::size_t, Errc> peek_batch_size(ByteSpan prefix) noexcept {
  if (prefix.size() < kLogOverhead) return unexpected(Errc::truncated);
  const auto batch_length = load_be<std::int32_t>(prefix.data() + kBatchLengthOffset);
  if (batch_length < kMinBatchLength) return unexpected(Errc::length_mismatch);
  return kLogOverhead + static_cast<std::size_t>(batch_length);
}

std::int32_t increment_sequence(std::int32_t sequence, std::int32_t delta) noexcept {
  WEIR_ASSERT(sequence >= 0 && delta >= 0, "sequence {} delta {}", sequence, delta);
  constexpr std::int32_t kMax = std::numeric_limits<std::int32_t>::max();
  if (sequence > kMax - delta) return delta - (kMax - sequence) - 1;
  return sequence + delta;
}

Result<RecordBatchView, Errc> RecordBatchView::from(ByteSpan bytes) noexcept {
  if (auto framed = check_framing(bytes); !framed) return unexpected(framed.error());
  return RecordBatchView(bytes);
}

Status<Errc> RecordBatchView::validate(BatchOrigin origin) const noexcept {
  if (magic() != kMagicV2) return unexpected(Errc::bad_magic);
  // Kafka rejects a client batch with a non-zero baseOffset before looking at its CRC.
  if (origin == BatchOrigin::client && base_offset() != 0) {
    return unexpected(Errc::invalid_base_offset);
  }
  if (crc() != compute_crc()) return unexpected(Errc::crc_mismatch);
  if (compression_id() > kMaxCompressionId) return unexpected(Errc::invalid_compression);
  if (last_offset_delta() < 0) return unexpected(Errc::invalid_offset_range);

  // Compaction may remove records but keeps lastOffsetDelta, so a stored batch can hold fewer
  // records than its offset range (even none); never more.
  const std::int64_t count = records_count();
  if (count < 0 || count > std::int64_t{last_offset_delta()} + 1) {
    return unexpected(Errc::invalid_record_count);
  }
  if (!is_compressed() &&
      static_cast<std::uint64_t>(count) > records_bytes().size() / kMinRecordSize) {
    return unexpected(Errc::invalid_record_count);
  }
  if (origin == BatchOrigin::client) return validate_client_rules(*this);
  return {};
}

std::int32_t RecordBatchView::last_sequence() const noexcept {
  const std::int32_t base = base_sequence();
  if (base < 0) return kNoSequence;
  const std::int32_t delta = last_offset_delta();
  if (delta < 0) return kNoSequence;  // only in batches that fail validate()
  return increment_sequence(base, delta);
}

std::int64_t RecordBatchView::record_offset(const RecordView& r) const noexcept {
  return base_offset() + r.offset_delta;
}

std::int64_t RecordBatchView::record_timestamp(const RecordView& r) const noexcept {
  if (timestamp_type() == TimestampType::log_append_time) return max_timestamp();
  return base_timestamp() + r.timestamp_delta;
}

std::uint32_t RecordBatchView::compute_crc() const noexcept {
  return crc32c(bytes_.subspan(kAttributesOffset));
}

Result<MutableRecordBatchView, Errc> MutableRecordBatchView::from(MutableByteSpan bytes) noexcept {
  if (auto framed = check_framing(bytes); !framed) return unexpected(framed.error());
  return MutableRecordBatchView(bytes);
}

void MutableRecordBatchView::set_base_offset(std::int64_t base_offset) noexcept {
  WEIR_ASSERT(base_offset >= 0, "negative base offset {}", base_offset);
  store_be(mutable_bytes_.data() + kBaseOffsetOffset, base_offset);
}

void MutableRecordBatchView::set_partition_leader_epoch(std::int32_t epoch) noexcept {
  store_be(mutable_bytes_.data() + kPartitionLeaderEpochOffset, epoch);
}

void MutableRecordBatchView::set_max_timestamp(TimestampType type,
                                               std::int64_t max_timestamp) noexcept {
  if (timestamp_type() == type && this->max_timestamp() == max_timestamp) return;
  std::int16_t attrs = attributes();
  if (type == TimestampType::log_append_time) {
    attrs = static_cast<std::int16_t>(attrs | kTimestampTypeBit);
  } else {
    attrs = static_cast<std::int16_t>(attrs & ~kTimestampTypeBit);
  }
  store_be(mutable_bytes_.data() + kAttributesOffset, attrs);
  store_be(mutable_bytes_.data() + kMaxTimestampOffset, max_timestamp);
  update_crc();
}

void MutableRecordBatchView::update_crc() noexcept {
  store_be(mutable_bytes_.data() + kCrcOffset, compute_crc());
}

}  // namespace weir::record
