// Reading Kafka-written cluster metadata: the RecordBatches of a `__cluster_metadata-0` log
// segment (or of a KRaft Fetch response's records), and KRaft snapshots
// (`<offset>-<epoch>.checkpoint` files, FetchSnapshot chunks put together).
//
//   MetadataImage image;
//   auto stats = replay_metadata_batches(segment_bytes, image);   // control batches skipped
//   auto snap = load_snapshot(checkpoint_bytes);                  // a fresh image
//
// Both formats are plain RecordBatch v2 streams. Data batches hold metadata records (framed as
// in metadata_record.h, null key); control batches hold KRaft control records (LeaderChange,
// SnapshotHeader, SnapshotFooter, KRaftVersion, Voters), which do not change the image. Batches
// may be compressed (Kafka's controllers write uncompressed batches by default).
//
// The bytes are untrusted: bad framing, a CRC mismatch, an undecodable record, an unknown record
// type or a record that contradicts the image is an error value naming the offset; nothing is
// skipped silently. A segment whose last batch is incomplete (a log being written) is not an
// error: the stats say how many bytes were left over.
//
// Thread safety: free functions over values.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "base/bytes.h"
#include "base/result.h"
#include "metadata/errc.h"
#include "metadata/image.h"
#include "metadata/metadata_record.h"

namespace weir::metadata {

// Why a metadata stream could not be read: the error, the offset of the batch or record where
// it was found, and a description for logs (e.g. "record type 99 is unknown").
struct MetadataReadError {
  StoreErrc code = StoreErrc::corrupt_log;
  std::int64_t offset = -1;
  std::string detail;
};

struct MetadataReadStats {
  std::int64_t batches = 0;          // data and control batches read
  std::int64_t control_batches = 0;  // of which control batches
  std::int64_t records = 0;          // metadata records decoded (and replayed)
  std::int64_t next_offset = 0;      // the offset after the last batch read (0 if none)
  std::size_t trailing_bytes = 0;    // bytes after the last complete batch
};

// Called per metadata record, in order, with its offset; a non-empty error stops the walk and
// is returned as it is.
using MetadataRecordFn = std::function<Status<MetadataReadError>(std::int64_t offset, const VersionedRecord& record)>;

// Decodes every metadata record of `bytes` (concatenated batches, offsets increasing) and calls
// fn for each. Control batches are validated (a control record key in each record) and skipped.
[[nodiscard]] Result<MetadataReadStats, MetadataReadError> for_each_metadata_record(ByteSpan bytes,
                                                                                    const MetadataRecordFn& fn);

// for_each_metadata_record that replays each record into `image`. On an error the records
// before the failing one stay applied.
[[nodiscard]] Result<MetadataReadStats, MetadataReadError> replay_metadata_batches(ByteSpan bytes,
                                                                                  MetadataImage& image);

struct LoadedSnapshot {
  MetadataImage image;
  MetadataReadStats stats;
  std::int64_t last_contained_log_timestamp_ms = 0;  // from the SnapshotHeaderRecord
};

// Builds an image from a whole KRaft snapshot: the first batch must be a control batch starting
// with a SnapshotHeaderRecord, the last a control batch holding a SnapshotFooterRecord, nothing
// may trail it; the metadata records between are replayed into a fresh image. A snapshot that
// ends inside a metadata transaction is refused (Kafka's snapshots hold none).
[[nodiscard]] Result<LoadedSnapshot, MetadataReadError> load_snapshot(ByteSpan bytes);

}  // namespace weir::metadata
