#include "cluster/metadata_follower.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <cstdlib>

#include "base/assert.h"

namespace weir::cluster {

namespace asio = boost::asio;

MetadataFollower::MetadataFollower(asio::any_io_executor executor, FollowerOptions options, QuorumConfig quorum,
                                   DeliveryFn on_batch, ErrorFn on_error, client::ConnectionOptions connection)
    : executor_(executor),
      quorum_(std::move(quorum)),
      state_([&] {
        options.retry_backoff_ms = quorum_.retry_backoff_ms;
        return std::move(options);
      }(), quorum_.bootstrap_endpoints()),
      on_batch_(std::move(on_batch)),
      on_error_(std::move(on_error)),
      connections_(executor, std::move(connection)),
      wake_(executor) {}

std::int64_t MetadataFollower::now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void MetadataFollower::start() {
  WEIR_ASSERT(!started_);
  started_ = true;
  next_ = state_.start(now_ms());
  asio::co_spawn(executor_, [self = shared_from_this()]() { return self->run(); }, asio::detached);
}

void MetadataFollower::stop() {
  stopped_ = true;
  wake_.cancel();
  connections_.close_all("metadata follower stopped");
  wake_waiters();
}

std::optional<ControllerAddress> MetadataFollower::leader_address() const {
  const LeaderInfo& l = state_.leader();
  if (l.id < 0 || !l.endpoint) return std::nullopt;
  return ControllerAddress{l.id, *l.endpoint};
}

void MetadataFollower::wake_waiters() {
  for (auto& w : waiters_) w->cancel();
  waiters_.clear();
}

void MetadataFollower::apply(FollowerStep step) {
  if (auto cut = state_.take_truncation(); cut && on_truncate_) on_truncate_(*cut);
  for (const auto& e : step.record_errors) {
    if (on_error_) on_error_(client::Error::protocol(fmt::format("offset {}: {}", e.offset, e.message)), false);
  }
  for (const auto& b : step.deliver) {
    if (on_batch_) on_batch_(b);
  }
  if (step.fatal) {
    fatal_ = step.fatal;
    if (on_error_) on_error_(*step.fatal, true);
    stopped_ = true;
  }
  if (!step.deliver.empty() || step.fatal) wake_waiters();
  next_ = std::move(step);
}

asio::awaitable<void> MetadataFollower::run() {
  while (!stopped_) {
    if (std::holds_alternative<std::monostate>(next_.send)) break;
    const std::int64_t wait_ms = next_.send_at_ms - now_ms();
    if (wait_ms > 0) {
      wake_.expires_after(std::chrono::milliseconds(wait_ms));
      boost::system::error_code ec;
      co_await wake_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      if (stopped_) break;
    }
    const client::Deadline deadline = client::deadline_after_ms(quorum_.request_timeout_ms);
    const bool is_fetch = std::holds_alternative<FetchToSend>(next_.send);
    const ControllerAddress target =
        is_fetch ? std::get<FetchToSend>(next_.send).target : std::get<SnapshotChunkToSend>(next_.send).target;
    auto conn = co_await connections_.connect(target, deadline);
    if (stopped_) break;
    if (!conn) {
      apply(state_.on_failure(conn.error(), now_ms()));
      continue;
    }
    ++fetches_;
    if (is_fetch) {
      const auto request = std::get<FetchToSend>(next_.send).request;
      const auto version = (*conn)->versions().pick(protocol::FetchRequest::kApiKey);
      if (!version) {
        apply(state_.on_failure(client::Error::unsupported("the controller offers no usable Fetch version"), now_ms()));
        continue;
      }
      auto response = co_await (*conn)->send(request, *version, deadline);
      if (stopped_) break;
      apply(response ? state_.on_fetch_response(*response, now_ms()) : state_.on_failure(response.error(), now_ms()));
    } else {
      const auto request = std::get<SnapshotChunkToSend>(next_.send).request;
      const auto version = (*conn)->versions().pick(protocol::FetchSnapshotRequest::kApiKey);
      if (!version) {
        apply(state_.on_failure(client::Error::unsupported("the controller offers no usable FetchSnapshot version"),
                                now_ms()));
        continue;
      }
      auto response = co_await (*conn)->send(request, *version, deadline);
      if (stopped_) break;
      apply(response ? state_.on_snapshot_response(*response, now_ms())
                     : state_.on_failure(response.error(), now_ms()));
    }
  }
  wake_waiters();
}

asio::awaitable<bool> MetadataFollower::caught_up(client::Deadline deadline) {
  while (!state_.caught_up()) {
    if (stopped_ || fatal_ || std::chrono::steady_clock::now() >= deadline) co_return false;
    auto timer = std::make_shared<asio::steady_timer>(executor_, deadline);
    waiters_.push_back(timer);
    boost::system::error_code ec;
    co_await timer->async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
  co_return true;
}

}  // namespace weir::cluster
