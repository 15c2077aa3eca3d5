// Uuid: the 128-bit ids Kafka uses for topics (and directories, incarnations).
//
// On the wire a Uuid is 16 bytes: the most significant 64 bits big-endian, then the least
// significant 64 bits. Its text form is those 16 bytes in URL-safe base64 ('-' and '_' for '+'
// and '/') without padding: always 22 characters, e.g. "AAAAAAAAAAAAAAAAAAAAAA" for zero().
//
// random() follows Kafka's rules: a version-4 (random) UUID that is never zero(), never the
// reserved metadata topic id (0, 1), and whose text form never starts with '-' (it would look
// like a command-line option).
#pragma once

#include <fmt/format.h>

#include <array>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <string_view>

#include "base/bytes.h"

namespace weir {

class Uuid {
 public:
  static constexpr std::size_t kSize = 16;
  static constexpr std::size_t kStringSize = 22;

  constexpr Uuid() noexcept = default;
  constexpr Uuid(std::uint64_t msb, std::uint64_t lsb) noexcept : msb_(msb), lsb_(lsb) {}

  [[nodiscard]] static constexpr Uuid zero() noexcept { return Uuid(0, 0); }
  // Kafka's fixed id of the cluster metadata topic.
  [[nodiscard]] static constexpr Uuid metadata_topic_id() noexcept { return Uuid(0, 1); }

  // A fresh random id from a per-thread generator seeded by std::random_device.
  [[nodiscard]] static Uuid random();
  // The same, drawing from a caller's engine (for deterministic tests and simulation).
  template <class Rng>
  [[nodiscard]] static Uuid random(Rng& rng);

  // Reads 16 bytes; bytes.size() must be kSize.
  [[nodiscard]] static Uuid from_bytes(ByteSpan bytes) noexcept;
  [[nodiscard]] std::array<std::byte, kSize> to_bytes() const noexcept;

  // Parses the 22-character base64url form (a 24-character form padded with "==" is also
  // accepted, as Kafka's decoder accepts it). nullopt if malformed.
  [[nodiscard]] static std::optional<Uuid> from_string(std::string_view text) noexcept;
  [[nodiscard]] std::string to_string() const;

  [[nodiscard]] constexpr std::uint64_t msb() const noexcept { return msb_; }
  [[nodiscard]] constexpr std::uint64_t lsb() const noexcept { return lsb_; }
  [[nodiscard]] constexpr bool is_zero() const noexcept { return msb_ == 0 && lsb_ == 0; }

  friend constexpr auto operator<=>(const Uuid&, const Uuid&) noexcept = default;

 private:
  // Sets the version (4) and IETF variant bits, as java.util.UUID.randomUUID() does.
  [[nodiscard]] static constexpr Uuid make_v4(std::uint64_t msb, std::uint64_t lsb) noexcept {
    msb = (msb & ~0xF000ull) | 0x4000ull;
    lsb = (lsb & ~(0xC000ull << 48)) | (0x8000ull << 48);
    return Uuid(msb, lsb);
  }
  [[nodiscard]] bool acceptable_random() const;

  std::uint64_t msb_ = 0;
  std::uint64_t lsb_ = 0;
};

template <class Rng>
Uuid Uuid::random(Rng& rng) {
  std::uniform_int_distribution<std::uint64_t> dist;
  for (;;) {
    const std::uint64_t hi = dist(rng);
    const std::uint64_t lo = dist(rng);
    Uuid id = make_v4(hi, lo);
    if (id.acceptable_random()) return id;
  }
}

}  // namespace weir

template <>
struct std::hash<weir::Uuid> {
  std::size_t operator()(const weir::Uuid& id) const noexcept {
    return std::hash<std::uint64_t>{}(id.msb() ^ (id.lsb() * 0x9E3779B97F4A7C15ull));
  }
};

template <>
struct fmt::formatter<weir::Uuid> : fmt::formatter<std::string_view> {
  template <class FormatContext>
  auto format(const weir::Uuid& id, FormatContext& ctx) const {
    return fmt::formatter<std::string_view>::format(id.to_string(), ctx);
  }
};
