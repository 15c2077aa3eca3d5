// OffsetMap: the log cleaner's key -> latest offset map over the dirty section of a log (Kafka's
// SkimpyOffsetMap), with a memory limit (log.cleaner.dedupe.buffer.size).
//
// Kafka stores a 16-byte MD5 of each key; this map stores the keys themselves, so two keys never
// collide (a collision in Kafka's map would drop a live record). The cost is memory: each entry is
// accounted as kEntryOverheadBytes plus the key's bytes, and put() refuses a new key once the
// total would pass the limit (the cleaner then stops building and cleans up to what it mapped).
// latest_offset() is the last offset the map covers: records after it are always retained.
//
// Single-threaded: owned by one clean.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "base/bytes.h"

namespace weir::storage {

class OffsetMap {
 public:
  // What one entry costs besides its key bytes: a hash node with a std::string and an offset,
  // and its bucket.
  static constexpr std::int64_t kEntryOverheadBytes = 64;

  explicit OffsetMap(std::int64_t max_bytes);

  // Records offset as the latest for key (an existing key is updated whatever its offset).
  // False, with nothing changed, if a new key would pass the memory limit.
  [[nodiscard]] bool put(ByteSpan key, std::int64_t offset);
  // The offset recorded for key; -1 if none.
  [[nodiscard]] std::int64_t get(ByteSpan key) const;

  [[nodiscard]] std::int64_t latest_offset() const noexcept { return latest_offset_; }
  void update_latest_offset(std::int64_t offset) noexcept {
    if (offset > latest_offset_) latest_offset_ = offset;
  }

  [[nodiscard]] std::size_t size() const noexcept { return entries_.size(); }
  [[nodiscard]] std::int64_t bytes_used() const noexcept { return bytes_used_; }
  [[nodiscard]] std::int64_t max_bytes() const noexcept { return max_bytes_; }
  // bytes_used() / max_bytes(), Kafka's buffer utilisation.
  [[nodiscard]] double utilization() const noexcept;

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };

  std::int64_t max_bytes_;
  std::int64_t bytes_used_ = 0;
  std::int64_t latest_offset_ = -1;
  std::unordered_map<std::string, std::int64_t, Hash, std::equal_to<>> entries_;
};

}  // namespace weir::storage
