// Hooks end to end, through the real odin, sandbox, workers and ledger:
// Claude Code's events, exit codes and JSON answers, the gates a hook's
// allow never passes, a formatter's change as a mutation, Stop hooks that
// send the model back, timeouts, and trust.

#include <sys/stat.h>

#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "tests/ledger_rows.h"
#include "tests/llm_requests.h"
#include "tests/test_util.h"

namespace odin::testing {
namespace {

using nlohmann::json;

class OdinHooksTest : public ::testing::Test {
 protected:
  void TearDown() override {
    EXPECT_TRUE(ProcessesLeftWithEnv("ODIN_TEST_MARK", marker_).empty()) << "processes left behind";
  }
  // A hook script outside the workspace (a private /tmp in the sandbox:
  // visible only because Odin binds a hook's script), executable.
  std::string Script(const std::string& name, const std::string& body) {
    std::string path = user_.Join(name);
    EXPECT_TRUE(WriteFileAtomic(path, "#!/bin/sh\n" + body).ok());
    chmod(path.c_str(), 0755);
    return path;
  }
  // The user's config: {"hooks": hooks} and more.
  void UserConfig(const json& config) {
    ASSERT_TRUE(MakeDirs(user_.Join("config/odin")).ok());
    ASSERT_TRUE(WriteFileAtomic(user_.Join("config/odin/odinconfig.json"), config.dump()).ok());
  }
  static json Hook(const std::string& event, const std::string& matcher, const std::string& command, int timeout = 30) {
    return {{event,
             {{{"matcher", matcher}, {"hooks", {{{"type", "command"}, {"command", command}, {"timeout", timeout}}}}}}}};
  }
  json Prompt(const FakeLlm& llm, std::vector<std::string> more = {}) {
    std::vector<std::string> args = {"-p", "do the task", "--output-format", "json"};
    args.insert(args.end(), more.begin(), more.end());
    last_ = RunOdin(ws_.path(), args, FakeModelEnv(llm, marker_, user_));
    json j = json::parse(last_.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << "stdout: " << last_.out << "\nstderr: " << last_.err;
    return j;
  }
  std::vector<std::string> Rows(const std::string& sql) { return LedgerRows(ws_.Join(".odin/odin.db"), sql); }
  // The hook executions: "parent|status|exit_code", in order.
  std::vector<std::string> HookRuns() {
    return Rows(
        "SELECT s.parent_id, e.status, e.exit_code FROM execution_starts s JOIN execution_ends e USING "
        "(execution_id) WHERE s.tool = 'Hook' ORDER BY s.rowid");
  }
  std::string IdOfCall(const std::string& tool) {
    std::vector<std::string> ids =
        Rows("SELECT execution_id FROM execution_starts WHERE tool = '" + tool + "' ORDER BY rowid LIMIT 1");
    return ids.empty() ? "" : ids[0];
  }

  TempWorkspace ws_;
  TempWorkspace user_;
  std::string marker_ = UniqueMarker();
  Ran last_;
};

// Claude Code's example: a PreToolUse hook on Bash that refuses rm. The
// model reads the hook's reason; other commands run; each hook run is an
// execution whose parent is the call it judged.
TEST_F(OdinHooksTest, APreToolUseHookThatExitsTwoBlocksRmAndTheModelReadsWhy) {
  std::string script = Script("no-rm.sh", R"(input=$(cat)
case "$input" in *'"command":"rm '*) echo "rm is not allowed in this repository" >&2; exit 2;; esac
exit 0
)");
  UserConfig({{"hooks", Hook("PreToolUse", "Bash", script)}});
  ASSERT_TRUE(WriteFileAtomic(ws_.Join("a.txt"), "keep me\n").ok());
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"rm a.txt"}}]},
    {"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"echo fine"}}]},
    {"text":"Done."}]})");
  json r = Prompt(llm);
  ASSERT_EQ(r["status"], "done") << last_.err;
  EXPECT_TRUE(PathExists(ws_.Join("a.txt")));
  std::vector<json> requests = RequestsOf(llm);
  ASSERT_EQ(requests.size(), 3u);
  json refused = ToolResultsOf(requests[1]).back();
  EXPECT_EQ(refused["status"], "rejected") << refused.dump();
  EXPECT_NE(refused.dump().find("rm is not allowed in this repository"), std::string::npos) << refused.dump();
  json ran = ToolResultsOf(requests[2]).back();
  EXPECT_EQ(ran["status"], "ok") << ran.dump();

  std::vector<std::string> hooks = HookRuns();
  ASSERT_EQ(hooks.size(), 2u);
  std::string rm_id = IdOfCall("ExecuteCommand");
  EXPECT_EQ(hooks[0], rm_id + "|error|2");
  EXPECT_EQ(hooks[1].substr(hooks[1].find('|')), "|ok|0");
  // What the hook read: Claude Code's fields.
  std::vector<std::string> args = Rows("SELECT args_json FROM execution_starts WHERE tool = 'Hook' ORDER BY rowid");
  json input = json::parse(json::parse(args[0])["input"].get<std::string>());
  EXPECT_EQ(input["hook_event_name"], "PreToolUse");
  EXPECT_EQ(input["tool_name"], "Bash");  // Claude Code's name: its scripts check it
  EXPECT_EQ(input["tool_input"]["command"], "rm a.txt");
  EXPECT_EQ(input["tool_use_id"], rm_id);
  EXPECT_EQ(input["cwd"], ws_.path());
  EXPECT_EQ(input["permission_mode"], "acceptEdits");
  EXPECT_FALSE(input["session_id"].get<std::string>().empty());
  EXPECT_FALSE(input["transcript_path"].get<std::string>().empty());
  // prompt_id: the user's message the call belongs to.
  std::vector<std::string> messages = Rows("SELECT id FROM messages WHERE role = 'user'");
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(input["prompt_id"], messages[0]);
}

// Guards written for Claude Code read tool_name and tool_input as Claude
// Code sends them: a script that checks tool_name == "Bash" (the shape of
// the widely copied pre_tool_use.py guards, written here) blocks rm -rf, and
// its .env check sees the absolute, normalised file_path of a Read given as
// "sub/../.env".
TEST_F(OdinHooksTest, AGuardWrittenForClaudeCodeBlocksRmRfAndReadingDotEnv) {
  std::string script = Script("guard.py", R"(#!/usr/bin/env python3
import json, re, sys
data = json.load(sys.stdin)
name, tool_input = data.get("tool_name", ""), data.get("tool_input", {})
with open(sys.argv[1], "a") as log:
    log.write(json.dumps({"tool_name": name, "tool_input": tool_input}) + "\n")
if name == "Bash" and re.search(r"\brm\s+.*-[a-z]*r[a-z]*f", tool_input.get("command", "")):
    print("BLOCKED: Dangerous rm command detected and prevented", file=sys.stderr)
    sys.exit(2)
if name in ("Read", "Edit", "MultiEdit", "Write") and tool_input.get("file_path", "").endswith("/.env"):
    print("BLOCKED: Access to .env files containing sensitive data is prohibited", file=sys.stderr)
    sys.exit(2)
sys.exit(0)
)");
  std::string log = ws_.Join("guard.log");
  UserConfig({{"hooks", Hook("PreToolUse", "", "python3 " + script + " " + log)}});
  ASSERT_TRUE(MakeDirs(ws_.Join("build")).ok());
  ASSERT_TRUE(MakeDirs(ws_.Join("sub")).ok());
  ASSERT_TRUE(WriteFileAtomic(ws_.Join("build/out.o"), "object\n").ok());
  ASSERT_TRUE(WriteFileAtomic(ws_.Join(".env"), "TOKEN=secret\n").ok());
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"rm -rf build","timeout_seconds":5}}]},
    {"tool_calls":[{"name":"Read","arguments":{"file_path":"sub/../.env"}}]},
    {"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"echo fine"}}]},
    {"text":"Done."}]})");
  json r = Prompt(llm);
  ASSERT_EQ(r["status"], "done") << last_.err;
  EXPECT_TRUE(PathExists(ws_.Join("build/out.o")));  // rm -rf never ran
  std::vector<json> requests = RequestsOf(llm);
  ASSERT_EQ(requests.size(), 4u);
  json rm = ToolResultsOf(requests[1]).back();
  EXPECT_EQ(rm["status"], "rejected") << rm.dump();
  EXPECT_NE(rm.dump().find("Dangerous rm command"), std::string::npos) << rm.dump();
  json env = ToolResultsOf(requests[2]).back();
  EXPECT_EQ(env["status"], "rejected") << env.dump();
  EXPECT_EQ(env.dump().find("TOKEN=secret"), std::string::npos) << env.dump();
  EXPECT_EQ(ToolResultsOf(requests[3]).back()["status"], "ok");

  // What the guard read, as Claude Code would send it.
  StatusOr<std::string> logged = ReadFileToString(log);
  ASSERT_TRUE(logged.ok());
  std::vector<json> seen;
  std::istringstream lines(*logged);
  for (std::string line; std::getline(lines, line);) seen.push_back(json::parse(line));
  ASSERT_EQ(seen.size(), 3u) << *logged;
  EXPECT_EQ(seen[0]["tool_name"], "Bash");
  EXPECT_EQ(seen[0]["tool_input"]["timeout"], 5000);  // milliseconds, as Claude Code's
  EXPECT_EQ(seen[1]["tool_name"], "Read");
  EXPECT_EQ(seen[1]["tool_input"]["file_path"], ws_.Join(".env"));
}

// A hook's allow stands in for the user's answer to an ask rule, and for
// nothing else: a deny rule still refuses.
TEST_F(OdinHooksTest, APreToolUseAllowAnswersAnAskRuleButNeverPassesADenyRule) {
  std::string script = Script("allow.sh", R"(cat >/dev/null
echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "permissionDecisionReason": "ok by policy"}}'
)");
  UserConfig({{"hooks", Hook("PreToolUse", "*", script)}, {"permissions", {{"deny", {"rm"}}, {"ask", {"touch"}}}}});
  ASSERT_TRUE(WriteFileAtomic(ws_.Join("a.txt"), "keep me\n").ok());
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"rm a.txt"}}]},
    {"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"touch b.txt"}}]},
    {"text":"Done."}]})");
  Prompt(llm);  // the approval policy is deny: only the hook lets touch run
  std::vector<json> requests = RequestsOf(llm);
  ASSERT_EQ(requests.size(), 3u) << last_.err;
  json denied = ToolResultsOf(requests[1]).back();
  EXPECT_EQ(denied["status"], "rejected") << denied.dump();
  EXPECT_NE(denied.dump().find("permissions.deny"), std::string::npos) << denied.dump();
  EXPECT_TRUE(PathExists(ws_.Join("a.txt")));
  json allowed = ToolResultsOf(requests[2]).back();
  EXPECT_EQ(allowed["status"], "ok") << allowed.dump();
  EXPECT_TRUE(PathExists(ws_.Join("b.txt")));
  std::vector<std::string> approvals =
      Rows("SELECT detail_json FROM gate_events WHERE kind = 'approval' AND detail_json LIKE '%PreToolUse hook%'");
  EXPECT_EQ(approvals.size(), 1u);
  // The refused rm never reached its hooks: the rule judged it first.
  EXPECT_EQ(HookRuns().size(), 1u);
}

// A PostToolUse formatter (matched by Claude Code's name Write) rewrites
// the file: its change is a mutation of its own, by the hook.
TEST_F(OdinHooksTest, APostToolUseFormattersChangeIsAMutation) {
  std::string script = Script("format.sh", R"(cat >/dev/null
sed -i 's/messy/tidy/' "$CLAUDE_PROJECT_DIR/notes.txt"
)");
  UserConfig({{"hooks", Hook("PostToolUse", "Write|Edit", script)}});
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"WriteFile","arguments":{"file_path":"notes.txt","content":"messy\n"}}]},
    {"text":"Done."}]})");
  json r = Prompt(llm, {"--profile", "fast"});
  EXPECT_EQ(*ReadFileToString(ws_.Join("notes.txt")), "tidy\n");
  std::string write = IdOfCall("WriteFile");
  std::vector<std::string> hooks = HookRuns();
  ASSERT_EQ(hooks.size(), 1u);
  EXPECT_EQ(hooks[0], write + "|ok|0");
  std::vector<std::string> sources =
      Rows("SELECT m.source FROM mutations m JOIN execution_starts s USING (execution_id) WHERE s.tool = 'Hook'");
  ASSERT_EQ(sources.size(), 1u);
  EXPECT_EQ(sources[0], "hook");
  EXPECT_EQ(r["changed_files"], json::array({"notes.txt"})) << r.dump();
}

// A Stop hook that blocks twice then allows: the model is sent back twice
// with the hook's reason; the hook reads the transcript to count.
TEST_F(OdinHooksTest, AStopHookThatBlocksTwiceThenAllows) {
  std::string script = Script("stop.sh", R"SH(t=$(sed -n 's/.*"transcript_path":"\([^"]*\)".*/\1/p')
n=$(grep -c 'A Stop hook asks you to go on' "$t")
if [ "$n" -lt 2 ]; then echo "keep going ($n)" >&2; exit 2; fi
exit 0
)SH");
  UserConfig({{"hooks", Hook("Stop", "", script)}});
  FakeLlm llm(R"({"responses":[{"text":"first"},{"text":"second"},{"text":"third"}]})");
  json r = Prompt(llm, {"--mode", "ask"});
  ASSERT_EQ(r["status"], "done") << last_.err;
  EXPECT_EQ(r["result"], "third");
  std::vector<json> requests = RequestsOf(llm);
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_NE(requests[1]["body"].dump().find("keep going (0)"), std::string::npos);
  EXPECT_NE(requests[2]["body"].dump().find("keep going (1)"), std::string::npos);
  EXPECT_EQ(HookRuns().size(), 3u);
}

// A Stop hook that always blocks: after hooks.max_stop_blocks the run ends
// done, and the report says why.
TEST_F(OdinHooksTest, AStopHookThatNeverAllowsEndsAfterMaxStopBlocks) {
  std::string script =
      Script("never.sh", "cat >/dev/null\necho '{\"decision\": \"block\", \"reason\": \"not yet\"}'\n");
  json hooks = Hook("Stop", "", script);
  hooks["max_stop_blocks"] = 1;
  UserConfig({{"hooks", hooks}});
  FakeLlm llm(R"({"responses":[{"text":"first"},{"text":"second"}]})");
  json r = Prompt(llm, {"--mode", "ask"});
  ASSERT_EQ(r["status"], "done") << last_.err;
  EXPECT_EQ(RequestsOf(llm).size(), 2u);
  EXPECT_NE(r["report"].dump().find("not yet"), std::string::npos) << r["report"].dump();
}

// "continue": false ends the message at a Stop hook even where another
// hook blocks, and refuses a call at PreToolUse with its stopReason.
TEST_F(OdinHooksTest, ContinueFalseStopsWhateverElseIsDecided) {
  std::string blocker = Script("block.sh", "cat >/dev/null\necho 'more work' >&2\nexit 2\n");
  std::string stopper =
      Script("stop.sh", "cat >/dev/null\necho '{\"continue\": false, \"stopReason\": \"quota reached\"}'\n");
  json hooks = Hook("Stop", "", blocker);
  hooks["Stop"][0]["hooks"].push_back({{"command", stopper}});
  hooks.update(Hook("PreToolUse", "LS", stopper));
  UserConfig({{"hooks", hooks}});
  FakeLlm llm(
      R"({"responses":[{"tool_calls":[{"name":"LS","arguments":{"path":"."}}]},{"text":"first"},{"text":"second"}]})");
  json r = Prompt(llm, {"--mode", "ask"});
  ASSERT_EQ(r["status"], "done") << last_.err;
  std::vector<json> requests = RequestsOf(llm);
  ASSERT_EQ(requests.size(), 2u);  // never sent back by the blocking hook
  json refused = ToolResultsOf(requests[1]).back();
  EXPECT_EQ(refused["status"], "rejected");
  EXPECT_NE(refused.dump().find("quota reached"), std::string::npos) << refused.dump();
}

// A hook that hangs is killed at its timeout (a note, not a block); one
// that prints malformed JSON is a non-blocking error.
TEST_F(OdinHooksTest, AHangingHookIsKilledAtItsTimeoutAndMalformedJsonIsANote) {
  std::string hang = Script("hang.sh", "sleep 60\n");
  std::string bad = Script("bad.sh", "cat >/dev/null\necho '{\"decision\": '\n");
  json hooks = Hook("PreToolUse", "Read", hang, 1);
  hooks["PreToolUse"].push_back({{"matcher", "LS"}, {"hooks", {{{"command", bad}}}}});
  UserConfig({{"hooks", hooks}});
  ASSERT_TRUE(WriteFileAtomic(ws_.Join("a.txt"), "text\n").ok());
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"Read","arguments":{"file_path":"a.txt"}}]},
    {"tool_calls":[{"name":"LS","arguments":{"path":"."}}]},
    {"text":"Done."}]})");
  json r = Prompt(llm, {"--mode", "ask"});
  ASSERT_EQ(r["status"], "done") << last_.err;
  std::vector<json> requests = RequestsOf(llm);
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(ToolResultsOf(requests[1]).back()["status"], "ok");
  EXPECT_EQ(ToolResultsOf(requests[2]).back()["status"], "ok");
  std::vector<std::string> hook_runs = HookRuns();
  ASSERT_EQ(hook_runs.size(), 2u);
  EXPECT_NE(hook_runs[0].find("|timed_out|"), std::string::npos) << hook_runs[0];
  EXPECT_NE(last_.err.find("timed out and was killed"), std::string::npos) << last_.err;
  EXPECT_NE(last_.err.find("malformed JSON"), std::string::npos) << last_.err;
}

// A UserPromptSubmit hook that exits 2 refuses the prompt: the model never
// sees it, and odin exits with the code of its own.
TEST_F(OdinHooksTest, AUserPromptSubmitHookRefusesThePrompt) {
  std::string script = Script("prompt.sh", "cat >/dev/null\necho 'no prompts on Fridays' >&2\nexit 2\n");
  UserConfig({{"hooks", Hook("UserPromptSubmit", "", script)}});
  FakeLlm llm(R"({"responses":[{"text":"never"}]})");
  json r = Prompt(llm);
  EXPECT_EQ(last_.exit_code, 7) << last_.err;
  EXPECT_EQ(r["status"], "prompt_refused");
  EXPECT_TRUE(RequestsOf(llm).empty());
  EXPECT_NE(last_.out.find("no prompts on Fridays"), std::string::npos) << last_.out;
}

// What SessionStart and UserPromptSubmit hooks print is context for the
// model.
TEST_F(OdinHooksTest, SessionStartAndPromptHooksAddContext) {
  std::string start = Script("start.sh", "cat >/dev/null\necho 'branch: feature-x'\n");
  std::string prompt = Script("prompt.sh", "cat >/dev/null\necho 'ticket: ODIN-42'\n");
  json hooks = Hook("SessionStart", "", start);
  hooks.update(Hook("UserPromptSubmit", "", prompt));
  UserConfig({{"hooks", hooks}});
  FakeLlm llm(R"({"responses":[{"text":"ok"}]})");
  json r = Prompt(llm, {"--mode", "ask"});
  ASSERT_EQ(r["status"], "done") << last_.err;
  std::vector<json> requests = RequestsOf(llm);
  ASSERT_EQ(requests.size(), 1u);
  std::string body = requests[0]["body"].dump();
  EXPECT_NE(body.find("branch: feature-x"), std::string::npos);
  EXPECT_NE(body.find("ticket: ODIN-42"), std::string::npos);
}

// A workspace's hooks run only once the user trusts the workspace, and stop
// again when they change.
TEST_F(OdinHooksTest, AWorkspacesHooksRunOnlyWhileTrusted) {
  auto write_config = [&](const std::string& message) {
    json config = {{"hooks", Hook("PreToolUse", "Read", "cat >/dev/null; echo '" + message + "' >&2; exit 2")}};
    ASSERT_TRUE(WriteFileAtomic(ws_.Join("odinconfig.json"), config.dump()).ok());
  };
  write_config("refused by the repository");
  ASSERT_TRUE(WriteFileAtomic(ws_.Join("a.txt"), "text\n").ok());
  const char* script =
      R"({"responses":[{"tool_calls":[{"name":"Read","arguments":{"file_path":"a.txt"}}]},{"text":"Done."}]})";
  {
    FakeLlm llm(script);
    Prompt(llm, {"--mode", "ask"});
    ASSERT_EQ(RequestsOf(llm).size(), 2u) << last_.err;
    EXPECT_EQ(ToolResultsOf(RequestsOf(llm)[1]).back()["status"], "ok");
    EXPECT_NE(last_.err.find("hooks.PreToolUse"), std::string::npos) << last_.err;
    EXPECT_NE(last_.err.find("odin trust"), std::string::npos) << last_.err;
  }
  Ran trust = RunOdin(ws_.path(), {"trust"}, FakeModelEnv(FakeLlm(script), marker_, user_));
  ASSERT_EQ(trust.exit_code, 0) << trust.err;
  {
    FakeLlm llm(script);
    Prompt(llm, {"--mode", "ask"});
    ASSERT_EQ(RequestsOf(llm).size(), 2u) << last_.err;
    json result = ToolResultsOf(RequestsOf(llm)[1]).back();
    EXPECT_EQ(result["status"], "rejected") << last_.err;
    EXPECT_NE(result.dump().find("refused by the repository"), std::string::npos) << result.dump();
  }
  write_config("changed after trust");
  {
    FakeLlm llm(script);
    Prompt(llm, {"--mode", "ask"});
    ASSERT_EQ(RequestsOf(llm).size(), 2u) << last_.err;
    EXPECT_EQ(ToolResultsOf(RequestsOf(llm)[1]).back()["status"], "ok");
  }
}

// /hooks and odin doctor list the hooks in force and where each comes
// from; a SessionEnd hook runs when the session ends (here it records its
// input in the workspace: edit mode, so it may).
TEST_F(OdinHooksTest, HooksAreListedAndSessionEndRunsAtTheEnd) {
  std::string script = Script("end.sh", "cat > \"$ODIN_PROJECT_DIR/ended.json\"\n");
  UserConfig({{"hooks", Hook("SessionEnd", "", script)}});
  FakeLlm llm(R"({"responses":[{"text":"hello"}]})");
  int in, out;
  pid_t pid = StartOdinPiped(ws_.path(), {}, &in, &out, FakeModelEnv(llm, marker_, user_));
  std::string line = "/hooks\n";
  ASSERT_EQ(write(in, line.data(), line.size()), static_cast<ssize_t>(line.size()));
  std::string seen = ReadUntil(out, "odinconfig.json)");
  EXPECT_NE(seen.find("SessionEnd `" + script + "` (30 s, sandboxed; " + user_.Join("config/odin/odinconfig.json")),
            std::string::npos)
      << seen;
  close(in);
  close(out);
  EXPECT_EQ(Wait(pid), 0);  // SessionEnd hooks run before odin exits
  json ended = json::parse(*ReadFileToString(ws_.Join("ended.json")), nullptr, false);
  EXPECT_EQ(ended["hook_event_name"], "SessionEnd") << ended.dump();
  EXPECT_EQ(ended["reason"], "other");

  Ran doctor = RunOdin(ws_.path(), {"doctor"}, FakeModelEnv(llm, marker_, user_));
  EXPECT_NE(doctor.out.find("hooks\n  SessionEnd `" + script + "`"), std::string::npos) << doctor.out;
}

// A SubagentStop hook sends a subagent back to work as a Stop hook does
// the main agent: Claude Code's idiom, block unless stop_hook_active.
TEST_F(OdinHooksTest, ASubagentStopHookSendsTheSubagentBackToWork) {
  std::string script = Script("sub-stop.sh", R"(input=$(cat)
case "$input" in *'"stop_hook_active":true'*) exit 0;; esac
echo "check the other file too" >&2
exit 2
)");
  UserConfig({{"hooks", Hook("SubagentStop", "", script)}});
  json agents = {{"look around", {Text("first answer"), Text("second answer")}}};
  json main_script = {
      {"responses",
       {Turn({Call("AgentTool", {{"description", "look"}, {"prompt", "look around"}, {"mode", "ask"}})}),
        Text("Done.")}},
      {"agents", agents}};
  FakeLlm llm(main_script.dump());
  json r = Prompt(llm);
  ASSERT_EQ(r["status"], "done") << last_.err;
  std::vector<json> sub, parent;
  for (const json& q : RequestsOf(llm)) (q["n"].get<int64_t>() >= 1000000 ? sub : parent).push_back(q);
  ASSERT_EQ(sub.size(), 2u) << last_.err;
  EXPECT_NE(sub[1].dump().find("SubagentStop hook asks you to go on: check the other file too"), std::string::npos)
      << sub[1].dump();
  ASSERT_EQ(parent.size(), 2u);
  json answer = ToolResultsOf(parent[1]).back();
  EXPECT_NE(answer.dump().find("second answer"), std::string::npos) << answer.dump();
  // Both runs are Hook executions, children of the AgentTool call.
  std::string agent_call = IdOfCall("AgentTool");
  std::vector<std::string> runs = HookRuns();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0], agent_call + "|error|2");
  EXPECT_EQ(runs[1], agent_call + "|ok|0");
}

// Hook is the coordinator's own tool: a model that names it is refused like
// any unknown tool, in every mode, and nothing runs.
TEST_F(OdinHooksTest, TheModelCannotRunAHookItself) {
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"Hook","arguments":{"command":"touch made-by-model","input":""}}]},
    {"text":"Done."}]})");
  Prompt(llm);
  std::vector<json> requests = RequestsOf(llm);
  ASSERT_EQ(requests.size(), 2u) << last_.err;
  json result = ToolResultsOf(requests[1]).back();
  EXPECT_EQ(result["status"], "rejected") << result.dump();
  EXPECT_NE(result.dump().find("unknown tool"), std::string::npos) << result.dump();
  EXPECT_FALSE(PathExists(ws_.Join("made-by-model")));
}

}  // namespace
}  // namespace odin::testing
