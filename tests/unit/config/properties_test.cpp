// The .properties reader against java.util.Properties' rules (the scenario test
// test_config_parity.py also compares it with the JVM on a corpus of files).
#include "config/properties.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace wc = weir::config;
using Entries = std::vector<std::pair<std::string, std::string>>;

namespace {
Entries parse(std::string_view text) {
  auto r = wc::parse_properties(text);
  EXPECT_TRUE(r.has_value()) << r.error();
  return r.value_or(Entries{});
}
}  // namespace

TEST(Properties, SeparatorsAreEqualsColonOrWhitespace) {
  EXPECT_EQ(parse("a=1\nb:2\nc 3\nd\t4\ne = 5\nf  :  6\ng\n"),
            (Entries{{"a", "1"}, {"b", "2"}, {"c", "3"}, {"d", "4"}, {"e", "5"}, {"f", "6"}, {"g", ""}}));
  // Only the first separator counts; a second '=' is part of the value.
  EXPECT_EQ(parse("a==1\nb = =2\nc 3=4\n"), (Entries{{"a", "=1"}, {"b", "=2"}, {"c", "3=4"}}));
}

TEST(Properties, CommentsOnlyAtTheStartOfALine) {
  EXPECT_EQ(parse("# c\n  ! c\na=1 # not a comment\n"), (Entries{{"a", "1 # not a comment"}}));
}

TEST(Properties, ContinuationLinesDropTheNextLinesLeadingBlanks) {
  EXPECT_EQ(parse("a=x,\\\n    y,\\\r\n\tz\nb=1\\\\\nc=2"), (Entries{{"a", "x,y,z"}, {"b", "1\\"}, {"c", "2"}}));
  // A comment line never continues.
  EXPECT_EQ(parse("# c \\\na=1\n"), (Entries{{"a", "1"}}));
}

TEST(Properties, EscapesInKeysAndValues) {
  EXPECT_EQ(parse("k\\=ey\\ x=v\\tw\\n\\u0041\\q\n"), (Entries{{"k=ey x", "v\tw\nAq"}}));
  EXPECT_EQ(parse("e=\\u00e9\\uD83D\\uDE00\n"), (Entries{{"e", "\xc3\xa9\xf0\x9f\x98\x80"}}));
  // Bytes are ISO-8859-1, as Properties.load(InputStream) reads them.
  EXPECT_EQ(parse("l=\xe9\n"), (Entries{{"l", "\xc3\xa9"}}));
  auto bad = wc::parse_properties("a=\\u00g1\n");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error(), "Malformed \\uxxxx encoding.");
}

TEST(Properties, ADirectoryOrAMissingFileIsAnErrorNamingThePath) {
  const std::string dir = ::testing::TempDir();
  auto d = wc::load_properties_file(dir);
  ASSERT_FALSE(d.has_value());
  EXPECT_NE(d.error().find(dir), std::string::npos);
  EXPECT_NE(d.error().find("directory"), std::string::npos);
  auto m = wc::load_properties_file(dir + "/no-such-file.properties");
  ASSERT_FALSE(m.has_value());
  EXPECT_NE(m.error().find("no-such-file.properties"), std::string::npos);
}
