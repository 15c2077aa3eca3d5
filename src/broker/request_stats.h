// What the dispatcher counts, per shard: requests, errors, bytes and latency per API, frames that
// closed their connection, and limits hit. Written only on the shard whose connection carried
// the request (handle() runs and resumes there); read by posting to the shard (the error map is
// a plain container) and summed over shards (metrics_report.h).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <unordered_map>

#include "base/log.h"
#include "metrics/histogram.h"
#include "metrics/metric.h"

namespace weir::broker {

inline constexpr std::size_t kMaxApiKey = 128;
// Requests are counted by version up to this (Kafka's highest version of any API is below 20).
inline constexpr std::size_t kCountedVersions = 32;

struct ApiStats {
  metrics::Counter requests;
  std::array<metrics::Counter, kCountedVersions> requests_by_version;  // as Kafka's RequestsPerSec{version}
  metrics::Counter error_responses;  // responses carrying at least one non-zero error code
  metrics::Counter request_bytes;    // with the 4-byte size prefix
  metrics::Counter response_bytes;
  metrics::Gauge in_flight;
  metrics::Histogram latency_us;  // frame read -> response handed to the writer
};

// Why a frame closed its connection (Kafka closes the connection for each of these).
enum class Malformed : std::uint8_t { kHeader, kUnknownApi, kUnsupportedVersion, kBody, kCount };
[[nodiscard]] std::string_view to_string(Malformed m);

// Limits weir enforces by refusing something; each has a counter (DESIGN.md "Put a limit on
// everything"). The two network limits are counted by net::ShardStats.
enum class Limit : std::uint8_t {
  kMaxMessageBytes,        // MESSAGE_TOO_LARGE: a batch above max.message.bytes
  kSegmentBytes,           // RECORD_LIST_TOO_LARGE: one append above segment.bytes
  kOffsetMetadataMaxBytes, // OFFSET_METADATA_TOO_LARGE: offset.metadata.max.bytes
  kGroupMaxSize,           // GROUP_MAX_SIZE_REACHED: group.max.size
  kGroupSessionTimeout,    // INVALID_SESSION_TIMEOUT: group.{min,max}.session.timeout.ms
  kDecompressedBatchBytes, // INVALID_RECORD: weir.produce.max.decompressed.batch.bytes (counted by
  kCompressionRatio,       // INVALID_RECORD: weir.produce.max.compression.ratio      CompressedBatches)
  kCount,
};
[[nodiscard]] std::string_view config_name(Limit l);
// The limit a Kafka error code reports hitting, if it is one of them.
[[nodiscard]] bool limit_of_error(std::int16_t error_code, Limit& out);

struct alignas(64) RequestStats {
  std::array<ApiStats, kMaxApiKey> apis;
  // (api key, error code, request level?) -> occurrences; errors are rare, so a map.
  std::unordered_map<std::uint32_t, std::uint64_t> errors;
  std::array<metrics::Counter, static_cast<std::size_t>(Malformed::kCount)> malformed;
  std::array<metrics::Counter, static_cast<std::size_t>(Limit::kCount)> limits;
  // Rejected-request log lines (one per rejected request), bounded per shard.
  log::RateLimiter reject_log{20, 100};

  [[nodiscard]] static std::uint32_t error_key(std::int16_t api, std::int16_t code, bool request_level) {
    return (static_cast<std::uint32_t>(static_cast<std::uint16_t>(api)) << 17) |
           (static_cast<std::uint32_t>(static_cast<std::uint16_t>(code)) << 1) | (request_level ? 1u : 0u);
  }
  void count_error(std::int16_t api, std::int16_t code, bool request_level, std::uint64_t occurrences = 1) {
    errors[error_key(api, code, request_level)] += occurrences;
    if (Limit l{}; limit_of_error(code, l)) limits[static_cast<std::size_t>(l)].inc(occurrences);
  }
};

}  // namespace weir::broker
