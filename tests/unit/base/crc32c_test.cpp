#include "base/crc32c.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace weir {
namespace {

// Bit-at-a-time reference straight from the definition, independent of both implementations.
std::uint32_t reference_crc32c(ByteSpan data) {
  std::uint32_t crc = 0xFFFFFFFFu;
  for (std::byte b : data) {
    crc ^= std::to_integer<std::uint32_t>(b);
    for (int i = 0; i < 8; ++i) crc = (crc >> 1) ^ ((crc & 1u) ? 0x82F63B78u : 0u);
  }
  return ~crc;
}

std::vector<std::byte> random_bytes(std::mt19937& rng, std::size_t n) {
  std::vector<std::byte> out(n);
  for (auto& b : out) b = static_cast<std::byte>(rng() & 0xff);
  return out;
}

TEST(Crc32cTest, CheckValueOfDigitsMatchesTheStandard) {
  EXPECT_EQ(crc32c(as_bytes("123456789")), 0xE3069283u);
  EXPECT_EQ(detail::crc32c_software(0, as_bytes("123456789")), 0xE3069283u);
}

TEST(Crc32cTest, KnownVectorsFromRfc3720) {
  std::vector<std::byte> zeros(32, std::byte{0x00});
  std::vector<std::byte> ones(32, std::byte{0xff});
  std::vector<std::byte> ascending(32);
  std::vector<std::byte> descending(32);
  for (int i = 0; i < 32; ++i) {
    ascending[i] = static_cast<std::byte>(i);
    descending[i] = static_cast<std::byte>(31 - i);
  }
  EXPECT_EQ(crc32c(zeros), 0x8A9136AAu);
  EXPECT_EQ(crc32c(ones), 0x62A8AB43u);
  EXPECT_EQ(crc32c(ascending), 0x46DD794Eu);
  EXPECT_EQ(crc32c(descending), 0x113FDB5Cu);
}

TEST(Crc32cTest, EmptyInputHasZeroCrc) { EXPECT_EQ(crc32c({}), 0u); }

TEST(Crc32cTest, ExtendEqualsCrcOfConcatenation) {
  const std::string a = "hello, ";
  const std::string b = "record batch";
  EXPECT_EQ(crc32c_extend(crc32c(as_bytes(a)), as_bytes(b)), crc32c(as_bytes(a + b)));
  EXPECT_EQ(crc32c_extend(0, as_bytes(a)), crc32c(as_bytes(a)));
}

TEST(Crc32cTest, SoftwareMatchesBitwiseReferenceOnRandomInputs) {
  std::mt19937 rng(7);
  for (std::size_t n = 0; n < 300; ++n) {
    const auto data = random_bytes(rng, n);
    const std::size_t offset = n == 0 ? 0 : rng() % n;  // exercise unaligned starts
    const ByteSpan span = ByteSpan(data).subspan(offset);
    EXPECT_EQ(detail::crc32c_software(0, span), reference_crc32c(span)) << n;
  }
}

TEST(Crc32cTest, HardwareMatchesSoftwareOnRandomInputs) {
  if (!detail::crc32c_hardware_available()) GTEST_SKIP() << "no SSE4.2 on this CPU";
  std::mt19937 rng(11);
  for (int i = 0; i < 2000; ++i) {
    const std::size_t n = rng() % (i < 1000 ? 64 : 70000);
    const auto data = random_bytes(rng, n);
    const std::size_t offset = n == 0 ? 0 : rng() % 8 % (n + 1);
    const ByteSpan span = ByteSpan(data).subspan(offset);
    const std::uint32_t seed = rng();
    EXPECT_EQ(detail::crc32c_hardware(seed, span), detail::crc32c_software(seed, span))
        << "n=" << n;
  }
}

}  // namespace
}  // namespace weir
