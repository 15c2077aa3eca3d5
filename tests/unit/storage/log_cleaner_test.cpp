// Log compaction: which logs are cleaned and how far, what a clean keeps, and that a clean is
// bounded per call (log_cleaner.h).
#include "storage/log_cleaner.h"

#include <gtest/gtest.h>

#include <array>

#include "cleaner_test_util.h"
#include "storage/io_throttle.h"

namespace weir::storage {
namespace {

using testing::clean_fully;
using testing::data_records;
using testing::Kv;
using testing::kv_batch;
using testing::latest_values;
using testing::read_all;
using testing::records_of;
using testing::Stored;
using testing::TempDir;

namespace fs = std::filesystem;

LogConfig compacted() {
  LogConfig c;
  c.cleanup_compact = true;
  c.cleanup_delete = false;
  c.index_interval_bytes = 100;
  return c;
}

class LogCleanerTest : public ::testing::Test {
 protected:
  TempDir tmp;
  ManualClock clock;
  LogConfig config = compacted();
  LogCleaner cleaner;
  std::unique_ptr<PartitionLog> log;

  fs::path dir() const { return tmp.path() / "compacted-0"; }

  void SetUp() override { open(); }

  void open(RecoveryHint hint = {.clean_shutdown = true}) {
    log.reset();
    auto opened = PartitionLog::open(PosixFileSystem::instance(), dir(), config, clock, hint);
    ASSERT_TRUE(opened.has_value()) << opened.error();
    log = std::move(*opened);
  }

  // Appends one batch as the leader and moves the high watermark to the end, as the broker does.
  AppendInfo put(const std::vector<Kv>& records, record::BatchOptions options = {},
                 record::Compression codec = record::Compression::none) {
    auto batch = kv_batch(records, clock.wall_ms(), options, codec);
    auto info = log->append_as_leader(batch, 0);
    EXPECT_TRUE(info.has_value()) << info.error();
    log->update_high_watermark(log->log_end_offset());
    return info.value_or(AppendInfo{});
  }

  void append_marker(std::int64_t producer_id, bool commit) {
    auto marker = record::build_end_txn_marker_batch({.producer_id = producer_id,
                                                      .producer_epoch = 0,
                                                      .commit = commit,
                                                      .timestamp_ms = clock.wall_ms(),
                                                      .base_offset = log->log_end_offset()});
    ASSERT_TRUE(log->append_with_offsets(marker).has_value());
    log->update_high_watermark(log->log_end_offset());
  }

  void roll() { ASSERT_TRUE(log->roll().has_value()); }

  CleanResult clean(const ActiveProducers* producers = nullptr, std::int64_t budget = std::int64_t{1} << 40) {
    return clean_fully(cleaner, *log, clock.wall_ms(), budget, producers);
  }

  CleanableInfo examine() {
    auto info = LogCleaner::examine(*log, clock.wall_ms());
    EXPECT_TRUE(info.has_value());
    return info.value_or(CleanableInfo{});
  }

  std::vector<std::string> files_ending(std::string_view suffix) const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir())) {
      if (e.path().filename().string().ends_with(suffix)) out.push_back(e.path().filename().string());
    }
    return out;
  }
};

const ActiveProducers kNoActiveProducers{};

TEST_F(LogCleanerTest, KeepsTheLatestRecordOfEachKeyAtItsOffset) {
  put({{"k1", "a1"}, {"k2", "b1"}});  // 0, 1
  put({{"k1", "a2"}});                // 2
  roll();
  put({{"k3", "c1"}, {"k2", "b2"}});  // 3, 4
  roll();
  put({{"k1", "a3"}});  // 5, in the active segment
  const std::int64_t leo = log->log_end_offset();

  const CleanResult result = clean();
  EXPECT_EQ(result.state, CleanState::kCompleted);
  EXPECT_EQ(result.checkpoint, 5);
  EXPECT_EQ(log->cleaner_checkpoint(), 5);
  const std::vector<Stored> expected{{2, "k1", "a2"}, {3, "k3", "c1"}, {4, "k2", "b2"}, {5, "k1", "a3"}};
  EXPECT_EQ(data_records(*log), expected) << "k1=a2 stays: the active segment is not cleaned, nor used to clean";
  EXPECT_EQ(log->log_end_offset(), leo);
  EXPECT_EQ(log->log_start_offset(), 0);
  EXPECT_EQ(log->segment_count(), 2u) << "both cleaned segments merged into one, then the active one";
  EXPECT_EQ(result.stats.records_read, 5);
  EXPECT_EQ(result.stats.records_retained, 3);
  EXPECT_EQ(result.stats.segments_replaced, 2);
  EXPECT_TRUE(files_ending(".cleaned").empty());
  EXPECT_TRUE(files_ending(".swap").empty());

  // Reading at a removed offset returns the next batch, as after Kafka's cleaner.
  auto from0 = testing::read_batches(*log, 0, 1);
  ASSERT_TRUE(from0.has_value());
  ASSERT_EQ(from0->size(), 1u);
  EXPECT_EQ((*from0)[0].base_offset, 2);
  // And the cleaned segment survives a reopen with full recovery (indexes rebuilt from it).
  ASSERT_TRUE(log->close().has_value());
  open({.clean_shutdown = false, .recovery_point = 0});
  EXPECT_EQ(data_records(*log), expected);
}

TEST_F(LogCleanerTest, BatchesKeepTheirOffsetsAndRecordsTheirOffsetsTimestampsAndHeaders) {
  record::RecordBatchBuilder builder;
  const std::vector<record::Header> headers{{"h", as_bytes("v")}};
  builder.append(clock.wall_ms() - 50, as_bytes("a"), as_bytes("1"), headers);
  builder.append(clock.wall_ms() - 40, as_bytes("b"), as_bytes("2"));
  builder.append(clock.wall_ms() - 30, as_bytes("c"), as_bytes("3"), headers);
  auto batch = builder.build();
  ASSERT_TRUE(log->append_as_leader(batch, 7).has_value());
  put({{"b", "4"}});
  roll();
  log->update_high_watermark(log->log_end_offset());
  clean();

  const auto batches = read_all(*log);
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_EQ(batches[0].base_offset, 0);
  EXPECT_EQ(batches[0].last_offset, 2) << "lastOffsetDelta is kept";
  auto view = record::RecordBatchView::from(batches[0].bytes);
  EXPECT_EQ(view->records_count(), 2);
  EXPECT_EQ(view->partition_leader_epoch(), 7);
  EXPECT_EQ(view->base_timestamp(), clock.wall_ms() - 50);
  EXPECT_EQ(view->max_timestamp(), clock.wall_ms() - 30);
  EXPECT_FALSE(view->has_delete_horizon());
  std::vector<std::int64_t> timestamps;
  std::vector<std::int32_t> header_counts;
  ASSERT_TRUE(record::for_each_record(*view, [&](const record::RecordView& r) {
                timestamps.push_back(view->record_timestamp(r));
                header_counts.push_back(r.headers.size());
              }).has_value());
  EXPECT_EQ(timestamps, (std::vector<std::int64_t>{clock.wall_ms() - 50, clock.wall_ms() - 30}));
  EXPECT_EQ(header_counts, (std::vector<std::int32_t>{1, 1}));
  EXPECT_EQ(records_of(batches[0].bytes), (std::vector<Stored>{{0, "a", "1"}, {2, "c", "3"}}));
}

TEST_F(LogCleanerTest, TheActiveSegmentIsNeverCleaned) {
  put({{"k", "1"}});
  put({{"k", "2"}});
  put({{"k", "3"}});
  auto info = examine();
  EXPECT_EQ(info.first_uncleanable_offset, 0);
  EXPECT_EQ(info.cleanable_bytes, 0);
  EXPECT_FALSE(info.needs_cleaning);
  EXPECT_EQ(clean().state, CleanState::kIdle);
  EXPECT_EQ(data_records(*log).size(), 3u);
}

TEST_F(LogCleanerTest, DirtyRatioDecidesAndTheCheckpointMoves) {
  for (int i = 0; i < 10; ++i) put({{"k" + std::to_string(i), "first"}});
  roll();
  CleanableInfo info = examine();
  EXPECT_EQ(info.first_dirty_offset, 0);
  EXPECT_EQ(info.clean_bytes, 0);
  EXPECT_DOUBLE_EQ(info.dirty_ratio, 1.0);
  EXPECT_TRUE(info.needs_cleaning);
  ASSERT_EQ(clean().checkpoint, 10);

  info = examine();
  EXPECT_EQ(info.first_dirty_offset, 10);
  EXPECT_EQ(info.cleanable_bytes, 0);
  EXPECT_FALSE(info.needs_cleaning);

  put({{"k0", "second"}});
  roll();
  info = examine();
  EXPECT_GT(info.clean_bytes, 0);
  EXPECT_GT(info.cleanable_bytes, 0);
  EXPECT_NEAR(info.dirty_ratio, static_cast<double>(info.cleanable_bytes) / info.total_bytes(), 1e-12);
  EXPECT_LT(info.dirty_ratio, 0.5);
  EXPECT_FALSE(info.needs_cleaning) << "below min.cleanable.dirty.ratio 0.5";
  EXPECT_EQ(clean().state, CleanState::kIdle);

  config.min_cleanable_dirty_ratio = info.dirty_ratio - 0.01;
  log->set_config(config);
  EXPECT_TRUE(examine().needs_cleaning);
  EXPECT_EQ(clean().checkpoint, 11);
  EXPECT_EQ(latest_values(data_records(*log)).at("k0"), "second");
  EXPECT_EQ(data_records(*log).size(), 10u);
}

TEST_F(LogCleanerTest, MinCompactionLagHoldsBackRecentSegments) {
  config.min_compaction_lag_ms = 60'000;
  log->set_config(config);
  put({{"k", "old"}});
  roll();
  clock.advance_ms(30'000);
  put({{"k", "newer"}});
  roll();
  CleanableInfo info = examine();
  EXPECT_EQ(info.first_uncleanable_offset, 0) << "the first segment is only 30 s old";
  EXPECT_FALSE(info.needs_cleaning);
  EXPECT_EQ(clean().state, CleanState::kIdle);

  clock.advance_ms(30'001);
  info = examine();
  EXPECT_EQ(info.first_uncleanable_offset, 1) << "the first segment may go, not the second";
  clean();
  EXPECT_EQ(log->cleaner_checkpoint(), 1);
  EXPECT_EQ(data_records(*log).size(), 2u) << "the newer value is not in the cleanable range yet";

  clock.advance_ms(30'000);
  config.min_cleanable_dirty_ratio = 0.01;
  log->set_config(config);
  clean();
  EXPECT_EQ(data_records(*log), (std::vector<Stored>{{1, "k", "newer"}}));
}

TEST_F(LogCleanerTest, MaxCompactionLagForcesACleanBelowTheRatio) {
  config.min_cleanable_dirty_ratio = 0.99;
  config.max_compaction_lag_ms = 10'000;
  log->set_config(config);
  for (int i = 0; i < 20; ++i) put({{"k" + std::to_string(i), "v"}});
  roll();
  clean();  // ratio 1.0
  put({{"k1", "w"}});
  roll();
  CleanableInfo info = examine();
  EXPECT_LT(info.dirty_ratio, 0.99);
  EXPECT_FALSE(info.max_compaction_lag_passed);
  EXPECT_FALSE(info.needs_cleaning);
  clock.advance_ms(10'001);
  info = examine();
  EXPECT_TRUE(info.max_compaction_lag_passed);
  EXPECT_TRUE(info.needs_cleaning);
  EXPECT_EQ(clean().state, CleanState::kCompleted);
  EXPECT_EQ(latest_values(data_records(*log)).at("k1"), "w");
  EXPECT_EQ(data_records(*log).size(), 20u);
}

TEST_F(LogCleanerTest, TombstonesStayUntilTheirDeleteHorizonHasPassed) {
  config.delete_retention_ms = 1000;
  config.min_cleanable_dirty_ratio = 0.01;
  log->set_config(config);
  put({{"gone", "v"}, {"kept", "v"}});
  roll();
  put({{"gone", std::nullopt}});  // offset 2
  roll();
  const std::int64_t first_clean_ms = clock.wall_ms();
  clean();
  auto batches = read_all(*log);
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_EQ(records_of(batches[1].bytes), (std::vector<Stored>{{2, "gone", std::nullopt}}));
  auto tombstone = record::RecordBatchView::from(batches[1].bytes);
  EXPECT_EQ(tombstone->delete_horizon_ms(), first_clean_ms + 1000) << "set by the first clean (KIP-534)";
  EXPECT_EQ(tombstone->records_count(), 1);

  clock.advance_ms(500);
  put({{"other", "x"}});
  roll();
  clean();
  EXPECT_EQ(latest_values(data_records(*log)).count("gone"), 1u) << "the horizon has not passed";

  clock.advance_ms(501);
  put({{"other", "y"}});
  roll();
  clean();
  const auto latest = latest_values(data_records(*log));
  EXPECT_EQ(latest.count("gone"), 0u) << "dropped once now >= the horizon";
  EXPECT_EQ(latest.at("kept"), "v");
  EXPECT_EQ(latest.at("other"), "y");
}

TEST_F(LogCleanerTest, KeylessRecordsAreRefusedOnProduceAndDroppedByTheCleaner) {
  auto keyless = kv_batch({{"k", "v"}, {std::nullopt, "no key"}}, clock.wall_ms());
  EXPECT_EQ(log->append_as_leader(keyless, 0).error(), Errc::kInvalidRecord);
  auto keyless_gzip =
      kv_batch({{"k", "v"}, {std::nullopt, "no key"}}, clock.wall_ms(), {}, record::Compression::gzip);
  EXPECT_EQ(log->append_as_leader(keyless_gzip, 0).error(), Errc::kInvalidRecord);
  EXPECT_EQ(log->log_end_offset(), 0);

  // Written while the topic was not compacted: the cleaner drops them.
  config.cleanup_compact = false;
  log->set_config(config);
  put({{"k", "v"}, {std::nullopt, "no key"}});
  config.cleanup_compact = true;
  log->set_config(config);
  put({{"j", "w"}});
  roll();
  const CleanResult result = clean();
  EXPECT_EQ(result.stats.records_without_key, 1);
  EXPECT_EQ(data_records(*log), (std::vector<Stored>{{0, "k", "v"}, {2, "j", "w"}}));
}

class CodecTest : public LogCleanerTest, public ::testing::WithParamInterface<record::Compression> {};

TEST_P(CodecTest, RewrittenBatchesAreCompressedWithTheirCodec) {
  const record::Compression codec = GetParam();
  std::vector<Kv> records;
  for (int i = 0; i < 50; ++i) records.push_back({"key-" + std::to_string(i), std::string(100, 'a' + i % 26)});
  put(records, {}, codec);
  put({{"key-7", "new"}, {"key-30", std::nullopt}});
  roll();
  clean();
  const auto batches = read_all(*log);
  ASSERT_EQ(batches.size(), 2u);
  auto rewritten = record::RecordBatchView::from(batches[0].bytes);
  ASSERT_TRUE(rewritten->validate().has_value());
  EXPECT_EQ(rewritten->compression(), codec);
  EXPECT_EQ(rewritten->last_offset_delta(), 49);
  EXPECT_EQ(rewritten->records_count(), 48);
  const auto kept = records_of(batches[0].bytes);
  ASSERT_EQ(kept.size(), 48u);
  EXPECT_EQ(kept[7], (Stored{8, "key-8", std::string(100, 'a' + 8)}));
  EXPECT_EQ(kept[47], (Stored{49, "key-49", std::string(100, 'a' + 49 % 26)}));
  // The tombstone's batch (uncompressed) got its delete horizon.
  auto tombstones = record::RecordBatchView::from(batches[1].bytes);
  EXPECT_EQ(tombstones->compression(), record::Compression::none);
  EXPECT_TRUE(tombstones->has_delete_horizon());
}

std::string codec_name(const ::testing::TestParamInfo<record::Compression>& param) {
  static constexpr std::array<const char*, 5> kNames{"none", "gzip", "snappy", "lz4", "zstd"};
  return kNames.at(static_cast<std::size_t>(param.param));
}

INSTANTIATE_TEST_SUITE_P(Codecs, CodecTest,
                         ::testing::Values(record::Compression::none, record::Compression::gzip,
                                           record::Compression::snappy, record::Compression::lz4,
                                           record::Compression::zstd),
                         codec_name);

TEST_F(LogCleanerTest, AnUnchangedBatchKeepsItsOriginalBytes) {
  put({{"a", "1"}, {"b", "2"}}, {}, record::Compression::lz4);
  put({{"c", "3"}});
  roll();
  const auto before = read_all(*log);
  clean();
  const auto after = read_all(*log);
  ASSERT_EQ(after.size(), before.size());
  for (std::size_t i = 0; i < after.size(); ++i) EXPECT_EQ(after[i].bytes, before[i].bytes);
}

TEST_F(LogCleanerTest, ProducerFieldsAreKeptAndAnActiveProducersLastBatchStaysAsAHeader) {
  put({{"a", "1"}, {"b", "1"}}, {.producer_id = 7, .producer_epoch = 3, .base_sequence = 0});  // 0-1
  put({{"a", "2"}}, {.producer_id = 7, .producer_epoch = 3, .base_sequence = 2});              // 2
  put({{"c", "1"}, {"d", "1"}}, {.producer_id = 8, .producer_epoch = 1, .base_sequence = 5});  // 3-4
  put({{"a", "3"}, {"b", "3"}, {"c", "3"}});                                                  // 5-7
  roll();
  const ActiveProducers active{{7, {2, 3}}};
  clean(&active);

  const auto batches = read_all(*log);
  ASSERT_EQ(batches.size(), 3u);
  auto empty = record::RecordBatchView::from(batches[0].bytes);
  EXPECT_EQ(empty->base_offset(), 2) << "producer 7's last batch, every record superseded";
  EXPECT_EQ(empty->last_offset(), 2);
  EXPECT_EQ(empty->records_count(), 0);
  EXPECT_EQ(empty->producer_id(), 7);
  EXPECT_EQ(empty->producer_epoch(), 3);
  EXPECT_EQ(empty->base_sequence(), 2);
  EXPECT_EQ(empty->last_sequence(), 2);
  EXPECT_EQ(empty->base_timestamp(), record::kNoTimestamp);
  auto partial = record::RecordBatchView::from(batches[1].bytes);
  EXPECT_EQ(partial->base_offset(), 3);
  EXPECT_EQ(partial->last_offset(), 4);
  EXPECT_EQ(partial->records_count(), 1);
  EXPECT_EQ(partial->producer_id(), 8);
  EXPECT_EQ(partial->producer_epoch(), 1);
  EXPECT_EQ(partial->base_sequence(), 5);
  EXPECT_EQ(partial->last_sequence(), 6) << "the last sequence survives the removal of the last record";
  EXPECT_EQ(records_of(batches[1].bytes), (std::vector<Stored>{{4, "d", "1"}}));
}

TEST_F(LogCleanerTest, WithoutProducerStateTheLogsOwnLastBatchPerProducerStays) {
  put({{"a", "1"}}, {.producer_id = 7, .producer_epoch = 0, .base_sequence = 0});  // 0
  put({{"a", "2"}}, {.producer_id = 7, .producer_epoch = 0, .base_sequence = 1});  // 1
  put({{"a", "3"}});                                                                // 2
  put({{"z", "1"}});                                                                // 3
  roll();
  clean();  // no producer state given: read from the batch headers
  std::vector<std::int64_t> bases;
  for (const auto& b : read_all(*log)) bases.push_back(b.base_offset);
  EXPECT_EQ(bases, (std::vector<std::int64_t>{1, 2, 3})) << "producer 7's batch 1 stays (empty), batch 0 goes";
}

TEST_F(LogCleanerTest, WithNoActiveProducersEmptyBatchesGo) {
  put({{"a", "1"}}, {.producer_id = 7, .producer_epoch = 0, .base_sequence = 0});
  put({{"a", "2"}});
  put({{"z", "1"}});
  roll();
  clean(&kNoActiveProducers);
  std::vector<std::int64_t> bases;
  for (const auto& b : read_all(*log)) bases.push_back(b.base_offset);
  EXPECT_EQ(bases, (std::vector<std::int64_t>{1, 2}));
}

TEST_F(LogCleanerTest, AbortedTransactionsGoThenTheirMarkerAfterItsHorizon) {
  config.delete_retention_ms = 1000;
  config.min_cleanable_dirty_ratio = 0.01;
  log->set_config(config);
  put({{"k", "committed-before"}});                                                                // 0
  const record::BatchOptions txn9{.producer_id = 9, .producer_epoch = 0, .base_sequence = 0, .transactional = true};
  put({{"k", "aborted"}, {"x", "aborted"}}, txn9);                                                 // 1-2
  append_marker(9, false);                                                                         // 3
  ASSERT_TRUE(log->append_aborted_transaction({9, 1, 3, 4}).has_value());
  const record::BatchOptions txn10{.producer_id = 10, .producer_epoch = 0, .base_sequence = 0, .transactional = true};
  put({{"y", "committed"}}, txn10);                                                                // 4
  append_marker(10, true);                                                                         // 5
  roll();
  clean(&kNoActiveProducers);

  EXPECT_EQ(data_records(*log), (std::vector<Stored>{{0, "k", "committed-before"}, {4, "y", "committed"}}))
      << "the aborted records went, and did not supersede k";
  std::vector<std::int64_t> bases;
  for (const auto& b : read_all(*log)) bases.push_back(b.base_offset);
  EXPECT_EQ(bases, (std::vector<std::int64_t>{0, 3, 4, 5})) << "both markers stay this round";
  auto aborted = log->collect_aborted_transactions(0, 6);
  ASSERT_TRUE(aborted.has_value());
  EXPECT_EQ(*aborted, (std::vector<AbortedTxn>{{9, 1, 3, 4}})) << "the entry moved to the cleaned segment";

  // Next round: the aborted transaction has no batch left, so its marker may go: it gets a
  // delete horizon first (and its .txnindex entry is not carried over).
  put({{"z", "1"}});
  roll();
  clean(&kNoActiveProducers);
  const auto batches = read_all(*log);
  bool abort_marker_seen = false;
  for (const auto& b : batches) {
    auto view = record::RecordBatchView::from(b.bytes);
    if (view->is_control() && view->base_offset() == 3) {
      abort_marker_seen = true;
      EXPECT_TRUE(view->has_delete_horizon());
    }
  }
  EXPECT_TRUE(abort_marker_seen);

  clock.advance_ms(1001);
  put({{"z", "2"}});
  roll();
  clean(&kNoActiveProducers);
  std::vector<std::int64_t> markers;
  for (const auto& b : read_all(*log)) {
    auto view = record::RecordBatchView::from(b.bytes);
    if (view->is_control()) markers.push_back(view->base_offset());
  }
  EXPECT_EQ(markers, (std::vector<std::int64_t>{5}))
      << "the abort marker is gone after its horizon; the commit marker stays while y, its record, does";
  auto left = log->collect_aborted_transactions(0, log->log_end_offset());
  ASSERT_TRUE(left.has_value());
  EXPECT_TRUE(left->empty());
  EXPECT_EQ(latest_values(data_records(*log)).at("k"), "committed-before");
}

TEST_F(LogCleanerTest, NothingAtOrPastTheLastStableOffsetIsCleaned) {
  config.min_cleanable_dirty_ratio = 0.01;
  log->set_config(config);
  put({{"k", "1"}});
  roll();
  put({{"k", "2"}});  // 1
  roll();
  put({{"k", "3"}});  // 2
  roll();
  log->set_first_unstable_offset(1);
  EXPECT_EQ(log->last_stable_offset(), 1);
  EXPECT_EQ(examine().first_uncleanable_offset, 1);
  clean();
  EXPECT_EQ(data_records(*log).size(), 3u);
  EXPECT_EQ(log->cleaner_checkpoint(), 1);

  log->set_first_unstable_offset(std::nullopt);
  log->update_high_watermark(2);
  EXPECT_EQ(examine().first_uncleanable_offset, 2);
  clean();
  EXPECT_EQ(data_records(*log), (std::vector<Stored>{{1, "k", "2"}, {2, "k", "3"}}));
}

TEST_F(LogCleanerTest, SmallSegmentsAreMergedUpToSegmentBytes) {
  std::int64_t batch_bytes = 0;
  for (int i = 0; i < 12; ++i) {
    put({{(i < 10 ? "k0" : "k") + std::to_string(i), "value"}});  // batches of one size
    if (i == 0) batch_bytes = log->size_bytes();
    roll();
  }
  config.segment_bytes = 3 * batch_bytes;
  log->set_config(config);
  ASSERT_EQ(log->segment_count(), 13u);
  const CleanResult result = clean();
  EXPECT_EQ(result.stats.segments_replaced, 12);
  EXPECT_EQ(result.stats.segments_written, 4);
  EXPECT_EQ(log->segment_count(), 5u);
  for (const auto& name : files_ending(".log")) {
    EXPECT_LE(fs::file_size(dir() / name), static_cast<std::uintmax_t>(config.segment_bytes)) << name;
  }
  for (std::int64_t offset = 0; offset < 12; ++offset) {
    auto read = testing::read_batches(*log, offset, 1);
    ASSERT_TRUE(read.has_value());
    EXPECT_EQ((*read)[0].base_offset, offset);
  }
}

TEST_F(LogCleanerTest, AGroupNeverSpansMoreThan32BitOffsetDeltas) {
  put({{"a", "1"}});
  roll();
  auto far = kv_batch({{"b", "1"}}, clock.wall_ms(), {.base_offset = std::int64_t{3} << 31});
  ASSERT_TRUE(log->append_with_offsets(far).has_value());
  log->update_high_watermark(log->log_end_offset());
  roll();
  const CleanResult result = clean();
  EXPECT_EQ(result.stats.segments_written, 2) << "two groups";
  EXPECT_EQ(data_records(*log).size(), 2u);
}

TEST_F(LogCleanerTest, EachCallStaysWithinItsBudgetAndTheResultIsTheSame) {
  auto fill = [&](PartitionLog& target) {
    for (int i = 0; i < 300; ++i) {
      const std::vector<Kv> records{{"k" + std::to_string(i % 37), "v" + std::to_string(i)},
                                    {"z" + std::to_string(i % 5), "w"}};
      auto batch = kv_batch(records, clock.wall_ms());
      ASSERT_TRUE(target.append_as_leader(batch, 0).has_value());
      if (i % 25 == 24) {
        ASSERT_TRUE(target.roll().has_value());
      }
    }
    target.update_high_watermark(target.log_end_offset());
  };
  fill(*log);
  std::int64_t max_batch = 0;
  for (const auto& b : read_all(*log)) max_batch = std::max(max_batch, static_cast<std::int64_t>(b.bytes.size()));

  auto other = PartitionLog::open(PosixFileSystem::instance(), tmp.path() / "reference-0", config, clock,
                                  {.clean_shutdown = true});
  ASSERT_TRUE(other.has_value());
  fill(**other);
  clean_fully(cleaner, **other, clock.wall_ms());

  constexpr std::int64_t kBudget = 1000;
  int calls = 0;
  for (;; ++calls) {
    auto result = cleaner.clean(*log, clock.wall_ms(), kBudget);
    ASSERT_TRUE(result.has_value());
    EXPECT_LE(result->stats.io_bytes(), 2 * (kBudget + max_batch));
    if (result->state != CleanState::kInProgress) {
      EXPECT_EQ(result->state, CleanState::kCompleted);
      break;
    }
    EXPECT_TRUE(log->cleaning_in_progress());
  }
  EXPECT_GT(calls, 20);
  EXPECT_FALSE(log->cleaning_in_progress());
  EXPECT_EQ(data_records(*log), data_records(**other));
  EXPECT_EQ(latest_values(data_records(*log)).size(), 42u);
}

TEST_F(LogCleanerTest, ARoundIsDroppedWhenTheLogChangesUnderIt) {
  for (int i = 0; i < 100; ++i) {
    put({{"k" + std::to_string(i % 10), std::to_string(i)}});
    if (i % 10 == 9) roll();
  }
  // Through the map phase and into the clean phase, then a truncation.
  CleanState state = CleanState::kInProgress;
  for (int i = 0; i < 200 && files_ending(".cleaned").empty(); ++i) {
    auto result = cleaner.clean(*log, clock.wall_ms(), 300);
    ASSERT_TRUE(result.has_value());
    state = result->state;
  }
  ASSERT_EQ(state, CleanState::kInProgress);
  ASSERT_FALSE(files_ending(".cleaned").empty());
  ASSERT_TRUE(log->truncate_to(95).has_value());
  auto result = cleaner.clean(*log, clock.wall_ms(), 300);
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->state, CleanState::kAborted);
  EXPECT_TRUE(files_ending(".cleaned").empty());
  EXPECT_FALSE(log->cleaning_in_progress());
  EXPECT_EQ(log->cleaner_checkpoint(), std::nullopt);
  clean();
  EXPECT_EQ(latest_values(data_records(*log)).size(), 10u);
}

TEST_F(LogCleanerTest, RetentionDeletingASegmentTheRoundHasYetToReadDropsIt) {
  config.cleanup_delete = true;  // compact,delete
  config.retention_ms = 60'000;
  log->set_config(config);
  for (int i = 0; i < 40; ++i) {
    put({{"k" + std::to_string(i % 4), std::to_string(i)}});
    if (i % 10 == 9) roll();
    if (i == 9) clock.advance_ms(120'000);  // only the first segment expires
  }
  auto started = cleaner.clean(*log, clock.wall_ms(), 300);
  ASSERT_TRUE(started.has_value());
  ASSERT_EQ(started->state, CleanState::kInProgress);
  ASSERT_EQ(log->apply_retention(clock.wall_ms()), 1);
  auto result = cleaner.clean(*log, clock.wall_ms(), 300);
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->state, CleanState::kAborted);
  EXPECT_EQ(clean().state, CleanState::kCompleted);
  EXPECT_EQ(data_records(*log).size(), 4u);
  EXPECT_EQ(log->log_start_offset(), 10);
}

TEST_F(LogCleanerTest, ACheckpointBelowTheLogStartIsReset) {
  put({{"a", "1"}});
  put({{"b", "1"}});
  roll();
  clean();
  ASSERT_EQ(log->cleaner_checkpoint(), 2);
  put({{"c", "1"}});
  put({{"d", "1"}});
  roll();
  ASSERT_TRUE(log->delete_records_before(3).has_value());
  const CleanableInfo info = examine();
  EXPECT_TRUE(info.checkpoint_reset);
  EXPECT_EQ(info.first_dirty_offset, 3);
  EXPECT_EQ(clean().state, CleanState::kIdle);
  EXPECT_EQ(log->cleaner_checkpoint(), 3) << "written back even without a clean, as Kafka does";
}

TEST_F(LogCleanerTest, TurningCompactionOffDropsTheRound) {
  for (int i = 0; i < 50; ++i) {
    put({{"k", std::to_string(i)}});
    if (i % 10 == 9) roll();
  }
  auto started = cleaner.clean(*log, clock.wall_ms(), 200);
  ASSERT_TRUE(started.has_value());
  ASSERT_EQ(started->state, CleanState::kInProgress);
  config.cleanup_compact = false;
  log->set_config(config);
  auto result = cleaner.clean(*log, clock.wall_ms(), 200);
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->state, CleanState::kIdle);
  EXPECT_FALSE(log->cleaning_in_progress());
  EXPECT_EQ(data_records(*log).size(), 50u);
}

TEST_F(LogCleanerTest, TheTruncationPointBecomesDirtyAgain) {
  put({{"a", "1"}});
  put({{"b", "1"}});
  roll();
  put({{"c", "1"}});
  roll();
  clean();
  ASSERT_EQ(log->cleaner_checkpoint(), 3);
  ASSERT_EQ(log->segment_count(), 2u);  // [0, 3) cleaned into one segment, then the active one
  ASSERT_TRUE(log->truncate_to(2).has_value());
  EXPECT_EQ(log->cleaner_checkpoint(), 0) << "Kafka's rule: the active segment's base offset after the truncation";
}

TEST_F(LogCleanerTest, RetentionByTimeAndSizeOnlyWithTheDeletePolicy) {
  config.retention_ms = 1000;
  config.retention_bytes = 1;
  log->set_config(config);
  put({{"a", "1"}});
  roll();
  put({{"b", "1"}});
  roll();
  clock.advance_ms(5000);
  EXPECT_EQ(log->apply_retention(clock.wall_ms()), 0) << "cleanup.policy=compact";
  EXPECT_EQ(log->segment_count(), 3u);

  config.cleanup_delete = true;  // compact,delete
  log->set_config(config);
  EXPECT_EQ(log->apply_retention(clock.wall_ms()), 2);
  EXPECT_EQ(log->log_start_offset(), 2);
}

TEST_F(LogCleanerTest, ANonCompactedLogIsNeverCleaned) {
  config.cleanup_compact = false;
  log->set_config(config);
  put({{"a", "1"}});
  put({{"a", "2"}});
  roll();
  EXPECT_FALSE(examine().needs_cleaning);
  EXPECT_EQ(clean().state, CleanState::kIdle);
  EXPECT_EQ(data_records(*log).size(), 2u);
}

TEST_F(LogCleanerTest, LeftoverCleanedFilesAreRemovedAtOpen) {
  put({{"a", "1"}});
  roll();
  ASSERT_TRUE(log->close().has_value());
  log.reset();
  for (std::string_view suffix : {".log.cleaned", ".index.cleaned", ".timeindex.cleaned"}) {
    testing::write_bytes_at(dir() / (Segment::file_name(0, "") + std::string(suffix)), 0, as_bytes("junk"));
  }
  open();
  EXPECT_TRUE(files_ending(".cleaned").empty());
  EXPECT_EQ(data_records(*log), (std::vector<Stored>{{0, "a", "1"}}));
}

TEST(IoThrottleTest, PacesWithoutSleeping) {
  IoThrottle throttle(1000.0, 500);  // 1000 bytes/s, at most 500 at once
  EXPECT_EQ(throttle.available(0), 500);
  throttle.consume(700);  // overshoot by a batch
  EXPECT_EQ(throttle.available(0), 0);
  EXPECT_EQ(throttle.wait_ms(0, 100), 300);
  EXPECT_EQ(throttle.available(250), 50);
  EXPECT_EQ(throttle.available(10'000), 500) << "capped at the burst";
  IoThrottle unlimited(std::numeric_limits<double>::max(), 1 << 20);
  EXPECT_EQ(unlimited.available(0), 1 << 20);
  unlimited.consume(1 << 20);
  EXPECT_EQ(unlimited.available(1), 1 << 20);
}

}  // namespace
}  // namespace weir::storage
