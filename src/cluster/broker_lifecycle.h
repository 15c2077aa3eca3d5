// BrokerLifecycle: runs a BrokerLifecycleState on one executor, sending BrokerRegistration and
// BrokerHeartbeat through a ControllerChannel (to the active controller).
//
//   auto lifecycle = std::make_shared<BrokerLifecycle>(ex, options, channel, [&] { return applied; });
//   lifecycle->start();
//   ... follower caught up: lifecycle->set_caught_up();
//   co_await lifecycle->unfenced(deadline);
//   ... co_await lifecycle->controlled_shutdown(deadline); lifecycle->stop();
//
// current_metadata_offset() is asked at each heartbeat: the last metadata offset the broker
// has applied. The channel must outlive the lifecycle's loop (stop() ends it).
//
// Threading: all members on the executor; keeps itself alive while its loop runs.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <functional>
#include <memory>
#include <random>
#include <vector>

#include "client/connection.h"
#include "cluster/broker_lifecycle_state.h"
#include "cluster/controller_channel.h"

namespace weir::cluster {

class BrokerLifecycle : public std::enable_shared_from_this<BrokerLifecycle> {
 public:
  using OffsetFn = std::function<std::int64_t()>;

  BrokerLifecycle(boost::asio::any_io_executor executor, LifecycleOptions options, ControllerChannel& channel,
                  OffsetFn current_metadata_offset, std::int64_t request_timeout_ms = 2000);

  void start();
  void stop();
  // The metadata is caught up: heartbeats stop asking to stay fenced.
  void set_caught_up();

  [[nodiscard]] std::int64_t broker_epoch() const noexcept { return state_.broker_epoch(); }
  [[nodiscard]] BrokerState state() const noexcept { return state_.state(); }
  [[nodiscard]] bool fenced() const noexcept { return state_.fenced(); }
  // Last error of a registration or heartbeat (cleared by a good answer); for logs and probes.
  [[nodiscard]] const std::optional<client::Error>& last_error() const noexcept { return last_error_; }

  // True once the controller has unfenced the broker (RUNNING); false at the deadline or stop.
  boost::asio::awaitable<bool> unfenced(client::Deadline deadline);
  // Asks for controlled shutdown and waits until the controller agrees (SHUTTING_DOWN).
  boost::asio::awaitable<bool> controlled_shutdown(client::Deadline deadline);

 private:
  boost::asio::awaitable<void> run();
  void schedule(LifecycleStep step);
  boost::asio::awaitable<bool> wait_for(std::function<bool()> done, client::Deadline deadline);
  void wake_waiters();
  static std::int64_t now_ms();

  boost::asio::any_io_executor executor_;
  BrokerLifecycleState state_;
  ControllerChannel& channel_;
  OffsetFn current_metadata_offset_;
  std::int64_t request_timeout_ms_;
  LifecycleStep next_;
  boost::asio::steady_timer wake_;
  std::vector<std::shared_ptr<boost::asio::steady_timer>> waiters_;
  std::optional<client::Error> last_error_;
  std::mt19937_64 random_{std::random_device{}()};
  bool started_ = false;
  bool stopped_ = false;
};

}  // namespace weir::cluster
