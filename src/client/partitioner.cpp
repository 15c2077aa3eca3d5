#include "client/partitioner.h"

namespace weir::client {

std::int32_t murmur2(std::span<const std::byte> data) noexcept {
  constexpr std::uint32_t kSeed = 0x9747b28c;
  constexpr std::uint32_t kM = 0x5bd1e995;
  constexpr int kR = 24;
  const auto byte = [&data](std::size_t i) {
    return static_cast<std::uint32_t>(std::to_integer<std::uint8_t>(data[i]));
  };
  const std::size_t length = data.size();
  std::uint32_t h = kSeed ^ static_cast<std::uint32_t>(length);
  const std::size_t blocks = length / 4;
  for (std::size_t i = 0; i < blocks; ++i) {
    const std::size_t at = i * 4;
    std::uint32_t k = byte(at) | (byte(at + 1) << 8) | (byte(at + 2) << 16) | (byte(at + 3) << 24);
    k *= kM;
    k ^= k >> kR;
    k *= kM;
    h *= kM;
    h ^= k;
  }
  const std::size_t tail = blocks * 4;
  switch (length % 4) {
    case 3:
      h ^= byte(tail + 2) << 16;
      [[fallthrough]];
    case 2:
      h ^= byte(tail + 1) << 8;
      [[fallthrough]];
    case 1:
      h ^= byte(tail);
      h *= kM;
      break;
    default:
      break;
  }
  h ^= h >> 13;
  h *= kM;
  h ^= h >> 15;
  return static_cast<std::int32_t>(h);
}

std::int32_t partition_for_key(std::span<const std::byte> key, std::int32_t partitions) noexcept {
  const auto positive = static_cast<std::int32_t>(static_cast<std::uint32_t>(murmur2(key)) & 0x7fffffffU);
  return positive % partitions;
}

}  // namespace weir::client
