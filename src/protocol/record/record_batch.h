// Kafka RecordBatch v2 ("magic 2"): the unit clients produce, the log stores and fetch returns.
//
// Byte layout (all integers big-endian):
//
//   offset size field
//        0    8 baseOffset            offset of the first record (0 from clients; set on append)
//        8    4 batchLength           bytes after this field: whole batch = 12 + batchLength
//       12    4 partitionLeaderEpoch  set by the leader on append; not covered by the CRC
//       16    1 magic                 2
//       17    4 crc                   CRC32C (uint32) of bytes [21, end): attributes to the end
//       21    2 attributes            bits 0-2 compression (0 none, 1 gzip, 2 snappy, 3 lz4,
//                                     4 zstd), bit 3 timestampType (1 = LogAppendTime),
//                                     bit 4 isTransactional, bit 5 isControl,
//                                     bit 6 hasDeleteHorizonMs (baseTimestamp holds it)
//       23    4 lastOffsetDelta       offset of the last record minus baseOffset
//       27    8 baseTimestamp         timestamp of the first record (or the delete horizon)
//       35    8 maxTimestamp          largest record timestamp (or the LogAppendTime)
//       43    8 producerId            -1 when not idempotent
//       51    2 producerEpoch         -1 when not idempotent
//       53    4 baseSequence          sequence number of the first record, -1 when none
//       57    4 recordsCount          number of records that follow
//       61      records               compressed as a whole when compression != 0
//
// Each record (see record.h): length varint (bytes after it), attributes int8 (unused),
// timestampDelta varlong, offsetDelta varint, keyLength varint (-1 = null), key,
// valueLength varint (-1 = null), value, headerCount varint, and per header keyLength varint,
// key (UTF-8), valueLength varint (-1 = null), value.
//
// RecordBatchView is a zero-copy, non-owning view. Obtaining one (from()) checks only the
// framing, so that every accessor reads inside the bytes; validate() checks the rest. Neither
// allocates. Views are plain values; the bytes must outlive them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "base/bytes.h"
#include "base/result.h"
#include "protocol/record/errc.h"

namespace weir::record {

// Field offsets and sizes of the batch header.
inline constexpr std::size_t kBaseOffsetOffset = 0;
inline constexpr std::size_t kBatchLengthOffset = kBaseOffsetOffset + 8;
inline constexpr std::size_t kPartitionLeaderEpochOffset = kBatchLengthOffset + 4;
inline constexpr std::size_t kMagicOffset = kPartitionLeaderEpochOffset + 4;
inline constexpr std::size_t kCrcOffset = kMagicOffset + 1;
inline constexpr std::size_t kAttributesOffset = kCrcOffset + 4;
inline constexpr std::size_t kLastOffsetDeltaOffset = kAttributesOffset + 2;
inline constexpr std::size_t kBaseTimestampOffset = kLastOffsetDeltaOffset + 4;
inline constexpr std::size_t kMaxTimestampOffset = kBaseTimestampOffset + 8;
inline constexpr std::size_t kProducerIdOffset = kMaxTimestampOffset + 8;
inline constexpr std::size_t kProducerEpochOffset = kProducerIdOffset + 8;
inline constexpr std::size_t kBaseSequenceOffset = kProducerEpochOffset + 2;
inline constexpr std::size_t kRecordsCountOffset = kBaseSequenceOffset + 4;
inline constexpr std::size_t kRecordsOffset = kRecordsCountOffset + 4;
inline constexpr std::size_t kHeaderSize = kRecordsOffset;
// baseOffset + batchLength: the part of the header outside batchLength (Kafka's LOG_OVERHEAD).
inline constexpr std::size_t kLogOverhead = kBatchLengthOffset + 4;
inline constexpr std::int32_t kMinBatchLength =
    static_cast<std::int32_t>(kHeaderSize - kLogOverhead);
// The smallest possible record: length, attributes, timestampDelta, offsetDelta, keyLength,
// valueLength and headerCount, one byte each.
inline constexpr std::size_t kMinRecordSize = 7;

static_assert(kBatchLengthOffset == 8);
static_assert(kPartitionLeaderEpochOffset == 12);
static_assert(kMagicOffset == 16);
static_assert(kCrcOffset == 17);
static_assert(kAttributesOffset == 21);
static_assert(kLastOffsetDeltaOffset == 23);
static_assert(kBaseTimestampOffset == 27);
static_assert(kMaxTimestampOffset == 35);
static_assert(kProducerIdOffset == 43);
static_assert(kProducerEpochOffset == 51);
static_assert(kBaseSequenceOffset == 53);
static_assert(kRecordsCountOffset == 57);
static_assert(kHeaderSize == 61);
static_assert(kLogOverhead == 12);
static_assert(kMinBatchLength == 49);

inline constexpr std::int8_t kMagicV2 = 2;
inline constexpr std::int64_t kNoTimestamp = -1;
inline constexpr std::int64_t kNoProducerId = -1;
inline constexpr std::int16_t kNoProducerEpoch = -1;
inline constexpr std::int32_t kNoSequence = -1;
inline constexpr std::int32_t kNoPartitionLeaderEpoch = -1;

// Attribute bits.
inline constexpr std::int16_t kCompressionMask = 0x07;
inline constexpr std::int16_t kTimestampTypeBit = 0x08;
inline constexpr std::int16_t kTransactionalBit = 0x10;
inline constexpr std::int16_t kControlBit = 0x20;
inline constexpr std::int16_t kDeleteHorizonBit = 0x40;

enum class Compression : std::uint8_t { none = 0, gzip = 1, snappy = 2, lz4 = 3, zstd = 4 };
inline constexpr std::uint8_t kMaxCompressionId = 4;

enum class TimestampType : std::uint8_t { create_time = 0, log_append_time = 1 };

// Who produced the bytes being validated. Client batches get Kafka's extra produce-time checks.
enum class BatchOrigin : std::uint8_t {
  client,  // a Produce request
  log,     // read back from a segment, replicated, or written by a coordinator
};

// Total size (12 + batchLength) of the batch starting at prefix, from its first 12 bytes.
// truncated if prefix is shorter than 12 bytes; length_mismatch if batchLength < 49.
[[nodiscard]] Result<std::size_t, Errc> peek_batch_size(ByteSpan prefix) noexcept;

// Sequence number after adding delta to sequence, wrapping from INT32_MAX to 0 as Kafka does.
[[nodiscard]] std::int32_t increment_sequence(std::int32_t sequence, std::int32_t delta) noexcept;

struct RecordView;

class RecordBatchView {
 public:
  // A view of exactly one batch: bytes must hold the whole batch and nothing more.
  // truncated if bytes end before the batch does; length_mismatch if batchLength < 49 or bytes
  // continue past the batch. Does not check magic, CRC or counts (see validate()).
  [[nodiscard]] static Result<RecordBatchView, Errc> from(ByteSpan bytes) noexcept;

  // Checks magic, CRC, compression id and the consistency of offsets and counts, plus Kafka's
  // produce-time rules for client batches (baseOffset 0, count == lastOffsetDelta + 1 > 0, no
  // control batches, a sequence when a producer id is set). Records themselves are not parsed:
  // see validate_records() in record.h. Does not allocate.
  [[nodiscard]] Status<Errc> validate(BatchOrigin origin = BatchOrigin::log) const noexcept;

  [[nodiscard]] ByteSpan bytes() const noexcept { return bytes_; }
  [[nodiscard]] std::size_t size_bytes() const noexcept { return bytes_.size(); }

  [[nodiscard]] std::int64_t base_offset() const noexcept {
    return get<std::int64_t>(kBaseOffsetOffset);
  }
  [[nodiscard]] std::int32_t batch_length() const noexcept {
    return get<std::int32_t>(kBatchLengthOffset);
  }
  [[nodiscard]] std::int32_t partition_leader_epoch() const noexcept {
    return get<std::int32_t>(kPartitionLeaderEpochOffset);
  }
  [[nodiscard]] std::int8_t magic() const noexcept { return get<std::int8_t>(kMagicOffset); }
  [[nodiscard]] std::uint32_t crc() const noexcept { return get<std::uint32_t>(kCrcOffset); }
  [[nodiscard]] std::int16_t attributes() const noexcept {
    return get<std::int16_t>(kAttributesOffset);
  }
  [[nodiscard]] std::int32_t last_offset_delta() const noexcept {
    return get<std::int32_t>(kLastOffsetDeltaOffset);
  }
  [[nodiscard]] std::int64_t base_timestamp() const noexcept {
    return get<std::int64_t>(kBaseTimestampOffset);
  }
  [[nodiscard]] std::int64_t max_timestamp() const noexcept {
    return get<std::int64_t>(kMaxTimestampOffset);
  }
  [[nodiscard]] std::int64_t producer_id() const noexcept {
    return get<std::int64_t>(kProducerIdOffset);
  }
  [[nodiscard]] std::int16_t producer_epoch() const noexcept {
    return get<std::int16_t>(kProducerEpochOffset);
  }
  [[nodiscard]] std::int32_t base_sequence() const noexcept {
    return get<std::int32_t>(kBaseSequenceOffset);
  }
  [[nodiscard]] std::int32_t records_count() const noexcept {
    return get<std::int32_t>(kRecordsCountOffset);
  }
  // The records section: raw records when uncompressed, else the compressed stream.
  [[nodiscard]] ByteSpan records_bytes() const noexcept { return bytes_.subspan(kRecordsOffset); }

  // Decoded attributes. compression_id() may be 5..7 in an unvalidated batch.
  [[nodiscard]] std::uint8_t compression_id() const noexcept {
    return static_cast<std::uint8_t>(attributes() & kCompressionMask);
  }
  // Only meaningful once validate() has succeeded (compression_id() <= 4).
  [[nodiscard]] Compression compression() const noexcept {
    return static_cast<Compression>(compression_id());
  }
  [[nodiscard]] bool is_compressed() const noexcept { return compression_id() != 0; }
  [[nodiscard]] TimestampType timestamp_type() const noexcept {
    return (attributes() & kTimestampTypeBit) ? TimestampType::log_append_time
                                              : TimestampType::create_time;
  }
  [[nodiscard]] bool is_transactional() const noexcept { return attributes() & kTransactionalBit; }
  [[nodiscard]] bool is_control() const noexcept { return attributes() & kControlBit; }
  [[nodiscard]] bool has_delete_horizon() const noexcept {
    return attributes() & kDeleteHorizonBit;
  }
  [[nodiscard]] std::optional<std::int64_t> delete_horizon_ms() const noexcept {
    if (!has_delete_horizon()) return std::nullopt;
    return base_timestamp();
  }

  // Offsets and sequences derived from the header.
  [[nodiscard]] std::int64_t last_offset() const noexcept {
    return base_offset() + last_offset_delta();
  }
  [[nodiscard]] std::int64_t next_offset() const noexcept { return last_offset() + 1; }
  [[nodiscard]] bool has_producer_id() const noexcept { return producer_id() > kNoProducerId; }
  // Sequence of the last record, or -1 when the batch has no sequence.
  [[nodiscard]] std::int32_t last_sequence() const noexcept;

  // Absolute offset and timestamp of a record of this batch (LogAppendTime batches give every
  // record the batch's maxTimestamp).
  [[nodiscard]] std::int64_t record_offset(const RecordView& r) const noexcept;
  [[nodiscard]] std::int64_t record_timestamp(const RecordView& r) const noexcept;

  // CRC32C of attributes..end, i.e. what crc() should be.
  [[nodiscard]] std::uint32_t compute_crc() const noexcept;

 protected:
  explicit RecordBatchView(ByteSpan bytes) noexcept : bytes_(bytes) {}

  template <WireInt T>
  [[nodiscard]] T get(std::size_t offset) const noexcept {
    return load_be<T>(bytes_.data() + offset);
  }

 private:
  ByteSpan bytes_;
};

// A batch view that can also rewrite header fields in place, as the leader does on append.
// Setters keep the CRC right: baseOffset and partitionLeaderEpoch lie outside the CRC's range;
// set_max_timestamp() recomputes it.
class MutableRecordBatchView : public RecordBatchView {
 public:
  // Same framing checks as RecordBatchView::from().
  [[nodiscard]] static Result<MutableRecordBatchView, Errc> from(MutableByteSpan bytes) noexcept;

  [[nodiscard]] MutableByteSpan mutable_bytes() const noexcept { return mutable_bytes_; }

  void set_base_offset(std::int64_t base_offset) noexcept;
  void set_partition_leader_epoch(std::int32_t epoch) noexcept;
  // Sets the timestamp type bit and maxTimestamp, then the CRC; a no-op if both already match.
  // For LogAppendTime topics: set_max_timestamp(TimestampType::log_append_time, now_ms).
  void set_max_timestamp(TimestampType type, std::int64_t max_timestamp) noexcept;
  // Recomputes and stores the CRC.
  void update_crc() noexcept;

 private:
  explicit MutableRecordBatchView(MutableByteSpan bytes) noexcept
      : RecordBatchView(bytes), mutable_bytes_(bytes) {}

  MutableByteSpan mutable_bytes_;
};

}  // namespace weir::record
