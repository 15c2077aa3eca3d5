// OffsetIndex, TimeIndex and TransactionIndex: formats (golden bytes), lookups, loading.
#include <gtest/gtest.h>

#include "storage/offset_index.h"
#include "storage/time_index.h"
#include "storage/transaction_index.h"
#include "test_util.h"

namespace weir::storage {
namespace {

using testing::file_bytes;
using testing::hex;
using testing::TempDir;

TrackedFile open_file(const std::filesystem::path& p, OpenMode mode = OpenMode::kCreate) {
  auto f = PosixFileSystem::instance().open(p, mode);
  EXPECT_TRUE(f.has_value());
  return TrackedFile(std::move(*f));
}

TEST(OffsetIndexTest, EntriesAreRelativeOffsetThenPositionBigEndian) {
  std::byte entry[OffsetIndex::kEntrySize];
  OffsetIndex::encode_entry(0x01020304, 0x0a0b0c0d, entry);
  EXPECT_EQ(hex(entry), "010203040a0b0c0d");
}

TEST(OffsetIndexTest, WritesGoldenBytes) {
  TempDir dir;
  OffsetIndex index(open_file(dir.path() / "i.index"), 1000, 100);
  ASSERT_TRUE(index.reset({}).has_value());
  const OffsetPosition entries[] = {{1004, 4200}, {1009, 8500}};
  ASSERT_TRUE(index.append(entries).has_value());
  EXPECT_EQ(hex(file_bytes(dir.path() / "i.index")),
            "00000004"
            "00001068"
            "00000009"
            "00002134");
}

TEST(OffsetIndexTest, LookupFindsLastEntryAtOrBelowTarget) {
  TempDir dir;
  OffsetIndex index(open_file(dir.path() / "i.index"), 100, 100);
  ASSERT_TRUE(index.reset({}).has_value());
  const OffsetPosition entries[] = {{110, 5000}, {120, 9000}};
  ASSERT_TRUE(index.append(entries).has_value());
  EXPECT_EQ(index.lookup(99), (OffsetPosition{100, 0}));
  EXPECT_EQ(index.lookup(109), (OffsetPosition{100, 0}));
  EXPECT_EQ(index.lookup(110), (OffsetPosition{110, 5000}));
  EXPECT_EQ(index.lookup(119), (OffsetPosition{110, 5000}));
  EXPECT_EQ(index.lookup(500), (OffsetPosition{120, 9000}));
}

TEST(OffsetIndexTest, LastWholeWithinKnowsABatchEndsByTheNextEntryOrTheLogEnd) {
  TempDir dir;
  OffsetIndex index(open_file(dir.path() / "i.index"), 100, 100);
  ASSERT_TRUE(index.reset({}).has_value());
  const OffsetPosition entries[] = {{110, 5000}, {120, 9000}, {130, 13000}};
  ASSERT_TRUE(index.append(entries).has_value());
  constexpr std::int64_t kAny = INT64_MAX;
  // The batch at 5000 may run up to 9000.
  EXPECT_EQ(index.last_whole_within(4999, kAny, 15000), std::nullopt);
  EXPECT_EQ(index.last_whole_within(8999, kAny, 15000), std::nullopt);
  EXPECT_EQ(index.last_whole_within(9000, kAny, 15000), (OffsetPosition{110, 5000}));
  EXPECT_EQ(index.last_whole_within(14999, kAny, 15000), (OffsetPosition{120, 9000}));
  // The last entry's batch ends by the end of the log.
  EXPECT_EQ(index.last_whole_within(15000, kAny, 15000), (OffsetPosition{130, 13000}));
  EXPECT_EQ(index.last_whole_within(kAny, kAny, 15000), (OffsetPosition{130, 13000}));
  // Only batches whose last offset is below the bound.
  EXPECT_EQ(index.last_whole_within(kAny, 131, 15000), (OffsetPosition{130, 13000}));
  EXPECT_EQ(index.last_whole_within(kAny, 130, 15000), (OffsetPosition{120, 9000}));
  EXPECT_EQ(index.last_whole_within(kAny, 111, 15000), (OffsetPosition{110, 5000}));
  EXPECT_EQ(index.last_whole_within(kAny, 110, 15000), std::nullopt);
  OffsetIndex empty(open_file(dir.path() / "e.index"), 100, 100);
  ASSERT_TRUE(empty.reset({}).has_value());
  EXPECT_EQ(empty.last_whole_within(kAny, kAny, 15000), std::nullopt);
}

TEST(OffsetIndexTest, LoadReadsBackWhatWasWritten) {
  TempDir dir;
  {
    OffsetIndex index(open_file(dir.path() / "i.index"), 100, 100);
    ASSERT_TRUE(index.reset({}).has_value());
    const OffsetPosition entries[] = {{110, 5000}, {120, 9000}};
    ASSERT_TRUE(index.append(entries).has_value());
  }
  OffsetIndex index(open_file(dir.path() / "i.index"), 100, 100);
  ASSERT_TRUE(index.load(10000).has_value());
  EXPECT_EQ(index.entries(), 2u);
  EXPECT_EQ(index.last_entry(), (OffsetPosition{120, 9000}));
}

TEST(OffsetIndexTest, UntrimmedZeroTailFromKafkaIsCutOff) {
  TempDir dir;
  std::vector<std::byte> bytes(8 * 10, std::byte{0});
  OffsetIndex::encode_entry(3, 4100, bytes.data());
  OffsetIndex::encode_entry(7, 8300, bytes.data() + 8);
  testing::write_bytes_at(dir.path() / "i.index", 0, bytes);
  OffsetIndex index(open_file(dir.path() / "i.index"), 0, 100);
  ASSERT_TRUE(index.load(10000).has_value());
  EXPECT_EQ(index.entries(), 2u);
  EXPECT_EQ(file_bytes(dir.path() / "i.index").size(), 16u);
}

TEST(OffsetIndexTest, PartialTrailingEntryIsCutOff) {
  TempDir dir;
  std::vector<std::byte> bytes(8 + 3, std::byte{0});
  OffsetIndex::encode_entry(3, 4100, bytes.data());
  testing::write_bytes_at(dir.path() / "i.index", 0, bytes);
  OffsetIndex index(open_file(dir.path() / "i.index"), 0, 100);
  ASSERT_TRUE(index.load(10000).has_value());
  EXPECT_EQ(index.entries(), 1u);
}

TEST(OffsetIndexTest, OutOfOrderOrOutOfRangeEntriesAreCorrupt) {
  TempDir dir;
  std::vector<std::byte> bytes(16);
  OffsetIndex::encode_entry(7, 8300, bytes.data());
  OffsetIndex::encode_entry(3, 9000, bytes.data() + 8);
  testing::write_bytes_at(dir.path() / "a.index", 0, bytes);
  OffsetIndex a(open_file(dir.path() / "a.index"), 0, 100);
  EXPECT_EQ(a.load(10000).error(), Errc::kCorruptMessage);

  OffsetIndex::encode_entry(3, 4000, bytes.data());
  OffsetIndex::encode_entry(7, 20000, bytes.data() + 8);
  testing::write_bytes_at(dir.path() / "b.index", 0, bytes);
  OffsetIndex b(open_file(dir.path() / "b.index"), 0, 100);
  EXPECT_EQ(b.load(10000).error(), Errc::kCorruptMessage) << "position past the log's end";
}

TEST(OffsetIndexTest, TruncateToDropsEntriesAtOrAfterOffset) {
  TempDir dir;
  OffsetIndex index(open_file(dir.path() / "i.index"), 0, 100);
  ASSERT_TRUE(index.reset({}).has_value());
  const OffsetPosition entries[] = {{10, 5000}, {20, 9000}, {30, 13000}};
  ASSERT_TRUE(index.append(entries).has_value());
  ASSERT_TRUE(index.truncate_to(20).has_value());
  EXPECT_EQ(index.entries(), 1u);
  EXPECT_EQ(file_bytes(dir.path() / "i.index").size(), 8u);
}

TEST(OffsetIndexTest, FullIndexDropsFurtherEntries) {
  TempDir dir;
  OffsetIndex index(open_file(dir.path() / "i.index"), 0, 2);
  ASSERT_TRUE(index.reset({}).has_value());
  const OffsetPosition entries[] = {{10, 5000}, {20, 9000}, {30, 13000}};
  ASSERT_TRUE(index.append(entries).has_value());
  EXPECT_EQ(index.entries(), 2u);
  EXPECT_TRUE(index.full());
}

TEST(TimeIndexTest, EntriesAreTimestampThenRelativeOffsetBigEndian) {
  std::byte entry[TimeIndex::kEntrySize];
  TimeIndex::encode_entry(0x0102030405060708, 0x0a0b0c0d, entry);
  EXPECT_EQ(hex(entry),
            "0102030405060708"
            "0a0b0c0d");
}

TEST(TimeIndexTest, WritesGoldenBytesAndLooksUp) {
  TempDir dir;
  TimeIndex index(open_file(dir.path() / "t.timeindex"), 50, 100);
  ASSERT_TRUE(index.reset({}).has_value());
  const TimestampOffsetEntry entries[] = {{1000, 55}, {2000, 60}};
  ASSERT_TRUE(index.append(entries).has_value());
  EXPECT_EQ(hex(file_bytes(dir.path() / "t.timeindex")),
            "00000000000003e8"
            "00000005"
            "00000000000007d0"
            "0000000a");
  EXPECT_EQ(index.lookup(999), (TimestampOffsetEntry{-1, 50}));
  EXPECT_EQ(index.lookup(1000), (TimestampOffsetEntry{1000, 55}));
  EXPECT_EQ(index.lookup(1999), (TimestampOffsetEntry{1000, 55}));
  EXPECT_EQ(index.lookup(5000), (TimestampOffsetEntry{2000, 60}));
  auto last = index.read_last_entry();
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ(*last, (TimestampOffsetEntry{2000, 60}));
}

TEST(TimeIndexTest, OnlyLargerTimestampsAreAppended) {
  TempDir dir;
  TimeIndex index(open_file(dir.path() / "t.timeindex"), 0, 100);
  ASSERT_TRUE(index.reset({}).has_value());
  EXPECT_FALSE(index.would_append(-1, {})) << "no timestamp, no entry";
  EXPECT_TRUE(index.would_append(0, {}));
  const TimestampOffsetEntry entries[] = {{1000, 5}};
  ASSERT_TRUE(index.append(entries).has_value());
  EXPECT_FALSE(index.would_append(1000, {}));
  EXPECT_TRUE(index.would_append(1001, {}));
  const TimestampOffsetEntry pending[] = {{1500, 7}};
  EXPECT_FALSE(index.would_append(1400, pending));
}

TEST(TimeIndexTest, LoadRejectsDecreasingTimestamps) {
  TempDir dir;
  std::vector<std::byte> bytes(24);
  TimeIndex::encode_entry(2000, 5, bytes.data());
  TimeIndex::encode_entry(1000, 9, bytes.data() + 12);
  testing::write_bytes_at(dir.path() / "t.timeindex", 0, bytes);
  TimeIndex index(open_file(dir.path() / "t.timeindex"), 0, 100);
  EXPECT_EQ(index.load().error(), Errc::kCorruptMessage);
}

TEST(TransactionIndexTest, EntryIs34BytesInKafkasLayout) {
  std::byte entry[TransactionIndex::kEntrySize];
  TransactionIndex::encode_entry(AbortedTxn{1, 126, 134, 135}, entry);
  // The entry Apache Kafka 4.3.1 wrote for the aborted transaction in tests' Kafka fixture.
  EXPECT_EQ(hex(entry),
            "0000"
            "0000000000000001"
            "000000000000007e"
            "0000000000000086"
            "0000000000000087");
}

TEST(TransactionIndexTest, AppendCollectAndTruncate) {
  TempDir dir;
  const auto path = dir.path() / "00000000000000000000.txnindex";
  TransactionIndex index(PosixFileSystem::instance(), path);
  ASSERT_TRUE(index.open_existing().has_value());
  EXPECT_FALSE(index.exists()) << "created on first use";
  ASSERT_TRUE(index.append({7, 10, 20, 21}).has_value());
  ASSERT_TRUE(index.append({8, 15, 30, 31}).has_value());
  EXPECT_EQ(index.append({9, 16, 30, 31}).error(), Errc::kInvalidRecord) << "last offsets must increase";
  EXPECT_EQ(file_bytes(path).size(), 2 * TransactionIndex::kEntrySize);

  auto found = index.collect(21, 40);
  ASSERT_TRUE(found.has_value());
  ASSERT_EQ(found->aborted.size(), 1u);
  EXPECT_EQ(found->aborted[0].producer_id, 8);
  EXPECT_FALSE(found->complete);
  found = index.collect(0, 21);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->aborted.size(), 1u);
  EXPECT_TRUE(found->complete) << "the first entry's last stable offset reaches the bound";

  TransactionIndex reopened(PosixFileSystem::instance(), path);
  ASSERT_TRUE(reopened.open_existing().has_value());
  auto all = reopened.all();
  ASSERT_TRUE(all.has_value());
  EXPECT_EQ(all->size(), 2u);
  ASSERT_TRUE(reopened.truncate_to(25).has_value());
  EXPECT_EQ(reopened.all()->size(), 1u);
  EXPECT_EQ(file_bytes(path).size(), TransactionIndex::kEntrySize);
}

}  // namespace
}  // namespace weir::storage
