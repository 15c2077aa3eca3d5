#include "protocol/record/record_stream.h"

#include <lz4frame.h>
#include <snappy.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <limits>
#include <string_view>

#include "base/assert.h"
#include "base/varint.h"

namespace weir::record {

namespace {

using ReadResult = Result<std::size_t, CompressionError>;

template <class T>
T* as(std::byte* p) noexcept {
  return reinterpret_cast<T*>(p);
}
template <class T>
const T* as(const std::byte* p) noexcept {
  return reinterpret_cast<const T*>(p);
}

// --- gzip ---------------------------------------------------------------------------------------

class GzipDecompressor final : public Decompressor {
 public:
  GzipDecompressor(ByteSpan input, DecompressionLimits limits) : Decompressor(input, limits) {}
  ~GzipDecompressor() override {
    if (initialized_) inflateEnd(&zs_);
  }
  GzipDecompressor(const GzipDecompressor&) = delete;
  GzipDecompressor& operator=(const GzipDecompressor&) = delete;

  [[nodiscard]] bool init() {
    constexpr int kGzipWindowBits = 15 + 16;  // 32 KiB window, RFC 1952 wrapper
    if (inflateInit2(&zs_, kGzipWindowBits) != Z_OK) return false;
    initialized_ = true;
    WEIR_ASSERT(input_.size() <= std::numeric_limits<uInt>::max());
    zs_.next_in = const_cast<Bytef*>(as<Bytef>(input_.data()));
    zs_.avail_in = static_cast<uInt>(input_.size());
    return true;
  }

 private:
  ReadResult produce(MutableByteSpan out) override {
    if (done_) return 0;
    const auto avail_out = static_cast<uInt>(std::min<std::size_t>(out.size(), std::numeric_limits<uInt>::max()));
    for (;;) {
      zs_.next_out = as<Bytef>(out.data());
      zs_.avail_out = avail_out;
      const int rc = inflate(&zs_, Z_NO_FLUSH);
      const std::size_t n = avail_out - zs_.avail_out;
      switch (rc) {
        case Z_OK:
          break;
        case Z_STREAM_END:
          if (zs_.avail_in == 0) {
            done_ = true;
            return n;
          }
          // Another gzip member follows (Java's GZIPInputStream reads concatenated members too).
          if (inflateReset(&zs_) != Z_OK) return unexpected(CompressionError::kCodecFailure);
          break;
        case Z_MEM_ERROR:
          return unexpected(CompressionError::kCodecFailure);
        default:  // Z_BUF_ERROR (the input ended inside the stream), Z_DATA_ERROR, Z_NEED_DICT
          return unexpected(CompressionError::kCorrupt);
      }
      if (n > 0) return n;
    }
  }

  z_stream zs_{};
  bool initialized_ = false;
  bool done_ = false;
};

// --- snappy -------------------------------------------------------------------------------------

constexpr std::array<unsigned char, 8> kXerialMagic = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0x00};
constexpr std::size_t kXerialHeaderSize = kXerialMagic.size() + 4 + 4;  // magic, version, compatible
static_assert(kXerialHeaderSize == 16);

bool starts_with_xerial_magic(ByteSpan bytes) noexcept {
  return bytes.size() >= kXerialMagic.size() &&
         std::memcmp(bytes.data(), kXerialMagic.data(), kXerialMagic.size()) == 0;
}

class SnappyDecompressor final : public Decompressor {
 public:
  SnappyDecompressor(ByteSpan input, DecompressionLimits limits)
      : Decompressor(input, limits), reader_(input), raw_(!starts_with_xerial_magic(input)) {}

 private:
  ReadResult produce(MutableByteSpan out) override {
    while (at_ == block_.size()) {
      if (raw_) {
        if (raw_done_) return 0;
        raw_done_ = true;
        if (auto ok = decode_block(input_); !ok) return unexpected(ok.error());
        continue;
      }
      if (reader_.empty()) return 0;
      if (starts_with_xerial_magic(reader_.rest())) {  // a stream header, first or concatenated
        if (!reader_.skip(kXerialHeaderSize)) return unexpected(CompressionError::kCorrupt);
        continue;
      }
      const auto length = reader_.read_be<std::int32_t>();
      if (!length || *length < 0) return unexpected(CompressionError::kCorrupt);
      const auto block = reader_.read_bytes(static_cast<std::size_t>(*length));
      if (!block) return unexpected(CompressionError::kCorrupt);
      if (auto ok = decode_block(*block); !ok) return unexpected(ok.error());
    }
    const std::size_t n = std::min(out.size(), block_.size() - at_);
    std::memcpy(out.data(), block_.data() + at_, n);
    at_ += n;
    return n;
  }

  Status<CompressionError> decode_block(ByteSpan block) {
    std::size_t size = 0;
    if (!snappy::GetUncompressedLength(as<char>(block.data()), block.size(), &size)) {
      return unexpected(CompressionError::kCorrupt);
    }
    // Checked before allocating: more than the format can expand to is corrupt; more than the
    // batch may hold is too large.
    if (size > kSnappyMaxExpansion * block.size() + 64) return unexpected(CompressionError::kCorrupt);
    if (size > limits_.max_bytes - std::min<std::uint64_t>(limits_.max_bytes, produced())) {
      return unexpected(CompressionError::kOutputTooLarge);
    }
    block_.resize(size);
    at_ = 0;
    if (!snappy::RawUncompress(as<char>(block.data()), block.size(), as<char>(block_.data()))) {
      return unexpected(CompressionError::kCorrupt);
    }
    return {};
  }

  ByteReader reader_;
  bool raw_;
  bool raw_done_ = false;
  std::vector<std::byte> block_;
  std::size_t at_ = 0;
};

// --- lz4 ----------------------------------------------------------------------------------------

class Lz4Decompressor final : public Decompressor {
 public:
  Lz4Decompressor(ByteSpan input, DecompressionLimits limits) : Decompressor(input, limits) {}
  ~Lz4Decompressor() override {
    if (ctx_ != nullptr) LZ4F_freeDecompressionContext(ctx_);
  }
  Lz4Decompressor(const Lz4Decompressor&) = delete;
  Lz4Decompressor& operator=(const Lz4Decompressor&) = delete;

  [[nodiscard]] bool init() { return !LZ4F_isError(LZ4F_createDecompressionContext(&ctx_, LZ4F_VERSION)); }

 private:
  ReadResult produce(MutableByteSpan out) override {
    for (;;) {
      // hint 0: a frame ended with all its output flushed; more input is another frame.
      if (hint_ == 0 && pos_ == input_.size()) return 0;
      std::size_t produced = out.size();
      std::size_t consumed = input_.size() - pos_;
      hint_ = LZ4F_decompress(ctx_, out.data(), &produced, input_.data() + pos_, &consumed, nullptr);
      if (LZ4F_isError(hint_)) {
        // LZ4F_getErrorCode() is not in the stable API; the names are ("ERROR_" + enumerator).
        if (std::string_view(LZ4F_getErrorName(hint_)) == "ERROR_allocation_failed") {
          return unexpected(CompressionError::kCodecFailure);
        }
        return unexpected(CompressionError::kCorrupt);
      }
      pos_ += consumed;
      if (produced > 0) return produced;
      if (consumed == 0 && hint_ != 0) return unexpected(CompressionError::kCorrupt);  // truncated
    }
  }

  LZ4F_dctx* ctx_ = nullptr;
  std::size_t pos_ = 0;
  std::size_t hint_ = 1;
};

// --- zstd ---------------------------------------------------------------------------------------

class ZstdDecompressor final : public Decompressor {
 public:
  ZstdDecompressor(ByteSpan input, DecompressionLimits limits) : Decompressor(input, limits) {}
  ~ZstdDecompressor() override { ZSTD_freeDCtx(ctx_); }
  ZstdDecompressor(const ZstdDecompressor&) = delete;
  ZstdDecompressor& operator=(const ZstdDecompressor&) = delete;

  [[nodiscard]] Status<CompressionError> init() {
    ctx_ = ZSTD_createDCtx();
    if (ctx_ == nullptr) return unexpected(CompressionError::kCodecFailure);
    // At least 8 MiB, so that every level's streaming window fits, and at most zstd's default
    // limit; within that, no larger than the batch may be.
    constexpr int kMinWindowLog = 23;
    const std::size_t max = limits_.max_bytes;
    const int needed = max <= 1 ? 0 : static_cast<int>(std::bit_width(max - 1));
    const int window_log = std::clamp(needed, kMinWindowLog, kStreamZstdMaxWindowLog);
    if (ZSTD_isError(ZSTD_DCtx_setParameter(ctx_, ZSTD_d_windowLogMax, window_log))) {
      return unexpected(CompressionError::kCodecFailure);
    }
    const unsigned long long declared = ZSTD_getFrameContentSize(input_.data(), input_.size());
    if (declared != ZSTD_CONTENTSIZE_UNKNOWN && declared != ZSTD_CONTENTSIZE_ERROR && declared > max) {
      return unexpected(CompressionError::kOutputTooLarge);
    }
    return {};
  }

 private:
  ReadResult produce(MutableByteSpan out) override {
    for (;;) {
      // hint 0: a frame ended with all its output flushed; more input is another frame.
      if (hint_ == 0 && in_.pos == in_.size) return 0;
      ZSTD_outBuffer o{out.data(), out.size(), 0};
      const std::size_t before = in_.pos;
      hint_ = ZSTD_decompressStream(ctx_, &o, &in_);
      if (ZSTD_isError(hint_)) {
        // A window above the limit is data weir cannot decode, as corrupt data.
        if (ZSTD_getErrorCode(hint_) == ZSTD_error_memory_allocation) {
          return unexpected(CompressionError::kCodecFailure);
        }
        return unexpected(CompressionError::kCorrupt);
      }
      if (o.pos > 0) return o.pos;
      if (in_.pos == before && hint_ != 0) return unexpected(CompressionError::kCorrupt);  // truncated
    }
  }

  ZSTD_DCtx* ctx_ = nullptr;
  ZSTD_inBuffer in_{input_.data(), input_.size(), 0};
  std::size_t hint_ = 1;
};

template <class D>
Result<std::unique_ptr<Decompressor>, CompressionError> finish_open(std::unique_ptr<D> d, bool ok) {
  if (!ok) return unexpected(CompressionError::kCodecFailure);
  return std::unique_ptr<Decompressor>(std::move(d));
}

// Bytes a record's length prefix takes at most (a varint of an int32).
constexpr std::size_t kMaxLengthPrefixBytes = 5;

}  // namespace

// --- Decompressor -------------------------------------------------------------------------------

Result<std::unique_ptr<Decompressor>, CompressionError> Decompressor::open(Compression codec, ByteSpan input,
                                                                           DecompressionLimits limits) {
  switch (codec) {
    case Compression::gzip: {
      auto d = std::make_unique<GzipDecompressor>(input, limits);
      const bool ok = d->init();
      return finish_open(std::move(d), ok);
    }
    case Compression::snappy:
      return std::unique_ptr<Decompressor>(std::make_unique<SnappyDecompressor>(input, limits));
    case Compression::lz4: {
      auto d = std::make_unique<Lz4Decompressor>(input, limits);
      const bool ok = d->init();
      return finish_open(std::move(d), ok);
    }
    case Compression::zstd: {
      auto d = std::make_unique<ZstdDecompressor>(input, limits);
      if (auto ok = d->init(); !ok) return unexpected(ok.error());
      return std::unique_ptr<Decompressor>(std::move(d));
    }
    case Compression::none:
      break;
  }
  return unexpected(CompressionError::kUnknownCodec);
}

Result<std::size_t, CompressionError> Decompressor::read(MutableByteSpan out) {
  WEIR_ASSERT(!out.empty());
  if (error_) return unexpected(*error_);
  auto n = produce(out);
  if (!n) {
    error_ = n.error();
    return n;
  }
  produced_ += *n;
  if (produced_ > limits_.max_bytes) {
    error_ = CompressionError::kOutputTooLarge;
  } else if (limits_.max_ratio != 0 && produced_ > std::uint64_t{limits_.max_ratio} * input_.size()) {
    error_ = CompressionError::kRatioTooHigh;
  }
  if (error_) return unexpected(*error_);
  return n;
}

// --- StreamingRecordReader ----------------------------------------------------------------------

StreamingRecordReader::StreamingRecordReader(std::unique_ptr<Decompressor> source, std::int32_t count,
                                             std::int32_t last_offset_delta)
    : source_(std::move(source)), window_(kStreamWindowBytes), left_(count), last_offset_delta_(last_offset_delta) {}

Result<StreamingRecordReader, StreamError> StreamingRecordReader::open(const RecordBatchView& batch,
                                                                       DecompressionLimits limits) {
  WEIR_ASSERT(batch.is_compressed(), "streaming the records of an uncompressed batch");
  if (batch.compression_id() > kMaxCompressionId) return unexpected(CompressionError::kUnknownCodec);
  auto source = Decompressor::open(batch.compression(), batch.records_bytes(), limits);
  if (!source) return unexpected(source.error());
  return StreamingRecordReader(std::move(*source), batch.records_count(), batch.last_offset_delta());
}

Result<bool, CompressionError> StreamingRecordReader::fill(std::size_t n) {
  while (available() < n) {
    if (eof_) return false;
    if (end_ == window_.size()) {
      if (begin_ > 0) {  // move the unread bytes to the front
        std::memmove(window_.data(), window_.data() + begin_, available());
        end_ -= begin_;
        begin_ = 0;
      }
      // A record larger than the window: grow it (doubling, as its bytes arrive).
      if (end_ == window_.size()) window_.resize(window_.size() * 2);
    }
    auto got = source_->read(MutableByteSpan(window_).subspan(end_));
    if (!got) return unexpected(got.error());
    if (*got == 0) eof_ = true;
    end_ += *got;
  }
  return true;
}

Result<std::optional<RecordView>, StreamError> StreamingRecordReader::next() {
  if (error_) return unexpected(*error_);
  if (left_ <= 0) {
    if (left_ < 0) {
      error_ = Errc::invalid_record_count;
    } else if (auto more = fill(1); !more) {
      error_ = more.error();  // reading to the end verifies the stream's trailer and checksums
    } else if (*more) {
      error_ = Errc::trailing_bytes;
    }
    if (error_) return unexpected(*error_);
    return std::optional<RecordView>();
  }
  auto fail = [&](StreamError e) -> Result<std::optional<RecordView>, StreamError> {
    error_ = e;
    return unexpected(e);
  };
  if (auto ok = fill(kMaxLengthPrefixBytes); !ok) return fail(ok.error());
  ByteReader prefix(ByteSpan(window_).subspan(begin_, available()));
  auto length = read_varint(prefix);
  if (!length || *length < 0) return fail(Errc::malformed_record);
  const std::size_t size = prefix.position() + static_cast<std::size_t>(*length);
  auto whole = fill(size);
  if (!whole) return fail(whole.error());
  if (!*whole) return fail(Errc::malformed_record);  // the stream ends inside the record
  ByteReader reader(ByteSpan(window_).subspan(begin_, size));
  auto record = parse_record(reader, previous_offset_delta_, last_offset_delta_);
  if (!record) return fail(record.error());
  begin_ += size;
  previous_offset_delta_ = record->offset_delta;
  --left_;
  return std::optional<RecordView>(*record);
}

}  // namespace weir::record
