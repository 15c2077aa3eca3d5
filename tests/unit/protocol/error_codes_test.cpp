// Error codes in responses: Kafka's names for them, and the generated visitor that finds every
// non-zero one in a response (what the broker counts per API and code).
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "protocol/error_names.h"
#include "protocol/gen/describe_groups_response.h"
#include "protocol/gen/join_group_response.h"
#include "protocol/gen/offset_fetch_response.h"
#include "protocol/gen/produce_response.h"

namespace weir::protocol {
namespace {

using Seen = std::vector<std::pair<std::int16_t, int>>;

template <class M>
Seen errors_of(const M& m) {
  Seen out;
  m.for_each_error_code([&](std::int16_t code, int depth) { out.emplace_back(code, depth); });
  return out;
}

TEST(ErrorNamesTest, KafkaNamesByCode) {
  EXPECT_EQ(error_name(-1), "UNKNOWN_SERVER_ERROR");
  EXPECT_EQ(error_name(0), "NONE");
  EXPECT_EQ(error_name(3), "UNKNOWN_TOPIC_OR_PARTITION");
  EXPECT_EQ(error_name(26), "INVALID_SESSION_TIMEOUT");
  EXPECT_EQ(error_name(81), "GROUP_MAX_SIZE_REACHED");
  EXPECT_EQ(error_name(99), "POSITION_OUT_OF_RANGE");
  EXPECT_EQ(error_name(120), "TRANSACTION_ABORTABLE");
  EXPECT_EQ(error_name(-2), "");
  EXPECT_EQ(error_name(30000), "");
}

TEST(ErrorVisitorTest, ResponseWithoutErrorsVisitsNothing) {
  ProduceResponse r;
  r.responses.emplace_back().partition_responses.resize(3);
  EXPECT_TRUE(errors_of(r).empty());
}

TEST(ErrorVisitorTest, PartitionErrorsAreFoundAtTheirDepth) {
  ProduceResponse r;
  auto& t = r.responses.emplace_back();
  t.partition_responses.resize(3);
  t.partition_responses[1].error_code = 3;
  t.partition_responses[2].error_code = 10;
  EXPECT_EQ(errors_of(r), (Seen{{3, 2}, {10, 2}}));
}

TEST(ErrorVisitorTest, RequestLevelErrorIsDepthZero) {
  JoinGroupResponse r;
  r.error_code = 26;
  EXPECT_EQ(errors_of(r), (Seen{{26, 0}}));
}

TEST(ErrorVisitorTest, BothLevelsOfOneResponse) {
  OffsetFetchResponse r;
  r.error_code = 16;
  auto& g = r.groups.emplace_back();
  g.error_code = 15;
  auto& t = g.topics.emplace_back();
  t.partitions.emplace_back().error_code = 3;
  EXPECT_EQ(errors_of(r), (Seen{{16, 0}, {3, 3}, {15, 1}}));  // in field order
}

TEST(ErrorVisitorTest, EveryEntryOfAnArrayIsVisited) {
  DescribeGroupsResponse r;
  r.groups.resize(2);
  r.groups[0].error_code = 69;
  r.groups[1].error_code = 16;
  EXPECT_EQ(errors_of(r), (Seen{{69, 1}, {16, 1}}));
}

}  // namespace
}  // namespace weir::protocol
