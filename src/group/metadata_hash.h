// The metadata hash of a consumer group (KIP-1101), as Kafka 4.3.1 computes it
// (org.apache.kafka.coordinator.group.Utils computeTopicHash / computeGroupHash, over hash4j's
// XXH3-64 hash stream with seed 0), so that record 3's MetadataHash is Kafka's for the same topics.
//
// hash4j's stream hashes the concatenation of what is put, little-endian: putByte 1 byte,
// putInt 4, putLong 8, putString(s) = every UTF-16 code unit of s (2 bytes each) then
// putInt(s.length()) (the number of code units). XXH3-64 of those bytes is libxxhash's
// XXH3_64bits.
//
// Topic hash, of one topic of the image:
//   putByte(0)                                  magic
//   putLong(id msb) putLong(id lsb)             topic id
//   putString(name)
//   putInt(partition count)
//   for each partition p in 0..count-1:
//     putInt(p)
//     for each rack of p's replicas, sorted:    one per replica whose broker has a rack
//       putInt(rack.length()) putString(rack)   (the length twice: Kafka's own layout)
// Group hash, of the subscribed topics that exist in the image: 0 when there are none, else
// putLong(topic hash) of each, in the order of their names (java.lang.String order: UTF-16 code
// units, which differs from UTF-8 byte order only between U+E000..U+FFFF and supplementary
// characters).
//
// Strings arrive as UTF-8; a malformed byte reads as U+FFFD, one per byte (Kafka's topic names
// are ASCII; racks are whatever broker.rack says).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "group/consumer_group.h"

namespace weir::group {

// UTF-16 code units of a UTF-8 string, as Java holds it.
[[nodiscard]] std::u16string java_utf16(std::string_view utf8);
// java.lang.String.compareTo(a, b) < 0.
[[nodiscard]] bool java_string_less(std::string_view a, std::string_view b);

// Utils.computeTopicHash of one topic.
[[nodiscard]] std::int64_t topic_hash(const TopicImage::Topic& topic);
// Utils.computeGroupHash: topic name -> topic hash, combined in the names' Java order.
[[nodiscard]] std::int64_t group_hash(const std::map<std::string, std::int64_t>& topic_hashes);

// Kafka's topicHashCache: topic hashes kept by name, each valid while the topic's id, partition
// count and racks are the ones it was computed from (Kafka drops an entry when its topic changes
// in the metadata; weir compares, so a broker's new rack counts at once where Kafka waits for the
// topic's next change).
class TopicHashCache {
 public:
  [[nodiscard]] std::int64_t hash(const TopicImage::Topic& topic);
  // Drops the entries of topics `topics` does not have (Kafka drops those of deleted topics).
  void retain(const TopicImage& topics);
  [[nodiscard]] std::size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    TopicImage::Topic topic;
    std::int64_t hash = 0;
  };
  std::map<std::string, Entry, std::less<>> entries_;
};

// ModernGroup.computeMetadataHash: the group hash of those of `names` that `topics` has.
[[nodiscard]] std::int64_t metadata_hash(const std::set<std::string>& names, const TopicImage& topics,
                                         TopicHashCache& cache);

}  // namespace weir::group
