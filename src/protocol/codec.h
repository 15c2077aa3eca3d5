// Wire codec runtime used by the generated message code (protocol/gen/*.h).
//
// Reader: a bounds-checked cursor over one message body. Every length or count read from the
// wire is checked against the bytes that remain before anything is allocated; the first failure
// makes the reader sticky-failed and all later reads return zero values, so decoders check
// `ok()` once at the end instead of after every field.
//
// Writer: appends big-endian / varint encodings to a byte vector. Record bytes held in files
// (a records field's FileBytes) are written as their length plus a Splice when the writer has a
// splice list, and read into the vector otherwise.
//
// Encodings (Kafka protocol):
//   classic string   int16 length (-1 = null) + bytes      compact string   uvarint(len+1), 0 = null
//   classic bytes    int32 length (-1 = null) + bytes      compact bytes    uvarint(len+1), 0 = null
//   classic array    int32 count  (-1 = null) + elements   compact array    uvarint(n+1),   0 = null
//   nullable struct  int8 marker (-1 = null, 1 = present) + struct
//   tagged fields    uvarint count, then per field: uvarint tag, uvarint size, value bytes
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/file_bytes.h"
#include "base/uuid.h"

namespace weir::protocol {

using Bytes = std::vector<std::uint8_t>;
using Uuid = weir::Uuid;

// A tagged field this build does not know, kept so re-encoding reproduces it.
struct UnknownTaggedField {
  std::uint32_t tag = 0;
  Bytes data;
  bool operator==(const UnknownTaggedField&) const = default;
};

class Reader {
 public:
  explicit Reader(std::span<const std::uint8_t> data) noexcept
      : p_(data.data()), end_(data.data() + data.size()) {}

  [[nodiscard]] bool ok() const noexcept { return ok_; }
  [[nodiscard]] std::size_t remaining() const noexcept { return static_cast<std::size_t>(end_ - p_); }
  [[nodiscard]] const std::uint8_t* position() const noexcept { return p_; }
  void fail() noexcept {
    ok_ = false;
    p_ = end_;
  }

  std::int8_t i8() noexcept { return static_cast<std::int8_t>(fixed<std::uint8_t>()); }
  std::int16_t i16() noexcept { return static_cast<std::int16_t>(fixed<std::uint16_t>()); }
  std::int32_t i32() noexcept { return static_cast<std::int32_t>(fixed<std::uint32_t>()); }
  std::int64_t i64() noexcept { return static_cast<std::int64_t>(fixed<std::uint64_t>()); }
  std::uint16_t u16() noexcept { return fixed<std::uint16_t>(); }
  std::uint32_t u32() noexcept { return fixed<std::uint32_t>(); }
  bool boolean() noexcept { return fixed<std::uint8_t>() != 0; }
  double f64() noexcept {
    std::uint64_t bits = fixed<std::uint64_t>();
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
  }
  Uuid uuid() noexcept {
    const std::uint64_t msb = fixed<std::uint64_t>();
    const std::uint64_t lsb = fixed<std::uint64_t>();
    return Uuid(msb, lsb);
  }

  // Unsigned varint, at most 5 bytes for 32 bits.
  std::uint32_t uvarint() noexcept {
    std::uint32_t value = 0;
    for (int shift = 0; shift < 35; shift += 7) {
      if (p_ == end_) {
        fail();
        return 0;
      }
      std::uint8_t b = *p_++;
      if (shift == 28 && (b & 0xf0) != 0) {
        fail();
        return 0;
      }
      value |= static_cast<std::uint32_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return value;
    }
    fail();
    return 0;
  }

  // Length of a string/bytes/array: -1 for null. Checked against the remaining bytes times
  // `min_elem_size` so no caller ever allocates more than the frame could hold.
  std::int64_t length(bool compact, int width, std::size_t min_elem_size) noexcept {
    std::int64_t n;
    if (compact) {
      n = static_cast<std::int64_t>(uvarint()) - 1;
    } else {
      n = width == 2 ? i16() : i32();
    }
    if (!ok_) return -1;
    if (n < -1) {
      fail();
      return -1;
    }
    if (n > 0 && static_cast<std::uint64_t>(n) * min_elem_size > remaining()) {
      fail();
      return -1;
    }
    return n;
  }

  // Returns false (and the reader is failed) if `n` bytes are not available.
  bool take_into(void* dst, std::size_t n) noexcept {
    if (n > remaining()) {
      fail();
      return false;
    }
    if (n) std::memcpy(dst, p_, n);
    p_ += n;
    return true;
  }

  std::span<const std::uint8_t> take(std::size_t n) noexcept {
    if (n > remaining()) {
      fail();
      return {};
    }
    std::span<const std::uint8_t> s(p_, n);
    p_ += n;
    return s;
  }

  // A string; null is reported through `is_null`.
  std::string string(bool compact, bool& is_null) {
    std::int64_t n = length(compact, 2, 1);
    is_null = n < 0;
    if (n <= 0) return {};
    auto s = take(static_cast<std::size_t>(n));
    return std::string(reinterpret_cast<const char*>(s.data()), s.size());
  }

  Bytes bytes(bool compact, bool& is_null) {
    std::int64_t n = length(compact, 4, 1);
    is_null = n < 0;
    if (n <= 0) return {};
    auto s = take(static_cast<std::size_t>(n));
    return Bytes(s.begin(), s.end());
  }

  // Reads a tagged-field section; known tags are handed to `on_known(tag, sub_reader)` which
  // returns false for tags it does not know, which are then kept in `unknown`.
  template <class OnKnown>
  void tagged_fields(std::vector<UnknownTaggedField>& unknown, OnKnown&& on_known) {
    std::uint32_t count = uvarint();
    if (!ok_ || count > remaining()) {
      fail();
      return;
    }
    std::int64_t last_tag = -1;
    for (std::uint32_t i = 0; i < count && ok_; ++i) {
      std::uint32_t tag = uvarint();
      std::uint32_t size = uvarint();
      if (!ok_ || static_cast<std::int64_t>(tag) <= last_tag) {
        fail();
        return;
      }
      last_tag = tag;
      auto body = take(size);
      if (!ok_) return;
      Reader sub(body);
      if (on_known(tag, sub)) {
        if (!sub.ok() || sub.remaining() != 0) {
          fail();
          return;
        }
      } else {
        unknown.push_back(UnknownTaggedField{tag, Bytes(body.begin(), body.end())});
      }
    }
  }

 private:
  template <class U>
  U fixed() noexcept {
    if (remaining() < sizeof(U)) {
      fail();
      return 0;
    }
    U v = 0;
    for (std::size_t i = 0; i < sizeof(U); ++i) v = static_cast<U>((v << 8) | p_[i]);
    p_ += sizeof(U);
    return v;
  }

  const std::uint8_t* p_;
  const std::uint8_t* end_;
  bool ok_ = true;
};

class Writer {
 public:
  explicit Writer(Bytes& out) noexcept : out_(out) {}
  Writer(Bytes& out, std::vector<Splice>* splices) noexcept : out_(out), splices_(splices) {}

  void i8(std::int8_t v) { out_.push_back(static_cast<std::uint8_t>(v)); }
  void i16(std::int16_t v) { fixed(static_cast<std::uint16_t>(v)); }
  void i32(std::int32_t v) { fixed(static_cast<std::uint32_t>(v)); }
  void i64(std::int64_t v) { fixed(static_cast<std::uint64_t>(v)); }
  void u16(std::uint16_t v) { fixed(v); }
  void u32(std::uint32_t v) { fixed(v); }
  void boolean(bool v) { out_.push_back(v ? 1 : 0); }
  void f64(double d) {
    std::uint64_t bits;
    std::memcpy(&bits, &d, sizeof bits);
    fixed(bits);
  }
  void uuid(const Uuid& u) {
    fixed(u.msb());
    fixed(u.lsb());
  }
  void uvarint(std::uint32_t v) {
    while (v >= 0x80) {
      out_.push_back(static_cast<std::uint8_t>(v | 0x80));
      v >>= 7;
    }
    out_.push_back(static_cast<std::uint8_t>(v));
  }
  // Length prefix; n == -1 writes null.
  void length(bool compact, int width, std::int64_t n) {
    if (compact) {
      uvarint(static_cast<std::uint32_t>(n + 1));
    } else if (width == 2) {
      i16(static_cast<std::int16_t>(n));
    } else {
      i32(static_cast<std::int32_t>(n));
    }
  }
  void string(bool compact, const std::string& s) {
    length(compact, 2, static_cast<std::int64_t>(s.size()));
    raw(s.data(), s.size());
  }
  void null_string(bool compact) { length(compact, 2, -1); }
  void bytes(bool compact, std::span<const std::uint8_t> b) {
    length(compact, 4, static_cast<std::int64_t>(b.size()));
    raw(b.data(), b.size());
  }
  void null_bytes(bool compact) { length(compact, 4, -1); }
  // A records field whose bytes are in files. Without a splice list they are read here; a read
  // error throws (the connection is then closed, as the response cannot be completed).
  void file_bytes(bool compact, const std::shared_ptr<const FileBytes>& b) {
    length(compact, 4, b->size);
    if (splices_ != nullptr) {
      splices_->push_back(Splice{out_.size(), b});
    } else if (!b->read_into(out_)) {
      throw std::runtime_error("record data could not be read from its segment file");
    }
  }
  void raw(const void* p, std::size_t n) {
    const auto* b = static_cast<const std::uint8_t*>(p);
    out_.insert(out_.end(), b, b + n);
  }
  [[nodiscard]] std::size_t size() const noexcept { return out_.size(); }
  Bytes& buffer() noexcept { return out_; }

 private:
  template <class U>
  void fixed(U v) {
    std::uint8_t b[sizeof(U)];
    for (std::size_t i = 0; i < sizeof(U); ++i) b[i] = static_cast<std::uint8_t>(v >> (8 * (sizeof(U) - 1 - i)));
    out_.insert(out_.end(), b, b + sizeof(U));
  }

  Bytes& out_;
  std::vector<Splice>* splices_ = nullptr;
};

// Size of an unsigned varint.
constexpr std::size_t uvarint_size(std::uint32_t v) noexcept {
  std::size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

// Helper for encoding one tagged field: the value is encoded into a scratch buffer to learn its size.
struct TaggedOut {
  std::uint32_t tag;
  Bytes data;
};

}  // namespace weir::protocol
