// StreamingRecordReader: the records of compressed batches read while they decompress, with the
// same checks as RecordReader, the decompression limits, and memory bounded by the window plus
// one record.
#include "protocol/record/record_stream.h"

#include <gtest/gtest.h>
#include <snappy.h>
#include <sys/resource.h>
#include <zlib.h>

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <variant>
#include <vector>

#include "base/crc32c.h"
#include "base/varint.h"
#include "protocol/record/compression.h"
#include "protocol/record/record.h"
#include "protocol/record/record_batch.h"
#include "protocol/record/record_batch_builder.h"
#include "test_util.h"

namespace weir::record {

inline std::ostream& operator<<(std::ostream& os, const StreamError& e) {
  if (std::holds_alternative<Errc>(e)) return os << to_string(std::get<Errc>(e));
  return os << to_string(std::get<CompressionError>(e));
}

namespace {

using Bytes = std::vector<std::byte>;

constexpr std::size_t kKiB = 1024;
constexpr std::size_t kMiB = 1024 * kKiB;
constexpr DecompressionLimits kRoomy{512 * kMiB, 0};

struct Seen {
  std::int32_t offset_delta;
  std::optional<std::string> key;
  std::optional<std::string> value;
  std::int32_t headers;
  bool operator==(const Seen&) const = default;
};

Seen seen(const RecordView& r) {
  auto str = [](const std::optional<ByteSpan>& b) -> std::optional<std::string> {
    if (!b) return std::nullopt;
    return std::string(as_string_view(*b));
  };
  return Seen{r.offset_delta, str(r.key), str(r.value), r.headers.size()};
}

// An uncompressed batch of `count` records: key "k<i>" (none for every third), a value of `value_bytes`
// bytes of text, one header on odd records.
Bytes plain_batch(int count, std::size_t value_bytes) {
  RecordBatchBuilder builder;
  const Header header[] = {{"h", as_bytes("v")}};
  for (int i = 0; i < count; ++i) {
    std::string value(value_bytes, static_cast<char>('a' + i % 26));
    const std::string key = "k" + std::to_string(i);
    builder.append(1700000000000 + i, i % 3 == 2 ? std::nullopt : std::optional(as_bytes(key)), as_bytes(value),
                   i % 2 == 1 ? std::span<const Header>(header) : std::span<const Header>());
  }
  return builder.build();
}

std::vector<Seen> read_plain(const Bytes& plain) {
  std::vector<Seen> out;
  EXPECT_TRUE(for_each_record(*RecordBatchView::from(plain), [&](const RecordView& r) { out.push_back(seen(r)); }));
  return out;
}

Result<std::vector<Seen>, StreamError> read_streamed(const Bytes& batch, DecompressionLimits limits) {
  auto view = RecordBatchView::from(batch);
  EXPECT_TRUE(view.has_value());
  std::vector<Seen> out;
  auto ok = for_each_streamed_record(*view, limits, [&](const RecordView& r) { out.push_back(seen(r)); });
  if (!ok) return unexpected(ok.error());
  return out;
}

// `plain` with its records section replaced by `section` and the compression bits set to `codec`
// (batchLength and CRC recomputed): how a test makes batches whose stream is damaged on purpose.
Bytes with_records_section(const Bytes& plain, Compression codec, ByteSpan section) {
  Bytes out(plain.begin(), plain.begin() + kHeaderSize);
  out.insert(out.end(), section.begin(), section.end());
  const auto attributes = static_cast<std::int16_t>(
      (load_be<std::int16_t>(out.data() + kAttributesOffset) & ~kCompressionMask) | static_cast<std::int16_t>(codec));
  store_be<std::int16_t>(out.data() + kAttributesOffset, attributes);
  store_be<std::int32_t>(out.data() + kBatchLengthOffset, static_cast<std::int32_t>(out.size() - kLogOverhead));
  store_be<std::uint32_t>(out.data() + kCrcOffset, crc32c(ByteSpan(out).subspan(kAttributesOffset)));
  return out;
}

ByteSpan records_of(const Bytes& batch) { return RecordBatchView::from(batch)->records_bytes(); }

Bytes raw_snappy(ByteSpan input) {
  std::string out;
  snappy::Compress(reinterpret_cast<const char*>(input.data()), input.size(), &out);
  const auto b = as_bytes(out);
  return Bytes(b.begin(), b.end());
}

// The codecs as clients write them; snappy twice: xerial framing (Java) and a raw block
// (librdkafka).
enum class Framing { kGzip, kSnappyXerial, kSnappyRaw, kLz4, kZstd };
constexpr Framing kFramings[] = {Framing::kGzip, Framing::kSnappyXerial, Framing::kSnappyRaw, Framing::kLz4,
                                 Framing::kZstd};

Compression codec_of(Framing f) {
  switch (f) {
    case Framing::kGzip:
      return Compression::gzip;
    case Framing::kSnappyXerial:
    case Framing::kSnappyRaw:
      return Compression::snappy;
    case Framing::kLz4:
      return Compression::lz4;
    case Framing::kZstd:
      return Compression::zstd;
  }
  return Compression::none;
}

std::string framing_name(const ::testing::TestParamInfo<Framing>& info) {
  constexpr const char* kNames[] = {"Gzip", "SnappyXerial", "SnappyRaw", "Lz4", "Zstd"};
  return kNames[static_cast<int>(info.param)];
}

Bytes compressed(const Bytes& plain, Framing f) {
  if (f == Framing::kSnappyRaw) return with_records_section(plain, Compression::snappy, raw_snappy(records_of(plain)));
  auto packed = compress_batch(*RecordBatchView::from(plain), codec_of(f));
  EXPECT_TRUE(packed.has_value());
  return *packed;
}

class StreamingCodecTest : public ::testing::TestWithParam<Framing> {};
INSTANTIATE_TEST_SUITE_P(Codecs, StreamingCodecTest, ::testing::ValuesIn(kFramings), framing_name);

TEST_P(StreamingCodecTest, ReadsTheSameRecordsAsTheUncompressedBatch) {
  // Records smaller and larger than the window, so some straddle window refills.
  for (std::size_t value_bytes : {std::size_t{10}, std::size_t{1000}, 3 * kStreamWindowBytes}) {
    const Bytes plain = plain_batch(40, value_bytes);
    auto streamed = read_streamed(compressed(plain, GetParam()), kRoomy);
    ASSERT_TRUE(streamed.has_value()) << streamed.error();
    EXPECT_EQ(*streamed, read_plain(plain)) << value_bytes;
  }
}

TEST_P(StreamingCodecTest, TruncatedStreamIsCorrupt) {
  const Bytes plain = plain_batch(20, 500);
  const Bytes packed = compressed(plain, GetParam());
  const ByteSpan section = records_of(packed);
  for (std::size_t keep : {section.size() / 2, section.size() - 1}) {
    auto streamed = read_streamed(with_records_section(plain, codec_of(GetParam()), section.first(keep)), kRoomy);
    ASSERT_FALSE(streamed.has_value()) << keep;
    // Cut inside the stream: the decompressor notices, or (when the cut falls after the records
    // it has produced) the records run out first.
    const bool corrupt = streamed.error() == StreamError(CompressionError::kCorrupt) ||
                         streamed.error() == StreamError(Errc::malformed_record);
    EXPECT_TRUE(corrupt) << streamed.error();
  }
}

TEST_P(StreamingCodecTest, SizeLimitStopsTheStreamOneByteOverIt) {
  const Bytes plain = plain_batch(30, 2000);
  const Bytes packed = compressed(plain, GetParam());
  const std::size_t size = records_of(plain).size();
  EXPECT_TRUE(read_streamed(packed, {size, 0}).has_value());
  auto over = read_streamed(packed, {size - 1, 0});
  ASSERT_FALSE(over.has_value());
  EXPECT_EQ(over.error(), StreamError(CompressionError::kOutputTooLarge));
}

TEST_P(StreamingCodecTest, RatioLimitStopsAStreamThatExpandsMore) {
  // 30 records of 20,000 equal bytes compress well with every codec (snappy: ~21x at best).
  const Bytes plain = plain_batch(30, 20000);
  const Bytes packed = compressed(plain, GetParam());
  const std::size_t ratio = records_of(plain).size() / records_of(packed).size();
  ASSERT_GE(ratio, 10u);
  EXPECT_TRUE(read_streamed(packed, {512 * kMiB, static_cast<std::uint32_t>(ratio + 1)}).has_value());
  auto over = read_streamed(packed, {512 * kMiB, static_cast<std::uint32_t>(ratio / 2)});
  ASSERT_FALSE(over.has_value());
  EXPECT_EQ(over.error(), StreamError(CompressionError::kRatioTooHigh));
}

TEST_P(StreamingCodecTest, BytesAfterTheLastRecordAreTrailing) {
  // The records section of a 5-record batch under a header that declares 4.
  const Bytes five = plain_batch(5, 100);
  RecordBatchBuilder four_builder;
  for (int i = 0; i < 4; ++i) four_builder.append(1, std::nullopt, as_bytes("x"));
  const Bytes four = four_builder.build();
  Bytes section = compressed(five, GetParam());
  const Bytes batch = with_records_section(four, codec_of(GetParam()), records_of(section));
  auto streamed = read_streamed(batch, kRoomy);
  ASSERT_FALSE(streamed.has_value());
  EXPECT_EQ(streamed.error(), StreamError(Errc::trailing_bytes));
}

TEST_P(StreamingCodecTest, FewerRecordsThanTheCountIsMalformed) {
  const Bytes three = plain_batch(3, 100);
  RecordBatchBuilder four_builder;
  for (int i = 0; i < 4; ++i) four_builder.append(1, std::nullopt, as_bytes("x"));
  const Bytes batch =
      with_records_section(four_builder.build(), codec_of(GetParam()), records_of(compressed(three, GetParam())));
  auto streamed = read_streamed(batch, kRoomy);
  ASSERT_FALSE(streamed.has_value());
  EXPECT_EQ(streamed.error(), StreamError(Errc::malformed_record));
}

TEST(StreamingRecordReaderTest, RecordErrorsAreThoseOfRecordReader) {
  // Offset deltas out of order inside a compressed batch.
  RecordBatchBuilder builder;
  builder.append_with_offset_delta(0, 1, std::nullopt, as_bytes("a"));
  builder.append_with_offset_delta(1, 1, std::nullopt, as_bytes("b"));
  Bytes plain = builder.build();
  // Swap the two records' offset deltas: the second record's delta byte becomes 0.
  auto view = RecordBatchView::from(plain);
  RecordReader reader = *RecordReader::of(*view);
  (void)*reader.next();
  auto second = **reader.next();
  const std::size_t delta_at = static_cast<std::size_t>(second.bytes.data() - plain.data()) + 3;  // len, attr, ts
  ASSERT_EQ(plain[delta_at], std::byte{2});                                                       // zigzag(1)
  plain[delta_at] = std::byte{0};
  const Bytes packed = with_records_section(plain, Compression::gzip, *compress(Compression::gzip, records_of(plain)));
  auto streamed = read_streamed(packed, kRoomy);
  ASSERT_FALSE(streamed.has_value());
  EXPECT_EQ(streamed.error(), StreamError(Errc::record_offset_out_of_order));
}

TEST(StreamingRecordReaderTest, RawSnappyBlockDeclaringMoreThanSnappyCanExpandIsCorrupt) {
  const Bytes plain = plain_batch(3, 100);
  // A raw block whose length prefix claims 1 GiB from a few hundred bytes.
  Bytes block;
  std::uint32_t declared = 1u << 30;
  while (declared >= 0x80) {
    block.push_back(static_cast<std::byte>((declared & 0x7f) | 0x80));
    declared >>= 7;
  }
  block.push_back(static_cast<std::byte>(declared));
  block.resize(300, std::byte{0});
  auto streamed = read_streamed(with_records_section(plain, Compression::snappy, block), kRoomy);
  ASSERT_FALSE(streamed.has_value());
  EXPECT_EQ(streamed.error(), StreamError(CompressionError::kCorrupt));
}

// --- a valid batch that decompresses to 100 MiB --------------------------------------------------

long peak_rss_kib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

// A gzip batch of `count` records, each a 1 MiB value of zeros, compressed record by record so
// that the whole records section never exists in memory here either.
Bytes gzip_batch_of_zero_records(int count) {
  const Bytes zeros(kMiB);
  z_stream zs{};
  EXPECT_EQ(deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  Bytes section;
  auto feed = [&](ByteSpan in, int flush) {
    zs.next_in = const_cast<Bytef*>(reinterpret_cast<const Bytef*>(in.data()));
    zs.avail_in = static_cast<uInt>(in.size());
    do {
      std::byte out[64 * 1024];
      zs.next_out = reinterpret_cast<Bytef*>(out);
      zs.avail_out = sizeof out;
      EXPECT_NE(deflate(&zs, flush), Z_STREAM_ERROR);
      section.insert(section.end(), out, out + (sizeof out - zs.avail_out));
    } while (zs.avail_out == 0 || zs.avail_in > 0);
  };
  for (int i = 0; i < count; ++i) {
    // length, attributes 0, timestampDelta 0, offsetDelta i, key null, value length, [value], 0 headers
    ByteBuffer head;
    ByteBuffer body;
    body.append_be<std::int8_t>(0);
    append_varlong(body, 0);
    append_varint(body, i);
    append_varint(body, -1);
    append_varint(body, static_cast<std::int32_t>(kMiB));
    append_varint(head, static_cast<std::int32_t>(body.size() + kMiB + 1));
    head.append(body.span());
    feed(head.span(), Z_NO_FLUSH);
    feed(zeros, Z_NO_FLUSH);
    const std::byte no_headers[] = {std::byte{0}};
    feed(no_headers, i + 1 == count ? Z_FINISH : Z_NO_FLUSH);
  }
  deflateEnd(&zs);
  // The header of a batch with `count` records and the same timestamps.
  RecordBatchBuilder builder;
  for (int i = 0; i < count; ++i) builder.append(0, std::nullopt, as_bytes(""));
  Bytes shape = builder.build();
  store_be<std::int64_t>(shape.data() + kBaseTimestampOffset, 1700000000000);
  store_be<std::int64_t>(shape.data() + kMaxTimestampOffset, 1700000000000);
  return with_records_section(shape, Compression::gzip, section);
}

TEST(StreamingRecordReaderTest, BatchDecompressingToAHundredMebibytesPassesInBoundedMemory) {
  const Bytes batch = gzip_batch_of_zero_records(100);
  EXPECT_LT(batch.size(), kMiB);  // about 100 KiB: deflate's best ratio is ~1030
  const long before_kib = peak_rss_kib();
  auto view = RecordBatchView::from(batch);
  ASSERT_TRUE(view->validate(BatchOrigin::client).has_value());
  auto reader = StreamingRecordReader::open(*view, {256 * kMiB, 5000});
  ASSERT_TRUE(reader.has_value());
  int records = 0;
  for (;;) {
    auto next = reader->next();
    ASSERT_TRUE(next.has_value()) << next.error();
    if (!*next) break;
    EXPECT_EQ((*next)->offset_delta, records);
    ASSERT_TRUE((*next)->value.has_value());
    EXPECT_EQ((*next)->value->size(), kMiB);
    ++records;
  }
  EXPECT_EQ(records, 100);
  EXPECT_GE(reader->decompressed_bytes(), 100 * kMiB);
  // The window grew to hold one 1 MiB record (doubling), never to the batch.
  EXPECT_LE(reader->window_bytes(), 2 * kMiB);
  EXPECT_LT(peak_rss_kib() - before_kib, static_cast<long>(8 * kMiB / kKiB));
}

TEST(StreamingRecordReaderTest, ZerosBombIsRefusedAtTheSizeLimitInBoundedMemory) {
  // 40 records of 1 MiB of zeros against a 32 MiB limit (the scenario tests send 300 MiB against
  // the 256 MiB default).
  const Bytes batch = gzip_batch_of_zero_records(40);
  const long before_kib = peak_rss_kib();
  auto streamed = for_each_streamed_record(*RecordBatchView::from(batch), {32 * kMiB, 5000}, [](const RecordView&) {});
  ASSERT_FALSE(streamed.has_value());
  EXPECT_EQ(streamed.error(), StreamError(CompressionError::kOutputTooLarge));
  EXPECT_LT(peak_rss_kib() - before_kib, static_cast<long>(8 * kMiB / kKiB));
}

}  // namespace
}  // namespace weir::record
