#include "base/java_hash.h"

#include <cstdlib>
#include <limits>

namespace weir {

std::int32_t java_string_hash(std::string_view s) {
  std::uint32_t h = 0;
  auto mix = [&](std::uint32_t unit) { h = h * 31u + unit; };
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    auto at = [&](std::size_t k) { return static_cast<std::uint32_t>(static_cast<unsigned char>(s[i + k]) & 0x3Fu); };
    std::uint32_t cp = c;
    std::size_t len = 1;
    if (c >= 0xF0 && i + 3 < s.size()) {
      cp = ((c & 0x07u) << 18) | (at(1) << 12) | (at(2) << 6) | at(3);
      len = 4;
    } else if (c >= 0xE0 && i + 2 < s.size()) {
      cp = ((c & 0x0Fu) << 12) | (at(1) << 6) | at(2);
      len = 3;
    } else if (c >= 0xC0 && i + 1 < s.size()) {
      cp = ((c & 0x1Fu) << 6) | at(1);
      len = 2;
    }
    if (cp >= 0x10000) {
      cp -= 0x10000;
      mix(0xD800u + (cp >> 10));
      mix(0xDC00u + (cp & 0x3FFu));
    } else {
      mix(cp);
    }
    i += len;
  }
  return static_cast<std::int32_t>(h);
}

std::int32_t java_partition_for(std::string_view key, std::int32_t partitions) {
  const std::int32_t h = java_string_hash(key);
  const std::int32_t abs = h == std::numeric_limits<std::int32_t>::min() ? 0 : std::abs(h);
  return partitions > 0 ? abs % partitions : 0;
}

}  // namespace weir
