#include "client/envelope.h"

#include <gtest/gtest.h>

#include "protocol/gen/api_registry.h"
#include "protocol/headers.h"

namespace weir::client {
namespace {

protocol::Bytes bytes_of(std::initializer_list<int> v) {
  protocol::Bytes out;
  for (int b : v) out.push_back(static_cast<std::uint8_t>(b));
  return out;
}

// DefaultPrincipalData v0 behind its version prefix: compact strings, a boolean, no tagged fields.
TEST(EnvelopeTest, PrincipalIsEncodedAsKafkasDefaultPrincipalBuilderSerializesIt) {
  const protocol::Bytes got = encode_principal("User", "ANONYMOUS");
  const protocol::Bytes want =
      bytes_of({0, 0, 5, 'U', 's', 'e', 'r', 10, 'A', 'N', 'O', 'N', 'Y', 'M', 'O', 'U', 'S', 0, 0});
  EXPECT_EQ(got, want);
  const protocol::Bytes token = encode_principal("User", "alice", true);
  EXPECT_EQ(token, bytes_of({0, 0, 5, 'U', 's', 'e', 'r', 6, 'a', 'l', 'i', 'c', 'e', 1, 0}));
}

TEST(EnvelopeTest, ClientAddressesAreTheirRawBytes) {
  EXPECT_EQ(*address_bytes("127.0.0.1"), bytes_of({127, 0, 0, 1}));
  auto v6 = address_bytes("::1");
  ASSERT_TRUE(v6.has_value());
  ASSERT_EQ(v6->size(), 16u);
  EXPECT_EQ(v6->back(), 1);
  auto bad = address_bytes("localhost");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().kind, ErrorKind::kInvalidArgument);
}

// The envelope carries the client's request header (its id and correlation id) and the body at
// the chosen version; the controller parses them back as they were.
TEST(EnvelopeTest, WrappedRequestKeepsTheClientsHeaderAndBody) {
  protocol::CreateTopicsRequest req;
  auto& t = req.topics.emplace_back();
  t.name = "orders";
  t.num_partitions = 3;
  t.replication_factor = 3;
  req.timeout_ms = 30000;
  const ForwardOrigin origin{.client_id = "probe", .correlation_id = 42, .client_host = "10.1.2.3"};
  auto envelope = wrap_request(req, 7, origin);
  ASSERT_TRUE(envelope.has_value());
  EXPECT_EQ(envelope->client_host_address, bytes_of({10, 1, 2, 3}));
  EXPECT_EQ(*envelope->request_principal, encode_principal("User", "ANONYMOUS"));

  auto header = protocol::parse_request_header(envelope->request_data);
  ASSERT_TRUE(header.has_value());
  EXPECT_EQ(header->api_key, protocol::CreateTopicsRequest::kApiKey);
  EXPECT_EQ(header->api_version, 7);
  EXPECT_EQ(header->correlation_id, 42);
  EXPECT_EQ(header->client_id, "probe");
  protocol::CreateTopicsRequest back;
  ASSERT_TRUE(protocol::decode_body(std::span(envelope->request_data).subspan(header->size), 7, back));
  ASSERT_EQ(back.topics.size(), 1u);
  EXPECT_EQ(back.topics[0].name, "orders");
  EXPECT_EQ(back.topics[0].num_partitions, 3);
  EXPECT_EQ(back.timeout_ms, 30000);

  // An envelope round-trips through its own codec (v0, flexible).
  protocol::Bytes wire;
  protocol::Writer w(wire);
  envelope->encode(w, 0);
  protocol::EnvelopeRequest decoded;
  ASSERT_TRUE(protocol::decode_body(wire, 0, decoded));
  EXPECT_EQ(decoded.request_data, envelope->request_data);
}

protocol::EnvelopeResponse answer(std::int32_t correlation_id, const protocol::CreateTopicsResponse& inner) {
  protocol::EnvelopeResponse env;
  env.response_data.emplace();
  protocol::Writer w(*env.response_data);
  protocol::write_response_header(w, protocol::CreateTopicsRequest::kApiKey, 7, correlation_id);
  inner.encode(w, 7);
  return env;
}

TEST(EnvelopeTest, InnerResponseIsDecodedAfterItsHeader) {
  protocol::CreateTopicsResponse inner;
  auto& r = inner.topics.emplace_back();
  r.name = "orders";
  r.error_code = 36;  // TOPIC_ALREADY_EXISTS
  auto got = unwrap_response<protocol::CreateTopicsRequest>(answer(42, inner), 7, 42);
  ASSERT_TRUE(got.has_value()) << got.error().to_string();
  ASSERT_EQ(got->topics.size(), 1u);
  EXPECT_EQ(got->topics[0].name, "orders");
  EXPECT_EQ(got->topics[0].error_code, 36);
}

TEST(EnvelopeTest, EnvelopeErrorsAndMismatchesAreErrorsNotResponses) {
  protocol::CreateTopicsResponse inner;
  auto other = unwrap_response<protocol::CreateTopicsRequest>(answer(7, inner), 7, 42);
  ASSERT_FALSE(other.has_value());
  EXPECT_EQ(other.error().kind, ErrorKind::kProtocol);

  protocol::EnvelopeResponse refused;
  refused.error_code = 41;  // NOT_CONTROLLER, as a controller that is not active answers
  auto not_controller = unwrap_response<protocol::CreateTopicsRequest>(refused, 7, 42);
  ASSERT_FALSE(not_controller.has_value());
  EXPECT_EQ(not_controller.error().kind, ErrorKind::kKafka);
  EXPECT_EQ(not_controller.error().code, 41);

  protocol::EnvelopeResponse empty;
  auto missing = unwrap_response<protocol::CreateTopicsRequest>(empty, 7, 42);
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().kind, ErrorKind::kProtocol);

  auto truncated = answer(42, inner);
  truncated.response_data->resize(3);
  EXPECT_FALSE((unwrap_response<protocol::CreateTopicsRequest>(truncated, 7, 42)).has_value());
}

}  // namespace
}  // namespace weir::client
