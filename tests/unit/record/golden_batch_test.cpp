// Golden bytes: batches as a Java producer writes them, assembled by hand from the documented
// layout. The CRCs were computed separately with a bit-at-a-time CRC32C, not with weir's code.

#include <gtest/gtest.h>

#include "protocol/record/control_record.h"
#include "protocol/record/record.h"
#include "protocol/record/record_batch.h"
#include "protocol/record/record_batch_builder.h"
#include "test_util.h"

namespace weir::record {
namespace {

using testing::append;
using testing::bytes;
using testing::text;

// An idempotent producer's batch (producerId 4000, epoch 0, sequence 0), two records:
//   offset 0, t=1700000000000, key "k1",  value "hello", header trace="abc"
//   offset 1, t=1700000000005, key null,  value "world", no headers
std::vector<std::byte> idempotent_two_record_batch() {
  std::vector<std::byte> b;
  append(b, bytes({0, 0, 0, 0, 0, 0, 0, 0}));  // baseOffset 0
  append(b, bytes({0x00, 0x00, 0x00, 0x55}));  // batchLength 85
  append(b, bytes({0xff, 0xff, 0xff, 0xff}));  // partitionLeaderEpoch -1
  append(b, bytes({0x02}));                    // magic 2
  append(b, bytes({0xd7, 0x5c, 0x11, 0xe7}));  // crc
  append(b, bytes({0x00, 0x00}));              // attributes: none, CreateTime
  append(b, bytes({0x00, 0x00, 0x00, 0x01}));  // lastOffsetDelta 1
  append(b, bytes({0x00, 0x00, 0x01, 0x8b, 0xcf, 0xe5, 0x68, 0x00}));  // baseTimestamp
  append(b, bytes({0x00, 0x00, 0x01, 0x8b, 0xcf, 0xe5, 0x68, 0x05}));  // maxTimestamp
  append(b, bytes({0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0f, 0xa0}));  // producerId 4000
  append(b, bytes({0x00, 0x00}));                                      // producerEpoch 0
  append(b, bytes({0x00, 0x00, 0x00, 0x00}));                          // baseSequence 0
  append(b, bytes({0x00, 0x00, 0x00, 0x02}));                          // records count 2
  // Record 0: length 23, attributes, timestampDelta 0, offsetDelta 0.
  append(b, bytes({0x2e, 0x00, 0x00, 0x00}));
  append(b, bytes({0x04}));  // key length 2
  append(b, "k1");
  append(b, bytes({0x0a}));  // value length 5
  append(b, "hello");
  append(b, bytes({0x02}));  // 1 header
  append(b, bytes({0x0a}));  // header key length 5
  append(b, "trace");
  append(b, bytes({0x06}));  // header value length 3
  append(b, "abc");
  // Record 1: length 11, attributes, timestampDelta 5, offsetDelta 1, null key.
  append(b, bytes({0x16, 0x00, 0x0a, 0x02, 0x01}));
  append(b, bytes({0x0a}));  // value length 5
  append(b, "world");
  append(b, bytes({0x00}));  // no headers
  return b;
}

// A commit marker: producerId 4000, epoch 3, coordinatorEpoch 7, t=1700000000100.
std::vector<std::byte> commit_marker_batch() {
  std::vector<std::byte> b;
  append(b, bytes({0, 0, 0, 0, 0, 0, 0, 0}));  // baseOffset 0
  append(b, bytes({0x00, 0x00, 0x00, 0x42}));  // batchLength 66
  append(b, bytes({0xff, 0xff, 0xff, 0xff}));  // partitionLeaderEpoch -1
  append(b, bytes({0x02}));                    // magic 2
  append(b, bytes({0x7c, 0xcf, 0x04, 0x6d}));  // crc
  append(b, bytes({0x00, 0x30}));              // attributes: transactional, control
  append(b, bytes({0x00, 0x00, 0x00, 0x00}));  // lastOffsetDelta 0
  append(b, bytes({0x00, 0x00, 0x01, 0x8b, 0xcf, 0xe5, 0x68, 0x64}));  // baseTimestamp
  append(b, bytes({0x00, 0x00, 0x01, 0x8b, 0xcf, 0xe5, 0x68, 0x64}));  // maxTimestamp
  append(b, bytes({0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0f, 0xa0}));  // producerId 4000
  append(b, bytes({0x00, 0x03}));                                      // producerEpoch 3
  append(b, bytes({0xff, 0xff, 0xff, 0xff}));                          // baseSequence -1
  append(b, bytes({0x00, 0x00, 0x00, 0x01}));                          // records count 1
  append(b, bytes({0x20, 0x00, 0x00, 0x00}));                          // length 16, attrs, deltas 0
  append(b, bytes({0x08, 0x00, 0x00, 0x00, 0x01}));              // key: version 0, type 1 (commit)
  append(b, bytes({0x0c, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07}));  // value: version 0, epoch 7
  append(b, bytes({0x00}));                                      // no headers
  return b;
}

TEST(GoldenBatchTest, ProducerBatchDecodesFieldByField) {
  const auto bytes = idempotent_two_record_batch();
  ASSERT_EQ(bytes.size(), 97u);
  auto batch = RecordBatchView::from(bytes);
  ASSERT_TRUE(batch.has_value()) << batch.error();
  EXPECT_TRUE(batch->validate(BatchOrigin::client).has_value());
  EXPECT_EQ(batch->crc(), 0xd75c11e7u);
  EXPECT_EQ(batch->compute_crc(), 0xd75c11e7u);
  EXPECT_EQ(batch->base_offset(), 0);
  EXPECT_EQ(batch->batch_length(), 85);
  EXPECT_EQ(batch->partition_leader_epoch(), -1);
  EXPECT_EQ(batch->magic(), 2);
  EXPECT_EQ(batch->compression(), Compression::none);
  EXPECT_EQ(batch->timestamp_type(), TimestampType::create_time);
  EXPECT_FALSE(batch->is_transactional());
  EXPECT_FALSE(batch->is_control());
  EXPECT_EQ(batch->last_offset_delta(), 1);
  EXPECT_EQ(batch->base_timestamp(), 1'700'000'000'000);
  EXPECT_EQ(batch->max_timestamp(), 1'700'000'000'005);
  EXPECT_EQ(batch->producer_id(), 4000);
  EXPECT_EQ(batch->producer_epoch(), 0);
  EXPECT_EQ(batch->base_sequence(), 0);
  EXPECT_EQ(batch->last_sequence(), 1);
  EXPECT_EQ(batch->records_count(), 2);

  auto reader = RecordReader::of(*batch);
  ASSERT_TRUE(reader.has_value());
  auto first = reader->next();
  ASSERT_TRUE(first.has_value() && first->has_value());
  const RecordView& r0 = **first;
  EXPECT_EQ(batch->record_offset(r0), 0);
  EXPECT_EQ(batch->record_timestamp(r0), 1'700'000'000'000);
  EXPECT_EQ(text(*r0.key), "k1");
  EXPECT_EQ(text(*r0.value), "hello");
  ASSERT_EQ(r0.headers.size(), 1);
  for (const Header& h : r0.headers) {
    EXPECT_EQ(h.key, "trace");
    EXPECT_EQ(text(*h.value), "abc");
  }
  EXPECT_EQ(r0.bytes.size(), 24u);

  auto second = reader->next();
  ASSERT_TRUE(second.has_value() && second->has_value());
  const RecordView& r1 = **second;
  EXPECT_EQ(batch->record_offset(r1), 1);
  EXPECT_EQ(batch->record_timestamp(r1), 1'700'000'000'005);
  EXPECT_FALSE(r1.key.has_value());
  EXPECT_EQ(text(*r1.value), "world");
  EXPECT_TRUE(r1.headers.empty());

  auto end = reader->next();
  ASSERT_TRUE(end.has_value());
  EXPECT_FALSE(end->has_value());
}

TEST(GoldenBatchTest, BuilderReproducesProducerBatchByteForByte) {
  RecordBatchBuilder builder({.producer_id = 4000, .producer_epoch = 0, .base_sequence = 0});
  const Header trace{"trace", as_bytes("abc")};
  builder.append(1'700'000'000'000, as_bytes("k1"), as_bytes("hello"), {&trace, 1});
  builder.append(1'700'000'000'005, std::nullopt, as_bytes("world"));
  EXPECT_EQ(builder.build(), idempotent_two_record_batch());
}

TEST(GoldenBatchTest, CommitMarkerDecodesAndIsBuiltIdentically) {
  const auto bytes = commit_marker_batch();
  auto batch = RecordBatchView::from(bytes);
  ASSERT_TRUE(batch.has_value());
  EXPECT_TRUE(batch->validate().has_value());
  EXPECT_TRUE(batch->is_control());
  EXPECT_TRUE(batch->is_transactional());
  EXPECT_EQ(batch->producer_epoch(), 3);
  EXPECT_EQ(batch->last_sequence(), -1);

  auto status = for_each_record(*batch, [](const RecordView& r) {
    auto key = parse_control_key(*r.key);
    ASSERT_TRUE(key.has_value());
    EXPECT_TRUE(key->is(ControlRecordType::commit));
    auto marker = parse_end_txn_marker(*r.value);
    ASSERT_TRUE(marker.has_value());
    EXPECT_EQ(marker->coordinator_epoch, 7);
  });
  EXPECT_TRUE(status.has_value());

  EXPECT_EQ(build_end_txn_marker_batch({.producer_id = 4000,
                                        .producer_epoch = 3,
                                        .coordinator_epoch = 7,
                                        .commit = true,
                                        .timestamp_ms = 1'700'000'000'100}),
            bytes);
}

TEST(GoldenBatchTest, FlippingAnyCoveredByteBreaksTheCrc) {
  const auto golden = idempotent_two_record_batch();
  for (std::size_t i = kAttributesOffset; i < golden.size(); ++i) {
    auto bytes = golden;
    bytes[i] ^= std::byte{0x01};
    auto batch = RecordBatchView::from(bytes);
    ASSERT_TRUE(batch.has_value());
    EXPECT_EQ(batch->validate().error(), Errc::crc_mismatch) << "byte " << i;
  }
}

}  // namespace
}  // namespace weir::record
