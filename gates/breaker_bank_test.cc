#include "gates/breaker_bank.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "odin/v1/worker.pb.h"

namespace odin {
namespace {

using ::testing::HasSubstr;

class BreakerBankTest : public ::testing::Test {
 protected:
  WorkerRequest Call(WorkerPolicy policy, const std::string& tool = "ExecuteCommand", const std::string& lane = "") {
    WorkerRequest c;
    c.execution_id = "exe_" + std::to_string(++n_);
    c.tool = tool;
    c.policy = policy;
    c.lane = lane;
    return c;
  }
  v1::ToolResult Result(const WorkerRequest& c, v1::ToolStatus status, v1::ExitReason reason = v1::EXIT_REASON_NORMAL) {
    v1::ToolResult r;
    r.set_execution_id(c.execution_id);
    r.set_status(status);
    r.set_exit_reason(reason);
    return r;
  }
  BreakerInfo Info(const std::string& name) {
    for (const BreakerInfo& b : bank_.Infos()) {
      if (b.name == name) return b;
    }
    return {};
  }

  int n_ = 0;
  FakeClock clock_;
  std::vector<std::string> recorded_;  // "breaker from->to by execution"
  BreakerBank bank_{BreakerOptions{}, &clock_,
                    [this](const BreakerTransition& t, const std::string&, const std::string& execution_id) {
                      recorded_.push_back(t.breaker + " " + BreakerStateName(t.from) + "->" + BreakerStateName(t.to) +
                                          " by " + execution_id);
                    }};
};

TEST_F(BreakerBankTest, CrashesOfAWorkerKindOpenItsBreakerAndTheToolsAndRefuseTheNextCall) {
  for (int i = 0; i < 5; ++i) {
    WorkerRequest c = Call(WorkerPolicy::kWritable);
    BreakerHolds held;
    ASSERT_TRUE(bank_.Admit(c, "main", &held).ok());
    EXPECT_EQ(held.size(), 2u);
    bank_.Report(&held, Result(c, v1::TOOL_STATUS_CRASHED, v1::EXIT_REASON_CRASHED), "main");
    EXPECT_TRUE(held.empty());
  }
  EXPECT_EQ(Info("worker:writable").state, BreakerState::kOpen);
  EXPECT_EQ(Info("tool:ExecuteCommand").state, BreakerState::kOpen);
  EXPECT_THAT(recorded_, ::testing::Contains("worker:writable closed->open by exe_5"));

  WorkerRequest next = Call(WorkerPolicy::kWritable);
  BreakerHolds held;
  Status refused = bank_.Admit(next, "main", &held);
  EXPECT_EQ(refused.code(), StatusCode::kUnavailable);
  EXPECT_THAT(refused.ToString(), HasSubstr("circuit breaker worker:writable"));
  EXPECT_THAT(refused.ToString(), HasSubstr("the worker crashed"));
  EXPECT_TRUE(held.empty());
  // Another kind of worker is not held back by this one's failures.
  WorkerRequest read = Call(WorkerPolicy::kReadonly, "Read");
  EXPECT_TRUE(bank_.Admit(read, "main", &held).ok());
}

TEST_F(BreakerBankTest, AToolsOwnFailureOrACancelTellsTheBreakersNothingBad) {
  for (int i = 0; i < 10; ++i) {
    WorkerRequest c = Call(WorkerPolicy::kWritable);
    BreakerHolds held;
    ASSERT_TRUE(bank_.Admit(c, "main", &held).ok());
    bank_.Report(&held, Result(c, i % 2 == 0 ? v1::TOOL_STATUS_ERROR : v1::TOOL_STATUS_CANCELLED), "main");
  }
  EXPECT_EQ(Info("worker:writable").state, BreakerState::kClosed);
  EXPECT_EQ(Info("tool:ExecuteCommand").consecutive_failures, 0);
  EXPECT_TRUE(recorded_.empty());
}

TEST_F(BreakerBankTest, AnMcpServerHasABreakerOfItsOwnThatCountsItsTimeoutsAsAWorkerKindsDoesNot) {
  for (int i = 0; i < 5; ++i) {
    WorkerRequest c = Call(WorkerPolicy::kMcpReadonly, "mcp__srv__get", "srv");
    BreakerHolds held;
    ASSERT_TRUE(bank_.Admit(c, "main", &held).ok());
    EXPECT_EQ(held.front().first, "mcp:srv");
    bank_.Report(&held, Result(c, v1::TOOL_STATUS_TIMED_OUT), "main");
  }
  EXPECT_EQ(Info("mcp:srv").state, BreakerState::kOpen);
  EXPECT_EQ(Info("tool:mcp__srv__get").state, BreakerState::kOpen);
  for (int i = 0; i < 5; ++i) {
    WorkerRequest c = Call(WorkerPolicy::kWritable);
    BreakerHolds held;
    ASSERT_TRUE(bank_.Admit(c, "main", &held).ok());
    bank_.Report(&held, Result(c, v1::TOOL_STATUS_TIMED_OUT, v1::EXIT_REASON_TIMEOUT), "main");
  }
  EXPECT_EQ(Info("worker:writable").state, BreakerState::kClosed);
  EXPECT_EQ(Info("tool:ExecuteCommand").state, BreakerState::kOpen);
  // Past the cooldown one trial goes through; its success and the next
  // close the breaker again.
  clock_.Advance(BreakerOptions{}.cooldown + seconds(1));
  for (int i = 0; i < 2; ++i) {
    WorkerRequest c = Call(WorkerPolicy::kMcpReadonly, "mcp__srv__get", "srv");
    BreakerHolds held;
    ASSERT_TRUE(bank_.Admit(c, "main", &held).ok()) << i;
    bank_.Report(&held, Result(c, v1::TOOL_STATUS_OK), "main");
  }
  EXPECT_EQ(Info("mcp:srv").state, BreakerState::kClosed);
  EXPECT_EQ(Info("tool:mcp__srv__get").state, BreakerState::kClosed);
}

}  // namespace
}  // namespace odin
