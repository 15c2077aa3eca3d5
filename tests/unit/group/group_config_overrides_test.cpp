// Group configs (KIP-848) in the consumer coordinator: a group's own session timeout, heartbeat
// interval and assignment interval replace the broker's for that group only, as Kafka's
// GroupMetadataManager reads them (consumerGroupSessionTimeoutMs(groupId), ...).
#include <gtest/gtest.h>

#include "group/consumer_coordinator.h"
#include "group_test_util.h"

namespace weir::group::testing {
namespace {

const Uuid kOrders{0x1111, 0x2222};

class OverridesHarness {
 public:
  OverridesHarness() : coordinator(config()) { topics.add_topic("orders", kOrders, 4); }

  ConsumerGroupConfig config() {
    ConsumerGroupConfig c;  // broker: session 45000, heartbeat 5000, assignment interval 1000
    c.overrides = [this](const std::string& group_id) {
      return group_id == "tuned" ? tuned : ConsumerGroupOverrides{};
    };
    return c;
  }

  p::ConsumerGroupHeartbeatResponse join(const std::string& group, std::int64_t now_ms) {
    p::ConsumerGroupHeartbeatRequest req;
    req.group_id = group;
    req.member_epoch = 0;
    req.rebalance_timeout_ms = 30000;
    req.subscribed_topic_names = std::vector<std::string>{"orders"};
    req.subscribed_topic_regex = std::nullopt;
    req.server_assignor = std::nullopt;
    req.instance_id = std::nullopt;
    req.rack_id = std::nullopt;
    req.topic_partitions.emplace();
    return coordinator.heartbeat(req, ClientInfo{"client", "/10.0.0.1"}, topics, now_ms).response;
  }

  ConsumerGroupOverrides tuned{20000, 2000, 60000};
  TopicImage topics;
  ConsumerGroupCoordinator coordinator;
};

TEST(ConsumerGroupOverrides, HeartbeatIntervalIsTheGroupsOwn) {
  OverridesHarness h;
  EXPECT_EQ(h.join("tuned", 1000).heartbeat_interval_ms, 2000);
  EXPECT_EQ(h.join("plain", 1000).heartbeat_interval_ms, 5000);
  // A change is seen on the next heartbeat.
  h.tuned.heartbeat_interval_ms = std::nullopt;
  EXPECT_EQ(h.join("tuned", 2000).heartbeat_interval_ms, 5000);
}

TEST(ConsumerGroupOverrides, SessionTimeoutIsTheGroupsOwn) {
  OverridesHarness h;
  const auto tuned = h.join("tuned", 0);
  const auto plain = h.join("plain", 0);
  ASSERT_EQ(tuned.error_code, 0);
  EXPECT_EQ(h.coordinator.timers("tuned", *tuned.member_id)->session_deadline_ms, 20000);
  EXPECT_EQ(h.coordinator.timers("plain", *plain.member_id)->session_deadline_ms, 45000);
  h.coordinator.tick(&h.topics, 20000);
  EXPECT_EQ(h.coordinator.group("tuned")->member(*tuned.member_id), nullptr);
  EXPECT_NE(h.coordinator.group("plain")->member(*plain.member_id), nullptr);
}

TEST(ConsumerGroupOverrides, AssignmentIntervalIsTheGroupsOwn) {
  OverridesHarness h;
  // The first member's assignment is computed at once; a second member joining 5 s later bumps
  // the epoch, and the next target waits for the interval: 1 s for the broker's, 60 s here.
  h.join("tuned", 1000);
  h.join("plain", 1000);
  h.join("tuned", 6000);
  h.join("plain", 6000);
  EXPECT_EQ(h.coordinator.group("plain")->assignment_epoch(), 2);
  EXPECT_EQ(h.coordinator.group("tuned")->group_epoch(), 2);
  EXPECT_EQ(h.coordinator.group("tuned")->assignment_epoch(), 1);
}

}  // namespace
}  // namespace weir::group::testing
