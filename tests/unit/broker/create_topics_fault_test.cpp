// CreateTopics and CreatePartitions on the single-node controller are all or nothing per topic
// (issue 12): a partition whose files cannot be made, before the metadata records are committed
// (its directory, partition.metadata) or after (its segment files), or a metadata log that cannot
// take the records, fails the topic with KAFKA_STORAGE_ERROR; no directory and no record of it is
// left, the log names the errno, and the next start (metadata log replayed, log dir loaded) is
// clean. A FaultInjectingFileSystem fails the chosen operation on the chosen path.
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <cctype>
#include <cerrno>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "broker/broker.h"
#include "broker/errors.h"
#include "config/load.h"
#include "storage/fault_file_system.h"
#include "test_util.h"

namespace weir::broker {
namespace {

namespace fs = std::filesystem;
namespace asio = boost::asio;

constexpr std::int16_t kStorageError = code(ErrorCode::kKafkaStorageError);

// A broker with its executor on a thread of its own, stopped as `weir serve` stops it.
class Node {
 public:
  Node(const fs::path& dir, storage::FileSystem& fs) {
    auto config = config::load_broker_config("", {"log.dirs=" + dir.string(), "listeners=PLAINTEXT://127.0.0.1:0"});
    EXPECT_TRUE(config.has_value()) << config.error();
    broker_ = std::make_unique<Broker>(std::move(*config), SystemClock::instance(), fs);
    broker_->attach({io_.get_executor()});
    start_error_ = broker_->start();
    thread_ = std::thread([this] { io_.run(); });
  }
  ~Node() {
    work_.reset();
    io_.stop();
    thread_.join();
    if (start_error_.empty()) broker_->stop();
  }
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  [[nodiscard]] const std::string& start_error() const { return start_error_; }
  Broker& broker() { return *broker_; }

  protocol::CreateTopicsResponse create_topics(const std::vector<std::pair<std::string, std::int32_t>>& topics) {
    protocol::CreateTopicsRequest req;
    for (const auto& [name, partitions] : topics) {
      auto& t = req.topics.emplace_back();
      t.name = name;
      t.num_partitions = partitions;
      t.replication_factor = 1;
    }
    return asio::co_spawn(io_, broker_->create_topics(req, 7), asio::use_future).get();
  }

  protocol::CreatePartitionsResponse create_partitions(const std::string& topic, std::int32_t count) {
    protocol::CreatePartitionsRequest req;
    auto& t = req.topics.emplace_back();
    t.name = topic;
    t.count = count;
    t.assignments.reset();  // the controller assigns the new partitions
    req.timeout_ms = 30000;
    return asio::co_spawn(io_, broker_->create_partitions(std::move(req), 3), asio::use_future).get();
  }

  // The topic's partition count as the broker serves it; 0 when it does not exist.
  std::int32_t partitions(const std::string& topic) {
    const TopicInfo* t = broker_->catalog()->find(topic);
    return t == nullptr ? 0 : t->partitions;
  }

 private:
  // The executor goes before the broker, as in `weir serve` (src/server).
  std::unique_ptr<Broker> broker_;
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_ = asio::make_work_guard(io_);
  std::string start_error_;
  std::thread thread_;
};

// The partition directories of a topic in the log dir, sorted.
std::vector<std::string> partition_dirs(const fs::path& dir, const std::string& topic) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with(topic + "-")) out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

struct Fault {
  std::string op;    // FaultInjectingFileSystem::fail_paths' operation
  std::string file;  // in the failing partition's directory; empty: the directory itself
};

class CreateTopicsFaultTest : public ::testing::TestWithParam<Fault> {};

// Partition 5 of "doomed" cannot be made (ENOSPC on one of its files); "fine", created by the same
// request, is not affected.
TEST_P(CreateTopicsFaultTest, FailedPartitionFailsItsTopicAndLeavesNothingBehind) {
  storage::testing::TempDir dir;
  const Fault fault = GetParam();
  std::string target = (dir.path() / "doomed-5" / fault.file).lexically_normal().string();
  if (target.ends_with('/')) target.pop_back();
  storage::FaultInjectingFileSystem faulty;
  {
    Node node(dir.path(), faulty);
    ASSERT_EQ(node.start_error(), "");
    faulty.fail_paths([&](std::string_view op, const std::string& path) {
      std::string p = path;
      while (p.size() > 1 && p.back() == '/') p.pop_back();
      return op == fault.op && p == target ? ENOSPC : 0;
    });
    ::testing::internal::CaptureStderr();
    const auto resp = node.create_topics({{"doomed", 8}, {"fine", 3}});
    const std::string log = ::testing::internal::GetCapturedStderr();
    faulty.fail_paths(nullptr);

    ASSERT_EQ(resp.topics.size(), 2U);
    const auto& doomed = resp.topics[0].name == "doomed" ? resp.topics[0] : resp.topics[1];
    const auto& fine = resp.topics[0].name == "fine" ? resp.topics[0] : resp.topics[1];
    EXPECT_EQ(doomed.error_code, kStorageError);
    EXPECT_NE(doomed.error_message.value_or("").find("No space left on device"), std::string::npos)
        << doomed.error_message.value_or("");
    EXPECT_EQ(fine.error_code, 0) << fine.error_message.value_or("");
    EXPECT_NE(log.find("No space left on device (errno 28)"), std::string::npos) << log;
    EXPECT_NE(log.find("doomed-5"), std::string::npos) << log;

    EXPECT_EQ(node.partitions("doomed"), 0);
    EXPECT_EQ(node.partitions("fine"), 3);
    EXPECT_EQ(partition_dirs(dir.path(), "doomed"), std::vector<std::string>{});
    EXPECT_EQ(partition_dirs(dir.path(), "fine"), (std::vector<std::string>{"fine-0", "fine-1", "fine-2"}));
  }
  // The next start replays the metadata log and loads the log dir: no trace of "doomed", whose
  // name is free again.
  storage::FaultInjectingFileSystem clean;
  Node node(dir.path(), clean);
  ASSERT_EQ(node.start_error(), "");
  EXPECT_EQ(node.partitions("doomed"), 0);
  EXPECT_EQ(node.partitions("fine"), 3);
  EXPECT_EQ(partition_dirs(dir.path(), "doomed"), std::vector<std::string>{});
  const auto again = node.create_topics({{"doomed", 8}});
  ASSERT_EQ(again.topics.size(), 1U);
  EXPECT_EQ(again.topics[0].error_code, 0) << again.topics[0].error_message.value_or("");
  EXPECT_EQ(node.partitions("doomed"), 8);
  EXPECT_EQ(partition_dirs(dir.path(), "doomed").size(), 8U);
}

INSTANTIATE_TEST_SUITE_P(BeforeAndAfterCommit, CreateTopicsFaultTest,
                         ::testing::Values(Fault{"mkdir", ""}, Fault{"create", "partition.metadata.tmp"},
                                           Fault{"sync", "partition.metadata.tmp"}, Fault{"sync_dir", ""},
                                           Fault{"create", "00000000000000000000.log"},
                                           Fault{"create", "00000000000000000000.timeindex"}),
                         [](const ::testing::TestParamInfo<Fault>& p) {
                           std::string name =
                               p.param.op + "_" + (p.param.file.empty() ? std::string("dir") : p.param.file);
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

// CreatePartitions 2 -> 6 with partition 4's directory failing: nothing of 2..5 is left, the
// topic keeps its two partitions, across a restart too.
TEST(CreatePartitionsFaultTest, FailedPartitionFailsTheTopicAndLeavesNothingBehind) {
  storage::testing::TempDir dir;
  storage::FaultInjectingFileSystem faulty;
  const std::string target = (dir.path() / "grow-4").string();
  {
    Node node(dir.path(), faulty);
    ASSERT_EQ(node.start_error(), "");
    ASSERT_EQ(node.create_topics({{"grow", 2}}).topics.at(0).error_code, 0);
    faulty.fail_paths(
        [&](std::string_view op, const std::string& path) { return op == "mkdir" && path == target ? EDQUOT : 0; });
    ::testing::internal::CaptureStderr();
    const auto resp = node.create_partitions("grow", 6);
    const std::string log = ::testing::internal::GetCapturedStderr();
    faulty.fail_paths(nullptr);
    ASSERT_EQ(resp.results.size(), 1U);
    EXPECT_EQ(resp.results[0].error_code, kStorageError);
    EXPECT_NE(resp.results[0].error_message.value_or("").find("Disk quota exceeded"), std::string::npos)
        << resp.results[0].error_message.value_or("");
    EXPECT_NE(log.find("Disk quota exceeded (errno 122)"), std::string::npos) << log;
    EXPECT_EQ(node.partitions("grow"), 2);
    EXPECT_EQ(partition_dirs(dir.path(), "grow"), (std::vector<std::string>{"grow-0", "grow-1"}));
  }
  storage::FaultInjectingFileSystem clean;
  Node node(dir.path(), clean);
  ASSERT_EQ(node.start_error(), "");
  EXPECT_EQ(node.partitions("grow"), 2);
  EXPECT_EQ(partition_dirs(dir.path(), "grow"), (std::vector<std::string>{"grow-0", "grow-1"}));
  EXPECT_EQ(node.create_partitions("grow", 6).results.at(0).error_code, 0);
  EXPECT_EQ(node.partitions("grow"), 6);
}

// The new partitions' directories are made, then the metadata log cannot take the records: the
// client is told (KAFKA_STORAGE_ERROR), not answered success, and the directories go again.
TEST(CreatePartitionsFaultTest, MetadataCommitFailureAnswersAnErrorAndRemovesTheDirectories) {
  storage::testing::TempDir dir;
  storage::FaultInjectingFileSystem faulty;
  const std::string metadata_dir = (dir.path() / "__cluster_metadata-0").string() + "/";
  {
    Node node(dir.path(), faulty);
    ASSERT_EQ(node.start_error(), "");
    ASSERT_EQ(node.create_topics({{"grow", 2}}).topics.at(0).error_code, 0);
    faulty.fail_paths([&](std::string_view op, const std::string& path) {
      return op == "append" && path.starts_with(metadata_dir) ? EIO : 0;
    });
    const auto resp = node.create_partitions("grow", 5);
    faulty.fail_paths(nullptr);
    ASSERT_EQ(resp.results.size(), 1U);
    EXPECT_EQ(resp.results[0].error_code, kStorageError);
    EXPECT_NE(resp.results[0].error_message.value_or("").find("metadata log append failed"), std::string::npos)
        << resp.results[0].error_message.value_or("");
    EXPECT_EQ(node.partitions("grow"), 2);
    EXPECT_EQ(partition_dirs(dir.path(), "grow"), (std::vector<std::string>{"grow-0", "grow-1"}));
  }
  storage::FaultInjectingFileSystem clean;
  Node node(dir.path(), clean);
  ASSERT_EQ(node.start_error(), "");
  EXPECT_EQ(node.partitions("grow"), 2);
  EXPECT_EQ(partition_dirs(dir.path(), "grow"), (std::vector<std::string>{"grow-0", "grow-1"}));
}

// A topic of 100 partitions goes through LogManager::prepare's syncfs batch (files written
// unsynced, one syncfs): one partition whose partition.metadata does not fit fails the topic the
// same way, and nothing of it is left; a failing syncfs falls back to per-file syncs, which work
// here, so the next topic is created whole and is there after a restart.
TEST(CreateTopicsBatchFaultTest, ALargeTopicFailsWholeOrIsCreatedWhole) {
  storage::testing::TempDir dir;
  storage::FaultInjectingFileSystem faulty;
  const std::string target = (dir.path() / "big-50" / "partition.metadata").string();
  {
    Node node(dir.path(), faulty);
    ASSERT_EQ(node.start_error(), "");
    faulty.fail_paths([&](std::string_view op, const std::string& path) {
      if (op == "syncfs") return EIO;
      return op == "create" && path == target ? ENOSPC : 0;
    });
    const auto resp = node.create_topics({{"big", 100}, {"fine", 3}});
    ASSERT_EQ(resp.topics.size(), 2U);
    const auto& big = resp.topics[0].name == "big" ? resp.topics[0] : resp.topics[1];
    const auto& fine = resp.topics[0].name == "fine" ? resp.topics[0] : resp.topics[1];
    EXPECT_EQ(big.error_code, kStorageError);
    EXPECT_NE(big.error_message.value_or("").find("No space left on device"), std::string::npos)
        << big.error_message.value_or("");
    EXPECT_EQ(fine.error_code, 0) << fine.error_message.value_or("");
    EXPECT_EQ(node.partitions("big"), 0);
    EXPECT_EQ(partition_dirs(dir.path(), "big"), std::vector<std::string>{});
    const auto again = node.create_topics({{"large", 100}});  // syncfs still failing
    faulty.fail_paths(nullptr);
    EXPECT_EQ(again.topics.at(0).error_code, 0) << again.topics.at(0).error_message.value_or("");
    EXPECT_EQ(node.partitions("large"), 100);
  }
  storage::FaultInjectingFileSystem clean;
  Node node(dir.path(), clean);
  ASSERT_EQ(node.start_error(), "");
  EXPECT_EQ(node.partitions("big"), 0);
  EXPECT_EQ(node.partitions("fine"), 3);
  EXPECT_EQ(node.partitions("large"), 100);
  EXPECT_EQ(partition_dirs(dir.path(), "large").size(), 100U);
}

}  // namespace
}  // namespace weir::broker
