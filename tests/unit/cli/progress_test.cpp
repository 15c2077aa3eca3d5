#include "cli/progress.h"

#include <gtest/gtest.h>

namespace weir::cli {
namespace {

using std::chrono::milliseconds;

TEST(ProgressTest, CountAndRatePerSecond) {
  EXPECT_EQ(progress_text("produced", 1500, std::nullopt, milliseconds(3'000)), "1500 records produced, 500/s");
  EXPECT_EQ(progress_text("consumed", 12, 100, milliseconds(2'000)), "12 of 100 records consumed, 6.0/s");
  EXPECT_EQ(progress_text("consumed", 5, 100, milliseconds(2'000)), "5 of 100 records consumed, 2.5/s");
  EXPECT_EQ(progress_text("produced", 123'457, std::nullopt, milliseconds(1'000)), "123457 records produced, 123457/s");
}

TEST(ProgressTest, NoRateBeforeAnyTimePassed) {
  EXPECT_EQ(progress_text("produced", 0, std::nullopt, milliseconds(0)), "0 records produced, 0.0/s");
  EXPECT_EQ(progress_text("produced", 10, std::nullopt, milliseconds(0)), "10 records produced, 0.0/s");
}

TEST(ProgressTest, DisabledDrawsNothing) {
  testing::internal::CaptureStderr();
  {
    Progress p("produced", std::nullopt, false);
    for (int i = 0; i < 1000; ++i) p.update(i);
    p.clear();
  }
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

}  // namespace
}  // namespace weir::cli
