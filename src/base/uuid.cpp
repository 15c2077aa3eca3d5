#include "base/uuid.h"

#include "base/assert.h"

namespace weir {

namespace {

constexpr std::string_view kAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

// Value of a base64url character, or -1.
constexpr int decode_char(char c) noexcept {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '-') return 62;
  if (c == '_') return 63;
  return -1;
}

}  // namespace

Uuid Uuid::random() {
  thread_local std::mt19937_64 rng = [] {
    std::random_device rd;
    std::seed_seq seq{rd(), rd(), rd(), rd(), rd(), rd(), rd(), rd()};
    return std::mt19937_64(seq);
  }();
  return random(rng);
}

bool Uuid::acceptable_random() const {
  return *this != zero() && *this != metadata_topic_id() && to_string().front() != '-';
}

Uuid Uuid::from_bytes(ByteSpan bytes) noexcept {
  WEIR_ASSERT(bytes.size() == kSize, "uuid needs {} bytes, got {}", kSize, bytes.size());
  return Uuid(load_be<std::uint64_t>(bytes.data()), load_be<std::uint64_t>(bytes.data() + 8));
}

std::array<std::byte, Uuid::kSize> Uuid::to_bytes() const noexcept {
  std::array<std::byte, kSize> out;
  store_be<std::uint64_t>(out.data(), msb_);
  store_be<std::uint64_t>(out.data() + 8, lsb_);
  return out;
}

std::string Uuid::to_string() const {
  const auto bytes = to_bytes();
  std::string out;
  out.reserve(kStringSize);
  // Five groups of three bytes give 20 characters; the last byte gives two more.
  std::size_t i = 0;
  for (; i + 3 <= kSize; i += 3) {
    const auto group = (std::to_integer<std::uint32_t>(bytes[i]) << 16) |
                       (std::to_integer<std::uint32_t>(bytes[i + 1]) << 8) |
                       std::to_integer<std::uint32_t>(bytes[i + 2]);
    out.push_back(kAlphabet[(group >> 18) & 63]);
    out.push_back(kAlphabet[(group >> 12) & 63]);
    out.push_back(kAlphabet[(group >> 6) & 63]);
    out.push_back(kAlphabet[group & 63]);
  }
  const auto last = std::to_integer<std::uint32_t>(bytes[i]);
  out.push_back(kAlphabet[last >> 2]);
  out.push_back(kAlphabet[(last & 3) << 4]);
  WEIR_ASSERT(out.size() == kStringSize);
  return out;
}

std::optional<Uuid> Uuid::from_string(std::string_view text) noexcept {
  if (text.size() == kStringSize + 2 && text.ends_with("==")) text.remove_suffix(2);
  if (text.size() != kStringSize) return std::nullopt;
  std::array<std::byte, kSize> bytes{};
  std::uint32_t acc = 0;
  int bits = 0;
  std::size_t n = 0;
  for (char c : text) {
    const int v = decode_char(c);
    if (v < 0) return std::nullopt;
    acc = (acc << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      bytes[n++] = static_cast<std::byte>((acc >> bits) & 0xff);
    }
  }
  // 22 characters carry 132 bits: 16 bytes plus 4 unused low bits, which Kafka's decoder ignores.
  WEIR_ASSERT(n == kSize);
  return from_bytes(bytes);
}

}  // namespace weir
