// A consumer's membership in a consumer group, driven over the network: the async side of
// GroupMember (group_member.h, the classic protocol) or of ConsumerGroupMember
// (consumer_group_member.h, the consumer group protocol when config.consumer_protocol). Classic:
// it finds the group coordinator, joins and syncs (running the assignor when it leads), and
// heartbeats every heartbeat_interval_ms. Consumer protocol: it heartbeats at the interval the
// coordinator names and reconciles the assignment it is given (revoked partitions are committed
// and dropped before the next heartbeat acknowledges them). Both: it commits the positions the
// application reports every auto_commit_interval_ms, before giving partitions up and on close,
// starts newly assigned partitions from the group's committed offsets (OffsetFetch), and leaves
// the group on close.
//
// It talks to the coordinator over a Client of its own (its own connections, as Kafka's consumer
// keeps a separate connection to the coordinator): a broker handles one request per connection
// at a time, and a JoinGroup can be held for a whole rebalance.
//
//   client::GroupMembership m(executor, client_options, std::move(config));
//   m.start();                             // runs in the background on the executor
//   ... while (!m.failure()) {
//         if (!m.usable()) { wait; continue; }
//         for tp in m.assignment(): fetch from m.position(tp) (seek() first when it has none),
//         then m.seek(tp, next offset) after the records are handled;
//         a response to a fetch sent before m.epoch() changed is stale: drop it.
//       }
//   co_await m.close();                    // commit, LeaveGroup, stop
//
// Threading: as Client, everything on the executor given.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "client/client.h"
#include "client/consumer_group_member.h"
#include "client/group_member.h"

namespace weir::client {

class GroupMembership {
 public:
  GroupMembership(boost::asio::any_io_executor executor, ClientOptions client_options, GroupMemberConfig config);
  GroupMembership(const GroupMembership&) = delete;
  GroupMembership& operator=(const GroupMembership&) = delete;
  ~GroupMembership();

  // Starts the membership loop on the executor.
  void start();
  // Ends it: the positions are committed (when the member is in a stable generation), the
  // member leaves the group, the loop ends and the connections close. Call once, then destroy.
  boost::asio::awaitable<void> close();

  // Whether the assignment may be read now: a stable generation, committed offsets fetched, no
  // rebalance under way.
  [[nodiscard]] bool usable() const noexcept { return usable_; }
  // Bumped whenever the assignment or a position changes other than through seek().
  [[nodiscard]] std::uint64_t epoch() const noexcept { return epoch_; }
  [[nodiscard]] std::vector<TopicPartition> assignment() const;
  // Where to read next: the group's committed offset, else what seek() set; nullopt when
  // neither (the application applies its auto.offset.reset and calls seek()).
  [[nodiscard]] std::optional<std::int64_t> position(const TopicPartition& tp) const;
  void seek(const TopicPartition& tp, std::int64_t offset);
  // A fatal error that ended the membership.
  [[nodiscard]] const std::optional<Error>& failure() const noexcept { return failure_; }
  [[nodiscard]] const GroupMember& member() const noexcept { return member_; }

  // Called when the assignment changes (e.g. to log it), after the revoked partitions were
  // committed: (assigned, added, revoked).
  std::function<void(const AssignmentChange&)> on_assignment;
  // Called with a warning (a failed automatic commit).
  std::function<void(const std::string&)> on_warning;

 private:
  boost::asio::awaitable<void> run();
  // Prepare, JoinGroup, SyncGroup, apply the assignment; returns when Stable or when the member
  // must rejoin, back off or stop.
  boost::asio::awaitable<void> rebalance();
  boost::asio::awaitable<void> heartbeat();
  // The consumer group protocol's loop body: a heartbeat, or the reconciliation of a new target.
  boost::asio::awaitable<void> run_consumer_protocol();
  boost::asio::awaitable<void> consumer_heartbeat();
  boost::asio::awaitable<void> reconcile();
  [[nodiscard]] const std::set<TopicPartition>& owned() const noexcept;
  [[nodiscard]] bool can_commit() const noexcept;
  [[nodiscard]] std::int64_t backoff_ms() const;
  // Commits the positions that changed since they were last committed (all of `only` when given);
  // false if the commit failed.
  boost::asio::awaitable<bool> commit(std::optional<std::vector<TopicPartition>> only);
  // Committed offsets of these partitions (absent when the group has none).
  boost::asio::awaitable<Result<std::map<TopicPartition, std::int64_t>, Error>> committed(
      std::vector<TopicPartition> partitions);
  boost::asio::awaitable<void> leave();
  // `request` to the group coordinator within request.timeout.ms.
  template <class Request>
  boost::asio::awaitable<Result<ResponseOf<Request>, Error>> to_coordinator(
      Request request, std::optional<std::int16_t> max_version = std::nullopt);
  // The LeaveGroup or leaving heartbeat to the coordinator; nullopt (with a warning) when it failed.
  template <class Request>
  boost::asio::awaitable<std::optional<ResponseOf<Request>>> send_leave(Request request);
  boost::asio::awaitable<void> sleep_ms(std::int64_t ms);
  void handle_next(Next next);
  void fail(Error error);
  void forget(const std::vector<TopicPartition>& partitions);
  [[nodiscard]] Deadline request_deadline() const;

  boost::asio::any_io_executor executor_;
  ClientOptions client_options_;
  std::unique_ptr<Client> client_;
  std::vector<std::unique_ptr<Client>> retired_;  // stopped under a held request; kept until it returns
  GroupMember member_;
  std::optional<ConsumerGroupMember> consumer_;  // the consumer group protocol's member
  std::map<std::string, Uuid> topic_ids_;        // of the subscribed topics (consumer protocol)
  std::chrono::steady_clock::time_point next_reconcile_;
  std::map<TopicPartition, std::optional<std::int64_t>> positions_;
  std::map<TopicPartition, std::int64_t> committed_;  // what this member last committed
  boost::asio::steady_timer wake_;
  boost::asio::steady_timer finished_;
  std::chrono::steady_clock::time_point next_heartbeat_;
  std::chrono::steady_clock::time_point next_commit_;
  std::optional<Error> failure_;
  std::uint64_t epoch_ = 0;
  bool usable_ = false;
  bool running_ = false;
  bool closing_ = false;
  bool holding_ = false;  // a JoinGroup or SyncGroup is in flight
  int failures_ = 0;      // consecutive failed calls, for the backoff
};

}  // namespace weir::client
