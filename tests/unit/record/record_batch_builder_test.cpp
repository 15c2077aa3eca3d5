#include "protocol/record/record_batch_builder.h"

#include <gtest/gtest.h>

#include <string>

#include "protocol/record/record.h"
#include "test_util.h"

namespace weir::record {
namespace {

using testing::text;

TEST(RecordBatchBuilderTest, HeaderFieldsComeFromOptionsAndRecords) {
  RecordBatchBuilder builder({.base_offset = 0,
                              .partition_leader_epoch = 3,
                              .producer_id = 99,
                              .producer_epoch = 2,
                              .base_sequence = 10,
                              .transactional = true});
  builder.append(2000, as_bytes("k"), as_bytes("v1"));
  builder.append(1990, as_bytes("k"), as_bytes("v2"));
  builder.append(2010, as_bytes("k"), as_bytes("v3"));
  EXPECT_EQ(builder.record_count(), 3);
  const auto bytes = builder.build();
  auto batch = RecordBatchView::from(bytes);
  ASSERT_TRUE(batch.has_value());
  EXPECT_TRUE(batch->validate(BatchOrigin::client).has_value());
  EXPECT_EQ(batch->partition_leader_epoch(), 3);
  EXPECT_EQ(batch->producer_id(), 99);
  EXPECT_EQ(batch->producer_epoch(), 2);
  EXPECT_EQ(batch->base_sequence(), 10);
  EXPECT_EQ(batch->last_sequence(), 12);
  EXPECT_TRUE(batch->is_transactional());
  EXPECT_FALSE(batch->is_control());
  EXPECT_EQ(batch->base_timestamp(), 2000);
  EXPECT_EQ(batch->max_timestamp(), 2010);
  EXPECT_EQ(batch->last_offset_delta(), 2);
  EXPECT_EQ(batch->records_count(), 3);

  std::vector<std::int64_t> timestamps;
  auto status = for_each_record(
      *batch, [&](const RecordView& r) { timestamps.push_back(batch->record_timestamp(r)); });
  EXPECT_TRUE(status.has_value());
  EXPECT_EQ(timestamps, (std::vector<std::int64_t>{2000, 1990, 2010}));
}

TEST(RecordBatchBuilderTest, RecordsRoundTripWithNullsEmptiesAndHeaders) {
  RecordBatchBuilder builder;
  const std::string big(100000, 'x');
  const Header headers[] = {{"h1", as_bytes("v")}, {"h2", std::nullopt}};
  builder.append(5, std::nullopt, std::nullopt);
  builder.append(6, as_bytes(""), as_bytes(big), headers);
  const auto bytes = builder.build();
  auto batch = RecordBatchView::from(bytes);
  ASSERT_TRUE(batch.has_value());
  ASSERT_TRUE(batch->validate().has_value());

  auto reader = RecordReader::of(*batch);
  ASSERT_TRUE(reader.has_value());
  auto r0 = reader->next();
  ASSERT_TRUE(r0.has_value() && r0->has_value());
  EXPECT_FALSE((*r0)->key.has_value());
  EXPECT_FALSE((*r0)->value.has_value());
  auto r1 = reader->next();
  ASSERT_TRUE(r1.has_value() && r1->has_value());
  EXPECT_TRUE((*r1)->key.has_value() && (*r1)->key->empty());
  EXPECT_EQ(text(*(*r1)->value), big);
  std::vector<std::string> keys;
  for (const Header& h : (*r1)->headers) keys.emplace_back(h.key);
  EXPECT_EQ(keys, (std::vector<std::string>{"h1", "h2"}));
  EXPECT_FALSE(reader->next()->has_value());
}

TEST(RecordBatchBuilderTest, ExplicitOffsetDeltasLeaveGaps) {
  RecordBatchBuilder builder({.base_offset = 100});
  builder.append_with_offset_delta(0, 1, std::nullopt, as_bytes("a"));
  builder.append_with_offset_delta(5, 1, std::nullopt, as_bytes("b"));
  builder.append(1, std::nullopt, as_bytes("c"));  // delta 6
  const auto bytes = builder.build();
  auto batch = RecordBatchView::from(bytes);
  ASSERT_TRUE(batch.has_value());
  EXPECT_TRUE(batch->validate(BatchOrigin::log).has_value());
  EXPECT_EQ(batch->last_offset_delta(), 6);
  EXPECT_EQ(batch->last_offset(), 106);
  std::vector<std::int64_t> offsets;
  auto status = for_each_record(
      *batch, [&](const RecordView& r) { offsets.push_back(batch->record_offset(r)); });
  EXPECT_TRUE(status.has_value());
  EXPECT_EQ(offsets, (std::vector<std::int64_t>{100, 105, 106}));
}

TEST(RecordBatchBuilderTest, LogAppendTimeBatchUsesTheGivenMaxTimestamp) {
  RecordBatchBuilder builder(
      {.timestamp_type = TimestampType::log_append_time, .log_append_time_ms = 777});
  builder.append(1, std::nullopt, as_bytes("a"));
  const auto bytes = builder.build();
  auto batch = RecordBatchView::from(bytes);
  ASSERT_TRUE(batch.has_value());
  EXPECT_TRUE(batch->validate().has_value());
  EXPECT_EQ(batch->timestamp_type(), TimestampType::log_append_time);
  EXPECT_EQ(batch->max_timestamp(), 777);
}

TEST(RecordBatchBuilderTest, SizeTracksTheBytesWritten) {
  RecordBatchBuilder builder;
  EXPECT_EQ(builder.size_bytes(), kHeaderSize);
  EXPECT_TRUE(builder.empty());
  builder.append(0, std::nullopt, std::nullopt);
  EXPECT_EQ(builder.size_bytes(), kHeaderSize + kMinRecordSize);
  EXPECT_EQ(builder.build().size(), kHeaderSize + kMinRecordSize);
}

TEST(RecordBatchBuilderDeathTest, OffsetDeltasMustIncrease) {
  RecordBatchBuilder builder;
  builder.append(0, std::nullopt, std::nullopt);
  EXPECT_DEATH(builder.append_with_offset_delta(0, 0, std::nullopt, std::nullopt),
               "offset delta 0 after 0");
}

TEST(RecordBatchBuilderDeathTest, EmptyBatchCannotBeBuilt) {
  RecordBatchBuilder builder;
  EXPECT_DEATH((void)builder.build(), "at least one record");
}

}  // namespace
}  // namespace weir::record
