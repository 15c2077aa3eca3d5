// Errors of the storage layer. Expected failures (bad batches, I/O errors, offsets out of range)
// are returned as values; the broker maps them to Kafka error codes at the protocol edge:
//
//   kCorruptMessage         CORRUPT_MESSAGE (2)         framing, CRC, a partial batch
//   kInvalidRecord          INVALID_RECORD (87)         well-formed but invalid batch or record
//   kRecordListTooLarge     RECORD_LIST_TOO_LARGE (18)  one append larger than segment.bytes
//   kMessageTooLarge        MESSAGE_TOO_LARGE (10)      one batch larger than max.message.bytes
//   kInvalidTimestamp       INVALID_TIMESTAMP (32)      outside message.timestamp.{before,after}.max.ms
//   kStorageError           KAFKA_STORAGE_ERROR (56)    any I/O failure (full disk, EIO, fsync)
//   kOffsetOutOfRange       OFFSET_OUT_OF_RANGE (1)
//   kUnsupportedCompression UNSUPPORTED_COMPRESSION_TYPE (76)  compression id 5..7
//   kNotFound               (not a Kafka error)         a file or partition that does not exist
//   kDecompressedBatchTooLarge INVALID_RECORD (87)      a compressed batch decompressing past the
//   kCompressionRatioTooHigh   INVALID_RECORD (87)      broker's limits (size, ratio): weir's, Kafka has none
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string_view>

#include "protocol/record/errc.h"

namespace weir::storage {

enum class Errc : std::uint8_t {
  kCorruptMessage,
  kInvalidRecord,
  kRecordListTooLarge,
  kMessageTooLarge,
  kInvalidTimestamp,
  kStorageError,
  kOffsetOutOfRange,
  kUnsupportedCompression,
  kNotFound,
  kDecompressedBatchTooLarge,
  kCompressionRatioTooHigh,
};

std::string_view to_string(Errc e) noexcept;

// How a record-batch validation failure is reported on produce (see record/errc.h): framing and
// checksum problems are corrupt, an unknown codec id is unsupported, the rest invalid.
Errc from_record_errc(record::Errc e) noexcept;

}  // namespace weir::storage

template <>
struct fmt::formatter<weir::storage::Errc> : fmt::formatter<std::string_view> {
  template <class FormatContext>
  auto format(weir::storage::Errc e, FormatContext& ctx) const {
    return fmt::formatter<std::string_view>::format(weir::storage::to_string(e), ctx);
  }
};
