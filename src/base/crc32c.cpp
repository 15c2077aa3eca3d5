#include "base/crc32c.h"

#include <array>
#include <cstring>

#include "base/assert.h"

#if defined(__x86_64__) || defined(__i386__)
#include <nmmintrin.h>
#define WEIR_CRC32C_X86 1
#else
#define WEIR_CRC32C_X86 0
#endif

namespace weir {

namespace {

constexpr std::uint32_t kPolyReflected = 0x82F63B78u;

// Slicing-by-8 tables: kTables[0] is the classic byte-at-a-time table; kTables[k][b] is the CRC
// contribution of byte b followed by k zero bytes, so eight bytes fold in with eight lookups.
using Tables = std::array<std::array<std::uint32_t, 256>, 8>;

constexpr Tables make_tables() {
  Tables t{};
  for (std::uint32_t b = 0; b < 256; ++b) {
    std::uint32_t c = b;
    for (int bit = 0; bit < 8; ++bit) c = (c >> 1) ^ ((c & 1u) ? kPolyReflected : 0u);
    t[0][b] = c;
  }
  for (std::size_t k = 1; k < 8; ++k) {
    for (std::size_t b = 0; b < 256; ++b) {
      const std::uint32_t prev = t[k - 1][b];
      t[k][b] = (prev >> 8) ^ t[0][prev & 0xffu];
    }
  }
  return t;
}

constexpr Tables kTables = make_tables();
static_assert(kTables[0][1] == 0xF26B8303u);

inline std::uint32_t load_le32(const std::byte* p) noexcept {
  std::uint32_t v;
  std::memcpy(&v, p, sizeof(v));
  if constexpr (std::endian::native == std::endian::big) v = std::byteswap(v);
  return v;
}

#if WEIR_CRC32C_X86
__attribute__((target("sse4.2"))) std::uint32_t hardware_impl(std::uint32_t crc, const std::byte* p,
                                                              std::size_t n) noexcept {
#if defined(__x86_64__)
  std::uint64_t c = crc;
  for (; n >= 8; n -= 8, p += 8) {
    std::uint64_t word;
    std::memcpy(&word, p, sizeof(word));
    c = _mm_crc32_u64(c, word);
  }
  crc = static_cast<std::uint32_t>(c);
#endif
  for (; n >= 4; n -= 4, p += 4) {
    std::uint32_t word;
    std::memcpy(&word, p, sizeof(word));
    crc = _mm_crc32_u32(crc, word);
  }
  for (; n > 0; --n, ++p) crc = _mm_crc32_u8(crc, static_cast<std::uint8_t>(*p));
  return crc;
}

bool detect_sse42() noexcept {
  __builtin_cpu_init();
  return __builtin_cpu_supports("sse4.2") != 0;
}
#endif

// Both implementations work on the pre- and post-inverted register: callers pass and receive the
// finished CRC value, the inversion happens here.
std::uint32_t software_impl(std::uint32_t crc, const std::byte* p, std::size_t n) noexcept {
  for (; n >= 8; n -= 8, p += 8) {
    const std::uint32_t lo = load_le32(p) ^ crc;
    const std::uint32_t hi = load_le32(p + 4);
    crc = kTables[7][lo & 0xff] ^ kTables[6][(lo >> 8) & 0xff] ^ kTables[5][(lo >> 16) & 0xff] ^
          kTables[4][lo >> 24] ^ kTables[3][hi & 0xff] ^ kTables[2][(hi >> 8) & 0xff] ^
          kTables[1][(hi >> 16) & 0xff] ^ kTables[0][hi >> 24];
  }
  for (; n > 0; --n, ++p) {
    crc = (crc >> 8) ^ kTables[0][(crc ^ static_cast<std::uint8_t>(*p)) & 0xffu];
  }
  return crc;
}

}  // namespace

namespace detail {

bool crc32c_hardware_available() noexcept {
#if WEIR_CRC32C_X86
  static const bool available = detect_sse42();
  return available;
#else
  return false;
#endif
}

std::uint32_t crc32c_software(std::uint32_t crc, ByteSpan data) noexcept {
  return ~software_impl(~crc, data.data(), data.size());
}

std::uint32_t crc32c_hardware(std::uint32_t crc, ByteSpan data) noexcept {
#if WEIR_CRC32C_X86
  WEIR_ASSERT(crc32c_hardware_available());
  return ~hardware_impl(~crc, data.data(), data.size());
#else
  WEIR_UNREACHABLE("no hardware CRC32C on this architecture");
#endif
}

}  // namespace detail

std::uint32_t crc32c_extend(std::uint32_t crc, ByteSpan data) noexcept {
#if WEIR_CRC32C_X86
  if (detail::crc32c_hardware_available()) [[likely]] {
    return ~hardware_impl(~crc, data.data(), data.size());
  }
#endif
  return ~software_impl(~crc, data.data(), data.size());
}

std::uint32_t crc32c(ByteSpan data) noexcept { return crc32c_extend(0, data); }

}  // namespace weir
