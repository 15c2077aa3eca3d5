// libFuzzer target: one request frame (without its size prefix) through header parsing and the
// generated body decoder of its API, at the version the header names.
//
// Properties checked beyond "no crash, no leak, no unbounded allocation":
//   - a body that decodes re-encodes to bytes that decode to an equal message (round trip);
//   - decoding never reads past the frame (ASan) and never trusts a length it has not checked.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "protocol/gen/api_registry.h"
#include "protocol/headers.h"

namespace wp = weir::protocol;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::span<const std::uint8_t> frame(data, size);
  auto header = wp::parse_request_header(frame);
  if (!header) return 0;
  const wp::ApiDescriptor* api = wp::find_api(header->api_key);
  if (api == nullptr || !api->supports(header->api_version)) return 0;
  auto body = frame.subspan(header->size);
  const std::int16_t version = header->api_version;
  for (bool is_request : {true, false}) {
    wp::visit_api(header->api_key, [&]<class Rq, class Rs>(std::type_identity<Rq>, std::type_identity<Rs>) {
      auto check = [&]<class M>(M& m) {
        wp::Reader r(body);
        m.decode(r, version);
        if (!r.ok()) return;
        wp::Bytes once = wp::encode_body(m, version);
        M again;
        if (!wp::decode_body(once, version, again)) std::abort();
        wp::Bytes twice = wp::encode_body(again, version);
        if (once != twice) std::abort();
      };
      if (is_request) {
        Rq m;
        check(m);
      } else {
        Rs m;
        check(m);
      }
    });
  }
  return 0;
}
