// Version negotiation: which version of each API a connection uses, from the broker's
// ApiVersions answer and what the codec (protocol/gen) can encode.
//
// For each API both know, the connection uses the highest version in the intersection of the
// broker's [min, max] and the codec's; a codec version marked unstable ("latestVersionUnstable")
// is never picked, as Kafka's clients do not pick one unless told to. An API with no common
// version is unusable on that connection (kUnsupported errors).
//
// The handshake itself: the client first sends the newest ApiVersions request it knows (v4).
// A broker too old for it answers UNSUPPORTED_VERSION with a v0-encoded body listing the
// ApiVersions versions it supports (Kafka 2.4+); the client retries with the highest of those
// (or v0 when the list is empty), as Kafka's NetworkClient does. Any other error, or an error to
// a v0 request, ends the handshake.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "protocol/gen/api_versions_response.h"

namespace weir::client {

struct VersionRange {
  std::int16_t min = 0;
  std::int16_t max = -1;  // max < min: none
};

class VersionTable {
 public:
  VersionTable() = default;
  // From the broker's advertised ranges.
  explicit VersionTable(const protocol::ApiVersionsResponse& response);

  // The version to use for api_key, capped at max_version when given; nullopt when there is none.
  [[nodiscard]] std::optional<std::int16_t> pick(std::int16_t api_key,
                                                 std::optional<std::int16_t> max_version = std::nullopt) const;
  // What the broker advertised for api_key (not intersected), if anything.
  [[nodiscard]] std::optional<VersionRange> broker_range(std::int16_t api_key) const;

 private:
  std::vector<VersionRange> broker_;  // indexed by api key; absent: max < min
};

// What to do after an ApiVersions answer to a request sent at `sent_version`.
struct HandshakeDone {};
struct HandshakeRetry {
  std::int16_t version;
};
struct HandshakeFailed {
  std::int16_t error_code;
};
using HandshakeStep = std::variant<HandshakeDone, HandshakeRetry, HandshakeFailed>;

[[nodiscard]] HandshakeStep next_handshake_step(std::int16_t sent_version,
                                                const protocol::ApiVersionsResponse& response);

// Decodes an ApiVersions response body to a request sent at `version`. A broker that does not
// know that version answers in v0, so a body that does not decode at `version` is read at v0.
[[nodiscard]] std::optional<protocol::ApiVersionsResponse> decode_api_versions_response(
    std::span<const std::uint8_t> body, std::int16_t version);

}  // namespace weir::client
