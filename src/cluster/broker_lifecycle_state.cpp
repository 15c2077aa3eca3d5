#include "cluster/broker_lifecycle_state.h"

#include <algorithm>
#include <utility>

#include "base/assert.h"

namespace weir::cluster {

std::string_view to_string(BrokerState s) noexcept {
  switch (s) {
    case BrokerState::kStarting: return "STARTING";
    case BrokerState::kRecovery: return "RECOVERY";
    case BrokerState::kRunning: return "RUNNING";
    case BrokerState::kPendingControlledShutdown: return "PENDING_CONTROLLED_SHUTDOWN";
    case BrokerState::kShuttingDown: return "SHUTTING_DOWN";
  }
  return "UNKNOWN";
}

std::vector<FeatureRange> default_broker_features() {
  return {{"metadata.version", 7, 30}, {"kraft.version", 0, 1}};
}

BrokerLifecycleState::BrokerLifecycleState(LifecycleOptions options)
    : options_(std::move(options)),
      backoff_(client::BackoffPolicy{.initial_ms = options_.initial_backoff_ms,
                                     .max_ms = std::max(options_.initial_backoff_ms, options_.session_timeout_ms / 2),
                                     .multiplier = 2,
                                     .jitter = 0.02}) {
  WEIR_ASSERT(options_.node_id >= 0);
  WEIR_ASSERT(options_.heartbeat_interval_ms > 0);
}

LifecycleStep BrokerLifecycleState::start(std::int64_t now_ms) {
  WEIR_ASSERT(state_ == BrokerState::kStarting);
  return {LifecycleSend::kRegistration, now_ms};
}

protocol::BrokerRegistrationRequest BrokerLifecycleState::registration_request() const {
  protocol::BrokerRegistrationRequest r;
  r.broker_id = options_.node_id;
  r.cluster_id = options_.cluster_id;
  r.incarnation_id = options_.incarnation_id;
  for (const auto& l : options_.listeners) {
    protocol::BrokerRegistrationRequest::Listener out;
    out.name = l.name;
    out.host = l.host;
    out.port = l.port;
    out.security_protocol = l.security_protocol;
    r.listeners.push_back(std::move(out));
  }
  for (const auto& f : options_.features) {
    protocol::BrokerRegistrationRequest::Feature out;
    out.name = f.name;
    out.min_supported_version = f.min_version;
    out.max_supported_version = f.max_version;
    r.features.push_back(std::move(out));
  }
  r.rack = options_.rack;
  r.log_dirs = options_.log_dirs;
  r.previous_broker_epoch = options_.previous_broker_epoch;
  return r;
}

protocol::BrokerHeartbeatRequest BrokerLifecycleState::heartbeat_request(std::int64_t current_metadata_offset) const {
  protocol::BrokerHeartbeatRequest r;
  r.broker_id = options_.node_id;
  r.broker_epoch = broker_epoch_;
  r.current_metadata_offset = current_metadata_offset;
  r.want_fence = !caught_up_ && !want_shutdown_;
  r.want_shut_down = want_shutdown_;
  return r;
}

LifecycleStep BrokerLifecycleState::after_failure(std::int64_t now_ms, double uniform01) {
  const std::int64_t wait_ms = backoff_.backoff_ms(failures_, uniform01);
  ++failures_;
  if (state_ == BrokerState::kShuttingDown) return {};
  if (state_ == BrokerState::kStarting) return {LifecycleSend::kRegistration, now_ms + wait_ms};
  return {LifecycleSend::kHeartbeat, now_ms + wait_ms};
}

LifecycleStep BrokerLifecycleState::next_heartbeat(std::int64_t at_ms) {
  if (state_ == BrokerState::kShuttingDown || state_ == BrokerState::kStarting) return {};
  return {LifecycleSend::kHeartbeat, at_ms};
}

LifecycleStep BrokerLifecycleState::on_registration_response(const protocol::BrokerRegistrationResponse& response,
                                                             std::int64_t now_ms) {
  in_flight_ = LifecycleSend::kNothing;
  if (state_ != BrokerState::kStarting) return {};
  if (response.error_code != 0 || response.broker_epoch < 0) return after_failure(now_ms, 0.5);
  failures_ = 0;
  broker_epoch_ = response.broker_epoch;
  state_ = want_shutdown_ ? BrokerState::kPendingControlledShutdown : BrokerState::kRecovery;
  return next_heartbeat(now_ms);  // Kafka heartbeats at once after registering
}

LifecycleStep BrokerLifecycleState::on_heartbeat_response(const protocol::BrokerHeartbeatResponse& response,
                                                          std::int64_t now_ms) {
  in_flight_ = LifecycleSend::kNothing;
  if (state_ == BrokerState::kStarting || state_ == BrokerState::kShuttingDown) return {};
  if (response.error_code != 0) return after_failure(now_ms, 0.5);
  failures_ = 0;
  fenced_ = response.is_fenced;
  controller_caught_up_ = response.is_caught_up;
  switch (state_) {
    case BrokerState::kRecovery:
      if (!response.is_fenced) state_ = BrokerState::kRunning;
      break;
    case BrokerState::kRunning:
      // The controller fenced a running broker (a missed session): ask to be unfenced again.
      if (response.is_fenced) state_ = BrokerState::kRecovery;
      break;
    case BrokerState::kPendingControlledShutdown:
      if (response.should_shut_down) {
        state_ = BrokerState::kShuttingDown;
        return {};
      }
      break;
    default:
      break;
  }
  const bool urgent = std::exchange(urgent_, false);
  return next_heartbeat(urgent ? now_ms : now_ms + options_.heartbeat_interval_ms);
}

LifecycleStep BrokerLifecycleState::on_failure(std::int64_t now_ms, double uniform01) {
  in_flight_ = LifecycleSend::kNothing;
  return after_failure(now_ms, uniform01);
}

LifecycleStep BrokerLifecycleState::on_caught_up(std::int64_t now_ms) {
  if (caught_up_) return {};
  caught_up_ = true;
  if (state_ != BrokerState::kRecovery) return {};
  if (in_flight()) {
    urgent_ = true;
    return {};
  }
  return next_heartbeat(now_ms);
}

LifecycleStep BrokerLifecycleState::begin_controlled_shutdown(std::int64_t now_ms) {
  if (want_shutdown_) return {};
  want_shutdown_ = true;
  if (state_ == BrokerState::kStarting) {  // never registered: nobody to ask
    state_ = BrokerState::kShuttingDown;
    return {};
  }
  if (state_ == BrokerState::kShuttingDown) return {};
  state_ = BrokerState::kPendingControlledShutdown;
  if (in_flight()) {
    urgent_ = true;
    return {};
  }
  return next_heartbeat(now_ms);
}

}  // namespace weir::cluster
