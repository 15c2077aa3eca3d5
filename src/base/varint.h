// Variable-length integers as used by Kafka.
//
// Unsigned varint: 7 bits per byte, least significant group first, high bit set on every byte but
// the last (protobuf's base-128). Flexible protocol versions use it for compact lengths and tagged
// fields. A 32-bit value takes at most 5 bytes, a 64-bit value at most 10.
//
// Signed varint / varlong: the value is first zigzag-mapped (0,-1,1,-2,... -> 0,1,2,3,...) so that
// small negative numbers stay short, then written as an unsigned varint. Record fields (lengths,
// deltas) use these.
//
// Decoding untrusted bytes returns an error instead of reading past the end (truncated) or
// accepting an encoding longer than the type allows (overlong: more than 5 bytes for 32 bits,
// more than 10 for 64 bits, or a final byte carrying bits the type cannot hold). Encodings with
// redundant zero groups within those limits are accepted, as Kafka accepts them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/bytes.h"
#include "base/result.h"

namespace weir {

inline constexpr std::size_t kMaxVarintBytes = 5;
inline constexpr std::size_t kMaxVarlongBytes = 10;

enum class VarintError : std::uint8_t {
  truncated,  // the input ended before the last byte of the varint
  overlong,   // the encoding is longer than the type allows or overflows it
};

std::string_view to_string(VarintError e) noexcept;

// A decoded value and how many input bytes it took.
template <class T>
struct Decoded {
  T value;
  std::size_t size;
};

[[nodiscard]] constexpr std::uint32_t zigzag_encode(std::int32_t v) noexcept {
  return (static_cast<std::uint32_t>(v) << 1) ^ static_cast<std::uint32_t>(v >> 31);
}
[[nodiscard]] constexpr std::uint64_t zigzag_encode(std::int64_t v) noexcept {
  return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
}
[[nodiscard]] constexpr std::int32_t zigzag_decode(std::uint32_t v) noexcept {
  return static_cast<std::int32_t>((v >> 1) ^ (~(v & 1) + 1));
}
[[nodiscard]] constexpr std::int64_t zigzag_decode(std::uint64_t v) noexcept {
  return static_cast<std::int64_t>((v >> 1) ^ (~(v & 1) + 1));
}

// Encoded sizes in bytes.
[[nodiscard]] std::size_t unsigned_varint_size(std::uint32_t v) noexcept;
[[nodiscard]] std::size_t unsigned_varlong_size(std::uint64_t v) noexcept;
[[nodiscard]] inline std::size_t varint_size(std::int32_t v) noexcept {
  return unsigned_varint_size(zigzag_encode(v));
}
[[nodiscard]] inline std::size_t varlong_size(std::int64_t v) noexcept {
  return unsigned_varlong_size(zigzag_encode(v));
}

// Encoders write to out, which must have room for kMaxVarintBytes / kMaxVarlongBytes, and return
// the number of bytes written.
std::size_t encode_unsigned_varint(std::uint32_t v, std::byte* out) noexcept;
std::size_t encode_unsigned_varlong(std::uint64_t v, std::byte* out) noexcept;
inline std::size_t encode_varint(std::int32_t v, std::byte* out) noexcept {
  return encode_unsigned_varint(zigzag_encode(v), out);
}
inline std::size_t encode_varlong(std::int64_t v, std::byte* out) noexcept {
  return encode_unsigned_varlong(zigzag_encode(v), out);
}

// Appending encoders.
void append_unsigned_varint(ByteBuffer& buf, std::uint32_t v);
void append_unsigned_varlong(ByteBuffer& buf, std::uint64_t v);
void append_varint(ByteBuffer& buf, std::int32_t v);
void append_varlong(ByteBuffer& buf, std::int64_t v);

// Decoders read from the start of in.
[[nodiscard]] Result<Decoded<std::uint32_t>, VarintError> decode_unsigned_varint(
    ByteSpan in) noexcept;
[[nodiscard]] Result<Decoded<std::uint64_t>, VarintError> decode_unsigned_varlong(
    ByteSpan in) noexcept;
[[nodiscard]] Result<Decoded<std::int32_t>, VarintError> decode_varint(ByteSpan in) noexcept;
[[nodiscard]] Result<Decoded<std::int64_t>, VarintError> decode_varlong(ByteSpan in) noexcept;

// Decoders that advance a ByteReader past the value on success (and leave it alone on error).
[[nodiscard]] Result<std::uint32_t, VarintError> read_unsigned_varint(ByteReader& r) noexcept;
[[nodiscard]] Result<std::uint64_t, VarintError> read_unsigned_varlong(ByteReader& r) noexcept;
[[nodiscard]] Result<std::int32_t, VarintError> read_varint(ByteReader& r) noexcept;
[[nodiscard]] Result<std::int64_t, VarintError> read_varlong(ByteReader& r) noexcept;

}  // namespace weir
