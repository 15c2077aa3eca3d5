// The .properties format exactly as java.util.Properties.load(InputStream) reads it (the way
// Kafka's Utils.loadProps reads server.properties):
//  - bytes are ISO-8859-1 characters; \uXXXX escapes give any UTF-16 unit (pairs are joined);
//    the result is kept as UTF-8 (a lone surrogate becomes '?', as Java's UTF-8 encoder does);
//  - natural lines end at \n, \r or \r\n; leading space, \t and \f are skipped; blank lines too;
//  - a line whose first non-blank character is '#' or '!' is a comment (and never continues);
//  - a line ending in an odd number of backslashes continues on the next one, whose leading
//    blanks are dropped;
//  - the key ends at the first unescaped '=', ':', space, \t or \f; blanks, then one '=' or
//    ':', then blanks are skipped before the value;
//  - in keys and values, \t \n \r \f are control characters, \uXXXX a character, and a
//    backslash before any other character stands for that character;
//  - a later duplicate key wins.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"

namespace weir::config {

// Entries in file order (duplicates kept; the last one wins when applied). The error is Java's
// message for a malformed \uXXXX escape.
[[nodiscard]] Result<std::vector<std::pair<std::string, std::string>>, std::string> parse_properties(
    std::string_view bytes);

// Reads and parses a file; an error names the path (missing, unreadable, a directory, bad escape).
[[nodiscard]] Result<std::vector<std::pair<std::string, std::string>>, std::string> load_properties_file(
    const std::string& path);

}  // namespace weir::config
