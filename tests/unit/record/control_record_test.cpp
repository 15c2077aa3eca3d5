#include "protocol/record/control_record.h"

#include <gtest/gtest.h>

#include "protocol/record/record.h"
#include "test_util.h"

namespace weir::record {
namespace {

using testing::bytes;

template <std::size_t N>
std::vector<std::byte> vec(const std::array<std::byte, N>& a) {
  return {a.begin(), a.end()};
}

TEST(ControlRecordTest, KeyIsVersionZeroThenType) {
  EXPECT_EQ(vec(encode_control_key(ControlRecordType::abort)), bytes({0, 0, 0, 0}));
  EXPECT_EQ(vec(encode_control_key(ControlRecordType::commit)), bytes({0, 0, 0, 1}));
}

TEST(ControlRecordTest, MarkerValueIsVersionZeroThenCoordinatorEpoch) {
  EXPECT_EQ(vec(encode_end_txn_marker(0x01020304)), bytes({0, 0, 1, 2, 3, 4}));
}

TEST(ControlRecordTest, KeysRoundTripAndUnknownTypesAreKeptRaw) {
  auto commit = parse_control_key(bytes({0, 0, 0, 1}));
  ASSERT_TRUE(commit.has_value());
  EXPECT_TRUE(commit->is(ControlRecordType::commit));
  EXPECT_TRUE(commit->is_transaction_marker());
  auto leader_change = parse_control_key(bytes({0, 0, 0, 2}));
  ASSERT_TRUE(leader_change.has_value());
  EXPECT_FALSE(leader_change->is_transaction_marker());
  auto unknown = parse_control_key(bytes({0, 0, 0x7f, 0x00}));
  ASSERT_TRUE(unknown.has_value());
  EXPECT_EQ(unknown->type, 0x7f00);
}

TEST(ControlRecordTest, ShortKeyOrValueIsInvalid) {
  EXPECT_EQ(parse_control_key(bytes({0, 0, 0})).error(), Errc::invalid_control_record);
  EXPECT_EQ(parse_end_txn_marker(bytes({0, 0, 0, 0, 7})).error(), Errc::invalid_control_record);
}

TEST(ControlRecordTest, NegativeVersionIsInvalid) {
  EXPECT_EQ(parse_control_key(bytes({0xff, 0xff, 0, 1})).error(), Errc::invalid_control_record);
  EXPECT_EQ(parse_end_txn_marker(bytes({0x80, 0, 0, 0, 0, 7})).error(),
            Errc::invalid_control_record);
}

TEST(ControlRecordTest, NewerVersionsAreReadByTheirVersionZeroPrefix) {
  auto key = parse_control_key(bytes({0, 1, 0, 0, 0xaa}));
  ASSERT_TRUE(key.has_value());
  EXPECT_EQ(key->version, 1);
  EXPECT_TRUE(key->is(ControlRecordType::abort));
  auto marker = parse_end_txn_marker(bytes({0, 1, 0, 0, 0, 9, 0xbb, 0xcc}));
  ASSERT_TRUE(marker.has_value());
  EXPECT_EQ(marker->version, 1);
  EXPECT_EQ(marker->coordinator_epoch, 9);
}

TEST(ControlRecordTest, MarkerOnALogAppendTimeTopicSaysSo) {
  const auto bytes = build_end_txn_marker_batch(
      {.producer_id = 7, .producer_epoch = 1, .commit = true, .timestamp_ms = 555, .log_append_time = true});
  auto batch = RecordBatchView::from(bytes);
  ASSERT_TRUE(batch.has_value());
  EXPECT_TRUE(batch->validate().has_value());
  EXPECT_EQ(batch->timestamp_type(), TimestampType::log_append_time);
  EXPECT_EQ(batch->max_timestamp(), 555);
  EXPECT_TRUE(batch->is_control());
}

TEST(ControlRecordTest, AbortMarkerBatchIsAControlTransactionalBatchWithOneRecord) {
  const auto bytes = build_end_txn_marker_batch({.producer_id = 77,
                                                 .producer_epoch = 5,
                                                 .coordinator_epoch = 2,
                                                 .commit = false,
                                                 .timestamp_ms = 123,
                                                 .base_offset = 40,
                                                 .partition_leader_epoch = 6});
  auto batch = RecordBatchView::from(bytes);
  ASSERT_TRUE(batch.has_value());
  EXPECT_TRUE(batch->validate().has_value());
  EXPECT_EQ(batch->validate(BatchOrigin::client).error(), Errc::invalid_base_offset);
  EXPECT_TRUE(batch->is_control());
  EXPECT_TRUE(batch->is_transactional());
  EXPECT_EQ(batch->producer_id(), 77);
  EXPECT_EQ(batch->producer_epoch(), 5);
  EXPECT_EQ(batch->base_sequence(), kNoSequence);
  EXPECT_EQ(batch->base_offset(), 40);
  EXPECT_EQ(batch->partition_leader_epoch(), 6);
  EXPECT_EQ(batch->records_count(), 1);
  EXPECT_EQ(batch->max_timestamp(), 123);

  int records = 0;
  auto status = for_each_record(*batch, [&](const RecordView& r) {
    ++records;
    EXPECT_EQ(r.offset_delta, 0);
    EXPECT_TRUE(r.headers.empty());
    EXPECT_TRUE(parse_control_key(*r.key)->is(ControlRecordType::abort));
    EXPECT_EQ(parse_end_txn_marker(*r.value)->coordinator_epoch, 2);
  });
  EXPECT_TRUE(status.has_value());
  EXPECT_EQ(records, 1);
}

}  // namespace
}  // namespace weir::record
