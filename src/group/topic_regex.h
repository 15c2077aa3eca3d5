// Regular expressions of consumer-group subscriptions (KIP-848 SubscribedTopicRegex), as Kafka
// 4.3.1 reads them: RE2J's syntax (Pattern.compile with its default flags), matched against the
// whole topic name, with RE2J's descriptions of what is wrong with an invalid one. weir compiles
// them with RE2 (the C++ library RE2J ports) and smooths over where the two differ:
//   - `(?<name>re)` is RE2J's syntax for a named group too (RE2 of 2022 knows only `(?P<name>re)`);
//   - `\C` (any byte) is not an RE2J escape, and a repeated group name is an error in RE2J;
//   - RE2's error codes are given RE2J's texts ("missing closing ]", "invalid repeat count", ...).
// Still different: RE2 refuses nested repetitions whose counts multiply past 1000 (`(a{500}){3}`)
// and patterns whose program outgrows its memory budget, which RE2J accepts.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace re2 {
class RE2;
}

namespace weir::group {

class TopicRegex {
 public:
  // The compiled pattern, or RE2J's description of the syntax error (PatternSyntaxException's
  // getDescription(), e.g. "missing closing ]").
  struct Compiled;
  [[nodiscard]] static Compiled compile(std::string_view pattern);

  ~TopicRegex();
  TopicRegex(TopicRegex&&) noexcept;
  TopicRegex& operator=(TopicRegex&&) noexcept;

  // Matcher.matches(): the whole name matches.
  [[nodiscard]] bool matches(std::string_view topic) const;

 private:
  explicit TopicRegex(std::unique_ptr<re2::RE2> re);
  std::unique_ptr<re2::RE2> re_;
};

struct TopicRegex::Compiled {
  std::optional<TopicRegex> regex;
  std::string error;  // set when regex is not
};

// Kafka's Utils.throwIfRegularExpressionIsInvalid: nullopt when `pattern` compiles, else the
// message of its INVALID_REGULAR_EXPRESSION.
[[nodiscard]] std::optional<std::string> invalid_regex_message(std::string_view pattern);

}  // namespace weir::group
