// The executors of this broker (one per core) and what each owns.
//
// A partition belongs to the shard given by a hash of (topic name, partition index); its
// Partition object lives in that shard's table and is touched only on that shard's executor.
// Shard 0 also owns the controller (metadata log and image) and, later, coordinators.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "broker/partition.h"

namespace weir::broker {

// One shard's partitions. Not synchronised: used only on the shard's executor.
class PartitionTable {
 public:
  Partition* find(std::string_view topic, std::int32_t index);
  void add(std::unique_ptr<Partition> p);
  // Removes and returns the partitions of a topic.
  std::vector<std::unique_ptr<Partition>> remove_topic(std::string_view topic);
  // Removes one partition; false if it was not here.
  bool remove(std::string_view topic, std::int32_t index);
  // The partitions the periodic flush check looks at (see FlushWatch).
  [[nodiscard]] FlushWatch& flush_watch() { return flush_watch_; }
  // To be called after a hosted partition's log config changed (cleanup.policy may now include
  // compact).
  void config_changed(const Partition& p);
  template <class F>
  void for_each(F&& f) {
    for (auto& [name, parts] : by_topic_) {
      for (auto& p : parts) {
        if (p) f(*p);
      }
    }
  }
  // Every partition whose log's cleanup.policy includes compact, without visiting the others:
  // the cleaner's periodic look for work (every log.cleaner.backoff.ms) walked every partition
  // of the shard, ~60 ms a shard at 100,000 partitions, to find the few compacted ones. A topic
  // is listed when a partition of it is hosted or changes config to compact, and dropped here
  // once none of its partitions on this shard is compacted.
  template <class F>
  void for_each_compacted(F&& f) {
    for (auto it = compacted_.begin(); it != compacted_.end();) {
      bool any = false;
      if (auto t = by_topic_.find(*it); t != by_topic_.end()) {
        for (auto& p : t->second) {
          if (p && p->log().config().cleanup_compact) {
            any = true;
            f(*p);
          }
        }
      }
      it = any ? std::next(it) : compacted_.erase(it);
    }
  }
  // The names of the topics with a partition on this shard (a snapshot, for walks that yield
  // the shard between topics and look each partition up again).
  [[nodiscard]] std::vector<std::string> topic_names() const;
  // The topic's partitions here by index (null slots for those on other shards), or null if none.
  [[nodiscard]] const std::vector<std::unique_ptr<Partition>>* partitions_of(std::string_view topic) const;

 private:
  std::unordered_map<std::string, std::vector<std::unique_ptr<Partition>>> by_topic_;
  std::unordered_set<std::string> compacted_;  // topics that may have compacted partitions here
  FlushWatch flush_watch_;
};

class ShardSet {
 public:
  explicit ShardSet(std::vector<boost::asio::any_io_executor> executors);

  [[nodiscard]] std::size_t count() const { return executors_.size(); }
  [[nodiscard]] std::size_t owner(std::string_view topic, std::int32_t partition) const;
  [[nodiscard]] const boost::asio::any_io_executor& executor(std::size_t shard) const { return executors_[shard]; }
  [[nodiscard]] const boost::asio::any_io_executor& controller() const { return executors_[0]; }
  // Only on the shard's own executor (or before the executors run).
  [[nodiscard]] PartitionTable& table(std::size_t shard) { return *tables_[shard]; }

 private:
  std::vector<boost::asio::any_io_executor> executors_;
  std::vector<std::unique_ptr<PartitionTable>> tables_;
};

}  // namespace weir::broker
