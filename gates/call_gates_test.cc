#include "gates/call_gates.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "base/clock.h"
#include "base/file_util.h"
#include "base/json_input.h"
#include "odin/v1/worker.pb.h"
#include "planner/budget.h"

namespace odin {
namespace {

using nlohmann::json;

class CallGatesTest : public ::testing::Test {
 protected:
  CallGatesTest() {
    ws_ = *RealPath(*MakeTempDir("odin-gates"));
    context_.agent = [this] { return &profile_; };
    context_.mcp_mode = [](const std::string& tool, Mode) { return Status::PermissionDenied(tool, "not offered"); };
    context_.safeguards.rules = &rules_;
    context_.safeguards.workspace = ws_;
    context_.safeguards.state_dir = ws_ + "/.odin";
  }
  ~CallGatesTest() override { RemoveTree(ws_); }

  CallGateVerdict Run(const std::string& tool, const std::string& args, CallMode mode = CallMode::kEdit) {
    call_ = ToolCall();
    call_.execution_id = "ex_1";
    call_.tool = tool;
    call_.arguments_json = args;
    call_.mode = mode;
    call_.budget = budget_;
    args_ = ParseJson(args);
    request_ = WorkerRequest();
    CallGateVerdict v = RunCallGates(&call_, HandlerOf(tool), Status::OK(), &args_, context_, &request_);
    input_ = request_.typed ? request_.typed->input() : v1::ToolInput();
    return v;
  }

  std::string ws_;
  CommandRules rules_;
  WorkerRequest request_;

  CallGateContext context_;
  AgentProfileState profile_;
  Budget* budget_ = nullptr;
  ToolCall call_;
  json args_;
  v1::ToolInput input_;
};

TEST_F(CallGatesTest, ACallThroughEveryGateCarriesItsTypedInputAndItsBudgetIsCharged) {
  FakeClock clock;
  BudgetLimits limits;
  limits.tool_calls = 1;
  Budget budget(limits, &clock);
  budget_ = &budget;
  CallGateVerdict v = Run("Read", R"({"file_path":"a.c"})");
  ASSERT_TRUE(v.status.ok()) << v.status.ToString();
  EXPECT_EQ(input_.read().file_path(), "a.c");
  EXPECT_EQ(call_.budget, nullptr);  // charged once, here
  // The next one finds the budget spent: refused before any other gate.
  CallGateVerdict spent = Run("WriteFile", R"({"bogus":1})", CallMode::kAsk);
  EXPECT_TRUE(spent.rejected);
  EXPECT_NE(spent.status.ToString().find("budget exceeded"), std::string::npos) << spent.status.ToString();
}

TEST_F(CallGatesTest, TheModeRefusesAWriteInAskModeAndNobodyAsksForOdinsOwnCalls) {
  CallGateVerdict write = Run("WriteFile", R"({"file_path":"a","content":"x"})", CallMode::kAsk);
  EXPECT_TRUE(write.rejected);
  EXPECT_EQ(write.status.code(), StatusCode::kPermissionDenied) << write.status.ToString();
  // exec mode skips the mode gate; Odin's own calls are refused all the same.
  CallGateVerdict hook = Run("Hook", R"({"command":"id"})", CallMode::kExec);
  EXPECT_TRUE(hook.rejected);
  EXPECT_NE(hook.status.ToString().find("Odin's own call"), std::string::npos) << hook.status.ToString();
  CallGateVerdict init = Run("InitTool", R"({"content":"x"})");
  EXPECT_NE(init.status.ToString().find("only during /init"), std::string::npos) << init.status.ToString();
  CallGateVerdict mcp = Run("mcp__srv__do", R"({})");
  EXPECT_NE(mcp.status.ToString().find("not offered"), std::string::npos) << mcp.status.ToString();
}

TEST_F(CallGatesTest, BadArgumentsAreTheToolsErrorButACommandsAreRefused) {
  CallGateVerdict read = Run("Read", R"({})");
  EXPECT_FALSE(read.rejected);
  EXPECT_NE(read.status.ToString().find("missing required field 'file_path'"), std::string::npos)
      << read.status.ToString();
  CallGateVerdict command = Run("ExecuteCommand", R"({"command":""})");
  EXPECT_TRUE(command.rejected);
  EXPECT_EQ(command.status.code(), StatusCode::kInvalidArgument) << command.status.ToString();
}

TEST_F(CallGatesTest, TheStrictProfileTakesTheEvidenceOutAndAllowsOneCorrectiveChangeAtATime) {
  context_.grounded_edits = true;
  profile_.failed_at = 3;  // a validation failed
  CallGateVerdict first = Run("WriteFile", R"({"content":"x","evidence":["ex_a","ex_b"],"file_path":"a.c"})");
  ASSERT_TRUE(first.status.ok()) << first.status.ToString();
  EXPECT_EQ(first.evidence, (std::vector<std::string>{"ex_a", "ex_b"}));
  EXPECT_EQ(call_.arguments_json, R"({"content":"x","file_path":"a.c"})");  // no reader sees it
  EXPECT_EQ(profile_.corrective_pending, "ex_1");
  CallGateVerdict second = Run("WriteFile", R"({"content":"y","file_path":"b.c"})");
  EXPECT_TRUE(second.rejected);
  EXPECT_NE(second.status.ToString().find("one corrective change at a time"), std::string::npos)
      << second.status.ToString();
  CallGateVerdict malformed = Run("WriteFile", R"({"content":"y","evidence":"ex_a","file_path":"b.c"})");
  EXPECT_FALSE(malformed.rejected);
  EXPECT_NE(malformed.status.ToString().find("\"evidence\" must be an array"), std::string::npos);
}

TEST_F(CallGatesTest, MemoryForcedRefusesAWriteAfterAFailureUntilAMemoryQuery) {
  context_.memory_forced = true;
  profile_.failed_at = 5;
  profile_.memory_query_at = 4;
  CallGateVerdict refused = Run("EditTool", R"({"file_path":"a","old_string":"x","new_string":"y"})");
  EXPECT_NE(refused.status.ToString().find("Run memory_query first"), std::string::npos) << refused.status.ToString();
  profile_.memory_query_at = 6;
  EXPECT_TRUE(Run("EditTool", R"({"file_path":"a","old_string":"x","new_string":"y"})").status.ok());
  // Ask mode changes nothing: never blocked.
  profile_.memory_query_at = 4;
  EXPECT_TRUE(Run("Read", R"({"file_path":"a"})", CallMode::kAsk).status.ok());
}

TEST_F(CallGatesTest, TheSafeguardsDenyByRuleAskForOutsideReadsAndRefuseOdinsState) {
  rules_.deny = {"rm *"};
  CallGateVerdict denied = Run("ExecuteCommand", R"({"command":"rm -rf build"})");
  EXPECT_TRUE(denied.rejected);
  EXPECT_NE(denied.status.ToString().find("permissions.deny"), std::string::npos) << denied.status.ToString();
  ASSERT_TRUE(denied.event.has_value());
  EXPECT_EQ(denied.event->kind, "command_rule");  // the coordinator records it

  CallGateVerdict outside = Run("Read", R"({"file_path":"/etc/hostname"})");
  ASSERT_TRUE(outside.status.ok()) << outside.status.ToString();
  ASSERT_TRUE(outside.need.has_value());  // asked, not refused
  EXPECT_EQ(outside.need->keys, std::vector<std::string>{"read:/etc"});
  EXPECT_EQ(request_.approved_outside_path, "/etc/hostname");  // sent only if approved

  CallGateVerdict state = Run("Read", R"({"file_path":".odin/odin.db"})");
  EXPECT_TRUE(state.rejected);
  EXPECT_NE(state.status.ToString().find("Odin's state directory"), std::string::npos) << state.status.ToString();

  // odin exec runs the user's own command: no rules.
  EXPECT_TRUE(Run("ExecuteCommand", R"({"command":"rm -rf build"})", CallMode::kExec).status.ok());
}

}  // namespace
}  // namespace odin
