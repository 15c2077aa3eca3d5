// MetadataFollower: runs a MetadataFollowerState on one executor over client::Connection — sends
// what the state asks (Fetch at the highest version both sides support, FetchSnapshot), feeds it
// the answers, failures and timeouts, and hands committed metadata to the delivery callback in
// log order. Record decode errors and a fatal error go to the error callback (a fatal one stops
// the follower; fatal_error() keeps it).
//
//   auto follower = std::make_shared<MetadataFollower>(ex, options, quorum, on_batch, on_error);
//   follower->start();
//   co_await follower->caught_up(deadline);   // delivered up to the first fetch's high watermark
//   ...
//   follower->stop();
//
// Threading: all members on the executor given to the constructor; callbacks run on it. The
// follower keeps itself alive while its loop runs (shared_from_this).
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "client/connection.h"
#include "cluster/metadata_follower_state.h"
#include "cluster/connection_pool.h"
#include "cluster/quorum_config.h"

namespace weir::cluster {

class MetadataFollower : public std::enable_shared_from_this<MetadataFollower> {
 public:
  using DeliveryFn = std::function<void(const MetadataBatch&)>;
  // fatal: the follower has stopped.
  using ErrorFn = std::function<void(const client::Error& error, bool fatal)>;

  MetadataFollower(boost::asio::any_io_executor executor, FollowerOptions options, QuorumConfig quorum,
                   DeliveryFn on_batch, ErrorFn on_error, client::ConnectionOptions connection = {});

  // Before start(): resume from the broker's local copy (MetadataFollowerState::restore).
  void restore(const std::optional<MetadataBatch>& snapshot, std::vector<MetadataBatch> batches) {
    state_.restore(snapshot, std::move(batches));
  }
  // Called with the end offset when the leader cuts the log below what was fetched (a local
  // copy drops what it holds from there), before any later delivery.
  using TruncateFn = std::function<void(std::int64_t end_offset)>;
  void set_truncate_handler(TruncateFn fn) { on_truncate_ = std::move(fn); }

  void start();
  void stop();

  [[nodiscard]] const LeaderInfo& leader() const noexcept { return state_.leader(); }
  // The leader as a ControllerAddress, when its endpoint is known (for ControllerChannel).
  [[nodiscard]] std::optional<ControllerAddress> leader_address() const;
  [[nodiscard]] std::int64_t high_watermark() const noexcept { return state_.high_watermark(); }
  [[nodiscard]] std::int64_t last_delivered_offset() const noexcept { return state_.last_delivered_offset(); }
  [[nodiscard]] bool is_caught_up() const noexcept { return state_.caught_up(); }
  [[nodiscard]] const std::optional<client::Error>& fatal_error() const noexcept { return fatal_; }
  [[nodiscard]] std::int64_t fetches() const noexcept { return fetches_; }

  // True once every offset below the high watermark of the first successful fetch has been
  // delivered; false at the deadline, after a fatal error or stop().
  boost::asio::awaitable<bool> caught_up(client::Deadline deadline);

 private:
  boost::asio::awaitable<void> run();
  void apply(FollowerStep step);
  void wake_waiters();
  static std::int64_t now_ms();

  boost::asio::any_io_executor executor_;
  QuorumConfig quorum_;
  MetadataFollowerState state_;
  DeliveryFn on_batch_;
  ErrorFn on_error_;
  TruncateFn on_truncate_;
  FollowerStep next_;
  ConnectionPool connections_;
  std::vector<std::shared_ptr<boost::asio::steady_timer>> waiters_;
  boost::asio::steady_timer wake_;
  std::optional<client::Error> fatal_;
  std::int64_t fetches_ = 0;
  bool started_ = false;
  bool stopped_ = false;
};

}  // namespace weir::cluster
