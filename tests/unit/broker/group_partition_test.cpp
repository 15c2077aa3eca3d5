// Coordinator selection must match Kafka's (Utils.abs(String.hashCode) % partitions), or clients
// of a mixed deployment, and tools reading __consumer_offsets, would look in the wrong place.
// Expected values computed independently from Java's String.hashCode definition over UTF-16.
#include <gtest/gtest.h>

#include "broker/group_host.h"

namespace weir::broker {
namespace {

TEST(GroupPartitionFor, MatchesJavaStringHashModuloPartitions) {
  EXPECT_EQ(group_partition_for("g1", 50), 42);  // hashCode 3242
  EXPECT_EQ(group_partition_for("orders-consumers", 50), 39);
  EXPECT_EQ(group_partition_for("", 50), 0);
  EXPECT_EQ(group_partition_for("console-consumer-12345", 50), 6);
}

TEST(GroupPartitionFor, NegativeHashesUseTheirAbsoluteValue) {
  EXPECT_EQ(group_partition_for("\xea\xb7\xb8\xeb\xa3\xb9-\xed\x95\x9c\xea\xb8\x80", 50), 22);  // "그룹-한글", hash -407267472
}

TEST(GroupPartitionFor, IntegerMinHashMapsToPartitionZero) {
  // "polygenelubricants".hashCode() == Integer.MIN_VALUE; Kafka's Utils.abs maps it to 0.
  EXPECT_EQ(group_partition_for("polygenelubricants", 50), 0);
  EXPECT_EQ(group_partition_for("polygenelubricants", 7), 0);
}

TEST(GroupPartitionFor, SupplementaryCharactersHashAsSurrogatePairs) {
  EXPECT_EQ(group_partition_for("emoji-\xf0\x9f\x98\x80", 50), 6);  // U+1F600, hash 1164511306
}

TEST(GroupPartitionFor, OnePartition) { EXPECT_EQ(group_partition_for("anything", 1), 0); }

}  // namespace
}  // namespace weir::broker
