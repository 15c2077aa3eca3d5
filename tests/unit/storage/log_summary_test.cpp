// The log dir's clean-shutdown summary (log_summary.h): its format, and a LogManager that builds
// its logs from it exactly as it would from their files, without touching them, and falls back
// to the files wherever the summary cannot be trusted.
#include "storage/log_summary.h"

#include <gtest/gtest.h>

#include <fstream>

#include "storage/fault_file_system.h"
#include "storage/log_manager.h"
#include "test_util.h"

namespace weir::storage {
namespace {

namespace fs = std::filesystem;
using testing::make_batch;
using testing::read_all;
using testing::TempDir;

PartitionSummary sample_partition(std::string name) {
  PartitionSummary p;
  p.dir_name = std::move(name);
  p.dir_identity = FileIdentity{0x801, 123456789, 1'700'000'000'123'456'789};
  p.topic_id = Uuid(0x0123456789abcdef, 0xfedcba9876543210);
  p.epochs = {EpochEntry{0, 0}, EpochEntry{3, 120}};
  SegmentSummary first;
  first.base_offset = 0;
  first.log_bytes = 10'000;
  first.offset_index_bytes = 16;
  first.time_index_bytes = 24;
  SegmentSummary active;
  active.base_offset = 120;
  active.log_bytes = 700;
  active.offset_index_bytes = 0;
  active.time_index_bytes = 12;
  active.txn_index_bytes = 34;
  active.next_offset = 130;
  active.max_timestamp = 1'700'000'000'000;
  active.max_timestamp_offset = 129;
  active.first_batch_timestamp = 1'699'999'999'000;
  active.bytes_since_index_entry = 700;
  p.segments = {first, active};
  p.producers = CarriedProducerState{{100, 130}, 130, {std::byte{1}, std::byte{2}, std::byte{3}}};
  return p;
}

TEST(LogSummaryFormat, RoundTripsAndRefusesAnythingDamaged) {
  PartitionSummary bare = sample_partition("b-0");
  bare.topic_id.reset();
  bare.producers.reset();
  bare.epochs.clear();
  bare.segments.resize(1);
  const LogSummary summary{FileIdentity{0x802, 42, 1'700'000'001'000'000'007},
                           {sample_partition("topic.with-dash-17"), bare}};
  const std::vector<std::byte> bytes = encode_log_summary(summary);
  auto decoded = decode_log_summary(bytes);
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(*decoded, summary);
  EXPECT_EQ(decode_log_summary(encode_log_summary(LogSummary{})), LogSummary{});

  // Any flipped byte fails the CRC (or the magic); any cut is refused.
  for (std::size_t i = 0; i < bytes.size(); i += 7) {
    std::vector<std::byte> damaged = bytes;
    damaged[i] ^= std::byte{0x40};
    EXPECT_FALSE(decode_log_summary(damaged).has_value()) << "byte " << i;
  }
  for (std::size_t n : {std::size_t{0}, std::size_t{5}, bytes.size() / 2, bytes.size() - 1}) {
    EXPECT_FALSE(decode_log_summary(ByteSpan(bytes).first(n)).has_value()) << "first " << n << " bytes";
  }
}

class LogSummaryTest : public ::testing::Test {
 protected:
  TempDir tmp;
  FaultInjectingFileSystem fs;
  ManualClock clock;
  std::unique_ptr<LogManager> manager;
  const Uuid topic_id = Uuid(0x1234, 0x5678);
  static constexpr int kPartitions = 12;

  fs::path dir() const { return tmp.path() / "data"; }

  static LogConfig config() {
    LogConfig c;
    c.segment_bytes = 600;  // a few segments per partition
    c.index_interval_bytes = 100;
    return c;
  }
  std::unique_ptr<LogManager> open_at(const fs::path& at) {
    LogManagerOptions options;
    options.default_config = config();
    options.load_threads = 2;
    auto opened = LogManager::open(fs, at, clock, options);
    EXPECT_TRUE(opened.has_value()) << opened.error();
    return opened ? std::move(*opened) : nullptr;
  }
  void open() {
    manager.reset();
    manager = open_at(dir());
    ASSERT_NE(manager, nullptr);
  }
  void SetUp() override { open(); }

  // The records fill() gives partition p.
  static std::int64_t records(int p) {
    std::int64_t n = 0;
    for (int i = 0; i < p; ++i) n += 1 + i % 3;
    return n;
  }
  void append(PartitionLog& log, int records) {
    auto batch = make_batch(records, clock.wall_ms(), 40);
    ASSERT_TRUE(log.append_as_leader(batch, 2).has_value());
    clock.advance_ms(10);
  }
  // Partitions with 1 to several segments, epochs, a moved log start and a high watermark.
  void fill() {
    for (int p = 0; p < kPartitions; ++p) {
      auto log = manager->create({"t", p}, topic_id, config());
      ASSERT_TRUE(log.has_value());
      for (int i = 0; i < p; ++i) append(**log, 1 + i % 3);
      (*log)->update_high_watermark((*log)->log_end_offset() - p / 4);
    }
    ASSERT_TRUE(manager->get({"t", 9})->delete_records_before(4).has_value());
  }
};

// Everything a reader can see of a log.
struct Seen {
  std::int64_t log_start = 0, log_end = 0, high_watermark = 0, recovery_point = 0;
  std::size_t segments = 0;
  std::vector<EpochEntry> epochs;
  std::vector<std::pair<std::int64_t, std::vector<std::byte>>> batches;
  std::optional<TimestampOffset> max_timestamp, by_timestamp;
  std::optional<Uuid> topic_id;
  friend bool operator==(const Seen&, const Seen&) = default;
};

Seen seen(const LogManager& m, const TopicPartition& tp) {
  const PartitionLog& log = *m.get(tp);
  Seen s{log.log_start_offset(),
         log.log_end_offset(),
         log.high_watermark(),
         log.recovery_point(),
         log.segment_count(),
         log.epoch_entries(),
         {},
         log.max_timestamp(),
         std::nullopt,
         m.topic_id(tp)};
  for (auto& b : read_all(log)) s.batches.emplace_back(b.base_offset, std::move(b.bytes));
  if (s.max_timestamp) s.by_timestamp = log.find_offset_by_timestamp(s.max_timestamp->timestamp_ms - 15);
  return s;
}

TEST_F(LogSummaryTest, LogsBuiltFromTheSummaryAreTheLogsTheirFilesHoldAndTouchNoFile) {
  fill();
  ASSERT_TRUE(manager->close().has_value());
  manager.reset();
  ASSERT_TRUE(fs::exists(dir() / kLogSummaryFile));
  // A copy of the directory: new inodes, so the summary does not describe it; it loads from its files.
  const fs::path copy = tmp.path() / "copy";
  fs::copy(dir(), copy, fs::copy_options::recursive);
  auto from_files = open_at(copy);
  ASSERT_NE(from_files, nullptr);
  EXPECT_EQ(from_files->loaded_from_summary(), 0u);

  open();
  EXPECT_TRUE(manager->had_clean_shutdown());
  EXPECT_EQ(manager->loaded_from_summary(), static_cast<std::size_t>(kPartitions));
  EXPECT_FALSE(fs::exists(dir() / kLogSummaryFile)) << "removed once open, as the marker is";
  // The checkpoints, the marker and the summary were read; no partition's file was opened.
  EXPECT_LE(manager->file_stats().opens, 6u);
  for (int p = 0; p < kPartitions; ++p) {
    EXPECT_EQ(seen(*manager, {"t", p}), seen(*from_files, {"t", p})) << "partition " << p;
  }

  // Both go on the same way: appends (the restored active segments load their indexes first),
  // rolls, a clean shutdown; every file ends byte for byte the same.
  for (int p = 0; p < kPartitions; ++p) {
    for (LogManager* m : {manager.get(), from_files.get()}) {
      auto batch = make_batch(2, clock.wall_ms() + 1000, 40);
      ASSERT_TRUE(m->get({"t", p})->append_as_leader(batch, 5).has_value());
    }
  }
  ASSERT_TRUE(manager->close().has_value());
  ASSERT_TRUE(from_files->close().has_value());
  manager.reset();
  from_files.reset();
  for (int p = 0; p < kPartitions; ++p) {
    const std::string name = "t-" + std::to_string(p);
    std::size_t files = 0;
    for (const auto& e : fs::directory_iterator(dir() / name)) {
      ++files;
      EXPECT_EQ(testing::file_bytes(e.path()), testing::file_bytes(copy / name / e.path().filename())) << e.path();
    }
    EXPECT_EQ(files, static_cast<std::size_t>(std::distance(fs::directory_iterator(copy / name), {})));
  }
}

TEST_F(LogSummaryTest, AStopAfterARestoreWithoutWritesSyncsNoPartitionFile) {
  fill();
  ASSERT_TRUE(manager->close().has_value());
  open();
  ASSERT_EQ(manager->loaded_from_summary(), static_cast<std::size_t>(kPartitions));
  const std::int64_t syncs = fs.file_syncs();
  ASSERT_TRUE(manager->close().has_value());
  // Three offset checkpoints, the summary and the marker, each written atomically.
  EXPECT_LE(fs.file_syncs() - syncs, 5);
  open();
  EXPECT_EQ(manager->loaded_from_summary(), static_cast<std::size_t>(kPartitions));
  EXPECT_EQ(manager->get({"t", 11})->log_end_offset(), records(11));
}

TEST_F(LogSummaryTest, ADirectoryChangedSinceTheShutdownIsReadFromItsFiles) {
  fill();
  ASSERT_TRUE(manager->close().has_value());
  manager.reset();
  // A file added to one directory, one removed from another (its time index: rebuilt), one
  // directory replaced by a copy of itself.
  {
    std::ofstream(dir() / "t-3" / "notes.txt") << "hello";
  }
  ASSERT_TRUE(fs::remove(dir() / "t-5" / "00000000000000000000.timeindex"));
  fs::rename(dir() / "t-7", tmp.path() / "t-7-moved");
  fs::copy(tmp.path() / "t-7-moved", dir() / "t-7", fs::copy_options::recursive);
  open();
  EXPECT_EQ(manager->loaded_from_summary(), static_cast<std::size_t>(kPartitions - 3));
  EXPECT_EQ(manager->get({"t", 5})->log_end_offset(), records(5));
  EXPECT_EQ(manager->get({"t", 7})->log_end_offset(), records(7));
  EXPECT_EQ(manager->topic_id({"t", 7}), topic_id);
  EXPECT_TRUE(manager->get({"t", 5})->max_timestamp().has_value());
}

TEST_F(LogSummaryTest, TheSummaryIsUsedOnlyWithTheCleanShutdownMarkerAndIntact) {
  fill();
  ASSERT_TRUE(manager->close().has_value());
  manager.reset();
  // Damaged: ignored, and the logs load from their files.
  testing::write_bytes_at(dir() / kLogSummaryFile, 20, as_bytes(std::string_view("garbage")));
  open();
  EXPECT_TRUE(manager->had_clean_shutdown());
  EXPECT_EQ(manager->loaded_from_summary(), 0u);
  EXPECT_EQ(manager->get({"t", 11})->log_end_offset(), records(11));
  EXPECT_FALSE(fs::exists(dir() / kLogSummaryFile));

  // Without the marker (a crash after a clean stop's summary was written but before its marker,
  // or a summary left from an older stop): ignored and removed.
  ASSERT_TRUE(manager->close().has_value());
  manager.reset();
  ASSERT_TRUE(fs::exists(dir() / kLogSummaryFile));
  ASSERT_TRUE(fs::remove(dir() / ".kafka_cleanshutdown"));
  open();
  EXPECT_FALSE(manager->had_clean_shutdown());
  EXPECT_EQ(manager->loaded_from_summary(), 0u);
  EXPECT_FALSE(fs::exists(dir() / kLogSummaryFile));
  EXPECT_EQ(manager->get({"t", 11})->log_end_offset(), records(11));
}

TEST_F(LogSummaryTest, AMarkerAnotherBrokerWroteSinceIsNotTheOneTheSummaryBelongsTo) {
  fill();
  ASSERT_TRUE(manager->close().has_value());
  manager.reset();
  // Kafka started on the directory (removing the marker, not knowing the summary), appended to a
  // partition in place, and stopped cleanly (a new marker, written aside and renamed, as Kafka
  // does): the summary is older than the logs and must not be used.
  const fs::path marker = dir() / ".kafka_cleanshutdown";
  const std::string content = std::string(as_string_view(testing::file_bytes(marker)));
  ASSERT_TRUE(fs::remove(marker));
  {
    std::ofstream(dir() / "marker.tmp") << content;
  }
  fs::rename(dir() / "marker.tmp", marker);
  open();
  EXPECT_TRUE(manager->had_clean_shutdown());
  EXPECT_EQ(manager->loaded_from_summary(), 0u);
  EXPECT_FALSE(fs::exists(dir() / kLogSummaryFile));
  EXPECT_EQ(manager->get({"t", 11})->log_end_offset(), records(11));
}

TEST_F(LogSummaryTest, BytesAddedToAnIndexWhileStoppedAreCutOnItsFirstUse) {
  fill();
  ASSERT_TRUE(manager->close().has_value());
  manager.reset();
  // In place (the directory does not change): the active segment's offset index gets a bogus entry.
  fs::path newest;
  for (const auto& e : fs::directory_iterator(dir() / "t-11")) {
    if (e.path().extension() == ".index" && (newest.empty() || e.path() > newest)) newest = e.path();
  }
  ASSERT_FALSE(newest.empty());
  const std::string bogus(8, '\x7f');
  {
    std::ofstream(newest, std::ios::binary | std::ios::app) << bogus;
  }
  open();
  ASSERT_EQ(manager->loaded_from_summary(), static_cast<std::size_t>(kPartitions));
  // The cache holds the file at the size the summary recorded: the extra bytes go on first use.
  PartitionLog& log = *manager->get({"t", 11});
  append(log, 2);
  EXPECT_EQ(log.log_end_offset(), records(11) + 2);
  const auto index = testing::file_bytes(newest);
  EXPECT_EQ(std::string_view(reinterpret_cast<const char*>(index.data()), index.size()).find(bogus),
            std::string_view::npos);
  ASSERT_TRUE(manager->close().has_value());
  manager.reset();
  ASSERT_TRUE(fs::remove(dir() / ".kafka_cleanshutdown"));  // a full recovery checks every batch
  open();
  EXPECT_EQ(read_all(*manager->get({"t", 11})).back().last_offset, records(11) + 1);
}

}  // namespace
}  // namespace weir::storage
