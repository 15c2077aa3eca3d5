// The record-batch compression codecs (attributes bits 0-2), in the formats Kafka clients write
// and read:
//
//   id codec   stream format
//    1 gzip    RFC 1952 gzip (zlib, windowBits 15+16); concatenated members are accepted.
//    2 snappy  xerial snappy-java framing, as the Java client writes it:
//                magic   8 bytes  0x82 'S' 'N' 'A' 'P' 'P' 'Y' 0x00
//                version int32    1
//                compat  int32    1
//                blocks  { length int32 (big-endian), raw snappy block of `length` bytes }*
//              compress() writes this with 32 KiB of input per block (as snappy-java does).
//              decompress() also accepts a plain raw snappy block (what librdkafka 2.x writes)
//              and a second xerial header between blocks (concatenated streams).
//    3 lz4     LZ4 frame format (magic 0x184D2204), header checksum correct as in KIP-57.
//              compress() writes 64 KiB independent blocks, no block or content checksums, no
//              content size (as the Java client does); decompress() accepts every frame option
//              (checksums and content size, verified when present) and concatenated frames.
//    4 zstd    standard zstd frames; concatenated and skippable frames are accepted.
//
// Bounded decompression: decompress() streams into an output buffer that grows (doubling) with
// what is actually produced and never beyond max_output_bytes, whatever sizes the input declares;
// a stream that would produce more is kOutputTooLarge as soon as the limit is crossed. Memory is
// the output buffer (while it grows, briefly also the previous, smaller one) plus a bounded
// codec working set: zlib 32 KiB window; lz4 at most two 4 MiB blocks; snappy nothing (blocks
// decode straight into the output, each block's declared size checked against the limit first);
// zstd its window, capped at max(8 MiB, max_output_bytes rounded up to a power of two) and at
// 128 MiB (Kafka's own limit) -- a frame asking for a larger window is kOutputTooLarge.
//
// At the protocol edge kCorrupt is CORRUPT_MESSAGE (what Kafka answers when a batch fails to
// decompress); kOutputTooLarge and kRatioTooHigh have no Kafka equivalent: Produce answers them
// INVALID_RECORD (weir's configured limits, storage/records_summary.h). Produce validation and the
// log cleaner's record walks stream instead (record_stream.h); decompress() serves what needs the
// whole output at once.
//
// All functions are thread-safe (no shared state) and allocate only their results and codec
// contexts.
#pragma once

#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"
#include "protocol/record/record.h"
#include "protocol/record/record_batch.h"

namespace weir::record {

enum class CompressionError : std::uint8_t {
  kCorrupt,         // malformed, truncated or trailing input; a checksum that does not match
  kOutputTooLarge,  // the output would exceed max_output_bytes (or zstd asks for a larger window)
  kRatioTooHigh,    // streaming only (record_stream.h): output above max_ratio x the input's size
  kUnknownCodec,    // a codec id 5..7
  kInvalidLevel,    // a compression level outside the codec's range (see compress())
  kCodecFailure,    // the codec library failed for a reason of its own (out of memory)
};

std::string_view to_string(CompressionError e) noexcept;

// compress() level meaning "the codec's Kafka default": gzip 6 (zlib's default), lz4 9, zstd 3.
inline constexpr int kDefaultCompressionLevel = std::numeric_limits<int>::min();

// Kafka's level ranges (the compression.<codec>.level topic configs).
inline constexpr int kGzipMinLevel = 1;
inline constexpr int kGzipMaxLevel = 9;
inline constexpr int kLz4MinLevel = 1;
inline constexpr int kLz4MaxLevel = 17;
inline constexpr int kLz4DefaultLevel = 9;
inline constexpr int kZstdMaxLevel = 22;  // the minimum is the library's ZSTD_minCLevel() (< 0)
inline constexpr int kZstdDefaultLevel = 3;

// Input bytes per xerial snappy block (snappy-java's default) and per lz4 frame block.
inline constexpr std::size_t kSnappyBlockSize = 32 * 1024;
inline constexpr std::size_t kLz4BlockSize = 64 * 1024;

// The uncompressed bytes of `input`, a stream in `codec`'s format (none: a copy of input).
// Errors: kCorrupt, kOutputTooLarge, kUnknownCodec, kCodecFailure. Empty input is kCorrupt for
// every codec but none (every codec's empty stream still has a header).
[[nodiscard]] Result<std::vector<std::byte>, CompressionError> decompress(
    Compression codec, ByteSpan input, std::size_t max_output_bytes);

// `input` compressed as one stream in `codec`'s format (none: a copy of input). Levels: gzip
// -1 (zlib default) or 1..9; lz4 1..17 (1-2 fast, 3 and up LZ4 HC); zstd ZSTD_minCLevel()..22;
// snappy and none ignore the level. `input` is a records section, under 2 GiB (asserted).
// Errors: kInvalidLevel, kUnknownCodec, kCodecFailure.
[[nodiscard]] Result<std::vector<std::byte>, CompressionError> compress(
    Compression codec, ByteSpan input, int level = kDefaultCompressionLevel);

// The records section of a batch, ready for RecordReader: the batch's own bytes when it is
// uncompressed (no copy; the batch's bytes must outlive this), else the decompressed bytes,
// owned here.
class RecordsSection {
 public:
  [[nodiscard]] ByteSpan bytes() const noexcept { return owned_ ? ByteSpan(decompressed_) : view_; }
  [[nodiscard]] bool decompressed() const noexcept { return owned_; }
  // A reader over the records, with the batch's count and lastOffsetDelta.
  [[nodiscard]] RecordReader reader() const noexcept {
    return RecordReader(bytes(), records_count_, last_offset_delta_);
  }

 private:
  friend Result<RecordsSection, CompressionError> read_records_section(const RecordBatchView&,
                                                                       std::size_t);

  ByteSpan view_{};
  std::vector<std::byte> decompressed_;
  bool owned_ = false;
  std::int32_t records_count_ = 0;
  std::int32_t last_offset_delta_ = 0;
};

// The records section of `batch`, decompressed (at most max_output_bytes) when compressed.
// Call after batch.validate(); a codec id 5..7 is kUnknownCodec.
//
//   auto section = read_records_section(batch, limit);
//   if (!section) return unexpected(...);
//   auto status = for_each_record(section->reader(), [&](const RecordView& r) { ... });
[[nodiscard]] Result<RecordsSection, CompressionError> read_records_section(
    const RecordBatchView& batch, std::size_t max_output_bytes);

// A copy of the uncompressed `batch` with its records section compressed with `codec`: the
// compression bits set, batchLength and CRC recomputed, every other header field kept.
// Compressing with none returns a copy. `batch` must be uncompressed (asserted).
// Errors: those of compress().
[[nodiscard]] Result<std::vector<std::byte>, CompressionError> compress_batch(
    const RecordBatchView& batch, Compression codec, int level = kDefaultCompressionLevel);

}  // namespace weir::record

template <>
struct fmt::formatter<weir::record::CompressionError> : fmt::formatter<std::string_view> {
  template <class FormatContext>
  auto format(weir::record::CompressionError e, FormatContext& ctx) const {
    return fmt::formatter<std::string_view>::format(weir::record::to_string(e), ctx);
  }
};
