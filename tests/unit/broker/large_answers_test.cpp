// Metadata of every topic is built and encoded on the broker's large-answers thread, not on the
// shard serving the connection (issue 18: at 100,000 partitions that answer is 2.6 MB and about
// 100 ms of CPU, and a shard building it answers nothing else meanwhile). Held on that thread,
// the answer waits while the shard goes on answering other requests; released, it is complete.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_future.hpp>
#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "config/load.h"
#include "protocol/codec.h"
#include "protocol/gen/create_partitions_request.h"
#include "protocol/gen/delete_topics_request.h"
#include "protocol/gen/metadata_request.h"
#include "protocol/gen/metadata_response.h"
#include "protocol/headers.h"
#include "storage/file.h"
#include "test_util.h"

namespace weir::broker {
namespace {

namespace asio = boost::asio;

// A Metadata v1 request frame: every topic when `topics` is empty, else those named.
std::shared_ptr<const net::Frame> metadata_frame(std::int32_t correlation_id, const std::vector<std::string>& topics) {
  auto frame = std::make_shared<net::Frame>();
  protocol::Writer w(frame->bytes);
  protocol::RequestHeader header;
  header.api_key = protocol::MetadataRequest::kApiKey;
  header.api_version = 1;
  header.correlation_id = correlation_id;
  header.client_id = "large-answers-test";
  protocol::write_request_header(w, header);
  protocol::MetadataRequest req;
  req.topics.emplace();
  for (const auto& name : topics) req.topics->emplace_back().name = name;
  if (topics.empty()) req.topics.reset();  // null: every topic
  req.encode(w, 1);
  frame->received_at = std::chrono::steady_clock::now();
  return frame;
}

// A reply's bytes as the connection sends them after the size prefix: its own bytes, then the
// shared tail if any.
std::vector<std::uint8_t> wire_bytes(const net::Reply& reply) {
  EXPECT_TRUE(reply.splices.empty());
  std::vector<std::uint8_t> out = reply.bytes;
  if (reply.shared_tail) out.insert(out.end(), reply.shared_tail->begin(), reply.shared_tail->end());
  return out;
}

protocol::MetadataResponse decode_metadata_v1(const net::Reply& reply, std::int32_t correlation_id) {
  EXPECT_EQ(reply.kind, net::Reply::Kind::kSend);
  const auto bytes = wire_bytes(reply);
  protocol::Reader r(bytes);
  EXPECT_EQ(r.i32(), correlation_id);
  protocol::MetadataResponse resp;
  resp.decode(r, 1);
  EXPECT_TRUE(r.ok());
  return resp;
}

TEST(LargeAnswersTest, MetadataOfEveryTopicIsBuiltOffTheShardWhichGoesOnAnswering) {
  storage::testing::TempDir dir;
  storage::PosixFileSystem fs;
  auto config =
      config::load_broker_config("", {"log.dirs=" + dir.path().string(), "listeners=PLAINTEXT://127.0.0.1:0"});
  ASSERT_TRUE(config.has_value()) << config.error();
  asio::io_context io;
  auto work = asio::make_work_guard(io);
  auto broker = std::make_unique<Broker>(std::move(*config), SystemClock::instance(), fs);
  broker->attach({io.get_executor()});
  ASSERT_EQ(broker->start(), "");
  std::thread shard([&io] { io.run(); });

  protocol::CreateTopicsRequest create;
  auto& t = create.topics.emplace_back();
  t.name = "answered";
  t.num_partitions = 3;
  t.replication_factor = 1;
  auto created = asio::co_spawn(io, broker->create_topics(create, 7), asio::use_future).get();
  ASSERT_EQ(created.topics.at(0).error_code, 0);

  // The large-answers thread is held until `release`.
  std::promise<void> holding;
  std::promise<void> release;
  auto released = release.get_future();
  ASSERT_NE(broker->large_answers(), nullptr);
  asio::post(*broker->large_answers(), [&holding, &released] {
    holding.set_value();
    released.wait();
  });
  holding.get_future().wait();

  net::ClientInfo client;
  client.host = "127.0.0.1";
  client.shard = 0;
  auto every_topic = asio::co_spawn(io, broker->handle(client, metadata_frame(1, {})), asio::use_future);
  // The shard answers a request that came after it (one topic, built on the shard).
  auto one_topic = asio::co_spawn(io, broker->handle(client, metadata_frame(2, {"answered"})), asio::use_future);
  auto one = decode_metadata_v1(one_topic.get(), 2);
  ASSERT_EQ(one.topics.size(), 1u);
  EXPECT_EQ(one.topics[0].partitions.size(), 3u);
  // ...while the answer of every topic waits for the held thread.
  EXPECT_EQ(every_topic.wait_for(std::chrono::seconds(0)), std::future_status::timeout);

  release.set_value();
  auto every = decode_metadata_v1(every_topic.get(), 1);
  EXPECT_EQ(every.controller_id, broker->node().node_id);
  ASSERT_EQ(every.brokers.size(), 1u);
  std::optional<protocol::MetadataResponse::MetadataResponseTopic> answered;
  for (const auto& topic : every.topics) {
    if (topic.name == "answered") answered = topic;
  }
  ASSERT_TRUE(answered.has_value());
  EXPECT_EQ(answered->error_code, 0);
  ASSERT_EQ(answered->partitions.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(answered->partitions[i].partition_index, static_cast<std::int32_t>(i));
    EXPECT_EQ(answered->partitions[i].error_code, 0);
    EXPECT_EQ(answered->partitions[i].leader_id, broker->node().node_id);
  }

  // As `weir serve` stops: the executor first, then the broker.
  work.reset();
  io.stop();
  shard.join();
  broker->stop();
}

// A Metadata request frame of every topic at `version` (a null list; an empty one in v0).
std::shared_ptr<const net::Frame> every_topic_frame(std::int32_t correlation_id, std::int16_t version) {
  auto frame = std::make_shared<net::Frame>();
  protocol::Writer w(frame->bytes);
  protocol::RequestHeader header;
  header.api_key = protocol::MetadataRequest::kApiKey;
  header.api_version = version;
  header.correlation_id = correlation_id;
  header.client_id = "large-answers-test";
  protocol::write_request_header(w, header);
  protocol::MetadataRequest req;
  if (version > 0) req.topics.reset();
  req.encode(w, version);
  frame->received_at = std::chrono::steady_clock::now();
  return frame;
}

// A broker whose executor runs on a thread of its own, stopped as `weir serve` stops it.
class RunningBroker {
 public:
  RunningBroker() {
    auto config =
        config::load_broker_config("", {"log.dirs=" + dir_.path().string(), "listeners=PLAINTEXT://127.0.0.1:0"});
    EXPECT_TRUE(config.has_value()) << config.error();
    broker_ = std::make_unique<Broker>(std::move(*config), SystemClock::instance(), fs_);
    broker_->attach({io_.get_executor()});
    EXPECT_EQ(broker_->start(), "");
    thread_ = std::thread([this] { io_.run(); });
  }
  ~RunningBroker() {
    work_.reset();
    io_.stop();
    thread_.join();
    broker_->stop();
  }
  RunningBroker(const RunningBroker&) = delete;
  RunningBroker& operator=(const RunningBroker&) = delete;

  Broker& broker() { return *broker_; }

  net::Reply every_topic(std::int32_t correlation_id, std::int16_t version) {
    net::ClientInfo client;
    client.host = "127.0.0.1";
    client.shard = 0;
    return asio::co_spawn(io_, broker_->handle(client, every_topic_frame(correlation_id, version)), asio::use_future)
        .get();
  }
  // The answer built and encoded afresh from the current catalog, behind its header.
  std::vector<std::uint8_t> fresh(std::int32_t correlation_id, std::int16_t version) {
    std::vector<std::uint8_t> out;
    protocol::Writer w(out);
    protocol::write_response_header(w, protocol::MetadataRequest::kApiKey, version, correlation_id);
    MetadataHandler::catalog_answer(broker_->node(), *broker_->catalog()).encode(w, version);
    return out;
  }
  void create_topic(const std::string& name, std::int32_t partitions) {
    protocol::CreateTopicsRequest req;
    auto& t = req.topics.emplace_back();
    t.name = name;
    t.num_partitions = partitions;
    t.replication_factor = 1;
    auto created = asio::co_spawn(io_, broker_->create_topics(req, 7), asio::use_future).get();
    EXPECT_EQ(created.topics.at(0).error_code, 0);
  }
  void create_partitions(const std::string& topic, std::int32_t count) {
    protocol::CreatePartitionsRequest req;
    auto& t = req.topics.emplace_back();
    t.name = topic;
    t.count = count;
    t.assignments.reset();
    req.timeout_ms = 30000;
    auto resp = asio::co_spawn(io_, broker_->create_partitions(std::move(req), 3), asio::use_future).get();
    EXPECT_EQ(resp.results.at(0).error_code, 0);
  }
  void delete_topic(const std::string& name) {
    protocol::DeleteTopicsRequest req;
    req.topic_names.push_back(name);
    req.timeout_ms = 30000;
    auto resp = asio::co_spawn(io_, broker_->delete_topics(req, 5), asio::use_future).get();
    EXPECT_EQ(resp.responses.at(0).error_code, 0);
  }

 private:
  storage::testing::TempDir dir_;
  storage::PosixFileSystem fs_;
  std::unique_ptr<Broker> broker_;
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_ = asio::make_work_guard(io_);
  std::thread thread_;
};

// The topics of an answer of every topic (v1) and their partition counts.
std::map<std::string, std::size_t> topics_of(const net::Reply& reply, std::int32_t correlation_id) {
  std::map<std::string, std::size_t> out;
  for (const auto& t : decode_metadata_v1(reply, correlation_id).topics) out[t.name.value_or("")] = t.partitions.size();
  return out;
}

// Issue 18: the answer of every topic is encoded once per catalog snapshot and version and its
// bytes reused (behind each request's own header) until the catalog changes; every answer is the
// very bytes that building and encoding it afresh gives.
TEST(LargeAnswersTest, EveryTopicIsEncodedOncePerCatalogAndVersionAndFollowsEveryChange) {
  RunningBroker node;
  node.create_topic("a", 2);
  const auto first = node.every_topic(1, 1);
  EXPECT_EQ(wire_bytes(first), node.fresh(1, 1));
  const auto kept = node.broker().answer_cache().find(node.broker().catalog(), 1);
  ASSERT_NE(kept, nullptr);
  const auto second = node.every_topic(2, 1);
  EXPECT_EQ(wire_bytes(second), node.fresh(2, 1)) << "the same answer behind its own correlation id";
  EXPECT_EQ(node.broker().answer_cache().find(node.broker().catalog(), 1), kept) << "not built again";
  ASSERT_NE(second.shared_tail, nullptr);
  EXPECT_EQ(first.shared_tail, second.shared_tail) << "the kept bytes, not a copy";

  // Each version its own encoding: v0 (an empty list), v9 (the first flexible one), v13.
  for (const std::int16_t version : {0, 9, 13}) {
    EXPECT_EQ(wire_bytes(node.every_topic(10 + version, version)), node.fresh(10 + version, version)) << "v" << version;
  }
  EXPECT_EQ(node.broker().answer_cache().size(), 4u);
  EXPECT_EQ(node.broker().answer_cache().find(node.broker().catalog(), 1), kept);

  // A topic created, partitions added, a topic deleted: each answered from the new catalog.
  node.create_topic("b", 1);
  auto reply = node.every_topic(20, 1);
  EXPECT_EQ(wire_bytes(reply), node.fresh(20, 1));
  EXPECT_EQ(topics_of(reply, 20), (std::map<std::string, std::size_t>{{"a", 2}, {"b", 1}}));
  EXPECT_EQ(node.broker().answer_cache().size(), 1u) << "the older catalog's answers are dropped";

  node.create_partitions("a", 5);
  reply = node.every_topic(21, 1);
  EXPECT_EQ(wire_bytes(reply), node.fresh(21, 1));
  EXPECT_EQ(topics_of(reply, 21), (std::map<std::string, std::size_t>{{"a", 5}, {"b", 1}}));

  node.delete_topic("a");
  reply = node.every_topic(22, 1);
  EXPECT_EQ(wire_bytes(reply), node.fresh(22, 1));
  EXPECT_EQ(topics_of(reply, 22), (std::map<std::string, std::size_t>{{"b", 1}}));
  reply = node.every_topic(23, 13);
  EXPECT_EQ(wire_bytes(reply), node.fresh(23, 13));
}

}  // namespace
}  // namespace weir::broker
