#include "client/errors.h"

#include <gtest/gtest.h>

namespace weir::client {
namespace {

TEST(ErrorsTest, RetriableCodesAreKafkasRetriableExceptions) {
  // Errors.java: the codes whose exception extends RetriableException (directly or through
  // InvalidMetadataException).
  for (std::int16_t code : {2,  3,  5,  6,  7,  9,  13, 14, 15, 16, 19,  20,  41,  51,  56, 70,
                            71, 72, 74, 75, 78, 80, 83, 84, 88, 89, 100, 103, 106, 122, 123}) {
    EXPECT_TRUE(is_retriable(code)) << code;
  }
}

TEST(ErrorsTest, OtherCodesAreNotRetriable) {
  // UNKNOWN_SERVER_ERROR, NONE, OFFSET_OUT_OF_RANGE, BROKER_NOT_AVAILABLE, INVALID_TOPIC_EXCEPTION,
  // UNKNOWN_MEMBER_ID, REBALANCE_IN_PROGRESS, UNSUPPORTED_VERSION, TOPIC_ALREADY_EXISTS,
  // INVALID_PRODUCER_EPOCH, GROUP_ID_NOT_FOUND, TRANSACTION_ABORTABLE.
  for (std::int16_t code : {-1, 0, 1, 8, 17, 25, 27, 35, 36, 47, 69, 120}) {
    EXPECT_FALSE(is_retriable(code)) << code;
  }
}

TEST(ErrorsTest, StaleMetadataCodesAreRetriable) {
  for (std::int16_t code = -1; code < 130; ++code) {
    if (is_stale_metadata(code)) {
      EXPECT_TRUE(is_retriable(code)) << code;
    }
  }
  EXPECT_TRUE(is_stale_metadata(6));    // NOT_LEADER_OR_FOLLOWER
  EXPECT_FALSE(is_stale_metadata(16));  // NOT_COORDINATOR: a coordinator matter
  EXPECT_TRUE(is_coordinator_moved(16));
  EXPECT_TRUE(is_coordinator_moved(15));
  EXPECT_FALSE(is_coordinator_moved(14));  // still loading: same coordinator, try again later
}

TEST(ErrorsTest, TransportFailuresAreRetriableOthersAreNot) {
  EXPECT_TRUE(Error::transport("reset").retriable());
  EXPECT_FALSE(Error::timeout("late").retriable());
  EXPECT_FALSE(Error::protocol("garbled").retriable());
  EXPECT_FALSE(Error::invalid_argument("bad").retriable());
  EXPECT_TRUE(Error::kafka(6, "moved").retriable());
  EXPECT_FALSE(Error::kafka(36, "exists").retriable());
}

TEST(ErrorsTest, MessagesNameTheKafkaCode) {
  const Error e = Error::kafka(6, "produce to t-0 failed");
  EXPECT_EQ(e.name(), "NOT_LEADER_OR_FOLLOWER");
  EXPECT_EQ(e.to_string(), "kafka error NOT_LEADER_OR_FOLLOWER (6): produce to t-0 failed");
  EXPECT_EQ(Error::timeout("Metadata did not complete", 3).to_string(), "timeout: Metadata did not complete");
  EXPECT_EQ(Error::timeout("x", 3).name(), "UNKNOWN_TOPIC_OR_PARTITION");
}

}  // namespace
}  // namespace weir::client
