#include "cluster/broker_lifecycle_state.h"

#include <gtest/gtest.h>

#include "cluster/kafka_codes.h"

namespace weir::cluster {
namespace {

constexpr std::int64_t kNow = 10'000;

LifecycleOptions options() {
  LifecycleOptions o;
  o.node_id = 4;
  o.cluster_id = "cluster-A";
  o.incarnation_id = Uuid(9, 9);
  o.listeners = {{"PLAINTEXT", "127.0.0.1", 9092, 0}};
  o.log_dirs = {Uuid(5, 5)};
  o.rack = "r1";
  return o;
}

protocol::BrokerRegistrationResponse registered(std::int64_t epoch, std::int16_t error = 0) {
  protocol::BrokerRegistrationResponse r;
  r.error_code = error;
  r.broker_epoch = error == 0 ? epoch : -1;
  return r;
}

protocol::BrokerHeartbeatResponse heartbeat(bool fenced, bool should_shut_down = false, std::int16_t error = 0) {
  protocol::BrokerHeartbeatResponse r;
  r.error_code = error;
  r.is_fenced = fenced;
  r.is_caught_up = !fenced;
  r.should_shut_down = should_shut_down;
  return r;
}

// Sends what the step says (marks it in flight), as the driver does.
LifecycleStep sent(BrokerLifecycleState& s, LifecycleStep step) {
  s.mark_sent(step.send);
  return step;
}

TEST(BrokerLifecycleStateTest, RegistrationCarriesTheBrokersIdentityListenersAndFeatures) {
  BrokerLifecycleState s(options());
  const LifecycleStep step = s.start(kNow);
  EXPECT_EQ(step.send, LifecycleSend::kRegistration);
  EXPECT_EQ(step.send_at_ms, kNow);
  const auto r = s.registration_request();
  EXPECT_EQ(r.broker_id, 4);
  EXPECT_EQ(r.cluster_id, "cluster-A");
  EXPECT_EQ(r.incarnation_id, Uuid(9, 9));
  ASSERT_EQ(r.listeners.size(), 1u);
  EXPECT_EQ(r.listeners[0].name, "PLAINTEXT");
  EXPECT_EQ(r.listeners[0].host, "127.0.0.1");
  EXPECT_EQ(r.listeners[0].port, 9092);
  EXPECT_EQ(r.listeners[0].security_protocol, 0);
  ASSERT_EQ(r.features.size(), 2u);
  EXPECT_EQ(r.features[0].name, "metadata.version");
  EXPECT_EQ(r.features[0].min_supported_version, 7);
  EXPECT_EQ(r.features[0].max_supported_version, 30);
  EXPECT_EQ(r.features[1].name, "kraft.version");
  EXPECT_EQ(r.features[1].max_supported_version, 1);
  EXPECT_EQ(r.rack, std::optional<std::string>("r1"));
  EXPECT_EQ(r.log_dirs, (std::vector<Uuid>{Uuid(5, 5)}));
  EXPECT_EQ(r.previous_broker_epoch, -1);
  EXPECT_EQ(s.state(), BrokerState::kStarting);
}

TEST(BrokerLifecycleStateTest, RegisteredBrokerHeartbeatsAtOnceAskingToStayFencedUntilCaughtUp) {
  BrokerLifecycleState s(options());
  sent(s, s.start(kNow));
  const LifecycleStep step = sent(s, s.on_registration_response(registered(42), kNow));
  EXPECT_EQ(s.state(), BrokerState::kRecovery);
  EXPECT_EQ(s.broker_epoch(), 42);
  EXPECT_EQ(step.send, LifecycleSend::kHeartbeat);
  EXPECT_EQ(step.send_at_ms, kNow);
  const auto hb = s.heartbeat_request(17);
  EXPECT_EQ(hb.broker_id, 4);
  EXPECT_EQ(hb.broker_epoch, 42);
  EXPECT_EQ(hb.current_metadata_offset, 17);
  EXPECT_TRUE(hb.want_fence);
  EXPECT_FALSE(hb.want_shut_down);
}

TEST(BrokerLifecycleStateTest, HeartbeatsFollowTheIntervalAndUnfenceAfterCatchingUp) {
  BrokerLifecycleState s(options());
  sent(s, s.start(kNow));
  sent(s, s.on_registration_response(registered(42), kNow));
  LifecycleStep step = s.on_heartbeat_response(heartbeat(true), kNow);
  EXPECT_EQ(step.send, LifecycleSend::kHeartbeat);
  EXPECT_EQ(step.send_at_ms, kNow + 2000);
  EXPECT_EQ(s.state(), BrokerState::kRecovery);

  // Catching up sends a heartbeat now, no longer asking to be fenced.
  step = sent(s, s.on_caught_up(kNow + 100));
  EXPECT_EQ(step.send, LifecycleSend::kHeartbeat);
  EXPECT_EQ(step.send_at_ms, kNow + 100);
  EXPECT_FALSE(s.heartbeat_request(30).want_fence);
  step = s.on_heartbeat_response(heartbeat(false), kNow + 150);
  EXPECT_EQ(s.state(), BrokerState::kRunning);
  EXPECT_FALSE(s.fenced());
  EXPECT_EQ(step.send_at_ms, kNow + 150 + 2000);
}

TEST(BrokerLifecycleStateTest, CatchingUpWhileAHeartbeatIsInFlightHeartbeatsRightAfterIt) {
  BrokerLifecycleState s(options());
  sent(s, s.start(kNow));
  sent(s, s.on_registration_response(registered(42), kNow));
  EXPECT_EQ(s.on_caught_up(kNow + 1).send, LifecycleSend::kNothing);  // one request at a time
  const LifecycleStep step = s.on_heartbeat_response(heartbeat(true), kNow + 5);
  EXPECT_EQ(step.send_at_ms, kNow + 5);
}

TEST(BrokerLifecycleStateTest, FailedRegistrationsAreRetriedWithGrowingBackoff) {
  BrokerLifecycleState s(options());
  sent(s, s.start(kNow));
  const LifecycleStep first = sent(s, s.on_registration_response(registered(0, code::kDuplicateBrokerRegistration), kNow));
  EXPECT_EQ(first.send, LifecycleSend::kRegistration);
  EXPECT_EQ(first.send_at_ms, kNow + 100);  // jitter 0 at uniform 0.5
  const LifecycleStep second = sent(s, s.on_failure(kNow, 0.5));
  EXPECT_EQ(second.send, LifecycleSend::kRegistration);
  EXPECT_EQ(second.send_at_ms, kNow + 200);
  for (int i = 0; i < 10; ++i) sent(s, s.on_failure(kNow, 0.5));
  EXPECT_EQ(s.on_failure(kNow, 0.5).send_at_ms, kNow + 4500);  // capped at broker.session.timeout.ms / 2
  EXPECT_EQ(s.state(), BrokerState::kStarting);
  EXPECT_EQ(s.broker_epoch(), -1);
}

TEST(BrokerLifecycleStateTest, AFailedHeartbeatIsResentWithTheSameEpoch) {
  BrokerLifecycleState s(options());
  sent(s, s.start(kNow));
  sent(s, s.on_registration_response(registered(42), kNow));
  const LifecycleStep step = sent(s, s.on_heartbeat_response(heartbeat(true, false, code::kNotController), kNow));
  EXPECT_EQ(step.send, LifecycleSend::kHeartbeat);
  EXPECT_EQ(step.send_at_ms, kNow + 100);
  EXPECT_EQ(s.heartbeat_request(0).broker_epoch, 42);
  const LifecycleStep after_transport = s.on_failure(kNow, 0.5);
  EXPECT_EQ(after_transport.send_at_ms, kNow + 200);
  EXPECT_EQ(s.broker_epoch(), 42);
  EXPECT_EQ(s.state(), BrokerState::kRecovery);
}

TEST(BrokerLifecycleStateTest, ControlledShutdownAsksAndEndsWhenTheControllerAgrees) {
  BrokerLifecycleState s(options());
  sent(s, s.start(kNow));
  sent(s, s.on_registration_response(registered(42), kNow));
  sent(s, s.on_heartbeat_response(heartbeat(true), kNow));
  (void)s.on_caught_up(kNow);
  s.mark_sent(LifecycleSend::kHeartbeat);
  (void)s.on_heartbeat_response(heartbeat(false), kNow);
  ASSERT_EQ(s.state(), BrokerState::kRunning);

  const LifecycleStep step = sent(s, s.begin_controlled_shutdown(kNow + 10));
  EXPECT_EQ(s.state(), BrokerState::kPendingControlledShutdown);
  EXPECT_EQ(step.send, LifecycleSend::kHeartbeat);
  EXPECT_EQ(step.send_at_ms, kNow + 10);
  EXPECT_TRUE(s.heartbeat_request(50).want_shut_down);
  EXPECT_FALSE(s.heartbeat_request(50).want_fence);
  // Not yet: the controller is still moving leaders away.
  sent(s, s.on_heartbeat_response(heartbeat(false, false), kNow + 20));
  EXPECT_EQ(s.state(), BrokerState::kPendingControlledShutdown);
  const LifecycleStep done = s.on_heartbeat_response(heartbeat(true, true), kNow + 30);
  EXPECT_EQ(s.state(), BrokerState::kShuttingDown);
  EXPECT_EQ(done.send, LifecycleSend::kNothing);
}

TEST(BrokerLifecycleStateTest, ShutdownBeforeRegistrationEndsAtOnce) {
  BrokerLifecycleState s(options());
  sent(s, s.start(kNow));
  EXPECT_EQ(s.begin_controlled_shutdown(kNow).send, LifecycleSend::kNothing);
  EXPECT_EQ(s.state(), BrokerState::kShuttingDown);
  // A late registration answer changes nothing.
  EXPECT_EQ(s.on_registration_response(registered(42), kNow).send, LifecycleSend::kNothing);
  EXPECT_EQ(s.state(), BrokerState::kShuttingDown);
}

TEST(BrokerLifecycleStateTest, ARunningBrokerFencedByTheControllerGoesBackToRecovery) {
  BrokerLifecycleState s(options());
  sent(s, s.start(kNow));
  sent(s, s.on_registration_response(registered(42), kNow));
  (void)s.on_caught_up(kNow);
  (void)s.on_heartbeat_response(heartbeat(false), kNow);
  ASSERT_EQ(s.state(), BrokerState::kRunning);
  s.mark_sent(LifecycleSend::kHeartbeat);
  (void)s.on_heartbeat_response(heartbeat(true), kNow + 2000);
  EXPECT_EQ(s.state(), BrokerState::kRecovery);
  EXPECT_TRUE(s.fenced());
}

}  // namespace
}  // namespace weir::cluster
