// Subscription regexes: RE2J's syntax and full-string matching, and RE2J's error texts.
#include "group/topic_regex.h"

#include <gtest/gtest.h>

namespace weir::group {
namespace {

bool matches(std::string_view pattern, std::string_view topic) {
  auto c = TopicRegex::compile(pattern);
  EXPECT_TRUE(c.regex.has_value()) << pattern << ": " << c.error;
  return c.regex && c.regex->matches(topic);
}

std::string error_of(std::string_view pattern) {
  auto c = TopicRegex::compile(pattern);
  EXPECT_FALSE(c.regex.has_value()) << pattern;
  return c.error;
}

TEST(TopicRegex, MatchesTheWholeName) {
  EXPECT_TRUE(matches("orders.*", "orders-eu"));
  EXPECT_FALSE(matches("orders", "orders-eu"));
  EXPECT_FALSE(matches("rders.*", "orders"));
  EXPECT_TRUE(matches("^prefix.*", "prefix-a"));
  EXPECT_TRUE(matches("a|b", "b"));
  EXPECT_FALSE(matches("a|b", "ab"));
  EXPECT_TRUE(matches("(?i)ORDERS", "orders"));
  EXPECT_TRUE(matches("__consumer.*", "__consumer_offsets"));
}

TEST(TopicRegex, TakesRe2jOnlySyntax) {
  // RE2J's named groups (?<name>...), also inside a regex that quotes or classes the same text.
  EXPECT_TRUE(matches("(?<kind>orders|payments)-eu", "payments-eu"));
  EXPECT_TRUE(matches("[(?<x>]+", "(?<"));
  EXPECT_TRUE(matches("\\Q(?<x>\\E", "(?<x>"));
  EXPECT_TRUE(matches("[[:alpha:]]+", "orders"));
}

TEST(TopicRegex, ErrorsCarryRe2jsDescriptions) {
  EXPECT_EQ(error_of("[a"), "missing closing ]");
  EXPECT_EQ(error_of("(a"), "missing closing )");
  EXPECT_EQ(error_of("a)"), "regexp/syntax: internal error");
  EXPECT_EQ(error_of("a{1001}"), "invalid repeat count");
  EXPECT_EQ(error_of("a**"), "invalid nested repetition operator");
  EXPECT_EQ(error_of("*a"), "missing argument to repetition operator");
  EXPECT_EQ(error_of("ab\\"), "trailing backslash at end of expression");
  EXPECT_EQ(error_of("\\8"), "invalid escape sequence");
  EXPECT_EQ(error_of("[z-a]"), "invalid character class range");
  EXPECT_EQ(error_of("(?=a)"), "invalid or unsupported Perl syntax");
  EXPECT_EQ(error_of("(?<=a)"), "invalid named capture");
  EXPECT_EQ(error_of("(?P<>a)"), "invalid named capture");
  EXPECT_EQ(error_of("(?<n>a)(?P<n>b)"), "duplicate capture group name");
  // \C is RE2's any-byte escape, not RE2J's; RE2J reports the first error of the pattern.
  EXPECT_EQ(error_of("a\\C"), "invalid escape sequence");
  EXPECT_EQ(error_of("[\\C]"), "invalid escape sequence");
  EXPECT_EQ(error_of("a**\\C"), "invalid nested repetition operator");
}

TEST(TopicRegex, InvalidRegexMessageIsKafkas) {
  EXPECT_EQ(invalid_regex_message("orders.*"), std::nullopt);
  EXPECT_EQ(invalid_regex_message("[a"),
            "SubscribedTopicRegex `[a` is not a valid regular expression: missing closing ].");
}

}  // namespace
}  // namespace weir::group
