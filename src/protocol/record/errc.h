// Errors from parsing and validating record batches.
//
// At the protocol edge they map to Kafka error codes the way Apache Kafka maps the matching
// exceptions: framing and checksum problems (truncated, length_mismatch, crc_mismatch) are
// CORRUPT_MESSAGE; the rest describe a well-formed but invalid batch and are INVALID_RECORD
// (bad_magic on produce is INVALID_RECORD too: Kafka rejects non-v2 batches as invalid).
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string_view>

namespace weir::record {

enum class Errc : std::uint8_t {
  // Framing and integrity.
  truncated,        // fewer bytes than the 61-byte header or the batchLength field needs
  length_mismatch,  // batchLength below the 49-byte minimum, or bytes beyond the batch's end
  bad_magic,        // magic byte is not 2
  crc_mismatch,     // stored CRC32C differs from the CRC of attributes..end
  // Header consistency.
  invalid_compression,   // compression codec id 5..7 in the attributes
  invalid_offset_range,  // lastOffsetDelta < 0
  invalid_record_count,  // count < 0, count > lastOffsetDelta + 1, more records than bytes allow,
                         // or (from a client) count == 0 or count != lastOffsetDelta + 1
  invalid_base_offset,   // a client batch whose baseOffset is not 0
  control_from_client,   // a client may not write control batches
  invalid_sequence,      // producerId set but baseSequence < 0 (client batches)
  // Records inside the batch.
  malformed_record,            // a record's fields do not fit, a bad varint, a negative size
  record_offset_out_of_order,  // offset deltas not strictly increasing or above lastOffsetDelta
  trailing_bytes,              // bytes left after the batch's last record
  invalid_control_record,      // a control record key or value too short or with a bad version
  // Operation not applicable.
  compressed,  // records of a compressed batch cannot be read without decompressing them
};

std::string_view to_string(Errc e) noexcept;

}  // namespace weir::record

template <>
struct fmt::formatter<weir::record::Errc> : fmt::formatter<std::string_view> {
  template <class FormatContext>
  auto format(weir::record::Errc e, FormatContext& ctx) const {
    return fmt::formatter<std::string_view>::format(weir::record::to_string(e), ctx);
  }
};
