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
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "broker/broker.h"
#include "config/load.h"
#include "protocol/codec.h"
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

protocol::MetadataResponse decode_metadata_v1(const net::Reply& reply, std::int32_t correlation_id) {
  EXPECT_EQ(reply.kind, net::Reply::Kind::kSend);
  protocol::Reader r(reply.bytes);
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

}  // namespace
}  // namespace weir::broker
