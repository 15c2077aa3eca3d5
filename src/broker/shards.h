// The executors of this broker (one per core) and what each owns.
//
// A partition belongs to the shard given by a hash of (topic name, partition index); its
// Partition object lives in that shard's table and is touched only on that shard's executor.
// Shard 0 also owns the controller (metadata log and image) and, later, coordinators.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <boost/asio/any_io_executor.hpp>

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
  template <class F>
  void for_each(F&& f) {
    for (auto& [name, parts] : by_topic_) {
      for (auto& p : parts) {
        if (p) f(*p);
      }
    }
  }

 private:
  std::unordered_map<std::string, std::vector<std::unique_ptr<Partition>>> by_topic_;
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
