// Producer state snapshot files, in Apache Kafka's format, so Kafka's and weir's partition
// directories are interchangeable: `<20-digit offset>.snapshot` in the partition directory holds
// the producer state as of that offset (every batch below it applied, none at or above it).
//
// Layout (big-endian):
//   version   int16   1
//   crc       uint32  CRC32C of everything after this field
//   count     int32   number of entries
//   entries, each 46 bytes:
//     producer_id int64, epoch int16, last_sequence int32, last_offset int64,
//     offset_delta int32 (last_offset - first offset of the last batch),
//     timestamp int64 (of the producer's last batch or marker), coordinator_epoch int32,
//     current_txn_first_offset int64 (-1: no open transaction)
// An entry keeps only the producer's last batch (last_offset -1: none, e.g. after a new epoch
// began with a marker). Kafka writes the entries in hash order; weir by producer id.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"
#include "storage/producer_state.h"

namespace weir::storage {

inline constexpr std::string_view kSnapshotSuffix = ".snapshot";
inline constexpr std::int16_t kSnapshotVersion = 1;
inline constexpr std::size_t kSnapshotHeaderSize = 2 + 4 + 4;
inline constexpr std::size_t kSnapshotEntrySize = 8 + 2 + 4 + 8 + 4 + 8 + 4 + 8;

// "00000000000000004711.snapshot", and back (nullopt for any other name).
[[nodiscard]] std::string snapshot_file_name(std::int64_t offset);
[[nodiscard]] std::optional<std::int64_t> parse_snapshot_file_name(std::string_view name);

enum class SnapshotError : std::uint8_t {
  kTruncated,  // shorter than its header or its entries
  kVersion,    // not version 1
  kCrc,        // the CRC does not match
  kInvalid,    // a negative entry count
};
[[nodiscard]] std::string_view to_string(SnapshotError e) noexcept;

using SnapshotEntries = std::vector<std::pair<std::int64_t, ProducerEntry>>;

[[nodiscard]] std::vector<std::byte> encode_snapshot(const ProducerStateTable& table);
// The entries (producer id, entry with at most its last batch) of a snapshot file's bytes.
[[nodiscard]] Result<SnapshotEntries, SnapshotError> decode_snapshot(ByteSpan bytes);

}  // namespace weir::storage
