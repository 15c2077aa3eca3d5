// `weir group seek --from-file`: reading the reset plans that --export (weir's or Kafka's) writes.
#include "cli/group.h"

#include <gtest/gtest.h>

namespace weir::cli {
namespace {

TEST(ResetPlanTest, TopicPartitionOffsetRowsBelongToTheOneNamedGroup) {
  auto plans = parse_reset_plan("orders,0,5\norders,1,7\r\n\npayments,0,0\n\n", "g1");
  ASSERT_TRUE(plans) << plans.error();
  ASSERT_EQ(plans->size(), 1U);
  const auto& g1 = plans->at("g1");
  EXPECT_EQ(g1.size(), 3U);
  EXPECT_EQ(g1.at({"orders", 0}), 5);
  EXPECT_EQ(g1.at({"orders", 1}), 7);
  EXPECT_EQ(g1.at({"payments", 0}), 0);
}

TEST(ResetPlanTest, GroupRowsNameTheirGroupsAndMayBeQuoted) {
  auto plans = parse_reset_plan("g1,orders,0,5\n\"a-rather-long-group-name-here\",\"orders\",1,2\n\"x,\"\"y\"\"\",t,0,1\n",
                                "");
  ASSERT_TRUE(plans) << plans.error();
  EXPECT_EQ(plans->at("g1").at({"orders", 0}), 5);
  EXPECT_EQ(plans->at("a-rather-long-group-name-here").at({"orders", 1}), 2);
  EXPECT_EQ(plans->at("x,\"y\"").at({"t", 0}), 1);
  // With one group named, rows with a group still name theirs (as kafka-consumer-groups reads them).
  auto named = parse_reset_plan("g2,orders,0,5\n", "g1");
  ASSERT_TRUE(named);
  EXPECT_TRUE(named->contains("g2"));
  EXPECT_FALSE(named->contains("g1"));
}

TEST(ResetPlanTest, BadRowsAreRefusedWithTheirLineNumber) {
  EXPECT_EQ(parse_reset_plan("orders,0,5\norders,1,-1\n", "g1").error(), "line 2: invalid negative offset -1");
  EXPECT_TRUE(parse_reset_plan("orders,0,5\n", "").error().find("rows are for one group") != std::string::npos);
  EXPECT_TRUE(parse_reset_plan("orders,0,5\ng,orders,1,5\n", "g").error().starts_with("line 2: every row needs"));
  EXPECT_TRUE(parse_reset_plan("orders,x,5\n", "g").error().starts_with("line 1: expected a topic and a partition"));
  EXPECT_TRUE(parse_reset_plan("orders,0,5x\n", "g").error().starts_with("line 1: expected an offset"));
  EXPECT_TRUE(parse_reset_plan("orders,0\n", "g").error().starts_with("line 1: expected topic,partition,offset"));
  EXPECT_TRUE(parse_reset_plan("a,b,orders,0,5\n", "g").error().starts_with("line 1: expected topic,partition"));
  EXPECT_TRUE(parse_reset_plan(",orders,0,5\n", "g").error().starts_with("line 1: the group is empty"));
  EXPECT_TRUE(parse_reset_plan("\"g,orders,0,5\n", "g").error().starts_with("line 1: expected topic,partition"));
}

TEST(CsvFieldTest, QuotesOnlyWhatNeedsItAndSplitsItBack) {
  EXPECT_EQ(csv_field("orders"), "orders");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  const std::string line = csv_field("a,b") + "," + csv_field("q\"") + ",,x";
  EXPECT_EQ(split_csv_line(line), (std::vector<std::string>{"a,b", "q\"", "", "x"}));
  EXPECT_EQ(split_csv_line("\"a\"b,c"), std::nullopt);  // text after a closing quote
}

}  // namespace
}  // namespace weir::cli
