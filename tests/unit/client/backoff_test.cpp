#include "client/backoff.h"

#include <gtest/gtest.h>

namespace weir::client {
namespace {

constexpr double kNoJitter = 0.5;  // the middle of [1 - jitter, 1 + jitter]

TEST(BackoffTest, DoublesFromTheInitialIntervalUpToTheMaximum) {
  ExponentialBackoff b(BackoffPolicy{.initial_ms = 100, .max_ms = 1000});
  EXPECT_EQ(b.backoff_ms(0, kNoJitter), 100);
  EXPECT_EQ(b.backoff_ms(1, kNoJitter), 200);
  EXPECT_EQ(b.backoff_ms(2, kNoJitter), 400);
  EXPECT_EQ(b.backoff_ms(3, kNoJitter), 800);
  EXPECT_EQ(b.backoff_ms(4, kNoJitter), 1000);
  EXPECT_EQ(b.backoff_ms(50, kNoJitter), 1000);
}

TEST(BackoffTest, JitterSpreadsTwentyPercentEitherWayButNeverPastTheMaximum) {
  ExponentialBackoff b(BackoffPolicy{.initial_ms = 100, .max_ms = 1000});
  EXPECT_EQ(b.backoff_ms(0, 0.0), 80);
  EXPECT_EQ(b.backoff_ms(0, 0.999999), 119);
  EXPECT_EQ(b.backoff_ms(10, 0.0), 800);
  EXPECT_EQ(b.backoff_ms(10, 0.999999), 1000);
}

TEST(BackoffTest, WithoutRoomToGrowTheInitialIntervalIsUsedAsIs) {
  ExponentialBackoff same(BackoffPolicy{.initial_ms = 100, .max_ms = 100});
  EXPECT_EQ(same.backoff_ms(5, 0.0), 100);
  ExponentialBackoff above(BackoffPolicy{.initial_ms = 5000, .max_ms = 1000});
  EXPECT_EQ(above.backoff_ms(0, 0.9), 1000);
}

TEST(BackoffTest, NoJitterGivesExactPowers) {
  ExponentialBackoff b(BackoffPolicy{.initial_ms = 50, .max_ms = 1000, .jitter = 0});
  EXPECT_EQ(b.backoff_ms(0, 0.0), 50);
  EXPECT_EQ(b.backoff_ms(2, 0.99), 200);
}

}  // namespace
}  // namespace weir::client
