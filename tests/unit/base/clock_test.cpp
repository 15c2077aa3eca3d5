#include "base/clock.h"

#include <gtest/gtest.h>

namespace weir {
namespace {

TEST(ClockTest, SystemMonotonicClockNeverGoesBack) {
  Clock& clock = SystemClock::instance();
  std::int64_t previous = clock.now_ms();
  for (int i = 0; i < 1000; ++i) {
    const std::int64_t now = clock.now_ms();
    EXPECT_GE(now, previous);
    previous = now;
  }
}

TEST(ClockTest, SystemWallClockIsAfter2020) {
  EXPECT_GT(SystemClock::instance().wall_ms(), 1'577'836'800'000);
}

TEST(ClockTest, ManualClockMovesOnlyWhenAdvanced) {
  ManualClock clock(100, 5000);
  EXPECT_EQ(clock.now_ms(), 100);
  EXPECT_EQ(clock.wall_ms(), 5000);
  clock.advance_ms(25);
  EXPECT_EQ(clock.now_ms(), 125);
  EXPECT_EQ(clock.wall_ms(), 5025);
}

TEST(ClockTest, ManualWallClockCanStepBackwardWithoutMovingMonotonicTime) {
  ManualClock clock;
  clock.set_wall_ms(1000);
  EXPECT_EQ(clock.wall_ms(), 1000);
  EXPECT_EQ(clock.now_ms(), 0);
  EXPECT_EQ(ManualClock().wall_ms(), ManualClock::kDefaultWallMs);
}

TEST(ClockDeathTest, ManualMonotonicClockRefusesToGoBack) {
  ManualClock clock;
  EXPECT_DEATH(clock.advance_ms(-1), "cannot go back");
}

}  // namespace
}  // namespace weir
