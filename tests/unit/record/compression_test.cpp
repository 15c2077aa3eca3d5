// Compression codecs: round trips, bounded decompression, malformed input, and golden batches
// written by the real clients.
//
// Golden batches (kJava*, kLibrdkafka*): the same four records,
//   offset 0, t=1700000000000, key "key-0", value "value-0"
//   offset 1, t=1700000000001, key null,    value "value-1", headers h1="hv", h2=null
//   offset 2, t=1700000000002, key "key-2", value null
//   offset 3, t=1700000000003, key "big",   value 70000 bytes cycling "0123456789a..z-"
// kJava*: MemoryRecords.withRecords(MAGIC_VALUE_V2, 0, Compression.<codec>().build(),
//   CREATE_TIME, records) from kafka-clients 4.3.1 (default levels: gzip -1, lz4 9, zstd 3).
// kLibrdkafka*: confluent-kafka 2.15.1 (librdkafka 2.15.1) producing to its mock cluster
//   (test.mock.num.brokers=1, linger.ms=200) with compression.type=<codec>, the batch cut out of
//   the Produce request as written to the socket (strace). librdkafka writes snappy as a raw
//   snappy block, without xerial framing, and partitionLeaderEpoch 0.
// The other direction was checked by hand when these vectors were made: batches from
// compress_batch() with every codec (default and other levels), and compress() streams of empty,
// small and 1 MiB random and text inputs, were all read back correctly by kafka-clients 4.3.1
// (MemoryRecords.readableRecords + ensureValid, Compression.wrapForInput).

#include "protocol/record/compression.h"

#include <gtest/gtest.h>
#include <lz4frame.h>
#include <snappy.h>
#include <sys/resource.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <ostream>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "protocol/record/record.h"
#include "protocol/record/record_batch.h"
#include "protocol/record/record_batch_builder.h"
#include "test_util.h"

namespace weir::record {

inline std::ostream& operator<<(std::ostream& os, CompressionError e) { return os << to_string(e); }
inline std::ostream& operator<<(std::ostream& os, Compression c) {
  return os << static_cast<int>(c);
}

namespace {

using Bytes = std::vector<std::byte>;
using testing::text;

// --- Golden batches (see the top of the file) ---

// 408 bytes.
constexpr std::string_view kJavaGzipBatch =
    "00000000000000000000018cffffffff02d38cfb810001000000030000018bcfe568000000018bcfe56803ffffff"
    "ffffffffffffffffffffff000000041f8b08000000000000ffedca494ec2601800d0afe44f435cb8e4046c4bda3a"
    "00c701ad94c189a180f7e31e9ec23589f102eedff2256f181137ebe65c94b7dd6c73688a3246d1eb657faa526aab"
    "d476a9adb341a4f45beb2c7e2efdc8f37cbe5c7c5ffa6555dfdd3f3c8e27d3d9fce9b97959b4cbd57af3faf6fef1"
    "b9dded0fddf174fe2a24499224499224499224499224499224499224499224499224499224499224499224499224"
    "49922449922449922449922449922449922449922449922449922449922449922449922449922449922449922449"
    "92244992244992244992244992244992244992244992244992244992244992244992244992244992244992244992"
    "24499224499224499224499224499224499224499224499224499224499224499224499224499224499224499224"
    "49922449922449922449922449922449922449922449922449922449fa578a2ba7b374d7b5110100";

// 3557 bytes.
constexpr std::string_view kJavaSnappyBatch =
    "000000000000000000000dd9ffffffff021d0e45ff0002000000030000018bcfe568000000018bcfe56803ffffff"
    "ffffffffffffffffffffff0000000482534e41505059000000000100000001000006648080025c240000000a6b65"
    "792d300e76616c75652d30002e000202010d0e3c31040468310468760468320116000404052bd0320100f6c50800"
    "060606626967e0c508303132333435363738396162636465666768696a6b6c6d6e6f707172737475767778797a2d"
    "fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe"
    "2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe25"
    "00fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500"
    "fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe"
    "2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe25"
    "00fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500"
    "fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe"
    "2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe25"
    "00fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500"
    "fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe"
    "2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe25"
    "00fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500"
    "fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe"
    "2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe25"
    "00fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500"
    "fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe"
    "2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe25"
    "00fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500"
    "fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe"
    "2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe25"
    "00fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500"
    "fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe"
    "2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe25"
    "00fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500"
    "fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe"
    "2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe25"
    "00fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500"
    "fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe"
    "2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe25"
    "00fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500"
    "fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe"
    "2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe25"
    "00fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500"
    "fe2500fe2500fe2500fe25005a250000000629808002907475767778797a2d303132333435363738396162636465"
    "666768696a6b6c6d6e6f70717273fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe25"
    "00fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500"
    "fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe"
    "2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe25"
    "00fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500"
    "fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe"
    "2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe25"
    "00fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500"
    "fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe"
    "2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe25"
    "00fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500"
    "fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe"
    "2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe25"
    "00fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500"
    "fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe"
    "2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe25"
    "00fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500"
    "fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe"
    "2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe25"
    "00fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500"
    "fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe"
    "2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe25"
    "00fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500"
    "fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe"
    "2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe25"
    "00fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500"
    "fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe"
    "2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe25"
    "00fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500"
    "fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe"
    "2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe25"
    "00fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500"
    "fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe"
    "2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe25006a2500000000ffb52390666768696a6b6c"
    "6d6e6f707172737475767778797a2d303132333435363738396162636465fe2500fe2500fe2500fe2500fe2500fe"
    "2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe25"
    "00fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500"
    "fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe"
    "2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe25"
    "00fe2500fe2500fe25003a25000000";

// 513 bytes.
constexpr std::string_view kJavaLz4Batch =
    "0000000000000000000001f5ffffffff020a8cdae70003000000030000018bcfe568000000018bcfe56803ffffff"
    "ffffffffffffffffffffff0000000404224d1860408270010000f309240000000a6b65792d300e76616c75652d30"
    "002e000202010e00f101310404683104687604683201160004042b00ff26320100f6c50800060606626967e0c508"
    "303132333435363738396162636465666768696a6b6c6d6e6f707172737475767778797a2d2500ffffffffffffff"
    "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"
    "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"
    "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"
    "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"
    "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"
    "ffffffffffffffffffffffffffffffffffffff7f50616263646541000000ff16666768696a6b6c6d6e6f70717273"
    "7475767778797a2d3031323334353637383961626364652500ffffffffffffffffffffffffffffffffff89507475"
    "76770000000000";

// 182 bytes.
constexpr std::string_view kJavaZstdBatch =
    "0000000000000000000000aaffffffff02a96d69ce0004000000030000018bcfe568000000018bcfe56803ffffff"
    "ffffffffffffffffffffff0000000428b52ffd00586c0300e405240000000a6b65792d300e76616c75652d30002e"
    "0002020131040468310468760468320116000404320100f6c50800060606626967e0c50830313233343536373839"
    "6162636465666768696a6b6c6d6e6f707172737475767778797a2d00030085148154869c128bc8e618010000";

// 408 bytes.
constexpr std::string_view kLibrdkafkaGzipBatch =
    "00000000000000000000018c0000000002defa3e600001000000030000018bcfe568000000018bcfe56803ffffff"
    "ffffffffffffffffffffff000000041f8b0800000000000003edca494ec2601800d0afe44f435cb8e4046c4bda3a"
    "00c701ad94c189a180f7e31e9ec23589f102eedff2256f181137ebe65c94b7dd6c73688a3246d1eb657faa526aab"
    "d476a9adb341a4f45beb2c7e2efdc8f37cbe5c7c5ffa6555dfdd3f3c8e27d3d9fce9b97959b4cbd57af3faf6fef1"
    "b9dded0fddf174fe2a24499224499224499224499224499224499224499224499224499224499224499224499224"
    "49922449922449922449922449922449922449922449922449922449922449922449922449922449922449922449"
    "92244992244992244992244992244992244992244992244992244992244992244992244992244992244992244992"
    "24499224499224499224499224499224499224499224499224499224499224499224499224499224499224499224"
    "49922449922449922449922449922449922449922449922449922449fa578a2ba7b374d7b5110100";

// 3486 bytes.
constexpr std::string_view kLibrdkafkaSnappyBatch =
    "000000000000000000000d920000000002c673da120002000000030000018bcfe568000000018bcfe56803ffffff"
    "ffffffffffffffffffffff00000004b5a3045c240000000a6b65792d300e76616c75652d30002e000202010d0e3c"
    "31040468310468760468320116000404052bd0320100f6c50800060606626967e0c5083031323334353637383961"
    "62636465666768696a6b6c6d6e6f707172737475767778797a2dfe2500fe2500fe2500fe2500fe2500fe2500fe25"
    "00fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500"
    "fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe"
    "2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe25"
    "00fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500"
    "fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe"
    "2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe25"
    "00fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500"
    "fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe"
    "2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe25"
    "00fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500"
    "fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe"
    "2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe25"
    "00fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500"
    "fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe"
    "2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe25"
    "00fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500"
    "fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe"
    "2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe25"
    "00fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500"
    "fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe"
    "2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe25"
    "00fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500"
    "fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe"
    "2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe25"
    "00fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500"
    "fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe"
    "2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe25"
    "00fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500"
    "fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe"
    "2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe25"
    "00fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500"
    "fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe"
    "2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe25"
    "00fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500"
    "fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe"
    "2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe25"
    "00fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500"
    "fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe"
    "2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe25"
    "00fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500"
    "fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe"
    "2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe25"
    "00fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500"
    "fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe"
    "2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe25"
    "00fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500"
    "fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe"
    "2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe25"
    "00fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500"
    "fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe"
    "2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe25"
    "00fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500"
    "fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe"
    "2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe25"
    "00fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500"
    "fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe"
    "2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe25"
    "00fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500"
    "fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe"
    "2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe25"
    "00fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500"
    "fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe"
    "2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe25"
    "00fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500"
    "fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe"
    "2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe25"
    "00fe2500fe2500fe25005a250090666768696a6b6c6d6e6f707172737475767778797a2d30313233343536373839"
    "6162636465fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe25"
    "00fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500"
    "fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe"
    "2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe25"
    "00fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe2500fe25003a25000000";

// 513 bytes.
constexpr std::string_view kLibrdkafkaLz4Batch =
    "0000000000000000000001f500000000020a8cdae70003000000030000018bcfe568000000018bcfe56803ffffff"
    "ffffffffffffffffffffff0000000404224d1860408270010000f309240000000a6b65792d300e76616c75652d30"
    "002e000202010e00f101310404683104687604683201160004042b00ff26320100f6c50800060606626967e0c508"
    "303132333435363738396162636465666768696a6b6c6d6e6f707172737475767778797a2d2500ffffffffffffff"
    "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"
    "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"
    "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"
    "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"
    "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"
    "ffffffffffffffffffffffffffffffffffffff7f50616263646541000000ff16666768696a6b6c6d6e6f70717273"
    "7475767778797a2d3031323334353637383961626364652500ffffffffffffffffffffffffffffffffff89507475"
    "76770000000000";

// 179 bytes.
constexpr std::string_view kLibrdkafkaZstdBatch =
    "0000000000000000000000a700000000022a7a71f60004000000030000018bcfe568000000018bcfe56803ffffff"
    "ffffffffffffffffffffff0000000428b52ffd00586d0300e405240000000a6b65792d300e76616c75652d30002e"
    "0002020131040468310468760468320116000404320100f6c50800060606626967e0c50830313233343536373839"
    "6162636465666768696a6b6c6d6e6f707172737475767778797a2d00030085148154869c128bc8e618";

constexpr std::size_t kKiB = 1024;
constexpr std::size_t kMiB = 1024 * kKiB;
constexpr std::size_t kGiB = 1024 * kMiB;

constexpr Compression kCodecs[] = {Compression::gzip, Compression::snappy, Compression::lz4,
                                   Compression::zstd};

std::string codec_name(Compression c) {
  switch (c) {
    case Compression::none:
      return "none";
    case Compression::gzip:
      return "gzip";
    case Compression::snappy:
      return "snappy";
    case Compression::lz4:
      return "lz4";
    case Compression::zstd:
      return "zstd";
  }
  return "unknown";
}

Bytes random_bytes(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Bytes out(n);
  for (auto& b : out) b = static_cast<std::byte>(rng());
  return out;
}

// Text-like bytes: words from a small vocabulary in random order.
Bytes compressible_bytes(std::size_t n, std::uint64_t seed) {
  static constexpr std::string_view kWords[] = {"broker ", "partition ", "offset ", "leader ",
                                                "replica ", "segment ", "batch ",  "record "};
  std::mt19937_64 rng(seed);
  Bytes out;
  out.reserve(n + 16);
  while (out.size() < n) {
    const ByteSpan word = as_bytes(kWords[rng() % std::size(kWords)]);
    out.insert(out.end(), word.begin(), word.end());
  }
  out.resize(n);
  return out;
}

Bytes from_hex(std::string_view hex) {
  Bytes out;
  out.reserve(hex.size() / 2);
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<std::byte>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

Bytes concat(const Bytes& a, const Bytes& b) {
  Bytes out = a;
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

Bytes compressed(Compression codec, ByteSpan input, int level = kDefaultCompressionLevel) {
  auto out = compress(codec, input, level);
  EXPECT_TRUE(out.has_value()) << to_string(out.error());
  return out.value_or(Bytes{});
}

long peak_rss_kib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

// --- Round trips, per codec ---------------------------------------------------------------------

class CodecTest : public ::testing::TestWithParam<Compression> {};

std::string codec_param_name(const ::testing::TestParamInfo<Compression>& param) {
  return codec_name(param.param);
}

INSTANTIATE_TEST_SUITE_P(AllCodecs, CodecTest, ::testing::ValuesIn(kCodecs), codec_param_name);

void expect_round_trip(Compression codec, const Bytes& input) {
  const Bytes packed = compressed(codec, input);
  auto unpacked = decompress(codec, packed, input.size());
  ASSERT_TRUE(unpacked.has_value()) << to_string(unpacked.error());
  EXPECT_TRUE(*unpacked == input);
}

TEST_P(CodecTest, EmptyInputRoundTrips) { expect_round_trip(GetParam(), {}); }

TEST_P(CodecTest, SmallInputRoundTrips) {
  const ByteSpan hello = as_bytes("hello, weir");
  expect_round_trip(GetParam(), Bytes(hello.begin(), hello.end()));
  expect_round_trip(GetParam(), Bytes{std::byte{0}});
}

TEST_P(CodecTest, OneMebibyteOfRandomBytesRoundTrips) {
  expect_round_trip(GetParam(), random_bytes(kMiB, 1));
}

TEST_P(CodecTest, OneMebibyteOfCompressibleBytesRoundTripsSmaller) {
  const Bytes input = compressible_bytes(kMiB, 2);
  expect_round_trip(GetParam(), input);
  EXPECT_LT(compressed(GetParam(), input).size(), input.size() / 2);
}

TEST_P(CodecTest, OutputExactlyAtTheLimitIsAcceptedOneByteMoreIsNot) {
  const Bytes input = compressible_bytes(100 * kKiB + 7, 3);
  const Bytes packed = compressed(GetParam(), input);
  EXPECT_TRUE(decompress(GetParam(), packed, input.size()).has_value());
  EXPECT_EQ(decompress(GetParam(), packed, input.size() - 1).error(),
            CompressionError::kOutputTooLarge);
  EXPECT_EQ(decompress(GetParam(), packed, 0).error(), CompressionError::kOutputTooLarge);
}

TEST_P(CodecTest, EmptyInputIsCorrupt) {
  EXPECT_EQ(decompress(GetParam(), {}, kMiB).error(), CompressionError::kCorrupt);
}

TEST_P(CodecTest, TruncatedStreamIsCorrupt) {
  const Bytes input = random_bytes(70 * kKiB, 4);
  const Bytes packed = compressed(GetParam(), input);
  // Cut inside the last block, inside the first block, and inside the stream header.
  for (std::size_t keep : {packed.size() - 1, packed.size() / 4, std::size_t{3}}) {
    const ByteSpan cut = ByteSpan(packed).first(keep);
    EXPECT_EQ(decompress(GetParam(), cut, kMiB).error(), CompressionError::kCorrupt)
        << "kept " << keep << " of " << packed.size();
  }
}

TEST_P(CodecTest, TrailingGarbageIsCorrupt) {
  const Bytes packed = concat(compressed(GetParam(), as_bytes("payload")), Bytes(3, std::byte{0x5a}));
  EXPECT_EQ(decompress(GetParam(), packed, kMiB).error(), CompressionError::kCorrupt);
}

TEST_P(CodecTest, RandomGarbageIsRejected) {
  for (std::uint64_t seed = 10; seed < 20; ++seed) {
    const Bytes garbage = random_bytes(1000, seed);
    EXPECT_FALSE(decompress(GetParam(), garbage, kMiB).has_value()) << "seed " << seed;
  }
}

TEST_P(CodecTest, ConcatenatedStreamsDecompressToTheConcatenation) {
  const Bytes a = compressible_bytes(50 * kKiB, 5);
  const Bytes b = random_bytes(10 * kKiB, 6);
  auto out = decompress(GetParam(), concat(compressed(GetParam(), a), compressed(GetParam(), b)), kMiB);
  ASSERT_TRUE(out.has_value()) << to_string(out.error());
  EXPECT_TRUE(*out == concat(a, b));
}

// Mostly for sanitizer builds: damaged streams never read or write out of bounds.
TEST_P(CodecTest, DamagedStreamsAreRejectedOrStayWithinTheLimit) {
  const Bytes input = compressible_bytes(20 * kKiB, 14);
  const Bytes packed = compressed(GetParam(), input);
  std::mt19937_64 rng(15);
  constexpr std::size_t kLimit = 32 * kKiB;
  for (int i = 0; i < 2000; ++i) {
    Bytes damaged = packed;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) damaged[rng() % damaged.size()] ^= static_cast<std::byte>(1 + rng() % 255);
    if (rng() % 4 == 0) damaged.resize(rng() % damaged.size());
    auto out = decompress(GetParam(), damaged, kLimit);
    if (out.has_value()) {
      EXPECT_LE(out->size(), kLimit);
    }
  }
}

// --- Levels ---------------------------------------------------------------------------------------

TEST(CompressionLevelTest, KafkaLevelRangesAreAccepted) {
  const Bytes input = compressible_bytes(64 * kKiB, 7);
  const std::pair<Compression, int> valid[] = {
      {Compression::gzip, -1}, {Compression::gzip, 1},  {Compression::gzip, 9},
      {Compression::lz4, 1},   {Compression::lz4, 2},   {Compression::lz4, 17},
      {Compression::zstd, -5}, {Compression::zstd, 0},  {Compression::zstd, 1},
      {Compression::zstd, 22}, {Compression::snappy, 5}};
  for (const auto& [codec, level] : valid) {
    const Bytes packed = compressed(codec, input, level);
    auto out = decompress(codec, packed, input.size());
    ASSERT_TRUE(out.has_value()) << codec_name(codec) << " level " << level;
    EXPECT_TRUE(*out == input) << codec_name(codec) << " level " << level;
  }
}

TEST(CompressionLevelTest, LevelsOutsideKafkaRangesAreInvalid) {
  const std::pair<Compression, int> invalid[] = {{Compression::gzip, 0},  {Compression::gzip, 10},
                                                 {Compression::gzip, -2}, {Compression::lz4, 0},
                                                 {Compression::lz4, 18},  {Compression::zstd, 23},
                                                 {Compression::zstd, ZSTD_minCLevel() - 1}};
  for (const auto& [codec, level] : invalid) {
    EXPECT_EQ(compress(codec, as_bytes("x"), level).error(), CompressionError::kInvalidLevel)
        << codec_name(codec) << " level " << level;
  }
}

TEST(CompressionTest, NoneCopiesWithinTheLimit) {
  const ByteSpan input = as_bytes("plain");
  EXPECT_EQ(text(*compress(Compression::none, input)), "plain");
  EXPECT_EQ(text(*decompress(Compression::none, input, 5)), "plain");
  EXPECT_EQ(decompress(Compression::none, input, 4).error(), CompressionError::kOutputTooLarge);
}

TEST(CompressionTest, UnknownCodecIdsAreErrors) {
  for (int id = 5; id <= 7; ++id) {
    const auto codec = static_cast<Compression>(id);
    EXPECT_EQ(compress(codec, as_bytes("x")).error(), CompressionError::kUnknownCodec);
    EXPECT_EQ(decompress(codec, as_bytes("x"), kMiB).error(), CompressionError::kUnknownCodec);
  }
}

// --- Formats as Kafka clients write them ----------------------------------------------------------

TEST(GzipFormatTest, CompressWritesAnRfc1952Stream) {
  const Bytes packed = compressed(Compression::gzip, as_bytes("abc"));
  ASSERT_GE(packed.size(), 18u);
  EXPECT_EQ(packed[0], std::byte{0x1f});
  EXPECT_EQ(packed[1], std::byte{0x8b});
  EXPECT_EQ(packed[2], std::byte{0x08});  // deflate
  // Trailer: CRC-32 and size of the input, little-endian.
  const std::uint32_t crc = static_cast<std::uint32_t>(crc32(0, reinterpret_cast<const Bytef*>("abc"), 3));
  const std::size_t t = packed.size() - 8;
  EXPECT_EQ(static_cast<std::uint32_t>(packed[t]) | static_cast<std::uint32_t>(packed[t + 1]) << 8 |
                static_cast<std::uint32_t>(packed[t + 2]) << 16 |
                static_cast<std::uint32_t>(packed[t + 3]) << 24,
            crc);
  EXPECT_EQ(packed[t + 4], std::byte{3});
}

TEST(GzipFormatTest, FlippedBitIsCaughtByTheCrc) {
  const Bytes input = compressible_bytes(10 * kKiB, 8);
  Bytes packed = compressed(Compression::gzip, input);
  packed[packed.size() - 6] ^= std::byte{0x01};  // inside the CRC-32 trailer
  EXPECT_EQ(decompress(Compression::gzip, packed, kMiB).error(), CompressionError::kCorrupt);
}

TEST(SnappyFormatTest, CompressWritesXerialFramingWith32KiBBlocks) {
  const Bytes input = random_bytes(100 * kKiB, 9);  // 32 + 32 + 32 + 4 KiB
  const Bytes packed = compressed(Compression::snappy, input);
  const Bytes header = testing::bytes({0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1});
  ASSERT_GT(packed.size(), header.size());
  EXPECT_TRUE(std::equal(header.begin(), header.end(), packed.begin()));
  ByteReader reader(ByteSpan(packed).subspan(header.size()));
  std::vector<std::size_t> block_sizes;
  while (!reader.empty()) {
    const auto length = reader.read_be<std::int32_t>();
    ASSERT_TRUE(length.has_value());
    const auto block = reader.read_bytes(static_cast<std::size_t>(*length));
    ASSERT_TRUE(block.has_value());
    std::size_t size = 0;
    ASSERT_TRUE(snappy::GetUncompressedLength(reinterpret_cast<const char*>(block->data()),
                                              block->size(), &size));
    block_sizes.push_back(size);
  }
  EXPECT_EQ(block_sizes, (std::vector<std::size_t>{32 * kKiB, 32 * kKiB, 32 * kKiB, 4 * kKiB}));
}

TEST(SnappyFormatTest, RawSnappyBlockWithoutFramingIsAccepted) {
  const Bytes input = compressible_bytes(100 * kKiB, 10);
  std::string raw;
  snappy::Compress(reinterpret_cast<const char*>(input.data()), input.size(), &raw);
  auto out = decompress(Compression::snappy, as_bytes(raw), kMiB);
  ASSERT_TRUE(out.has_value()) << to_string(out.error());
  EXPECT_TRUE(*out == input);
}

TEST(SnappyFormatTest, XerialHeaderAloneIsEmpty) {
  const Bytes header = testing::bytes({0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1});
  auto out = decompress(Compression::snappy, header, kMiB);
  ASSERT_TRUE(out.has_value());
  EXPECT_TRUE(out->empty());
  EXPECT_EQ(decompress(Compression::snappy, ByteSpan(header).first(12), kMiB).error(),
            CompressionError::kCorrupt);
}

TEST(SnappyFormatTest, NegativeOrOverlongBlockLengthIsCorrupt) {
  Bytes packed = compressed(Compression::snappy, as_bytes("hello"));
  packed[16] = std::byte{0x80};  // block length negative
  EXPECT_EQ(decompress(Compression::snappy, packed, kMiB).error(), CompressionError::kCorrupt);
  packed[16] = std::byte{0x00};
  packed[19] = std::byte{0x7f};  // block length past the end
  EXPECT_EQ(decompress(Compression::snappy, packed, kMiB).error(), CompressionError::kCorrupt);
}

TEST(SnappyFormatTest, DeclaredBlockSizeAboveTheLimitFailsBeforeAllocating) {
  // A raw block whose header declares 4 GiB - 1 bytes of output, followed by nothing useful.
  const Bytes raw = testing::bytes({0xff, 0xff, 0xff, 0xff, 0x0f, 0x00});
  const long rss_before_kib = peak_rss_kib();
  EXPECT_EQ(decompress(Compression::snappy, raw, 64 * kMiB).error(), CompressionError::kOutputTooLarge);
  EXPECT_LT(peak_rss_kib() - rss_before_kib, 16 * 1024);
}

TEST(SnappyFormatTest, XerialBombStopsAtTheLimit) {
  // One xerial stream of 32 KiB blocks of zeros (each ~1.5 KiB), 64 MiB in all, limit 8 MiB.
  const Bytes block_stream = compressed(Compression::snappy, Bytes(kSnappyBlockSize));
  const ByteSpan one_block = ByteSpan(block_stream).subspan(16);
  Bytes bomb(block_stream.begin(), block_stream.begin() + 16);
  for (int i = 0; i < 2048; ++i) bomb.insert(bomb.end(), one_block.begin(), one_block.end());
  EXPECT_EQ(decompress(Compression::snappy, bomb, 8 * kMiB).error(), CompressionError::kOutputTooLarge);
  auto all = decompress(Compression::snappy, bomb, 64 * kMiB);
  ASSERT_TRUE(all.has_value());
  EXPECT_EQ(all->size(), 64 * kMiB);
}

// LZ4 frame header: magic (4, LE 0x184D2204), FLG, BD, [content size (8)], header checksum.
// FLG 0x60 = version 01, independent blocks, no checksums, no content size; BD 0x40 = 64 KiB.
TEST(Lz4FormatTest, CompressWritesAJavaStyleFrame) {
  const Bytes packed = compressed(Compression::lz4, as_bytes("hello"));
  ASSERT_GE(packed.size(), 11u);
  EXPECT_TRUE(std::equal(packed.begin(), packed.begin() + 6,
                         testing::bytes({0x04, 0x22, 0x4d, 0x18, 0x60, 0x40}).begin()));
  // xxh32 of FLG..BD, second byte (KIP-57: over the descriptor only, not the magic).
  EXPECT_EQ(packed[6], std::byte{0x82});  // as kafka-clients and librdkafka write it
  // No content checksum: the frame ends with the zero end mark.
  EXPECT_TRUE(std::equal(packed.end() - 4, packed.end(), Bytes(4).begin()));
}

TEST(Lz4FormatTest, CompressUses64KiBBlocks) {
  const Bytes input = random_bytes(200 * kKiB, 11);  // incompressible: blocks stored as is
  const Bytes packed = compressed(Compression::lz4, input);
  ByteReader reader(ByteSpan(packed).subspan(7));
  std::vector<std::uint32_t> block_sizes;
  for (;;) {
    const auto raw = reader.read_bytes(4);
    ASSERT_TRUE(raw.has_value());
    const std::uint32_t word = static_cast<std::uint32_t>((*raw)[0]) |
                               static_cast<std::uint32_t>((*raw)[1]) << 8 |
                               static_cast<std::uint32_t>((*raw)[2]) << 16 |
                               static_cast<std::uint32_t>((*raw)[3]) << 24;
    if (word == 0) break;
    const std::uint32_t size = word & 0x7fffffffu;
    block_sizes.push_back(size);
    ASSERT_TRUE(reader.skip(size));
  }
  EXPECT_TRUE(reader.empty());
  EXPECT_EQ(block_sizes, (std::vector<std::uint32_t>{65536, 65536, 65536, 8192}));
}

Bytes lz4_frame(ByteSpan input, const LZ4F_preferences_t& prefs) {
  Bytes out(LZ4F_compressFrameBound(input.size(), &prefs));
  const std::size_t n = LZ4F_compressFrame(out.data(), out.size(), input.data(), input.size(), &prefs);
  EXPECT_FALSE(LZ4F_isError(n));
  out.resize(n);
  return out;
}

TEST(Lz4FormatTest, EveryFrameOptionIsAccepted) {
  const Bytes input = compressible_bytes(300 * kKiB, 12);
  for (const auto block_size : {LZ4F_max64KB, LZ4F_max256KB, LZ4F_max1MB, LZ4F_max4MB}) {
    for (const auto mode : {LZ4F_blockLinked, LZ4F_blockIndependent}) {
      for (const unsigned flags : {0u, 1u, 2u, 3u, 4u, 7u}) {
        LZ4F_preferences_t prefs{};
        prefs.frameInfo.blockSizeID = block_size;
        prefs.frameInfo.blockMode = mode;
        prefs.frameInfo.contentChecksumFlag = (flags & 1) ? LZ4F_contentChecksumEnabled : LZ4F_noContentChecksum;
        prefs.frameInfo.blockChecksumFlag = (flags & 2) ? LZ4F_blockChecksumEnabled : LZ4F_noBlockChecksum;
        prefs.frameInfo.contentSize = (flags & 4) ? input.size() : 0;
        auto out = decompress(Compression::lz4, lz4_frame(input, prefs), kMiB);
        ASSERT_TRUE(out.has_value()) << block_size << " " << mode << " " << flags;
        EXPECT_TRUE(*out == input);
      }
    }
  }
}

TEST(Lz4FormatTest, ChecksumMismatchesAreCorrupt) {
  const Bytes input = compressible_bytes(10 * kKiB, 13);
  LZ4F_preferences_t prefs{};
  prefs.frameInfo.blockMode = LZ4F_blockIndependent;
  prefs.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
  prefs.frameInfo.blockChecksumFlag = LZ4F_blockChecksumEnabled;
  const Bytes good = lz4_frame(input, prefs);
  Bytes bad_header = good;
  bad_header[6] ^= std::byte{0x01};  // header checksum (no content size: byte 6)
  EXPECT_EQ(decompress(Compression::lz4, bad_header, kMiB).error(), CompressionError::kCorrupt);
  Bytes bad_block = good;
  bad_block[good.size() - 9] ^= std::byte{0x01};  // last block's checksum, before end mark + xxh32
  EXPECT_EQ(decompress(Compression::lz4, bad_block, kMiB).error(), CompressionError::kCorrupt);
  Bytes bad_content = good;
  bad_content[good.size() - 1] ^= std::byte{0x01};  // content checksum
  EXPECT_EQ(decompress(Compression::lz4, bad_content, kMiB).error(), CompressionError::kCorrupt);
}

// zstd frame: magic (4, LE 0xFD2FB528), frame header descriptor, window descriptor, blocks.
TEST(ZstdFormatTest, CompressWritesAStandardFrame) {
  const Bytes packed = compressed(Compression::zstd, as_bytes("hello"));
  EXPECT_TRUE(std::equal(packed.begin(), packed.begin() + 4, testing::bytes({0x28, 0xb5, 0x2f, 0xfd}).begin()));
  EXPECT_EQ(ZSTD_getFrameContentSize(packed.data(), packed.size()), 5u);
}

// A zstd frame declaring a window of 2^window_log bytes and holding `blocks` RLE blocks of
// 128 KiB of zeros: a few bytes each, the cheapest zstd bomb there is.
Bytes zstd_rle_frame(int window_log, std::size_t blocks) {
  Bytes out = testing::bytes({0x28, 0xb5, 0x2f, 0xfd, 0x00});  // FHD: window descriptor, no size
  out.push_back(static_cast<std::byte>((window_log - 10) << 3));
  for (std::size_t i = 0; i < blocks; ++i) {
    // Block header (3 bytes LE): last-block bit, type 1 (RLE), size 128 KiB; then the byte.
    const std::uint32_t header = (i + 1 == blocks ? 1u : 0u) | (1u << 1) | (128u * 1024u << 3);
    out.push_back(static_cast<std::byte>(header & 0xff));
    out.push_back(static_cast<std::byte>((header >> 8) & 0xff));
    out.push_back(static_cast<std::byte>((header >> 16) & 0xff));
    out.push_back(std::byte{0});
  }
  return out;
}

TEST(ZstdFormatTest, HandMadeRleFrameDecodes) {
  auto out = decompress(Compression::zstd, zstd_rle_frame(17, 3), kMiB);
  ASSERT_TRUE(out.has_value()) << to_string(out.error());
  EXPECT_TRUE(*out == Bytes(3 * 128 * kKiB));
}

TEST(ZstdFormatTest, WindowAboveTheCapIsRefusedWithoutAllocatingIt) {
  // A 1 GiB window: refused (limit 1 MiB: cap 8 MiB), whereas 8 MiB is fine.
  const long rss_before_kib = peak_rss_kib();
  EXPECT_EQ(decompress(Compression::zstd, zstd_rle_frame(30, 1), kMiB).error(),
            CompressionError::kOutputTooLarge);
  EXPECT_LT(peak_rss_kib() - rss_before_kib, 64 * 1024);
  EXPECT_TRUE(decompress(Compression::zstd, zstd_rle_frame(23, 1), kMiB).has_value());
  // With a 128 MiB limit, windows up to 128 MiB are allowed, as in Kafka.
  EXPECT_TRUE(decompress(Compression::zstd, zstd_rle_frame(27, 1), 128 * kMiB).has_value());
  EXPECT_EQ(decompress(Compression::zstd, zstd_rle_frame(28, 1), kGiB).error(),
            CompressionError::kOutputTooLarge);
}

TEST(ZstdFormatTest, DeclaredContentSizeAboveTheLimitFailsEarly) {
  const Bytes packed = compressed(Compression::zstd, Bytes(2 * kMiB));
  EXPECT_EQ(decompress(Compression::zstd, packed, kMiB).error(), CompressionError::kOutputTooLarge);
}

// --- Decompression bombs --------------------------------------------------------------------------

constexpr std::size_t kBombLimit = 16 * kMiB;

// Checks that `bomb` (1 GiB of output) is refused at kBombLimit while peak memory grows by little
// more than the limit.
void expect_bomb_refused(Compression codec, const Bytes& bomb) {
  const long rss_before_kib = peak_rss_kib();
  EXPECT_EQ(decompress(codec, bomb, kBombLimit).error(), CompressionError::kOutputTooLarge);
  const long growth_kib = peak_rss_kib() - rss_before_kib;
  EXPECT_LT(growth_kib, static_cast<long>(3 * kBombLimit / kKiB)) << codec_name(codec);
}

// A gzip stream of `mebibytes` MiB of zeros, made without compressing them all: deflate with
// Z_FULL_FLUSH after each 1 MiB starts afresh at every chunk, so every chunk after the first
// compresses to the same bytes and repeating them makes a valid stream; the trailer is the CRC-32
// and size of the whole.
Bytes gzip_zeros(std::size_t mebibytes) {
  EXPECT_GE(mebibytes, 2u);
  const Bytes zeros(kMiB);
  z_stream zs{};
  EXPECT_EQ(deflateInit2(&zs, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  auto deflate_chunk = [&](int flush) {
    Bytes out(64 * kKiB);
    zs.next_in = const_cast<Bytef*>(reinterpret_cast<const Bytef*>(zeros.data()));
    zs.avail_in = static_cast<uInt>(zeros.size());
    zs.next_out = reinterpret_cast<Bytef*>(out.data());
    zs.avail_out = static_cast<uInt>(out.size());
    EXPECT_NE(deflate(&zs, flush), Z_STREAM_ERROR);
    EXPECT_EQ(zs.avail_in, 0u);
    out.resize(out.size() - zs.avail_out);
    return out;
  };
  const Bytes first = deflate_chunk(Z_FULL_FLUSH);
  const Bytes middle = deflate_chunk(Z_FULL_FLUSH);
  EXPECT_TRUE(deflate_chunk(Z_FULL_FLUSH) == middle);
  Bytes last = deflate_chunk(Z_FINISH);
  deflateEnd(&zs);
  last.resize(last.size() - 8);  // the trailer of a 4 MiB stream; replaced below

  Bytes out = first;
  for (std::size_t i = 2; i < mebibytes; ++i) out.insert(out.end(), middle.begin(), middle.end());
  out.insert(out.end(), last.begin(), last.end());
  const uLong chunk_crc = crc32(0, reinterpret_cast<const Bytef*>(zeros.data()), static_cast<uInt>(zeros.size()));
  uLong crc = chunk_crc;
  for (std::size_t i = 1; i < mebibytes; ++i) crc = crc32_combine(crc, chunk_crc, static_cast<z_off_t>(kMiB));
  for (const auto word : {static_cast<std::uint32_t>(crc), static_cast<std::uint32_t>(mebibytes * kMiB)}) {
    for (int shift = 0; shift < 32; shift += 8) out.push_back(static_cast<std::byte>(word >> shift));
  }
  return out;
}

TEST(DecompressionBombTest, GzipZerosConstructionIsAValidStream) {
  auto out = decompress(Compression::gzip, gzip_zeros(9), 9 * kMiB);
  ASSERT_TRUE(out.has_value()) << to_string(out.error());
  EXPECT_TRUE(*out == Bytes(9 * kMiB));
}

TEST(DecompressionBombTest, GzipGibibyteIsRefusedAtTheLimit) {
  const Bytes bomb = gzip_zeros(1024);
  EXPECT_LT(bomb.size(), 2 * kMiB);
  expect_bomb_refused(Compression::gzip, bomb);
}

TEST(DecompressionBombTest, ZstdGibibyteIsRefusedAtTheLimit) {
  const Bytes zeros(kMiB);
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ASSERT_NE(cctx, nullptr);
  Bytes bomb(256 * kKiB);
  ZSTD_outBuffer out{bomb.data(), bomb.size(), 0};
  for (int i = 0; i < 1024; ++i) {
    ZSTD_inBuffer in{zeros.data(), zeros.size(), 0};
    const std::size_t left = ZSTD_compressStream2(cctx, &out, &in, i == 1023 ? ZSTD_e_end : ZSTD_e_continue);
    ASSERT_FALSE(ZSTD_isError(left));
    ASSERT_EQ(in.pos, in.size);
  }
  ZSTD_freeCCtx(cctx);
  bomb.resize(out.pos);
  expect_bomb_refused(Compression::zstd, bomb);
  // The same with hand-made RLE blocks in a single-frame, 128 KiB-window stream.
  expect_bomb_refused(Compression::zstd, zstd_rle_frame(17, kGiB / (128 * kKiB)));
}

TEST(DecompressionBombTest, Lz4GibibyteIsRefusedAtTheLimit) {
  const Bytes zeros(kMiB);
  LZ4F_preferences_t prefs{};
  prefs.frameInfo.blockSizeID = LZ4F_max64KB;
  prefs.frameInfo.blockMode = LZ4F_blockIndependent;
  LZ4F_cctx* cctx = nullptr;
  ASSERT_FALSE(LZ4F_isError(LZ4F_createCompressionContext(&cctx, LZ4F_VERSION)));
  Bytes bomb(8 * kMiB);
  std::size_t pos = LZ4F_compressBegin(cctx, bomb.data(), bomb.size(), &prefs);
  ASSERT_FALSE(LZ4F_isError(pos));
  for (int i = 0; i < 1024; ++i) {
    const std::size_t n =
        LZ4F_compressUpdate(cctx, bomb.data() + pos, bomb.size() - pos, zeros.data(), zeros.size(), nullptr);
    ASSERT_FALSE(LZ4F_isError(n));
    pos += n;
  }
  const std::size_t n = LZ4F_compressEnd(cctx, bomb.data() + pos, bomb.size() - pos, nullptr);
  ASSERT_FALSE(LZ4F_isError(n));
  LZ4F_freeCompressionContext(cctx);
  bomb.resize(pos + n);
  expect_bomb_refused(Compression::lz4, bomb);
}

// --- Batches --------------------------------------------------------------------------------------

constexpr std::int64_t kGoldenTimestamp = 1700000000000;

Bytes golden_big_value() {
  constexpr std::string_view kCycle = "0123456789abcdefghijklmnopqrstuvwxyz-";
  Bytes out(70000);
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<std::byte>(kCycle[i % kCycle.size()]);
  return out;
}

// The golden records, built by weir (uncompressed).
Bytes golden_records_batch(BatchOptions options = {}) {
  const Bytes big = golden_big_value();
  const Header headers[] = {{"h1", as_bytes("hv")}, {"h2", std::nullopt}};
  RecordBatchBuilder builder(options);
  builder.append(kGoldenTimestamp, as_bytes("key-0"), as_bytes("value-0"));
  builder.append(kGoldenTimestamp + 1, std::nullopt, as_bytes("value-1"), headers);
  builder.append(kGoldenTimestamp + 2, as_bytes("key-2"), std::nullopt);
  builder.append(kGoldenTimestamp + 3, as_bytes("big"), big);
  return builder.build();
}

struct Golden {
  const char* name;
  Compression codec;
  std::string_view hex;
};

constexpr Golden kGoldens[] = {
    {"JavaGzip", Compression::gzip, kJavaGzipBatch},
    {"JavaSnappy", Compression::snappy, kJavaSnappyBatch},
    {"JavaLz4", Compression::lz4, kJavaLz4Batch},
    {"JavaZstd", Compression::zstd, kJavaZstdBatch},
    {"LibrdkafkaGzip", Compression::gzip, kLibrdkafkaGzipBatch},
    {"LibrdkafkaSnappy", Compression::snappy, kLibrdkafkaSnappyBatch},
    {"LibrdkafkaLz4", Compression::lz4, kLibrdkafkaLz4Batch},
    {"LibrdkafkaZstd", Compression::zstd, kLibrdkafkaZstdBatch},
};

class ClientBatchTest : public ::testing::TestWithParam<Golden> {};

std::string golden_param_name(const ::testing::TestParamInfo<Golden>& param) {
  return param.param.name;
}

INSTANTIATE_TEST_SUITE_P(Golden, ClientBatchTest, ::testing::ValuesIn(kGoldens), golden_param_name);

TEST_P(ClientBatchTest, DecompressesToTheExpectedRecords) {
  const Bytes bytes = from_hex(GetParam().hex);
  auto batch = RecordBatchView::from(bytes);
  ASSERT_TRUE(batch.has_value());
  ASSERT_TRUE(batch->validate(BatchOrigin::client).has_value());
  EXPECT_EQ(batch->compression(), GetParam().codec);
  EXPECT_EQ(batch->records_count(), 4);

  auto section = read_records_section(*batch, kMiB);
  ASSERT_TRUE(section.has_value()) << to_string(section.error());
  EXPECT_TRUE(section->decompressed());
  struct Seen {
    std::int64_t offset;
    std::int64_t timestamp;
    std::optional<std::string> key;
    std::optional<std::string> value;
    std::vector<std::pair<std::string, std::optional<std::string>>> headers;
  };
  std::vector<Seen> seen;
  auto status = for_each_record(section->reader(), [&](const RecordView& r) {
    Seen s{batch->record_offset(r), batch->record_timestamp(r), {}, {}, {}};
    if (r.key) s.key = std::string(text(*r.key));
    if (r.value) s.value = std::string(text(*r.value));
    for (const Header& h : r.headers) {
      s.headers.emplace_back(std::string(h.key), h.value ? std::optional(std::string(text(*h.value))) : std::nullopt);
    }
    seen.push_back(std::move(s));
  });
  ASSERT_TRUE(status.has_value()) << to_string(status.error());
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[0].offset, 0);
  EXPECT_EQ(seen[0].timestamp, kGoldenTimestamp);
  EXPECT_EQ(seen[0].key, "key-0");
  EXPECT_EQ(seen[0].value, "value-0");
  EXPECT_TRUE(seen[0].headers.empty());
  EXPECT_EQ(seen[1].offset, 1);
  EXPECT_EQ(seen[1].key, std::nullopt);
  EXPECT_EQ(seen[1].value, "value-1");
  using HeaderList = std::vector<std::pair<std::string, std::optional<std::string>>>;
  EXPECT_EQ(seen[1].headers, (HeaderList{{"h1", "hv"}, {"h2", std::nullopt}}));
  EXPECT_EQ(seen[2].key, "key-2");
  EXPECT_EQ(seen[2].value, std::nullopt);
  EXPECT_EQ(seen[3].offset, 3);
  EXPECT_EQ(seen[3].timestamp, kGoldenTimestamp + 3);
  EXPECT_EQ(seen[3].key, "big");
  const Bytes big = golden_big_value();
  EXPECT_EQ(seen[3].value, std::string(text(big)));
}

TEST_P(ClientBatchTest, RecordsSectionIsByteForByteWhatWeirBuilds) {
  const Bytes bytes = from_hex(GetParam().hex);
  auto batch = RecordBatchView::from(bytes);
  ASSERT_TRUE(batch.has_value());
  auto section = read_records_section(*batch, kMiB);
  ASSERT_TRUE(section.has_value());
  const Bytes plain = golden_records_batch();
  const ByteSpan expected = RecordBatchView::from(plain)->records_bytes();
  EXPECT_TRUE(std::ranges::equal(section->bytes(), expected));
}

TEST_P(ClientBatchTest, LimitBelowTheRecordsSizeIsRefused) {
  const Bytes bytes = from_hex(GetParam().hex);
  auto batch = RecordBatchView::from(bytes);
  ASSERT_TRUE(batch.has_value());
  EXPECT_EQ(read_records_section(*batch, 64 * kKiB).error(), CompressionError::kOutputTooLarge);
}

TEST_P(CodecTest, CompressBatchKeepsTheHeaderAndSetsCodecLengthAndCrc) {
  const Bytes plain = golden_records_batch({.base_offset = 42,
                                            .partition_leader_epoch = 7,
                                            .producer_id = 1234,
                                            .producer_epoch = 3,
                                            .base_sequence = 17,
                                            .transactional = true});
  const auto plain_view = *RecordBatchView::from(plain);
  auto packed = compress_batch(plain_view, GetParam());
  ASSERT_TRUE(packed.has_value()) << to_string(packed.error());
  auto batch = RecordBatchView::from(*packed);
  ASSERT_TRUE(batch.has_value());
  ASSERT_TRUE(batch->validate().has_value());
  EXPECT_EQ(batch->compression(), GetParam());
  EXPECT_EQ(batch->attributes(), plain_view.attributes() | static_cast<std::int16_t>(GetParam()));
  EXPECT_TRUE(batch->is_transactional());
  EXPECT_EQ(static_cast<std::size_t>(batch->batch_length()), packed->size() - kLogOverhead);
  EXPECT_LT(packed->size(), plain.size() / 4);
  EXPECT_EQ(batch->base_offset(), 42);
  EXPECT_EQ(batch->partition_leader_epoch(), 7);
  EXPECT_EQ(batch->producer_id(), 1234);
  EXPECT_EQ(batch->producer_epoch(), 3);
  EXPECT_EQ(batch->base_sequence(), 17);
  EXPECT_EQ(batch->last_offset_delta(), plain_view.last_offset_delta());
  EXPECT_EQ(batch->base_timestamp(), plain_view.base_timestamp());
  EXPECT_EQ(batch->max_timestamp(), plain_view.max_timestamp());
  EXPECT_EQ(batch->records_count(), 4);
  EXPECT_EQ(batch->crc(), batch->compute_crc());

  auto section = read_records_section(*batch, kMiB);
  ASSERT_TRUE(section.has_value());
  EXPECT_TRUE(std::ranges::equal(section->bytes(), plain_view.records_bytes()));
  EXPECT_TRUE(validate_records(plain_view).has_value());
  int count = 0;
  EXPECT_TRUE(for_each_record(section->reader(), [&](const RecordView&) { ++count; }).has_value());
  EXPECT_EQ(count, 4);
}

TEST(CompressBatchTest, NoneReturnsACopy) {
  const Bytes plain = golden_records_batch();
  auto copy = compress_batch(*RecordBatchView::from(plain), Compression::none);
  ASSERT_TRUE(copy.has_value());
  EXPECT_TRUE(*copy == plain);
}

TEST(CompressBatchTest, InvalidLevelIsAnError) {
  const Bytes plain = golden_records_batch();
  EXPECT_EQ(compress_batch(*RecordBatchView::from(plain), Compression::gzip, 42).error(),
            CompressionError::kInvalidLevel);
}

TEST(ReadRecordsSectionTest, UncompressedBatchIsAViewWithoutCopy) {
  const Bytes plain = golden_records_batch();
  const auto view = *RecordBatchView::from(plain);
  auto section = read_records_section(view, 0);  // the limit applies to decompression only
  ASSERT_TRUE(section.has_value());
  EXPECT_FALSE(section->decompressed());
  EXPECT_EQ(section->bytes().data(), view.records_bytes().data());
  EXPECT_EQ(section->bytes().size(), view.records_bytes().size());
}

TEST(ReadRecordsSectionTest, UnknownCodecIdIsAnError) {
  Bytes bytes = golden_records_batch();
  auto view = MutableRecordBatchView::from(bytes);
  ASSERT_TRUE(view.has_value());
  store_be<std::int16_t>(bytes.data() + kAttributesOffset, 6);
  view->update_crc();
  EXPECT_EQ(read_records_section(*view, kMiB).error(), CompressionError::kUnknownCodec);
}

TEST(ReadRecordsSectionTest, CorruptCompressedRecordsAreAnError) {
  const Bytes plain = golden_records_batch();
  Bytes packed = *compress_batch(*RecordBatchView::from(plain), Compression::gzip);
  packed[kRecordsOffset] = std::byte{0};  // gzip magic
  EXPECT_EQ(read_records_section(*RecordBatchView::from(packed), kMiB).error(), CompressionError::kCorrupt);
}

}  // namespace
}  // namespace weir::record
