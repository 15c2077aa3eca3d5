// Helpers shared by the record tests.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <ostream>
#include <string_view>
#include <vector>

#include "base/bytes.h"
#include "protocol/record/errc.h"

namespace weir::record {

// Lets GoogleTest print error codes by name.
inline std::ostream& operator<<(std::ostream& os, Errc e) { return os << to_string(e); }

}  // namespace weir::record

namespace weir::record::testing {

inline std::vector<std::byte> bytes(std::initializer_list<int> values) {
  std::vector<std::byte> out;
  out.reserve(values.size());
  for (int v : values) out.push_back(static_cast<std::byte>(v));
  return out;
}

inline void append(std::vector<std::byte>& out, const std::vector<std::byte>& more) {
  out.insert(out.end(), more.begin(), more.end());
}

inline void append(std::vector<std::byte>& out, std::string_view text) {
  const ByteSpan b = as_bytes(text);
  out.insert(out.end(), b.begin(), b.end());
}

inline std::string_view text(ByteSpan b) { return as_string_view(b); }

}  // namespace weir::record::testing
