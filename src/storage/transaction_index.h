// TransactionIndex: the aborted transactions whose abort marker is in one segment, file
// `<20-digit base offset>.txnindex`. Filled by the transactions layer; fetches at
// read_committed collect the entries that overlap what they return.
//
// File format (Kafka's), a sequence of 34-byte entries, all big-endian:
//
//   offset size field
//        0    2 version           int16: 0
//        2    8 producerId        int64
//       10    8 firstOffset       int64: first offset of the aborted transaction
//       18    8 lastOffset        int64: offset of its abort marker
//       26    8 lastStableOffset  int64: the partition's last stable offset once it completed
//
// Entries are in lastOffset order. The file is created on the first append (segments of
// non-transactional topics have none, as in Kafka). Entries are read lazily and cached; they are
// few. Single-threaded: owned by a Segment.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "storage/errc.h"
#include "storage/file.h"
#include "storage/tracked_file.h"

namespace weir::storage {

struct AbortedTxn {
  std::int64_t producer_id = -1;
  std::int64_t first_offset = 0;
  std::int64_t last_offset = 0;
  std::int64_t last_stable_offset = 0;
  friend bool operator==(const AbortedTxn&, const AbortedTxn&) = default;
};

struct AbortedTxnSearch {
  std::vector<AbortedTxn> aborted;
  bool complete = false;  // an entry's last stable offset reached the upper bound: look no further
};

class TransactionIndex {
 public:
  static constexpr std::size_t kEntrySize = 34;
  static_assert(kEntrySize == 2 + 8 + 8 + 8 + 8);
  static constexpr std::int16_t kVersion = 0;

  TransactionIndex(FileSystem& fs, const std::filesystem::path& path);
  TransactionIndex(FileSystem& fs, std::string path) noexcept;

  // Opens the file if it exists (a missing file is an empty index).
  [[nodiscard]] Status<Errc> open_existing();
  // The file, known to exist with `size` bytes (FileSystem::open_known).
  [[nodiscard]] Status<Errc> open_known(std::int64_t size);

  // Appends an entry; its last offset must be larger than the previous entry's (else
  // kInvalidRecord). Creates the file on first use.
  [[nodiscard]] Status<Errc> append(const AbortedTxn& txn);

  // Entries overlapping [fetch_offset, upper_bound_offset): lastOffset >= fetch_offset and
  // firstOffset < upper_bound_offset.
  [[nodiscard]] Result<AbortedTxnSearch, Errc> collect(std::int64_t fetch_offset,
                                                       std::int64_t upper_bound_offset) const;
  [[nodiscard]] Result<std::vector<AbortedTxn>, Errc> all() const;

  // Drops entries with lastOffset >= offset.
  [[nodiscard]] Status<Errc> truncate_to(std::int64_t offset);
  // Drops everything (after a segment rebuild the transactions layer re-adds them).
  [[nodiscard]] Status<Errc> clear();

  [[nodiscard]] bool exists() const noexcept { return static_cast<bool>(file_); }
  [[nodiscard]] TrackedFile& file() noexcept { return file_; }
  [[nodiscard]] const TrackedFile& file() const noexcept { return file_; }
  [[nodiscard]] std::filesystem::path path() const { return path_; }
  void set_path(const std::filesystem::path& path) { path_ = path.native(); }

  static void encode_entry(const AbortedTxn& txn, std::byte* out) noexcept;

 private:
  [[nodiscard]] Status<Errc> load() const;

  FileSystem& fs_;
  // A string, not a std::filesystem::path: a path keeps each of its components as a path of its
  // own (hundreds of bytes a partition, at 100,000 partitions tens of MiB).
  std::string path_;
  TrackedFile file_;
  mutable std::optional<std::vector<AbortedTxn>> entries_;
};

}  // namespace weir::storage
