#include "protocol/record/compression.h"

#include <lz4frame.h>
#include <snappy.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <memory>

#include "base/assert.h"
#include "base/crc32c.h"

namespace weir::record {

std::string_view to_string(CompressionError e) noexcept {
  switch (e) {
    case CompressionError::kCorrupt:
      return "corrupt";
    case CompressionError::kOutputTooLarge:
      return "output_too_large";
    case CompressionError::kRatioTooHigh:
      return "ratio_too_high";
    case CompressionError::kUnknownCodec:
      return "unknown_codec";
    case CompressionError::kInvalidLevel:
      return "invalid_level";
    case CompressionError::kCodecFailure:
      return "codec_failure";
  }
  return "unknown";
}

namespace {

using Bytes = std::vector<std::byte>;
using CompressResult = Result<Bytes, CompressionError>;

constexpr std::size_t kMaxInputBytes = std::numeric_limits<std::int32_t>::max();

// xerial snappy-java stream header: magic (8 bytes), version (int32), compatible version (int32).
constexpr std::array<unsigned char, 8> kXerialMagic = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0x00};
constexpr std::int32_t kXerialVersion = 1;
constexpr std::int32_t kXerialCompatibleVersion = 1;
constexpr std::size_t kXerialHeaderSize = kXerialMagic.size() + 4 + 4;
static_assert(kXerialHeaderSize == 16);

// zstd window bounds for decompression (log2 bytes): at least 8 MiB, so that every level's
// streaming window fits whatever the output limit, and at most Kafka's (zstd's default) 128 MiB.
constexpr int kZstdMinWindowLog = 23;
constexpr int kZstdMaxWindowLog = 27;

// The first output buffer size (when the input is tiny).
constexpr std::size_t kMinOutputBytes = 4 * 1024;

// The output of a decoder. It grows with what is produced, doubling, and never past the limit, so
// its size is proportional to the real output whatever sizes the input declares; only while it
// grows is the previous buffer held too. Once the buffer is full at the limit, next() hands out a
// one-byte probe instead: a decoder that writes to it proves the output is too large.
class BoundedOutput {
 public:
  BoundedOutput(std::size_t limit_bytes, std::size_t input_bytes) : limit_(limit_bytes) {
    // Compressed data rarely shrinks: start at twice the input, within [kMinOutputBytes, limit].
    const std::size_t guess = input_bytes >= limit_ / 2 ? limit_ : std::max(2 * input_bytes, kMinOutputBytes);
    grow_to(std::min(guess, limit_));
  }

  // Space for the decoder's next output; never empty.
  [[nodiscard]] MutableByteSpan next() {
    if (used_ == buffer_.size() && buffer_.size() < limit_) grow_to(doubled());
    probing_ = used_ == buffer_.size();
    if (probing_) return probe_;
    return MutableByteSpan(buffer_).subspan(used_);
  }

  // Exactly n bytes of space, for a decoder that knows its output size before decoding;
  // kOutputTooLarge (before allocating) when n bytes would cross the limit.
  [[nodiscard]] Result<MutableByteSpan, CompressionError> next_exactly(std::size_t n) {
    if (n > limit_ - used_) return unexpected(CompressionError::kOutputTooLarge);
    if (buffer_.size() - used_ < n) grow_to(std::max(used_ + n, doubled()));
    probing_ = false;
    return MutableByteSpan(buffer_).subspan(used_, n);
  }

  // Records that the decoder wrote n bytes into the span last handed out.
  [[nodiscard]] Status<CompressionError> commit(std::size_t n) {
    if (probing_) {
      if (n > 0) return unexpected(CompressionError::kOutputTooLarge);
      return {};
    }
    WEIR_ASSERT(n <= buffer_.size() - used_, "decoder wrote {} bytes into {}", n, buffer_.size() - used_);
    used_ += n;
    return {};
  }

  [[nodiscard]] Bytes take() && {
    buffer_.resize(used_);
    return std::move(buffer_);
  }

 private:
  [[nodiscard]] std::size_t doubled() const noexcept {
    const std::size_t size = buffer_.size();
    if (size >= limit_ / 2) return limit_;
    return std::min(limit_, std::max(2 * size, kMinOutputBytes));
  }

  void grow_to(std::size_t size) {
    WEIR_ASSERT(size <= limit_, "output buffer of {} bytes past the limit {}", size, limit_);
    buffer_.reserve(size);  // exactly: resize() alone may round the capacity up past the limit
    buffer_.resize(size);
  }

  std::size_t limit_;
  Bytes buffer_;
  std::size_t used_ = 0;
  bool probing_ = false;
  std::array<std::byte, 1> probe_{};
};

template <class T>
T* as(std::byte* p) noexcept {
  return reinterpret_cast<T*>(p);
}
template <class T>
const T* as(const std::byte* p) noexcept {
  return reinterpret_cast<const T*>(p);
}

// --- gzip -------------------------------------------------------------------------------------

constexpr int kGzipWindowBits = 15 + 16;  // 32 KiB window, gzip (RFC 1952) wrapper
constexpr int kGzipMemLevel = 8;

struct InflateEnd {
  void operator()(z_stream* zs) const noexcept { inflateEnd(zs); }
};

CompressResult gzip_decompress(ByteSpan input, std::size_t max_output_bytes) {
  z_stream zs{};
  if (inflateInit2(&zs, kGzipWindowBits) != Z_OK) return unexpected(CompressionError::kCodecFailure);
  const std::unique_ptr<z_stream, InflateEnd> guard(&zs);
  constexpr std::size_t kMaxAvail = std::numeric_limits<uInt>::max();
  ByteSpan unread = input;  // not yet handed to zlib
  BoundedOutput out(max_output_bytes, input.size());
  for (;;) {
    if (zs.avail_in == 0 && !unread.empty()) {
      const ByteSpan chunk = unread.first(std::min(unread.size(), kMaxAvail));
      zs.next_in = const_cast<Bytef*>(as<Bytef>(chunk.data()));
      zs.avail_in = static_cast<uInt>(chunk.size());
      unread = unread.subspan(chunk.size());
    }
    const MutableByteSpan space = out.next();
    const auto avail_out = static_cast<uInt>(std::min(space.size(), kMaxAvail));
    zs.next_out = as<Bytef>(space.data());
    zs.avail_out = avail_out;
    const int rc = inflate(&zs, Z_NO_FLUSH);
    if (auto s = out.commit(avail_out - zs.avail_out); !s) return unexpected(s.error());
    switch (rc) {
      case Z_OK:
        break;
      case Z_STREAM_END:
        if (zs.avail_in == 0 && unread.empty()) return std::move(out).take();
        // Another gzip member follows (Java's GZIPInputStream reads concatenated members too).
        if (inflateReset(&zs) != Z_OK) return unexpected(CompressionError::kCodecFailure);
        break;
      case Z_BUF_ERROR:  // no progress possible: only when zlib needs input
        if (zs.avail_in == 0 && !unread.empty()) break;
        return unexpected(CompressionError::kCorrupt);  // the input ended inside the stream
      case Z_MEM_ERROR:
        return unexpected(CompressionError::kCodecFailure);
      default:  // Z_DATA_ERROR, Z_NEED_DICT, Z_STREAM_ERROR
        return unexpected(CompressionError::kCorrupt);
    }
  }
}

struct DeflateEnd {
  void operator()(z_stream* zs) const noexcept { deflateEnd(zs); }
};

CompressResult gzip_compress(ByteSpan input, int level) {
  if (level == kDefaultCompressionLevel) level = Z_DEFAULT_COMPRESSION;
  if (level != Z_DEFAULT_COMPRESSION && (level < kGzipMinLevel || level > kGzipMaxLevel)) {
    return unexpected(CompressionError::kInvalidLevel);
  }
  z_stream zs{};
  if (deflateInit2(&zs, level, Z_DEFLATED, kGzipWindowBits, kGzipMemLevel, Z_DEFAULT_STRATEGY) != Z_OK) {
    return unexpected(CompressionError::kCodecFailure);
  }
  const std::unique_ptr<z_stream, DeflateEnd> guard(&zs);
  // With the whole input, a deflateBound() buffer and Z_FINISH, one call finishes the stream.
  Bytes out(deflateBound(&zs, static_cast<uLong>(input.size())));
  zs.next_in = const_cast<Bytef*>(as<Bytef>(input.data()));
  zs.avail_in = static_cast<uInt>(input.size());
  zs.next_out = as<Bytef>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  if (deflate(&zs, Z_FINISH) != Z_STREAM_END) return unexpected(CompressionError::kCodecFailure);
  out.resize(zs.total_out);
  return out;
}

// --- snappy -----------------------------------------------------------------------------------

bool starts_with_xerial_magic(ByteSpan bytes) noexcept {
  return bytes.size() >= kXerialMagic.size() &&
         std::memcmp(bytes.data(), kXerialMagic.data(), kXerialMagic.size()) == 0;
}

Status<CompressionError> snappy_raw_block(ByteSpan block, BoundedOutput& out) {
  std::size_t size = 0;
  if (!snappy::GetUncompressedLength(as<char>(block.data()), block.size(), &size)) {
    return unexpected(CompressionError::kCorrupt);
  }
  auto space = out.next_exactly(size);  // the size is checked against the limit before allocating
  if (!space) return unexpected(space.error());
  if (!snappy::RawUncompress(as<char>(block.data()), block.size(), as<char>(space->data()))) {
    return unexpected(CompressionError::kCorrupt);
  }
  return out.commit(size);
}

CompressResult snappy_decompress(ByteSpan input, std::size_t max_output_bytes) {
  BoundedOutput out(max_output_bytes, input.size());
  if (!starts_with_xerial_magic(input)) {
    if (auto s = snappy_raw_block(input, out); !s) return unexpected(s.error());
    return std::move(out).take();
  }
  ByteReader reader(input);
  while (!reader.empty()) {
    if (starts_with_xerial_magic(reader.rest())) {  // a stream header, first or concatenated
      if (!reader.skip(kXerialHeaderSize)) return unexpected(CompressionError::kCorrupt);
      continue;
    }
    const auto length = reader.read_be<std::int32_t>();
    if (!length || *length < 0) return unexpected(CompressionError::kCorrupt);
    const auto block = reader.read_bytes(static_cast<std::size_t>(*length));
    if (!block) return unexpected(CompressionError::kCorrupt);
    if (auto s = snappy_raw_block(*block, out); !s) return unexpected(s.error());
  }
  return std::move(out).take();
}

CompressResult snappy_compress(ByteSpan input) {
  const std::size_t blocks = (input.size() + kSnappyBlockSize - 1) / kSnappyBlockSize;
  Bytes out;
  out.reserve(kXerialHeaderSize + blocks * (4 + snappy::MaxCompressedLength(kSnappyBlockSize)));
  out.resize(kXerialHeaderSize);
  std::memcpy(out.data(), kXerialMagic.data(), kXerialMagic.size());
  store_be<std::int32_t>(out.data() + kXerialMagic.size(), kXerialVersion);
  store_be<std::int32_t>(out.data() + kXerialMagic.size() + 4, kXerialCompatibleVersion);
  for (std::size_t offset = 0; offset < input.size(); offset += kSnappyBlockSize) {
    const ByteSpan chunk = input.subspan(offset, std::min(kSnappyBlockSize, input.size() - offset));
    const std::size_t at = out.size();
    out.resize(at + 4 + snappy::MaxCompressedLength(chunk.size()));  // within the reservation
    std::size_t compressed = 0;
    snappy::RawCompress(as<char>(chunk.data()), chunk.size(), as<char>(out.data() + at + 4), &compressed);
    store_be<std::int32_t>(out.data() + at, static_cast<std::int32_t>(compressed));
    out.resize(at + 4 + compressed);
  }
  return out;
}

// --- lz4 --------------------------------------------------------------------------------------

struct Lz4DctxFree {
  void operator()(LZ4F_dctx* ctx) const noexcept { LZ4F_freeDecompressionContext(ctx); }
};

CompressResult lz4_decompress(ByteSpan input, std::size_t max_output_bytes) {
  LZ4F_dctx* raw = nullptr;
  if (LZ4F_isError(LZ4F_createDecompressionContext(&raw, LZ4F_VERSION))) {
    return unexpected(CompressionError::kCodecFailure);
  }
  const std::unique_ptr<LZ4F_dctx, Lz4DctxFree> ctx(raw);
  BoundedOutput out(max_output_bytes, input.size());
  std::size_t pos = 0;
  for (;;) {
    const MutableByteSpan space = out.next();
    std::size_t produced = space.size();
    std::size_t consumed = input.size() - pos;
    const std::size_t hint =
        LZ4F_decompress(ctx.get(), space.data(), &produced, input.data() + pos, &consumed, nullptr);
    if (LZ4F_isError(hint)) {
      // LZ4F_getErrorCode() is not in the stable API; the names are ("ERROR_" + enumerator).
      if (std::string_view(LZ4F_getErrorName(hint)) == "ERROR_allocation_failed") {
        return unexpected(CompressionError::kCodecFailure);
      }
      return unexpected(CompressionError::kCorrupt);
    }
    pos += consumed;
    if (auto s = out.commit(produced); !s) return unexpected(s.error());
    // hint 0: a frame ended with all its output flushed; more input is another frame.
    if (hint == 0 && pos == input.size()) return std::move(out).take();
    if (produced == 0 && consumed == 0) return unexpected(CompressionError::kCorrupt);  // truncated
  }
}

CompressResult lz4_compress(ByteSpan input, int level) {
  if (level == kDefaultCompressionLevel) level = kLz4DefaultLevel;
  if (level < kLz4MinLevel || level > kLz4MaxLevel) return unexpected(CompressionError::kInvalidLevel);
  LZ4F_preferences_t prefs{};
  static_assert(kLz4BlockSize == 64 * 1024, "LZ4F_max64KB below");
  prefs.frameInfo.blockSizeID = LZ4F_max64KB;
  prefs.frameInfo.blockMode = LZ4F_blockIndependent;
  prefs.frameInfo.contentChecksumFlag = LZ4F_noContentChecksum;
  prefs.frameInfo.blockChecksumFlag = LZ4F_noBlockChecksum;
  prefs.frameInfo.frameType = LZ4F_frame;
  prefs.frameInfo.contentSize = 0;  // not written
  prefs.compressionLevel = level;
  Bytes out(LZ4F_compressFrameBound(input.size(), &prefs));
  const std::size_t n = LZ4F_compressFrame(out.data(), out.size(), input.data(), input.size(), &prefs);
  if (LZ4F_isError(n)) return unexpected(CompressionError::kCodecFailure);
  out.resize(n);
  return out;
}

// --- zstd -------------------------------------------------------------------------------------

struct ZstdDctxFree {
  void operator()(ZSTD_DCtx* ctx) const noexcept { ZSTD_freeDCtx(ctx); }
};

int zstd_window_log_max(std::size_t max_output_bytes) noexcept {
  const int needed = max_output_bytes <= 1 ? 0 : static_cast<int>(std::bit_width(max_output_bytes - 1));
  return std::clamp(needed, kZstdMinWindowLog, kZstdMaxWindowLog);
}

CompressionError zstd_error(std::size_t code) noexcept {
  switch (ZSTD_getErrorCode(code)) {
    case ZSTD_error_frameParameter_windowTooLarge:
      return CompressionError::kOutputTooLarge;
    case ZSTD_error_memory_allocation:
      return CompressionError::kCodecFailure;
    default:
      return CompressionError::kCorrupt;
  }
}

CompressResult zstd_decompress(ByteSpan input, std::size_t max_output_bytes) {
  const std::unique_ptr<ZSTD_DCtx, ZstdDctxFree> ctx(ZSTD_createDCtx());
  if (!ctx) return unexpected(CompressionError::kCodecFailure);
  const std::size_t set = ZSTD_DCtx_setParameter(ctx.get(), ZSTD_d_windowLogMax, zstd_window_log_max(max_output_bytes));
  if (ZSTD_isError(set)) return unexpected(CompressionError::kCodecFailure);
  // A declared content size above the limit fails before any window is allocated.
  const unsigned long long declared = ZSTD_getFrameContentSize(input.data(), input.size());
  if (declared != ZSTD_CONTENTSIZE_UNKNOWN && declared != ZSTD_CONTENTSIZE_ERROR && declared > max_output_bytes) {
    return unexpected(CompressionError::kOutputTooLarge);
  }
  BoundedOutput out(max_output_bytes, input.size());
  ZSTD_inBuffer in{input.data(), input.size(), 0};
  for (;;) {
    const MutableByteSpan space = out.next();
    ZSTD_outBuffer o{space.data(), space.size(), 0};
    const std::size_t consumed_before = in.pos;
    const std::size_t hint = ZSTD_decompressStream(ctx.get(), &o, &in);
    if (ZSTD_isError(hint)) return unexpected(zstd_error(hint));
    if (auto s = out.commit(o.pos); !s) return unexpected(s.error());
    // hint 0: a frame ended with all its output flushed; more input is another frame.
    if (hint == 0 && in.pos == in.size) return std::move(out).take();
    if (o.pos == 0 && in.pos == consumed_before) return unexpected(CompressionError::kCorrupt);  // truncated
  }
}

CompressResult zstd_compress(ByteSpan input, int level) {
  if (level == kDefaultCompressionLevel) level = kZstdDefaultLevel;
  if (level < ZSTD_minCLevel() || level > kZstdMaxLevel) return unexpected(CompressionError::kInvalidLevel);
  Bytes out(ZSTD_compressBound(input.size()));
  const std::size_t n = ZSTD_compress(out.data(), out.size(), input.data(), input.size(), level);
  if (ZSTD_isError(n)) return unexpected(CompressionError::kCodecFailure);
  out.resize(n);
  return out;
}

CompressResult copy_bounded(ByteSpan input, std::size_t max_output_bytes) {
  if (input.size() > max_output_bytes) return unexpected(CompressionError::kOutputTooLarge);
  return Bytes(input.begin(), input.end());
}

}  // namespace

Result<std::vector<std::byte>, CompressionError> decompress(Compression codec, ByteSpan input,
                                                            std::size_t max_output_bytes) {
  switch (codec) {
    case Compression::none:
      return copy_bounded(input, max_output_bytes);
    case Compression::gzip:
      return gzip_decompress(input, max_output_bytes);
    case Compression::snappy:
      return snappy_decompress(input, max_output_bytes);
    case Compression::lz4:
      return lz4_decompress(input, max_output_bytes);
    case Compression::zstd:
      return zstd_decompress(input, max_output_bytes);
  }
  return unexpected(CompressionError::kUnknownCodec);
}

Result<std::vector<std::byte>, CompressionError> compress(Compression codec, ByteSpan input, int level) {
  WEIR_ASSERT(input.size() <= kMaxInputBytes, "{} bytes do not fit a records section", input.size());
  switch (codec) {
    case Compression::none:
      return Bytes(input.begin(), input.end());
    case Compression::gzip:
      return gzip_compress(input, level);
    case Compression::snappy:
      return snappy_compress(input);
    case Compression::lz4:
      return lz4_compress(input, level);
    case Compression::zstd:
      return zstd_compress(input, level);
  }
  return unexpected(CompressionError::kUnknownCodec);
}

Result<RecordsSection, CompressionError> read_records_section(const RecordBatchView& batch,
                                                              std::size_t max_output_bytes) {
  if (batch.compression_id() > kMaxCompressionId) return unexpected(CompressionError::kUnknownCodec);
  RecordsSection section;
  section.records_count_ = batch.records_count();
  section.last_offset_delta_ = batch.last_offset_delta();
  if (!batch.is_compressed()) {
    section.view_ = batch.records_bytes();
    return section;
  }
  auto records = decompress(batch.compression(), batch.records_bytes(), max_output_bytes);
  if (!records) return unexpected(records.error());
  section.decompressed_ = std::move(*records);
  section.owned_ = true;
  return section;
}

Result<std::vector<std::byte>, CompressionError> compress_batch(const RecordBatchView& batch, Compression codec,
                                                                int level) {
  WEIR_ASSERT(!batch.is_compressed(), "compress_batch() of a batch already compressed (codec {})",
              batch.compression_id());
  auto records = compress(codec, batch.records_bytes(), level);
  if (!records) return unexpected(records.error());
  const std::size_t batch_length = kHeaderSize - kLogOverhead + records->size();
  WEIR_ASSERT(batch_length <= kMaxInputBytes, "compressed batch of {} bytes", batch_length);

  Bytes out(kHeaderSize + records->size());
  std::memcpy(out.data(), batch.bytes().data(), kHeaderSize);
  std::ranges::copy(*records, out.begin() + kHeaderSize);
  const auto attributes = static_cast<std::int16_t>((batch.attributes() & ~kCompressionMask) |
                                                    static_cast<std::int16_t>(codec));
  store_be<std::int32_t>(out.data() + kBatchLengthOffset, static_cast<std::int32_t>(batch_length));
  store_be<std::int16_t>(out.data() + kAttributesOffset, attributes);
  store_be<std::uint32_t>(out.data() + kCrcOffset, crc32c(ByteSpan(out).subspan(kAttributesOffset)));
  return out;
}

}  // namespace weir::record
