#include "protocol/record/errc.h"

namespace weir::record {

std::string_view to_string(Errc e) noexcept {
  switch (e) {
    case Errc::truncated:
      return "truncated";
    case Errc::length_mismatch:
      return "length_mismatch";
    case Errc::bad_magic:
      return "bad_magic";
    case Errc::crc_mismatch:
      return "crc_mismatch";
    case Errc::invalid_compression:
      return "invalid_compression";
    case Errc::invalid_offset_range:
      return "invalid_offset_range";
    case Errc::invalid_record_count:
      return "invalid_record_count";
    case Errc::invalid_base_offset:
      return "invalid_base_offset";
    case Errc::control_from_client:
      return "control_from_client";
    case Errc::invalid_sequence:
      return "invalid_sequence";
    case Errc::malformed_record:
      return "malformed_record";
    case Errc::record_offset_out_of_order:
      return "record_offset_out_of_order";
    case Errc::trailing_bytes:
      return "trailing_bytes";
    case Errc::invalid_control_record:
      return "invalid_control_record";
    case Errc::compressed:
      return "compressed";
  }
  return "unknown";
}

}  // namespace weir::record
