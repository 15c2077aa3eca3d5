#include "base/log.h"

#include <gtest/gtest.h>

namespace weir {
namespace {

TEST(LogTest, LevelNamesParseCaseInsensitively) {
  EXPECT_EQ(log::parse_level("info"), spdlog::level::info);
  EXPECT_EQ(log::parse_level("DEBUG"), spdlog::level::debug);
  EXPECT_EQ(log::parse_level("warn"), spdlog::level::warn);
  EXPECT_EQ(log::parse_level("Warning"), spdlog::level::warn);
  EXPECT_EQ(log::parse_level("fatal"), spdlog::level::critical);
  EXPECT_EQ(log::parse_level("off"), spdlog::level::off);
  EXPECT_EQ(log::parse_level("verbose"), std::nullopt);
  EXPECT_EQ(log::parse_level(""), std::nullopt);
}

TEST(LogTest, UnknownLevelFallsBackToInfo) {
  EXPECT_FALSE(log::init("loud"));
  EXPECT_EQ(spdlog::default_logger()->level(), spdlog::level::info);
  EXPECT_TRUE(log::init("warn"));
  EXPECT_EQ(spdlog::default_logger()->level(), spdlog::level::warn);
}

TEST(LogTest, ComponentLoggersShareTheLevelAndAreReused) {
  ASSERT_TRUE(log::init("info"));
  auto storage = log::get("storage");
  EXPECT_EQ(storage->name(), "storage");
  EXPECT_EQ(storage, log::get("storage"));
  EXPECT_TRUE(log::set_level("error"));
  EXPECT_EQ(storage->level(), spdlog::level::err);
  EXPECT_EQ(log::get("net")->level(), spdlog::level::err);
  EXPECT_FALSE(log::set_level("nope"));
  EXPECT_EQ(storage->level(), spdlog::level::err);
  log::set_level("info");
}

TEST(LogTest, FieldsArePlainWhenSafeAndQuotedOtherwise) {
  EXPECT_EQ(fmt::format("{}", log::kv("partition", 3)), "partition=3");
  EXPECT_EQ(fmt::format("{}", log::kv("topic", std::string_view("orders"))), "topic=orders");
  EXPECT_EQ(fmt::format("{}", log::kv("reason", std::string_view("peer reset"))),
            "reason=\"peer reset\"");
  EXPECT_EQ(fmt::format("{}", log::kv("v", std::string_view("a\"b\\c\n"))), "v=\"a\\\"b\\\\c\\n\"");
  EXPECT_EQ(fmt::format("{}", log::kv("empty", std::string_view())), "empty=\"\"");
  EXPECT_EQ(fmt::format("{}", log::kv("eq", std::string_view("a=b"))), "eq=\"a=b\"");
}

TEST(LogTest, LinesGoToStderrAsKeyValues) {
  ASSERT_TRUE(log::init("info"));
  testing::internal::CaptureStderr();
  log::get("test")->info("event=started {}", log::kv("port", 9092));
  const std::string line = testing::internal::GetCapturedStderr();
  EXPECT_EQ(line.rfind("ts=", 0), 0u) << line;
  EXPECT_NE(line.find("Z level=info logger=test event=started port=9092\n"), std::string::npos)
      << line;
}

TEST(LogRateLimiterTest, BurstThenRefillAtTheRateCountingDroppedLines) {
  log::RateLimiter limiter(10, 3);  // 10 lines/s, 3 at once
  EXPECT_TRUE(limiter.allow(1000));
  EXPECT_TRUE(limiter.allow(1000));
  EXPECT_TRUE(limiter.allow(1000));
  EXPECT_FALSE(limiter.allow(1000));
  EXPECT_FALSE(limiter.allow(1050));  // half a token
  EXPECT_TRUE(limiter.allow(1100));   // one token after 100 ms
  EXPECT_EQ(limiter.take_dropped(), 2u);
  EXPECT_EQ(limiter.take_dropped(), 0u);
  EXPECT_TRUE(limiter.allow(61000));  // a long pause refills only up to the burst
  EXPECT_TRUE(limiter.allow(61000));
  EXPECT_TRUE(limiter.allow(61000));
  EXPECT_FALSE(limiter.allow(61000));
  EXPECT_EQ(limiter.dropped_total(), 3u);
}

TEST(LogRateLimiterTest, ClockGoingBackwardsDoesNotRefill) {
  log::RateLimiter limiter(1000, 1);
  EXPECT_TRUE(limiter.allow(5000));
  EXPECT_FALSE(limiter.allow(4000));
  EXPECT_FALSE(limiter.allow(5000));
  EXPECT_TRUE(limiter.allow(5001));
}

}  // namespace
}  // namespace weir
