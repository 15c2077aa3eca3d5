#include "cluster/quorum_config.h"

#include <gtest/gtest.h>

namespace weir::cluster {
namespace {

TEST(QuorumConfigTest, ParsesVotersWithIdsHostsAndPorts) {
  auto voters = parse_quorum_voters("1@localhost:9093, 2@127.0.0.2:9094,3@[::1]:9095");
  ASSERT_TRUE(voters) << voters.error().to_string();
  ASSERT_EQ(voters->size(), 3u);
  EXPECT_EQ((*voters)[0], (Voter{1, {"localhost", 9093}}));
  EXPECT_EQ((*voters)[1], (Voter{2, {"127.0.0.2", 9094}}));
  EXPECT_EQ((*voters)[2], (Voter{3, {"::1", 9095}}));
}

// The messages are Kafka 4.3.1's (QuorumConfig.parseVoterConnections, run against the jar).
TEST(QuorumConfigTest, BadVoterEntriesGetKafkasMessages) {
  auto no_at = parse_quorum_voters("1localhost:9093");
  ASSERT_FALSE(no_at);
  EXPECT_EQ(no_at.error().message,
            "Invalid configuration value for controller.quorum.voters. Each entry should be in the form "
            "`{id}@{host}:{port}`.");
  auto two_at = parse_quorum_voters("1@h:1@x");
  ASSERT_FALSE(two_at);
  EXPECT_EQ(two_at.error().message, no_at.error().message);
  auto bad_id = parse_quorum_voters("x@localhost:9093");
  ASSERT_FALSE(bad_id);
  EXPECT_EQ(bad_id.error().message, "Failed to parse voter ID as an integer from x");
  auto no_port = parse_quorum_voters("1@localhost");
  ASSERT_FALSE(no_port);
  EXPECT_EQ(no_port.error().message,
            "Failed to parse host name from entry 1@localhost for the configuration controller.quorum.voters. "
            "Each entry should be in the form `{id}@{host}:{port}`.");
  auto bad_port = parse_quorum_voters("1@h:abc");
  ASSERT_FALSE(bad_port);
  EXPECT_EQ(bad_port.error().message,
            "Failed to parse host name from entry 1@h:abc for the configuration controller.quorum.voters. "
            "Each entry should be in the form `{id}@{host}:{port}`.");
  auto big_port = parse_quorum_voters("1@h:70000");
  ASSERT_FALSE(big_port);
  EXPECT_EQ(big_port.error().message, "port out of range:70000");
  EXPECT_EQ(big_port.error().kind, client::ErrorKind::kInvalidArgument);
}

TEST(QuorumConfigTest, BootstrapServersGetKafkasMessages) {
  auto ok = parse_quorum_bootstrap_servers("localhost:9093,127.0.0.1:9094");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->size(), 2u);
  auto bad = parse_quorum_bootstrap_servers("localhost");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message,
            "Failed to parse host name from localhost for the configuration controller.quorum.bootstrap.servers. "
            "Each entry should be in the form \"{host}:{port}\"");
}

TEST(QuorumConfigTest, BootstrapServersArePreferredOverVoters) {
  auto both = parse_quorum_config("1@a:1,2@b:2", "c:3");
  ASSERT_TRUE(both);
  EXPECT_EQ(both->bootstrap_endpoints(), (std::vector<ControllerAddress>{{-1, {"c", 3}}}));
  auto voters_only = parse_quorum_config("1@a:1,2@b:2", "");
  ASSERT_TRUE(voters_only);
  EXPECT_EQ(voters_only->bootstrap_endpoints(),
            (std::vector<ControllerAddress>{{1, {"a", 1}}, {2, {"b", 2}}}));
  EXPECT_EQ(voters_only->fetch_timeout_ms, 2000);
  EXPECT_EQ(voters_only->request_timeout_ms, 2000);
  EXPECT_EQ(voters_only->retry_backoff_ms, 20);
}

TEST(QuorumConfigTest, NeitherListIsAnError) {
  auto none = parse_quorum_config("", " ");
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().kind, client::ErrorKind::kInvalidArgument);
}

}  // namespace
}  // namespace weir::cluster
