// The "consumer" protocol type of classic consumer groups: what a member puts in JoinGroup's
// protocol metadata (ConsumerProtocolSubscription) and what the leader hands each member in
// SyncGroup (ConsumerProtocolAssignment). Both are an int16 version followed by the message at
// that version, never flexible (no tagged fields):
//
//   Subscription v0  [topics: string] user_data: nullable bytes
//                v1  + owned_partitions: [topic: string, partitions: [int32]]
//                v2  + generation_id: int32
//                v3  + rack_id: nullable string
//   Assignment   v0+ [topic: string, partitions: [int32]] user_data: nullable bytes
//
// A version above 3 is read as version 3, as Kafka's ConsumerProtocol does (later versions may
// only append fields). Pure: no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"
#include "protocol/codec.h"

namespace weir::protocol {

using TopicPartition = std::pair<std::string, std::int32_t>;

inline constexpr std::string_view kConsumerProtocolType = "consumer";
inline constexpr std::int16_t kConsumerProtocolVersion = 3;  // what Kafka 4.x's clients write

struct ConsumerSubscription {
  std::vector<std::string> topics;
  std::optional<Bytes> user_data;
  std::vector<TopicPartition> owned_partitions;  // v1+
  std::optional<std::int32_t> generation_id;     // v2+ (-1: none); nullopt when the version lacks it
  std::optional<std::string> rack_id;            // v3+
  std::int16_t version = kConsumerProtocolVersion;
  bool operator==(const ConsumerSubscription&) const = default;
};

struct ConsumerAssignment {
  std::vector<TopicPartition> partitions;
  std::optional<Bytes> user_data;
  std::int16_t version = kConsumerProtocolVersion;
  bool operator==(const ConsumerAssignment&) const = default;
};

// Topics sorted, owned partitions grouped by topic (sorted), as Kafka's serializer writes them.
[[nodiscard]] Bytes encode_subscription(const ConsumerSubscription& s, std::int16_t version = kConsumerProtocolVersion);
// Partitions grouped by topic in the order topics first appear.
[[nodiscard]] Bytes encode_assignment(const ConsumerAssignment& a, std::int16_t version = kConsumerProtocolVersion);

// An error message when the bytes are short, a count is negative or the version is negative.
[[nodiscard]] Result<ConsumerSubscription, std::string> decode_subscription(std::span<const std::uint8_t> bytes);
[[nodiscard]] Result<ConsumerAssignment, std::string> decode_assignment(std::span<const std::uint8_t> bytes);

// The user data the cooperative-sticky assignor adds to a subscription: the generation of the
// member's last assignment (int32), which older subscription versions have no field for.
[[nodiscard]] Bytes encode_generation_user_data(std::int32_t generation);
[[nodiscard]] std::optional<std::int32_t> decode_generation_user_data(std::span<const std::uint8_t> bytes);

}  // namespace weir::protocol
