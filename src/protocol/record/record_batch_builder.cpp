#include "protocol/record/record_batch_builder.h"

#include <limits>

#include "base/assert.h"
#include "base/crc32c.h"
#include "base/varint.h"

namespace weir::record {

namespace {

constexpr std::size_t kMaxLength = std::numeric_limits<std::int32_t>::max();

std::int32_t checked_length(std::size_t n) {
  WEIR_ASSERT(n <= kMaxLength, "length {} does not fit a record", n);
  return static_cast<std::int32_t>(n);
}

std::size_t nullable_bytes_size(const std::optional<ByteSpan>& b) {
  if (!b) return varint_size(-1);
  return varint_size(checked_length(b->size())) + b->size();
}

void append_nullable_bytes(ByteBuffer& out, const std::optional<ByteSpan>& b) {
  if (!b) {
    append_varint(out, -1);
    return;
  }
  append_varint(out, checked_length(b->size()));
  out.append(*b);
}

std::int16_t make_attributes(const BatchOptions& o) {
  std::int16_t attrs = 0;  // compression none
  if (o.timestamp_type == TimestampType::log_append_time) attrs |= kTimestampTypeBit;
  if (o.transactional) attrs |= kTransactionalBit;
  if (o.control) attrs |= kControlBit;
  return attrs;
}

}  // namespace

RecordBatchBuilder::RecordBatchBuilder(BatchOptions options) : options_(options) {
  WEIR_ASSERT(options_.timestamp_type == TimestampType::create_time ||
                  options_.log_append_time_ms.has_value(),
              "a LogAppendTime batch needs log_append_time_ms");
  buffer_.append_zeros(kHeaderSize);
}

void RecordBatchBuilder::append(std::int64_t timestamp_ms, std::optional<ByteSpan> key,
                                std::optional<ByteSpan> value, std::span<const Header> headers) {
  WEIR_ASSERT(last_offset_delta_ < std::numeric_limits<std::int32_t>::max());
  append_with_offset_delta(last_offset_delta_ + 1, timestamp_ms, key, value, headers);
}

void RecordBatchBuilder::append_with_offset_delta(std::int32_t offset_delta,
                                                  std::int64_t timestamp_ms,
                                                  std::optional<ByteSpan> key,
                                                  std::optional<ByteSpan> value,
                                                  std::span<const Header> headers) {
  WEIR_ASSERT(!built_, "append after build()");
  WEIR_ASSERT(offset_delta > last_offset_delta_, "offset delta {} after {}", offset_delta,
              last_offset_delta_);
  if (count_ == 0) {
    base_timestamp_ = timestamp_ms;
    max_timestamp_ = timestamp_ms;
  }
  if (timestamp_ms > max_timestamp_) max_timestamp_ = timestamp_ms;
  const std::int64_t timestamp_delta = timestamp_ms - base_timestamp_;

  std::size_t body_size = 1 + varlong_size(timestamp_delta) + varint_size(offset_delta) +
                          nullable_bytes_size(key) + nullable_bytes_size(value) +
                          varint_size(checked_length(headers.size()));
  for (const Header& h : headers) {
    body_size +=
        varint_size(checked_length(h.key.size())) + h.key.size() + nullable_bytes_size(h.value);
  }

  append_varint(buffer_, checked_length(body_size));
  buffer_.append_be<std::int8_t>(0);  // record attributes: unused
  append_varlong(buffer_, timestamp_delta);
  append_varint(buffer_, offset_delta);
  append_nullable_bytes(buffer_, key);
  append_nullable_bytes(buffer_, value);
  append_varint(buffer_, static_cast<std::int32_t>(headers.size()));
  for (const Header& h : headers) {
    append_varint(buffer_, static_cast<std::int32_t>(h.key.size()));
    buffer_.append(h.key);
    append_nullable_bytes(buffer_, h.value);
  }
  checked_length(buffer_.size() - kLogOverhead);
  last_offset_delta_ = offset_delta;
  ++count_;
}

std::vector<std::byte> RecordBatchBuilder::build() {
  WEIR_ASSERT(!built_, "build() called twice");
  WEIR_ASSERT(count_ > 0, "a batch needs at least one record");
  built_ = true;

  const std::int64_t max_timestamp = options_.timestamp_type == TimestampType::log_append_time
                                         ? *options_.log_append_time_ms
                                         : max_timestamp_;
  buffer_.patch_be<std::int64_t>(kBaseOffsetOffset, options_.base_offset);
  buffer_.patch_be<std::int32_t>(kBatchLengthOffset, checked_length(buffer_.size() - kLogOverhead));
  buffer_.patch_be<std::int32_t>(kPartitionLeaderEpochOffset, options_.partition_leader_epoch);
  buffer_.patch_be<std::int8_t>(kMagicOffset, kMagicV2);
  buffer_.patch_be<std::int16_t>(kAttributesOffset, make_attributes(options_));
  buffer_.patch_be<std::int32_t>(kLastOffsetDeltaOffset, last_offset_delta_);
  buffer_.patch_be<std::int64_t>(kBaseTimestampOffset, base_timestamp_);
  buffer_.patch_be<std::int64_t>(kMaxTimestampOffset, max_timestamp);
  buffer_.patch_be<std::int64_t>(kProducerIdOffset, options_.producer_id);
  buffer_.patch_be<std::int16_t>(kProducerEpochOffset, options_.producer_epoch);
  buffer_.patch_be<std::int32_t>(kBaseSequenceOffset, options_.base_sequence);
  buffer_.patch_be<std::int32_t>(kRecordsCountOffset, count_);
  buffer_.patch_be<std::uint32_t>(kCrcOffset, crc32c(buffer_.span().subspan(kAttributesOffset)));
  return buffer_.release();
}

}  // namespace weir::record
