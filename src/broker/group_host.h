// GroupHost: runs the group coordinator of one `__consumer_offsets` partition on the shard that
// owns that partition. It is the I/O half of the coordinator (DESIGN.md, "Coordinators are pure
// state machines"): it feeds events and the wall clock in, appends the records the coordinator
// returns to the partition's log, makes them durable when acks=all writes are (flush.on.acks.all),
// delivers the JoinGroup / SyncGroup responses the coordinator answers later, and fires the
// coordinator's timers at its next deadline.
//
// Every member is used only on the owner shard's executor, except GroupWaiter, which belongs to
// the connection waiting on it (its answer is posted to that connection's executor).
//
// A failed append leaves the coordinator's state ahead of the log; the host then rebuilds the
// coordinator by replaying the log and answers every request it was holding with
// COORDINATOR_NOT_AVAILABLE (clients look the coordinator up again and rejoin).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include "base/clock.h"
#include "group/coordinator.h"

namespace weir::broker {

class Broker;
class Partition;

inline constexpr std::string_view kOffsetsTopic = "__consumer_offsets";

// Kafka's GroupCoordinator.partitionFor: Utils.abs(groupId.hashCode()) % partitions, where
// hashCode is Java's String hash over UTF-16 code units.
[[nodiscard]] std::int32_t group_partition_for(std::string_view group_id, std::int32_t partitions);

// A JoinGroup or SyncGroup response the coordinator gives later. Created by the handler on its
// own executor; the host posts the answer there.
struct GroupWaiter {
  explicit GroupWaiter(boost::asio::any_io_executor ex);
  boost::asio::steady_timer timer;
  std::optional<protocol::JoinGroupResponse> join;
  std::optional<protocol::SyncGroupResponse> sync;
  bool done = false;
  // Suspends until answered.
  boost::asio::awaitable<void> wait();
};

class GroupHost {
 public:
  GroupHost(Broker& broker, std::size_t shard, std::int32_t partition_index,
            boost::asio::any_io_executor executor, group::GroupConfig config, const Clock& clock);
  ~GroupHost();
  GroupHost(const GroupHost&) = delete;
  GroupHost& operator=(const GroupHost&) = delete;

  // Rebuilds the coordinator from the partition's log. False (and logged) if the log cannot be
  // read; the coordinator then holds what was read before the error.
  bool load();

  [[nodiscard]] std::int32_t partition_index() const { return partition_index_; }
  [[nodiscard]] group::GroupCoordinator& coordinator() { return *coordinator_; }
  [[nodiscard]] std::int64_t now_ms() const { return clock_.wall_ms(); }
  // The topics of the broker's current catalog, as the consumer group protocol reads them. The
  // coordinator keeps a pointer to the same image (set_topic_image) for its timers and offset
  // commit checks; it is refreshed here, before every event and tick, when the catalog changed.
  const group::TopicImage& topic_image();

  // Answers every held JoinGroup / SyncGroup with COORDINATOR_NOT_AVAILABLE (before the host
  // goes away, e.g. when __consumer_offsets is deleted).
  void fail_held();

  // A handle for a JoinGroup / SyncGroup that waits on `waiter`.
  group::RequestHandle hold(std::shared_ptr<GroupWaiter> waiter);

  struct Applied {
    std::int16_t error = 0;  // 0, or the code the immediate response's entries should carry
    bool needs_sync = false;  // records were appended and acks=all writes are made durable
  };
  // Appends the effects' records, then delivers their JoinGroup / SyncGroup responses (after
  // the records are durable when they must be), then re-arms the timer.
  Applied apply(group::Effects effects);
  // From any executor, after apply(): waits until the records it appended are durable when they
  // must be; 0, or the code the response should carry (COORDINATOR_NOT_AVAILABLE on failure).
  static boost::asio::awaitable<std::int16_t> make_durable(Broker& broker, const Applied& applied,
                                                           std::int32_t partition);

 private:
  void deliver(group::Effects effects);
  void deliver_join(group::JoinReply reply);
  void deliver_sync(group::SyncReply reply);
  // Hands a held request its answer (fill sets it) on the waiter's executor.
  void answer(group::RequestHandle handle, std::function<void(GroupWaiter&)> fill);
  void rearm();
  void on_timer();
  void arm_expiry();
  // After a failed append: replay the log into a fresh coordinator and fail every held request.
  void reload();
  [[nodiscard]] Partition* partition() const;

  Broker& broker_;
  std::size_t shard_;
  std::int32_t partition_index_;
  boost::asio::any_io_executor executor_;
  group::GroupConfig config_;
  const Clock& clock_;
  std::unique_ptr<group::GroupCoordinator> coordinator_;
  std::unordered_map<group::RequestHandle, std::shared_ptr<GroupWaiter>> waiters_;
  group::RequestHandle next_handle_ = 1;
  boost::asio::steady_timer timer_;
  boost::asio::steady_timer expiry_timer_;  // offsets.retention.check.interval.ms
  std::optional<std::int64_t> armed_deadline_ms_;
  std::shared_ptr<const group::TopicImage> topic_image_;  // what the coordinator points at
  // Shared with work that resumes after the host may be gone (deliveries waiting for a sync).
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace weir::broker
