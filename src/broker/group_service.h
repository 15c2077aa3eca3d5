// GroupService: how a group handler reaches the coordinator of a group. Every call routes to the
// shard owning the group's `__consumer_offsets` partition and runs the coordinator there,
// through that partition's GroupHost:
//   - update(): an event with an immediate answer (OffsetCommit, Heartbeat, LeaveGroup, ...);
//     the host appends the records the coordinator returned, and the answer comes back once
//     they are durable (when acks=all writes are, flush.on.acks.all);
//   - hold(): JoinGroup / SyncGroup, which the coordinator answers later (a GroupWaiter);
//   - read(): a query that changes nothing (OffsetFetch, DescribeGroups, ListGroups);
//   - update_with_topics() / read_with_topics(): the same for the consumer group protocol
//     (ConsumerGroupHeartbeat, ConsumerGroupDescribe), which also reads the topic image;
//   - complete_transaction(): a transaction marker reached a partition (pending offsets).
// A partition without a coordinator (__consumer_offsets not created yet, or not hosted here)
// is reported to the caller, who answers NOT_COORDINATOR in its API's shape.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/this_coro.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

#include "broker/broker.h"
#include "broker/errors.h"
#include "broker/group_host.h"

namespace weir::broker {

template <class Response>
struct GroupUpdate {
  Response response;
  bool served = false;     // a coordinator ran the event (false: NOT_COORDINATOR)
  std::int16_t error = 0;  // NOT_COORDINATOR, or the append / durability error, for the entries
};

class GroupService {
 public:
  explicit GroupService(Broker& broker) : broker_(broker) {}

  // op(coordinator, now_ms) -> group::Reply<Response>. op must be trivially destructible
  // (capture references): see run_on.
  template <class Response, class Op>
  boost::asio::awaitable<GroupUpdate<Response>> update(std::int32_t partition, Op op) {
    static_assert(std::is_trivially_destructible_v<Op>, "see run_on");
    auto on_host = [&op](GroupHost& h) {
      h.topic_image();  // current for the classic members of consumer groups (their assignments)
      return op(h.coordinator(), h.now_ms());
    };
    co_return co_await update_on_host<Response>(partition, on_host);
  }

  // update() for the consumer group protocol: op(coordinator, topics, now_ms), with the topic
  // image the partition's coordinator holds (the broker's current catalog's).
  template <class Response, class Op>
  boost::asio::awaitable<GroupUpdate<Response>> update_with_topics(std::int32_t partition, Op op) {
    static_assert(std::is_trivially_destructible_v<Op>, "see run_on");
    auto on_host = [&op](GroupHost& h) {
      const group::TopicImage& topics = h.topic_image();
      return op(h.coordinator(), topics, h.now_ms());
    };
    co_return co_await update_on_host<Response>(partition, on_host);
  }

  // op(GroupHost&) -> group::Reply<Response>, on the partition's host: what update() and
  // update_with_topics() run.
  template <class Response, class Op>
  boost::asio::awaitable<GroupUpdate<Response>> update_on_host(std::int32_t partition, Op op) {
    static_assert(std::is_trivially_destructible_v<Op>, "see run_on");
    struct Out {
      GroupUpdate<Response> update;
      GroupHost::Applied applied;
    };
    Out out = co_await broker_.with_group(partition, [&op](GroupHost* h) {
      Out o;
      if (h == nullptr) {
        o.update.error = code(ErrorCode::kNotCoordinator);
        return o;
      }
      group::Reply<Response> reply = op(*h);
      o.update.response = std::move(reply.response);
      o.update.served = true;
      o.applied = h->apply(std::move(reply.effects));
      return o;
    });
    if (out.update.served) out.update.error = co_await GroupHost::make_durable(broker_, out.applied, partition);
    co_return std::move(out.update);
  }

  // op(coordinator, handle, now_ms) -> group::Effects, for a JoinGroup or SyncGroup the
  // coordinator answers later (Response says which); nullopt when the partition has no
  // coordinator.
  template <class Response, class Op>
  boost::asio::awaitable<std::optional<Response>> hold(std::int32_t partition, Op op) {
    static_assert(std::is_trivially_destructible_v<Op>, "see run_on");
    auto waiter = std::make_shared<GroupWaiter>(co_await boost::asio::this_coro::executor);
    const bool held = co_await broker_.with_group(partition, [&op, &waiter](GroupHost* h) {
      if (h == nullptr) return false;
      const auto handle = h->hold(waiter);
      h->topic_image();  // current for the classic members of consumer groups (their assignments)
      h->apply(op(h->coordinator(), handle, h->now_ms()));
      return true;
    });
    if (!held) co_return std::nullopt;
    co_await waiter->wait();
    if constexpr (std::is_same_v<Response, protocol::JoinGroupResponse>) {
      co_return std::move(*waiter->join);
    } else {
      static_assert(std::is_same_v<Response, protocol::SyncGroupResponse>);
      co_return std::move(*waiter->sync);
    }
  }

  // After a transaction marker of `producer_id` is written to `partition` of __consumer_offsets
  // (and is durable): that partition's coordinator makes the producer's pending offsets the
  // committed ones (commit) or drops them (abort). False when the partition has no coordinator
  // here (its next load replays the marker instead).
  boost::asio::awaitable<bool> complete_transaction(std::int32_t partition, std::int64_t producer_id, bool commit) {
    auto op = [producer_id, commit](GroupHost* h) {
      if (h == nullptr) return false;
      h->apply(h->coordinator().complete_transaction(producer_id, commit));
      return true;
    };
    co_return co_await broker_.with_group(partition, op);
  }

  // op(const coordinator&) -> R; nullopt when the partition has no coordinator.
  template <class Op>
  auto read(std::int32_t partition, Op op)
      -> boost::asio::awaitable<std::optional<std::invoke_result_t<Op&, const group::GroupCoordinator&>>> {
    static_assert(std::is_trivially_destructible_v<Op>, "see run_on");
    using R = std::invoke_result_t<Op&, const group::GroupCoordinator&>;
    co_return co_await broker_.with_group(partition, [&op](GroupHost* h) -> std::optional<R> {
      if (h == nullptr) return std::nullopt;
      return op(std::as_const(h->coordinator()));
    });
  }

  // read() for the consumer group protocol: op(const coordinator&, topics) -> R.
  template <class Op>
  auto read_with_topics(std::int32_t partition, Op op) -> boost::asio::awaitable<
      std::optional<std::invoke_result_t<Op&, const group::GroupCoordinator&, const group::TopicImage&>>> {
    static_assert(std::is_trivially_destructible_v<Op>, "see run_on");
    using R = std::invoke_result_t<Op&, const group::GroupCoordinator&, const group::TopicImage&>;
    co_return co_await broker_.with_group(partition, [&op](GroupHost* h) -> std::optional<R> {
      if (h == nullptr) return std::nullopt;
      const group::TopicImage& topics = h->topic_image();
      return op(std::as_const(h->coordinator()), topics);
    });
  }

 private:
  Broker& broker_;
};

}  // namespace weir::broker
