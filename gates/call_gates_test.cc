#include "gates/call_gates.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "base/clock.h"
#include "base/file_util.h"
#include "base/json_input.h"
#include "base/sha256.h"
#include "gates/file_cache.h"
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
    context_.write.workspace = ws_;
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

TEST_F(CallGatesTest, AWritesFileIsJudgedOnceWhenItIsTaken) {
  CallGateVerdict ok = Run("WriteFile", R"({"file_path":"sub/../a.c","content":"x"})");
  ASSERT_TRUE(ok.status.ok()) << ok.status.ToString();
  EXPECT_EQ(ok.write_path, ws_ + "/a.c");  // resolved once; the queue and read-before-edit use it

  CallGateVerdict outside = Run("WriteFile", R"({"file_path":"/etc/odin-x","content":"x"})");
  EXPECT_TRUE(outside.rejected);
  ASSERT_TRUE(outside.event.has_value());
  EXPECT_EQ(outside.event->kind, "outside_workspace");

  CallGateVerdict odin_md = Run("WriteFile", R"({"file_path":"ODIN.md","content":"x"})");
  EXPECT_TRUE(odin_md.rejected);
  ASSERT_TRUE(odin_md.event.has_value());
  EXPECT_EQ(odin_md.event->kind, "protected_path");
  EXPECT_TRUE(odin_md.write_path.empty());
  // InitTool, offered by /init, is the one call that may write ODIN.md.
  context_.init_offered = true;
  CallGateVerdict init = Run("InitTool", R"({"content":"x"})");
  ASSERT_TRUE(init.status.ok()) << init.status.ToString();
  EXPECT_EQ(init.write_path, ws_ + "/ODIN.md");

  std::vector<std::string> held;
  context_.write.hold = [&held](const std::string& path) {
    held.push_back(path);
    return Status::FailedPrecondition("review rule", "reviewers change nothing");
  };
  CallGateVerdict hold = Run("EditTool", R"({"file_path":"a.c","old_string":"x","new_string":"y"})");
  EXPECT_TRUE(hold.rejected);
  EXPECT_EQ(held, std::vector<std::string>{ws_ + "/a.c"});
}

TEST_F(CallGatesTest, TheStrictProfileJudgesAWritesEvidenceAgainstItsResolvedFile) {
  context_.grounded_edits = true;
  std::vector<std::string> seen;
  context_.write.grounded_edits = true;
  context_.write.covered = [&seen](const std::string& path, const std::vector<std::string>& cited) {
    seen = cited;
    return path.ends_with("/a.c") ? Status::OK() : Status::FailedPrecondition("strict profile", "not covered");
  };
  CallGateVerdict covered =
      Run("EditTool", R"({"file_path":"a.c","old_string":"x","new_string":"y","evidence":["ex_a"]})");
  ASSERT_TRUE(covered.status.ok()) << covered.status.ToString();
  EXPECT_EQ(seen, std::vector<std::string>{"ex_a"});
  ASSERT_TRUE(covered.event.has_value());
  EXPECT_EQ(covered.event->kind, "evidence");
  EXPECT_TRUE(covered.event->in_message);
  EXPECT_NE(covered.event->detail_json.find("\"allow\""), std::string::npos) << covered.event->detail_json;

  profile_ = AgentProfileState();
  CallGateVerdict not_covered =
      Run("EditTool", R"({"file_path":"b.c","old_string":"x","new_string":"y","evidence":["ex_a"]})");
  EXPECT_TRUE(not_covered.rejected);
  ASSERT_TRUE(not_covered.event.has_value());
  EXPECT_NE(not_covered.event->detail_json.find("\"deny\""), std::string::npos) << not_covered.event->detail_json;
}

TEST_F(CallGatesTest, TheTurnGatesCheckReadBeforeEditAgainstTheCacheThenTheBreakers) {
  ASSERT_TRUE(WriteFileAtomic(ws_ + "/a.c", "int a;\n").ok());
  FakeClock clock;
  FileCacheOptions cache_options;
  cache_options.root = ws_;
  FileCache cache(cache_options, &clock);
  BreakerOptions breaker_options;
  breaker_options.failures = 1;
  BreakerBank breakers(breaker_options, &clock,
                       [](const BreakerTransition&, const std::string&, const std::string&) {});
  TurnGateContext turn;
  turn.workspace = ws_;
  turn.cache = &cache;
  turn.breakers = &breakers;

  CallGateVerdict taken = Run("EditTool", R"({"file_path":"a.c","old_string":"a","new_string":"b"})");
  ASSERT_TRUE(taken.status.ok()) << taken.status.ToString();
  BreakerHolds held;
  TurnGateVerdict unread = RunTurnGates(call_, HandlerOf("EditTool"), taken.write_path, "", turn, &request_, &held);
  EXPECT_TRUE(unread.rejected);
  EXPECT_NE(unread.status.ToString().find("you have not read a.c"), std::string::npos) << unread.status.ToString();
  EXPECT_TRUE(held.empty());  // refused before the breakers

  v1::FileSnapshot read;
  read.set_path(ws_ + "/a.c");
  read.set_sha256(Sha256Hex("int a;\n"));
  read.set_size_bytes(7);
  read.set_total_lines(1);
  read.set_full(true);
  read.set_content("int a;\n");
  cache.RecordRead(read);
  TurnGateVerdict through = RunTurnGates(call_, HandlerOf("EditTool"), taken.write_path, "", turn, &request_, &held);
  ASSERT_TRUE(through.status.ok()) << through.status.ToString();
  EXPECT_TRUE(request_.expect.set);  // the worker's compare-and-swap
  EXPECT_EQ(request_.expect.sha256, Sha256Hex("int a;\n"));
  EXPECT_FALSE(held.empty());  // its breakers hold it
  // Its worker crashed: the breakers open, and the next turn is refused.
  v1::ToolResult crashed;
  crashed.set_execution_id(call_.execution_id);
  crashed.set_status(v1::TOOL_STATUS_CRASHED);
  crashed.set_exit_reason(v1::EXIT_REASON_CRASHED);
  breakers.Report(&held, crashed, "main");
  TurnGateVerdict open = RunTurnGates(call_, HandlerOf("EditTool"), taken.write_path, "", turn, &request_, &held);
  EXPECT_TRUE(open.rejected);
  EXPECT_EQ(open.status.code(), StatusCode::kUnavailable) << open.status.ToString();

  // A file that is not there to edit is the tool's error, not a refusal.
  CallGateVerdict missing = Run("EditTool", R"({"file_path":"gone.c","old_string":"a","new_string":"b"})");
  ASSERT_TRUE(missing.status.ok()) << missing.status.ToString();
  BreakerHolds none;
  TurnGateVerdict gone = RunTurnGates(call_, HandlerOf("EditTool"), missing.write_path, "", turn, &request_, &none);
  EXPECT_FALSE(gone.rejected);
  EXPECT_EQ(gone.status.code(), StatusCode::kNotFound) << gone.status.ToString();
}

}  // namespace
}  // namespace odin
