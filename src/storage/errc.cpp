#include "storage/errc.h"

namespace weir::storage {

std::string_view to_string(Errc e) noexcept {
  switch (e) {
    case Errc::kCorruptMessage:
      return "corrupt_message";
    case Errc::kInvalidRecord:
      return "invalid_record";
    case Errc::kRecordListTooLarge:
      return "record_list_too_large";
    case Errc::kMessageTooLarge:
      return "message_too_large";
    case Errc::kInvalidTimestamp:
      return "invalid_timestamp";
    case Errc::kStorageError:
      return "storage_error";
    case Errc::kOffsetOutOfRange:
      return "offset_out_of_range";
    case Errc::kUnsupportedCompression:
      return "unsupported_compression";
    case Errc::kNotFound:
      return "not_found";
    case Errc::kDecompressedBatchTooLarge:
      return "decompressed_batch_too_large";
    case Errc::kCompressionRatioTooHigh:
      return "compression_ratio_too_high";
  }
  return "unknown";
}

Errc from_record_errc(record::Errc e) noexcept {
  switch (e) {
    case record::Errc::truncated:
    case record::Errc::length_mismatch:
    case record::Errc::crc_mismatch:
      return Errc::kCorruptMessage;
    case record::Errc::invalid_compression:
      return Errc::kUnsupportedCompression;
    default:
      return Errc::kInvalidRecord;
  }
}

}  // namespace weir::storage
