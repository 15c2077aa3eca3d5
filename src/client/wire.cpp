#include "client/wire.h"

#include <fmt/format.h>

namespace weir::client {

protocol::Bytes encode_request_frame(const protocol::RequestHeader& header, std::span<const std::uint8_t> body) {
  protocol::Bytes frame(4, 0);
  protocol::Writer w(frame);
  protocol::write_request_header(w, header);
  w.raw(body.data(), body.size());
  const auto size = static_cast<std::uint32_t>(frame.size() - 4);
  for (int i = 0; i < 4; ++i) frame[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(size >> (8 * (3 - i)));
  return frame;
}

Result<ResponseFrame, Error> split_response(std::span<const std::uint8_t> frame, std::int16_t api_key,
                                            std::int16_t api_version) {
  protocol::Reader r(frame);
  ResponseFrame out;
  out.correlation_id = r.i32();
  if (!r.ok()) return unexpected(Error::protocol(fmt::format("response of {} bytes has no header", frame.size())));
  if (protocol::response_header_size(api_key, api_version) > 4) {
    std::vector<protocol::UnknownTaggedField> ignored;
    r.tagged_fields(ignored, [](std::uint32_t, protocol::Reader&) { return false; });
    if (!r.ok()) {
      return unexpected(
          Error::protocol(fmt::format("malformed response header (correlation id {})", out.correlation_id)));
    }
  }
  out.body = frame.subspan(frame.size() - r.remaining());
  return out;
}

namespace detail {
std::string unexpected_response_message(std::int32_t got) {
  return fmt::format("response with correlation id {} but no request is in flight", got);
}
std::string correlation_mismatch_message(std::int32_t expected, std::int32_t got) {
  return fmt::format("correlation id for response ({}) does not match request ({})", got, expected);
}
}  // namespace detail

}  // namespace weir::client
