// Control records: the records of control batches (isControl attribute set). Transaction markers
// are the ones the data path writes: one record per batch, whose key says commit or abort.
//
//   key   (4 bytes):  version int16 (0), type int16 (0 abort, 1 commit; KRaft uses 2..)
//   value (6 bytes):  version int16 (0), coordinatorEpoch int32   -- for commit and abort
//
// A marker batch is transactional and control, carries the producer id and epoch, has
// baseSequence -1 and a single record with offset delta 0 and no headers.
//
// Parsing follows Kafka: a key or value shorter than the layout, or with a negative version, is
// invalid; a newer version is read by its version-0 prefix and the rest ignored.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"
#include "protocol/record/errc.h"
#include "protocol/record/record_batch.h"

namespace weir::record {

inline constexpr std::size_t kControlKeySize = 4;
inline constexpr std::size_t kEndTxnMarkerValueSize = 6;
inline constexpr std::int16_t kControlKeyVersion = 0;
inline constexpr std::int16_t kEndTxnMarkerVersion = 0;

enum class ControlRecordType : std::int16_t {
  abort = 0,
  commit = 1,
  leader_change = 2,
  snapshot_header = 3,
  snapshot_footer = 4,
  kraft_version = 5,
  kraft_voters = 6,
};

struct ControlRecordKey {
  std::int16_t version = kControlKeyVersion;
  std::int16_t type = 0;  // raw: may be a type this code does not know

  [[nodiscard]] bool is(ControlRecordType t) const noexcept {
    return type == static_cast<std::int16_t>(t);
  }
  // Commit or abort.
  [[nodiscard]] bool is_transaction_marker() const noexcept {
    return is(ControlRecordType::abort) || is(ControlRecordType::commit);
  }
};

struct EndTxnMarker {
  std::int16_t version = kEndTxnMarkerVersion;
  std::int32_t coordinator_epoch = 0;
};

[[nodiscard]] std::array<std::byte, kControlKeySize> encode_control_key(
    ControlRecordType type) noexcept;
[[nodiscard]] Result<ControlRecordKey, Errc> parse_control_key(ByteSpan key) noexcept;

[[nodiscard]] std::array<std::byte, kEndTxnMarkerValueSize> encode_end_txn_marker(
    std::int32_t coordinator_epoch) noexcept;
[[nodiscard]] Result<EndTxnMarker, Errc> parse_end_txn_marker(ByteSpan value) noexcept;

struct EndTxnMarkerBatch {
  std::int64_t producer_id = kNoProducerId;
  std::int16_t producer_epoch = kNoProducerEpoch;
  std::int32_t coordinator_epoch = 0;
  bool commit = true;  // false: abort
  std::int64_t timestamp_ms = kNoTimestamp;
  std::int64_t base_offset = 0;
  std::int32_t partition_leader_epoch = kNoPartitionLeaderEpoch;
  // A LogAppendTime topic: the batch says so, its maxTimestamp being timestamp_ms (as Kafka's
  // validator stamps every batch appended to such a topic, markers too).
  bool log_append_time = false;
};

// A complete control batch holding one commit or abort marker.
[[nodiscard]] std::vector<std::byte> build_end_txn_marker_batch(const EndTxnMarkerBatch& marker);

}  // namespace weir::record
