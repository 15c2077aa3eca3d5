// OffsetIndex: the sparse offset index of one segment, file `<20-digit base offset>.index`.
//
// File format (Kafka's), a sequence of 8-byte entries, all big-endian:
//
//   offset size field
//        0    4 relativeOffset  int32: offset - segment base offset
//        4    4 position        int32: byte position in the .log file
//
// An entry (o, p) says that the batch starting at byte p of the log has last offset o. Entries
// are added while appending, one every index.interval.bytes of log, so both columns strictly
// increase. Only whole entries are written; the file holds exactly the used entries (Kafka
// preallocates segment.index.bytes and trims on roll and close; a Kafka file that was not
// trimmed ends in zero entries, which load() treats as the end).
//
// The entries are kept in memory once loaded (8 bytes each). Single-threaded: owned by a Segment.
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

struct OffsetPosition {
  std::int64_t offset = 0;    // absolute
  std::int64_t position = 0;  // in the log file
  friend bool operator==(const OffsetPosition&, const OffsetPosition&) = default;
};

class OffsetIndex {
 public:
  static constexpr std::size_t kEntrySize = 8;
  static_assert(kEntrySize == sizeof(std::int32_t) + sizeof(std::int32_t));

  // max_entries: segment.index.bytes / kEntrySize; at least 1.
  OffsetIndex(TrackedFile file, std::int64_t base_offset, std::int64_t max_entries) noexcept;

  // Reads and checks the file: every entry past base offset, both columns strictly increasing,
  // positions below log_size. A partial trailing entry or a tail of zero entries is cut off
  // (the file is truncated to match). kCorruptMessage for anything else (rebuild the index),
  // kStorageError on I/O failure.
  [[nodiscard]] Status<Errc> load(std::int64_t log_size);
  [[nodiscard]] bool loaded() const noexcept { return loaded_; }

  // Appends entries (each after the last) and writes them. On failure nothing changes in memory
  // and the file is cut back. Entries beyond max_entries are dropped (the index is sparse).
  [[nodiscard]] Status<Errc> append(std::span<const OffsetPosition> entries);

  // The last entry with offset <= target; {base offset, 0} if none.
  [[nodiscard]] OffsetPosition lookup(std::int64_t target) const noexcept;

  // For a read that may end at byte end_limit and must not include a batch starting at or above
  // below_offset: the last entry whose batch lies wholly within both, known from the index alone.
  // The batch at entry i ends where the next batch starts, at or before entry i+1's position (or
  // at log_end for the last entry), and its last offset is the entry's. nullopt if none.
  [[nodiscard]] std::optional<OffsetPosition> last_whole_within(std::int64_t end_limit, std::int64_t below_offset,
                                                                std::int64_t log_end) const noexcept;
  // Removes the entries with offset >= offset.
  [[nodiscard]] Status<Errc> truncate_to(std::int64_t offset);
  // Replaces the whole index (after a rebuild).
  [[nodiscard]] Status<Errc> reset(std::span<const OffsetPosition> entries);

  [[nodiscard]] std::size_t entries() const noexcept { return entries_.size(); }
  [[nodiscard]] bool full() const noexcept { return static_cast<std::int64_t>(entries_.size()) >= max_entries_; }
  [[nodiscard]] std::int64_t max_entries() const noexcept { return max_entries_; }
  [[nodiscard]] std::optional<OffsetPosition> last_entry() const noexcept;
  [[nodiscard]] std::int64_t base_offset() const noexcept { return base_offset_; }
  [[nodiscard]] TrackedFile& file() noexcept { return file_; }
  [[nodiscard]] const TrackedFile& file() const noexcept { return file_; }

  // One entry's bytes.
  static void encode_entry(std::int32_t relative_offset, std::int32_t position, std::byte* out) noexcept;

 private:
  struct Entry {
    std::int32_t relative_offset;
    std::int32_t position;
  };

  TrackedFile file_;
  std::int64_t base_offset_;
  std::int64_t max_entries_;
  std::vector<Entry> entries_;
  bool loaded_ = false;
};

}  // namespace weir::storage
