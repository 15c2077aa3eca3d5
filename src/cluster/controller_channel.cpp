#include "cluster/controller_channel.h"

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace weir::cluster {

namespace asio = boost::asio;

ControllerChannel::ControllerChannel(asio::any_io_executor executor, std::vector<ControllerAddress> bootstrap,
                                     ChannelOptions options, LeaderFn leader)
    : executor_(std::move(executor)),
      bootstrap_(std::move(bootstrap)),
      options_(std::move(options)),
      leader_(std::move(leader)),
      backoff_(options_.backoff),
      random_(std::random_device{}()),
      connections_(executor_, options_.connection) {}

ControllerChannel::~ControllerChannel() { stop(); }

void ControllerChannel::stop() {
  stopped_ = true;
  connections_.close_all("controller channel stopped");
}

ControllerAddress ControllerChannel::pick_target() {
  if (leader_) {
    if (auto leader = leader_(); leader && (!avoid_ || *avoid_ != leader->endpoint)) return *leader;
  }
  for (std::size_t i = 0; i < bootstrap_.size(); ++i) {
    const ControllerAddress t = bootstrap_[next_bootstrap_++ % bootstrap_.size()];
    if (!avoid_ || *avoid_ != t.endpoint || bootstrap_.size() == 1) return t;
  }
  return bootstrap_.front();
}

void ControllerChannel::forget(const ControllerAddress& target) {
  avoid_ = target.endpoint;
  connections_.drop_if_closed(target.endpoint);
}

asio::awaitable<bool> ControllerChannel::backoff(int attempt, client::Deadline deadline) {
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  const std::int64_t wait_ms = backoff_.backoff_ms(attempt, uniform(random_));
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  if (left.count() <= 0) co_return false;
  asio::steady_timer timer(executor_);
  timer.expires_after(std::chrono::milliseconds(std::min<std::int64_t>(wait_ms, left.count())));
  boost::system::error_code ec;
  co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  co_return wait_ms < left.count() && !stopped_;
}

}  // namespace weir::cluster
