// BatchScanner walks the record batches stored in a segment's log file, from a byte position to
// an end position, reading the file in chunks.
//
//   kHeaders mode reads only each batch's header (enough for offsets, sizes and timestamps):
//     what reads, index lookups and rebuilds of trusted data need.
//   kVerify mode also reads the whole batch and checks it (magic 2, CRC32C, counts; see
//     RecordBatchView::validate with BatchOrigin::log): what recovery needs. batch() then holds
//     the batch's bytes.
//
// The scan stops with kPartial when a batch runs past the end (a torn write), kCorrupt when a
// header or (in kVerify mode) a batch is invalid, kIo on a read error. Memory is one chunk, or
// one batch in kVerify mode (never more than the bytes left in the file).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"
#include "protocol/record/record_batch.h"
#include "storage/file.h"

namespace weir::storage {

// The header fields of one stored batch, and where it is.
struct BatchHeader {
  std::int64_t position = 0;  // in the log file
  std::int32_t size = 0;      // whole batch, 12 + batchLength
  std::int64_t base_offset = 0;
  std::int32_t last_offset_delta = 0;
  std::int32_t partition_leader_epoch = -1;
  std::int16_t attributes = 0;
  std::int64_t base_timestamp = -1;
  std::int64_t max_timestamp = -1;
  std::int64_t producer_id = -1;
  std::int16_t producer_epoch = -1;
  std::int32_t base_sequence = -1;
  std::int32_t records_count = 0;

  [[nodiscard]] std::int64_t last_offset() const noexcept { return base_offset + last_offset_delta; }
  [[nodiscard]] bool is_control() const noexcept { return (attributes & record::kControlBit) != 0; }
  [[nodiscard]] bool is_transactional() const noexcept { return (attributes & record::kTransactionalBit) != 0; }
  [[nodiscard]] std::int64_t next_offset() const noexcept { return last_offset() + 1; }
  [[nodiscard]] std::int64_t end_position() const noexcept { return position + size; }

  // From the first kHeaderSize bytes of a batch (framing already checked).
  [[nodiscard]] static BatchHeader parse(ByteSpan header, std::int64_t position) noexcept;
};

enum class ScanStop : std::uint8_t {
  kPartial,  // the last batch does not fit before the end
  kCorrupt,  // an invalid header (batchLength < 49, negative lastOffsetDelta) or batch
  kIo,       // a read failed
};

class BatchScanner {
 public:
  enum class Mode : std::uint8_t { kHeaders, kVerify };

  BatchScanner(const File& file, std::int64_t position, std::int64_t end, Mode mode) noexcept;

  // The next batch; nullopt at the end.
  [[nodiscard]] Result<std::optional<BatchHeader>, ScanStop> next();
  // Where the next batch starts (after the last one returned).
  [[nodiscard]] std::int64_t position() const noexcept { return position_; }
  // kVerify mode: the bytes of the batch next() last returned.
  [[nodiscard]] ByteSpan batch() const noexcept { return last_batch_; }
  [[nodiscard]] IoError io_error() const noexcept { return io_error_; }

  static constexpr std::size_t kHeaderChunkBytes = 8 * 1024;
  static constexpr std::size_t kVerifyChunkBytes = 256 * 1024;

 private:
  // Makes [at, at + n) available in buf_; false at end of file (short) or on error.
  [[nodiscard]] Result<bool, ScanStop> fill(std::int64_t at, std::size_t n);

  const File& file_;
  std::int64_t position_;
  std::int64_t end_;
  Mode mode_;
  std::vector<std::byte> buf_;
  std::int64_t buf_start_ = 0;
  std::size_t buf_len_ = 0;
  ByteSpan last_batch_;
  IoError io_error_{};
};

}  // namespace weir::storage
