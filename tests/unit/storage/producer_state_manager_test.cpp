// ProducerStateManager: idempotent producer state survives restarts (clean and crashes), is
// snapshotted at segment rolls and clean shutdown, follows truncations and segment deletions,
// expires idle producers, and reads the partition directories a real Kafka wrote.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "protocol/record/control_record.h"
#include "test_util.h"
#include "storage/producer_snapshot.h"
#include "storage/producer_state_manager.h"

namespace weir::storage {
namespace {

namespace fs = std::filesystem;
using storage::LogConfig;
using storage::PartitionLog;
using storage::PosixFileSystem;
using storage::RecoveryHint;
using storage::testing::TempDir;

constexpr std::int64_t kPid = 4000;
constexpr std::int64_t kDay = 86400000;

std::vector<std::byte> producer_batch(std::int64_t pid, std::int16_t epoch, std::int32_t seq, int count,
                                      std::int64_t ts, bool transactional = false) {
  return storage::testing::make_batch(
      count, ts, 16,
      {.producer_id = pid, .producer_epoch = epoch, .base_sequence = seq, .transactional = transactional});
}

// What the produce handler reads from a batch (one batch per call here).
std::vector<BatchInfo> infos_of(ByteSpan bytes) {
  auto b = record::RecordBatchView::from(bytes);
  EXPECT_TRUE(b.has_value());
  const std::int64_t seq = b->base_sequence();
  const std::int64_t last_seq = seq < 0 ? -1 : (seq + b->last_offset_delta()) % 2147483648LL;
  return {BatchInfo{b->has_producer_id() ? b->producer_id() : -1, b->producer_epoch(), b->base_sequence(),
                    static_cast<std::int32_t>(last_seq), b->last_offset_delta() + 1, b->max_timestamp(),
                    b->is_transactional()}};
}

struct Produced {
  ProducerCheck outcome;
  std::int64_t base_offset = -1;
};

class ProducerStateManagerTest : public ::testing::Test {
 protected:
  TempDir tmp;
  ManualClock clock;
  LogConfig config;
  std::unique_ptr<PartitionLog> log;
  std::shared_ptr<ProducerStateManager> state;

  fs::path dir() const { return tmp.path() / "topic-0"; }
  std::int64_t now() const { return clock.wall_ms(); }

  // Opens the log as the broker does (clean or after a crash) and rebuilds the producer state.
  void open(bool clean) {
    RecoveryHint hint;
    hint.clean_shutdown = clean;
    open_with(hint);
  }
  void open_with(const RecoveryHint& hint) {
    auto opened = PartitionLog::open(PosixFileSystem::instance(), dir(), config, clock, hint);
    ASSERT_TRUE(opened.has_value());
    log = std::move(*opened);
    state = std::make_shared<ProducerStateManager>();
    log->set_listener(state);
    ASSERT_TRUE(state->load(*log).has_value());
  }
  // Clean shutdown: snapshot at the log end, then close.
  void close() {
    ASSERT_TRUE(state->take_snapshot(*log).has_value());
    ASSERT_TRUE(log->close().has_value());
    log.reset();
    state.reset();
  }
  // kill -9: nothing written (the page cache keeps what was appended).
  void crash() {
    log.reset();
    state.reset();
  }
  void reopen_clean() {
    close();
    open(true);
  }
  void reopen_after_crash() {
    crash();
    open(false);
  }

  // The produce handler's path: check, append, record.
  Produced produce(std::vector<std::byte> batch) {
    const auto infos = infos_of(batch);
    auto check = state->table().check(infos);
    if (check.outcome == ProducerCheck::kDuplicate) return {check.outcome, check.duplicate->first_offset};
    if (check.outcome != ProducerCheck::kOk) return {check.outcome};
    auto appended = log->append_as_leader(batch, 0);
    EXPECT_TRUE(appended.has_value());
    state->table().update(infos_of(batch), appended->first_offset);
    return {ProducerCheck::kOk, appended->first_offset};
  }

  std::vector<std::int64_t> snapshot_files() const {
    std::vector<std::int64_t> out;
    for (const auto& e : fs::directory_iterator(dir())) {
      if (auto offset = parse_snapshot_file_name(e.path().filename().string())) out.push_back(*offset);
    }
    std::sort(out.begin(), out.end());
    return out;
  }
};

TEST_F(ProducerStateManagerTest, RetriedBatchAfterACrashIsADuplicateNotWrittenTwice) {
  open(true);
  ASSERT_EQ(produce(producer_batch(7, 0, 0, 3, now())).base_offset, 0);  // unrelated producer
  ASSERT_EQ(produce(producer_batch(kPid, 0, 0, 2, now())).base_offset, 3);
  ASSERT_EQ(produce(producer_batch(kPid, 0, 2, 2, now())).base_offset, 5);
  ASSERT_EQ(produce(producer_batch(kPid, 0, 4, 1, now())).base_offset, 7);

  reopen_after_crash();
  EXPECT_TRUE(snapshot_files() == std::vector<std::int64_t>{8});  // written after the rebuild
  EXPECT_EQ(state->batches_replayed(), 4);
  // Each of the last batches in flight is a duplicate with its first offset; nothing is written.
  for (auto [seq, count, offset] : {std::tuple{0, 2, 3}, {2, 2, 5}, {4, 1, 7}}) {
    auto r = produce(producer_batch(kPid, 0, seq, count, now()));
    EXPECT_EQ(r.outcome, ProducerCheck::kDuplicate);
    EXPECT_EQ(r.base_offset, offset);
  }
  EXPECT_EQ(log->log_end_offset(), 8);
  EXPECT_EQ(produce(producer_batch(kPid, 0, 6, 1, now())).outcome, ProducerCheck::kOutOfOrderSequence);  // a gap
  EXPECT_EQ(produce(producer_batch(kPid, 0, 5, 1, now())).base_offset, 8);
  EXPECT_EQ(produce(producer_batch(7, 0, 3, 1, now())).base_offset, 9);
}

TEST_F(ProducerStateManagerTest, CleanShutdownSnapshotIsLoadedWithoutReadingTheLog) {
  open(true);
  ASSERT_EQ(produce(producer_batch(kPid, 0, 0, 2, now())).base_offset, 0);
  ASSERT_EQ(produce(producer_batch(kPid, 0, 2, 3, now())).base_offset, 2);
  ASSERT_EQ(produce(producer_batch(kPid + 1, 3, 10, 1, now())).base_offset, 5);

  reopen_clean();
  EXPECT_TRUE(snapshot_files() == std::vector<std::int64_t>{6});
  EXPECT_EQ(state->batches_replayed(), 0);
  EXPECT_EQ(state->table().size(), 2u);
  auto last = produce(producer_batch(kPid, 0, 2, 3, now()));
  EXPECT_EQ(last.outcome, ProducerCheck::kDuplicate);
  EXPECT_EQ(last.base_offset, 2);
  // A snapshot keeps only the last batch (Kafka's format): an older retry is out of order, as in Kafka.
  EXPECT_EQ(produce(producer_batch(kPid, 0, 0, 2, now())).outcome, ProducerCheck::kOutOfOrderSequence);
  EXPECT_EQ(produce(producer_batch(kPid + 1, 2, 11, 1, now())).outcome, ProducerCheck::kInvalidProducerEpoch);
  EXPECT_EQ(produce(producer_batch(kPid + 1, 3, 11, 1, now())).base_offset, 6);

  // No new data: the next clean restart reuses the snapshot at the log end... after one more batch
  // it writes a new one and keeps the previous.
  reopen_clean();
  EXPECT_TRUE(snapshot_files() == (std::vector<std::int64_t>{6, 7}));
  reopen_clean();
  EXPECT_TRUE(snapshot_files() == (std::vector<std::int64_t>{6, 7}));
  EXPECT_EQ(produce(producer_batch(kPid + 1, 3, 11, 1, now())).base_offset, 6);
}

TEST_F(ProducerStateManagerTest, ACleanShutdownCarriesItsSnapshotInTheLogSummarySoTheNextLoadReadsNoFile) {
  open(true);
  ASSERT_EQ(produce(producer_batch(kPid, 0, 0, 2, now())).base_offset, 0);
  ASSERT_EQ(produce(producer_batch(kPid + 1, 3, 10, 1, now())).base_offset, 2);
  ASSERT_TRUE(state->take_snapshot(*log).has_value());
  ASSERT_TRUE(log->close().has_value());
  ASSERT_TRUE(log->summary().has_value());
  const PartitionSummary summary = *log->summary();
  log.reset();
  state.reset();
  ASSERT_TRUE(summary.producers.has_value());
  EXPECT_EQ(summary.producers->snapshot_offsets, snapshot_files());
  EXPECT_EQ(summary.producers->carried_offset, 3);

  // The file is damaged in place: a load that read it would drop it as corrupt and replay the log.
  storage::testing::write_bytes_at(dir() / snapshot_file_name(3), 8, as_bytes(std::string_view("damaged")));
  RecoveryHint hint;
  hint.clean_shutdown = true;
  hint.summary = &summary;
  open_with(hint);
  EXPECT_EQ(state->batches_replayed(), 0);
  EXPECT_EQ(state->table().size(), 2u);
  EXPECT_TRUE(snapshot_files() == std::vector<std::int64_t>{3});
  auto retry = produce(producer_batch(kPid, 0, 0, 2, now()));
  EXPECT_EQ(retry.outcome, ProducerCheck::kDuplicate);
  EXPECT_EQ(retry.base_offset, 0);
  EXPECT_EQ(produce(producer_batch(kPid + 1, 3, 11, 1, now())).base_offset, 3);
}

TEST_F(ProducerStateManagerTest, AnEmptyLogTakesNoSnapshotAtShutdown) {
  // As Kafka: a snapshot at the log start would describe nothing (and the next load deletes it).
  open(true);
  reopen_clean();
  EXPECT_TRUE(snapshot_files().empty());
  EXPECT_EQ(state->table().size(), 0u);
  ASSERT_EQ(produce(producer_batch(kPid, 0, 0, 1, now())).base_offset, 0);
  reopen_clean();
  EXPECT_TRUE(snapshot_files() == std::vector<std::int64_t>{1});
}

TEST_F(ProducerStateManagerTest, SnapshotsAtSegmentRollsBoundTheReplayAfterACrash) {
  config.segment_bytes = 400;  // about two batches per segment
  open(true);
  std::int32_t seq = 0;
  for (int i = 0; i < 10; ++i, seq += 2) ASSERT_EQ(produce(producer_batch(kPid, 0, seq, 2, now())).base_offset, 2 * i);
  ASSERT_GT(log->segment_count(), 3u);
  // One snapshot per roll at the new segment's base offset; only the newest two are kept.
  const auto files = snapshot_files();
  ASSERT_EQ(files.size(), ProducerStateManager::kMaxSnapshots);
  EXPECT_LT(files.back(), 20);
  EXPECT_EQ(files.back() % 2, 0);

  reopen_after_crash();
  EXPECT_EQ(state->batches_replayed(), (20 - files.back()) / 2);  // only what follows the snapshot
  // Known: the snapshot's last batch and the batches replayed after it (sequence = offset here).
  const auto snapshot_at = static_cast<std::int32_t>(files.back());
  for (std::int32_t s = snapshot_at - 2; s < 20; s += 2) {
    auto r = produce(producer_batch(kPid, 0, s, 2, now()));
    EXPECT_EQ(r.outcome, ProducerCheck::kDuplicate) << s;
    EXPECT_EQ(r.base_offset, s);
  }
  EXPECT_EQ(produce(producer_batch(kPid, 0, snapshot_at - 4, 2, now())).outcome, ProducerCheck::kOutOfOrderSequence);
  EXPECT_EQ(produce(producer_batch(kPid, 0, 20, 1, now())).base_offset, 20);
}

TEST_F(ProducerStateManagerTest, TruncationDeletesSnapshotsAboveTheLogEndAndRebuilds) {
  config.segment_bytes = 400;
  open(true);
  std::int32_t seq = 0;
  for (int i = 0; i < 6; ++i, seq += 2) ASSERT_EQ(produce(producer_batch(kPid, 0, seq, 2, now())).base_offset, 2 * i);
  ASSERT_EQ(produce(producer_batch(kPid + 1, 0, 0, 1, now())).base_offset, 12);
  const auto before = snapshot_files();
  ASSERT_FALSE(before.empty());
  const std::int64_t cut = before.front() - 2;  // a batch boundary below the oldest snapshot
  ASSERT_GT(cut, 0);

  ASSERT_TRUE(log->truncate_to(cut).has_value());
  for (std::int64_t offset : snapshot_files()) EXPECT_LE(offset, cut);
  // The state is rebuilt from what is left: the batch at cut - 1 is the producer's last.
  EXPECT_EQ(state->table().find(kPid + 1), nullptr);
  const ProducerEntry* e = state->table().find(kPid);
  ASSERT_NE(e, nullptr);
  EXPECT_LT(e->batches.back().last_offset, cut);
  const std::int32_t next_seq = e->batches.back().last_seq + 1;
  EXPECT_EQ(produce(producer_batch(kPid, 0, next_seq + 2, 1, now())).outcome, ProducerCheck::kOutOfOrderSequence);
  EXPECT_EQ(next_seq, cut);  // sequence = offset for this producer
  EXPECT_EQ(produce(producer_batch(kPid, 0, next_seq, 1, now())).base_offset, cut);
}

TEST_F(ProducerStateManagerTest, SnapshotsAboveTheRecoveredLogEndAreDeletedOnLoad) {
  open(true);
  ASSERT_EQ(produce(producer_batch(kPid, 0, 0, 4, now())).base_offset, 0);
  ASSERT_EQ(produce(producer_batch(kPid, 0, 4, 4, now())).base_offset, 4);
  close();
  // The clean-shutdown snapshot at 8 survives, but a crash loses the second batch (a torn write):
  // the log ends at 4 after recovery.
  const fs::path segment = dir() / "00000000000000000000.log";
  const auto size = fs::file_size(segment);
  fs::resize_file(segment, size - 10);
  open(false);
  EXPECT_EQ(log->log_end_offset(), 4);
  EXPECT_TRUE(snapshot_files() == std::vector<std::int64_t>{4});  // 8 deleted; rebuilt and written at 4
  EXPECT_EQ(state->batches_replayed(), 1);
  EXPECT_EQ(produce(producer_batch(kPid, 0, 4, 4, now())).base_offset, 4);  // written again, not a duplicate
}

TEST_F(ProducerStateManagerTest, ACorruptSnapshotIsDeletedAndAnOlderOneOrTheLogUsed) {
  open(true);
  ASSERT_EQ(produce(producer_batch(kPid, 0, 0, 2, now())).base_offset, 0);
  reopen_clean();  // snapshot at 2
  ASSERT_EQ(produce(producer_batch(kPid, 0, 2, 2, now())).base_offset, 2);
  close();  // snapshot at 4
  {
    auto bytes = storage::testing::file_bytes(dir() / snapshot_file_name(4));
    bytes.back() ^= std::byte{0xff};
    storage::testing::write_bytes_at(dir() / snapshot_file_name(4), 0, bytes);
  }
  open(true);
  EXPECT_TRUE(snapshot_files() == (std::vector<std::int64_t>{2, 4}));  // 4 deleted, then rewritten after the scan
  EXPECT_EQ(state->batches_replayed(), 1);
  EXPECT_EQ(produce(producer_batch(kPid, 0, 2, 2, now())).base_offset, 2);
  EXPECT_EQ(produce(producer_batch(kPid, 0, 2, 2, now())).outcome, ProducerCheck::kDuplicate);
}

TEST_F(ProducerStateManagerTest, SnapshotsBelowTheLogStartGoWithTheirSegments) {
  config.segment_bytes = 400;
  open(true);
  std::int32_t seq = 0;
  for (int i = 0; i < 8; ++i, seq += 2) ASSERT_EQ(produce(producer_batch(kPid, 0, seq, 2, now())).base_offset, 2 * i);
  const auto files = snapshot_files();
  ASSERT_EQ(files.size(), 2u);
  ASSERT_TRUE(log->delete_records_before(files.back()).has_value());
  EXPECT_TRUE(snapshot_files() == std::vector<std::int64_t>{files.back()});
  // At load, a snapshot at the log start describes only deleted data (Kafka's rule): it is
  // dropped and the log read from its start.
  reopen_after_crash();
  EXPECT_EQ(log->log_start_offset(), files.back());
  EXPECT_EQ(state->batches_replayed(), (16 - files.back()) / 2);
  EXPECT_TRUE(snapshot_files() == std::vector<std::int64_t>{16});
}

TEST_F(ProducerStateManagerTest, TransactionMarkersEndTransactionsOnReplay) {
  open(true);
  ASSERT_TRUE(log->append_with_offsets(
                     storage::testing::make_batch(3, now(), 16,
                                                  {.base_offset = 0, .producer_id = 9, .producer_epoch = 1,
                                                   .base_sequence = 0, .transactional = true}))
                  .has_value());
  ASSERT_TRUE(log->append_with_offsets(record::build_end_txn_marker_batch({.producer_id = 9,
                                                                           .producer_epoch = 1,
                                                                           .coordinator_epoch = 17,
                                                                           .commit = true,
                                                                           .timestamp_ms = now() + 5,
                                                                           .base_offset = 3}))
                  .has_value());
  ASSERT_TRUE(log->append_with_offsets(
                     storage::testing::make_batch(2, now(), 16,
                                                  {.base_offset = 4, .producer_id = 10, .producer_epoch = 0,
                                                   .base_sequence = 0, .transactional = true}))
                  .has_value());
  reopen_after_crash();
  const ProducerEntry* committed = state->table().find(9);
  ASSERT_NE(committed, nullptr);
  EXPECT_EQ(committed->epoch, 1);
  EXPECT_EQ(committed->coordinator_epoch, 17);
  EXPECT_FALSE(committed->current_txn_first_offset);
  EXPECT_EQ(committed->last_timestamp_ms, now() + 5);  // the marker's
  ASSERT_EQ(committed->batches.size(), 1u);
  EXPECT_EQ(committed->batches[0].last_offset, 2);
  const ProducerEntry* open_txn = state->table().find(10);
  ASSERT_NE(open_txn, nullptr);
  EXPECT_EQ(open_txn->current_txn_first_offset, 4);

  // Idle producers expire, except one with an open transaction (Kafka's rule).
  clock.advance_ms(kDay + 5);
  EXPECT_EQ(state->expire(now()), 1u);
  EXPECT_EQ(state->table().find(9), nullptr);
  EXPECT_NE(state->table().find(10), nullptr);
}

TEST_F(ProducerStateManagerTest, IdleProducersExpireAndExpiredSnapshotEntriesAreNotLoaded) {
  open(true);
  ASSERT_EQ(produce(producer_batch(kPid, 0, 0, 1, now())).base_offset, 0);
  clock.advance_ms(kDay / 2);
  ASSERT_EQ(produce(producer_batch(kPid + 1, 0, 0, 1, now())).base_offset, 1);
  clock.advance_ms(kDay / 2 - 1);
  EXPECT_EQ(state->expire(now()), 0u);  // one millisecond short of producer.id.expiration.ms
  reopen_clean();
  clock.advance_ms(1);
  // At load, the snapshot's entries that expired are left out.
  reopen_clean();
  EXPECT_EQ(state->table().find(kPid), nullptr);
  EXPECT_NE(state->table().find(kPid + 1), nullptr);
  // So the forgotten producer is new again: any sequence is accepted.
  EXPECT_EQ(produce(producer_batch(kPid, 0, 5, 1, now())).base_offset, 2);
  clock.advance_ms(kDay / 2);
  EXPECT_EQ(state->expire(now()), 1u);  // kPid + 1, idle for a day; kPid's new batch is half a day old
  EXPECT_EQ(state->table().find(kPid + 1), nullptr);
  EXPECT_NE(state->table().find(kPid), nullptr);
}

// A partition directory written by Kafka 4.3.1: its newest snapshot (147, the log end) is used,
// and rebuilding from the log alone (no snapshots) gives the same state, markers included.
TEST_F(ProducerStateManagerTest, KafkasDirectoryLoadsFromItsSnapshotAndRebuildsTheSame) {
  const fs::path fixture = fs::path(WEIR_STORAGE_TESTDATA) / "kafka-4.3.1" / "fix-topic.v1-0";
  fs::copy(fixture, dir(), fs::copy_options::recursive);
  config.index_interval_bytes = 200;
  config.segment_ms = 60'000;
  config.retention_ms = -1;
  clock.set_wall_ms(1'700'000'000'000 + kDay / 2);  // the fixture's producers are not expired yet
  open(true);
  EXPECT_EQ(state->batches_replayed(), 0);
  EXPECT_TRUE(snapshot_files() == (std::vector<std::int64_t>{125, 147}));  // the newest two kept
  const ProducerStateTable from_snapshot = state->table();
  ASSERT_EQ(from_snapshot.size(), 2u);

  for (std::int64_t offset : snapshot_files()) fs::remove(dir() / snapshot_file_name(offset));
  reopen_after_crash();
  EXPECT_GT(state->batches_replayed(), 0);
  ASSERT_EQ(state->table().size(), 2u);
  for (std::int64_t id : {0, 1}) {
    SCOPED_TRACE(id);
    const ProducerEntry& a = *from_snapshot.find(id);
    const ProducerEntry& b = *state->table().find(id);
    EXPECT_EQ(a.epoch, b.epoch);
    EXPECT_EQ(a.last_timestamp_ms, b.last_timestamp_ms);
    EXPECT_EQ(a.coordinator_epoch, b.coordinator_epoch);
    EXPECT_EQ(a.current_txn_first_offset, b.current_txn_first_offset);
    EXPECT_EQ(a.batches.back().first_seq, b.batches.back().first_seq);
    EXPECT_EQ(a.batches.back().last_seq, b.batches.back().last_seq);
    EXPECT_EQ(a.batches.back().first_offset, b.batches.back().first_offset);
    EXPECT_EQ(a.batches.back().last_offset, b.batches.back().last_offset);
  }
  // The rebuilt snapshot at the log end is byte for byte the one Kafka wrote.
  EXPECT_EQ(storage::testing::file_bytes(dir() / snapshot_file_name(147)),
            storage::testing::file_bytes(fixture / snapshot_file_name(147)));
}

}  // namespace
}  // namespace weir::storage
