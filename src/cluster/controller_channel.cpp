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
      random_(std::random_device{}()) {}

ControllerChannel::~ControllerChannel() { stop(); }

void ControllerChannel::stop() {
  stopped_ = true;
  for (auto& [_, conn] : connections_) conn->close("controller channel stopped");
  connections_.clear();
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
  auto it = connections_.find(target.endpoint.to_string());
  if (it != connections_.end() && it->second->state() == client::Connection::State::kClosed) connections_.erase(it);
}

asio::awaitable<Result<std::shared_ptr<client::Connection>, client::Error>> ControllerChannel::connect(
    const ControllerAddress& target, client::Deadline deadline) {
  const std::string key = target.endpoint.to_string();
  auto it = connections_.find(key);
  if (it != connections_.end() && it->second->state() == client::Connection::State::kClosed) {
    connections_.erase(it);
    it = connections_.end();
  }
  if (it == connections_.end()) {
    auto conn = std::make_shared<client::Connection>(executor_, target.id, target.endpoint, options_.connection);
    it = connections_.emplace(key, conn).first;
    conn->start();
  }
  std::shared_ptr<client::Connection> conn = it->second;
  auto ready = co_await conn->ready(deadline);
  if (!ready) co_return unexpected(std::move(ready.error()));
  co_return conn;
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
