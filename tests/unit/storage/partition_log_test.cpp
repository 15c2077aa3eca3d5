// PartitionLog: appends, validation, reads, rolls, retention, deletion, truncation, lookups.
#include "storage/partition_log.h"

#include <gtest/gtest.h>

#include <thread>

#include "protocol/record/compression.h"
#include "protocol/record/control_record.h"
#include "test_util.h"

namespace weir::storage {
namespace {

using testing::make_batch;
using testing::read_all;
using testing::read_batches;
using testing::TempDir;
using testing::values;

class PartitionLogTest : public ::testing::Test {
 protected:
  TempDir tmp;
  PosixFileSystem fs;
  ManualClock clock;
  LogConfig config;
  std::unique_ptr<PartitionLog> log;

  std::filesystem::path dir() const { return tmp.path() / "orders-0"; }
  std::int64_t now() const { return clock.wall_ms(); }

  void open(RecoveryHint hint = {.clean_shutdown = true}) {
    log.reset();
    auto opened = PartitionLog::open(fs, dir(), config, clock, hint);
    ASSERT_TRUE(opened.has_value()) << opened.error();
    log = std::move(*opened);
  }
  void SetUp() override { open(); }

  AppendInfo append(int records, std::int64_t first_ts = -2, std::size_t value_bytes = 16, std::int32_t epoch = 0) {
    auto batch = make_batch(records, first_ts == -2 ? now() : first_ts, value_bytes);
    auto info = log->append_as_leader(batch, epoch);
    EXPECT_TRUE(info.has_value()) << info.error();
    return info.value_or(AppendInfo{});
  }

  // Expects the append to fail with `error` and to leave the log as it was.
  void expect_rejected(std::vector<std::byte> batches, Errc error) {
    const std::int64_t leo = log->log_end_offset();
    const std::int64_t size = log->size_bytes();
    const auto before = read_all(*log);
    auto info = log->append_as_leader(batches, 0);
    ASSERT_FALSE(info.has_value());
    EXPECT_EQ(info.error(), error);
    EXPECT_EQ(log->log_end_offset(), leo);
    EXPECT_EQ(log->size_bytes(), size);
    EXPECT_EQ(read_all(*log).size(), before.size());
  }

  std::vector<std::string> segment_files() const {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir())) {
      if (e.path().extension() == ".log") names.push_back(e.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }
};

// ------------------------------------------------------------------------------------ appends

TEST_F(PartitionLogTest, NewLogIsEmptyWithOneSegment) {
  EXPECT_EQ(log->log_start_offset(), 0);
  EXPECT_EQ(log->log_end_offset(), 0);
  EXPECT_EQ(log->size_bytes(), 0);
  EXPECT_EQ(segment_files(), std::vector<std::string>{"00000000000000000000.log"});
  EXPECT_TRUE(std::filesystem::exists(dir() / "00000000000000000000.index"));
  EXPECT_TRUE(std::filesystem::exists(dir() / "00000000000000000000.timeindex"));
  EXPECT_FALSE(std::filesystem::exists(dir() / "00000000000000000000.txnindex"));
}

TEST_F(PartitionLogTest, AppendAssignsOffsetsFromTheLogEndOffset) {
  AppendInfo a = append(3);
  EXPECT_EQ(a.first_offset, 0);
  EXPECT_EQ(a.last_offset, 2);
  EXPECT_EQ(a.batches, 1);
  EXPECT_EQ(a.log_append_time_ms, -1);
  EXPECT_EQ(a.max_timestamp_ms, now() + 2);
  AppendInfo b = append(2);
  EXPECT_EQ(b.first_offset, 3);
  EXPECT_EQ(b.last_offset, 4);
  EXPECT_EQ(log->log_end_offset(), 5);
  auto all = read_all(*log);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].base_offset, 0);
  EXPECT_EQ(all[1].base_offset, 3);
  EXPECT_EQ(values(all[1].bytes), (std::vector<std::string>{"v0-xxxxxxxxxxxxx", "v1-xxxxxxxxxxxxx"}));
}

TEST_F(PartitionLogTest, AppendOfConcatenatedBatchesIsOneAppend) {
  auto batches = testing::concat({make_batch(2, now()), make_batch(3, now())});
  auto info = log->append_as_leader(batches, 0);
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->batches, 2);
  EXPECT_EQ(info->first_offset, 0);
  EXPECT_EQ(info->last_offset, 4);
  auto all = read_all(*log);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[1].base_offset, 2);
}

TEST_F(PartitionLogTest, EmptyAppendAppendsNothing) {
  std::vector<std::byte> none;
  auto info = log->append_as_leader(none, 0);
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->batches, 0);
  EXPECT_EQ(info->first_offset, -1);
  EXPECT_EQ(log->log_end_offset(), 0);
}

TEST_F(PartitionLogTest, AppendStampsTheLeaderEpochAndRecordsWhereEachEpochStarts) {
  append(2, -2, 16, 3);
  append(2, -2, 16, 3);
  append(1, -2, 16, 5);
  auto all = read_all(*log);
  auto view = record::RecordBatchView::from(all[0].bytes);
  EXPECT_EQ(view->partition_leader_epoch(), 3);
  EXPECT_EQ(log->epoch_entries(), (std::vector<EpochEntry>{{3, 0}, {5, 4}}));
  EXPECT_EQ(log->end_offset_for_epoch(3), (std::pair<std::int32_t, std::int64_t>{3, 4}));
  EXPECT_EQ(log->end_offset_for_epoch(5), (std::pair<std::int32_t, std::int64_t>{5, 5}));
  EXPECT_EQ(log->latest_epoch(), 5);
  EXPECT_EQ(as_string_view(testing::file_bytes(dir() / "leader-epoch-checkpoint")), "0\n2\n3 0\n5 4\n");
}

TEST_F(PartitionLogTest, CreateTimeMaxTimestampIsTakenFromTheRecords) {
  auto batch = make_batch(3, 5000);
  auto view = record::MutableRecordBatchView::from(batch);
  view->set_max_timestamp(record::TimestampType::create_time, 1);  // a producer's wrong header
  config.timestamp_before_max_ms = INT64_MAX;
  ASSERT_TRUE(log->append_as_leader(batch, 0).has_value());
  const auto all = read_all(*log);
  auto stored = record::RecordBatchView::from(all[0].bytes);
  EXPECT_EQ(stored->max_timestamp(), 5002);
  EXPECT_TRUE(stored->validate(record::BatchOrigin::log).has_value());
}

TEST_F(PartitionLogTest, LogAppendTimeStampsEveryBatch) {
  config.log_append_time = true;
  log->set_config(config);
  auto info = append(3, 1000);
  EXPECT_EQ(info.log_append_time_ms, now());
  EXPECT_EQ(info.max_timestamp_ms, now());
  const auto all = read_all(*log);
  auto stored = record::RecordBatchView::from(all[0].bytes);
  EXPECT_EQ(stored->timestamp_type(), record::TimestampType::log_append_time);
  EXPECT_EQ(stored->max_timestamp(), now());
  EXPECT_TRUE(stored->validate(record::BatchOrigin::log).has_value());
}

TEST_F(PartitionLogTest, AppendWithOffsetsKeepsTheOffsets) {
  append(3);
  auto marker = record::build_end_txn_marker_batch({.producer_id = 9,
                                                    .producer_epoch = 1,
                                                    .commit = false,
                                                    .timestamp_ms = now(),
                                                    .base_offset = 3,
                                                    .partition_leader_epoch = 0});
  auto info = log->append_with_offsets(marker);
  ASSERT_TRUE(info.has_value()) << info.error();
  EXPECT_EQ(info->first_offset, 3);
  EXPECT_EQ(log->log_end_offset(), 4);
  auto below = record::build_end_txn_marker_batch({.producer_id = 9, .producer_epoch = 1, .base_offset = 2});
  EXPECT_EQ(log->append_with_offsets(below).error(), Errc::kInvalidRecord) << "offsets below the LEO";
  auto gap = record::build_end_txn_marker_batch(
      {.producer_id = 9, .producer_epoch = 1, .base_offset = 10, .partition_leader_epoch = 2});
  ASSERT_TRUE(log->append_with_offsets(gap).has_value()) << "a gap is allowed (replication of compacted logs)";
  EXPECT_EQ(log->log_end_offset(), 11);
  EXPECT_EQ(log->epoch_entries().back(), (EpochEntry{2, 10}));
}

// --------------------------------------------------------------------------------- validation

TEST_F(PartitionLogTest, BadCrcIsCorruptAndNothingIsAppended) {
  append(1);
  auto batch = make_batch(2, now());
  batch.back() ^= std::byte{1};
  expect_rejected(batch, Errc::kCorruptMessage);
}

TEST_F(PartitionLogTest, PartialBatchIsCorrupt) {
  auto batch = make_batch(2, now());
  batch.resize(batch.size() - 1);
  expect_rejected(batch, Errc::kCorruptMessage);
  auto two = testing::concat({make_batch(1, now()), make_batch(1, now())});
  two.resize(two.size() - 3);
  expect_rejected(two, Errc::kCorruptMessage);
}

TEST_F(PartitionLogTest, BatchLengthBelowTheMinimumIsCorrupt) {
  auto batch = make_batch(1, now());
  store_be<std::int32_t>(batch.data() + record::kBatchLengthOffset, 10);
  expect_rejected(batch, Errc::kCorruptMessage);
}

TEST_F(PartitionLogTest, NonZeroBaseOffsetFromAClientIsInvalid) {
  auto batch = make_batch(2, now());
  record::MutableRecordBatchView::from(batch)->set_base_offset(5);
  expect_rejected(batch, Errc::kInvalidRecord);
}

TEST_F(PartitionLogTest, RecordCountDisagreeingWithOffsetsIsInvalid) {
  auto batch = make_batch(3, now());
  store_be<std::int32_t>(batch.data() + record::kRecordsCountOffset, 2);
  record::MutableRecordBatchView::from(batch)->update_crc();
  expect_rejected(batch, Errc::kInvalidRecord);
}

TEST_F(PartitionLogTest, MalformedRecordIsInvalid) {
  auto batch = make_batch(2, now());
  // The first record's length varint (just after the header) claims more bytes than exist.
  batch[record::kHeaderSize] = std::byte{0x7e};
  record::MutableRecordBatchView::from(batch)->update_crc();
  expect_rejected(batch, Errc::kInvalidRecord);
}

TEST_F(PartitionLogTest, ControlBatchFromAClientIsInvalid) {
  auto marker = record::build_end_txn_marker_batch({.producer_id = 1, .producer_epoch = 0, .timestamp_ms = now()});
  expect_rejected(marker, Errc::kInvalidRecord);
}

TEST_F(PartitionLogTest, OldMagicIsInvalid) {
  auto batch = make_batch(1, now());
  batch[record::kMagicOffset] = std::byte{1};
  expect_rejected(batch, Errc::kInvalidRecord);
}

TEST_F(PartitionLogTest, UnknownCompressionCodecIsUnsupported) {
  auto batch = make_batch(1, now());
  store_be<std::int16_t>(batch.data() + record::kAttributesOffset, 7);
  record::MutableRecordBatchView::from(batch)->update_crc();
  expect_rejected(batch, Errc::kUnsupportedCompression);
}

TEST_F(PartitionLogTest, BatchAboveMaxMessageBytesIsTooLarge) {
  config.max_message_bytes = 500;
  log->set_config(config);
  expect_rejected(make_batch(1, now(), 600), Errc::kMessageTooLarge);
  append(1, -2, 100);
}

TEST_F(PartitionLogTest, AppendLargerThanASegmentIsRecordListTooLarge) {
  config.segment_bytes = 1000;
  config.max_message_bytes = 100000;
  log->set_config(config);
  expect_rejected(testing::concat({make_batch(1, now(), 600), make_batch(1, now(), 600)}), Errc::kRecordListTooLarge);
}

TEST_F(PartitionLogTest, TimestampsOutsideTheAllowedWindowAreInvalid) {
  config.timestamp_before_max_ms = 60'000;
  config.timestamp_after_max_ms = 1'000;
  log->set_config(config);
  expect_rejected(make_batch(1, now() - 60'001), Errc::kInvalidTimestamp);
  expect_rejected(make_batch(1, now() + 1'001), Errc::kInvalidTimestamp);
  append(1, now() - 60'000);
  append(1, now() + 1'000);
  // One bad record spoils the batch.
  auto batch = make_batch(3, now() - 59'999);  // the last record is fine, the first two too
  ASSERT_TRUE(log->append_as_leader(batch, 0).has_value());
  expect_rejected(make_batch(3, now() + 999), Errc::kInvalidTimestamp);
}

TEST_F(PartitionLogTest, RecordsWithoutTimestampAreNotCheckedForCreateTime) {
  config.timestamp_before_max_ms = 1;
  log->set_config(config);
  append(1, -1);
}

TEST_F(PartitionLogTest, LogAppendTimeBatchFromAProducerIsInvalidOnALogAppendTimeTopic) {
  config.log_append_time = true;
  log->set_config(config);
  auto batch =
      make_batch(1, now(), 16, {.timestamp_type = record::TimestampType::log_append_time, .log_append_time_ms = now()});
  expect_rejected(batch, Errc::kInvalidTimestamp);
}

TEST_F(PartitionLogTest, ABadBatchRejectsTheWholeAppend) {
  auto bad = make_batch(1, now());
  bad.back() ^= std::byte{1};
  expect_rejected(testing::concat({make_batch(2, now()), bad}), Errc::kCorruptMessage);
}

// ------------------------------------------------------------------------- compressed batches

std::vector<std::byte> gzipped(const std::vector<std::byte>& plain) {
  auto packed = record::compress_batch(*record::RecordBatchView::from(plain), record::Compression::gzip);
  EXPECT_TRUE(packed.has_value());
  return *packed;
}

std::size_t records_section_bytes(const std::vector<std::byte>& batch) {
  return record::RecordBatchView::from(batch)->records_bytes().size();
}

TEST_F(PartitionLogTest, CompressedBatchBeyondTheDecompressionLimitsIsRefusedByLimit) {
  const auto plain = make_batch(50, now(), 1000);
  const auto packed = gzipped(plain);
  const std::size_t decompressed = records_section_bytes(plain);
  const std::size_t ratio = decompressed / records_section_bytes(packed);
  ASSERT_GT(ratio, 4u);
  config.decompression = {decompressed - 1, 0};
  log->set_config(config);
  expect_rejected(packed, Errc::kDecompressedBatchTooLarge);
  config.decompression = {decompressed, static_cast<std::uint32_t>(ratio / 2)};
  log->set_config(config);
  expect_rejected(packed, Errc::kCompressionRatioTooHigh);
  config.decompression = {decompressed, static_cast<std::uint32_t>(ratio + 1)};
  log->set_config(config);
  auto accepted = packed;
  auto info = log->append_as_leader(accepted, 0);
  ASSERT_TRUE(info.has_value()) << info.error();
  EXPECT_EQ(info->last_offset, 49);
}

TEST_F(PartitionLogTest, CompressedRecordsAreCheckedRecordByRecord) {
  config.timestamp_before_max_ms = 60'000;
  config.cleanup_compact = true;
  log->set_config(config);
  // The middle record (of 3) is too old; the header's timestamps are fine.
  record::RecordBatchBuilder stale;
  stale.append(now(), as_bytes("a"), as_bytes("1"));
  stale.append(now() - 60'001, as_bytes("b"), as_bytes("2"));
  stale.append(now(), as_bytes("c"), as_bytes("3"));
  auto stale_batch = stale.build();
  store_be<std::int64_t>(stale_batch.data() + record::kBaseTimestampOffset, now());
  expect_rejected(gzipped(stale_batch), Errc::kInvalidTimestamp);
  // A keyless record on a compacted topic.
  record::RecordBatchBuilder keyless;
  keyless.append(now(), as_bytes("a"), as_bytes("1"));
  keyless.append(now(), std::nullopt, as_bytes("2"));
  expect_rejected(gzipped(keyless.build()), Errc::kInvalidRecord);
  // Records without a timestamp pass a CreateTime topic; the max timestamp is the records'.
  record::RecordBatchBuilder mixed;
  mixed.append(record::kNoTimestamp, as_bytes("a"), as_bytes("1"));
  mixed.append(now() - 5, as_bytes("b"), as_bytes("2"));
  auto mixed_batch = gzipped(mixed.build());
  auto info = log->append_as_leader(mixed_batch, 0);
  ASSERT_TRUE(info.has_value()) << info.error();
  EXPECT_EQ(info->max_timestamp_ms, now() - 5);
}

TEST_F(PartitionLogTest, SummariesComputedAheadOnAnotherThreadAreWhatTheAppendChecks) {
  auto batches = testing::concat(
      {gzipped(make_batch(20, now(), 200)), make_batch(2, now()), gzipped(make_batch(5, now() + 7, 50))});
  RecordsSummaries summaries;
  std::thread worker([&] { summaries = summarize_producer_batches(batches, config.decompression); });
  worker.join();
  ASSERT_EQ(summaries.size(), 3u);
  ASSERT_TRUE(summaries[0].has_value() && summaries[2].has_value());
  EXPECT_FALSE(summaries[1].has_value());  // uncompressed: checked by the append itself
  EXPECT_FALSE(summaries[0]->error.has_value());
  EXPECT_EQ(summaries[2]->max_timestamp, now() + 11);
  auto info = log->append_as_leader(batches, 0, &summaries);
  ASSERT_TRUE(info.has_value()) << info.error();
  EXPECT_EQ(info->last_offset, 26);
  EXPECT_EQ(info->max_timestamp_ms, now() + 19);
  // A summary made with tighter limits refuses the batch although the log's own limits would
  // not: the append uses the summary and does not decompress again.
  auto again = testing::concat({gzipped(make_batch(20, now(), 200))});
  RecordsSummaries tight = summarize_producer_batches(again, {100, 0});
  ASSERT_EQ(tight.size(), 1u);
  EXPECT_EQ(tight[0]->error, Errc::kDecompressedBatchTooLarge);
  auto refused = log->append_as_leader(again, 0, &tight);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error(), Errc::kDecompressedBatchTooLarge);
  EXPECT_EQ(log->log_end_offset(), 27);
}

// -------------------------------------------------------------------------------------- reads

class ReadTest : public PartitionLogTest {
 protected:
  void SetUp() override {
    PartitionLogTest::SetUp();
    for (int i = 0; i < 4; ++i) append(5);  // offsets 0-4, 5-9, 10-14, 15-19
    batch_bytes = static_cast<std::int32_t>(read_all(*log)[0].bytes.size());
  }
  std::int32_t batch_bytes = 0;
};

TEST_F(ReadTest, ReadInsideABatchReturnsThatWholeBatch) {
  auto batches = read_batches(*log, 7);
  ASSERT_TRUE(batches.has_value());
  ASSERT_EQ(batches->size(), 3u);
  EXPECT_EQ((*batches)[0].base_offset, 5);
  EXPECT_EQ((*batches)[0].last_offset, 9);
}

TEST_F(ReadTest, ReadStopsBeforeABatchThatWouldPassMaxBytes) {
  auto batches = read_batches(*log, 0, 2 * batch_bytes + batch_bytes / 2);
  ASSERT_TRUE(batches.has_value());
  ASSERT_EQ(batches->size(), 2u);
  batches = read_batches(*log, 0, 2 * batch_bytes);
  EXPECT_EQ(batches->size(), 2u) << "max_bytes is inclusive";
}

TEST_F(ReadTest, MinOneBatchReturnsExactlyAnOversizedFirstBatch) {
  auto batches = read_batches(*log, 6, 10, INT64_MAX, /*min_one=*/true);
  ASSERT_TRUE(batches.has_value());
  ASSERT_EQ(batches->size(), 1u);
  EXPECT_EQ((*batches)[0].base_offset, 5);
  auto none = log->read(6, 10, INT64_MAX, /*min_one_batch=*/false);
  ASSERT_TRUE(none.has_value());
  EXPECT_EQ(none->size_bytes, 0);
  EXPECT_TRUE(none->slices.empty());
}

TEST_F(ReadTest, ReadNeverReturnsABatchStartingAtOrAfterMaxOffset) {
  auto batches = read_batches(*log, 0, 1 << 20, /*max_offset=*/10);
  ASSERT_TRUE(batches.has_value());
  EXPECT_EQ(batches->size(), 2u);
  batches = read_batches(*log, 0, 1 << 20, /*max_offset=*/11);
  EXPECT_EQ(batches->size(), 3u) << "a batch starting below the bound is whole";
  auto empty = log->read(10, 1 << 20, 10, true);
  ASSERT_TRUE(empty.has_value());
  EXPECT_EQ(empty->size_bytes, 0);
}

// A read skips ahead to the last batch the offset index shows to fit (without reading the
// headers before it) and scans on from there: it must end where a batch-by-batch scan would.
TEST_F(PartitionLogTest, ReadsThatSkipAheadByTheIndexEndWhereABatchByBatchScanEnds) {
  config.index_interval_bytes = 700;  // an entry every few batches, and some batches with none
  open();
  struct Batch {
    std::int64_t base, last, size;
  };
  std::vector<Batch> written;
  for (int i = 0; i < 120; ++i) {
    const int records = 1 + (i * 7) % 5;
    const std::size_t value_bytes = 10 + static_cast<std::size_t>((i * 37) % 300);
    auto batch = make_batch(records, now(), value_bytes);
    auto info = log->append_as_leader(batch, 0);
    ASSERT_TRUE(info.has_value()) << info.error();
    written.push_back({info->first_offset, info->last_offset, static_cast<std::int64_t>(batch.size())});
  }
  // What a scan from the batch holding `offset` returns: whole batches while they fit in
  // max_bytes and start below max_offset (the first one even if it is larger: min_one).
  auto expected = [&](std::int64_t offset, std::int64_t max_bytes, std::int64_t max_offset) {
    std::vector<std::int64_t> bases;
    std::int64_t size = 0;
    for (const Batch& b : written) {
      if (b.last < offset) continue;
      if (b.base >= max_offset) break;
      if (!bases.empty() && size + b.size > max_bytes) break;
      bases.push_back(b.base);
      size += b.size;
    }
    return bases;
  };
  int compared = 0;
  for (std::int64_t offset = 0; offset < log->log_end_offset(); offset += 5) {
    for (std::int64_t max_bytes : {1, 300, 701, 1400, 2500, 6000, 20000, 1 << 20}) {
      for (std::int64_t max_offset : {std::int64_t{INT64_MAX}, offset + 3, offset + 40, log->log_end_offset() - 1}) {
        if (max_offset <= offset) continue;
        auto got = read_batches(*log, offset, static_cast<std::int32_t>(max_bytes), max_offset);
        ASSERT_TRUE(got.has_value());
        std::vector<std::int64_t> bases;
        for (const auto& b : *got) bases.push_back(b.base_offset);
        ASSERT_EQ(bases, expected(offset, max_bytes, max_offset))
            << "offset " << offset << " max_bytes " << max_bytes << " max_offset " << max_offset;
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, 500);
}

TEST_F(ReadTest, OffsetsOutsideTheLogAreOutOfRange) {
  EXPECT_EQ(log->read(21, 100, INT64_MAX, true).error(), Errc::kOffsetOutOfRange);
  EXPECT_EQ(log->read(-1, 100, INT64_MAX, true).error(), Errc::kOffsetOutOfRange);
  auto at_end = log->read(20, 100, INT64_MAX, true);
  ASSERT_TRUE(at_end.has_value());
  EXPECT_EQ(at_end->size_bytes, 0);
}

TEST_F(ReadTest, ReadSpansSegmentsWithOneSlicePerSegment) {
  ASSERT_TRUE(log->roll().has_value());
  append(5);
  auto read = log->read(12, 1 << 20, INT64_MAX, true);
  ASSERT_TRUE(read.has_value());
  ASSERT_EQ(read->slices.size(), 2u);
  std::vector<std::uint8_t> data;
  ASSERT_TRUE(read->append_to(data).has_value());
  auto batches = testing::split(data);
  ASSERT_EQ(batches.size(), 3u);
  EXPECT_EQ(batches[2].base_offset, 20);
  EXPECT_GE(read->slices[0].fd(), 0);
}

TEST_F(ReadTest, SlicesStayReadableAfterTheSegmentIsDeleted) {
  ASSERT_TRUE(log->roll().has_value());
  append(1);
  auto read = log->read(0, 1 << 20, 20, true);
  ASSERT_TRUE(read.has_value());
  config.file_delete_delay_ms = 0;
  log->set_config(config);
  ASSERT_TRUE(log->delete_records_before(20).has_value());
  log->apply_retention(now());
  EXPECT_FALSE(std::filesystem::exists(dir() / "00000000000000000000.log.deleted"));
  std::vector<std::uint8_t> data;
  ASSERT_TRUE(read->append_to(data).has_value());
  EXPECT_EQ(testing::split(data).size(), 4u);
}

TEST_F(ReadTest, FindOffsetByTimestampReturnsTheFirstRecordAtOrAfter) {
  ASSERT_TRUE(log->truncate_to(0).has_value());
  for (int i = 0; i < 4; ++i) append(5, 1000 * (i + 1), 16, i);  // ts 1000..1004, 2000..2004, ...
  auto found = log->find_offset_by_timestamp(2003);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(*found, (TimestampOffset{2003, 8, 1}));
  found = log->find_offset_by_timestamp(2500);
  EXPECT_EQ(*found, (TimestampOffset{3000, 10, 2}));
  EXPECT_EQ(log->find_offset_by_timestamp(0), (TimestampOffset{1000, 0, 0}));
  EXPECT_EQ(log->find_offset_by_timestamp(4005), std::nullopt);
  ASSERT_TRUE(log->delete_records_before(7).has_value());
  EXPECT_EQ(log->find_offset_by_timestamp(0), (TimestampOffset{2002, 7, 1})) << "not below the log start";
}

TEST_F(ReadTest, MaxTimestampIsTheFirstRecordHoldingIt) {
  ASSERT_TRUE(log->truncate_to(0).has_value());
  append(3, 5000, 16, 0);
  auto middle = make_batch(3, 9000);  // 9000, 9001, 9002
  ASSERT_TRUE(log->append_as_leader(middle, 4).has_value());
  ASSERT_TRUE(log->roll().has_value());
  append(3, 7000, 16, 4);
  EXPECT_EQ(log->max_timestamp(), (TimestampOffset{9002, 5, 4}));
  ASSERT_TRUE(log->truncate_to(0).has_value());
  EXPECT_EQ(log->max_timestamp(), std::nullopt);
}

// ------------------------------------------------------------------------------- segment roll

TEST_F(PartitionLogTest, RollsWhenTheNextAppendWouldPassSegmentBytes) {
  config.segment_bytes = 1000;
  log->set_config(config);
  const auto batch_size = static_cast<std::int64_t>(make_batch(1, now(), 300).size());
  for (int i = 0; i < 5; ++i) append(1, -2, 300);
  const std::int64_t per_segment = 1000 / batch_size;
  EXPECT_EQ(log->segment_count(), static_cast<std::size_t>((5 + per_segment - 1) / per_segment));
  EXPECT_EQ(segment_files().front(), "00000000000000000000.log");
  EXPECT_EQ(segment_files()[1], fmt::format("{:020}.log", per_segment));
  EXPECT_EQ(read_all(*log).size(), 5u);
}

TEST_F(PartitionLogTest, RollsWhenRecordTimestampsPassSegmentMs) {
  config.segment_ms = 60'000;
  log->set_config(config);
  append(1, now());
  append(1, now() + 60'000);
  EXPECT_EQ(log->segment_count(), 1u);
  append(1, now() + 60'001);
  EXPECT_EQ(log->segment_count(), 2u);
  EXPECT_EQ(segment_files()[1], "00000000000000000002.log");
}

TEST_F(PartitionLogTest, RollsWhenTheIndexIsFull) {
  config.index_interval_bytes = 0;  // an entry for every batch after the first
  config.segment_index_bytes = 24;  // 3 offset-index entries
  open();
  for (int i = 0; i < 6; ++i) append(1);
  EXPECT_EQ(log->segment_count(), 2u);
  EXPECT_EQ(segment_files()[1], "00000000000000000004.log");
}

TEST_F(PartitionLogTest, IndexEntriesPointAtTheBatchHoldingTheirOffset) {
  config.index_interval_bytes = 300;
  log->set_config(config);
  for (int i = 0; i < 30; ++i) append(1 + i % 3, now() + i, 50);
  ASSERT_TRUE(log->close().has_value());
  const auto index = testing::file_bytes(dir() / "00000000000000000000.index");
  const auto segment = testing::file_bytes(dir() / "00000000000000000000.log");
  ASSERT_EQ(index.size() % 8, 0u);
  ASSERT_GT(index.size(), 8u * 3);
  std::int64_t previous_position = 0;
  for (std::size_t at = 0; at < index.size(); at += 8) {
    const auto relative = load_be<std::int32_t>(index.data() + at);
    const auto position = load_be<std::int32_t>(index.data() + at + 4);
    auto view = record::RecordBatchView::from(
        ByteSpan(segment).subspan(position, *record::peek_batch_size(ByteSpan(segment).subspan(position))));
    ASSERT_TRUE(view.has_value());
    EXPECT_EQ(view->last_offset(), relative) << "Kafka's rule: the entry's offset is its batch's last offset";
    EXPECT_GT(position - previous_position, 300) << "more than index.interval.bytes apart";
    previous_position = position;
  }
  const auto time_index = testing::file_bytes(dir() / "00000000000000000000.timeindex");
  ASSERT_GE(time_index.size(), 12u);
  EXPECT_EQ(load_be<std::int64_t>(time_index.data() + time_index.size() - 12), now() + 31)
      << "a closed segment's last time entry has its largest timestamp";
}

// ---------------------------------------------------------------------------------- retention

TEST_F(PartitionLogTest, RetentionByTimeDeletesExpiredSegmentsOldestFirst) {
  config.retention_ms = 10'000;
  config.file_delete_delay_ms = 1'000;
  log->set_config(config);
  append(2, now() - 30'000);
  ASSERT_TRUE(log->roll().has_value());
  append(2, now() - 20'000);
  ASSERT_TRUE(log->roll().has_value());
  append(2, now() - 5'000);
  ASSERT_TRUE(log->roll().has_value());
  append(2, now() - 40'000);  // older again, but behind a segment that is not expired
  EXPECT_EQ(log->apply_retention(now()), 2);
  EXPECT_EQ(log->log_start_offset(), 4);
  EXPECT_EQ(log->segment_count(), 2u);
  EXPECT_TRUE(std::filesystem::exists(dir() / "00000000000000000000.log.deleted"));
  EXPECT_EQ(log->read(0, 100, INT64_MAX, true).error(), Errc::kOffsetOutOfRange);
  clock.advance_ms(1'001);
  EXPECT_EQ(log->apply_retention(clock.wall_ms()), 0);
  EXPECT_FALSE(std::filesystem::exists(dir() / "00000000000000000000.log.deleted"));
  EXPECT_FALSE(std::filesystem::exists(dir() / "00000000000000000000.index.deleted"));
}

TEST_F(PartitionLogTest, RetentionByTimeRollsAnExpiredActiveSegmentLikeKafka) {
  config.retention_ms = 10'000;
  log->set_config(config);
  append(3, now() - 20'000);
  EXPECT_EQ(log->apply_retention(now()), 1);
  EXPECT_EQ(log->log_start_offset(), 3);
  EXPECT_EQ(log->log_end_offset(), 3);
  EXPECT_EQ(log->segment_count(), 1u);
  EXPECT_EQ(log->apply_retention(now()), 0) << "an empty active segment is never deleted";
  EXPECT_EQ(append(1).first_offset, 3);
}

TEST_F(PartitionLogTest, RetentionByBytesKeepsTheLogAtMostThatLarge) {
  const auto batch_size = static_cast<std::int64_t>(make_batch(1, now(), 100).size());
  for (int i = 0; i < 5; ++i) {
    append(1, -2, 100);
    ASSERT_TRUE(log->roll().has_value());
  }
  append(1, -2, 100);
  config.retention_bytes = 3 * batch_size;
  log->set_config(config);
  EXPECT_EQ(log->apply_retention(now()), 3);
  EXPECT_EQ(log->size_bytes(), 3 * batch_size);
  EXPECT_EQ(log->log_start_offset(), 3);
}

TEST_F(PartitionLogTest, InfiniteRetentionKeepsEverything) {
  config.retention_ms = -1;
  log->set_config(config);
  append(1, 0);
  ASSERT_TRUE(log->roll().has_value());
  append(1);
  EXPECT_EQ(log->apply_retention(now()), 0);
}

TEST_F(PartitionLogTest, DeleteRecordsBeforeMovesTheLogStartAndDropsWholeSegments) {
  append(5);
  ASSERT_TRUE(log->roll().has_value());
  append(5);
  ASSERT_TRUE(log->delete_records_before(3).has_value());
  EXPECT_EQ(log->log_start_offset(), 3);
  EXPECT_EQ(log->segment_count(), 2u);
  EXPECT_EQ(log->read(2, 100, INT64_MAX, true).error(), Errc::kOffsetOutOfRange);
  auto from_start = read_batches(*log, 3);
  ASSERT_TRUE(from_start.has_value());
  EXPECT_EQ((*from_start)[0].base_offset, 0) << "the batch holding the log start is returned whole";
  ASSERT_TRUE(log->delete_records_before(7).has_value());
  EXPECT_EQ(log->segment_count(), 1u);
  EXPECT_EQ(log->delete_records_before(11).error(), Errc::kOffsetOutOfRange);
  ASSERT_TRUE(log->delete_records_before(2).has_value()) << "moving back is a no-op";
  EXPECT_EQ(log->log_start_offset(), 7);
  ASSERT_TRUE(log->delete_records_before(10).has_value());
  EXPECT_EQ(log->log_start_offset(), 10);
  EXPECT_EQ(append(1).first_offset, 10);
}

// --------------------------------------------------------------------------------- truncation

TEST_F(PartitionLogTest, TruncateToRemovesBatchesFromTheOneHoldingTheOffset) {
  append(3);
  append(3);
  append(3);
  ASSERT_TRUE(log->truncate_to(4).has_value());
  EXPECT_EQ(log->log_end_offset(), 4);
  auto all = read_all(*log);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].last_offset, 2);
  EXPECT_EQ(append(1).first_offset, 4);
  ASSERT_TRUE(log->truncate_to(100).has_value());
  EXPECT_EQ(log->log_end_offset(), 5) << "beyond the end: no-op";
}

TEST_F(PartitionLogTest, TruncateToAcrossSegmentsDeletesLaterSegments) {
  for (int i = 0; i < 4; ++i) {
    append(2);
    ASSERT_TRUE(log->roll().has_value());
  }
  append(2);
  ASSERT_EQ(log->segment_count(), 5u);
  ASSERT_TRUE(log->truncate_to(3).has_value());
  EXPECT_EQ(log->segment_count(), 2u);
  EXPECT_EQ(segment_files().size(), 2u);
  EXPECT_EQ(log->log_end_offset(), 3);
  EXPECT_EQ(append(2).first_offset, 3);
  auto all = read_all(*log);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[1].base_offset, 3);
}

TEST_F(PartitionLogTest, TruncateBelowTheFirstSegmentRestartsTheLogThere) {
  append(5);
  ASSERT_TRUE(log->delete_records_before(5).has_value());
  ASSERT_TRUE(log->roll().has_value());
  append(2);
  ASSERT_TRUE(log->delete_records_before(6).has_value());
  ASSERT_EQ(log->log_start_offset(), 6);
  ASSERT_TRUE(log->truncate_to(2).has_value());
  EXPECT_EQ(log->log_start_offset(), 2);
  EXPECT_EQ(log->log_end_offset(), 2);
  EXPECT_EQ(log->size_bytes(), 0);
  EXPECT_EQ(segment_files(), std::vector<std::string>{"00000000000000000002.log"});
}

TEST_F(PartitionLogTest, TruncationDropsLaterLeaderEpochs) {
  append(2, -2, 16, 1);
  append(2, -2, 16, 2);
  append(2, -2, 16, 3);
  ASSERT_TRUE(log->truncate_to(3).has_value());
  EXPECT_EQ(log->epoch_entries(), (std::vector<EpochEntry>{{1, 0}, {2, 2}}));
}

// ------------------------------------------------------------------------ transactions index

TEST_F(PartitionLogTest, AbortedTransactionsAreKeptPerSegment) {
  append(10);
  ASSERT_TRUE(log->append_aborted_transaction({5, 2, 8, 9}).has_value());
  ASSERT_TRUE(log->roll().has_value());
  append(10);
  ASSERT_TRUE(log->append_aborted_transaction({6, 9, 15, 16}).has_value());
  EXPECT_TRUE(std::filesystem::exists(dir() / "00000000000000000000.txnindex"));
  EXPECT_TRUE(std::filesystem::exists(dir() / "00000000000000000010.txnindex"));
  auto found = log->collect_aborted_transactions(0, 20);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->size(), 2u);
  found = log->collect_aborted_transactions(9, 20);
  ASSERT_EQ(found->size(), 1u);
  EXPECT_EQ((*found)[0].producer_id, 6);
  ASSERT_TRUE(log->truncate_to(12).has_value());
  EXPECT_EQ(log->collect_aborted_transactions(0, 20)->size(), 1u);
}

// --------------------------------------------------------------------------------- durability

TEST_F(PartitionLogTest, SyncTokenNamesDirtyFilesAndAdvancesTheRecoveryPoint) {
  ASSERT_TRUE(log->flush().has_value());
  EXPECT_TRUE(log->prepare_sync().empty());
  append(3);
  SyncToken token = log->prepare_sync();
  ASSERT_EQ(token.files.size(), 1u) << "the active segment's log; its indexes wait for roll/close";
  EXPECT_TRUE(token.directories.empty());
  EXPECT_EQ(token.end_offset, 3);
  EXPECT_EQ(log->recovery_point(), 0);
  ASSERT_TRUE(token.files[0].file->sync().has_value());
  log->mark_synced(token);
  EXPECT_EQ(log->recovery_point(), 3);
  EXPECT_TRUE(log->prepare_sync().empty());

  ASSERT_TRUE(log->roll().has_value());
  append(1);
  token = log->prepare_sync();
  EXPECT_EQ(token.directories, std::vector<std::filesystem::path>{dir()}) << "a new segment needs its directory synced";
  EXPECT_GE(token.files.size(), 2u) << "the rolled segment's indexes and the new log";
}

TEST_F(PartitionLogTest, TruncationVoidsTokensPreparedBefore) {
  append(5);
  SyncToken token = log->prepare_sync();
  ASSERT_TRUE(log->truncate_to(2).has_value());
  append(3);
  log->mark_synced(token);
  EXPECT_EQ(log->recovery_point(), 0) << "the token covered bytes that are gone";
  ASSERT_TRUE(log->flush().has_value());
  EXPECT_EQ(log->recovery_point(), 5);
}

TEST_F(PartitionLogTest, CloseAndReopenKeepsEverything) {
  for (int i = 0; i < 3; ++i) {
    append(4, -2, 16, 2);
    ASSERT_TRUE(log->roll().has_value());
  }
  append(4, -2, 16, 2);
  ASSERT_TRUE(log->close().has_value());
  log.reset();
  open({.clean_shutdown = true, .recovery_point = 16});
  EXPECT_EQ(log->log_end_offset(), 16);
  EXPECT_EQ(log->recovery_point(), 16);
  EXPECT_EQ(log->segment_count(), 4u);
  EXPECT_EQ(read_all(*log).size(), 4u);
  EXPECT_EQ(log->epoch_entries(), (std::vector<EpochEntry>{{2, 0}}));
  EXPECT_EQ(append(1).first_offset, 16);
}

TEST_F(PartitionLogTest, RemoveRenamesTheDirectoryThenDeletesIt) {
  append(3);
  ASSERT_TRUE(log->remove().has_value());
  log.reset();
  EXPECT_FALSE(std::filesystem::exists(dir()));
  EXPECT_TRUE(std::filesystem::is_empty(tmp.path()));
}

}  // namespace
}  // namespace weir::storage
