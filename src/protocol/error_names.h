// Kafka's names of its protocol error codes (Errors.java), for logs and metric labels.
#pragma once

#include <cstdint>
#include <string_view>

namespace weir::protocol {

// "UNKNOWN_TOPIC_OR_PARTITION" for 3, "NONE" for 0; "" for a code this table does not know.
[[nodiscard]] std::string_view error_name(std::int16_t code) noexcept;

}  // namespace weir::protocol
