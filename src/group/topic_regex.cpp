#include "group/topic_regex.h"

#include <fmt/format.h>
#include <re2/re2.h>

#include <set>

namespace weir::group {

namespace {

// RE2 gives up on a program larger than this (its default, 8 MiB, refuses patterns RE2J takes).
constexpr std::int64_t kMaxProgramBytes = 64ll << 20;

// Rewrites RE2J-only syntax into RE2's: `(?<name>` becomes `(?P<name>`, and `\C` becomes `\Z`,
// an escape RE2 refuses at the same place (so that RE2 reports the first error, as RE2J does).
// Literal text (`\Q...\E`) and character classes are copied as they are.
std::string translate(std::string_view p) {
  std::string s;
  s.reserve(p.size() + 4);
  bool in_class = false;
  std::size_t i = 0;
  while (i < p.size()) {
    const char c = p[i];
    if (c == '\\' && i + 1 < p.size()) {
      const char e = p[i + 1];
      if (e == 'Q') {
        const std::size_t end = p.find("\\E", i + 2);
        const std::size_t stop = end == std::string_view::npos ? p.size() : end + 2;
        s.append(p.substr(i, stop - i));
        i = stop;
        continue;
      }
      s += '\\';
      s += e == 'C' ? 'Z' : e;
      i += 2;
      continue;
    }
    if (in_class) {
      if (c == '[' && p.substr(i, 2) == "[:") {
        const std::size_t end = p.find(":]", i + 2);
        if (end != std::string_view::npos) {
          s.append(p.substr(i, end + 2 - i));
          i = end + 2;
          continue;
        }
      }
      if (c == ']') in_class = false;
      s += c;
      ++i;
      continue;
    }
    if (c == '[') {
      in_class = true;
      s += c;
      ++i;
      if (i < p.size() && p[i] == '^') s += p[i++];
      if (i < p.size() && p[i] == ']') s += p[i++];  // a leading ] is literal
      continue;
    }
    if (p.substr(i, 3) == "(?<" && i + 3 < p.size() && p[i + 3] != '=' && p[i + 3] != '!') {
      s += "(?P<";
      i += 3;
      continue;
    }
    s += c;
    ++i;
  }
  return s;
}

// RE2J's description (com.google.re2j.Parser's ERR_* texts) of an RE2 error.
std::string re2j_description(const re2::RE2& re) {
  switch (re.error_code()) {
    case re2::RE2::ErrorBadEscape:
      return "invalid escape sequence";
    case re2::RE2::ErrorBadCharClass:
    case re2::RE2::ErrorBadCharRange:
      return "invalid character class range";
    case re2::RE2::ErrorMissingBracket:
      return "missing closing ]";
    case re2::RE2::ErrorMissingParen:
      return "missing closing )";
    case re2::RE2::ErrorTrailingBackslash:
      return "trailing backslash at end of expression";
    case re2::RE2::ErrorRepeatArgument:
      return "missing argument to repetition operator";
    case re2::RE2::ErrorRepeatSize:
      return "invalid repeat count";
    case re2::RE2::ErrorRepeatOp:
      return "invalid nested repetition operator";
    case re2::RE2::ErrorBadPerlOp:
      // RE2J reads `(?<` as the start of a group name, so a look-behind is a bad name there.
      return re.error_arg().starts_with("(?<") ? "invalid named capture" : "invalid or unsupported Perl syntax";
    case re2::RE2::ErrorBadNamedCapture:
      return "invalid named capture";
    case re2::RE2::ErrorBadUTF8:
      return "invalid UTF-8";
    case re2::RE2::ErrorPatternTooLarge:
      return "pattern too large - compile failed";
    default:
      // Includes an unexpected ')', which RE2J 1.8 reports as an internal error.
      return "regexp/syntax: internal error";
  }
}

}  // namespace

TopicRegex::TopicRegex(std::unique_ptr<re2::RE2> re) : re_(std::move(re)) {}
TopicRegex::~TopicRegex() = default;
TopicRegex::TopicRegex(TopicRegex&&) noexcept = default;
TopicRegex& TopicRegex::operator=(TopicRegex&&) noexcept = default;

TopicRegex::Compiled TopicRegex::compile(std::string_view pattern) {
  re2::RE2::Options options;
  options.set_log_errors(false);
  options.set_max_mem(kMaxProgramBytes);
  auto re = std::make_unique<re2::RE2>(translate(pattern), options);
  Compiled out;
  if (!re->ok()) {
    out.error = re2j_description(*re);
    return out;
  }
  std::set<std::string_view> names;
  for (const auto& [index, name] : re->CapturingGroupNames()) {
    if (!names.insert(name).second) {
      out.error = "duplicate capture group name";
      return out;
    }
  }
  out.regex = TopicRegex(std::move(re));
  return out;
}

bool TopicRegex::matches(std::string_view topic) const { return re2::RE2::FullMatch(topic, *re_); }

std::optional<std::string> invalid_regex_message(std::string_view pattern) {
  TopicRegex::Compiled c = TopicRegex::compile(pattern);
  if (c.regex) return std::nullopt;
  return fmt::format("SubscribedTopicRegex `{}` is not a valid regular expression: {}.", pattern, c.error);
}

}  // namespace weir::group
