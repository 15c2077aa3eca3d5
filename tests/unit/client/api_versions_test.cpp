#include "client/api_versions.h"

#include <gtest/gtest.h>

#include "client/messages.h"
#include "protocol/gen/api_registry.h"

namespace weir::client {
namespace {

using protocol::ApiVersionsResponse;

ApiVersionsResponse advertising(std::initializer_list<std::array<std::int16_t, 3>> ranges, std::int16_t error = 0) {
  ApiVersionsResponse r;
  r.error_code = error;
  for (const auto& [key, min, max] : ranges) {
    auto& k = r.api_keys.emplace_back();
    k.api_key = key;
    k.min_version = min;
    k.max_version = max;
  }
  return r;
}

TEST(VersionTableTest, PicksTheHighestVersionBothSidesSupport) {
  // Metadata: codec 0..13. Fetch: codec 4..18.
  const VersionTable t(advertising({{3, 0, 12}, {1, 4, 30}}));
  EXPECT_EQ(t.pick(3), 12);                                   // the broker's max
  EXPECT_EQ(t.pick(1), protocol::FetchRequest::kMaxVersion);  // the codec's max
}

TEST(VersionTableTest, AnApiWithoutACommonVersionIsUnusable) {
  // Produce: codec 3..13; a broker offering only 0..2 shares nothing with it.
  const VersionTable t(advertising({{0, 0, 2}}));
  EXPECT_FALSE(t.pick(0));
  EXPECT_FALSE(t.pick(1)) << "not advertised at all";
  EXPECT_FALSE(t.pick(999)) << "unknown to the codec";
}

TEST(VersionTableTest, ACallerMayCapTheVersion) {
  const VersionTable t(advertising({{0, 3, 13}}));
  EXPECT_EQ(t.pick(0, 12), 12);
  EXPECT_FALSE(t.pick(0, 2));
}

TEST(VersionTableTest, TheCodecsUnstableLatestVersionIsNeverPicked) {
  const protocol::ApiDescriptor* d = protocol::find_api(protocol::InitProducerIdRequest::kApiKey);
  ASSERT_NE(d, nullptr);
  ASSERT_TRUE(d->latest_version_unstable) << "the test needs an API whose latest version is unstable";
  const VersionTable t(advertising({{d->key, 0, d->max_version}}));
  EXPECT_EQ(t.pick(d->key), d->max_version - 1);
}

TEST(VersionTableTest, BrokerRangesAreKeptAsAdvertised) {
  const VersionTable t(advertising({{18, 0, 4}}));
  ASSERT_TRUE(t.broker_range(18));
  EXPECT_EQ(t.broker_range(18)->max, 4);
  EXPECT_FALSE(t.broker_range(17));
}

TEST(HandshakeTest, AnErrorFreeAnswerEndsTheHandshake) {
  EXPECT_TRUE(std::holds_alternative<HandshakeDone>(next_handshake_step(4, advertising({{18, 0, 4}}))));
}

TEST(HandshakeTest, UnsupportedVersionRetriesAtTheVersionTheBrokerAdvertises) {
  const auto step = next_handshake_step(4, advertising({{18, 0, 2}}, 35));
  ASSERT_TRUE(std::holds_alternative<HandshakeRetry>(step));
  EXPECT_EQ(std::get<HandshakeRetry>(step).version, 2);
}

TEST(HandshakeTest, UnsupportedVersionWithoutAnAdvertisedRangeRetriesAtV0) {
  const auto step = next_handshake_step(3, advertising({}, 35));
  ASSERT_TRUE(std::holds_alternative<HandshakeRetry>(step));
  EXPECT_EQ(std::get<HandshakeRetry>(step).version, 0);
}

TEST(HandshakeTest, ABrokerAdvertisingTheRefusedVersionDoesNotCauseALoop) {
  const auto step = next_handshake_step(3, advertising({{18, 0, 7}}, 35));
  ASSERT_TRUE(std::holds_alternative<HandshakeRetry>(step));
  EXPECT_EQ(std::get<HandshakeRetry>(step).version, 2);
}

TEST(HandshakeTest, OtherErrorsAndErrorsToV0EndTheHandshake) {
  const auto refused_v0 = next_handshake_step(0, advertising({}, 35));
  ASSERT_TRUE(std::holds_alternative<HandshakeFailed>(refused_v0));
  EXPECT_EQ(std::get<HandshakeFailed>(refused_v0).error_code, 35);
  const auto invalid = next_handshake_step(3, advertising({}, 42));  // INVALID_REQUEST
  ASSERT_TRUE(std::holds_alternative<HandshakeFailed>(invalid));
  EXPECT_EQ(std::get<HandshakeFailed>(invalid).error_code, 42);
}

TEST(HandshakeTest, AV0AnswerToANewerRequestIsReadAtV0) {
  // What a broker that does not know v4 sends back: UNSUPPORTED_VERSION in the v0 layout.
  const ApiVersionsResponse sent = advertising({{18, 0, 2}}, 35);
  const protocol::Bytes body = protocol::encode_body(sent, 0);
  const auto read = decode_api_versions_response(body, 4);
  ASSERT_TRUE(read);
  EXPECT_EQ(read->error_code, 35);
  ASSERT_EQ(read->api_keys.size(), 1u);
  EXPECT_EQ(read->api_keys[0].max_version, 2);
}

TEST(HandshakeTest, AnAnswerInTheRequestedVersionIsReadAtThatVersion) {
  ApiVersionsResponse sent = advertising({{3, 0, 13}, {18, 0, 4}});
  sent.throttle_time_ms = 7;
  const auto read = decode_api_versions_response(protocol::encode_body(sent, 4), 4);
  ASSERT_TRUE(read);
  EXPECT_EQ(read->throttle_time_ms, 7);
  EXPECT_EQ(read->api_keys.size(), 2u);
  EXPECT_FALSE(decode_api_versions_response(protocol::Bytes{1, 2, 3}, 4));
}

TEST(MessagesTest, EveryApiOfTheCodecHasItsResponseType) {
  for (const auto& d : protocol::kApiDescriptors) {
    const bool known =
        protocol::visit_api(d.key, [&]<class Req, class Resp>(std::type_identity<Req>, std::type_identity<Resp>) {
          static_assert(std::is_same_v<ResponseOf<Req>, Resp>);
          EXPECT_EQ(Req::kApiKey, d.key);
        });
    EXPECT_TRUE(known) << d.name;
  }
}

}  // namespace
}  // namespace weir::client
