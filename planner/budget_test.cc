#include "planner/budget.h"

#include <gtest/gtest.h>

namespace odin {
namespace {

TEST(BudgetTest, TurnsAreRefusedOnceTheCountIsReached) {
  FakeClock clock;
  BudgetLimits l;
  l.turns = 2;
  Budget b(l, &clock);
  EXPECT_TRUE(b.TryStartTurn());
  EXPECT_TRUE(b.TryStartTurn());
  EXPECT_FALSE(b.Exceeded());
  EXPECT_FALSE(b.TryStartTurn());
  EXPECT_EQ(b.Exceeded(), "turns");
  EXPECT_EQ(b.Describe("turns"), "turns: 2 of 2 used");
}

TEST(BudgetTest, ToolCallsAreRefusedOnceTheCountIsReached) {
  FakeClock clock;
  BudgetLimits l;
  l.tool_calls = 3;
  Budget b(l, &clock);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(b.TryStartToolCall());
  EXPECT_FALSE(b.TryStartToolCall());
  EXPECT_EQ(b.Exceeded(), "tool_calls");
  EXPECT_EQ(b.used().tool_calls, 3);
  // Nothing else starts either.
  EXPECT_FALSE(b.TryStartTurn());
}

TEST(BudgetTest, TokensRunOutWhenTheyReachTheLimit) {
  FakeClock clock;
  BudgetLimits l;
  l.tokens = 1000;
  Budget b(l, &clock);
  b.ChargeModel(999, 0);
  EXPECT_FALSE(b.Exceeded());
  EXPECT_TRUE(b.TryStartTurn());
  b.ChargeModel(1, 0);
  EXPECT_EQ(b.Exceeded(), "tokens");
  EXPECT_FALSE(b.TryStartTurn());
  EXPECT_FALSE(b.TryStartToolCall());
}

TEST(BudgetTest, CostRunsOutWhenItReachesTheLimit) {
  FakeClock clock;
  BudgetLimits l;
  l.cost_microusd = 10'000;  // one cent
  Budget b(l, &clock);
  b.ChargeModel(10, 9'999);
  EXPECT_FALSE(b.Exceeded());
  b.ChargeModel(10, 1);
  EXPECT_EQ(b.Exceeded(), "cost");
  EXPECT_EQ(b.Describe("cost"), "cost: $0.0100 used, the limit is $0.0100");
}

TEST(BudgetTest, WallTimeRunsOutAtTheDeadline) {
  FakeClock clock;
  BudgetLimits l;
  l.wall = seconds(10);
  Budget b(l, &clock);
  ASSERT_TRUE(b.deadline());
  EXPECT_EQ(*b.deadline(), clock.Now() + seconds(10));
  clock.Advance(seconds(10) - milliseconds(1));
  EXPECT_FALSE(b.Exceeded());
  clock.Advance(milliseconds(1));
  EXPECT_EQ(b.Exceeded(), "wall_time");
}

TEST(BudgetTest, NoLimitsMeansNothingRunsOut) {
  FakeClock clock;
  Budget b(BudgetLimits{}, &clock);
  for (int i = 0; i < 1000; ++i) {
    EXPECT_TRUE(b.TryStartTurn());
    EXPECT_TRUE(b.TryStartToolCall());
    b.ChargeModel(1'000'000, 1'000'000);
  }
  clock.Advance(seconds(100000));
  EXPECT_FALSE(b.Exceeded());
  EXPECT_FALSE(b.deadline());
  EXPECT_EQ(b.Remaining(), "");
}

TEST(BudgetTest, RemainingNamesEverySetLimit) {
  FakeClock clock;
  BudgetLimits l;
  l.turns = 50;
  l.tool_calls = 200;
  l.tokens = 100000;
  l.cost_microusd = 2'000'000;
  l.wall = seconds(600);
  Budget b(l, &clock);
  b.TryStartTurn();
  b.TryStartToolCall();
  b.ChargeModel(1500, 250'000);
  clock.Advance(seconds(30));
  EXPECT_EQ(b.Remaining(),
            "turns 49 of 50 left, tool calls 199 of 200 left, tokens 98500 of 100000 left, $1.7500 of $2.0000 left, "
            "570.0 s of 600.0 s wall time left");
}

}  // namespace
}  // namespace odin
