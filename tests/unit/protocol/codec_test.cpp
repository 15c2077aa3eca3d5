#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "protocol/gen/api_registry.h"
#include "protocol/headers.h"

namespace wp = weir::protocol;

namespace {

wp::Bytes bytes(std::initializer_list<int> v) {
  wp::Bytes b;
  for (int x : v) b.push_back(static_cast<std::uint8_t>(x));
  return b;
}

TEST(Reader, HugeArrayCountFailsWithoutAllocating) {
  // MetadataRequest v1: topics array count 0x7fffffff with 2 bytes behind it.
  wp::MetadataRequest m;
  EXPECT_FALSE(wp::decode_body(bytes({0x7f, 0xff, 0xff, 0xff, 0, 0}), 1, m));
  EXPECT_TRUE(!m.topics || m.topics->capacity() < 16);
}

TEST(Reader, NegativeLengthOtherThanNullIsMalformed) {
  wp::MetadataRequest m;
  EXPECT_FALSE(wp::decode_body(bytes({0xff, 0xff, 0xff, 0xfe}), 1, m));
}

TEST(Reader, NullArrayOnlyWhereNullable) {
  wp::MetadataRequest m;
  // v0: topics is not nullable.
  EXPECT_FALSE(wp::decode_body(bytes({0xff, 0xff, 0xff, 0xff}), 0, m));
  // v1: null means all topics.
  EXPECT_TRUE(wp::decode_body(bytes({0xff, 0xff, 0xff, 0xff}), 1, m));
  EXPECT_FALSE(m.topics.has_value());
}

TEST(Reader, TruncatedVarintFails) {
  wp::Bytes b = bytes({0x80, 0x80});
  wp::Reader r(b);
  r.uvarint();
  EXPECT_FALSE(r.ok());
}

TEST(Reader, OverlongVarintFails) {
  wp::Bytes b = bytes({0xff, 0xff, 0xff, 0xff, 0x7f});
  wp::Reader r(b);
  r.uvarint();
  EXPECT_FALSE(r.ok());
}

TEST(TaggedFields, UnknownTagsSurviveReencoding) {
  // ApiVersionsRequest v3: client name "a", version "b", one unknown tag 9 with 2 bytes.
  wp::Bytes body = bytes({0x02, 'a', 0x02, 'b', 0x01, 0x09, 0x02, 0xca, 0xfe});
  wp::ApiVersionsRequest m;
  ASSERT_TRUE(wp::decode_body(body, 3, m));
  ASSERT_EQ(m.unknown_tagged_fields.size(), 1u);
  EXPECT_EQ(m.unknown_tagged_fields[0].tag, 9u);
  EXPECT_EQ(wp::encode_body(m, 3), body);
}

TEST(TaggedFields, OutOfOrderTagsAreMalformed) {
  wp::Bytes body = bytes({0x02, 'a', 0x02, 'b', 0x02, 0x09, 0x00, 0x05, 0x00});
  wp::ApiVersionsRequest m;
  EXPECT_FALSE(wp::decode_body(body, 3, m));
}

TEST(TaggedFields, KnownTagDecodesIntoItsField) {
  // ApiVersionsResponse v3: error 0, no api keys, throttle 0, tag 1 (FinalizedFeaturesEpoch) = 7.
  wp::Bytes body = bytes({0, 0, 0x01, 0, 0, 0, 0, 0x01, 0x01, 0x08, 0, 0, 0, 0, 0, 0, 0, 7});
  wp::ApiVersionsResponse m;
  ASSERT_TRUE(wp::decode_body(body, 3, m));
  EXPECT_EQ(m.finalized_features_epoch, 7);
  EXPECT_EQ(wp::encode_body(m, 3), body);
}

TEST(Headers, RequestHeaderV1ForNonFlexibleVersion) {
  wp::Bytes frame = bytes({0, 3, 0, 1, 0, 0, 0, 42, 0, 2, 'c', 'i', 0xaa});
  auto h = wp::parse_request_header(frame);
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->api_key, 3);
  EXPECT_EQ(h->api_version, 1);
  EXPECT_EQ(h->correlation_id, 42);
  EXPECT_EQ(h->client_id, "ci");
  EXPECT_EQ(h->size, 12u);
}

TEST(Headers, RequestHeaderV2KeepsClassicClientIdAndReadsTags) {
  wp::Bytes frame = bytes({0, 3, 0, 12, 0, 0, 0, 1, 0xff, 0xff, 0x00, 0xbb});
  auto h = wp::parse_request_header(frame);
  ASSERT_TRUE(h.has_value());
  EXPECT_FALSE(h->client_id.has_value());
  EXPECT_EQ(h->size, 11u);
}

TEST(Headers, UnknownApiKeyReportsCorrelationId) {
  wp::Bytes frame = bytes({0x7f, 0x00, 0, 0, 0, 0, 0, 9, 0, 0});
  auto h = wp::parse_request_header(frame);
  ASSERT_FALSE(h.has_value());
  EXPECT_EQ(h.error().error, wp::HeaderError::kUnknownApi);
  EXPECT_EQ(h.error().header.correlation_id, 9);
}

TEST(Headers, TruncatedHeaderIsRejected) {
  wp::Bytes frame = bytes({0, 18, 0, 3, 0, 0});
  auto h = wp::parse_request_header(frame);
  ASSERT_FALSE(h.has_value());
  EXPECT_EQ(h.error().error, wp::HeaderError::kTruncated);
}

TEST(Headers, ApiVersionsResponseHeaderNeverHasTags) {
  EXPECT_EQ(wp::response_header_size(18, 3), 4u);
  EXPECT_EQ(wp::response_header_size(3, 12), 5u);
  EXPECT_EQ(wp::response_header_size(3, 8), 4u);
}

TEST(Descriptors, MatchKafka431Ranges) {
  const auto* produce = wp::find_api(0);
  ASSERT_NE(produce, nullptr);
  EXPECT_EQ(produce->min_version, 3);
  EXPECT_EQ(produce->max_version, 13);
  EXPECT_EQ(produce->first_flexible_version, 9);
  const auto* offset_delete = wp::find_api(47);
  ASSERT_NE(offset_delete, nullptr);
  EXPECT_EQ(offset_delete->first_flexible_version, -1);
  EXPECT_EQ(wp::find_api(1000), nullptr);
}


// ------------------------------------------------------------- records held in files (zero-copy)

class FileRecords : public ::testing::Test {
 protected:
  void SetUp() override {
    char name[] = "/tmp/weir-file-bytes-XXXXXX";
    fd_ = ::mkstemp(name);
    ASSERT_GE(fd_, 0);
    ::unlink(name);
    const std::string content = "abcdefghij";
    ASSERT_EQ(::write(fd_, content.data(), content.size()), static_cast<ssize_t>(content.size()));
  }
  void TearDown() override { ::close(fd_); }

  // "cde" + "ghij": two regions of the file.
  std::shared_ptr<const weir::FileBytes> two_regions() const {
    auto b = std::make_shared<weir::FileBytes>();
    b->regions = {weir::FileRegion{fd_, 2, 3}, weir::FileRegion{fd_, 6, 4}};
    b->size = 7;
    return b;
  }

  static wp::FetchResponse response(std::optional<wp::Bytes> records, std::shared_ptr<const weir::FileBytes> in_files) {
    wp::FetchResponse r;
    auto& t = r.responses.emplace_back();
    t.topic = "t";
    auto& p = t.partitions.emplace_back();
    p.partition_index = 3;
    p.records = std::move(records);
    p.records_in_files = std::move(in_files);
    return r;
  }

  int fd_ = -1;
};

TEST_F(FileRecords, EncodeLeavesASpliceWhereTheFileBytesGo) {
  for (std::int16_t version : {4, 11, 12, 17}) {
    wp::Bytes in_memory;
    wp::Writer plain(in_memory);
    response(wp::Bytes{'c', 'd', 'e', 'g', 'h', 'i', 'j'}, nullptr).encode(plain, version);

    wp::Bytes encoded;
    std::vector<weir::Splice> splices;
    wp::Writer w(encoded, &splices);
    response(wp::Bytes{}, two_regions()).encode(w, version);
    ASSERT_EQ(splices.size(), 1u) << version;
    EXPECT_EQ(encoded.size() + 7, in_memory.size()) << version;
    // The bytes the connection sends: the encoding with the regions' bytes put in at the splice.
    wp::Bytes sent(encoded.begin(), encoded.begin() + static_cast<std::ptrdiff_t>(splices[0].at));
    ASSERT_TRUE(splices[0].bytes->read_into(sent));
    sent.insert(sent.end(), encoded.begin() + static_cast<std::ptrdiff_t>(splices[0].at), encoded.end());
    EXPECT_EQ(sent, in_memory) << version;

    // A writer without a splice list reads the bytes in.
    wp::Bytes copied;
    wp::Writer c(copied);
    response(wp::Bytes{}, two_regions()).encode(c, version);
    EXPECT_EQ(copied, in_memory) << version;

    wp::FetchResponse decoded;
    ASSERT_TRUE(wp::decode_body(in_memory, version, decoded)) << version;
    EXPECT_EQ(*decoded.responses[0].partitions[0].records, (wp::Bytes{'c', 'd', 'e', 'g', 'h', 'i', 'j'}));
  }
}

TEST_F(FileRecords, ReadingARegionPastTheEndOfItsFileFails) {
  auto b = std::make_shared<weir::FileBytes>();
  b->regions = {weir::FileRegion{fd_, 0, 2}, weir::FileRegion{fd_, 8, 5}};  // the file has 10 bytes
  b->size = 7;
  wp::Bytes out{1, 2};
  EXPECT_FALSE(b->read_into(out));
  EXPECT_EQ(out, (wp::Bytes{1, 2}));  // as it was
  wp::Bytes encoded;
  wp::Writer w(encoded);
  EXPECT_THROW(response(wp::Bytes{}, b).encode(w, 12), std::runtime_error);
}

}  // namespace
