#include "metrics/metric.h"

#include <array>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace weir::metrics {
namespace {

TEST(CounterTest, CountsWhatItsWriterAdds) {
  Counter c;
  EXPECT_EQ(c.value(), 0u);
  c.inc();
  c.inc(41);
  EXPECT_EQ(c.value(), 42u);
}

TEST(GaugeTest, SetAndAddMoveBothWays) {
  Gauge g;
  g.add(3);
  g.add(-5);
  EXPECT_EQ(g.value(), -2);
  g.set(7);
  EXPECT_EQ(g.value(), 7);
}

// The sharded use: each thread writes only its own counter; the total is the sum when read.
TEST(CounterTest, PerShardCountersSumToEveryIncrement) {
  constexpr int kShards = 4;
  constexpr int kIncrements = 100000;
  std::array<Counter, kShards> shards;
  std::vector<std::thread> threads;
  for (int s = 0; s < kShards; ++s) {
    threads.emplace_back([&shards, s]() {
      for (int i = 0; i < kIncrements; ++i) shards[static_cast<std::size_t>(s)].inc();
    });
  }
  for (auto& t : threads) t.join();
  std::uint64_t total = 0;
  for (const auto& c : shards) total += c.value();
  EXPECT_EQ(total, std::uint64_t{kShards} * kIncrements);
}

}  // namespace
}  // namespace weir::metrics
