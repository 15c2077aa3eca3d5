#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>

#include "protocol/record/record.h"
#include "protocol/record/record_batch.h"
#include "protocol/record/record_batch_builder.h"
#include "test_util.h"

namespace weir::record {
namespace {

using testing::append;
using testing::bytes;
using testing::text;

Errc first_error(ByteSpan records, std::int32_t count, std::int32_t last_offset_delta) {
  auto status =
      for_each_record(RecordReader(records, count, last_offset_delta), [](const RecordView&) {});
  EXPECT_FALSE(status.has_value());
  return status.has_value() ? Errc::compressed : status.error();
}

// A minimal record: length 6, attributes 0, timestampDelta 0, offsetDelta d, null key, null
// value, no headers.
std::vector<std::byte> minimal_record(int offset_delta) {
  return bytes({0x0c, 0x00, 0x00, offset_delta * 2, 0x01, 0x01, 0x00});
}

TEST(RecordReaderTest, MinimalRecordHasNullKeyAndValue) {
  const auto records = minimal_record(0);
  ASSERT_EQ(records.size(), kMinRecordSize);
  RecordReader reader(records, 1, 0);
  auto r = reader.next();
  ASSERT_TRUE(r.has_value() && r->has_value());
  EXPECT_FALSE((*r)->key.has_value());
  EXPECT_FALSE((*r)->value.has_value());
  EXPECT_TRUE((*r)->headers.empty());
  EXPECT_FALSE(reader.next()->has_value());
}

TEST(RecordReaderTest, EmptyKeyIsNotNull) {
  const auto records = bytes({0x0c, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00});
  RecordReader reader(records, 1, 0);
  auto r = reader.next();
  ASSERT_TRUE(r.has_value() && r->has_value());
  ASSERT_TRUE((*r)->key.has_value());
  EXPECT_TRUE((*r)->key->empty());
  ASSERT_TRUE((*r)->value.has_value());
}

TEST(RecordReaderTest, RecordLengthBeyondRemainingBytesIsMalformed) {
  auto records = minimal_record(0);
  records[0] = std::byte{0x0e};  // claims 7 bytes, 6 follow
  EXPECT_EQ(first_error(records, 1, 0), Errc::malformed_record);
}

TEST(RecordReaderTest, HugeRecordLengthIsRefusedWithoutAllocating) {
  const auto records = bytes({0xfe, 0xff, 0xff, 0xff, 0x0f, 0x00});  // length INT32_MAX
  EXPECT_EQ(first_error(records, 1, 0), Errc::malformed_record);
}

TEST(RecordReaderTest, NegativeRecordLengthIsMalformed) {
  const auto records = bytes({0x01, 0x00});
  EXPECT_EQ(first_error(records, 1, 0), Errc::malformed_record);
}

TEST(RecordReaderTest, FieldsMustFillTheRecordLengthExactly) {
  auto records = bytes({0x0e, 0x00, 0x00, 0x00, 0x01, 0x01, 0x00, 0x00});  // one spare byte
  EXPECT_EQ(first_error(records, 1, 0), Errc::malformed_record);
}

TEST(RecordReaderTest, KeyLongerThanTheRecordIsMalformed) {
  // length 6; key length 10 but only 2 bytes remain in the record.
  const auto records = bytes({0x0c, 0x00, 0x00, 0x00, 0x14, 0x01, 0x00, 0x61, 0x61, 0x61});
  EXPECT_EQ(first_error(records, 1, 0), Errc::malformed_record);
}

TEST(RecordReaderTest, KeyLengthBelowMinusOneIsMalformed) {
  const auto records = bytes({0x0c, 0x00, 0x00, 0x00, 0x03, 0x01, 0x00});  // key length -2
  EXPECT_EQ(first_error(records, 1, 0), Errc::malformed_record);
}

TEST(RecordReaderTest, NegativeHeaderCountIsMalformed) {
  const auto records = bytes({0x0c, 0x00, 0x00, 0x00, 0x01, 0x01, 0x01});
  EXPECT_EQ(first_error(records, 1, 0), Errc::malformed_record);
}

TEST(RecordReaderTest, HugeHeaderCountStopsAtTheEndOfTheRecord) {
  // header count 2^30 but only one header's bytes follow.
  const auto records =
      bytes({0x1a, 0x00, 0x00, 0x00, 0x01, 0x01, 0x80, 0x80, 0x80, 0x80, 0x08, 0x02, 0x61, 0x01});
  EXPECT_EQ(first_error(records, 1, 0), Errc::malformed_record);
}

TEST(RecordReaderTest, NullHeaderKeyIsMalformedButNullHeaderValueIsFine) {
  const auto null_key = bytes({0x10, 0x00, 0x00, 0x00, 0x01, 0x01, 0x02, 0x01, 0x01});
  EXPECT_EQ(first_error(null_key, 1, 0), Errc::malformed_record);

  const auto null_value = bytes({0x12, 0x00, 0x00, 0x00, 0x01, 0x01, 0x02, 0x02, 0x68, 0x01});
  RecordReader reader(null_value, 1, 0);
  auto r = reader.next();
  ASSERT_TRUE(r.has_value() && r->has_value()) << r.error();
  int seen = 0;
  for (const Header& h : (*r)->headers) {
    EXPECT_EQ(h.key, "h");
    EXPECT_FALSE(h.value.has_value());
    ++seen;
  }
  EXPECT_EQ(seen, 1);
}

TEST(RecordReaderTest, TruncatedVarintInsideARecordIsMalformed) {
  const auto records = bytes({0x04, 0x00, 0x80, 0x80});  // timestampDelta never ends
  EXPECT_EQ(first_error(records, 1, 0), Errc::malformed_record);
}

TEST(RecordReaderTest, FewerRecordsThanCountIsMalformed) {
  const auto records = minimal_record(0);
  EXPECT_EQ(first_error(records, 2, 1), Errc::malformed_record);
}

TEST(RecordReaderTest, BytesAfterTheLastRecordAreTrailing) {
  auto records = minimal_record(0);
  append(records, bytes({0x00}));
  EXPECT_EQ(first_error(records, 1, 0), Errc::trailing_bytes);
}

TEST(RecordReaderTest, OffsetDeltasMustStrictlyIncrease) {
  auto records = minimal_record(1);
  append(records, minimal_record(1));
  EXPECT_EQ(first_error(records, 2, 2), Errc::record_offset_out_of_order);

  auto backwards = minimal_record(1);
  append(backwards, minimal_record(0));
  EXPECT_EQ(first_error(backwards, 2, 2), Errc::record_offset_out_of_order);
}

TEST(RecordReaderTest, OffsetDeltaAboveLastOffsetDeltaIsRejected) {
  const auto records = minimal_record(3);
  EXPECT_EQ(first_error(records, 1, 2), Errc::record_offset_out_of_order);
}

TEST(RecordReaderTest, GapsInOffsetDeltasAreAllowedAsAfterCompaction) {
  auto records = minimal_record(0);
  append(records, minimal_record(4));
  std::vector<std::int32_t> deltas;
  auto status = for_each_record(RecordReader(records, 2, 4),
                                [&](const RecordView& r) { deltas.push_back(r.offset_delta); });
  EXPECT_TRUE(status.has_value());
  EXPECT_EQ(deltas, (std::vector<std::int32_t>{0, 4}));
}

TEST(RecordReaderTest, ErrorsAreSticky) {
  const auto records = bytes({0x01});
  RecordReader reader(records, 3, 2);
  EXPECT_EQ(reader.next().error(), Errc::malformed_record);
  EXPECT_EQ(reader.next().error(), Errc::malformed_record);
}

TEST(RecordReaderTest, CompressedBatchRecordsNeedDecompressionFirst) {
  RecordBatchBuilder builder;
  builder.append(1, std::nullopt, as_bytes("v"));
  auto bytes = builder.build();
  store_be<std::int16_t>(bytes.data() + kAttributesOffset, 1);  // gzip
  auto batch = RecordBatchView::from(bytes);
  ASSERT_TRUE(batch.has_value());
  EXPECT_EQ(RecordReader::of(*batch).error(), Errc::compressed);
  EXPECT_EQ(validate_records(*batch).error(), Errc::compressed);
}

TEST(RecordReaderTest, ValidateRecordsAcceptsBuiltBatches) {
  RecordBatchBuilder builder;
  const Header headers[] = {{"a", as_bytes("1")}, {"b", std::nullopt}, {"", as_bytes("")}};
  for (int i = 0; i < 100; ++i) {
    builder.append(i * 10, as_bytes("key"), std::nullopt, headers);
  }
  const auto bytes = builder.build();
  auto batch = RecordBatchView::from(bytes);
  ASSERT_TRUE(batch.has_value());
  EXPECT_TRUE(batch->validate(BatchOrigin::client).has_value());
  EXPECT_TRUE(validate_records(*batch).has_value());
}

// Random corruption of a valid batch's records must be reported, never crash or over-read
// (run under AddressSanitizer to make that check bite).
TEST(RecordReaderTest, RandomlyCorruptedRecordsNeverReadOutOfBounds) {
  RecordBatchBuilder builder;
  const Header headers[] = {{"trace-id", as_bytes("0123456789")}};
  for (int i = 0; i < 20; ++i) {
    builder.append(1000 + i, as_bytes("k"), as_bytes("some value bytes"), headers);
  }
  const auto golden = builder.build();
  std::mt19937 rng(1234);
  for (int round = 0; round < 5000; ++round) {
    auto records = std::vector<std::byte>(golden.begin() + kHeaderSize, golden.end());
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) {
      records[rng() % records.size()] = static_cast<std::byte>(rng() & 0xff);
    }
    records.resize(rng() % (records.size() + 1));
    // Copy into an exactly-sized heap block so any over-read is caught.
    auto exact = std::make_unique<std::byte[]>(records.size());
    std::copy(records.begin(), records.end(), exact.get());
    std::size_t total = 0;
    auto status = for_each_record(RecordReader(ByteSpan(exact.get(), records.size()), 20, 19),
                                  [&](const RecordView& r) {
                                    total += r.bytes.size();
                                    if (r.key) total += r.key->size();
                                    for (const Header& h : r.headers) total += h.key.size();
                                  });
    (void)status;
    EXPECT_LE(total, records.size() * 2);
  }
}

}  // namespace
}  // namespace weir::record
