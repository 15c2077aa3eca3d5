#include "storage/checkpoint.h"

#include <gtest/gtest.h>

#include "storage/fault_file_system.h"
#include "storage/leader_epoch_cache.h"
#include "test_util.h"

namespace weir::storage {
namespace {

using testing::TempDir;

const std::filesystem::path kKafkaFixture = std::filesystem::path(WEIR_STORAGE_TESTDATA) / "kafka-4.3.1";

TEST(CheckpointTest, OffsetCheckpointGoldenText) {
  const OffsetCheckpoint offsets{{{"orders", 0}, 1234}, {{"my.topic-v2", 11}, 0}};
  EXPECT_EQ(encode_offset_checkpoint(offsets), "0\n2\nmy.topic-v2 11 0\norders 0 1234\n");
  EXPECT_EQ(encode_offset_checkpoint({}), "0\n0\n");
}

TEST(CheckpointTest, OffsetCheckpointRoundTrips) {
  const OffsetCheckpoint offsets{{{"a", 0}, 5}, {{"a", 1}, 9}, {{"b-c.d", 2}, 0}};
  auto decoded = decode_offset_checkpoint(encode_offset_checkpoint(offsets));
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(*decoded, offsets);
}

TEST(CheckpointTest, OffsetCheckpointRejectsMalformedText) {
  EXPECT_EQ(decode_offset_checkpoint("1\n0\n").error(), Errc::kCorruptMessage) << "unknown version";
  EXPECT_EQ(decode_offset_checkpoint("0\n2\na 0 1\n").error(), Errc::kCorruptMessage) << "count mismatch";
  EXPECT_EQ(decode_offset_checkpoint("0\n1\na 0\n").error(), Errc::kCorruptMessage) << "missing field";
  EXPECT_EQ(decode_offset_checkpoint("0\n1\na x 1\n").error(), Errc::kCorruptMessage) << "bad partition";
  EXPECT_EQ(decode_offset_checkpoint("0\n").error(), Errc::kCorruptMessage) << "no count";
  auto empty = decode_offset_checkpoint("");
  ASSERT_TRUE(empty.has_value()) << "an empty file is an empty checkpoint, as Kafka reads it";
  EXPECT_TRUE(empty->empty());
}

TEST(CheckpointTest, ReadsCheckpointsWrittenByKafka) {
  auto offsets = read_offset_checkpoint(PosixFileSystem::instance(), kKafkaFixture / kRecoveryPointCheckpointFile);
  ASSERT_TRUE(offsets.has_value());
  EXPECT_EQ(offsets->size(), 51u);
  EXPECT_EQ(offsets->at(TopicPartition{"fix-topic.v1", 0}), 147);
  EXPECT_EQ(offsets->at(TopicPartition{"__transaction_state", 8}), 7);
  auto starts = read_offset_checkpoint(PosixFileSystem::instance(), kKafkaFixture / kLogStartOffsetCheckpointFile);
  ASSERT_TRUE(starts.has_value());
  EXPECT_TRUE(starts->empty());
  auto epochs = read_leader_epoch_checkpoint(PosixFileSystem::instance(),
                                             kKafkaFixture / "fix-topic.v1-0" / kLeaderEpochCheckpointFile);
  ASSERT_TRUE(epochs.has_value());
  EXPECT_EQ(*epochs, (std::vector<EpochEntry>{{0, 0}}));
  auto id =
      read_partition_metadata(PosixFileSystem::instance(), kKafkaFixture / "fix-topic.v1-0" / kPartitionMetadataFile);
  ASSERT_TRUE(id.has_value());
  EXPECT_EQ(id->to_string(), "iL9bFyJfT-mAr6NemyYHqw");
}

TEST(CheckpointTest, LeaderEpochCheckpointGoldenText) {
  EXPECT_EQ(encode_leader_epoch_checkpoint({{0, 0}, {3, 150}}), "0\n2\n0 0\n3 150\n");
  auto decoded = decode_leader_epoch_checkpoint("0\n2\n0 0\n3 150\n");
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(*decoded, (std::vector<EpochEntry>{{0, 0}, {3, 150}}));
  EXPECT_EQ(decode_leader_epoch_checkpoint("0\n1\n0 0 0\n").error(), Errc::kCorruptMessage);
}

TEST(CheckpointTest, PartitionMetadataGoldenTextMatchesKafka) {
  const Uuid id = *Uuid::from_string("iL9bFyJfT-mAr6NemyYHqw");
  const std::string text = encode_partition_metadata(id);
  EXPECT_EQ(text, "version: 0\ntopic_id: iL9bFyJfT-mAr6NemyYHqw");
  const auto kafka = testing::file_bytes(kKafkaFixture / "fix-topic.v1-0" / kPartitionMetadataFile);
  EXPECT_EQ(as_string_view(kafka), text) << "byte for byte what Kafka writes";
  EXPECT_EQ(decode_partition_metadata("version: 0\ntopic_id: iL9bFyJfT-mAr6NemyYHqw\n").value(), id);
  EXPECT_EQ(decode_partition_metadata("version: 1\ntopic_id: iL9bFyJfT-mAr6NemyYHqw").error(), Errc::kCorruptMessage);
  EXPECT_EQ(decode_partition_metadata("version: 0\ntopic: x").error(), Errc::kCorruptMessage);
}

TEST(CheckpointTest, WrittenAtomicallyAndDurably) {
  TempDir dir;
  FaultInjectingFileSystem fs;
  const auto path = dir.path() / kRecoveryPointCheckpointFile;
  ASSERT_TRUE(write_offset_checkpoint(fs, path, {{{"t", 0}, 1}}).has_value());
  ASSERT_TRUE(write_offset_checkpoint(fs, path, {{{"t", 0}, 2}}).has_value());
  fs.crash();
  auto read = read_offset_checkpoint(fs, path);
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->at(TopicPartition{"t", 0}), 2);
  EXPECT_EQ(read_offset_checkpoint(fs, dir.path() / "missing").error(), Errc::kNotFound);
}

TEST(CheckpointTest, FailedWriteKeepsTheOldFile) {
  TempDir dir;
  FaultInjectingFileSystem fs;
  const auto path = dir.path() / kRecoveryPointCheckpointFile;
  ASSERT_TRUE(write_offset_checkpoint(fs, path, {{{"t", 0}, 1}}).has_value());
  fs.set_free_bytes(3);
  EXPECT_EQ(write_offset_checkpoint(fs, path, {{{"t", 0}, 2}}).error(), Errc::kStorageError);
  fs.set_free_bytes(std::nullopt);
  EXPECT_EQ(read_offset_checkpoint(fs, path)->at(TopicPartition{"t", 0}), 1);
  EXPECT_FALSE(*fs.exists(dir.path() / "recovery-point-offset-checkpoint.tmp"));
}

TEST(PartitionDirNameTest, PartitionFollowsTheLastDash) {
  EXPECT_EQ(parse_partition_dir_name("orders-3"), (TopicPartition{"orders", 3}));
  EXPECT_EQ(parse_partition_dir_name("my-topic.v1-12"), (TopicPartition{"my-topic.v1", 12}));
  EXPECT_EQ(parse_partition_dir_name("__consumer_offsets-49"), (TopicPartition{"__consumer_offsets", 49}));
  EXPECT_FALSE(parse_partition_dir_name("orders"));
  EXPECT_FALSE(parse_partition_dir_name("orders-"));
  EXPECT_FALSE(parse_partition_dir_name("-3"));
  EXPECT_FALSE(parse_partition_dir_name("orders-x"));
  EXPECT_FALSE(parse_partition_dir_name("orders-3.abc-delete"));
  EXPECT_EQ(to_string(TopicPartition{"a-b", 7}), "a-b-7");
}

TEST(LeaderEpochCacheTest, AssignKeepsEpochsAndOffsetsIncreasing) {
  TempDir dir;
  LeaderEpochCache cache(PosixFileSystem::instance(), dir.path() / "leader-epoch-checkpoint");
  EXPECT_TRUE(cache.assign(0, 0));
  EXPECT_FALSE(cache.assign(0, 10)) << "same epoch, later offset: nothing new";
  EXPECT_TRUE(cache.assign(2, 100));
  EXPECT_TRUE(cache.assign(5, 300));
  EXPECT_EQ(cache.entries(), (std::vector<EpochEntry>{{0, 0}, {2, 100}, {5, 300}}));
  EXPECT_TRUE(cache.assign(3, 200)) << "a smaller epoch replaces the entries it contradicts";
  EXPECT_EQ(cache.entries(), (std::vector<EpochEntry>{{0, 0}, {2, 100}, {3, 200}}));
  ASSERT_TRUE(cache.write_if_dirty().has_value());
  EXPECT_EQ(as_string_view(testing::file_bytes(dir.path() / "leader-epoch-checkpoint")), "0\n3\n0 0\n2 100\n3 200\n");
  LeaderEpochCache loaded(PosixFileSystem::instance(), dir.path() / "leader-epoch-checkpoint");
  ASSERT_TRUE(loaded.load().has_value());
  EXPECT_EQ(loaded.entries(), cache.entries());
}

TEST(LeaderEpochCacheTest, EndOffsetForFollowsKafka) {
  TempDir dir;
  LeaderEpochCache cache(PosixFileSystem::instance(), dir.path() / "leader-epoch-checkpoint");
  EXPECT_EQ(cache.end_offset_for(0, 50), std::nullopt) << "empty cache";
  cache.assign(2, 10);
  cache.assign(4, 30);
  cache.assign(7, 60);
  const std::int64_t leo = 90;
  EXPECT_EQ(cache.end_offset_for(7, leo), (std::pair<std::int32_t, std::int64_t>{7, 90})) << "latest: the LEO";
  EXPECT_EQ(cache.end_offset_for(4, leo), (std::pair<std::int32_t, std::int64_t>{4, 60}));
  EXPECT_EQ(cache.end_offset_for(5, leo), (std::pair<std::int32_t, std::int64_t>{4, 60})) << "unknown: floor epoch";
  EXPECT_EQ(cache.end_offset_for(1, leo), (std::pair<std::int32_t, std::int64_t>{1, 10})) << "below all";
  EXPECT_EQ(cache.end_offset_for(8, leo), std::nullopt) << "beyond the latest";
  EXPECT_EQ(cache.end_offset_for(-1, leo), std::nullopt);
}

TEST(LeaderEpochCacheTest, TruncationFromEitherEnd) {
  TempDir dir;
  LeaderEpochCache cache(PosixFileSystem::instance(), dir.path() / "leader-epoch-checkpoint");
  cache.assign(1, 0);
  cache.assign(2, 10);
  cache.assign(3, 20);
  EXPECT_TRUE(cache.truncate_from_end(10));
  EXPECT_EQ(cache.entries(), (std::vector<EpochEntry>{{1, 0}}));
  cache.assign(2, 10);
  cache.assign(3, 20);
  EXPECT_TRUE(cache.truncate_from_start(15));
  EXPECT_EQ(cache.entries(), (std::vector<EpochEntry>{{2, 15}, {3, 20}}));
  EXPECT_FALSE(cache.truncate_from_start(15));
}

}  // namespace
}  // namespace weir::storage
