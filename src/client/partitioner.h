// Where Kafka's producers put a keyed record: the default partitioner's
// toPositive(murmur2(key)) % partitions, with Kafka's murmur2 (seed 0x9747b28c), so that a key
// lands on the partition Kafka's Java client and librdkafka's murmur2 partitioner pick.
#pragma once

#include <cstdint>
#include <span>

namespace weir::client {

// Kafka's Utils.murmur2 over the key's bytes.
[[nodiscard]] std::int32_t murmur2(std::span<const std::byte> data) noexcept;

// The partition of a non-null key among `partitions` (> 0).
[[nodiscard]] std::int32_t partition_for_key(std::span<const std::byte> key, std::int32_t partitions) noexcept;

}  // namespace weir::client
