// Java-compatible parsing and printing, as Kafka's ConfigDef does it: weir parses config values
// with the rules Kafka's JVM applies, so that exactly the same texts are accepted and printed.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace weir::config::java {

// String.trim(): strips code points <= U+0020 at both ends.
[[nodiscard]] std::string_view trim(std::string_view s) noexcept;
// Long.parseLong / Integer.parseInt / Short.parseShort of an already trimmed string; bits is 16,
// 32 or 64. nullopt for anything Java refuses (overflow included).
[[nodiscard]] std::optional<std::int64_t> parse_integer(std::string_view s, int bits) noexcept;
// Double.parseDouble (decimal forms, NaN, Infinity, an optional f/F/d/D suffix).
[[nodiscard]] std::optional<double> parse_double(std::string_view s) noexcept;
// Double.toString: "0.5", "1.0E7", "-1.0E-4", "NaN", "Infinity".
[[nodiscard]] std::string double_to_string(double d);
// ConfigDef's list parsing of an already trimmed string: "" -> [], else split at commas with any
// whitespace around them, keeping empty elements ("a," -> ["a", ""]).
[[nodiscard]] std::vector<std::string> split_list(std::string_view s);
// Boolean parsing of ConfigDef: "true" / "false" in any case, after trimming.
[[nodiscard]] std::optional<bool> parse_boolean(std::string_view trimmed) noexcept;

}  // namespace weir::config::java
