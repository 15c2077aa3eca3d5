#include "broker/group_host.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <cstdlib>
#include <limits>

#include "base/java_hash.h"
#include "broker/broker.h"
#include "broker/coordinator_log.h"
#include "broker/errors.h"
#include "broker/partition_service.h"
#include "group/offsets_load.h"
#include "protocol/record/batch_splitter.h"
#include "protocol/record/record_batch_builder.h"
#include "storage/errc.h"

namespace weir::broker {

namespace asio = boost::asio;

std::int32_t group_partition_for(std::string_view group_id, std::int32_t partitions) {
  return java_partition_for(group_id, partitions);
}

GroupWaiter::GroupWaiter(asio::any_io_executor ex) : timer(std::move(ex)) {
  timer.expires_at(asio::steady_timer::time_point::max());
}

asio::awaitable<void> GroupWaiter::wait() {
  while (!done) {
    boost::system::error_code ec;
    co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
}

GroupHost::GroupHost(Broker& broker, std::size_t shard, std::int32_t partition_index, asio::any_io_executor executor,
                     group::GroupConfig config, const Clock& clock)
    : broker_(broker),
      shard_(shard),
      partition_index_(partition_index),
      executor_(executor),
      config_(config),
      clock_(clock),
      coordinator_(std::make_unique<group::GroupCoordinator>(config)),
      timer_(executor),
      expiry_timer_(executor) {
  arm_expiry();
}

GroupHost::~GroupHost() { *alive_ = false; }

Partition* GroupHost::partition() const { return broker_.shards().table(shard_).find(kOffsetsTopic, partition_index_); }

const group::TopicImage& GroupHost::topic_image() {
  static const auto kNoTopics = std::make_shared<const group::TopicImage>();
  std::shared_ptr<const group::TopicImage> current = broker_.catalog()->topic_image;
  if (!current) current = kNoTopics;  // the catalog before the first metadata
  if (current != topic_image_) {
    topic_image_ = std::move(current);
    coordinator_->set_topic_image(topic_image_.get());
  }
  return *topic_image_;
}

bool GroupHost::load() {
  coordinator_ = std::make_unique<group::GroupCoordinator>(config_);
  topic_image_.reset();
  topic_image();
  Partition* p = partition();
  if (p == nullptr) return false;
  const auto started = std::chrono::steady_clock::now();
  std::size_t records = 0;
  std::size_t skipped = 0;
  const bool ok =
      read_coordinator_log(p->log(), kOffsetsTopic, partition_index_, [&](const record::RecordBatchView& batch) {
        // Transactional offsets replay as pending, and markers commit or abort them.
        const group::BatchReplay replayed = group::replay_batch(*coordinator_, batch, kMaxCoordinatorBatchBytes);
        records += replayed.records;
        skipped += replayed.skipped;
        if (replayed.unreadable) {
          spdlog::warn("skipping an unreadable batch of {}-{} at offset {}", kOffsetsTopic, partition_index_,
                       batch.base_offset());
        }
      });
  coordinator_->finish_replay(now_ms());
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count();
  if (records > 0 || skipped > 0) {
    spdlog::info("loaded group coordinator partition={}-{} records={} skipped={} ms={}", kOffsetsTopic,
                 partition_index_, records, skipped, ms);
  }
  rearm();
  return ok;
}

group::RequestHandle GroupHost::hold(std::shared_ptr<GroupWaiter> waiter) {
  const group::RequestHandle h = next_handle_++;
  waiters_.emplace(h, std::move(waiter));
  return h;
}

GroupHost::Applied GroupHost::apply(group::Effects effects) {
  Applied out;
  if (!effects.records.empty()) {
    Partition* p = partition();
    std::int16_t error = 0;
    if (p == nullptr) {
      error = code(ErrorCode::kNotCoordinator);
    } else {
      record::BatchOptions options;
      if (effects.transactional) {
        // A TxnOffsetCommit: the producer's transactional batch, pending until its marker. Kafka's
        // coordinators write sequence 0 (a producer batch needs one); no sequence is checked.
        options.producer_id = effects.transactional->producer_id;
        options.producer_epoch = effects.transactional->producer_epoch;
        options.base_sequence = 0;
        options.transactional = true;
      }
      record::RecordBatchBuilder builder(options);
      const std::int64_t now = now_ms();
      for (const auto& r : effects.records) {
        const ByteSpan key = std::as_bytes(std::span<const std::uint8_t>(r.key));
        std::optional<ByteSpan> value;
        if (r.value) value = std::as_bytes(std::span<const std::uint8_t>(*r.value));
        builder.append(now, key, value);
      }
      std::vector<std::byte> batch = builder.build();
      const PartitionAppend appended = p->append(batch, AppendOrigin::kCoordinator);
      if (appended.error != 0) {
        spdlog::error("group coordinator append failed partition={}-{} error={}", kOffsetsTopic, partition_index_,
                      appended.error_message);
        error = code(ErrorCode::kCoordinatorNotAvailable);
      } else {
        out.needs_sync = broker_.flush_on_acks_all();
      }
    }
    if (error != 0) {
      out.error = error;
      // The state already holds what the records say: rebuild it from what the log holds.
      for (auto& j : effects.joins) {
        j.response.error_code = code(ErrorCode::kCoordinatorNotAvailable);
        deliver_join(std::move(j));
      }
      for (auto& s : effects.syncs) {
        s.response.error_code = code(ErrorCode::kCoordinatorNotAvailable);
        deliver_sync(std::move(s));
      }
      reload();
      return out;
    }
  }
  if (effects.joins.empty() && effects.syncs.empty()) {
    rearm();
    return out;
  }
  if (!out.needs_sync) {
    deliver(std::move(effects));
    rearm();
    return out;
  }
  // Responses that depend on the records go out once the records are durable.
  effects.records.clear();
  auto fx = std::make_shared<group::Effects>(std::move(effects));
  asio::co_spawn(
      executor_,
      [this, fx, alive = alive_]() -> asio::awaitable<void> {
        const std::vector<PartitionRef> parts{{std::string(kOffsetsTopic), partition_index_}};
        const std::int16_t err = co_await broker_.partitions().replicate(parts);
        if (!*alive) co_return;  // the host is gone; fail_held() answered its requests
        if (err != 0) {
          for (auto& j : fx->joins) j.response.error_code = code(ErrorCode::kCoordinatorNotAvailable);
          for (auto& s : fx->syncs) s.response.error_code = code(ErrorCode::kCoordinatorNotAvailable);
        }
        deliver(std::move(*fx));
      },
      asio::detached);
  rearm();
  return out;
}

asio::awaitable<std::int16_t> GroupHost::make_durable(Broker& broker, const Applied& applied, std::int32_t partition) {
  if (applied.error != 0) co_return applied.error;
  if (!applied.needs_sync) co_return 0;
  const std::vector<PartitionRef> parts{{std::string(kOffsetsTopic), partition}};
  const std::int16_t err = co_await broker.partitions().replicate(parts);
  co_return err == 0 ? 0 : code(ErrorCode::kCoordinatorNotAvailable);
}

void GroupHost::deliver(group::Effects effects) {
  for (auto& j : effects.joins) deliver_join(std::move(j));
  for (auto& s : effects.syncs) deliver_sync(std::move(s));
}

void GroupHost::deliver_join(group::JoinReply reply) {
  answer(reply.handle, [r = std::move(reply.response)](GroupWaiter& w) mutable { w.join = std::move(r); });
}

void GroupHost::deliver_sync(group::SyncReply reply) {
  answer(reply.handle, [r = std::move(reply.response)](GroupWaiter& w) mutable { w.sync = std::move(r); });
}

void GroupHost::answer(group::RequestHandle handle, std::function<void(GroupWaiter&)> fill) {
  auto it = waiters_.find(handle);
  if (it == waiters_.end()) return;
  auto w = std::move(it->second);
  waiters_.erase(it);
  auto ex = w->timer.get_executor();
  asio::post(ex, [w = std::move(w), fill = std::move(fill)]() mutable {
    fill(*w);
    w->done = true;
    w->timer.cancel();
  });
}

void GroupHost::reload() {
  // Requests still held were issued against the state being discarded.
  fail_held();
  load();
}

void GroupHost::fail_held() {
  auto held = std::move(waiters_);
  waiters_.clear();
  for (auto& [handle, w] : held) {
    auto ex = w->timer.get_executor();
    asio::post(ex, [w]() {
      protocol::JoinGroupResponse j;
      j.error_code = code(ErrorCode::kCoordinatorNotAvailable);
      j.member_id = "";
      j.protocol_name = std::nullopt;
      protocol::SyncGroupResponse s;
      s.error_code = code(ErrorCode::kCoordinatorNotAvailable);
      w->join = std::move(j);
      w->sync = std::move(s);
      w->done = true;
      w->timer.cancel();
    });
  }
}

void GroupHost::rearm() {
  const auto deadline = coordinator_->next_deadline_ms();
  if (deadline == armed_deadline_ms_) return;
  armed_deadline_ms_ = deadline;
  if (!deadline) {
    timer_.cancel();
    return;
  }
  const std::int64_t wait_ms = std::max<std::int64_t>(0, *deadline - now_ms());
  timer_.expires_after(std::chrono::milliseconds(wait_ms));
  timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec) return;  // re-armed or cancelled
    on_timer();
  });
}

void GroupHost::arm_expiry() {
  expiry_timer_.expires_after(
      std::chrono::milliseconds(std::max<std::int64_t>(1, config_.offsets_retention_check_interval_ms)));
  expiry_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec) return;
    apply(coordinator_->expire_offsets(now_ms()));
    arm_expiry();
  });
}

void GroupHost::on_timer() {
  armed_deadline_ms_.reset();
  topic_image();  // consumer group timers recompute against the current topics
  apply(coordinator_->tick(now_ms()));
  rearm();
}

}  // namespace weir::broker
