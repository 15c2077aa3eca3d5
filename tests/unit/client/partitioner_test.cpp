#include "client/partitioner.h"

#include <gtest/gtest.h>

#include <string_view>

namespace weir::client {
namespace {

std::span<const std::byte> bytes(std::string_view s) { return std::as_bytes(std::span(s.data(), s.size())); }

// Kafka's own murmur2 test vectors (UtilsTest), every tail length included.
TEST(PartitionerTest, Murmur2MatchesKafkasVectors) {
  EXPECT_EQ(murmur2(bytes("21")), -973932308);
  EXPECT_EQ(murmur2(bytes("foobar")), -790332482);
  EXPECT_EQ(murmur2(bytes("a-little-bit-long-string")), -985981536);
  EXPECT_EQ(murmur2(bytes("a-little-bit-longer-string")), -1486304829);
  EXPECT_EQ(murmur2(bytes("lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8")), -58897971);
  EXPECT_EQ(murmur2(bytes("abc")), 479470107);
}

TEST(PartitionerTest, PartitionIsThePositiveHashModuloTheCount) {
  // -973932308 & 0x7fffffff = 1173551340.
  EXPECT_EQ(partition_for_key(bytes("21"), 7), 1173551340 % 7);
  for (int n = 1; n < 20; ++n) {
    const std::int32_t p = partition_for_key(bytes("foobar"), n);
    EXPECT_GE(p, 0);
    EXPECT_LT(p, n);
  }
}

}  // namespace
}  // namespace weir::client
