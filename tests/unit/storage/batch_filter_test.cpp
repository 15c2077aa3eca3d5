// filter_batch() (Kafka's MemoryRecords.filterTo for one batch) and the cleaner's OffsetMap.
#include "storage/batch_filter.h"

#include <gtest/gtest.h>

#include "cleaner_test_util.h"
#include "storage/offset_map.h"

namespace weir::storage {
namespace {

using testing::Kv;
using testing::kv_batch;
using testing::records_of;
using testing::Stored;

constexpr std::int64_t kNow = 1'700'000'000'000;

record::RecordBatchView view_of(const std::vector<std::byte>& bytes) {
  auto view = record::RecordBatchView::from(bytes);
  EXPECT_TRUE(view.has_value());
  EXPECT_TRUE(view->validate(record::BatchOrigin::log).has_value());
  return *view;
}

// Keeps the records whose key is not in `drop`.
RecordPredicate dropping(std::vector<std::string> drop) {
  return [drop = std::move(drop)](const record::RecordBatchView&, const record::RecordView& r) {
    return !r.key || std::find(drop.begin(), drop.end(), as_string_view(*r.key)) == drop.end();
  };
}

BatchFilterResult filter(const std::vector<std::byte>& batch, BatchDecision decision, const RecordPredicate& retain,
                         std::vector<std::byte>& out) {
  auto result = filter_batch(view_of(batch), decision, retain, FilterContext{kNow, 1000}, out);
  EXPECT_TRUE(result.has_value());
  return result.value_or(BatchFilterResult{});
}

TEST(BatchFilterTest, DeleteDropsTheBatchWithoutLookingAtItsRecords) {
  const auto batch = kv_batch({{"a", "1"}}, kNow);
  std::vector<std::byte> out;
  bool asked = false;
  auto result = filter(batch, {BatchRetention::kDelete}, [&](const auto&, const auto&) { return asked = true; }, out);
  EXPECT_FALSE(asked);
  EXPECT_EQ(result.output, BatchFilterResult::Output::kNone);
  EXPECT_TRUE(out.empty());
}

TEST(BatchFilterTest, AnEmptyHeaderIsKafkasWriteEmptyHeader) {
  const auto batch = kv_batch({{"a", "1"}, {"b", "2"}}, kNow - 10,
                              {.base_offset = 500,
                               .partition_leader_epoch = 4,
                               .producer_id = 9,
                               .producer_epoch = 2,
                               .base_sequence = 17,
                               .transactional = true},
                              record::Compression::snappy);
  std::vector<std::byte> out;
  auto result = filter(batch, {BatchRetention::kRetainEmpty}, dropping({"a", "b"}), out);
  EXPECT_EQ(result.output, BatchFilterResult::Output::kEmptyHeader);
  ASSERT_EQ(out.size(), record::kHeaderSize);
  auto empty = view_of(out);
  EXPECT_EQ(empty.base_offset(), 500);
  EXPECT_EQ(empty.last_offset(), 501);
  EXPECT_EQ(empty.batch_length(), record::kMinBatchLength);
  EXPECT_EQ(empty.partition_leader_epoch(), 4);
  EXPECT_EQ(empty.attributes(), record::kTransactionalBit) << "no codec, no delete horizon";
  EXPECT_EQ(empty.base_timestamp(), record::kNoTimestamp);
  EXPECT_EQ(empty.max_timestamp(), kNow - 9);
  EXPECT_EQ(empty.producer_id(), 9);
  EXPECT_EQ(empty.producer_epoch(), 2);
  EXPECT_EQ(empty.base_sequence(), 17);
  EXPECT_EQ(empty.records_count(), 0);

  out.clear();
  EXPECT_EQ(filter(batch, {BatchRetention::kDeleteEmpty}, dropping({"a", "b"}), out).output,
            BatchFilterResult::Output::kNone);
  EXPECT_TRUE(out.empty());
}

TEST(BatchFilterTest, LogAppendTimeBatchesKeepTheirTimestamp) {
  const auto batch = kv_batch({{"a", "1"}, {"b", "2"}, {"c", "3"}}, kNow - 100,
                              {.timestamp_type = record::TimestampType::log_append_time, .log_append_time_ms = kNow});
  std::vector<std::byte> out;
  ASSERT_EQ(filter(batch, {}, dropping({"a"}), out).output, BatchFilterResult::Output::kRewritten);
  auto rewritten = view_of(out);
  EXPECT_EQ(rewritten.timestamp_type(), record::TimestampType::log_append_time);
  EXPECT_EQ(rewritten.max_timestamp(), kNow);
  EXPECT_EQ(rewritten.base_timestamp(), kNow);
  ASSERT_TRUE(record::for_each_record(rewritten, [&](const record::RecordView& r) {
                EXPECT_EQ(rewritten.record_timestamp(r), kNow);
              }).has_value());
}

TEST(BatchFilterTest, ATombstoneSetsTheDeleteHorizonAndShiftsTheTimestampDeltas) {
  const auto batch = kv_batch({{"a", "1"}, {"b", std::nullopt}}, kNow - 100);
  std::vector<std::byte> out;
  auto result = filter(batch, {}, dropping({}), out);
  EXPECT_EQ(result.output, BatchFilterResult::Output::kRewritten) << "every record kept, but a horizon to set";
  EXPECT_EQ(result.tombstones_retained, 1);
  auto rewritten = view_of(out);
  EXPECT_EQ(rewritten.delete_horizon_ms(), kNow + 1000);
  EXPECT_EQ(rewritten.base_timestamp(), kNow + 1000);
  EXPECT_EQ(rewritten.max_timestamp(), kNow - 99);
  std::vector<std::int64_t> timestamps;
  ASSERT_TRUE(record::for_each_record(rewritten, [&](const record::RecordView& r) {
                timestamps.push_back(rewritten.record_timestamp(r));
              }).has_value());
  EXPECT_EQ(timestamps, (std::vector<std::int64_t>{kNow - 100, kNow - 99}));

  // Rewritten again (a record goes), the horizon stays as it was.
  std::vector<std::byte> again;
  auto second = filter_batch(rewritten, {}, dropping({"a"}), FilterContext{kNow + 500, 1000}, again);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(view_of(again).delete_horizon_ms(), kNow + 1000);
  EXPECT_EQ(records_of(again), (std::vector<Stored>{{1, "b", std::nullopt}}));
}

TEST(BatchFilterTest, AMarkerOfAnEmptyTransactionGetsAHorizon) {
  const auto marker = record::build_end_txn_marker_batch(
      {.producer_id = 3, .producer_epoch = 1, .commit = true, .timestamp_ms = kNow, .base_offset = 10});
  std::vector<std::byte> out;
  EXPECT_EQ(filter(marker, {BatchRetention::kDeleteEmpty, false}, dropping({}), out).output,
            BatchFilterResult::Output::kOriginal);
  EXPECT_EQ(out, marker);
  out.clear();
  ASSERT_EQ(filter(marker, {BatchRetention::kDeleteEmpty, true}, dropping({}), out).output,
            BatchFilterResult::Output::kRewritten);
  auto rewritten = view_of(out);
  EXPECT_TRUE(rewritten.is_control());
  EXPECT_TRUE(rewritten.is_transactional());
  EXPECT_EQ(rewritten.delete_horizon_ms(), kNow + 1000);
  EXPECT_EQ(rewritten.producer_id(), 3);
  EXPECT_EQ(rewritten.base_sequence(), record::kNoSequence);
}

TEST(BatchFilterTest, UndecompressableRecordsAreAnError) {
  auto batch = kv_batch({{"a", std::string(100, 'a')}}, kNow, {}, record::Compression::lz4);
  for (std::size_t i = record::kHeaderSize + 8; i < batch.size(); ++i) batch[i] = std::byte{0x5a};
  record::MutableRecordBatchView::from(batch)->update_crc();
  std::vector<std::byte> out;
  auto result = filter_batch(view_of(batch), {}, dropping({}), FilterContext{kNow, 1000}, out);
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error(), Errc::kCorruptMessage);
}

TEST(OffsetMapTest, KeepsTheLatestOffsetPerKeyWithinItsMemory) {
  OffsetMap map(3 * OffsetMap::kEntryOverheadBytes + 3);
  EXPECT_EQ(map.get(as_bytes("a")), -1);
  EXPECT_TRUE(map.put(as_bytes("a"), 1));
  EXPECT_TRUE(map.put(as_bytes("b"), 2));
  EXPECT_TRUE(map.put(as_bytes("a"), 5));
  EXPECT_TRUE(map.put(as_bytes("c"), 6));
  EXPECT_FALSE(map.put(as_bytes("d"), 7)) << "full";
  EXPECT_TRUE(map.put(as_bytes("b"), 8)) << "an existing key still updates";
  EXPECT_EQ(map.get(as_bytes("a")), 5);
  EXPECT_EQ(map.get(as_bytes("b")), 8);
  EXPECT_EQ(map.get(as_bytes("d")), -1);
  EXPECT_EQ(map.size(), 3u);
  EXPECT_DOUBLE_EQ(map.utilization(), 1.0);
  EXPECT_EQ(map.latest_offset(), -1);
  map.update_latest_offset(9);
  map.update_latest_offset(4);
  EXPECT_EQ(map.latest_offset(), 9);
}

}  // namespace
}  // namespace weir::storage
