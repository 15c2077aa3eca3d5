#include "base/varint.h"

#include "base/assert.h"

namespace weir {

namespace {

// Decodes an unsigned varint of at most max_bytes into a U. In the last allowed byte only the
// bits that still fit in U may be set (final_mask).
template <class U, std::size_t max_bytes>
Result<Decoded<U>, VarintError> decode_unsigned(ByteSpan in) noexcept {
  constexpr unsigned kFinalShift = 7 * (max_bytes - 1);
  constexpr unsigned kFinalBits = sizeof(U) * 8 - kFinalShift;
  constexpr unsigned kFinalMask = (1u << kFinalBits) - 1;
  static_assert(kFinalBits > 0 && kFinalBits <= 7);

  U value = 0;
  const std::size_t limit = in.size() < max_bytes ? in.size() : max_bytes;
  for (std::size_t i = 0; i < limit; ++i) {
    const auto b = static_cast<unsigned>(in[i]);
    if (i == max_bytes - 1) {
      if ((b & ~kFinalMask) != 0) return unexpected(VarintError::overlong);
      value |= static_cast<U>(b) << kFinalShift;
      return Decoded<U>{value, i + 1};
    }
    value |= static_cast<U>(b & 0x7f) << (7 * i);
    if ((b & 0x80) == 0) return Decoded<U>{value, i + 1};
  }
  return unexpected(VarintError::truncated);
}

template <class U>
std::size_t encode_unsigned(U v, std::byte* out) noexcept {
  std::size_t n = 0;
  while (v >= 0x80) {
    out[n++] = static_cast<std::byte>(static_cast<std::uint8_t>(v) | 0x80);
    v >>= 7;
  }
  out[n++] = static_cast<std::byte>(v);
  return n;
}

template <class T, class Decode>
Result<T, VarintError> read_with(ByteReader& r, Decode decode) noexcept {
  auto d = decode(r.rest());
  if (!d) return unexpected(d.error());
  const bool skipped = r.skip(d->size);
  WEIR_ASSERT(skipped, "decoded varint size {} beyond {} remaining", d->size, r.remaining());
  return d->value;
}

}  // namespace

std::string_view to_string(VarintError e) noexcept {
  switch (e) {
    case VarintError::truncated:
      return "truncated varint";
    case VarintError::overlong:
      return "overlong varint";
  }
  return "unknown varint error";
}

std::size_t unsigned_varint_size(std::uint32_t v) noexcept {
  std::size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

std::size_t unsigned_varlong_size(std::uint64_t v) noexcept {
  std::size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

std::size_t encode_unsigned_varint(std::uint32_t v, std::byte* out) noexcept {
  return encode_unsigned(v, out);
}

std::size_t encode_unsigned_varlong(std::uint64_t v, std::byte* out) noexcept {
  return encode_unsigned(v, out);
}

void append_unsigned_varint(ByteBuffer& buf, std::uint32_t v) {
  std::byte tmp[kMaxVarintBytes];
  buf.append(ByteSpan(tmp, encode_unsigned_varint(v, tmp)));
}

void append_unsigned_varlong(ByteBuffer& buf, std::uint64_t v) {
  std::byte tmp[kMaxVarlongBytes];
  buf.append(ByteSpan(tmp, encode_unsigned_varlong(v, tmp)));
}

void append_varint(ByteBuffer& buf, std::int32_t v) {
  append_unsigned_varint(buf, zigzag_encode(v));
}

void append_varlong(ByteBuffer& buf, std::int64_t v) {
  append_unsigned_varlong(buf, zigzag_encode(v));
}

Result<Decoded<std::uint32_t>, VarintError> decode_unsigned_varint(ByteSpan in) noexcept {
  return decode_unsigned<std::uint32_t, kMaxVarintBytes>(in);
}

Result<Decoded<std::uint64_t>, VarintError> decode_unsigned_varlong(ByteSpan in) noexcept {
  return decode_unsigned<std::uint64_t, kMaxVarlongBytes>(in);
}

Result<Decoded<std::int32_t>, VarintError> decode_varint(ByteSpan in) noexcept {
  auto d = decode_unsigned_varint(in);
  if (!d) return unexpected(d.error());
  return Decoded<std::int32_t>{zigzag_decode(d->value), d->size};
}

Result<Decoded<std::int64_t>, VarintError> decode_varlong(ByteSpan in) noexcept {
  auto d = decode_unsigned_varlong(in);
  if (!d) return unexpected(d.error());
  return Decoded<std::int64_t>{zigzag_decode(d->value), d->size};
}

Result<std::uint32_t, VarintError> read_unsigned_varint(ByteReader& r) noexcept {
  return read_with<std::uint32_t>(r, decode_unsigned_varint);
}

Result<std::uint64_t, VarintError> read_unsigned_varlong(ByteReader& r) noexcept {
  return read_with<std::uint64_t>(r, decode_unsigned_varlong);
}

Result<std::int32_t, VarintError> read_varint(ByteReader& r) noexcept {
  return read_with<std::int32_t>(r, decode_varint);
}

Result<std::int64_t, VarintError> read_varlong(ByteReader& r) noexcept {
  return read_with<std::int64_t>(r, decode_varlong);
}

}  // namespace weir
