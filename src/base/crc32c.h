// CRC32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of Kafka record batches.
//
// crc32c() uses the SSE4.2 crc32 instruction when the CPU has it (checked once at run time; the
// rest of the program is not compiled for SSE4.2) and a table-driven software version otherwise.
// Both give identical results. Thread-safe; no allocation.
#pragma once

#include <cstdint>

#include "base/bytes.h"

namespace weir {

// CRC32C of data. crc32c("123456789") == 0xE3069283.
[[nodiscard]] std::uint32_t crc32c(ByteSpan data) noexcept;

// Continues a CRC: crc32c_extend(crc32c(a), b) == crc32c(a ++ b). crc32c_extend(0, x) == crc32c(x).
[[nodiscard]] std::uint32_t crc32c_extend(std::uint32_t crc, ByteSpan data) noexcept;

namespace detail {
// The two implementations, exposed for tests and benchmarks. crc32c_hardware() must only be
// called when crc32c_hardware_available() is true.
[[nodiscard]] bool crc32c_hardware_available() noexcept;
[[nodiscard]] std::uint32_t crc32c_software(std::uint32_t crc, ByteSpan data) noexcept;
[[nodiscard]] std::uint32_t crc32c_hardware(std::uint32_t crc, ByteSpan data) noexcept;
}  // namespace detail

}  // namespace weir
