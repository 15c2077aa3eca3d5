#include "net/memory_budget.h"

#include <gtest/gtest.h>

namespace weir::net {
namespace {

TEST(MemoryBudgetTest, AcquisitionsStopAtTheLimitAndResumeAfterARelease) {
  MemoryBudget b(100, 100);
  ConnectionMemory c1;
  ConnectionMemory c2;
  EXPECT_TRUE(b.try_acquire(c1, 60));
  EXPECT_FALSE(b.try_acquire(c2, 41));
  EXPECT_TRUE(b.try_acquire(c2, 40));
  EXPECT_EQ(b.in_use_bytes(), 100);
  EXPECT_FALSE(b.try_acquire(c2, 1));
  b.release(c1, 60);
  EXPECT_EQ(b.in_use_bytes(), 40);
  EXPECT_TRUE(b.try_acquire(c2, 50));
  EXPECT_EQ(b.held_by(c2), 90);
  EXPECT_EQ(b.peak_bytes(), 100);
}

TEST(MemoryBudgetTest, OneConnectionCannotTakeMoreThanItsShare) {
  MemoryBudget b(100, 30);
  ConnectionMemory greedy;
  ConnectionMemory other;
  EXPECT_TRUE(b.try_acquire(greedy, 30));
  EXPECT_FALSE(b.try_acquire(greedy, 1));  // the budget has room, the connection's share not
  EXPECT_TRUE(b.try_acquire(other, 30));
  EXPECT_EQ(b.in_use_bytes(), 60);
}

TEST(MemoryBudgetTest, ShareIsNeverLargerThanTheBudget) {
  MemoryBudget b(50, 80);
  EXPECT_EQ(b.per_connection_bytes(), 50);
}

TEST(MemoryBudgetTest, ReleaseWakesEveryWaiterOnce) {
  MemoryBudget b(10, 10);
  ConnectionMemory c;
  ASSERT_TRUE(b.try_acquire(c, 10));
  int woken = 0;
  b.add_waiter([&woken]() { ++woken; });
  b.add_waiter([&woken]() { ++woken; });
  EXPECT_EQ(woken, 0);
  b.release(c, 4);
  EXPECT_EQ(woken, 2);
  b.release(c, 6);
  EXPECT_EQ(woken, 2);  // woken once; a waiter that still lacks memory registers again
}

TEST(MemoryBudgetTest, WaiterIsWokenAtOnceWhenNothingIsHeld) {
  MemoryBudget b(10, 10);
  int woken = 0;
  b.add_waiter([&woken]() { ++woken; });
  EXPECT_EQ(woken, 1);
}

TEST(MemoryBudgetTest, ClosedBudgetWakesNobody) {
  MemoryBudget b(10, 10);
  ConnectionMemory c;
  ASSERT_TRUE(b.try_acquire(c, 5));
  int woken = 0;
  b.add_waiter([&woken]() { ++woken; });
  b.close();
  b.add_waiter([&woken]() { ++woken; });
  b.release(c, 5);
  EXPECT_EQ(woken, 0);
  EXPECT_EQ(b.in_use_bytes(), 0);
}

TEST(MemoryLeaseTest, GivesItsBytesBackWhenDestroyedOrMoved) {
  auto b = std::make_shared<MemoryBudget>(100, 100);
  auto c = std::make_shared<ConnectionMemory>();
  {
    MemoryLease lease(b, c);
    ASSERT_TRUE(b->try_acquire(*c, 30));
    lease.add(30);
    ASSERT_TRUE(b->try_acquire(*c, 20));
    lease.add(20);
    MemoryLease moved = std::move(lease);
    EXPECT_EQ(moved.bytes(), 50);
    EXPECT_EQ(lease.bytes(), 0);  // NOLINT(bugprone-use-after-move): moved-from state is specified
    EXPECT_EQ(b->in_use_bytes(), 50);
  }
  EXPECT_EQ(b->in_use_bytes(), 0);
  EXPECT_EQ(b->held_by(*c), 0);
}

}  // namespace
}  // namespace weir::net
