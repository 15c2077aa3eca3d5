// Builds uncompressed RecordBatch v2 bytes (layout in record_batch.h).
//
//   RecordBatchBuilder builder({.producer_id = 7, .producer_epoch = 0, .base_sequence = 0});
//   builder.append(now_ms, as_bytes("key"), as_bytes("value"));
//   std::vector<std::byte> batch = builder.build();
//
// baseTimestamp is the first record's timestamp and maxTimestamp the largest (or the
// log_append_time_ms option for LogAppendTime batches). Records get offset deltas 0, 1, 2, ...
// unless appended with an explicit, strictly increasing delta. Sizes beyond what the format can
// express (over 2 GiB) are bugs and abort. Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "base/bytes.h"
#include "protocol/record/record.h"
#include "protocol/record/record_batch.h"

namespace weir::record {

struct BatchOptions {
  std::int64_t base_offset = 0;
  std::int32_t partition_leader_epoch = kNoPartitionLeaderEpoch;
  std::int64_t producer_id = kNoProducerId;
  std::int16_t producer_epoch = kNoProducerEpoch;
  std::int32_t base_sequence = kNoSequence;
  bool transactional = false;
  bool control = false;
  TimestampType timestamp_type = TimestampType::create_time;
  // maxTimestamp of a LogAppendTime batch; required when timestamp_type is log_append_time.
  std::optional<std::int64_t> log_append_time_ms = std::nullopt;
};

class RecordBatchBuilder {
 public:
  explicit RecordBatchBuilder(BatchOptions options = {});

  // Appends a record with the next offset delta (one past the previous record's, 0 at first).
  void append(std::int64_t timestamp_ms, std::optional<ByteSpan> key, std::optional<ByteSpan> value,
              std::span<const Header> headers = {});

  // Appends a record with an explicit offset delta, larger than every earlier one.
  void append_with_offset_delta(std::int32_t offset_delta, std::int64_t timestamp_ms,
                                std::optional<ByteSpan> key, std::optional<ByteSpan> value,
                                std::span<const Header> headers = {});

  [[nodiscard]] std::int32_t record_count() const noexcept { return count_; }
  [[nodiscard]] bool empty() const noexcept { return count_ == 0; }
  // Bytes of the batch built so far (header included).
  [[nodiscard]] std::size_t size_bytes() const noexcept { return buffer_.size(); }

  // Fills in the header and CRC and returns the batch. Needs at least one record; the builder
  // cannot be used afterwards.
  [[nodiscard]] std::vector<std::byte> build();

 private:
  BatchOptions options_;
  ByteBuffer buffer_;
  std::int32_t count_ = 0;
  std::int32_t last_offset_delta_ = -1;
  std::int64_t base_timestamp_ = kNoTimestamp;
  std::int64_t max_timestamp_ = kNoTimestamp;
  bool built_ = false;
};

}  // namespace weir::record
