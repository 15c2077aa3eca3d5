// BrokerLifecycleState: a broker's life under a KRaft controller, as Kafka's
// BrokerLifecycleManager runs it. Pure: answers, failures and the time come in; which request to
// send and when come out (LifecycleStep). BrokerLifecycle drives it.
//
//   STARTING ── BrokerRegistration ok ──▶ RECOVERY (registered, fenced; heartbeats WantFence=true
//                                          until the metadata is caught up, then WantFence=false)
//   RECOVERY ── heartbeat IsFenced=false ──▶ RUNNING
//   any ── begin_controlled_shutdown() ──▶ PENDING_CONTROLLED_SHUTDOWN (heartbeats WantShutDown)
//   PENDING_CONTROLLED_SHUTDOWN ── heartbeat ShouldShutDown=true ──▶ SHUTTING_DOWN (no more sends)
//
// A refused or failed registration is sent again after an exponential backoff (Kafka: 100 ms
// doubling up to broker.session.timeout.ms / 2, ±2 %), DUPLICATE_BROKER_REGISTRATION included (the
// previous incarnation's session has not expired yet). A failed heartbeat is sent again after the
// same backoff with the same broker epoch; a good answer resets the backoff and the next heartbeat
// follows broker.heartbeat.interval.ms later. Controlled shutdown before registration ends at once.
//
// Thread safety: a plain value; one owner.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/uuid.h"
#include "client/backoff.h"
#include "protocol/gen/broker_heartbeat_request.h"
#include "protocol/gen/broker_heartbeat_response.h"
#include "protocol/gen/broker_registration_request.h"
#include "protocol/gen/broker_registration_response.h"

namespace weir::cluster {

enum class BrokerState : std::uint8_t {
  kStarting,
  kRecovery,
  kRunning,
  kPendingControlledShutdown,
  kShuttingDown,
};
[[nodiscard]] std::string_view to_string(BrokerState s) noexcept;

struct ListenerInfo {
  std::string name = "PLAINTEXT";
  std::string host;
  std::uint16_t port = 0;
  std::int16_t security_protocol = 0;  // 0 = PLAINTEXT
};

struct FeatureRange {
  std::string name;
  std::int16_t min_version = 0;
  std::int16_t max_version = 0;
};

// What Kafka 4.3.1 brokers advertise by default (unstable versions disabled):
// metadata.version 7 (3.3-IV3) .. 30 (LATEST_PRODUCTION), kraft.version 0..1. The controller
// refuses a registration (UNSUPPORTED_VERSION) unless every finalized feature level lies in the
// broker's range; a feature the broker does not list counts as the range 0..0.
[[nodiscard]] std::vector<FeatureRange> default_broker_features();

struct LifecycleOptions {
  std::int32_t node_id = -1;
  std::string cluster_id;
  Uuid incarnation_id;  // random per process
  std::vector<ListenerInfo> listeners;
  std::vector<FeatureRange> features = default_broker_features();
  std::optional<std::string> rack;
  std::vector<Uuid> log_dirs;                // directory ids
  std::int64_t previous_broker_epoch = -1;   // -1 the first time
  std::int64_t heartbeat_interval_ms = 2000;   // broker.heartbeat.interval.ms
  std::int64_t session_timeout_ms = 9000;      // broker.session.timeout.ms
  std::int64_t initial_backoff_ms = 100;
};

enum class LifecycleSend : std::uint8_t { kNothing, kRegistration, kHeartbeat };

struct LifecycleStep {
  LifecycleSend send = LifecycleSend::kNothing;
  std::int64_t send_at_ms = 0;
};

class BrokerLifecycleState {
 public:
  explicit BrokerLifecycleState(LifecycleOptions options);

  [[nodiscard]] LifecycleStep start(std::int64_t now_ms);
  // The requests, built when the step says to send them. The heartbeat carries the last
  // applied metadata offset.
  [[nodiscard]] protocol::BrokerRegistrationRequest registration_request() const;
  [[nodiscard]] protocol::BrokerHeartbeatRequest heartbeat_request(std::int64_t current_metadata_offset) const;

  [[nodiscard]] LifecycleStep on_registration_response(const protocol::BrokerRegistrationResponse& response,
                                                       std::int64_t now_ms);
  [[nodiscard]] LifecycleStep on_heartbeat_response(const protocol::BrokerHeartbeatResponse& response,
                                                    std::int64_t now_ms);
  // The request in flight failed (transport, timeout, no controller reachable).
  [[nodiscard]] LifecycleStep on_failure(std::int64_t now_ms, double uniform01 = 0.5);
  // Kafka's setReadyToUnfence: the metadata is caught up; a heartbeat asking to be unfenced goes
  // out now (when registered and none is in flight).
  [[nodiscard]] LifecycleStep on_caught_up(std::int64_t now_ms);
  // Starts controlled shutdown: the next heartbeat (now) asks for it.
  [[nodiscard]] LifecycleStep begin_controlled_shutdown(std::int64_t now_ms);

  [[nodiscard]] BrokerState state() const noexcept { return state_; }
  [[nodiscard]] std::int64_t broker_epoch() const noexcept { return broker_epoch_; }
  [[nodiscard]] bool fenced() const noexcept { return fenced_; }
  [[nodiscard]] bool controller_caught_up() const noexcept { return controller_caught_up_; }
  [[nodiscard]] bool caught_up() const noexcept { return caught_up_; }
  [[nodiscard]] std::int64_t failures() const noexcept { return failures_; }
  // A request sent and not answered yet (the driver's view, kept here so steps do not overlap).
  [[nodiscard]] bool in_flight() const noexcept { return in_flight_ != LifecycleSend::kNothing; }
  void mark_sent(LifecycleSend what) noexcept { in_flight_ = what; }

 private:
  LifecycleStep after_failure(std::int64_t now_ms, double uniform01);
  LifecycleStep next_heartbeat(std::int64_t at_ms);

  LifecycleOptions options_;
  client::ExponentialBackoff backoff_;
  BrokerState state_ = BrokerState::kStarting;
  std::int64_t broker_epoch_ = -1;
  bool fenced_ = true;
  bool controller_caught_up_ = false;
  bool caught_up_ = false;
  bool want_shutdown_ = false;
  bool urgent_ = false;  // an event while a request was in flight: heartbeat at once after it
  std::int64_t failures_ = 0;  // consecutive
  LifecycleSend in_flight_ = LifecycleSend::kNothing;
};

}  // namespace weir::cluster
