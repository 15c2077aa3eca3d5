#include "base/varint.h"

#include <gtest/gtest.h>

#include <limits>
#include <random>
#include <vector>

namespace weir {
namespace {

std::vector<std::byte> bytes(std::initializer_list<int> values) {
  std::vector<std::byte> out;
  for (int v : values) out.push_back(static_cast<std::byte>(v));
  return out;
}

std::vector<std::byte> encoded_varint(std::int32_t v) {
  ByteBuffer buf;
  append_varint(buf, v);
  return buf.release();
}

TEST(VarintTest, ZigzagMapsSmallMagnitudesToSmallCodes) {
  EXPECT_EQ(zigzag_encode(0), 0u);
  EXPECT_EQ(zigzag_encode(-1), 1u);
  EXPECT_EQ(zigzag_encode(1), 2u);
  EXPECT_EQ(zigzag_encode(-2), 3u);
  EXPECT_EQ(zigzag_encode(std::numeric_limits<std::int32_t>::max()), 0xFFFFFFFEu);
  EXPECT_EQ(zigzag_encode(std::numeric_limits<std::int32_t>::min()), 0xFFFFFFFFu);
  EXPECT_EQ(zigzag_encode(std::int64_t{-1}), 1u);
  EXPECT_EQ(zigzag_decode(std::uint64_t{0xFFFFFFFFFFFFFFFFull}),
            std::numeric_limits<std::int64_t>::min());
}

TEST(VarintTest, KnownEncodingsMatchKafka) {
  EXPECT_EQ(encoded_varint(0), bytes({0x00}));
  EXPECT_EQ(encoded_varint(-1), bytes({0x01}));  // a null key or value length
  EXPECT_EQ(encoded_varint(1), bytes({0x02}));
  EXPECT_EQ(encoded_varint(63), bytes({0x7e}));
  EXPECT_EQ(encoded_varint(64), bytes({0x80, 0x01}));
  EXPECT_EQ(encoded_varint(300), bytes({0xd8, 0x04}));
  EXPECT_EQ(encoded_varint(std::numeric_limits<std::int32_t>::min()),
            bytes({0xff, 0xff, 0xff, 0xff, 0x0f}));
  ByteBuffer buf;
  append_unsigned_varint(buf, 300);
  EXPECT_EQ(buf.release(), bytes({0xac, 0x02}));
}

TEST(VarintTest, SizesMatchEncodings) {
  const std::int64_t values[] = {0,
                                 1,
                                 -1,
                                 63,
                                 64,
                                 -65,
                                 8191,
                                 8192,
                                 std::int64_t{1} << 40,
                                 std::numeric_limits<std::int64_t>::min(),
                                 std::numeric_limits<std::int64_t>::max()};
  for (std::int64_t v : values) {
    ByteBuffer buf;
    append_varlong(buf, v);
    EXPECT_EQ(buf.size(), varlong_size(v)) << v;
  }
  EXPECT_EQ(unsigned_varint_size(std::numeric_limits<std::uint32_t>::max()), kMaxVarintBytes);
  EXPECT_EQ(unsigned_varlong_size(std::numeric_limits<std::uint64_t>::max()), kMaxVarlongBytes);
}

TEST(VarintTest, RandomValuesRoundTrip) {
  std::mt19937_64 rng(42);
  for (int i = 0; i < 20000; ++i) {
    const auto raw = rng();
    const int shift = static_cast<int>(rng() % 64);
    const auto v64 = static_cast<std::int64_t>(raw >> shift);
    const auto v32 = static_cast<std::int32_t>(v64);
    std::byte buf[kMaxVarlongBytes];

    const std::size_t n64 = encode_varlong(v64, buf);
    auto d64 = decode_varlong(ByteSpan(buf, n64));
    ASSERT_TRUE(d64.has_value());
    EXPECT_EQ(d64->value, v64);
    EXPECT_EQ(d64->size, n64);

    const std::size_t n32 = encode_varint(v32, buf);
    auto d32 = decode_varint(ByteSpan(buf, n32));
    ASSERT_TRUE(d32.has_value());
    EXPECT_EQ(d32->value, v32);
    EXPECT_EQ(d32->size, n32);

    const auto u32 = static_cast<std::uint32_t>(raw >> shift);
    const std::size_t nu = encode_unsigned_varint(u32, buf);
    auto du = decode_unsigned_varint(ByteSpan(buf, nu));
    ASSERT_TRUE(du.has_value());
    EXPECT_EQ(du->value, u32);
  }
}

TEST(VarintTest, DecodeReadsOnlyTheFirstValue) {
  const auto b = bytes({0xd8, 0x04, 0x7f});
  auto d = decode_varint(b);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->value, 300);
  EXPECT_EQ(d->size, 2u);
}

TEST(VarintTest, TruncatedInputIsAnError) {
  EXPECT_EQ(decode_varint({}).error(), VarintError::truncated);
  EXPECT_EQ(decode_varint(bytes({0x80})).error(), VarintError::truncated);
  EXPECT_EQ(decode_varint(bytes({0xff, 0xff, 0xff, 0xff})).error(), VarintError::truncated);
  EXPECT_EQ(decode_varlong(bytes({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})).error(),
            VarintError::truncated);
}

TEST(VarintTest, MoreThanFiveBytesForThirtyTwoBitsIsOverlong) {
  EXPECT_EQ(decode_varint(bytes({0xff, 0xff, 0xff, 0xff, 0xff, 0x01})).error(),
            VarintError::overlong);
  EXPECT_EQ(decode_unsigned_varint(bytes({0x80, 0x80, 0x80, 0x80, 0x80, 0x00})).error(),
            VarintError::overlong);
}

TEST(VarintTest, FifthByteBitsBeyondThirtyTwoAreOverlong) {
  EXPECT_EQ(decode_unsigned_varint(bytes({0xff, 0xff, 0xff, 0xff, 0x1f})).error(),
            VarintError::overlong);
  auto max = decode_unsigned_varint(bytes({0xff, 0xff, 0xff, 0xff, 0x0f}));
  ASSERT_TRUE(max.has_value());
  EXPECT_EQ(max->value, 0xFFFFFFFFu);
}

TEST(VarintTest, MoreThanTenBytesForSixtyFourBitsIsOverlong) {
  const auto eleven = bytes({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01});
  EXPECT_EQ(decode_varlong(eleven).error(), VarintError::overlong);
  const auto ten_too_big = bytes({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02});
  EXPECT_EQ(decode_unsigned_varlong(ten_too_big).error(), VarintError::overlong);
  const auto ten_max = bytes({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01});
  EXPECT_EQ(decode_unsigned_varlong(ten_max)->value, std::numeric_limits<std::uint64_t>::max());
}

TEST(VarintTest, RedundantZeroGroupsWithinTheLimitAreAccepted) {
  auto d = decode_varint(bytes({0x82, 0x80, 0x00}));
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->value, 1);
  EXPECT_EQ(d->size, 3u);
}

TEST(VarintTest, ReaderAdvancesOnlyOnSuccess) {
  const auto b = bytes({0x02, 0x80});
  ByteReader r(b);
  EXPECT_EQ(read_varint(r).value(), 1);
  EXPECT_EQ(r.position(), 1u);
  EXPECT_EQ(read_varint(r).error(), VarintError::truncated);
  EXPECT_EQ(r.position(), 1u);
}

}  // namespace
}  // namespace weir
