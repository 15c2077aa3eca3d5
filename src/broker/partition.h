// A partition replica hosted by this broker. Owned by exactly one executor (its shard): every
// member is read and written only there.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/uuid.h"
#include "storage/partition_log.h"
#include "storage/producer_state.h"
#include "storage/producer_state_manager.h"

namespace weir::broker {

class Partition {
 public:
  // The log is owned by the log manager; the partition is its only user while it exists.
  Partition(std::string topic, Uuid topic_id, std::int32_t index, std::int32_t leader_epoch,
            storage::PartitionLog* log)
      : topic_(std::move(topic)),
        topic_id_(topic_id),
        index_(index),
        leader_epoch_(leader_epoch),
        log_(log),
        producer_state_(std::make_shared<storage::ProducerStateManager>()) {
    // Producer snapshots follow the log's segments (rolls, deletions, truncations). The log
    // holds the manager weakly, so whichever of the two goes first is fine.
    log_->set_listener(producer_state_);
  }

  [[nodiscard]] const std::string& topic() const { return topic_; }
  [[nodiscard]] const Uuid& topic_id() const { return topic_id_; }
  [[nodiscard]] std::int32_t index() const { return index_; }
  [[nodiscard]] std::int32_t leader_epoch() const { return leader_epoch_; }
  [[nodiscard]] storage::PartitionLog& log() { return *log_; }
  [[nodiscard]] const storage::PartitionLog& log() const { return *log_; }

  // On one node the high watermark is the log end offset: every replica (this one) has the data.
  [[nodiscard]] std::int64_t high_watermark() const { return log_->log_end_offset(); }

  // Fetches waiting for data register a callback; an append runs and clears them.
  void watch(std::function<void()> on_data) { watchers_.push_back(std::move(on_data)); }
  void notify_watchers() {
    auto w = std::move(watchers_);
    watchers_.clear();
    for (auto& f : w) f();
  }

  // Traffic since start, for metrics: bytes and records appended by producers, bytes read by
  // fetches. Owner shard only, like everything here.
  struct Traffic {
    std::uint64_t bytes_in = 0;
    std::uint64_t messages_in = 0;
    std::uint64_t bytes_out = 0;
  };
  void count_produced(std::uint64_t bytes, std::uint64_t messages) {
    traffic_.bytes_in += bytes;
    traffic_.messages_in += messages;
  }
  void count_fetched(std::uint64_t bytes) { traffic_.bytes_out += bytes; }
  [[nodiscard]] const Traffic& traffic() const { return traffic_; }

  [[nodiscard]] storage::ProducerStateTable& producers() { return producer_state_->table(); }
  [[nodiscard]] storage::ProducerStateManager& producer_state() { return *producer_state_; }

  // Rebuilds the idempotent producers' state from the log's producer snapshot and the batches
  // after it (producer.id.expiration.ms applies to what the snapshot holds). On a read error the
  // state is what could be rebuilt; the error is logged by the manager.
  void load_producer_state(std::int64_t producer_id_expiration_ms) {
    producer_state_->set_expiration_ms(producer_id_expiration_ms);
    (void)producer_state_->load(*log_);
  }
  // Clean shutdown, before the log is closed: a producer snapshot at the log end, so the next
  // start reads no batches.
  void snapshot_producer_state() { (void)producer_state_->take_snapshot(*log_); }
  // producer.id.expiration.ms: drops producers idle that long at now_ms (wall clock).
  std::size_t expire_producers(std::int64_t now_ms) { return producer_state_->expire(now_ms); }

 private:
  std::string topic_;
  Uuid topic_id_;
  std::int32_t index_;
  std::int32_t leader_epoch_;
  storage::PartitionLog* log_;
  std::vector<std::function<void()>> watchers_;
  Traffic traffic_;
  std::shared_ptr<storage::ProducerStateManager> producer_state_;
};

}  // namespace weir::broker
