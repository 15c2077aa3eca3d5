// Kafka's producer state snapshot format: round trips, the files a real Kafka 4.3.1 wrote, and
// damaged files.
#include <gtest/gtest.h>

#include <filesystem>

#include "base/crc32c.h"
#include "storage/file.h"
#include "storage/producer_snapshot.h"

namespace weir::storage {
namespace {

namespace fs = std::filesystem;

const fs::path kKafkaPartition = fs::path(WEIR_STORAGE_TESTDATA) / "kafka-4.3.1" / "fix-topic.v1-0";

std::vector<std::byte> file_bytes(const fs::path& path) {
  auto text = storage::read_file(storage::PosixFileSystem::instance(), path, 1 << 20);
  EXPECT_TRUE(text.has_value()) << path;
  if (!text) return {};
  const ByteSpan b = as_bytes(*text);
  return {b.begin(), b.end()};
}

TEST(ProducerSnapshot, FileNamesAreTwentyDigitOffsets) {
  EXPECT_EQ(snapshot_file_name(4711), "00000000000000004711.snapshot");
  EXPECT_EQ(parse_snapshot_file_name("00000000000000004711.snapshot"), 4711);
  EXPECT_EQ(parse_snapshot_file_name("00000000000000004711.snapshot.tmp"), std::nullopt);
  EXPECT_EQ(parse_snapshot_file_name("00000000000000004711.log"), std::nullopt);
  EXPECT_EQ(parse_snapshot_file_name(".snapshot"), std::nullopt);
  EXPECT_EQ(parse_snapshot_file_name("x0000000000000004711.snapshot"), std::nullopt);
}

TEST(ProducerSnapshot, RoundTripKeepsEachProducersLastBatchAndTransactionState) {
  ProducerStateTable t;
  t.update({BatchInfo{7, 2, 0, 2, 3, 1000}, BatchInfo{7, 2, 3, 4, 2, 1001}}, 100);  // offsets 100..104
  t.update({BatchInfo{9, 0, 2147483646, 1, 4, 2000, /*transactional=*/true}}, 200);      // wraps; open txn
  t.replay(LoggedBatch{11, 3, -1, -1, 300, 300, 3000, true, true, 5});                     // marker only

  auto decoded = decode_snapshot(encode_snapshot(t));
  ASSERT_TRUE(decoded.has_value());
  ASSERT_EQ(decoded->size(), 3u);
  const auto& [id7, e7] = (*decoded)[0];
  EXPECT_EQ(id7, 7);
  EXPECT_EQ(e7.epoch, 2);
  ASSERT_EQ(e7.batches.size(), 1u);  // only the last batch is kept, as in Kafka's format
  EXPECT_EQ(e7.batches[0].first_seq, 3);
  EXPECT_EQ(e7.batches[0].last_seq, 4);
  EXPECT_EQ(e7.batches[0].first_offset, 103);
  EXPECT_EQ(e7.batches[0].last_offset, 104);
  EXPECT_EQ(e7.last_timestamp_ms, 1001);
  EXPECT_EQ(e7.coordinator_epoch, -1);
  EXPECT_FALSE(e7.current_txn_first_offset);

  const auto& [id9, e9] = (*decoded)[1];
  EXPECT_EQ(id9, 9);
  ASSERT_EQ(e9.batches.size(), 1u);
  EXPECT_EQ(e9.batches[0].first_seq, 2147483646);  // the first sequence comes back across the wrap
  EXPECT_EQ(e9.batches[0].last_seq, 1);
  EXPECT_EQ(e9.batches[0].first_offset, 200);
  EXPECT_EQ(e9.current_txn_first_offset, 200);

  const auto& [id11, e11] = (*decoded)[2];
  EXPECT_EQ(id11, 11);
  EXPECT_EQ(e11.epoch, 3);
  EXPECT_TRUE(e11.batches.empty());
  EXPECT_EQ(e11.coordinator_epoch, 5);
  EXPECT_EQ(e11.last_timestamp_ms, 3000);
}

TEST(ProducerSnapshot, AnEmptyTableIsAHeaderOnly) {
  const auto bytes = encode_snapshot(ProducerStateTable{});
  EXPECT_EQ(bytes.size(), kSnapshotHeaderSize);
  auto decoded = decode_snapshot(bytes);
  ASSERT_TRUE(decoded.has_value());
  EXPECT_TRUE(decoded->empty());
}

// Kafka 4.3.1's own snapshots (see tests/unit/storage/testdata/README.md): decoded, and encoded
// again byte for byte (Kafka's hash order is the id order for these two producers).
TEST(ProducerSnapshot, ReadsAndWritesKafkasFilesByteForByte) {
  for (std::int64_t offset : {40, 80, 120, 125, 147}) {
    SCOPED_TRACE(offset);
    const auto bytes = file_bytes(kKafkaPartition / snapshot_file_name(offset));
    auto decoded = decode_snapshot(bytes);
    ASSERT_TRUE(decoded.has_value()) << to_string(decoded.error());
    ProducerStateTable t;
    for (auto& [id, e] : *decoded) t.restore(id, e);
    EXPECT_EQ(encode_snapshot(t), bytes);
  }
  auto at147 = decode_snapshot(file_bytes(kKafkaPartition / snapshot_file_name(147)));
  ASSERT_TRUE(at147.has_value());
  ASSERT_EQ(at147->size(), 2u);
  const auto& [idempotent, e0] = (*at147)[0];
  EXPECT_EQ(idempotent, 0);
  EXPECT_EQ(e0.batches.at(0).last_seq, 129);
  EXPECT_EQ(e0.batches.at(0).last_offset, 141);
  const auto& [transactional, e1] = (*at147)[1];
  EXPECT_EQ(transactional, 1);
  EXPECT_EQ(e1.batches.at(0).first_offset, 126);  // the aborted transaction's batch
  EXPECT_EQ(e1.batches.at(0).last_offset, 130);
  EXPECT_EQ(e1.coordinator_epoch, 0);
  EXPECT_FALSE(e1.current_txn_first_offset);
  // At 125 the commit marker was not written yet: the transaction is open from 120.
  auto at125 = decode_snapshot(file_bytes(kKafkaPartition / snapshot_file_name(125)));
  ASSERT_TRUE(at125.has_value());
  EXPECT_EQ((*at125)[1].second.current_txn_first_offset, 120);
}

TEST(ProducerSnapshot, DamagedFilesAreRefused) {
  ProducerStateTable t;
  t.update({BatchInfo{7, 0, 0, 0, 1, 1000}}, 0);
  const auto good = encode_snapshot(t);

  auto flipped = good;
  flipped[20] ^= std::byte{1};
  EXPECT_EQ(decode_snapshot(flipped).error(), SnapshotError::kCrc);

  auto version = good;
  version[1] = std::byte{2};
  EXPECT_EQ(decode_snapshot(version).error(), SnapshotError::kVersion);

  EXPECT_EQ(decode_snapshot(ByteSpan(good).first(5)).error(), SnapshotError::kTruncated);
  EXPECT_EQ(decode_snapshot(ByteSpan{}).error(), SnapshotError::kTruncated);

  // A count larger than the entries present (with a CRC that matches what is there).
  ProducerStateTable two;
  two.update({BatchInfo{7, 0, 0, 0, 1, 1000}, BatchInfo{8, 0, 0, 0, 1, 1000}}, 0);
  auto cut = encode_snapshot(two);
  cut.resize(cut.size() - kSnapshotEntrySize);
  const std::uint32_t crc = crc32c(ByteSpan(cut).subspan(6));
  store_be<std::uint32_t>(cut.data() + 2, crc);
  EXPECT_EQ(decode_snapshot(cut).error(), SnapshotError::kTruncated);
}

}  // namespace
}  // namespace weir::storage
