#include "broker/request_stats.h"

#include "broker/errors.h"

namespace weir::broker {

std::string_view to_string(Malformed m) {
  switch (m) {
    case Malformed::kHeader: return "header";
    case Malformed::kUnknownApi: return "unknown_api";
    case Malformed::kUnsupportedVersion: return "unsupported_version";
    case Malformed::kBody: return "body";
    case Malformed::kCount: break;
  }
  return "unknown";
}

std::string_view config_name(Limit l) {
  switch (l) {
    case Limit::kMaxMessageBytes: return "max.message.bytes";
    case Limit::kSegmentBytes: return "segment.bytes";
    case Limit::kOffsetMetadataMaxBytes: return "offset.metadata.max.bytes";
    case Limit::kGroupMaxSize: return "group.max.size";
    case Limit::kGroupSessionTimeout: return "group.session.timeout.ms";
    case Limit::kDecompressedBatchBytes: return "weir.produce.max.decompressed.batch.bytes";
    case Limit::kCompressionRatio: return "weir.produce.max.compression.ratio";
    case Limit::kCount: break;
  }
  return "unknown";
}

bool limit_of_error(std::int16_t error_code, Limit& out) {
  switch (error_code) {
    case code(ErrorCode::kMessageTooLarge): out = Limit::kMaxMessageBytes; return true;
    case code(ErrorCode::kRecordListTooLarge): out = Limit::kSegmentBytes; return true;
    case code(ErrorCode::kOffsetMetadataTooLarge): out = Limit::kOffsetMetadataMaxBytes; return true;
    case code(ErrorCode::kGroupMaxSizeReached): out = Limit::kGroupMaxSize; return true;
    case code(ErrorCode::kInvalidSessionTimeout): out = Limit::kGroupSessionTimeout; return true;
    default: return false;
  }
}

}  // namespace weir::broker
