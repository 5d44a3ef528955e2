#include "gates/circuit_breaker.h"

#include <gtest/gtest.h>

namespace odin {
namespace {

class CircuitBreakerTest : public ::testing::Test {
 protected:
  bool Allow(uint64_t* trial = nullptr) {
    uint64_t t = 0;
    bool ok = breaker_.Allow(clock_.Now(), &t);
    if (trial != nullptr) *trial = t;
    return ok;
  }
  void Fail(int times = 1) {
    for (int i = 0; i < times; ++i) {
      ASSERT_TRUE(Allow());
      breaker_.OnFailure(clock_.Now(), "timed out", 0);
    }
  }
  void OpenIt() {
    Fail(5);
    ASSERT_EQ(breaker_.state(), BreakerState::kOpen);
    breaker_.TakeTransitions();
  }

  FakeClock clock_;
  CircuitBreaker breaker_{"tool:ExecuteCommand", BreakerOptions{}};
};

TEST_F(CircuitBreakerTest, FourFailuresKeepItClosedTheFifthOpensIt) {
  Fail(4);
  EXPECT_EQ(breaker_.state(), BreakerState::kClosed);
  EXPECT_TRUE(breaker_.TakeTransitions().empty());
  Fail(1);
  EXPECT_EQ(breaker_.state(), BreakerState::kOpen);
  std::vector<BreakerTransition> t = breaker_.TakeTransitions();
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].breaker, "tool:ExecuteCommand");
  EXPECT_EQ(t[0].from, BreakerState::kClosed);
  EXPECT_EQ(t[0].to, BreakerState::kOpen);
  EXPECT_EQ(t[0].failures, 5);
  EXPECT_NE(t[0].reason.find("timed out"), std::string::npos);
}

TEST_F(CircuitBreakerTest, ASuccessResetsTheCount) {
  Fail(4);
  ASSERT_TRUE(Allow());
  breaker_.OnSuccess(0);
  Fail(4);
  EXPECT_EQ(breaker_.state(), BreakerState::kClosed);
}

TEST_F(CircuitBreakerTest, OpenRefusesUntilTheCooldownEnds) {
  OpenIt();
  clock_.Advance(seconds(30) - milliseconds(1));
  EXPECT_FALSE(Allow());
  EXPECT_EQ(breaker_.state(), BreakerState::kOpen);
  clock_.Advance(milliseconds(1));
  uint64_t trial = 0;
  EXPECT_TRUE(Allow(&trial));
  EXPECT_NE(trial, 0u);
  EXPECT_EQ(breaker_.state(), BreakerState::kHalfOpen);
  std::vector<BreakerTransition> t = breaker_.TakeTransitions();
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].to, BreakerState::kHalfOpen);
}

TEST_F(CircuitBreakerTest, HalfOpenLetsOneTrialThroughAtATime) {
  OpenIt();
  clock_.Advance(seconds(30));
  EXPECT_TRUE(Allow());
  EXPECT_FALSE(Allow());  // the trial is still running
}

TEST_F(CircuitBreakerTest, EnoughTrialSuccessesCloseIt) {
  OpenIt();
  clock_.Advance(seconds(30));
  uint64_t trial = 0;
  ASSERT_TRUE(Allow(&trial));
  breaker_.OnSuccess(trial);
  EXPECT_EQ(breaker_.state(), BreakerState::kHalfOpen);  // 1 of 2
  ASSERT_TRUE(Allow(&trial));
  breaker_.OnSuccess(trial);
  EXPECT_EQ(breaker_.state(), BreakerState::kClosed);
  std::vector<BreakerTransition> t = breaker_.TakeTransitions();
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[1].from, BreakerState::kHalfOpen);
  EXPECT_EQ(t[1].to, BreakerState::kClosed);
}

TEST_F(CircuitBreakerTest, AFailedTrialReopensForANewCooldown) {
  OpenIt();
  clock_.Advance(seconds(30));
  uint64_t trial = 0;
  ASSERT_TRUE(Allow(&trial));
  breaker_.OnFailure(clock_.Now(), "the worker crashed", trial);
  EXPECT_EQ(breaker_.state(), BreakerState::kOpen);
  clock_.Advance(seconds(29));
  EXPECT_FALSE(Allow());
  clock_.Advance(seconds(1));
  EXPECT_TRUE(Allow());
}

TEST_F(CircuitBreakerTest, ALateResultOfAnOlderCallDoesNotDecideHalfOpen) {
  OpenIt();
  clock_.Advance(seconds(30));
  uint64_t trial = 0;
  ASSERT_TRUE(Allow(&trial));
  breaker_.OnSuccess(0);  // started before it opened
  breaker_.OnFailure(clock_.Now(), "timed out", 0);
  EXPECT_EQ(breaker_.state(), BreakerState::kHalfOpen);
}

TEST_F(CircuitBreakerTest, AnAbandonedTrialFreesItsPlace) {
  OpenIt();
  clock_.Advance(seconds(30));
  uint64_t trial = 0;
  ASSERT_TRUE(Allow(&trial));
  EXPECT_FALSE(Allow());
  breaker_.OnAbandoned(trial);
  EXPECT_TRUE(Allow());
}

TEST_F(CircuitBreakerTest, DisabledNeverOpens) {
  BreakerOptions o;
  o.enabled = false;
  breaker_ = CircuitBreaker("tool:Grep", o);
  Fail(20);
  EXPECT_EQ(breaker_.state(), BreakerState::kClosed);
  EXPECT_TRUE(Allow());
}

TEST_F(CircuitBreakerTest, ATrialOfAnEarlierHalfOpenPeriodDecidesNothing) {
  BreakerOptions o;
  o.trials = 2;
  o.successes = 1;
  breaker_ = CircuitBreaker("tool:Grep", o);
  OpenIt();
  clock_.Advance(seconds(30));
  uint64_t old_trial = 0, failing = 0;
  ASSERT_TRUE(Allow(&old_trial));
  ASSERT_TRUE(Allow(&failing));
  breaker_.OnFailure(clock_.Now(), "the worker crashed", failing);  // open again
  clock_.Advance(seconds(30));
  uint64_t trial = 0;
  ASSERT_TRUE(Allow(&trial));  // a new half-open period
  breaker_.OnSuccess(old_trial);
  EXPECT_EQ(breaker_.state(), BreakerState::kHalfOpen);
  breaker_.OnSuccess(trial);
  EXPECT_EQ(breaker_.state(), BreakerState::kClosed);
}

}  // namespace
}  // namespace odin
