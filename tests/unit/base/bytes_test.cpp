#include "base/bytes.h"

#include <gtest/gtest.h>

#include <array>

namespace weir {
namespace {

std::vector<std::byte> bytes(std::initializer_list<int> values) {
  std::vector<std::byte> out;
  for (int v : values) out.push_back(static_cast<std::byte>(v));
  return out;
}

TEST(BytesTest, LoadBigEndianReadsMostSignificantByteFirst) {
  const auto b = bytes({0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08});
  EXPECT_EQ(load_be<std::uint16_t>(b.data()), 0x0102u);
  EXPECT_EQ(load_be<std::uint32_t>(b.data()), 0x01020304u);
  EXPECT_EQ(load_be<std::uint64_t>(b.data()), 0x0102030405060708ull);
  EXPECT_EQ(load_be<std::int8_t>(b.data() + 7), 8);
}

TEST(BytesTest, SignedLoadsKeepTheSign) {
  const auto b = bytes({0xff, 0xff, 0xff, 0xfe, 0x80, 0x00});
  EXPECT_EQ(load_be<std::int32_t>(b.data()), -2);
  EXPECT_EQ(load_be<std::int16_t>(b.data() + 4), -32768);
  EXPECT_EQ(load_be<std::int8_t>(b.data()), -1);
}

TEST(BytesTest, StoreThenLoadRoundTripsAtUnalignedAddresses) {
  std::array<std::byte, 16> buf{};
  store_be<std::int64_t>(buf.data() + 1, -1234567890123LL);
  store_be<std::int16_t>(buf.data() + 9, -2);
  store_be<std::uint32_t>(buf.data() + 11, 0xDEADBEEFu);
  EXPECT_EQ(load_be<std::int64_t>(buf.data() + 1), -1234567890123LL);
  EXPECT_EQ(load_be<std::int16_t>(buf.data() + 9), -2);
  EXPECT_EQ(load_be<std::uint32_t>(buf.data() + 11), 0xDEADBEEFu);
  EXPECT_EQ(buf[11], std::byte{0xDE});
}

TEST(ByteReaderTest, ReadsAdvanceAndFailWithoutMovingWhenShort) {
  const auto b = bytes({0x00, 0x2a, 0x01, 0x02, 0x03});
  ByteReader r(b);
  EXPECT_EQ(r.read_be<std::int16_t>(), 42);
  EXPECT_EQ(r.position(), 2u);
  EXPECT_EQ(r.read_be<std::int32_t>(), std::nullopt);
  EXPECT_EQ(r.position(), 2u);
  auto rest = r.read_bytes(3);
  ASSERT_TRUE(rest.has_value());
  EXPECT_EQ(rest->size(), 3u);
  EXPECT_EQ(rest->data(), b.data() + 2);  // a view, not a copy
  EXPECT_TRUE(r.empty());
  EXPECT_FALSE(r.read_bytes(1).has_value());
  EXPECT_FALSE(r.skip(1));
  EXPECT_TRUE(r.skip(0));
}

TEST(ByteReaderTest, HugeLengthIsRefusedNotAllocated) {
  const auto b = bytes({1, 2, 3});
  ByteReader r(b);
  EXPECT_FALSE(r.read_bytes(static_cast<std::size_t>(-1)).has_value());
  EXPECT_FALSE(r.skip(static_cast<std::size_t>(-1)));
  EXPECT_EQ(r.remaining(), 3u);
}

TEST(ByteBufferTest, AppendsBigEndianAndPatchesPlaceholders) {
  ByteBuffer buf;
  const std::size_t length_at = buf.append_zeros(4);
  buf.append_be<std::int16_t>(0x0102);
  buf.append("ab");
  buf.patch_be<std::int32_t>(length_at, static_cast<std::int32_t>(buf.size() - 4));
  EXPECT_EQ(buf.span().size(), 8u);
  EXPECT_EQ(load_be<std::int32_t>(buf.data()), 4);
  EXPECT_EQ(load_be<std::int16_t>(buf.data() + 4), 0x0102);
  EXPECT_EQ(as_string_view(buf.span().subspan(6)), "ab");
  auto owned = buf.release();
  EXPECT_EQ(owned.size(), 8u);
  EXPECT_TRUE(buf.empty());
}

TEST(ByteBufferDeathTest, PatchPastTheEndAborts) {
  ByteBuffer buf;
  buf.append_zeros(3);
  EXPECT_DEATH(buf.patch_be<std::int32_t>(0, 1), "patch at 0");
}

}  // namespace
}  // namespace weir
