// `weir group list|describe|seek|delete|delete-offsets`: consumer groups and, per partition, the
// committed offset, log end offset, lag and owner, printed as kafka-consumer-groups prints them.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"
#include "protocol/gen/consumer_group_describe_response.h"
#include "protocol/gen/describe_groups_response.h"

namespace weir::cli {

void add_group_command(CLI::App& app, int& exit_code);

using TopicPartition = std::pair<std::string, std::int32_t>;

// A consumer group as kafka-consumer-groups reads it (Admin's ConsumerGroupDescription): from
// ConsumerGroupDescribe for a consumer protocol group (KIP-848), else from DescribeGroups.
struct GroupMemberDescription {
  std::string member_id;
  std::string instance_id;  // empty: not a static member
  std::string client_id;
  std::string host;
  std::vector<TopicPartition> assignment;  // sorted
  // Consumer protocol groups only: the coordinator's target for the member and its epoch.
  std::optional<std::vector<TopicPartition>> target_assignment;
  std::optional<std::int32_t> member_epoch;
  // Consumer protocol groups (ConsumerGroupDescribe v1+): a consumer protocol member (true) or a
  // classic one (false) in the group.
  std::optional<bool> upgraded;
};

struct GroupDescription {
  bool consumer_protocol = false;  // the group's type: consumer (KIP-848) or classic
  std::string state;
  std::string assignor;  // the classic group's protocol, the consumer group's assignor
  std::vector<GroupMemberDescription> members;
  std::optional<std::int32_t> group_epoch;              // consumer protocol groups only
  std::optional<std::int32_t> target_assignment_epoch;  // consumer protocol groups only
};

[[nodiscard]] GroupDescription group_description(const protocol::ConsumerGroupDescribeResponse::DescribedGroup& g);
[[nodiscard]] GroupDescription group_description(const protocol::DescribeGroupsResponse::DescribedGroup& g);

// "t1:0,1,2;t2:0" (kafka-consumer-groups' assignment columns: each topic's partitions in order,
// the topics' texts sorted), "-" for none.
[[nodiscard]] std::string assignment_text(const std::vector<TopicPartition>& parts);

// `kafka-consumer-groups --describe --members [--verbose]`'s table for one group: a
// GROUP-INSTANCE-ID column when a member has one, with --verbose the epochs and assignments, and
// an UPGRADED column when the group mixes classic and consumer protocol members.
[[nodiscard]] std::string members_table(const std::string& group, const GroupDescription& g, bool verbose);

// A --from-file reset plan: per group, per (topic, partition), the new offset.
using GroupResetPlans = std::map<std::string, std::map<std::pair<std::string, std::int32_t>, std::int64_t>>;

// Reads a reset plan in the CSV that `weir group seek --export` and `kafka-consumer-groups
// --reset-offsets --export` write: `topic,partition,offset` rows for one group (`single_group`,
// the one group the command names; empty when it names several or --all-groups), or
// `group,topic,partition,offset` rows. Blank lines are skipped. An error names the line.
[[nodiscard]] Result<GroupResetPlans, std::string> parse_reset_plan(std::string_view csv,
                                                                    const std::string& single_group);

// A CSV line's fields: quoted fields may hold commas and "" for a quote (Kafka's tool quotes
// long fields); nullopt for a quote that does not close.
[[nodiscard]] std::optional<std::vector<std::string>> split_csv_line(std::string_view line);
// A value as a CSV field: quoted when it holds a comma, a quote or a line break.
[[nodiscard]] std::string csv_field(std::string_view value);

}  // namespace weir::cli
