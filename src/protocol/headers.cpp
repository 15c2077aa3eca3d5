#include "protocol/headers.h"

#include "protocol/gen/api_registry.h"

namespace weir::protocol {

bool is_flexible(std::int16_t api_key, std::int16_t api_version) noexcept {
  const ApiDescriptor* d = find_api(api_key);
  return d != nullptr && d->flexible(api_version);
}

std::expected<RequestHeader, HeaderParse> parse_request_header(std::span<const std::uint8_t> frame) {
  Reader r(frame);
  RequestHeader h;
  h.api_key = r.i16();
  h.api_version = r.i16();
  h.correlation_id = r.i32();
  bool is_null = false;
  std::string client_id = r.string(/*compact=*/false, is_null);
  if (!r.ok()) return std::unexpected(HeaderParse{h, HeaderError::kTruncated});
  if (!is_null) h.client_id = std::move(client_id);
  const ApiDescriptor* d = find_api(h.api_key);
  if (d == nullptr) {
    h.size = frame.size() - r.remaining();
    return std::unexpected(HeaderParse{h, HeaderError::kUnknownApi});
  }
  if (d->flexible(h.api_version)) {
    r.tagged_fields(h.unknown_tagged_fields, [](std::uint32_t, Reader&) { return false; });
    if (!r.ok()) return std::unexpected(HeaderParse{h, HeaderError::kMalformed});
  }
  h.size = frame.size() - r.remaining();
  return h;
}

void write_request_header(Writer& w, const RequestHeader& h) {
  w.i16(h.api_key);
  w.i16(h.api_version);
  w.i32(h.correlation_id);
  if (h.client_id) {
    w.string(false, *h.client_id);
  } else {
    w.null_string(false);
  }
  if (is_flexible(h.api_key, h.api_version)) {
    w.uvarint(static_cast<std::uint32_t>(h.unknown_tagged_fields.size()));
    for (const auto& t : h.unknown_tagged_fields) {
      w.uvarint(t.tag);
      w.uvarint(static_cast<std::uint32_t>(t.data.size()));
      w.raw(t.data.data(), t.data.size());
    }
  }
}

namespace {
bool response_header_has_tags(std::int16_t api_key, std::int16_t api_version) noexcept {
  return api_key != kApiVersionsKey && is_flexible(api_key, api_version);
}
}  // namespace

void write_response_header(Writer& w, std::int16_t api_key, std::int16_t api_version,
                           std::int32_t correlation_id) {
  w.i32(correlation_id);
  if (response_header_has_tags(api_key, api_version)) w.uvarint(0);
}

std::size_t response_header_size(std::int16_t api_key, std::int16_t api_version) noexcept {
  return response_header_has_tags(api_key, api_version) ? 5 : 4;
}

}  // namespace weir::protocol
