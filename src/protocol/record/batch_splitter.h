// Splits a buffer of concatenated record batches (a produce payload, a segment read, a fetch
// response) into batch views, using only each batch's 12-byte framing (baseOffset, batchLength).
//
//   BatchSplitter splitter(bytes);
//   while (true) {
//     auto next = splitter.next();
//     if (!next) return unexpected(next.error());   // a batchLength below 49: cannot go on
//     if (!*next) break;                            // no complete batch left
//     if (auto ok = (*next)->validate(); !ok) ...
//   }
//   splitter.remaining();  // a partial trailing batch, if any
//
// A partial batch at the end is not an error: reads and fetches cut batches at arbitrary byte
// boundaries. The contents of each batch are not checked; call validate() on it. Works for any
// magic (the framing is the same); no allocation.
#pragma once

#include <cstddef>
#include <optional>

#include "base/bytes.h"
#include "base/result.h"
#include "protocol/record/errc.h"
#include "protocol/record/record_batch.h"

namespace weir::record {

class BatchSplitter {
 public:
  explicit BatchSplitter(ByteSpan buffer) noexcept : buffer_(buffer) {}

  // The next complete batch; nullopt when the remaining bytes hold no complete batch.
  // Errc::length_mismatch when a batch header claims fewer than 49 bytes (corrupt framing:
  // nothing after it can be located). Once an error is returned it is returned again.
  [[nodiscard]] Result<std::optional<RecordBatchView>, Errc> next() noexcept;

  // Bytes covered by the batches returned so far.
  [[nodiscard]] std::size_t consumed_bytes() const noexcept { return position_; }
  // Bytes after the batches returned so far (a partial batch once next() returned nullopt).
  [[nodiscard]] ByteSpan remaining() const noexcept { return buffer_.subspan(position_); }

 private:
  ByteSpan buffer_;
  std::size_t position_ = 0;
  bool failed_ = false;
};

}  // namespace weir::record
