#include "cluster/broker_lifecycle.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "base/assert.h"

namespace weir::cluster {

namespace asio = boost::asio;

BrokerLifecycle::BrokerLifecycle(asio::any_io_executor executor, LifecycleOptions options, ControllerChannel& channel,
                                 OffsetFn current_metadata_offset, std::int64_t request_timeout_ms)
    : executor_(executor),
      state_(std::move(options)),
      channel_(channel),
      current_metadata_offset_(std::move(current_metadata_offset)),
      request_timeout_ms_(request_timeout_ms),
      wake_(executor) {}

std::int64_t BrokerLifecycle::now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void BrokerLifecycle::start() {
  WEIR_ASSERT(!started_);
  started_ = true;
  next_ = state_.start(now_ms());
  asio::co_spawn(executor_, [self = shared_from_this()]() { return self->run(); }, asio::detached);
}

void BrokerLifecycle::stop() {
  stopped_ = true;
  wake_.cancel();
  wake_waiters();
}

void BrokerLifecycle::schedule(LifecycleStep step) {
  if (step.send == LifecycleSend::kNothing) return;
  next_ = step;
  wake_.cancel();
}

void BrokerLifecycle::set_caught_up() { schedule(state_.on_caught_up(now_ms())); }

void BrokerLifecycle::wake_waiters() {
  for (auto& w : waiters_) w->cancel();
  waiters_.clear();
}

asio::awaitable<void> BrokerLifecycle::run() {
  auto self = shared_from_this();
  while (!stopped_ && state_.state() != BrokerState::kShuttingDown) {
    const std::int64_t wait_ms = next_.send == LifecycleSend::kNothing ? 3'600'000 : next_.send_at_ms - now_ms();
    if (wait_ms > 0) {
      wake_.expires_after(std::chrono::milliseconds(wait_ms));
      boost::system::error_code ec;
      co_await wake_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      continue;  // woken early (a new step) or due: look again
    }
    const LifecycleSend what = next_.send;
    next_ = {};
    state_.mark_sent(what);
    const client::Deadline deadline = client::deadline_after_ms(request_timeout_ms_);
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    LifecycleStep step;
    if (what == LifecycleSend::kRegistration) {
      auto response = co_await channel_.send(state_.registration_request(), std::nullopt, deadline);
      if (stopped_) break;
      if (!response) {
        last_error_ = response.error();
        step = state_.on_failure(now_ms(), uniform(random_));
      } else {
        if (response->error_code != 0) last_error_ = client::Error::kafka(response->error_code, "BrokerRegistration refused");
        else last_error_.reset();
        step = state_.on_registration_response(*response, now_ms());
      }
    } else {
      const std::int64_t offset = current_metadata_offset_ ? current_metadata_offset_() : -1;
      auto response = co_await channel_.send(state_.heartbeat_request(offset), std::nullopt, deadline);
      if (stopped_) break;
      if (!response) {
        last_error_ = response.error();
        step = state_.on_failure(now_ms(), uniform(random_));
      } else {
        if (response->error_code != 0) last_error_ = client::Error::kafka(response->error_code, "BrokerHeartbeat refused");
        else last_error_.reset();
        step = state_.on_heartbeat_response(*response, now_ms());
      }
    }
    // An event that arrived while the request was in flight may already have scheduled a step.
    if (step.send != LifecycleSend::kNothing) next_ = step;
    wake_waiters();
  }
  wake_waiters();
}

asio::awaitable<bool> BrokerLifecycle::wait_for(std::function<bool()> done, client::Deadline deadline) {
  while (!done()) {
    if (stopped_ || std::chrono::steady_clock::now() >= deadline) co_return false;
    auto timer = std::make_shared<asio::steady_timer>(executor_, deadline);
    waiters_.push_back(timer);
    boost::system::error_code ec;
    co_await timer->async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
  co_return true;
}

asio::awaitable<bool> BrokerLifecycle::unfenced(client::Deadline deadline) {
  co_return co_await wait_for([this] { return state_.state() == BrokerState::kRunning; }, deadline);
}

asio::awaitable<bool> BrokerLifecycle::controlled_shutdown(client::Deadline deadline) {
  schedule(state_.begin_controlled_shutdown(now_ms()));
  co_return co_await wait_for([this] { return state_.state() == BrokerState::kShuttingDown; }, deadline);
}

}  // namespace weir::cluster
