#include "storage/offset_map.h"

#include "base/assert.h"

namespace weir::storage {

OffsetMap::OffsetMap(std::int64_t max_bytes) : max_bytes_(max_bytes) {
  WEIR_ASSERT(max_bytes > kEntryOverheadBytes, "an offset map of {} bytes holds nothing", max_bytes);
}

bool OffsetMap::put(ByteSpan key, std::int64_t offset) {
  const std::string_view k = as_string_view(key);
  if (auto it = entries_.find(k); it != entries_.end()) {
    it->second = offset;
    return true;
  }
  const std::int64_t cost = kEntryOverheadBytes + static_cast<std::int64_t>(k.size());
  if (bytes_used_ + cost > max_bytes_) return false;
  entries_.emplace(std::string(k), offset);
  bytes_used_ += cost;
  return true;
}

std::int64_t OffsetMap::get(ByteSpan key) const {
  auto it = entries_.find(as_string_view(key));
  return it == entries_.end() ? -1 : it->second;
}

double OffsetMap::utilization() const noexcept {
  return static_cast<double>(bytes_used_) / static_cast<double>(max_bytes_);
}

}  // namespace weir::storage
