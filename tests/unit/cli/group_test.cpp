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

// kafka-consumer-groups' assignment column: each topic's partitions in order, the topics' texts
// sorted as strings: "t10:..." before "t1:..." and "a-b:..." before "a:..." ('0' and '-' sort
// before ':').
TEST(GroupDescribeTest, AssignmentTextSortsPartitionsAndTopicTexts) {
  EXPECT_EQ(assignment_text({{"t10", 0}, {"t1", 2}, {"t1", 0}}), "t10:0;t1:0,2");
  EXPECT_EQ(assignment_text({{"a", 0}, {"a-b", 1}}), "a-b:1;a:0");
  EXPECT_EQ(assignment_text({}), "-");
}

protocol::ConsumerGroupDescribeResponse::Assignment assignment_of(const std::string& topic,
                                                                  std::vector<std::int32_t> partitions) {
  protocol::ConsumerGroupDescribeResponse::Assignment a;
  auto& tp = a.topic_partitions.emplace_back();
  tp.topic_name = topic;
  tp.partitions = std::move(partitions);
  return a;
}

// Two members as ConsumerGroupDescribe v1 describes them: a consumer protocol member and a
// static classic member still owning nothing.
protocol::ConsumerGroupDescribeResponse::DescribedGroup mixed_group() {
  protocol::ConsumerGroupDescribeResponse::DescribedGroup g;
  g.group_id = "g1";
  g.group_state = "Reconciling";
  g.group_epoch = 9;
  g.assignment_epoch = 8;
  g.assignor_name = "uniform";
  auto& a = g.members.emplace_back();
  a.member_id = "member-a-0123456789";
  a.client_id = "consumer-a";
  a.client_host = "/127.0.0.1";
  a.member_epoch = 7;
  a.assignment = assignment_of("orders", {1, 0});
  a.target_assignment = assignment_of("orders", {2, 0, 1});
  a.member_type = 1;
  auto& b = g.members.emplace_back();
  b.member_id = "member-b";
  b.instance_id = "static-b";
  b.client_id = "c-b";
  b.client_host = "/10.0.0.2";
  b.member_epoch = 8;
  b.target_assignment = assignment_of("orders", {2});
  b.member_type = 0;
  return g;
}

TEST(GroupDescribeTest, ConsumerGroupDescribeGivesEpochsTargetsAndMemberTypes) {
  const GroupDescription d = group_description(mixed_group());
  EXPECT_TRUE(d.consumer_protocol);
  EXPECT_EQ(d.state, "Reconciling");
  EXPECT_EQ(d.assignor, "uniform");
  EXPECT_EQ(d.group_epoch, 9);
  EXPECT_EQ(d.target_assignment_epoch, 8);
  ASSERT_EQ(d.members.size(), 2U);
  const auto& a = d.members[0];
  EXPECT_EQ(a.assignment, (std::vector<TopicPartition>{{"orders", 0}, {"orders", 1}}));
  EXPECT_EQ(a.target_assignment, (std::vector<TopicPartition>{{"orders", 0}, {"orders", 1}, {"orders", 2}}));
  EXPECT_EQ(a.member_epoch, 7);
  EXPECT_EQ(a.upgraded, true);
  EXPECT_EQ(a.instance_id, "");
  EXPECT_EQ(d.members[1].instance_id, "static-b");
  EXPECT_EQ(d.members[1].upgraded, false);
  auto v0 = mixed_group();
  for (auto& m : v0.members) m.member_type = -1;  // v0 has no member type
  EXPECT_EQ(group_description(v0).members[0].upgraded, std::nullopt);
}

TEST(GroupDescribeTest, DescribeGroupsGivesNoEpochsOrTargets) {
  protocol::DescribeGroupsResponse::DescribedGroup g;
  g.group_state = "Stable";
  g.protocol_type = "consumer";
  g.protocol_data = "range";
  auto& m = g.members.emplace_back();
  m.member_id = "m";
  m.group_instance_id = "i";
  // ConsumerProtocolAssignment v0: topic "t" partitions 1, 0.
  m.member_assignment = {0, 0, 0, 0, 0, 1, 0, 1, 't', 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0};
  const GroupDescription d = group_description(g);
  EXPECT_FALSE(d.consumer_protocol);
  EXPECT_EQ(d.assignor, "range");
  EXPECT_EQ(d.group_epoch, std::nullopt);
  ASSERT_EQ(d.members.size(), 1U);
  EXPECT_EQ(d.members[0].assignment, (std::vector<TopicPartition>{{"t", 0}, {"t", 1}}));
  EXPECT_EQ(d.members[0].instance_id, "i");
  EXPECT_EQ(d.members[0].target_assignment, std::nullopt);
  EXPECT_EQ(d.members[0].member_epoch, std::nullopt);
}

// The expected tables are Kafka 4.3.1's printMembers formats applied to the same members.
TEST(GroupDescribeTest, MembersTableOfAConsumerGroupWithVerbose) {
  auto g = mixed_group();
  g.members.pop_back();
  EXPECT_EQ(members_table("g1", group_description(g), true),
            "\nGROUP           CONSUMER-ID         HOST            CLIENT-ID       #PARTITIONS     CURRENT-EPOCH   "
            "CURRENT-ASSIGNMENT   TARGET-EPOCH    TARGET-ASSIGNMENT   \n"
            "g1              member-a-0123456789 /127.0.0.1      consumer-a      2               7               "
            "orders:0,1           8               orders:0,1,2        \n");
}

TEST(GroupDescribeTest, MembersTableShowsInstanceIdsAndUpgradedInAMixedGroup) {
  const GroupDescription d = group_description(mixed_group());
  EXPECT_EQ(members_table("g1", d, true),
            "\nGROUP           CONSUMER-ID         GROUP-INSTANCE-ID HOST            CLIENT-ID       #PARTITIONS     "
            "CURRENT-EPOCH   CURRENT-ASSIGNMENT   TARGET-EPOCH    TARGET-ASSIGNMENT    UPGRADED\n"
            "g1              member-a-0123456789                   /127.0.0.1      consumer-a      2               "
            "7               orders:0,1           8               orders:0,1,2         true\n"
            "g1              member-b            static-b          /10.0.0.2       c-b             0               "
            "8               -                    8               orders:2             false\n");
  EXPECT_EQ(members_table("g1", d, false),
            "\nGROUP           CONSUMER-ID         GROUP-INSTANCE-ID HOST            CLIENT-ID       #PARTITIONS     \n"
            "g1              member-a-0123456789                   /127.0.0.1      consumer-a      2               \n"
            "g1              member-b            static-b          /10.0.0.2       c-b             0               \n");
}

}  // namespace
}  // namespace weir::cli
