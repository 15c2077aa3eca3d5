#include "metadata/metadata_log.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "metadata/controller.h"
#include "protocol/record/batch_splitter.h"
#include "protocol/record/record.h"
#include "protocol/record/record_batch_builder.h"

namespace weir::metadata {
namespace {

namespace fs = std::filesystem;

constexpr std::int64_t kNowMs = 1'704'067'200'000;

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "weir-metadata-XXXXXX").string();
    char* made = ::mkdtemp(pattern.data());
    EXPECT_NE(made, nullptr);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::vector<char> read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

void write_file(const fs::path& p, const std::vector<char>& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

protocol::CreateTopicsRequest create_request(std::string name, std::int32_t partitions) {
  protocol::CreateTopicsRequest request;
  protocol::CreateTopicsRequest::CreatableTopic t;
  t.name = std::move(name);
  t.num_partitions = partitions;
  t.replication_factor = 1;
  request.topics.push_back(t);
  return request;
}

// A broker's metadata: a controller over a log in dir, with every change appended then applied.
class Node {
 public:
  explicit Node(const fs::path& dir, MetadataLog::Options options = {}) {
    MetadataImage image;
    auto log = MetadataLog::open(dir, image, options);
    EXPECT_TRUE(log.has_value()) << to_string(log.error());
    log_.emplace(std::move(*log));
    controller_.emplace(ControllerConfig{.node_id = 1}, std::move(image));
  }

  Status<StoreErrc> commit(const std::vector<MetadataRecord>& records) {
    if (records.empty()) return {};
    if (auto ok = log_->append(records, kNowMs); !ok) return ok;
    for (const auto& r : records) {
      if (auto ok = controller_->replay(r); !ok) return ok;
    }
    return {};
  }

  void start_fresh() {
    ASSERT_TRUE(commit(controller_->bootstrap_records({{"metadata.version", 30}})));
    BrokerInfo broker;
    broker.broker_id = 1;
    broker.broker_epoch = log_->next_offset();
    broker.incarnation_id = Uuid::random();
    broker.endpoints.push_back({"PLAINTEXT", "localhost", 9092, 0});
    ASSERT_TRUE(commit(controller_->register_broker(broker)));
  }

  void create(std::string name, std::int32_t partitions) {
    auto result = controller_->create_topics(create_request(std::move(name), partitions), 7, {});
    ASSERT_EQ(result.response.topics.at(0).error_code, 0);
    ASSERT_TRUE(commit(result.records));
  }

  std::int64_t allocate_block() {
    auto result = controller_->allocate_producer_ids(1, 1);
    EXPECT_TRUE(result.has_value());
    EXPECT_TRUE(commit(result->records));
    return result->response.first_producer_id;
  }

  MetadataLog& log() { return *log_; }
  Controller& controller() { return *controller_; }

 private:
  std::optional<MetadataLog> log_;
  std::optional<Controller> controller_;
};

fs::path segment(const fs::path& dir) { return dir / kMetadataLogDirName / kMetadataSegmentName; }

TEST(MetadataLogTest, CreatesKafkasLayoutOnFirstOpen) {
  TempDir dir;
  MetadataImage image;
  auto log = MetadataLog::open(dir.path(), image);
  ASSERT_TRUE(log.has_value());
  EXPECT_TRUE(fs::exists(segment(dir.path())));
  EXPECT_EQ(log->next_offset(), 0);
  EXPECT_EQ(log->size_bytes(), 0u);
  EXPECT_EQ(image.records_replayed(), 0);
}

TEST(MetadataLogTest, ReopeningRebuildsTheSameImage) {
  TempDir dir;
  MetadataImage expected;
  {
    Node node(dir.path());
    node.start_fresh();
    node.create("orders", 3);
    node.create("logs", 1);
    protocol::IncrementalAlterConfigsRequest alter;
    protocol::IncrementalAlterConfigsRequest::AlterConfigsResource resource;
    resource.resource_type = kConfigResourceTopic;
    resource.resource_name = "orders";
    protocol::IncrementalAlterConfigsRequest::AlterableConfig c;
    c.name = "retention.ms";
    c.config_operation = 0;
    c.value = "1000";
    resource.configs.push_back(c);
    alter.resources.push_back(resource);
    ASSERT_TRUE(node.commit(node.controller().incremental_alter_configs(alter, 1).records));
    protocol::DeleteTopicsRequest remove;
    remove.topic_names = {"logs"};
    ASSERT_TRUE(node.commit(node.controller().delete_topics(remove, 5).records));
    node.allocate_block();
    expected = node.controller().image();
  }
  Node reopened(dir.path());
  EXPECT_TRUE(reopened.controller().image().same_content(expected));
  EXPECT_EQ(reopened.log().recovery().truncated_bytes, 0u);
  EXPECT_EQ(reopened.controller().image().topic_configs("orders").at("retention.ms"), "1000");
  EXPECT_EQ(reopened.controller().image().topic("logs"), nullptr);
  EXPECT_EQ(reopened.controller().image().topic("orders")->partitions.size(), 3u);
}

TEST(MetadataLogTest, EachAppendIsOneBatchWithConsecutiveOffsetsAndNullKeys) {
  TempDir dir;
  {
    Node node(dir.path(), {.leader_epoch = 3});
    node.start_fresh();        // 2 batches: bootstrap (2 records), registration (1)
    node.create("orders", 2);  // 1 batch of 3 records
    EXPECT_EQ(node.log().next_offset(), 6);
  }
  const auto bytes = read_file(segment(dir.path()));
  record::BatchSplitter splitter(as_bytes(std::string_view(bytes.data(), bytes.size())));
  std::vector<std::pair<std::int64_t, std::int32_t>> batches;
  for (;;) {
    auto next = splitter.next();
    ASSERT_TRUE(next.has_value());
    if (!*next) break;
    const auto& batch = **next;
    ASSERT_TRUE(batch.validate().has_value());
    EXPECT_EQ(batch.partition_leader_epoch(), 3);
    EXPECT_EQ(batch.max_timestamp(), kNowMs);
    EXPECT_FALSE(batch.has_producer_id());
    batches.emplace_back(batch.base_offset(), batch.records_count());
    auto ok = record::for_each_record(batch, [](const record::RecordView& r) {
      EXPECT_FALSE(r.key.has_value());
      ASSERT_TRUE(r.value.has_value());
      EXPECT_TRUE(decode_record(*r.value).has_value());
    });
    EXPECT_TRUE(ok.has_value());
  }
  EXPECT_EQ(batches, (std::vector<std::pair<std::int64_t, std::int32_t>>{{0, 2}, {2, 1}, {3, 3}}));
  EXPECT_EQ(splitter.remaining().size(), 0u);
}

// kill -9 in the middle of a write leaves part of the last batch.
TEST(MetadataLogTest, ATornLastBatchIsCutOffOnOpen) {
  TempDir dir;
  std::size_t good_size = 0;
  {
    Node node(dir.path());
    node.start_fresh();
    good_size = node.log().size_bytes();
    node.create("orders", 3);
  }
  auto bytes = read_file(segment(dir.path()));
  for (std::size_t cut : {bytes.size() - 1, good_size + 30, good_size + 5}) {
    write_file(segment(dir.path()), std::vector<char>(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(cut)));
    Node node(dir.path());
    EXPECT_EQ(node.log().recovery().truncated_bytes, cut - good_size);
    EXPECT_EQ(node.log().size_bytes(), good_size);
    EXPECT_EQ(fs::file_size(segment(dir.path())), good_size);
    EXPECT_EQ(node.controller().image().topic("orders"), nullptr);
    EXPECT_EQ(node.log().next_offset(), 3);
  }
  // The log goes on from the cut, and the result reopens cleanly.
  {
    Node node(dir.path());
    node.create("orders", 1);
    EXPECT_EQ(node.log().next_offset(), 5);
  }
  Node node(dir.path());
  EXPECT_EQ(node.log().recovery().truncated_bytes, 0u);
  EXPECT_EQ(node.controller().image().topic("orders")->partitions.size(), 1u);
}

TEST(MetadataLogTest, ABatchFailingItsCrcEndsTheLog) {
  TempDir dir;
  std::size_t good_size = 0;
  {
    Node node(dir.path());
    node.start_fresh();
    good_size = node.log().size_bytes();
    node.create("orders", 3);
    node.create("logs", 1);
  }
  auto bytes = read_file(segment(dir.path()));
  bytes[good_size + 70] ^= 0x5a;  // inside the records of the first create
  write_file(segment(dir.path()), bytes);
  Node node(dir.path());
  EXPECT_EQ(node.log().size_bytes(), good_size);
  EXPECT_EQ(node.log().recovery().truncated_bytes, bytes.size() - good_size);
  EXPECT_EQ(node.controller().image().topic_count(), 0u);
}

TEST(MetadataLogTest, TrailingZerosAreCutOff) {
  // A file extended but never written (e.g. after power loss) reads as zeros.
  TempDir dir;
  std::size_t good_size = 0;
  {
    Node node(dir.path());
    node.start_fresh();
    node.create("orders", 1);
    good_size = node.log().size_bytes();
  }
  auto bytes = read_file(segment(dir.path()));
  bytes.resize(bytes.size() + 4096, 0);
  write_file(segment(dir.path()), bytes);
  Node node(dir.path());
  EXPECT_EQ(node.log().size_bytes(), good_size);
  EXPECT_NE(node.controller().image().topic("orders"), nullptr);
}

TEST(MetadataLogTest, AnUndecodableRecordInAnIntactBatchIsNotTruncated) {
  // Not a torn write: a record this build does not know. Refuse to start, change nothing.
  TempDir dir;
  {
    Node node(dir.path());
    node.start_fresh();
  }
  const auto before = read_file(segment(dir.path()));
  {
    record::RecordBatchBuilder builder({.base_offset = 3});
    const std::uint8_t unknown[] = {1, 17, 0, 0};  // BrokerRegistrationChangeRecord
    builder.append(kNowMs, std::nullopt, std::as_bytes(std::span(unknown)));
    const auto batch = builder.build();
    auto bytes = before;
    bytes.insert(bytes.end(), reinterpret_cast<const char*>(batch.data()),
                 reinterpret_cast<const char*>(batch.data()) + batch.size());
    write_file(segment(dir.path()), bytes);
  }
  const auto with_unknown = read_file(segment(dir.path()));
  MetadataImage image;
  auto log = MetadataLog::open(dir.path(), image);
  ASSERT_FALSE(log.has_value());
  EXPECT_EQ(log.error(), StoreErrc::corrupt_log);
  EXPECT_EQ(read_file(segment(dir.path())), with_unknown);
}

TEST(MetadataLogTest, ProducerIdBlocksAreNeverReusedAcrossReopens) {
  TempDir dir;
  {
    Node node(dir.path());
    node.start_fresh();
    EXPECT_EQ(node.allocate_block(), 0);
    EXPECT_EQ(node.allocate_block(), 1000);
  }
  {
    Node node(dir.path());
    EXPECT_EQ(node.allocate_block(), 2000);
  }
  Node node(dir.path());
  EXPECT_EQ(node.controller().image().next_producer_id(), 3000);
  EXPECT_EQ(node.allocate_block(), 3000);
}

class FailingFile final : public LogFile {
 public:
  Result<std::vector<std::byte>, StoreErrc> read_all() override { return std::vector<std::byte>{}; }
  Status<StoreErrc> append_and_sync(ByteSpan bytes) override {
    ++appends;
    if (fail_appends) return unexpected(StoreErrc::io_error);
    written += bytes.size();
    return {};
  }
  Status<StoreErrc> truncate_and_sync(std::uint64_t size) override {
    truncated_to = size;
    if (fail_truncates) return unexpected(StoreErrc::io_error);
    return {};
  }
  bool fail_appends = true;
  bool fail_truncates = false;
  int appends = 0;
  std::uint64_t written = 0;
  std::optional<std::uint64_t> truncated_to;
};

TEST(MetadataLogTest, AFailedAppendThatIsCutBackLeavesTheLogUsable) {
  auto file = std::make_unique<FailingFile>();
  FailingFile* raw = file.get();
  MetadataImage image;
  auto log = MetadataLog::open(std::move(file), image, {});
  ASSERT_TRUE(log.has_value());
  const std::vector<MetadataRecord> records = {NoOpRecord{}};
  EXPECT_EQ(log->append(records, kNowMs).error(), StoreErrc::io_error);
  EXPECT_FALSE(log->failed());
  EXPECT_EQ(raw->truncated_to, 0u);
  EXPECT_EQ(log->next_offset(), 0);
  // Space again (a full disk freed up): the next append goes where the failed one began.
  raw->fail_appends = false;
  EXPECT_TRUE(log->append(records, kNowMs).has_value());
  EXPECT_EQ(log->next_offset(), 1);
  EXPECT_EQ(raw->appends, 2);
}

TEST(MetadataLogTest, AFailedAppendThatCannotBeCutBackFailsTheLog) {
  auto file = std::make_unique<FailingFile>();
  FailingFile* raw = file.get();
  raw->fail_truncates = true;
  MetadataImage image;
  auto log = MetadataLog::open(std::move(file), image, {});
  ASSERT_TRUE(log.has_value());
  const std::vector<MetadataRecord> records = {NoOpRecord{}};
  EXPECT_EQ(log->append(records, kNowMs).error(), StoreErrc::io_error);
  EXPECT_TRUE(log->failed());
  raw->fail_appends = false;
  EXPECT_EQ(log->append(records, kNowMs).error(), StoreErrc::log_failed);
  EXPECT_EQ(raw->appends, 1);
  EXPECT_EQ(log->next_offset(), 0);
}

TEST(MetadataLogTest, OversizedBatchesAreRefusedBeforeWriting) {
  TempDir dir;
  MetadataImage image;
  auto log = MetadataLog::open(dir.path(), image, {.max_batch_bytes = 200});
  ASSERT_TRUE(log.has_value());
  std::vector<MetadataRecord> records(20, MetadataRecord(NoOpRecord{}));
  EXPECT_EQ(log->append(records, kNowMs).error(), StoreErrc::batch_too_large);
  EXPECT_FALSE(log->failed());
  EXPECT_EQ(fs::file_size(segment(dir.path())), 0u);
  EXPECT_TRUE(log->append(std::span(records).first(2), kNowMs).has_value());
}

}  // namespace
}  // namespace weir::metadata
