#include "protocol/record/batch_splitter.h"

#include "base/assert.h"

namespace weir::record {

Result<std::optional<RecordBatchView>, Errc> BatchSplitter::next() noexcept {
  if (failed_) return unexpected(Errc::length_mismatch);
  const ByteSpan rest = remaining();
  auto size = peek_batch_size(rest);
  if (!size) {
    if (size.error() == Errc::truncated) return std::optional<RecordBatchView>();
    failed_ = true;
    return unexpected(size.error());
  }
  if (rest.size() < *size) return std::optional<RecordBatchView>();
  auto batch = RecordBatchView::from(rest.first(*size));
  WEIR_ASSERT(batch.has_value(), "framing checked above: {}", batch.error());
  position_ += *size;
  return std::optional<RecordBatchView>(*batch);
}

}  // namespace weir::record
