#include "client/wire.h"

#include <gtest/gtest.h>

#include "protocol/gen/api_registry.h"

namespace weir::client {
namespace {

TEST(CorrelationIdsTest, CountUpAndWrapToZeroAfterInt32Max) {
  CorrelationIds ids(INT32_MAX - 1);
  EXPECT_EQ(ids.next(), INT32_MAX - 1);
  EXPECT_EQ(ids.next(), INT32_MAX);
  EXPECT_EQ(ids.next(), 0);
  EXPECT_EQ(ids.next(), 1);
}

TEST(InFlightTest, ResponsesCompleteRequestsInTheOrderTheyWereSent) {
  InFlight<std::string> q;
  q.push(7, "metadata");
  q.push(8, "fetch");
  q.push(9, "produce");
  EXPECT_EQ(*q.complete(7), "metadata");
  EXPECT_EQ(*q.complete(8), "fetch");
  EXPECT_EQ(q.size(), 1u);
  EXPECT_EQ(*q.complete(9), "produce");
  EXPECT_TRUE(q.empty());
}

TEST(InFlightTest, AnOutOfOrderCorrelationIdIsAProtocolErrorAndCompletesNothing) {
  InFlight<int> q;
  q.push(1, 10);
  q.push(2, 20);
  auto r = q.complete(2);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ErrorKind::kProtocol);
  EXPECT_EQ(r.error().message, "correlation id for response (2) does not match request (1)");
  EXPECT_EQ(q.size(), 2u);
  EXPECT_EQ(*q.front(), 10);
}

TEST(InFlightTest, AResponseWithNothingInFlightIsAProtocolError) {
  InFlight<int> q;
  auto r = q.complete(0);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ErrorKind::kProtocol);
}

TEST(InFlightTest, DrainHandsBackEveryPendingRequest) {
  InFlight<int> q;
  q.push(1, 10);
  q.push(2, 20);
  auto all = q.drain();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].first, 1);
  EXPECT_EQ(all[1].second, 20);
  EXPECT_TRUE(q.empty());
}

std::span<const std::uint8_t> without_size(const protocol::Bytes& frame) {
  const std::uint32_t size =
      (std::uint32_t{frame[0]} << 24) | (std::uint32_t{frame[1]} << 16) | (std::uint32_t{frame[2]} << 8) | frame[3];
  EXPECT_EQ(size, frame.size() - 4);
  return std::span(frame).subspan(4);
}

TEST(RequestFrameTest, AFlexibleVersionGetsHeaderV2AndTheBodyFollows) {
  protocol::MetadataRequest m;
  m.topics.emplace().emplace_back().name = "orders";
  const protocol::Bytes frame = encode_request_frame(m, 12, 42, std::string("probe"));
  const auto body = without_size(frame);
  auto h = protocol::parse_request_header(body);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->api_key, 3);
  EXPECT_EQ(h->api_version, 12);
  EXPECT_EQ(h->correlation_id, 42);
  EXPECT_EQ(h->client_id, "probe");
  // header v1 (2+2+4+2+5) plus the empty tagged-field section of v2
  EXPECT_EQ(h->size, 16u);
  protocol::MetadataRequest back;
  ASSERT_TRUE(protocol::decode_body(body.subspan(h->size), 12, back));
  EXPECT_EQ(back, m);
}

TEST(RequestFrameTest, ANonFlexibleVersionGetsHeaderV1WithANullClientId) {
  protocol::MetadataRequest m;
  const protocol::Bytes frame = encode_request_frame(m, 8, 1, std::nullopt);
  auto h = protocol::parse_request_header(without_size(frame));
  ASSERT_TRUE(h);
  EXPECT_FALSE(h->client_id);
  EXPECT_EQ(h->size, 10u);
}

TEST(ResponseFrameTest, AFlexibleResponseHeaderHasTaggedFieldsToSkip) {
  const protocol::Bytes frame{0, 0, 0, 5, /*tags*/ 1, /*tag*/ 3, /*size*/ 1, 0xff, /*body*/ 0xaa, 0xbb};
  auto r = split_response(frame, 3, 12);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->correlation_id, 5);
  EXPECT_EQ(std::vector<std::uint8_t>(r->body.begin(), r->body.end()), (std::vector<std::uint8_t>{0xaa, 0xbb}));
}

TEST(ResponseFrameTest, ApiVersionsAndNonFlexibleResponsesHaveHeaderV0) {
  const protocol::Bytes frame{0, 0, 0, 9, 0, 0};
  auto api_versions = split_response(frame, 18, 4);
  ASSERT_TRUE(api_versions);
  EXPECT_EQ(api_versions->body.size(), 2u);
  auto metadata_v8 = split_response(frame, 3, 8);
  ASSERT_TRUE(metadata_v8);
  EXPECT_EQ(metadata_v8->body.size(), 2u);
}

TEST(ResponseFrameTest, ATruncatedHeaderIsAProtocolError) {
  EXPECT_FALSE(split_response(protocol::Bytes{0, 0}, 3, 8));
  EXPECT_FALSE(split_response(protocol::Bytes{0, 0, 0, 1, 5}, 3, 12)) << "tag count 5 with no tags";
}

}  // namespace
}  // namespace weir::client
