// Request and response headers (Kafka protocol).
//
// Request header v1:  api_key int16, api_version int16, correlation_id int32,
//                     client_id nullable string (int16 length, even in v2)
// Request header v2:  v1 + tagged fields. A request uses v2 when its API version is flexible.
// Response header v0: correlation_id int32
// Response header v1: v0 + tagged fields, used when the API version is flexible, except that
//                     ApiVersions responses always use v0 (clients parse them before they know
//                     which versions the broker speaks).
#pragma once

#include <cstdint>
#include <expected>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "protocol/codec.h"

namespace weir::protocol {

inline constexpr std::int16_t kApiVersionsKey = 18;

struct RequestHeader {
  std::int16_t api_key = 0;
  std::int16_t api_version = 0;
  std::int32_t correlation_id = 0;
  std::optional<std::string> client_id;
  std::vector<UnknownTaggedField> unknown_tagged_fields;
  std::size_t size = 0;  // bytes the header occupies at the start of the frame
};

enum class HeaderError {
  kTruncated,       // the frame ends inside the header
  kUnknownApi,      // api_key is not one the codec knows; `partial` holds what was read
  kMalformed,       // e.g. a bad tagged-field section
};

struct HeaderParse {
  RequestHeader header;
  HeaderError error;
};

// True when request/response bodies of (key, version) use the flexible encoding.
bool is_flexible(std::int16_t api_key, std::int16_t api_version) noexcept;

// Parses the header at the start of a request frame (the frame excludes its 4-byte size).
// For a known API the header version follows the API version's flexibility; for an unknown
// API or a version outside the codec's range only the v1 part is read, so the caller can
// still learn the correlation id and answer or close.
std::expected<RequestHeader, HeaderParse> parse_request_header(std::span<const std::uint8_t> frame);

void write_request_header(Writer& w, const RequestHeader& h);

// Response header for (api_key, api_version) with the ApiVersions exception.
void write_response_header(Writer& w, std::int16_t api_key, std::int16_t api_version,
                           std::int32_t correlation_id);
std::size_t response_header_size(std::int16_t api_key, std::int16_t api_version) noexcept;

}  // namespace weir::protocol
