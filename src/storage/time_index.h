// TimeIndex: the sparse timestamp index of one segment, file `<20-digit base offset>.timeindex`.
//
// File format (Kafka's), a sequence of 12-byte entries, all big-endian:
//
//   offset size field
//        0    8 timestamp       int64: the largest record timestamp in the segment up to here
//        8    4 relativeOffset  int32: offset of the batch holding that timestamp (its last
//                               offset) - segment base offset
//
// An entry is added with each offset-index entry, and once more when the segment stops being
// active (roll, close), but only when its timestamp is larger than the last entry's: timestamps
// strictly increase, offsets never decrease. So the last entry holds the segment's largest
// timestamp once the segment is inactive. Only used entries are written (see offset_index.h).
//
// Single-threaded: owned by a Segment.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "base/bytes.h"
#include "storage/errc.h"
#include "storage/tracked_file.h"

namespace weir::storage {

struct TimestampOffsetEntry {
  std::int64_t timestamp = -1;
  std::int64_t offset = 0;  // absolute
  friend bool operator==(const TimestampOffsetEntry&, const TimestampOffsetEntry&) = default;
};

class TimeIndex {
 public:
  static constexpr std::size_t kEntrySize = 12;
  static_assert(kEntrySize == sizeof(std::int64_t) + sizeof(std::int32_t));

  TimeIndex(TrackedFile file, std::int64_t base_offset, std::int64_t max_entries) noexcept;

  // Reads and checks the file (timestamps strictly increasing, offsets non-decreasing and not
  // below the base). A partial trailing entry or a tail of zero entries is cut off.
  // kCorruptMessage for anything else, kStorageError on I/O failure.
  [[nodiscard]] Status<Errc> load();
  [[nodiscard]] bool loaded() const noexcept { return loaded_; }

  // Reads only the last entry, without loading the index (for a segment's largest timestamp).
  [[nodiscard]] Result<std::optional<TimestampOffsetEntry>, Errc> read_last_entry() const;

  // Entries to add for maybe_append() calls, collected and written in one go by append().
  // Keeps the "only if larger" rule against both the file and the pending entries.
  [[nodiscard]] bool would_append(std::int64_t timestamp, std::span<const TimestampOffsetEntry> pending) const noexcept;
  [[nodiscard]] Status<Errc> append(std::span<const TimestampOffsetEntry> entries, bool ignore_full = false);

  // The last entry with timestamp <= target; {-1, base offset} if none.
  [[nodiscard]] TimestampOffsetEntry lookup(std::int64_t target) const noexcept;

  [[nodiscard]] Status<Errc> truncate_to(std::int64_t offset);  // drops entries with offset >= offset
  [[nodiscard]] Status<Errc> reset(std::span<const TimestampOffsetEntry> entries);

  [[nodiscard]] std::size_t entries() const noexcept { return entries_.size(); }
  [[nodiscard]] bool full() const noexcept { return static_cast<std::int64_t>(entries_.size()) >= max_entries_; }
  [[nodiscard]] std::optional<TimestampOffsetEntry> last_entry() const noexcept;
  [[nodiscard]] TrackedFile& file() noexcept { return file_; }
  [[nodiscard]] const TrackedFile& file() const noexcept { return file_; }

  static void encode_entry(std::int64_t timestamp, std::int32_t relative_offset, std::byte* out) noexcept;

 private:
  struct Entry {
    std::int64_t timestamp;
    std::int32_t relative_offset;
  };

  TrackedFile file_;
  std::int64_t base_offset_;
  std::int64_t max_entries_;
  std::vector<Entry> entries_;
  bool loaded_ = false;
};

}  // namespace weir::storage
