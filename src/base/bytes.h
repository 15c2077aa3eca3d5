// Byte spans, big-endian loads and stores, a bounds-checked reader and a growable writer.
//
// Everything on the Kafka wire and on disk is big-endian ("network order"). These helpers are the
// only place that knows the host order; callers never byte-swap by hand.
//
// Thread safety: ByteReader and ByteBuffer are plain values, not synchronised.
#pragma once

#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "base/assert.h"

namespace weir {

using ByteSpan = std::span<const std::byte>;
using MutableByteSpan = std::span<std::byte>;

// Integers the big-endian helpers accept (int8..int64, uint8..uint64; not bool or char).
template <class T>
concept WireInt = std::integral<T> && !std::same_as<T, bool> && !std::same_as<T, char> &&
                  (sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8);

inline ByteSpan as_bytes(std::string_view s) noexcept {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

inline std::string_view as_string_view(ByteSpan b) noexcept {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

// Reads a big-endian T from p; p needs sizeof(T) readable bytes, no alignment.
template <WireInt T>
[[nodiscard]] inline T load_be(const std::byte* p) noexcept {
  using U = std::make_unsigned_t<T>;
  U raw;
  std::memcpy(&raw, p, sizeof(U));
  if constexpr (std::endian::native == std::endian::little && sizeof(U) > 1) {
    raw = std::byteswap(raw);
  }
  return static_cast<T>(raw);
}

// Writes v big-endian at p; p needs sizeof(T) writable bytes, no alignment.
template <WireInt T>
inline void store_be(std::byte* p, T v) noexcept {
  using U = std::make_unsigned_t<T>;
  auto raw = static_cast<U>(v);
  if constexpr (std::endian::native == std::endian::little && sizeof(U) > 1) {
    raw = std::byteswap(raw);
  }
  std::memcpy(p, &raw, sizeof(U));
}

// A cursor over untrusted bytes. Every read checks what remains; a failed read returns nullopt
// (or false) and leaves the cursor where it was.
class ByteReader {
 public:
  ByteReader() = default;
  explicit ByteReader(ByteSpan bytes) noexcept : bytes_(bytes) {}

  [[nodiscard]] std::size_t position() const noexcept { return pos_; }
  [[nodiscard]] std::size_t remaining() const noexcept { return bytes_.size() - pos_; }
  [[nodiscard]] bool empty() const noexcept { return remaining() == 0; }
  // The bytes not yet consumed.
  [[nodiscard]] ByteSpan rest() const noexcept { return bytes_.subspan(pos_); }

  template <WireInt T>
  [[nodiscard]] std::optional<T> read_be() noexcept {
    if (remaining() < sizeof(T)) return std::nullopt;
    T v = load_be<T>(bytes_.data() + pos_);
    pos_ += sizeof(T);
    return v;
  }

  // The next n bytes as a view into the underlying buffer (no copy).
  [[nodiscard]] std::optional<ByteSpan> read_bytes(std::size_t n) noexcept {
    if (remaining() < n) return std::nullopt;
    ByteSpan out = bytes_.subspan(pos_, n);
    pos_ += n;
    return out;
  }

  [[nodiscard]] bool skip(std::size_t n) noexcept {
    if (remaining() < n) return false;
    pos_ += n;
    return true;
  }

 private:
  ByteSpan bytes_{};
  std::size_t pos_ = 0;
};

// A growable output buffer with big-endian appends and back-patching (write a placeholder,
// fill it in once the value is known, e.g. a length or a CRC).
class ByteBuffer {
 public:
  ByteBuffer() = default;
  explicit ByteBuffer(std::size_t reserve_bytes) { bytes_.reserve(reserve_bytes); }

  [[nodiscard]] std::size_t size() const noexcept { return bytes_.size(); }
  [[nodiscard]] bool empty() const noexcept { return bytes_.empty(); }
  [[nodiscard]] const std::byte* data() const noexcept { return bytes_.data(); }
  [[nodiscard]] std::byte* data() noexcept { return bytes_.data(); }
  [[nodiscard]] ByteSpan span() const noexcept { return bytes_; }
  [[nodiscard]] MutableByteSpan mutable_span() noexcept { return bytes_; }

  void reserve(std::size_t n) { bytes_.reserve(n); }
  void clear() noexcept { bytes_.clear(); }

  template <WireInt T>
  void append_be(T v) {
    std::byte tmp[sizeof(T)];
    store_be<T>(tmp, v);
    bytes_.insert(bytes_.end(), tmp, tmp + sizeof(T));
  }

  void append(ByteSpan b) { bytes_.insert(bytes_.end(), b.begin(), b.end()); }
  void append(std::string_view s) { append(as_bytes(s)); }

  // Appends n zero bytes and returns the offset of the first, for patch_be() later.
  std::size_t append_zeros(std::size_t n) {
    std::size_t at = bytes_.size();
    bytes_.resize(at + n);
    return at;
  }

  // Overwrites sizeof(T) bytes at offset; the range must already exist.
  template <WireInt T>
  void patch_be(std::size_t offset, T v) noexcept {
    WEIR_ASSERT(offset <= bytes_.size() && bytes_.size() - offset >= sizeof(T),
                "patch at {} of {} bytes past end {}", offset, sizeof(T), bytes_.size());
    store_be<T>(bytes_.data() + offset, v);
  }

  // Hands over the bytes; the buffer is left empty.
  [[nodiscard]] std::vector<std::byte> release() noexcept { return std::move(bytes_); }

 private:
  std::vector<std::byte> bytes_;
};

}  // namespace weir
