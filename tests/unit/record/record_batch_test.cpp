#include "protocol/record/record_batch.h"

#include <gtest/gtest.h>

#include "protocol/record/record.h"
#include "protocol/record/record_batch_builder.h"
#include "test_util.h"

namespace weir::record {
namespace {

std::vector<std::byte> three_record_batch(BatchOptions options = {}) {
  RecordBatchBuilder builder(options);
  builder.append(1000, as_bytes("a"), as_bytes("one"));
  builder.append(1003, as_bytes("b"), as_bytes("two"));
  builder.append(1001, std::nullopt, as_bytes("three"));
  return builder.build();
}

// Overwrites a header field and restores a valid CRC, so the field itself is what is tested.
template <WireInt T>
void rewrite(std::vector<std::byte>& bytes, std::size_t offset, T value) {
  store_be<T>(bytes.data() + offset, value);
  auto batch = MutableRecordBatchView::from(bytes);
  ASSERT_TRUE(batch.has_value());
  batch->update_crc();
}

Errc validation_error(const std::vector<std::byte>& bytes, BatchOrigin origin = BatchOrigin::log) {
  auto batch = RecordBatchView::from(bytes);
  EXPECT_TRUE(batch.has_value());
  auto status = batch->validate(origin);
  EXPECT_FALSE(status.has_value());
  return status.has_value() ? Errc::compressed : status.error();
}

TEST(RecordBatchTest, BuiltBatchIsValidForClientsAndLog) {
  const auto bytes = three_record_batch();
  auto batch = RecordBatchView::from(bytes);
  ASSERT_TRUE(batch.has_value());
  EXPECT_TRUE(batch->validate(BatchOrigin::client).has_value());
  EXPECT_TRUE(batch->validate(BatchOrigin::log).has_value());
  EXPECT_EQ(batch->size_bytes(), bytes.size());
  EXPECT_EQ(static_cast<std::size_t>(batch->batch_length()) + kLogOverhead, bytes.size());
}

TEST(RecordBatchTest, TruncatedBatchIsRejected) {
  const auto bytes = three_record_batch();
  for (std::size_t n : {std::size_t{0}, std::size_t{11}, kHeaderSize - 1, bytes.size() - 1}) {
    auto batch = RecordBatchView::from(ByteSpan(bytes).first(n));
    ASSERT_FALSE(batch.has_value()) << n;
    EXPECT_EQ(batch.error(), Errc::truncated) << n;
  }
}

TEST(RecordBatchTest, BytesBeyondTheBatchAreALengthMismatch) {
  auto bytes = three_record_batch();
  bytes.push_back(std::byte{0});
  EXPECT_EQ(RecordBatchView::from(bytes).error(), Errc::length_mismatch);
}

TEST(RecordBatchTest, BatchLengthBelowHeaderMinimumIsALengthMismatch) {
  auto bytes = three_record_batch();
  store_be<std::int32_t>(bytes.data() + kBatchLengthOffset, kMinBatchLength - 1);
  EXPECT_EQ(RecordBatchView::from(bytes).error(), Errc::length_mismatch);
  store_be<std::int32_t>(bytes.data() + kBatchLengthOffset, -5);
  EXPECT_EQ(RecordBatchView::from(bytes).error(), Errc::length_mismatch);
}

TEST(RecordBatchTest, WrongMagicIsRejectedBeforeTheCrc) {
  auto bytes = three_record_batch();
  bytes[kMagicOffset] = std::byte{1};
  EXPECT_EQ(validation_error(bytes), Errc::bad_magic);
}

TEST(RecordBatchTest, CrcCoversAttributesToEnd) {
  const auto golden = three_record_batch();
  {
    auto bytes = golden;
    bytes.back() ^= std::byte{0x40};
    EXPECT_EQ(validation_error(bytes), Errc::crc_mismatch);
  }
  {
    auto bytes = golden;
    bytes[kAttributesOffset + 1] ^= std::byte{0x08};
    EXPECT_EQ(validation_error(bytes), Errc::crc_mismatch);
  }
  {
    auto bytes = golden;
    bytes[kCrcOffset] ^= std::byte{0x01};
    EXPECT_EQ(validation_error(bytes), Errc::crc_mismatch);
  }
}

TEST(RecordBatchTest, BaseOffsetAndLeaderEpochAreOutsideTheCrc) {
  auto bytes = three_record_batch();
  store_be<std::int64_t>(bytes.data() + kBaseOffsetOffset, 12345);
  store_be<std::int32_t>(bytes.data() + kPartitionLeaderEpochOffset, 9);
  auto batch = RecordBatchView::from(bytes);
  ASSERT_TRUE(batch.has_value());
  EXPECT_TRUE(batch->validate(BatchOrigin::log).has_value());
}

TEST(RecordBatchTest, UnknownCompressionCodecIsRejected) {
  auto bytes = three_record_batch();
  rewrite<std::int16_t>(bytes, kAttributesOffset, 5);
  EXPECT_EQ(validation_error(bytes), Errc::invalid_compression);
}

TEST(RecordBatchTest, NegativeLastOffsetDeltaIsAnInvalidOffsetRange) {
  auto bytes = three_record_batch();
  rewrite<std::int32_t>(bytes, kLastOffsetDeltaOffset, -1);
  EXPECT_EQ(validation_error(bytes), Errc::invalid_offset_range);
}

TEST(RecordBatchTest, NegativeRecordCountIsRejected) {
  auto bytes = three_record_batch();
  rewrite<std::int32_t>(bytes, kRecordsCountOffset, -1);
  EXPECT_EQ(validation_error(bytes), Errc::invalid_record_count);
}

TEST(RecordBatchTest, MoreRecordsThanTheOffsetRangeIsRejected) {
  auto bytes = three_record_batch();
  rewrite<std::int32_t>(bytes, kRecordsCountOffset, 4);
  EXPECT_EQ(validation_error(bytes), Errc::invalid_record_count);
}

TEST(RecordBatchTest, CountThatCannotFitInTheBytesIsRejectedWithoutParsing) {
  auto bytes = three_record_batch();
  rewrite<std::int32_t>(bytes, kLastOffsetDeltaOffset, 1'000'000);
  rewrite<std::int32_t>(bytes, kRecordsCountOffset, 1'000'000);
  EXPECT_EQ(validation_error(bytes), Errc::invalid_record_count);
}

TEST(RecordBatchTest, CompactedBatchWithFewerRecordsThanOffsetsIsValidInTheLog) {
  auto bytes = three_record_batch();
  rewrite<std::int32_t>(bytes, kLastOffsetDeltaOffset, 10);
  auto batch = RecordBatchView::from(bytes);
  ASSERT_TRUE(batch.has_value());
  EXPECT_TRUE(batch->validate(BatchOrigin::log).has_value());
  EXPECT_EQ(validation_error(bytes, BatchOrigin::client), Errc::invalid_record_count);
}

TEST(RecordBatchTest, ClientBatchMustStartAtOffsetZero) {
  auto bytes = three_record_batch({.base_offset = 7});
  EXPECT_EQ(validation_error(bytes, BatchOrigin::client), Errc::invalid_base_offset);
  EXPECT_TRUE(RecordBatchView::from(bytes)->validate(BatchOrigin::log).has_value());
}

TEST(RecordBatchTest, ClientMayNotWriteControlBatches) {
  auto bytes = three_record_batch(
      {.producer_id = 1, .producer_epoch = 0, .transactional = true, .control = true});
  EXPECT_EQ(validation_error(bytes, BatchOrigin::client), Errc::control_from_client);
}

TEST(RecordBatchTest, ClientBatchWithProducerIdNeedsASequence) {
  auto bytes = three_record_batch({.producer_id = 1, .producer_epoch = 0});
  EXPECT_EQ(validation_error(bytes, BatchOrigin::client), Errc::invalid_sequence);
}

TEST(RecordBatchTest, ClientBatchWithoutRecordsIsRejected) {
  auto bytes = three_record_batch();
  rewrite<std::int32_t>(bytes, kRecordsCountOffset, 0);
  rewrite<std::int32_t>(bytes, kLastOffsetDeltaOffset, 0);
  EXPECT_EQ(validation_error(bytes, BatchOrigin::client), Errc::invalid_record_count);
}

TEST(RecordBatchTest, AttributesDecode) {
  auto bytes = three_record_batch();
  rewrite<std::int16_t>(bytes, kAttributesOffset, 0x4 | 0x8 | 0x10 | 0x20 | 0x40);
  auto batch = RecordBatchView::from(bytes);
  ASSERT_TRUE(batch.has_value());
  EXPECT_EQ(batch->compression(), Compression::zstd);
  EXPECT_TRUE(batch->is_compressed());
  EXPECT_EQ(batch->timestamp_type(), TimestampType::log_append_time);
  EXPECT_TRUE(batch->is_transactional());
  EXPECT_TRUE(batch->is_control());
  EXPECT_TRUE(batch->has_delete_horizon());
  EXPECT_EQ(batch->delete_horizon_ms(), batch->base_timestamp());
}

TEST(RecordBatchTest, LastSequenceWrapsAtInt32Max) {
  EXPECT_EQ(increment_sequence(5, 2), 7);
  EXPECT_EQ(increment_sequence(2147483646, 1), 2147483647);
  EXPECT_EQ(increment_sequence(2147483647, 1), 0);
  EXPECT_EQ(increment_sequence(2147483646, 3), 1);
  auto bytes =
      three_record_batch({.producer_id = 1, .producer_epoch = 0, .base_sequence = 2147483646});
  EXPECT_EQ(RecordBatchView::from(bytes)->last_sequence(), 0);
}

TEST(MutableRecordBatchViewTest, AssigningBaseOffsetKeepsTheBatchValid) {
  auto bytes = three_record_batch();
  auto batch = MutableRecordBatchView::from(bytes);
  ASSERT_TRUE(batch.has_value());
  const std::uint32_t crc_before = batch->crc();
  batch->set_base_offset(1'000'000);
  batch->set_partition_leader_epoch(4);
  EXPECT_EQ(batch->base_offset(), 1'000'000);
  EXPECT_EQ(batch->last_offset(), 1'000'002);
  EXPECT_EQ(batch->next_offset(), 1'000'003);
  EXPECT_EQ(batch->partition_leader_epoch(), 4);
  EXPECT_EQ(batch->crc(), crc_before);
  EXPECT_TRUE(batch->validate().has_value());
  std::int64_t expected = 1'000'000;
  auto status = for_each_record(
      *batch, [&](const RecordView& r) { EXPECT_EQ(batch->record_offset(r), expected++); });
  EXPECT_TRUE(status.has_value());
}

TEST(MutableRecordBatchViewTest, LogAppendTimeStampingRecomputesTheCrc) {
  auto bytes = three_record_batch();
  auto batch = MutableRecordBatchView::from(bytes);
  ASSERT_TRUE(batch.has_value());
  EXPECT_EQ(batch->max_timestamp(), 1003);
  const std::uint32_t crc_before = batch->crc();
  batch->set_max_timestamp(TimestampType::log_append_time, 5555);
  EXPECT_NE(batch->crc(), crc_before);
  EXPECT_TRUE(batch->validate().has_value());
  EXPECT_EQ(batch->timestamp_type(), TimestampType::log_append_time);
  EXPECT_EQ(batch->max_timestamp(), 5555);
  EXPECT_EQ(batch->base_timestamp(), 1000);  // untouched, as Kafka leaves it
  auto status = for_each_record(
      *batch, [&](const RecordView& r) { EXPECT_EQ(batch->record_timestamp(r), 5555); });
  EXPECT_TRUE(status.has_value());

  batch->set_max_timestamp(TimestampType::create_time, 1003);
  EXPECT_EQ(batch->crc(), crc_before);
  EXPECT_EQ(batch->timestamp_type(), TimestampType::create_time);
}

TEST(MutableRecordBatchViewTest, FramingIsCheckedLikeTheReadOnlyView) {
  auto bytes = three_record_batch();
  EXPECT_EQ(MutableRecordBatchView::from(MutableByteSpan(bytes).first(20)).error(),
            Errc::truncated);
}

TEST(PeekBatchSizeTest, NeedsTwelveBytesAndAPlausibleLength) {
  const auto bytes = three_record_batch();
  EXPECT_EQ(peek_batch_size(ByteSpan(bytes).first(12)).value(), bytes.size());
  EXPECT_EQ(peek_batch_size(ByteSpan(bytes).first(11)).error(), Errc::truncated);
}

}  // namespace
}  // namespace weir::record
