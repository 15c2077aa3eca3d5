// LogSummary: what a clean shutdown knows about every partition log of a log directory, written
// so that the next start can build the logs without reading their directories and files.
//
// A LogManager writes it to `<log dir>/weir-log-summary` while closing cleanly, after every log
// is closed and the clean-shutdown marker written, and removes it on open (with the marker). Open
// uses it only when that marker is there (the same file: its identity is recorded, so a marker
// another broker wrote since does not count), and for a partition only when the partition directory's
// identity (device, inode, change time: file.h) is the one recorded: a directory that was
// replaced, or had a file added, removed or renamed since, is loaded from its files as before.
// (Changes inside files leave a directory's identity alone; as with Kafka's clean-shutdown
// marker, which skips recovery, the files are trusted not to have been edited while the broker
// was down.) Kafka does not know the file and ignores it, as weir ignores Kafka's files it does
// not use.
//
// Format (big-endian), all integers signed unless said:
//   magic        8 bytes  "WEIRLSUM"
//   version      int16    1
//   marker       uint64 device, uint64 inode, int64 change time (ns) of the clean-shutdown marker
//   count        int32    partitions
//   partitions, each:
//     name       int16 length, bytes          the directory's name ("<topic>-<partition>")
//     identity   uint64 device, uint64 inode, int64 change time (ns)
//     topic id   int8 present, 16 bytes if present
//     epochs     int32 count, each int32 epoch, int64 start offset
//     segments   int32 count (>= 1), each:
//       base offset, log bytes, offset index bytes, time index bytes     int64 each
//       txn index bytes                                                   int64 (-1: no file)
//       next offset, max timestamp, its offset, first batch timestamp     int64 each (-2: unknown)
//       bytes since the last index entry                                  int64 (-1: unknown)
//     producers  int8 present; if present: int32 count, each int64 snapshot file offset;
//                int64 offset of the snapshot carried (-1: none), int32 length, its bytes
//   crc          uint32   CRC32C of everything before it
// A file that does not decode (truncated, wrong magic or version, bad CRC) is ignored whole.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "base/uuid.h"
#include "storage/file.h"
#include "storage/leader_epoch_cache.h"

namespace weir::storage {

inline constexpr std::string_view kLogSummaryFile = "weir-log-summary";

// One segment as it was when its log closed. Values the log did not know then are kUnknown.
struct SegmentSummary {
  static constexpr std::int64_t kUnknown = -2;
  std::int64_t base_offset = 0;
  std::int64_t log_bytes = 0;
  std::int64_t offset_index_bytes = 0;
  std::int64_t time_index_bytes = 0;
  std::int64_t txn_index_bytes = -1;  // -1: the segment has no .txnindex
  std::int64_t next_offset = kUnknown;
  std::int64_t max_timestamp = kUnknown;  // with max_timestamp_offset: the largest batch timestamp
  std::int64_t max_timestamp_offset = kUnknown;
  std::int64_t first_batch_timestamp = kUnknown;  // the first batch's max timestamp
  std::int64_t bytes_since_index_entry = -1;      // known for the active segment
  friend bool operator==(const SegmentSummary&, const SegmentSummary&) = default;
};

// The producer state's files as the transactions layer left them at shutdown: the offsets of
// its snapshot files, and the bytes of the one at the log end (Kafka's snapshot format,
// producer_snapshot.h), so the next start reads no file for it.
struct CarriedProducerState {
  std::vector<std::int64_t> snapshot_offsets;
  std::int64_t carried_offset = -1;  // -1: no snapshot carried
  std::vector<std::byte> carried_bytes;
  friend bool operator==(const CarriedProducerState&, const CarriedProducerState&) = default;
};

struct PartitionSummary {
  std::string dir_name;
  FileIdentity dir_identity;
  std::optional<Uuid> topic_id;
  std::vector<EpochEntry> epochs;
  std::vector<SegmentSummary> segments;  // by base offset; the last is the active segment
  std::optional<CarriedProducerState> producers;
  friend bool operator==(const PartitionSummary&, const PartitionSummary&) = default;
};

struct LogSummary {
  // The clean-shutdown marker the summary was written after: a marker written since (another
  // broker's stop, e.g. Kafka's, which knows nothing of the summary) has another identity.
  FileIdentity marker;
  std::vector<PartitionSummary> partitions;
  friend bool operator==(const LogSummary&, const LogSummary&) = default;
};

[[nodiscard]] std::vector<std::byte> encode_log_summary(const LogSummary& summary);
// nullopt if the bytes are not a whole, intact summary of this version.
[[nodiscard]] std::optional<LogSummary> decode_log_summary(ByteSpan bytes);

}  // namespace weir::storage
