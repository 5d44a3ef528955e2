#include "planner/hooks.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace odin {
namespace {

HookRun Ran(int exit_code, std::string out = "", std::string err = "") {
  HookRun r;
  r.command = "check.sh";
  r.exit_code = exit_code;
  r.stdout_text = std::move(out);
  r.stderr_text = std::move(err);
  return r;
}

TEST(HookMatcherTest, MatchersAreReadAsClaudeCodeReadsThemAndKnowBothNames) {
  EXPECT_TRUE(HookMatcherMatches("Edit", "EditTool"));
  EXPECT_FALSE(HookMatcherMatches("Edit", "EditSymbol"));
  EXPECT_TRUE(HookMatcherMatches("Bash", "ExecuteCommand"));
  EXPECT_TRUE(HookMatcherMatches("ExecuteCommand", "ExecuteCommand"));
  EXPECT_TRUE(HookMatcherMatches("Edit|Write", "WriteFile"));
  EXPECT_TRUE(HookMatcherMatches("Edit|Write", "EditTool"));
  EXPECT_FALSE(HookMatcherMatches("Edit|Write", "MultiEditTool"));
  EXPECT_TRUE(HookMatcherMatches(".*Edit.*", "MultiEditTool"));
  EXPECT_TRUE(HookMatcherMatches("Agent", "AgentTool"));
  EXPECT_TRUE(HookMatcherMatches("Task", "AgentTool"));  // Claude Code's name before 2.1
  EXPECT_FALSE(HookMatcherMatches("Task", "ExecuteCommand"));
  EXPECT_TRUE(HookMatcherMatches("mcp__github__.*", "mcp__github__list_issues"));
  EXPECT_FALSE(HookMatcherMatches("mcp__github", "mcp__github__list_issues"));
  EXPECT_TRUE(HookMatcherMatches("", "Read"));
  EXPECT_TRUE(HookMatcherMatches("*", "Read"));
  EXPECT_FALSE(HookMatcherMatches("Rea", "Read"));
  // Names and lists of names are exact; anything else is an unanchored regex.
  EXPECT_TRUE(HookMatcherMatches("Read, Grep", "Grep"));
  EXPECT_TRUE(HookMatcherMatches(" Write | Edit ", "EditTool"));
  EXPECT_FALSE(HookMatcherMatches("Read,Grep", "Glob"));
  EXPECT_TRUE(HookMatcherMatches("Edit.*", "MultiEditTool"));  // unanchored, as Claude Code's RegExp.test
  EXPECT_TRUE(HookMatcherMatches("^Edit$", "EditTool"));
  EXPECT_FALSE(HookMatcherMatches("^Edit$", "MultiEditTool"));
}

TEST(HookPayloadTest, ACallIsToldWithClaudeCodesToolNameAndInputForm) {
  EXPECT_EQ(HookToolName("ExecuteCommand"), "Bash");
  EXPECT_EQ(HookToolName("WriteFile"), "Write");
  EXPECT_EQ(HookToolName("EditTool"), "Edit");
  EXPECT_EQ(HookToolName("mcp__fs__read"), "mcp__fs__read");
  EXPECT_EQ(HookToolName("EditSymbol"), "EditSymbol");  // none in Claude Code: Odin's own

  nlohmann::json read = HookToolInput("Read", {{"file_path", "sub/../.env"}, {"offset", 2}}, "/w");
  EXPECT_EQ(read["file_path"], "/w/.env");
  EXPECT_EQ(read["offset"], 2);
  EXPECT_EQ(HookToolInput("WriteFile", {{"file_path", "/etc/./passwd"}}, "/w")["file_path"], "/etc/passwd");
  nlohmann::json bash = HookToolInput("ExecuteCommand", {{"command", "make"}, {"timeout_seconds", 1.5}}, "/w");
  EXPECT_EQ(bash["command"], "make");
  EXPECT_EQ(bash["timeout"], 1500);  // milliseconds
  EXPECT_TRUE(HookToolInput("Read", nlohmann::json::array(), "/w").is_object());
}

TEST(HookMatcherTest, AnInvalidRegexIsNamed) {
  EXPECT_NE(HookMatcherError("Edit("), "");
  EXPECT_EQ(HookMatcherError("Edit|Write"), "");
  EXPECT_FALSE(HookMatcherMatches("Edit(", "EditTool"));
}

TEST(HooksForTest, OnlyMatchingGroupsAndEachCommandOnce) {
  HooksConfig c;
  c.events[HookEvent::kPreToolUse] = {{"Bash", {{"a.sh"}, {"b.sh"}}}, {"Edit", {{"c.sh"}}}, {"*", {{"a.sh"}}}};
  c.events[HookEvent::kStop] = {{"ignored-for-stop", {{"s.sh"}}}};
  std::vector<HookCommand> bash = HooksFor(c, HookEvent::kPreToolUse, "ExecuteCommand");
  ASSERT_EQ(bash.size(), 2u);
  EXPECT_EQ(bash[0].command, "a.sh");
  EXPECT_EQ(bash[1].command, "b.sh");
  EXPECT_EQ(HooksFor(c, HookEvent::kPreToolUse, "Read").size(), 1u);
  EXPECT_EQ(HooksFor(c, HookEvent::kStop, "").size(), 1u);  // Stop has no matcher
  EXPECT_TRUE(HooksFor(c, HookEvent::kPostToolUse, "Read").empty());
}

TEST(CombineHookRunsTest, ExitTwoBlocksWithStderrAsTheReason) {
  HookOutcome o = CombineHookRuns(HookEvent::kPreToolUse, {Ran(0), Ran(2, "", "no rm here\n")});
  EXPECT_EQ(o.decision, HookOutcome::Decision::kBlock);
  EXPECT_EQ(o.reason, "no rm here");
}

TEST(CombineHookRunsTest, OtherExitCodesAreNonBlockingErrors) {
  HookOutcome o = CombineHookRuns(HookEvent::kPreToolUse, {Ran(1, "", "oops")});
  EXPECT_EQ(o.decision, HookOutcome::Decision::kNone);
  ASSERT_EQ(o.notes.size(), 1u);
  EXPECT_NE(o.notes[0].find("exit 1"), std::string::npos);
  EXPECT_NE(o.notes[0].find("oops"), std::string::npos);
}

TEST(CombineHookRunsTest, MalformedJsonIsANonBlockingError) {
  HookOutcome o = CombineHookRuns(HookEvent::kPreToolUse, {Ran(0, "{\"decision\": \"block\"")});
  EXPECT_EQ(o.decision, HookOutcome::Decision::kNone);
  ASSERT_EQ(o.notes.size(), 1u);
  EXPECT_NE(o.notes[0].find("malformed JSON"), std::string::npos);
}

TEST(CombineHookRunsTest, DenyWinsOverAskAndAllow) {
  auto decision = [](const char* d, const char* why) {
    return Ran(
        0, std::string("{\"hookSpecificOutput\": {\"hookEventName\": \"PreToolUse\", \"permissionDecision\": \"") + d +
               "\", \"permissionDecisionReason\": \"" + why + "\"}}");
  };
  HookOutcome o = CombineHookRuns(HookEvent::kPreToolUse,
                                  {decision("allow", "fine"), decision("deny", "not on main"), decision("ask", "?")});
  EXPECT_EQ(o.decision, HookOutcome::Decision::kBlock);
  EXPECT_EQ(o.reason, "not on main");
  o = CombineHookRuns(HookEvent::kPreToolUse, {decision("allow", "fine"), decision("ask", "are you sure")});
  EXPECT_EQ(o.decision, HookOutcome::Decision::kAsk);
  EXPECT_EQ(o.reason, "are you sure");
  o = CombineHookRuns(HookEvent::kPreToolUse, {decision("allow", "fine")});
  EXPECT_EQ(o.decision, HookOutcome::Decision::kAllow);
}

// hookify's block: a deny whose only words are in systemMessage.
TEST(CombineHookRunsTest, ADenyWithoutAReasonGivesTheModelTheSystemMessage) {
  HookOutcome o =
      CombineHookRuns(HookEvent::kPreToolUse,
                      {Ran(0, R"({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny"},
                  "systemMessage": "**[block-dangerous-rm]**\nDangerous rm command detected!"})")});
  EXPECT_EQ(o.decision, HookOutcome::Decision::kBlock);
  EXPECT_EQ(o.reason, "**[block-dangerous-rm]**\nDangerous rm command detected!");
  o = CombineHookRuns(HookEvent::kStop, {Ran(0, R"({"decision": "block", "systemMessage": "tests fail"})")});
  EXPECT_EQ(o.reason, "tests fail");
}

TEST(CombineHookRunsTest, PermissionDecisionsCountOnlyForPreToolUse) {
  HookRun r = Ran(0, R"({"hookSpecificOutput": {"permissionDecision": "deny"}})");
  EXPECT_EQ(CombineHookRuns(HookEvent::kPostToolUse, {r}).decision, HookOutcome::Decision::kNone);
}

TEST(CombineHookRunsTest, StopBlocksWithAReasonAndContinueFalseStops) {
  HookOutcome o = CombineHookRuns(HookEvent::kStop, {Ran(0, R"({"decision": "block", "reason": "tests fail"})")});
  EXPECT_EQ(o.decision, HookOutcome::Decision::kBlock);
  EXPECT_EQ(o.reason, "tests fail");
  o = CombineHookRuns(HookEvent::kPostToolUse, {Ran(0, R"({"continue": false, "stopReason": "enough"})")});
  EXPECT_TRUE(o.stop);
  EXPECT_EQ(o.stop_reason, "enough");
}

TEST(CombineHookRunsTest, PlainStdoutIsContextOnlyAtSessionStartAndPromptSubmit) {
  EXPECT_EQ(CombineHookRuns(HookEvent::kSessionStart, {Ran(0, "branch: main\n")}).additional_context, "branch: main");
  EXPECT_EQ(CombineHookRuns(HookEvent::kUserPromptSubmit, {Ran(0, "now: 12:00")}).additional_context, "now: 12:00");
  EXPECT_EQ(CombineHookRuns(HookEvent::kPreToolUse, {Ran(0, "chatter")}).additional_context, "");
  EXPECT_EQ(CombineHookRuns(HookEvent::kPostToolUse,
                            {Ran(0, R"({"hookSpecificOutput": {"additionalContext": "formatted"}})")})
                .additional_context,
            "formatted");
}

TEST(CombineHookRunsTest, EventsThatCannotBlockTellTheUser) {
  HookOutcome o = CombineHookRuns(HookEvent::kNotification, {Ran(2, "", "cannot notify")});
  EXPECT_EQ(o.decision, HookOutcome::Decision::kNone);
  ASSERT_EQ(o.notes.size(), 1u);
}

TEST(CombineHookRunsTest, ATimeoutIsANoteNotABlock) {
  HookRun r = Ran(124);
  r.timed_out = true;
  HookOutcome o = CombineHookRuns(HookEvent::kPreToolUse, {r});
  EXPECT_EQ(o.decision, HookOutcome::Decision::kNone);
  ASSERT_EQ(o.notes.size(), 1u);
  EXPECT_NE(o.notes[0].find("timed out"), std::string::npos);
}

TEST(DescribeHooksTest, OneLineEachWithWhereItComesFrom) {
  HooksConfig c;
  EXPECT_EQ(DescribeHooks(c), "no hooks\n");
  c.events[HookEvent::kPreToolUse] = {{"Bash", {{"./check.sh", 60, true, "/u/odinconfig.json"}}}};
  c.events[HookEvent::kNotification] = {{"", {{"notify-send hi", 5, false, "/u/odinconfig.json"}}}};
  EXPECT_EQ(DescribeHooks(c),
            "PreToolUse [Bash] `./check.sh` (60 s, sandboxed; /u/odinconfig.json)\n"
            "Notification `notify-send hi` (5 s, on the host; /u/odinconfig.json)\n");
}

TEST(HookEventTest, NamesRoundTrip) {
  for (HookEvent e : kAllHookEvents) EXPECT_EQ(ParseHookEvent(HookEventName(e)), e);
  EXPECT_FALSE(ParseHookEvent("pretooluse"));
}

}  // namespace
}  // namespace odin
