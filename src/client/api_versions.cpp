#include "client/api_versions.h"

#include <algorithm>

#include "protocol/gen/api_registry.h"

namespace weir::client {

namespace {
constexpr std::int16_t kUnsupportedVersion = 35;
constexpr std::size_t kMaxApiKey = 512;  // Kafka's keys are < 100; anything above is ignored
}  // namespace

VersionTable::VersionTable(const protocol::ApiVersionsResponse& response) {
  for (const auto& k : response.api_keys) {
    if (k.api_key < 0 || static_cast<std::size_t>(k.api_key) >= kMaxApiKey) continue;
    const auto index = static_cast<std::size_t>(k.api_key);
    if (broker_.size() <= index) broker_.resize(index + 1);
    broker_[index] = VersionRange{k.min_version, k.max_version};
  }
}

std::optional<VersionRange> VersionTable::broker_range(std::int16_t api_key) const {
  if (api_key < 0 || static_cast<std::size_t>(api_key) >= broker_.size()) return std::nullopt;
  const VersionRange r = broker_[static_cast<std::size_t>(api_key)];
  if (r.max < r.min) return std::nullopt;
  return r;
}

std::optional<std::int16_t> VersionTable::pick(std::int16_t api_key, std::optional<std::int16_t> max_version) const {
  const protocol::ApiDescriptor* d = protocol::find_api(api_key);
  const auto broker = broker_range(api_key);
  if (d == nullptr || !broker) return std::nullopt;
  std::int16_t codec_max = d->max_version;
  if (d->latest_version_unstable) --codec_max;
  std::int16_t hi = std::min(codec_max, broker->max);
  if (max_version) hi = std::min(hi, *max_version);
  const std::int16_t lo = std::max(d->min_version, broker->min);
  if (hi < lo) return std::nullopt;
  return hi;
}

HandshakeStep next_handshake_step(std::int16_t sent_version, const protocol::ApiVersionsResponse& response) {
  if (response.error_code == 0) return HandshakeDone{};
  if (response.error_code != kUnsupportedVersion || sent_version == 0) return HandshakeFailed{response.error_code};
  std::int16_t next = 0;
  for (const auto& k : response.api_keys) {
    if (k.api_key == protocol::ApiVersionsRequest::kApiKey) next = k.max_version;
  }
  // Never retry at the version that was refused or above it (a broker contradicting itself).
  next = std::clamp<std::int16_t>(next, 0, static_cast<std::int16_t>(sent_version - 1));
  return HandshakeRetry{next};
}

std::optional<protocol::ApiVersionsResponse> decode_api_versions_response(std::span<const std::uint8_t> body,
                                                                          std::int16_t version) {
  protocol::ApiVersionsResponse response;
  if (protocol::decode_body(body, version, response)) return response;
  if (version == 0) return std::nullopt;
  protocol::ApiVersionsResponse v0;
  if (protocol::decode_body(body, 0, v0)) return v0;
  return std::nullopt;
}

}  // namespace weir::client
