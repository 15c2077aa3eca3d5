// Streaming decompression of a compressed batch's records section, and a record reader over it,
// so that a batch is validated record by record as its decompressed bytes go by instead of
// being decompressed whole first.
//
// Memory: the decompressed bytes pass through a window of kStreamWindowBytes that grows only to
// hold one record larger than it (as the record's bytes actually arrive, never from a declared
// length), plus the codec's own working set:
//   gzip    zlib's 32 KiB window
//   lz4     LZ4F's block buffers (at most two 4 MiB blocks)
//   zstd    the frame's window, at most 2^kStreamZstdMaxWindowLog bytes (128 MiB, zstd's default
//           limit, which Kafka's zstd-jni keeps); a frame asking for more is kCorrupt
//   snappy  one block: a xerial block, or the whole records section for the raw framing
//           (librdkafka's); snappy copies may reach back anywhere in a block, so a block is
//           decoded whole. A block is at most kSnappyMaxExpansion times its compressed size (the
//           format cannot expand more), so a block declaring more is kCorrupt before anything is
//           allocated.
//
// Limits (DecompressionLimits), checked as the bytes are produced, whatever the stream declares:
//   max_bytes  decompressed bytes of one batch: more is kOutputTooLarge
//   max_ratio  decompressed bytes per compressed byte: more than max_ratio x the records
//              section's size is kRatioTooHigh (0: no ratio limit)
// A zstd frame or snappy block that declares more than max_bytes fails before it is decoded.
//
// Thread-safety: none needed (no shared state); a reader is used by one thread at a time, and
// may be used on any thread while the batch's bytes stay alive.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <variant>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"
#include "protocol/record/compression.h"
#include "protocol/record/errc.h"
#include "protocol/record/record.h"
#include "protocol/record/record_batch.h"

namespace weir::record {

inline constexpr std::size_t kStreamWindowBytes = 64 * 1024;
inline constexpr int kStreamZstdMaxWindowLog = 27;
// Snappy's densest element is a 3-byte copy of 64 bytes: no stream expands more than 64/3 times
// (plus the block's few header bytes).
inline constexpr std::size_t kSnappyMaxExpansion = 22;

struct DecompressionLimits {
  std::size_t max_bytes = 0;
  std::uint32_t max_ratio = 0;  // 0: none
};

// The decompressed bytes of one records section, in order. read() fills at most out.size()
// bytes and returns how many; 0 only at the end, once the whole input was consumed and verified
// (trailers, checksums, no trailing bytes). Errors: kCorrupt, kOutputTooLarge, kRatioTooHigh,
// kUnknownCodec, kCodecFailure; after an error read() keeps returning it.
class Decompressor {
 public:
  [[nodiscard]] static Result<std::unique_ptr<Decompressor>, CompressionError> open(Compression codec, ByteSpan input,
                                                                                    DecompressionLimits limits);
  virtual ~Decompressor() = default;
  Decompressor(const Decompressor&) = delete;
  Decompressor& operator=(const Decompressor&) = delete;

  [[nodiscard]] Result<std::size_t, CompressionError> read(MutableByteSpan out);
  // Decompressed bytes produced so far.
  [[nodiscard]] std::uint64_t produced() const noexcept { return produced_; }

 protected:
  Decompressor(ByteSpan input, DecompressionLimits limits) noexcept : input_(input), limits_(limits) {}
  // One step of the codec: writes into out (never empty), returns the bytes written, 0 at the end.
  [[nodiscard]] virtual Result<std::size_t, CompressionError> produce(MutableByteSpan out) = 0;

  ByteSpan input_;
  DecompressionLimits limits_;

 private:
  std::uint64_t produced_ = 0;
  std::optional<CompressionError> error_;
};

// An error of a streamed records section: the decompression failed (or hit a limit), or a record
// did not parse (the same Errc RecordReader reports).
using StreamError = std::variant<CompressionError, Errc>;

// Reads the records of a compressed batch while decompressing it, checking what RecordReader
// checks (each record's structure, exactly `count` records, offset deltas increasing within
// [0, lastOffsetDelta], nothing after the last record) plus the decompression limits.
//
//   auto reader = StreamingRecordReader::open(batch, limits);
//   for (;;) {
//     auto next = reader->next();
//     if (!next) return fail(next.error());
//     if (!*next) break;
//     use(**next);  // valid until the next call to next()
//   }
class StreamingRecordReader {
 public:
  // `batch` is a validated, compressed batch whose bytes outlive the reader.
  [[nodiscard]] static Result<StreamingRecordReader, StreamError> open(const RecordBatchView& batch,
                                                                       DecompressionLimits limits);

  [[nodiscard]] Result<std::optional<RecordView>, StreamError> next();
  [[nodiscard]] std::uint64_t decompressed_bytes() const noexcept { return source_->produced(); }
  // The window's size now: kStreamWindowBytes, or more while a larger record passed through.
  [[nodiscard]] std::size_t window_bytes() const noexcept { return window_.size(); }

 private:
  StreamingRecordReader(std::unique_ptr<Decompressor> source, std::int32_t count, std::int32_t last_offset_delta);
  // Makes at least n unread bytes available, reading more as needed; false if the stream ends
  // first (then everything that was left is available).
  [[nodiscard]] Result<bool, CompressionError> fill(std::size_t n);
  [[nodiscard]] std::size_t available() const noexcept { return end_ - begin_; }

  std::unique_ptr<Decompressor> source_;
  std::vector<std::byte> window_;
  std::size_t begin_ = 0;  // unread bytes are window_[begin_, end_)
  std::size_t end_ = 0;
  bool eof_ = false;
  std::int32_t left_;
  std::int32_t last_offset_delta_;
  std::int64_t previous_offset_delta_ = -1;
  std::optional<StreamError> error_;
};

// Calls fn(const RecordView&) for every record of a compressed batch, streaming.
template <class Fn>
[[nodiscard]] Status<StreamError> for_each_streamed_record(const RecordBatchView& batch, DecompressionLimits limits,
                                                           Fn&& fn) {
  auto reader = StreamingRecordReader::open(batch, limits);
  if (!reader) return unexpected(reader.error());
  for (;;) {
    auto next = reader->next();
    if (!next) return unexpected(next.error());
    if (!*next) return {};
    fn(**next);
  }
}

}  // namespace weir::record
