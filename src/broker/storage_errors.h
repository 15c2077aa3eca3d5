// Storage errors as the Kafka error codes Apache Kafka returns for the same situations.
#pragma once

#include "broker/errors.h"
#include "storage/errc.h"

namespace weir::broker {

constexpr ErrorCode storage_error_code(storage::Errc e) noexcept {
  switch (e) {
    case storage::Errc::kCorruptMessage: return ErrorCode::kCorruptMessage;
    case storage::Errc::kInvalidRecord: return ErrorCode::kInvalidRecord;
    case storage::Errc::kRecordListTooLarge: return ErrorCode::kRecordListTooLarge;
    case storage::Errc::kMessageTooLarge: return ErrorCode::kMessageTooLarge;
    case storage::Errc::kInvalidTimestamp: return ErrorCode::kInvalidTimestamp;
    case storage::Errc::kStorageError: return ErrorCode::kKafkaStorageError;
    case storage::Errc::kOffsetOutOfRange: return ErrorCode::kOffsetOutOfRange;
    case storage::Errc::kUnsupportedCompression: return ErrorCode::kUnsupportedCompressionType;
    case storage::Errc::kNotFound: return ErrorCode::kUnknownTopicOrPartition;
    case storage::Errc::kDecompressedBatchTooLarge: return ErrorCode::kInvalidRecord;
    case storage::Errc::kCompressionRatioTooHigh: return ErrorCode::kInvalidRecord;
  }
  return ErrorCode::kUnknownServerError;
}

}  // namespace weir::broker
