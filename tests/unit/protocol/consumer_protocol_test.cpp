#include "protocol/consumer_protocol.h"

#include <gtest/gtest.h>

#include <string_view>

namespace weir::protocol {
namespace {

Bytes hex(std::string_view h) {
  Bytes out;
  for (std::size_t i = 0; i + 1 < h.size(); i += 2) {
    out.push_back(static_cast<std::uint8_t>(std::stoi(std::string(h.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

TEST(ConsumerProtocolTest, SubscriptionRoundTripsAtEveryVersion) {
  ConsumerSubscription s;
  s.topics = {"orders", "audit"};
  s.user_data = Bytes{1, 2, 3};
  s.owned_partitions = {{"audit", 0}, {"orders", 2}, {"orders", 5}};
  s.generation_id = 7;
  s.rack_id = "rack-a";
  for (std::int16_t v = 0; v <= 3; ++v) {
    auto back = decode_subscription(encode_subscription(s, v));
    ASSERT_TRUE(back) << back.error();
    EXPECT_EQ(back->version, v);
    EXPECT_EQ(back->topics, (std::vector<std::string>{"audit", "orders"}));  // written sorted
    EXPECT_EQ(back->user_data, s.user_data);
    EXPECT_EQ(back->owned_partitions, v >= 1 ? s.owned_partitions : std::vector<TopicPartition>{});
    EXPECT_EQ(back->generation_id, v >= 2 ? std::optional<std::int32_t>(7) : std::nullopt);
    EXPECT_EQ(back->rack_id, v >= 3 ? s.rack_id : std::nullopt);
  }
}

TEST(ConsumerProtocolTest, SubscriptionV3BytesAreKafkas) {
  ConsumerSubscription s;
  s.topics = {"cap2"};
  s.user_data = encode_generation_user_data(2);
  s.generation_id = 2;
  // As a weir member wrote it in a group with Kafka's console consumer and librdkafka.
  EXPECT_EQ(encode_subscription(s), hex("00030000000100046361703200000004000000020000000000000002ffff"));
}

TEST(ConsumerProtocolTest, DecodesTheJavaConsoleConsumersSubscription) {
  // kafka-console-consumer 4.3.1 (cooperative-sticky), from DescribeGroups: v3, [cap], the
  // assignor's generation -1 as user data, nothing owned, generation 2, no rack.
  auto s = decode_subscription(hex("000300000001000363617000000004ffffffff0000000000000002ffff"));
  ASSERT_TRUE(s) << s.error();
  EXPECT_EQ(s->version, 3);
  EXPECT_EQ(s->topics, std::vector<std::string>{"cap"});
  EXPECT_EQ(s->user_data, hex("ffffffff"));
  EXPECT_TRUE(s->owned_partitions.empty());
  EXPECT_EQ(s->generation_id, 2);
  EXPECT_EQ(s->rack_id, std::nullopt);
  EXPECT_EQ(decode_generation_user_data(*s->user_data), -1);
}

TEST(ConsumerProtocolTest, DecodesLibrdkafkasSubscription) {
  // confluent-kafka (librdkafka, cooperative-sticky): its sticky user data, owned cap-2 and cap-3,
  // generation 2 and an empty (not null) rack.
  auto s = decode_subscription(
      hex("0003000000010003636170000000190000000100036361700000000200000002000000030000000200000001000363617000000002"
          "000000020000000300000002"
          "0000"));
  ASSERT_TRUE(s) << s.error();
  EXPECT_EQ(s->topics, std::vector<std::string>{"cap"});
  ASSERT_TRUE(s->user_data);
  EXPECT_EQ(s->user_data->size(), 25u);
  EXPECT_EQ(s->owned_partitions, (std::vector<TopicPartition>{{"cap", 2}, {"cap", 3}}));
  EXPECT_EQ(s->generation_id, 2);
  EXPECT_EQ(s->rack_id, "");
}

TEST(ConsumerProtocolTest, DecodesAssignmentsJavaAndLibrdkafkaWrote) {
  // Kafka's Java leader: v3, cap2 [0, 1], null user data.
  auto java = decode_assignment(hex("000300000001000463617032000000020000000000000001ffffffff"));
  ASSERT_TRUE(java) << java.error();
  EXPECT_EQ(java->version, 3);
  EXPECT_EQ(java->partitions, (std::vector<TopicPartition>{{"cap2", 0}, {"cap2", 1}}));
  EXPECT_EQ(java->user_data, std::nullopt);
  // A librdkafka leader: v0 with its sticky user data.
  auto rdkafka = decode_assignment(
      hex("000000000001000363617000000002000000020000000300000019000000010003636170000000020000000200000003"
          "00000002"));
  ASSERT_TRUE(rdkafka) << rdkafka.error();
  EXPECT_EQ(rdkafka->version, 0);
  EXPECT_EQ(rdkafka->partitions, (std::vector<TopicPartition>{{"cap", 2}, {"cap", 3}}));
  ASSERT_TRUE(rdkafka->user_data);
  EXPECT_EQ(rdkafka->user_data->size(), 25u);
}

TEST(ConsumerProtocolTest, AssignmentRoundTripsAndGroupsPartitionsByTopic) {
  ConsumerAssignment a;
  a.partitions = {{"b", 1}, {"a", 0}, {"b", 0}};
  const auto bytes = encode_assignment(a);
  EXPECT_EQ(bytes, hex("0003"
                       "00000002"
                       "0001"
                       "62"
                       "00000002"
                       "00000001"
                       "00000000"
                       "0001"
                       "61"
                       "00000001"
                       "00000000"
                       "ffffffff"));
  auto back = decode_assignment(bytes);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->partitions, (std::vector<TopicPartition>{{"b", 1}, {"b", 0}, {"a", 0}}));
}

TEST(ConsumerProtocolTest, ANewerVersionIsReadAsVersion3AndTrailingFieldsAreIgnored) {
  ConsumerSubscription s;
  s.topics = {"t"};
  s.generation_id = 4;
  auto bytes = encode_subscription(s, 3);
  bytes[1] = 9;           // version 9
  bytes.push_back(0x42);  // a field version 9 added
  auto back = decode_subscription(bytes);
  ASSERT_TRUE(back) << back.error();
  EXPECT_EQ(back->version, 9);
  EXPECT_EQ(back->generation_id, 4);
}

TEST(ConsumerProtocolTest, TruncatedOrNegativeInputIsAnError) {
  ConsumerSubscription s;
  s.topics = {"topic"};
  s.owned_partitions = {{"topic", 1}};
  const auto bytes = encode_subscription(s);
  for (std::size_t n = 0; n + 1 < bytes.size(); ++n) {
    EXPECT_FALSE(decode_subscription(std::span(bytes.data(), n))) << n;
  }
  EXPECT_FALSE(decode_subscription(hex("ffff00000000ffffffff")));  // version -1
  EXPECT_FALSE(decode_assignment(hex("0000")));
  EXPECT_FALSE(decode_assignment(hex("0000ffffffff")));  // a null topic array
  EXPECT_EQ(decode_generation_user_data(hex("0001")), std::nullopt);
}

}  // namespace
}  // namespace weir::protocol
