// The pure parts the CLI's client commands share: JSON text, aligned tables, "did you mean".
#include "cli/client_command.h"

#include <gtest/gtest.h>

namespace weir::cli {
namespace {

TEST(JsonTest, PlacesCommasBetweenMembersAndElements) {
  Json j;
  j.begin_object().key("a").value(std::int64_t{1}).key("b").begin_array().value("x").value(true).null().end_array();
  j.key("c").begin_object().end_object().key("d").ints({1, 2, 3}).end_object();
  EXPECT_EQ(j.str(), R"({"a":1,"b":["x",true,null],"c":{},"d":[1,2,3]})");
}

TEST(JsonTest, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(Json::quote("a\"b\\c\n\t\x01"), R"("a\"b\\c\n\t\u0001")");
  EXPECT_EQ(Json::quote("ünï"), "\"ünï\"");  // UTF-8 passes through
}

TEST(TableTest, AlignsColumnsToTheWidestCellWithoutTrailingBlanks) {
  Table t({"PARTITION", "LEADER", "ISR"});
  t.add({"0", "1", "1,2,3"});
  t.add({"10", "none", ""});
  EXPECT_EQ(t.render(),
            "PARTITION  LEADER  ISR\n"
            "0          1       1,2,3\n"
            "10         none\n");
  EXPECT_FALSE(t.empty());
  EXPECT_TRUE(Table({"A"}).empty());
}

TEST(JoinIntsTest, CommaSeparated) {
  EXPECT_EQ(join_ints({}), "");
  EXPECT_EQ(join_ints({3, 1, 2}), "3,1,2");
}

TEST(ClosestNameTest, SuggestsANearNameAndNothingFar) {
  const std::vector<std::string> topics{"orders", "payments", "__consumer_offsets"};
  EXPECT_EQ(closest_name("ordres", topics), "orders");  // a transposition counts once
  EXPECT_EQ(closest_name("order", topics), "orders");
  EXPECT_EQ(closest_name("paymnets", topics), "payments");
  EXPECT_EQ(closest_name("inventory", topics), std::nullopt);
  EXPECT_EQ(closest_name("orders", topics), std::nullopt);  // the name itself is no suggestion
  EXPECT_EQ(closest_name("x", {}), std::nullopt);
}

}  // namespace
}  // namespace weir::cli
