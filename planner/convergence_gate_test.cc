#include "planner/convergence_gate.h"

#include <gtest/gtest.h>

#include "odin/v1/worker.pb.h"

namespace odin {
namespace {

v1::ToolResult Ran(int exit_code, const std::string& output = "") {
  v1::ToolResult r;
  r.set_status(exit_code == 0 ? v1::TOOL_STATUS_OK : v1::TOOL_STATUS_ERROR);
  r.set_has_exit_code(true);
  r.set_exit_code(exit_code);
  r.set_output_head(output);
  r.set_output_total_bytes(output.size());
  return r;
}

const CheckSpec kBuild{"build", "make", "Makefile"};

TEST(ConvergenceGateTest, NothingBlockingRefusesNothing) {
  std::string event;
  EXPECT_FALSE(RefuseWhileBlocked({}, "/w", &event).has_value());
  EXPECT_TRUE(event.empty());
}

TEST(ConvergenceGateTest, ABlockedSessionNamesEachFileAndItsCheck) {
  FileVerdict v{"/w/a.cc", "ex_write", "ex_check", Verdict::kErrors, "clangd", 1, "a.cc:1:1 error\n", ""};
  std::string event;
  std::optional<Refusal> r = RefuseWhileBlocked({v}, "/w", &event);
  ASSERT_TRUE(r.has_value());
  EXPECT_NE(r->text.find("a.cc: errors after ex_write (lsp_check ex_check)"), std::string::npos) << r->text;
  EXPECT_NE(event.find("ex_check"), std::string::npos);
  // The same blocking state is the same refusal; another summary is not.
  std::string again;
  EXPECT_EQ(RefuseWhileBlocked({v}, "/w", &again)->fingerprint, r->fingerprint);
  v.summary = "a.cc:2:1 error\n";
  EXPECT_NE(RefuseWhileBlocked({v}, "/w", &again)->fingerprint, r->fingerprint);
}

TEST(ConvergenceGateTest, ACheckThatExitsZeroPasses) {
  CheckVerdict v = JudgeCheck(kBuild, "ex_1", Ran(0), 60, false);
  EXPECT_EQ(v.status, CheckStatus::kPassed);
  EXPECT_FALSE(v.failure.has_value());
}

TEST(ConvergenceGateTest, AFailingCheckShowsTheEndOfItsOutput) {
  CheckVerdict v = JudgeCheck(kBuild, "ex_1", Ran(2, "compiling\nerror: x undeclared\n"), 60, false);
  EXPECT_EQ(v.status, CheckStatus::kFailed);
  ASSERT_TRUE(v.failure.has_value());
  EXPECT_NE(v.failure->text.find("exited with 2"), std::string::npos);
  EXPECT_NE(v.failure->text.find("error: x undeclared"), std::string::npos);
}

TEST(ConvergenceGateTest, ATimedOutCheckIsTheProjectsFailure) {
  v1::ToolResult r;
  r.set_status(v1::TOOL_STATUS_TIMED_OUT);
  CheckVerdict v = JudgeCheck(kBuild, "ex_1", r, 60, false);
  EXPECT_EQ(v.status, CheckStatus::kFailed);
  EXPECT_NE(v.failure->text.find("timed out after 60 s"), std::string::npos);
}

TEST(ConvergenceGateTest, ACheckThatCouldNotRunBlocksUnlessFailOpen) {
  v1::ToolResult r;
  r.set_status(v1::TOOL_STATUS_CRASHED);
  EXPECT_EQ(JudgeCheck(kBuild, "ex_1", r, 60, false).status, CheckStatus::kNotRun);
  EXPECT_TRUE(JudgeCheck(kBuild, "ex_1", r, 60, false).failure.has_value());
  EXPECT_FALSE(JudgeCheck(kBuild, "ex_1", r, 60, true).failure.has_value());
}

TEST(ConvergenceGateTest, TheSameRefusalGivesUpAtTheRetryCap) {
  RefusalCounter counter(3);
  EXPECT_FALSE(counter.GaveUp(counter.Count("a")));
  EXPECT_FALSE(counter.GaveUp(counter.Count("b")));  // another refusal counts apart
  EXPECT_FALSE(counter.GaveUp(counter.Count("a")));
  EXPECT_TRUE(counter.GaveUp(counter.Count("a")));
}

TEST(ConvergenceGateTest, FailedChecksMakeOneRefusal) {
  Refusal r = RefuseForChecks({{"f1", "build failed\n"}, {"f2", "tests failed\n"}});
  EXPECT_EQ(r.fingerprint, "f1f2");
  EXPECT_NE(r.text.find("checks failed"), std::string::npos);
  EXPECT_NE(r.text.find("build failed"), std::string::npos);
  EXPECT_NE(r.text.find("tests failed"), std::string::npos);
}

}  // namespace
}  // namespace odin
