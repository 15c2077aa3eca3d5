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
#include "txn/producer_state.h"

namespace weir::broker {

class Partition {
 public:
  // The log is owned by the log manager; the partition is its only user while it exists.
  Partition(std::string topic, Uuid topic_id, std::int32_t index, std::int32_t leader_epoch,
            storage::PartitionLog* log)
      : topic_(std::move(topic)), topic_id_(topic_id), index_(index), leader_epoch_(leader_epoch), log_(log) {}

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

  [[nodiscard]] txn::ProducerStateTable& producers() { return producers_; }

 private:
  std::string topic_;
  Uuid topic_id_;
  std::int32_t index_;
  std::int32_t leader_epoch_;
  storage::PartitionLog* log_;
  std::vector<std::function<void()>> watchers_;
  txn::ProducerStateTable producers_;
};

}  // namespace weir::broker
