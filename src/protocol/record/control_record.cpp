#include "protocol/record/control_record.h"

#include "base/assert.h"
#include "protocol/record/record_batch_builder.h"

namespace weir::record {

std::array<std::byte, kControlKeySize> encode_control_key(ControlRecordType type) noexcept {
  std::array<std::byte, kControlKeySize> out;
  store_be<std::int16_t>(out.data(), kControlKeyVersion);
  store_be<std::int16_t>(out.data() + 2, static_cast<std::int16_t>(type));
  return out;
}

Result<ControlRecordKey, Errc> parse_control_key(ByteSpan key) noexcept {
  if (key.size() < kControlKeySize) return unexpected(Errc::invalid_control_record);
  ControlRecordKey out;
  out.version = load_be<std::int16_t>(key.data());
  if (out.version < 0) return unexpected(Errc::invalid_control_record);
  out.type = load_be<std::int16_t>(key.data() + 2);
  return out;
}

std::array<std::byte, kEndTxnMarkerValueSize> encode_end_txn_marker(
    std::int32_t coordinator_epoch) noexcept {
  std::array<std::byte, kEndTxnMarkerValueSize> out;
  store_be<std::int16_t>(out.data(), kEndTxnMarkerVersion);
  store_be<std::int32_t>(out.data() + 2, coordinator_epoch);
  return out;
}

Result<EndTxnMarker, Errc> parse_end_txn_marker(ByteSpan value) noexcept {
  if (value.size() < kEndTxnMarkerValueSize) return unexpected(Errc::invalid_control_record);
  EndTxnMarker out;
  out.version = load_be<std::int16_t>(value.data());
  if (out.version < 0) return unexpected(Errc::invalid_control_record);
  out.coordinator_epoch = load_be<std::int32_t>(value.data() + 2);
  return out;
}

std::vector<std::byte> build_end_txn_marker_batch(const EndTxnMarkerBatch& marker) {
  WEIR_ASSERT(marker.producer_id >= 0, "marker without producer id");
  RecordBatchBuilder builder({
      .base_offset = marker.base_offset,
      .partition_leader_epoch = marker.partition_leader_epoch,
      .producer_id = marker.producer_id,
      .producer_epoch = marker.producer_epoch,
      .base_sequence = kNoSequence,
      .transactional = true,
      .control = true,
      .timestamp_type = marker.log_append_time ? TimestampType::log_append_time : TimestampType::create_time,
      .log_append_time_ms = marker.log_append_time ? std::optional<std::int64_t>(marker.timestamp_ms) : std::nullopt,
  });
  const auto key =
      encode_control_key(marker.commit ? ControlRecordType::commit : ControlRecordType::abort);
  const auto value = encode_end_txn_marker(marker.coordinator_epoch);
  builder.append(marker.timestamp_ms, ByteSpan(key), ByteSpan(value));
  return builder.build();
}

}  // namespace weir::record
