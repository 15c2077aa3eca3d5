#include "base/uuid.h"

#include <gtest/gtest.h>

#include <random>
#include <unordered_set>

namespace weir {
namespace {

TEST(UuidTest, ZeroIsTwentyTwoAs) {
  EXPECT_EQ(Uuid::zero().to_string(), "AAAAAAAAAAAAAAAAAAAAAA");
  EXPECT_TRUE(Uuid::zero().is_zero());
  EXPECT_EQ(Uuid(), Uuid::zero());
}

TEST(UuidTest, MetadataTopicIdHasKafkasText) {
  EXPECT_EQ(Uuid::metadata_topic_id().to_string(), "AAAAAAAAAAAAAAAAAAAAAQ");
}

TEST(UuidTest, TextUsesUrlSafeAlphabetWithoutPadding) {
  const Uuid all_ones(~0ull, ~0ull);
  EXPECT_EQ(all_ones.to_string(), "_____________________w");
  const Uuid id(0xFBEFBEFBEFBEFBEFull, 0xBEFBEFBEFBEFBEFBull);
  const std::string text = id.to_string();
  EXPECT_EQ(text.size(), Uuid::kStringSize);
  EXPECT_EQ(text.find_first_of("+/="), std::string::npos);
  EXPECT_EQ(Uuid::from_string(text), id);
}

TEST(UuidTest, KnownTextDecodesToKnownBits) {
  // 16 bytes 00 01 02 .. 0f in base64url.
  auto id = Uuid::from_string("AAECAwQFBgcICQoLDA0ODw");
  ASSERT_TRUE(id.has_value());
  EXPECT_EQ(id->msb(), 0x0001020304050607ull);
  EXPECT_EQ(id->lsb(), 0x08090a0b0c0d0e0full);
  EXPECT_EQ(id->to_string(), "AAECAwQFBgcICQoLDA0ODw");
  EXPECT_EQ(Uuid::from_string("AAECAwQFBgcICQoLDA0ODw=="), id);
}

TEST(UuidTest, MalformedTextIsRejected) {
  EXPECT_FALSE(Uuid::from_string("").has_value());
  EXPECT_FALSE(Uuid::from_string("AAAAAAAAAAAAAAAAAAAAA").has_value());    // 21 chars
  EXPECT_FALSE(Uuid::from_string("AAAAAAAAAAAAAAAAAAAAAAA").has_value());  // 23 chars
  EXPECT_FALSE(Uuid::from_string("AAAAAAAAAAAAAAAAAAAA+A").has_value());   // standard alphabet
  EXPECT_FALSE(Uuid::from_string("AAAAAAAAAAAAAAAAAAAA A").has_value());
}

TEST(UuidTest, BytesAreMostSignificantHalfFirst) {
  const Uuid id(0x0102030405060708ull, 0x090a0b0c0d0e0f10ull);
  const auto b = id.to_bytes();
  EXPECT_EQ(b[0], std::byte{0x01});
  EXPECT_EQ(b[15], std::byte{0x10});
  EXPECT_EQ(Uuid::from_bytes(b), id);
}

TEST(UuidTest, RandomIdsAreVersionFourAndNeverReserved) {
  std::unordered_set<Uuid> seen;
  for (int i = 0; i < 2000; ++i) {
    const Uuid id = Uuid::random();
    EXPECT_EQ((id.msb() >> 12) & 0xF, 4u);
    EXPECT_EQ(id.lsb() >> 62, 2u);
    EXPECT_NE(id.to_string().front(), '-');
    EXPECT_FALSE(id.is_zero());
    EXPECT_TRUE(seen.insert(id).second);
    EXPECT_EQ(Uuid::from_string(id.to_string()), id);
  }
}

TEST(UuidTest, RandomFromSeededEngineIsDeterministic) {
  std::mt19937_64 a(1);
  std::mt19937_64 b(1);
  EXPECT_EQ(Uuid::random(a), Uuid::random(b));
}

TEST(UuidTest, FormatsAsText) {
  EXPECT_EQ(fmt::format("{}", Uuid::zero()), "AAAAAAAAAAAAAAAAAAAAAA");
}

}  // namespace
}  // namespace weir
