// ElectLeaders, AlterPartitionReassignments and ListPartitionReassignments. The single-node
// answers (codes and messages) are what Apache Kafka 4.3.1 answered to the same requests; the
// elections with other brokers follow Kafka's ReplicationControlManager.electLeader.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "controller_test_util.h"

namespace weir::metadata {
namespace {

using protocol::AlterPartitionReassignmentsRequest;
using protocol::ElectLeadersRequest;
using protocol::ListPartitionReassignmentsRequest;

class ElectionsTest : public testing::ControllerFixture {
 protected:
  ElectionsTest() {
    for (std::int32_t id : {2, 3}) {
      RegisterBrokerRecord b;
      b.broker_id = id;
      b.broker_epoch = id;
      b.fenced = false;
      commit({b});
    }
  }

  // Creates "t" with partition 0 on replicas {1, 2, 3} (ISR all three, leader 1) and partition 1
  // on {2, 3, 1} (leader 2).
  Uuid create_t() {
    auto t = testing::topic("t", -1, -1);
    for (auto [index, replicas] : std::vector<std::pair<int, std::vector<int>>>{{0, {1, 2, 3}}, {1, {2, 3, 1}}}) {
      protocol::CreateTopicsRequest::CreatableReplicaAssignment a;
      a.partition_index = index;
      a.broker_ids = replicas;
      t.assignments.push_back(a);
    }
    auto result = create({t});
    EXPECT_EQ(result.response.topics.at(0).error_code, 0);
    return controller_.image().topic("t")->id;
  }

  void change(const Uuid& id, std::int32_t partition, std::int32_t leader, std::vector<std::int32_t> isr) {
    PartitionChangeRecord r;
    r.topic_id = id;
    r.partition_id = partition;
    r.leader = leader;
    r.isr = std::move(isr);
    commit({r});
  }

  void set_fenced(std::int32_t broker) {
    FenceBrokerRecord f;
    f.id = broker;
    f.epoch = controller_.image().broker(broker)->broker_epoch;
    commit({f});
  }

  ControllerResult<protocol::ElectLeadersResponse> elect(std::int8_t type, std::vector<std::int32_t> partitions,
                                                         std::string topic = "t", std::int16_t version = 2) {
    ElectLeadersRequest req;
    req.election_type = type;
    auto& tp = req.topic_partitions->emplace_back();
    tp.topic = std::move(topic);
    tp.partitions = std::move(partitions);
    return controller_.elect_leaders(req, version);
  }

  const PartitionImage& partition(std::int32_t index) {
    return controller_.image().topic("t")->partitions.at(static_cast<std::size_t>(index));
  }
};

TEST_F(ElectionsTest, PreferredReplicaAlreadyLeadingIsElectionNotNeeded) {
  create_t();
  for (std::int8_t type : {0, 1}) {
    const auto r = elect(type, {0, 1});
    EXPECT_TRUE(r.records.empty());
    ASSERT_EQ(r.response.replica_election_results.size(), 1u);
    const auto& parts = r.response.replica_election_results[0].partition_result;
    ASSERT_EQ(parts.size(), 2u);
    for (const auto& p : parts) {
      EXPECT_EQ(p.error_code, 84);
      EXPECT_EQ(p.error_message, "Leader election not needed for topic partition.");
    }
    EXPECT_EQ(r.response.error_code, 0);
  }
}

TEST_F(ElectionsTest, PreferredElectionMovesTheLeadershipBackWithANewEpoch) {
  const Uuid id = create_t();
  change(id, 0, 2, {1, 2, 3});
  const std::int32_t epoch = partition(0).leader_epoch;
  auto r = elect(0, {0});
  ASSERT_EQ(r.records.size(), 1u);
  const auto& parts = r.response.replica_election_results.at(0).partition_result;
  EXPECT_EQ(parts.at(0).error_code, 0);
  EXPECT_EQ(parts.at(0).error_message, std::nullopt);
  const auto& rec = std::get<PartitionChangeRecord>(r.records[0]);
  EXPECT_EQ(rec.leader, 1);
  EXPECT_EQ(rec.isr, std::nullopt);  // the ISR does not change
  commit(r.records);
  EXPECT_EQ(partition(0).leader, 1);
  EXPECT_EQ(partition(0).leader_epoch, epoch + 1);
  EXPECT_EQ(elect(0, {0}).response.replica_election_results.at(0).partition_result.at(0).error_code, 84);
}

TEST_F(ElectionsTest, PreferredReplicaOutOfTheIsrOrFencedIsNotAvailable) {
  const Uuid id = create_t();
  change(id, 0, 2, {2, 3});
  auto r = elect(0, {0});
  EXPECT_TRUE(r.records.empty());
  EXPECT_EQ(r.response.replica_election_results.at(0).partition_result.at(0).error_code, 80);
  EXPECT_EQ(r.response.replica_election_results.at(0).partition_result.at(0).error_message,
            "The preferred leader was not available.");
  change(id, 0, kNoLeaderChange, {1, 2, 3});
  set_fenced(1);
  EXPECT_EQ(elect(0, {0}).response.replica_election_results.at(0).partition_result.at(0).error_code, 80);
}

TEST_F(ElectionsTest, UncleanElectionPrefersTheIsrThenAnyActiveReplica) {
  const Uuid id = create_t();
  // No leader, an active ISR member: a clean election.
  change(id, 0, kNoLeader, {3});
  auto r = elect(1, {0});
  ASSERT_EQ(r.records.size(), 1u);
  EXPECT_EQ(std::get<PartitionChangeRecord>(r.records[0]).leader, 3);
  EXPECT_EQ(std::get<PartitionChangeRecord>(r.records[0]).leader_recovery_state, -1);
  // The only ISR member fenced: the first active replica, alone in the ISR, recovering.
  set_fenced(3);
  r = elect(1, {0});
  ASSERT_EQ(r.records.size(), 1u);
  const auto& rec = std::get<PartitionChangeRecord>(r.records[0]);
  EXPECT_EQ(rec.leader, 1);
  EXPECT_EQ(rec.isr, (std::vector<std::int32_t>{1}));
  EXPECT_EQ(rec.leader_recovery_state, 1);
  commit(r.records);
  EXPECT_EQ(partition(0).leader, 1);
  EXPECT_EQ(partition(0).leader_recovery_state, 1);
  // Nothing active at all.
  change(id, 1, kNoLeader, {2});
  set_fenced(1);
  set_fenced(2);
  r = elect(1, {1});
  EXPECT_TRUE(r.records.empty());
  EXPECT_EQ(r.response.replica_election_results.at(0).partition_result.at(0).error_code, 83);
  EXPECT_EQ(r.response.replica_election_results.at(0).partition_result.at(0).error_message,
            "Eligible topic partition leaders are not available.");
}

TEST_F(ElectionsTest, UnknownTopicsPartitionsAndTypes) {
  create_t();
  auto r = elect(0, {7});
  EXPECT_EQ(r.response.replica_election_results.at(0).partition_result.at(0).error_code, 3);
  EXPECT_EQ(r.response.replica_election_results.at(0).partition_result.at(0).error_message,
            "No such partition as t-7");
  r = elect(0, {0}, "nope");
  EXPECT_EQ(r.response.replica_election_results.at(0).partition_result.at(0).error_message, "No such topic as nope");
  r = elect(5, {0});
  EXPECT_EQ(r.response.error_code, 42);
  EXPECT_EQ(r.response.replica_election_results.at(0).partition_result.at(0).error_code, 42);
  EXPECT_EQ(r.response.replica_election_results.at(0).partition_result.at(0).error_message,
            "Unknown election type 5");
  EXPECT_EQ(elect(5, {0}, "t", 0).response.error_code, 0);  // v0 has no top-level error
}

TEST_F(ElectionsTest, AllPartitionsListsEveryTopicButOnlyTheElectionsThatWereNeeded) {
  const Uuid id = create_t();
  change(id, 1, 3, {1, 2, 3});
  ElectLeadersRequest req;
  req.election_type = 0;
  req.topic_partitions = std::nullopt;
  const auto r = controller_.elect_leaders(req, 2);
  ASSERT_EQ(r.response.replica_election_results.size(), 1u);
  const auto& parts = r.response.replica_election_results[0].partition_result;
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts[0].partition_id, 1);
  EXPECT_EQ(parts[0].error_code, 0);
  ASSERT_EQ(r.records.size(), 1u);
  EXPECT_EQ(std::get<PartitionChangeRecord>(r.records[0]).leader, 2);
}

AlterPartitionReassignmentsRequest reassign(std::string topic,
                                            std::vector<std::pair<int, std::optional<std::vector<int>>>> parts) {
  AlterPartitionReassignmentsRequest req;
  auto& t = req.topics.emplace_back();
  t.name = std::move(topic);
  for (auto& [index, replicas] : parts) {
    auto& p = t.partitions.emplace_back();
    p.partition_index = index;
    p.replicas = replicas;
  }
  return req;
}

class ReassignmentsTest : public testing::ControllerFixture {};

TEST_F(ReassignmentsTest, SingleNodeAnswersAsKafkaDoes) {
  ASSERT_EQ(create({testing::topic("t", 2, 1)}).response.topics.at(0).error_code, 0);
  auto r = controller_.alter_partition_reassignments(reassign("t", {{0, std::vector<int>{1}},
                                                                    {1, std::vector<int>{6}},
                                                                    {7, std::vector<int>{1}}}));
  const auto& parts = r.responses.at(0).partitions;
  EXPECT_EQ(parts.at(0).error_code, 0);
  EXPECT_EQ(parts.at(0).error_message, std::nullopt);
  EXPECT_EQ(parts.at(1).error_code, 39);
  EXPECT_EQ(parts.at(1).error_message,
            "The manual partition assignment includes broker 6, but no such broker is registered.");
  EXPECT_EQ(parts.at(2).error_code, 3);
  EXPECT_EQ(parts.at(2).error_message, "Unable to find partition t:7.");
  r = controller_.alter_partition_reassignments(reassign("nope", {{0, std::vector<int>{1}}}));
  EXPECT_EQ(r.responses.at(0).partitions.at(0).error_message, "Unable to find a topic named nope.");
  r = controller_.alter_partition_reassignments(
      reassign("t", {{0, std::nullopt}, {1, std::vector<int>{}}, {1, std::vector<int>{1, 1}}}));
  EXPECT_EQ(r.responses.at(0).partitions.at(0).error_code, 85);
  EXPECT_EQ(r.responses.at(0).partitions.at(0).error_message, std::nullopt);
  EXPECT_EQ(r.responses.at(0).partitions.at(1).error_message,
            "The manual partition assignment includes an empty replica list.");
  EXPECT_EQ(r.responses.at(0).partitions.at(2).error_message,
            "The manual partition assignment includes the broker 1 more than once.");
  EXPECT_EQ(r.error_code, 0);
  EXPECT_EQ(r.error_message, std::nullopt);
}

TEST_F(ReassignmentsTest, ListShowsOnlyPartitionsBeingReassigned) {
  ASSERT_EQ(create({testing::topic("t", 2, 1)}).response.topics.at(0).error_code, 0);
  ListPartitionReassignmentsRequest all;
  all.topics = std::nullopt;
  EXPECT_TRUE(controller_.list_partition_reassignments(all).topics.empty());
  RegisterBrokerRecord b;
  b.broker_id = 2;
  commit({b});
  PartitionChangeRecord moving;
  moving.topic_id = controller_.image().topic("t")->id;
  moving.partition_id = 1;
  moving.replicas = std::vector<std::int32_t>{2, 1};
  moving.adding_replicas = std::vector<std::int32_t>{2};
  moving.removing_replicas = std::vector<std::int32_t>{1};
  commit({moving});
  auto listed = controller_.list_partition_reassignments(all);
  ASSERT_EQ(listed.topics.size(), 1u);
  ASSERT_EQ(listed.topics[0].partitions.size(), 1u);
  EXPECT_EQ(listed.topics[0].partitions[0].partition_index, 1);
  EXPECT_EQ(listed.topics[0].partitions[0].replicas, (std::vector<std::int32_t>{2, 1}));
  EXPECT_EQ(listed.topics[0].partitions[0].adding_replicas, (std::vector<std::int32_t>{2}));
  EXPECT_EQ(listed.topics[0].partitions[0].removing_replicas, (std::vector<std::int32_t>{1}));
  ListPartitionReassignmentsRequest named;
  named.topics.emplace();
  auto& t = named.topics->emplace_back();
  t.name = "t";
  t.partition_indexes = {0, 9};
  auto& u = named.topics->emplace_back();
  u.name = "nope";
  u.partition_indexes = {0};
  EXPECT_TRUE(controller_.list_partition_reassignments(named).topics.empty());
  // A cancel of a partition being reassigned is not NO_REASSIGNMENT_IN_PROGRESS.
  auto r = controller_.alter_partition_reassignments(reassign("t", {{1, std::nullopt}}));
  EXPECT_NE(r.responses.at(0).partitions.at(0).error_code, 85);
}

}  // namespace
}  // namespace weir::metadata
