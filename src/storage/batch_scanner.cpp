#include "storage/batch_scanner.h"

#include <algorithm>
#include <cstdint>

#include "base/assert.h"

namespace weir::storage {

using record::kHeaderSize;
using record::kLogOverhead;

BatchHeader BatchHeader::parse(ByteSpan header, std::int64_t position) noexcept {
  WEIR_ASSERT(header.size() >= kHeaderSize);
  const std::byte* p = header.data();
  BatchHeader h;
  h.position = position;
  const std::int64_t size = std::int64_t{kLogOverhead} + load_be<std::int32_t>(p + record::kBatchLengthOffset);
  h.size = static_cast<std::int32_t>(std::min<std::int64_t>(size, INT32_MAX));
  h.base_offset = load_be<std::int64_t>(p + record::kBaseOffsetOffset);
  h.last_offset_delta = load_be<std::int32_t>(p + record::kLastOffsetDeltaOffset);
  h.partition_leader_epoch = load_be<std::int32_t>(p + record::kPartitionLeaderEpochOffset);
  h.attributes = load_be<std::int16_t>(p + record::kAttributesOffset);
  h.base_timestamp = load_be<std::int64_t>(p + record::kBaseTimestampOffset);
  h.max_timestamp = load_be<std::int64_t>(p + record::kMaxTimestampOffset);
  h.producer_id = load_be<std::int64_t>(p + record::kProducerIdOffset);
  h.producer_epoch = load_be<std::int16_t>(p + record::kProducerEpochOffset);
  h.base_sequence = load_be<std::int32_t>(p + record::kBaseSequenceOffset);
  h.records_count = load_be<std::int32_t>(p + record::kRecordsCountOffset);
  return h;
}

BatchScanner::BatchScanner(const File& file, std::int64_t position, std::int64_t end, Mode mode) noexcept
    : file_(file), position_(position), end_(end), mode_(mode) {}

Result<bool, ScanStop> BatchScanner::fill(std::int64_t at, std::size_t n) {
  if (at >= buf_start_ && at + static_cast<std::int64_t>(n) <= buf_start_ + static_cast<std::int64_t>(buf_len_)) {
    return true;
  }
  const std::size_t chunk = mode_ == Mode::kVerify ? kVerifyChunkBytes : kHeaderChunkBytes;
  const auto left = static_cast<std::size_t>(std::max<std::int64_t>(0, end_ - at));
  const std::size_t want = std::min(std::max(n, chunk), left);
  if (want < n) return false;
  if (buf_.size() < want) buf_.resize(want);
  auto got = file_.pread(at, MutableByteSpan(buf_.data(), want));
  if (!got) {
    io_error_ = got.error();
    return unexpected(ScanStop::kIo);
  }
  buf_start_ = at;
  buf_len_ = *got;
  return *got >= n;
}

Result<std::optional<BatchHeader>, ScanStop> BatchScanner::next() {
  last_batch_ = {};
  if (position_ >= end_) return std::optional<BatchHeader>();
  auto have = fill(position_, kHeaderSize);
  if (!have) return unexpected(have.error());
  if (!*have) {
    // Fewer than 61 bytes left: a partial header, unless it is not even a batch's framing.
    return unexpected(ScanStop::kPartial);
  }
  const auto offset_in_buf = static_cast<std::size_t>(position_ - buf_start_);
  const ByteSpan header(buf_.data() + offset_in_buf, kHeaderSize);
  auto size = record::peek_batch_size(header);
  if (!size) return unexpected(ScanStop::kCorrupt);
  if (position_ + static_cast<std::int64_t>(*size) > end_) return unexpected(ScanStop::kPartial);
  BatchHeader h = BatchHeader::parse(header, position_);
  if (h.last_offset_delta < 0 || h.base_offset < 0) return unexpected(ScanStop::kCorrupt);
  if (mode_ == Mode::kVerify) {
    auto whole = fill(position_, *size);
    if (!whole) return unexpected(whole.error());
    if (!*whole) return unexpected(ScanStop::kPartial);
    const ByteSpan bytes(buf_.data() + static_cast<std::size_t>(position_ - buf_start_), *size);
    auto view = record::RecordBatchView::from(bytes);
    if (!view || !view->validate(record::BatchOrigin::log)) return unexpected(ScanStop::kCorrupt);
    last_batch_ = bytes;
  }
  position_ += static_cast<std::int64_t>(*size);
  return std::optional<BatchHeader>(h);
}

}  // namespace weir::storage
