// Errors of the metadata module.
//
// Two kinds:
//  - Errc: why the controller refused (part of) an admin request. Each value is one Kafka error
//    code (kafka_code()); ApiError pairs it with the message Apache Kafka 4.3.1 sends for the case.
//    The controller answers protocol requests, so it fills Kafka codes into responses itself.
//  - StoreErrc: why decoding, replaying or persisting metadata records failed (a corrupt or
//    foreign metadata log, an I/O error). These never reach a client.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace weir::metadata {

enum class Errc : std::uint8_t {
  none,
  unknown_server_error,        // -1
  unknown_topic_or_partition,  // 3
  invalid_topic,               // 17 INVALID_TOPIC_EXCEPTION
  topic_already_exists,        // 36
  invalid_partitions,          // 37
  invalid_replication_factor,  // 38
  invalid_replica_assignment,  // 39
  invalid_config,              // 40
  invalid_request,             // 42
  policy_violation,            // 44
  preferred_leader_not_available,  // 80
  eligible_leaders_not_available,  // 83
  election_not_needed,             // 84
  no_reassignment_in_progress,     // 85
  unknown_topic_id,            // 100
};

// The Kafka protocol error code of e.
[[nodiscard]] std::int16_t kafka_code(Errc e) noexcept;
// Kafka's default message for the code (what Kafka sends when an exception carries no message of
// its own), e.g. "This server does not host this topic-partition.".
[[nodiscard]] std::string_view default_message(Errc e) noexcept;
[[nodiscard]] std::string_view to_string(Errc e) noexcept;

// An error code and the message that goes with it in a response. message is nullopt where Kafka
// sends null (e.g. CreatePartitions for an unknown topic).
struct ApiError {
  Errc code = Errc::none;
  std::optional<std::string> message;

  [[nodiscard]] static ApiError ok() { return {}; }
  // The code with Kafka's default message for it.
  [[nodiscard]] static ApiError of(Errc code) { return {code, std::string(default_message(code))}; }
  [[nodiscard]] bool is_ok() const noexcept { return code == Errc::none; }
  [[nodiscard]] std::int16_t kafka_code() const noexcept { return metadata::kafka_code(code); }
  bool operator==(const ApiError&) const = default;
};

enum class StoreErrc : std::uint8_t {
  // Record framing (metadata_record.h).
  truncated_record,     // the value ends inside the frame header or the record body
  unsupported_frame,    // frame version other than 1
  unknown_record_type,  // an api key this build does not know
  unsupported_version,  // a record version outside the schema's range
  trailing_bytes,       // bytes left after the record body
  // Replay (image.h): records that contradict the image.
  inconsistent_record,
  // The metadata log (metadata_log.h).
  io_error,
  corrupt_log,  // a valid batch whose records cannot be decoded or replayed
  batch_too_large,
  log_failed,  // an earlier append failed; the log refuses further appends
};

[[nodiscard]] std::string_view to_string(StoreErrc e) noexcept;

}  // namespace weir::metadata

template <>
struct fmt::formatter<weir::metadata::Errc> : fmt::formatter<std::string_view> {
  template <class FormatContext>
  auto format(weir::metadata::Errc e, FormatContext& ctx) const {
    return fmt::formatter<std::string_view>::format(weir::metadata::to_string(e), ctx);
  }
};

template <>
struct fmt::formatter<weir::metadata::StoreErrc> : fmt::formatter<std::string_view> {
  template <class FormatContext>
  auto format(weir::metadata::StoreErrc e, FormatContext& ctx) const {
    return fmt::formatter<std::string_view>::format(weir::metadata::to_string(e), ctx);
  }
};
