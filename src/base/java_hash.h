// java.lang.String.hashCode over a UTF-8 string (hashed as its UTF-16 code units, wrapping
// int32), which Kafka uses to place groups and transactional ids in their internal topics.
#pragma once

#include <cstdint>
#include <string_view>

namespace weir {

[[nodiscard]] std::int32_t java_string_hash(std::string_view utf8);

// Kafka's Utils.abs(hash) % partitions (Utils.abs maps Integer.MIN_VALUE to 0).
[[nodiscard]] std::int32_t java_partition_for(std::string_view key, std::int32_t partitions);

}  // namespace weir
