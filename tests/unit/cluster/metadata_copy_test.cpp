#include "cluster/metadata_copy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

#include "metadata_batches.h"

namespace weir::cluster {
namespace {

namespace fs = std::filesystem;
using namespace test_batches;  // NOLINT(google-build-using-namespace): the shared batch builders

MetadataBatch snapshot(std::int64_t end_offset, std::int32_t epoch, const std::vector<std::string>& names) {
  Bytes whole = control_batch(0, epoch, record::ControlRecordType::snapshot_header);
  const Bytes data = data_batch(1, epoch, names);
  whole.insert(whole.end(), data.begin(), data.end());
  const Bytes footer =
      control_batch(1 + static_cast<std::int64_t>(names.size()), epoch, record::ControlRecordType::snapshot_footer);
  whole.insert(whole.end(), footer.begin(), footer.end());
  std::vector<RecordError> errors;
  auto s = decode_metadata_snapshot(std::move(whole), end_offset, epoch, errors);
  EXPECT_TRUE(s);
  return *s;
}

Bytes read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return Bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void append_raw(const fs::path& p, const Bytes& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::app);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

std::vector<std::string> files(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::ranges::sort(out);
  return out;
}

class MetadataCopyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    root_ = fs::temp_directory_path() / ("weir-metadata-copy-" + std::to_string(rd()));
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  std::unique_ptr<MetadataCopy> open(MetadataCopy::Loaded& loaded, std::uint64_t max_bytes = 1 << 20) {
    auto c = MetadataCopy::open({.log_dir = root_, .max_bytes = max_bytes}, loaded);
    EXPECT_TRUE(c) << (c ? "" : c.error());
    return c ? std::move(*c) : nullptr;
  }
  fs::path dir() const { return root_ / "__cluster_metadata-0"; }

  fs::path root_;
};

TEST_F(MetadataCopyTest, KafkaFileNames) {
  EXPECT_EQ(metadata_segment_name(42), "00000000000000000042.log");
  EXPECT_EQ(metadata_snapshot_name(42, 3), "00000000000000000042-0000000003.checkpoint");
}

TEST_F(MetadataCopyTest, KeepsTheBatchesAsFetchedAndReadsThemBack) {
  const Bytes b0 = data_batch(0, 1, {"a", "b"});
  const Bytes b1 = control_batch(2, 1, record::ControlRecordType::leader_change);
  const Bytes b2 = data_batch(3, 2, {"c"});
  {
    MetadataCopy::Loaded loaded;
    auto c = open(loaded);
    EXPECT_FALSE(loaded.snapshot);
    EXPECT_TRUE(loaded.batches.empty());
    EXPECT_EQ(files(dir()), std::vector<std::string>{"00000000000000000000.log"});
    for (const auto& b : {b0, b1, b2}) ASSERT_TRUE(c->append(decoded(b)));
    ASSERT_TRUE(c->append(decoded(b0)));  // held already: ignored
    ASSERT_TRUE(c->sync());
    EXPECT_EQ(c->next_offset(), 4);
  }
  Bytes expected = b0;
  expected.insert(expected.end(), b1.begin(), b1.end());
  expected.insert(expected.end(), b2.begin(), b2.end());
  EXPECT_EQ(read(dir() / "00000000000000000000.log"), expected);

  MetadataCopy::Loaded loaded;
  auto c = open(loaded);
  ASSERT_EQ(loaded.batches.size(), 3u);
  EXPECT_EQ(topic_names(loaded.batches[0]), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(loaded.batches[1].records.empty());
  EXPECT_EQ(loaded.batches[2].epoch, 2);
  EXPECT_EQ(loaded.batches[2].raw, b2);
  EXPECT_EQ(c->next_offset(), 4);
  EXPECT_TRUE(loaded.notes.empty());
}

TEST_F(MetadataCopyTest, ATornTailIsCutAtTheLastWholeBatch) {
  const Bytes b0 = data_batch(0, 1, {"a"});
  const Bytes b1 = data_batch(1, 1, {"b"});
  {
    MetadataCopy::Loaded loaded;
    auto c = open(loaded);
    ASSERT_TRUE(c->append(decoded(b0)));
  }
  append_raw(dir() / "00000000000000000000.log", Bytes(b1.begin(), b1.begin() + 30));
  MetadataCopy::Loaded loaded;
  auto c = open(loaded);
  ASSERT_EQ(loaded.batches.size(), 1u);
  EXPECT_EQ(loaded.dropped_bytes, 30u);
  ASSERT_EQ(loaded.notes.size(), 1u);
  EXPECT_NE(loaded.notes[0].find("cut 30 bytes"), std::string::npos) << loaded.notes[0];
  ASSERT_TRUE(c->append(decoded(b1)));
  Bytes expected = b0;
  expected.insert(expected.end(), b1.begin(), b1.end());
  EXPECT_EQ(read(dir() / "00000000000000000000.log"), expected);
}

TEST_F(MetadataCopyTest, ABadCrcOrAnOffsetOutOfSequenceEndsTheCopy) {
  const Bytes b0 = data_batch(0, 1, {"a"});
  Bytes b1 = data_batch(1, 1, {"b"});
  b1.back() ^= 0x55;  // the record bytes no longer match the CRC
  {
    MetadataCopy::Loaded loaded;
    auto c = open(loaded);
    ASSERT_TRUE(c->append(decoded(b0)));
  }
  append_raw(dir() / "00000000000000000000.log", b1);
  append_raw(dir() / "00000000000000000000.log", data_batch(2, 1, {"c"}));
  MetadataCopy::Loaded loaded;
  auto c = open(loaded);
  EXPECT_EQ(loaded.batches.size(), 1u);
  EXPECT_EQ(c->next_offset(), 1);
  EXPECT_EQ(read(dir() / "00000000000000000000.log"), b0);

  // A batch that skips offsets.
  append_raw(dir() / "00000000000000000000.log", data_batch(5, 1, {"x"}));
  MetadataCopy::Loaded again;
  c = open(again);
  EXPECT_EQ(again.batches.size(), 1u);
  EXPECT_NE(again.notes.at(0).find("offset 5 where 1 was expected"), std::string::npos) << again.notes.at(0);
}

TEST_F(MetadataCopyTest, ASnapshotReplacesTheLogBeforeIt) {
  MetadataCopy::Loaded loaded;
  auto c = open(loaded);
  ASSERT_TRUE(c->append(decoded(data_batch(0, 1, {"old"}))));
  const MetadataBatch snap = snapshot(10, 4, {"s1", "s2"});
  ASSERT_TRUE(c->append(snap));
  EXPECT_EQ(c->next_offset(), 10);
  EXPECT_EQ(files(dir()),
            (std::vector<std::string>{"00000000000000000010-0000000004.checkpoint", "00000000000000000010.log"}));
  EXPECT_EQ(read(dir() / "00000000000000000010-0000000004.checkpoint"), snap.raw);
  const Bytes after = data_batch(10, 4, {"t"});
  ASSERT_TRUE(c->append(decoded(after)));
  c.reset();

  MetadataCopy::Loaded back;
  c = open(back);
  ASSERT_TRUE(back.snapshot);
  EXPECT_EQ(back.snapshot->last_offset, 9);
  EXPECT_EQ(back.snapshot->epoch, 4);
  EXPECT_EQ(topic_names(*back.snapshot), (std::vector<std::string>{"s1", "s2"}));
  ASSERT_EQ(back.batches.size(), 1u);
  EXPECT_EQ(back.batches[0].base_offset, 10);
  EXPECT_EQ(c->next_offset(), 11);
}

TEST_F(MetadataCopyTest, AKafkaBrokersDirectoryIsReadAndItsStaleFilesGo) {
  // As a Kafka broker leaves it: an old segment covered by the snapshot, the snapshot, a newer
  // segment with its index files, an unfinished snapshot.
  fs::create_directories(dir());
  append_raw(dir() / "00000000000000000000.log", data_batch(0, 1, {"a"}));
  append_raw(dir() / "00000000000000000003.log", data_batch(3, 1, {"b"}));
  append_raw(dir() / "00000000000000000003.log", data_batch(4, 1, {"c"}));
  append_raw(dir() / "00000000000000000003.index", Bytes(8, 0));
  append_raw(dir() / "00000000000000000003.timeindex", Bytes(12, 0));
  const MetadataBatch snap = snapshot(4, 1, {"a", "b"});
  append_raw(dir() / "00000000000000000004-0000000001.checkpoint", snap.raw);
  append_raw(dir() / "00000000000000000002-0000000001.checkpoint", snap.raw);
  append_raw(dir() / "00000000000000000009-0000000001.checkpoint.part", Bytes(5, 1));
  append_raw(dir() / "quorum-state", Bytes(3, 1));
  // Names in the copy's pattern whose numbers do not fit are not the copy's files: left alone.
  append_raw(dir() / "99999999999999999999.log", Bytes(3, 1));
  append_raw(dir() / "00000000000000000009-9999999999.checkpoint", Bytes(3, 1));

  MetadataCopy::Loaded loaded;
  auto c = open(loaded);
  ASSERT_TRUE(loaded.snapshot);
  ASSERT_EQ(loaded.batches.size(), 1u);  // offset 3 is in the snapshot
  EXPECT_EQ(topic_names(loaded.batches[0]), std::vector<std::string>{"c"});
  EXPECT_EQ(c->next_offset(), 5);
  EXPECT_EQ(files(dir()),
            (std::vector<std::string>{"00000000000000000003.log", "00000000000000000004-0000000001.checkpoint",
                                      "00000000000000000009-9999999999.checkpoint", "99999999999999999999.log",
                                      "quorum-state"}));
}

TEST_F(MetadataCopyTest, TruncationCutsAtABatchBoundaryAndStopsInsideOne) {
  MetadataCopy::Loaded loaded;
  auto c = open(loaded);
  const Bytes b0 = data_batch(0, 1, {"a"});
  ASSERT_TRUE(c->append(decoded(b0)));
  ASSERT_TRUE(c->append(decoded(data_batch(1, 1, {"b", "c"}))));
  ASSERT_TRUE(c->truncate(1));
  EXPECT_EQ(c->next_offset(), 1);
  EXPECT_EQ(read(dir() / "00000000000000000000.log"), b0);
  ASSERT_TRUE(c->append(decoded(data_batch(1, 2, {"x", "y"}))));
  ASSERT_TRUE(c->truncate(2));  // inside the batch at 1
  EXPECT_FALSE(c->active());
  EXPECT_TRUE(files(dir()).empty());
  EXPECT_EQ(c->take_notes().size(), 1u);
  ASSERT_TRUE(c->append(decoded(data_batch(2, 2, {"z"}))));  // stopped: nothing written
  EXPECT_TRUE(files(dir()).empty());
  // The next snapshot starts it again.
  ASSERT_TRUE(c->append(snapshot(3, 2, {"z"})));
  EXPECT_TRUE(c->active());
  EXPECT_EQ(c->next_offset(), 3);
}

TEST_F(MetadataCopyTest, AGapOrTheSizeLimitStopsTheCopyAndRemovesItsFiles) {
  {
    MetadataCopy::Loaded loaded;
    auto c = open(loaded);
    ASSERT_TRUE(c->append(decoded(data_batch(0, 1, {"a"}))));
    ASSERT_TRUE(c->append(decoded(data_batch(2, 1, {"b"}))));
    EXPECT_FALSE(c->active());
    EXPECT_TRUE(files(dir()).empty());
  }
  MetadataCopy::Loaded loaded;
  auto c = open(loaded, 200);
  EXPECT_TRUE(loaded.batches.empty());
  EXPECT_EQ(c->next_offset(), 0);
  std::int64_t offset = 0;
  while (c->active() && offset < 100) {
    ASSERT_TRUE(c->append(decoded(data_batch(offset, 1, {"topic-" + std::to_string(offset)}))));
    ++offset;
  }
  EXPECT_FALSE(c->active());
  EXPECT_GT(offset, 1);
  EXPECT_TRUE(files(dir()).empty());
  const auto notes = c->take_notes();
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("limit 200"), std::string::npos) << notes[0];
}

TEST_F(MetadataCopyTest, AnUnreadableSnapshotRemovesTheCopy) {
  fs::create_directories(dir());
  append_raw(dir() / "00000000000000000004-0000000001.checkpoint", Bytes(100, 7));
  append_raw(dir() / "00000000000000000000.log", data_batch(0, 1, {"a"}));
  MetadataCopy::Loaded loaded;
  auto c = open(loaded);
  EXPECT_FALSE(loaded.snapshot);
  EXPECT_TRUE(loaded.batches.empty());
  EXPECT_EQ(c->next_offset(), 0);
  EXPECT_EQ(files(dir()), std::vector<std::string>{"00000000000000000000.log"});
  EXPECT_EQ(fs::file_size(dir() / "00000000000000000000.log"), 0u);
}

}  // namespace
}  // namespace weir::cluster
