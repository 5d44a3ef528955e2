// A repository's Claude Code definitions through the real odin, sandbox,
// workers and ledger: custom slash commands (.claude/commands), custom
// agents (.claude/agents) and skills (.claude/skills), each taken only once
// the workspace is trusted, each narrowing and never widening what the
// session may do.

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "tests/ledger_rows.h"
#include "tests/llm_requests.h"
#include "tests/test_util.h"

namespace odin::testing {
namespace {

using nlohmann::json;

class OdinClaudeDefsTest : public ::testing::Test {
 protected:
  void TearDown() override {
    EXPECT_TRUE(ProcessesLeftWithEnv("ODIN_TEST_MARK", marker_).empty()) << "processes left behind";
  }
  void Put(const std::string& rel, const std::string& content) {
    ASSERT_TRUE(MakeDirs(DirName(ws_.Join(rel))).ok());
    ASSERT_TRUE(WriteFileAtomic(ws_.Join(rel), content).ok());
  }
  std::map<std::string, std::string> Env(const FakeLlm& llm) { return FakeModelEnv(llm, marker_, user_); }
  void Trust() {
    FakeLlm llm(R"({"responses":[]})");
    Ran trust = RunOdin(ws_.path(), {"trust"}, Env(llm));
    ASSERT_EQ(trust.exit_code, 0) << trust.err;
  }
  json Prompt(const FakeLlm& llm, const std::string& prompt) {
    last_ = RunOdin(ws_.path(), {"-p", prompt, "--output-format", "json"}, Env(llm));
    json j = json::parse(last_.out, nullptr, false);
    return j;
  }
  static std::string UserMessage(const json& request) {
    for (const json& m : request["body"]["messages"]) {
      if (m["role"] == "user") return m["content"].dump();
    }
    return "";
  }
  static std::string SystemPrompt(const json& request) { return request["body"]["messages"][0]["content"].dump(); }

  TempWorkspace ws_;
  TempWorkspace user_;
  std::string marker_ = UniqueMarker();
  Ran last_;
};

// odin -p "/review-pr 12": the command's body with $1 and $ARGUMENTS, its
// !`command` run sandboxed as the user's own and recorded, the arguments one
// quoted word in it; allowed-tools narrows the message's tools at the gate.
TEST_F(OdinClaudeDefsTest, ACustomCommandExpandsRunsItsBangLinesAndNarrowsTheTools) {
  Put(".claude/commands/review-pr.md",
      "---\n"
      "description: Review a pull request\n"
      "argument-hint: [pr-number]\n"
      "allowed-tools: Read, Bash(echo:*), Bash(id:*)\n"
      "---\n"
      "Review PR #$1 carefully.\n"
      "State: !`echo state-of-$ARGUMENTS; id -u`\n");
  Put("README", "readme text\n");
  const char* script = R"({"responses":[
    {"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"touch pwned"}}]},
    {"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"echo fine"}}]},
    {"tool_calls":[{"name":"Read","arguments":{"file_path":"README"}}]},
    {"text":"Reviewed."}]})";
  {
    // Untrusted: the workspace's commands are not taken, and that is said once.
    FakeLlm llm(R"({"responses":[{"text":"Done."}]})");
    Prompt(llm, "/review-pr 12");
    std::vector<json> requests = RequestsOf(llm);
    ASSERT_EQ(requests.size(), 1u) << last_.err;
    EXPECT_EQ(UserMessage(requests[0]).find("Review PR"), std::string::npos);
    EXPECT_NE(last_.err.find("definitions (.claude/commands, agents, skills)"), std::string::npos) << last_.err;
  }
  Trust();
  FakeLlm llm(script);
  json r = Prompt(llm, "/review-pr 12");
  EXPECT_EQ(r["status"], "done") << last_.out << last_.err;
  std::vector<json> requests = RequestsOf(llm);
  ASSERT_EQ(requests.size(), 4u) << last_.err;
  std::string message = UserMessage(requests[0]);
  EXPECT_NE(message.find("Review PR #12 carefully."), std::string::npos) << message;
  EXPECT_NE(message.find("State: state-of-12"), std::string::npos) << message;
  // Only what allowed-tools names is offered...
  std::vector<std::string> tools = ToolNamesOf(requests[0]);
  EXPECT_TRUE(Contains(tools, "Read"));
  EXPECT_TRUE(Contains(tools, "ExecuteCommand"));
  EXPECT_FALSE(Contains(tools, "WriteFile"));
  EXPECT_FALSE(Contains(tools, "Grep"));
  // ...and the gate refuses the rest, whatever the model calls.
  json touch = ToolResultsOf(requests[1]).back();
  EXPECT_EQ(touch["status"], "rejected") << touch.dump();
  EXPECT_NE(touch.dump().find("not a command the tool list names"), std::string::npos) << touch.dump();
  EXPECT_FALSE(PathExists(ws_.Join("pwned")));
  EXPECT_EQ(ToolResultsOf(requests[2]).back()["status"], "ok");
  EXPECT_NE(ToolResultsOf(requests[3]).back().dump().find("readme text"), std::string::npos);
  // The !`command` is in the ledger, the user's, as it ran.
  std::vector<std::string> rows = LedgerRows(
      ws_.Join(".odin/odin.db"),
      "SELECT s.agent_id || '|' || e.status FROM execution_starts s JOIN execution_ends e USING (execution_id) "
      "WHERE s.args_json LIKE '%state-of-%'");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0], "user|ok");
}

// Arguments are data in a !`command`, wherever the author put them (bare,
// in "...", in '...'): never more shell. A failing line stops the command
// with one line, and nothing is sent; so does one outside the command's
// own allowed-tools.
TEST_F(OdinClaudeDefsTest, ArgumentsCannotInjectIntoBangLinesAndAFailingLineSendsNothing) {
  Put(".claude/commands/echo-it.md", "Said: !`echo $ARGUMENTS`\n");
  Put(".claude/commands/dq.md", "Search: !`echo \"dq=$ARGUMENTS\"`\n");
  Put(".claude/commands/sq.md", "Said: !`echo 'sq=$1'`\n");
  Put(".claude/commands/narrow.md", "---\nallowed-tools: Bash(echo:*)\n---\nX !`touch pwn_narrow`\n");
  Put(".claude/commands/leak.md", "Log: !`echo @private.txt`\n");
  Put("private.txt", "secret-payroll\n");
  Put(".claude/commands/broken.md", "Before !`echo one; exit 3` after\n");
  Trust();
  {
    FakeLlm llm(R"({"responses":[{"text":"Done."}]})");
    Prompt(llm, "/echo-it x; touch pwned");
    std::vector<json> requests = RequestsOf(llm);
    ASSERT_EQ(requests.size(), 1u) << last_.err;
    EXPECT_NE(UserMessage(requests[0]).find("Said: x; touch pwned"), std::string::npos) << UserMessage(requests[0]);
    EXPECT_FALSE(PathExists(ws_.Join("pwned")));
  }
  for (const char* typed : {"/dq $(touch pwn_dq)", "/dq `touch pwn_dq`", "/sq x';touch pwn_sq;'"}) {
    FakeLlm llm(R"({"responses":[{"text":"Done."}]})");
    Prompt(llm, typed);
    ASSERT_EQ(RequestsOf(llm).size(), 1u) << typed << ": " << last_.err;
    EXPECT_FALSE(PathExists(ws_.Join("pwn_dq"))) << typed;
    EXPECT_FALSE(PathExists(ws_.Join("pwn_sq"))) << typed;
  }
  {
    // What a !`command` prints is not scanned for @path.
    FakeLlm llm(R"({"responses":[{"text":"Done."}]})");
    Prompt(llm, "/leak");
    ASSERT_EQ(RequestsOf(llm).size(), 1u) << last_.err;
    EXPECT_NE(UserMessage(RequestsOf(llm)[0]).find("Log: @private.txt"), std::string::npos);
    EXPECT_EQ(UserMessage(RequestsOf(llm)[0]).find("secret-payroll"), std::string::npos);
  }
  {
    FakeLlm llm(R"({"responses":[{"text":"Done."}]})");
    Prompt(llm, "/narrow");
    EXPECT_TRUE(RequestsOf(llm).empty());
    EXPECT_FALSE(PathExists(ws_.Join("pwn_narrow")));
    EXPECT_NE(last_.err.find("not a command the tool list names"), std::string::npos) << last_.err;
  }
  FakeLlm llm(R"({"responses":[{"text":"Done."}]})");
  Prompt(llm, "/broken");
  EXPECT_NE(last_.exit_code, 0);
  EXPECT_TRUE(RequestsOf(llm).empty());
  EXPECT_NE(last_.err.find("odin: /broken: `echo one; exit 3`"), std::string::npos) << last_.err;
  EXPECT_NE(last_.err.find("nothing was sent"), std::string::npos) << last_.err;
}

// A custom agent: the model picks it by name through AgentTool; its body
// leads the subagent's system prompt, and its tools list is the gate's.
TEST_F(OdinClaudeDefsTest, ACustomAgentsPromptIsItsBodyAndItsToolsAreEnforced) {
  Put(".claude/agents/reviewer.md",
      "---\n"
      "name: reviewer\n"
      "description: Reviews code for bugs\n"
      "tools: Read, Grep\n"
      "model: opus\n"
      "permissionMode: bypassPermissions\n"
      "---\n"
      "You are a meticulous reviewer-5c1d. Never edit.\n");
  Put("README", "readme text\n");
  Trust();
  json script = {
      {"responses",
       {Turn({Call("AgentTool", {{"prompt", "review README"}, {"subagent_type", "reviewer"}})}), Text("Done.")}},
      {"by_system",
       {{"reviewer-5c1d", json::array({Turn({Call("ExecuteCommand", {{"command", "touch pwned"}})}),
                                       Turn({Call("WriteFile", {{"file_path", "x.txt"}, {"content", "x"}})}),
                                       Turn({Call("Read", {{"file_path", "README"}})}), Text("README is fine.")})}}}};
  FakeLlm llm(script.dump());
  json r = Prompt(llm, "review the readme");
  EXPECT_EQ(r["status"], "done") << last_.out << last_.err;
  std::vector<json> requests = RequestsOf(llm);
  // The parent's first request offers the agent by name.
  std::string agent_tool;
  for (const json& t : requests[0]["body"]["tools"]) {
    if (t["function"]["name"] == "AgentTool") agent_tool = t.dump();
  }
  EXPECT_NE(agent_tool.find("\"enum\":[\"reviewer\"]"), std::string::npos) << agent_tool;
  EXPECT_NE(agent_tool.find("reviewer: Reviews code for bugs"), std::string::npos) << agent_tool;
  std::vector<json> sub;
  for (const json& q : requests) {
    if (SystemPrompt(q).find("reviewer-5c1d") != std::string::npos) sub.push_back(q);
  }
  ASSERT_EQ(sub.size(), 4u) << last_.err;
  EXPECT_EQ(SystemPrompt(sub[0]).find("You are the reviewer agent"), 1u) << SystemPrompt(sub[0]);
  std::vector<std::string> tools = ToolNamesOf(sub[0]);
  EXPECT_TRUE(Contains(tools, "Read"));
  EXPECT_TRUE(Contains(tools, "Grep"));
  EXPECT_FALSE(Contains(tools, "ExecuteCommand"));
  EXPECT_FALSE(Contains(tools, "WriteFile"));
  for (int i : {1, 2}) {
    json refused = ToolResultsOf(sub[i]).back();
    EXPECT_EQ(refused["status"], "rejected") << refused.dump();
    EXPECT_NE(refused.dump().find("is not in the tool list (Read, Grep)"), std::string::npos) << refused.dump();
  }
  EXPECT_FALSE(PathExists(ws_.Join("pwned")));
  EXPECT_FALSE(PathExists(ws_.Join("x.txt")));
  EXPECT_NE(ToolResultsOf(sub[3]).back().dump().find("readme text"), std::string::npos);
  // A type nobody defined is an error the model reads, naming the ones there are.
  FakeLlm other(
      json{{"responses", {Turn({Call("AgentTool", {{"prompt", "x"}, {"subagent_type", "admin"}})}), Text("Done.")}}}
          .dump());
  Prompt(other, "go");
  std::vector<json> again = RequestsOf(other);
  ASSERT_EQ(again.size(), 2u) << last_.err;
  EXPECT_NE(ToolResultsOf(again[1]).back().dump().find("no agent type 'admin' (reviewer)"), std::string::npos)
      << ToolResultsOf(again[1]).back().dump();
}

// Skills: named and described in the system prompt, loaded on demand by
// the read-only Skill tool (in ask mode too) with the names of their files.
TEST_F(OdinClaudeDefsTest, SkillsAreListedAndLoadedOnDemand) {
  Put(".claude/skills/release/SKILL.md",
      "---\nname: release\ndescription: Cut a release of this project\n---\nBump with scripts/bump.sh, "
      "then tag-8e2b.\n");
  Put(".claude/skills/release/scripts/bump.sh", "#!/bin/sh\necho bumped\n");
  Trust();
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"Skill","arguments":{"skill":"release"}}]},
    {"tool_calls":[{"name":"Skill","arguments":{"skill":"nope"}}]},
    {"text":"Done."}]})");
  last_ = RunOdin(ws_.path(), {"-p", "cut a release", "--output-format", "json", "--mode", "ask"}, Env(llm));
  std::vector<json> requests = RequestsOf(llm);
  ASSERT_EQ(requests.size(), 3u) << last_.err;
  std::string system = SystemPrompt(requests[0]);
  EXPECT_NE(system.find("- release: Cut a release of this project"), std::string::npos) << system;
  EXPECT_EQ(system.find("tag-8e2b"), std::string::npos) << "the body is loaded on demand only";
  EXPECT_TRUE(Contains(ToolNamesOf(requests[0]), "Skill"));
  json loaded = ToolResultsOf(requests[1]).back();
  EXPECT_EQ(loaded["status"], "ok") << loaded.dump();
  EXPECT_NE(loaded.dump().find("tag-8e2b"), std::string::npos) << loaded.dump();
  EXPECT_NE(loaded.dump().find(".claude/skills/release/scripts/bump.sh"), std::string::npos) << loaded.dump();
  json missing = ToolResultsOf(requests[2]).back();
  EXPECT_NE(missing.dump().find("no skill named 'nope' (skills: release)"), std::string::npos) << missing.dump();
  // A skill is a slash command too, as in Claude Code.
  FakeLlm typed(R"({"responses":[{"text":"Done."}]})");
  Prompt(typed, "/release 1.2.0");
  ASSERT_EQ(RequestsOf(typed).size(), 1u) << last_.err;
  std::string message = UserMessage(RequestsOf(typed)[0]);
  EXPECT_NE(message.find("then tag-8e2b."), std::string::npos) << message;
  EXPECT_NE(message.find("ARGUMENTS: 1.2.0"), std::string::npos) << message;
  EXPECT_NE(message.find("- scripts/bump.sh"), std::string::npos) << message;
  // No skills: no Skill tool offered.
  FakeLlm bare(R"({"responses":[{"text":"Done."}]})");
  TempWorkspace plain;
  last_ = RunOdin(plain.path(), {"-p", "hi", "--output-format", "json"}, Env(bare));
  ASSERT_EQ(RequestsOf(bare).size(), 1u) << last_.err;
  EXPECT_FALSE(Contains(ToolNamesOf(RequestsOf(bare)[0]), "Skill"));
}

// Real definitions, as their authors wrote them for Claude Code (wshobson's
// agents, MIT, vendored unchanged under tests/third_party): the command
// expands, the agents are offered by name, the skill is listed, and an
// agent's tools (Read, Glob, Grep, Bash and tools Odin lacks) narrow its
// subagent to what Odin has of them.
TEST_F(OdinClaudeDefsTest, RealPublishedAgentsCommandsAndSkillsWork) {
  ASSERT_EQ(system(("cp -r '" + std::string(ODIN_SOURCE_DIR) + "/tests/third_party/wshobson-agents/.claude' '" +
                    ws_.path() + "/'")
                       .c_str()),
            0);
  Trust();
  json script = {
      {"responses",
       {Turn({Call("AgentTool", {{"prompt", "review src for security"}, {"subagent_type", "team-reviewer"}})}),
        Text("Done.")}},
      {"by_system",
       {{"focused on one assigned review dimension",
         json::array({Turn({Call("WriteFile", {{"file_path", "x.txt"}, {"content", "x"}})}), Text("No findings.")})}}}};
  FakeLlm llm(script.dump());
  json r = Prompt(llm, "/team-review src --reviewers security");
  EXPECT_EQ(r["status"], "done") << last_.out << last_.err;
  EXPECT_EQ(last_.err.find("not taken"), std::string::npos) << last_.err;
  std::vector<json> requests = RequestsOf(llm);
  ASSERT_GE(requests.size(), 3u) << last_.err;
  std::string message = UserMessage(requests[0]);
  EXPECT_NE(message.find("Orchestrate a multi-reviewer parallel code review"), std::string::npos) << message;
  EXPECT_NE(message.find("src --reviewers security"), std::string::npos) << message;
  std::string tools = requests[0]["body"]["tools"].dump();
  EXPECT_NE(tools.find("\"team-reviewer\""), std::string::npos);
  EXPECT_NE(tools.find("\"api-scaffolding-backend-architect\""), std::string::npos);
  EXPECT_NE(tools.find("\"multi-reviewer-patterns\""), std::string::npos);
  EXPECT_NE(SystemPrompt(requests[0]).find("- multi-reviewer-patterns: Coordinate parallel code reviews"),
            std::string::npos);
  std::vector<json> sub;
  for (const json& q : requests) {
    if (SystemPrompt(q).find("You are the team-reviewer agent") != std::string::npos) sub.push_back(q);
  }
  ASSERT_EQ(sub.size(), 2u) << last_.err;
  std::vector<std::string> offered = ToolNamesOf(sub[0]);
  for (const char* tool : {"Read", "Glob", "Grep", "ExecuteCommand"}) EXPECT_TRUE(Contains(offered, tool)) << tool;
  EXPECT_FALSE(Contains(offered, "WriteFile"));
  EXPECT_EQ(ToolResultsOf(sub[1]).back()["status"], "rejected");
  EXPECT_FALSE(PathExists(ws_.Join("x.txt")));
}

// A tool list holds on every way a call can take: a path through a link
// is judged where it leads, a command's redirection or a program named by
// another path is outside, a model-written batch check carries the list,
// and a BOM does not turn the frontmatter off.
TEST_F(OdinClaudeDefsTest, AToolListHoldsThroughLinksRedirectionsPathsAndPlanChecks) {
  Put(".claude/commands/docs.md",
      "\xEF\xBB\xBF---\nallowed-tools: Read(docs/**), Write(src/**), Bash(echo:*), Bash(git status:*)\n---\nGo.\n");
  Put("private.txt", "secret-payroll\n");
  Put("docs/readme.md", "docs text\n");
  Put("src/keep.c", "int x;\n");
  Put("git", "#!/bin/sh\ntouch pwn_fakegit\n");
  chmod(ws_.Join("git").c_str(), 0755);
  ASSERT_EQ(symlink("../private.txt", ws_.Join("docs/p.md").c_str()), 0);
  ASSERT_EQ(symlink("..", ws_.Join("src/up").c_str()), 0);
  Trust();
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"Read","arguments":{"file_path":"docs/p.md"}}]},
    {"tool_calls":[{"name":"WriteFile","arguments":{"file_path":"src/up/pwn_w.txt","content":"x"}}]},
    {"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"echo hi > pwn_redirect"}}]},
    {"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"./git status"}}]},
    {"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"PATH=.:$PATH git status"}}]},
    {"tool_calls":[{"name":"Read","arguments":{"file_path":"docs/readme.md"}}]},
    {"text":"Done."}]})");
  json r = Prompt(llm, "/docs");
  std::vector<json> requests = RequestsOf(llm);
  ASSERT_EQ(requests.size(), 7u) << last_.err;
  EXPECT_EQ(SystemPrompt(requests[0]).find("allowed-tools"), std::string::npos);
  EXPECT_EQ(UserMessage(requests[0]).find("allowed-tools"), std::string::npos) << UserMessage(requests[0]);
  EXPECT_FALSE(Contains(ToolNamesOf(requests[0]), "Grep"));
  for (int i = 1; i <= 5; ++i) {
    json refused = ToolResultsOf(requests[i]).back();
    EXPECT_EQ(refused["status"], "rejected") << i << ": " << refused.dump();
    EXPECT_EQ(refused.dump().find("secret-payroll"), std::string::npos);
  }
  EXPECT_NE(ToolResultsOf(requests[6]).back().dump().find("docs text"), std::string::npos);
  for (const char* pwn : {"pwn_w.txt", "pwn_redirect", "pwn_fakegit"}) EXPECT_FALSE(PathExists(ws_.Join(pwn))) << pwn;
}

// A model-written check (a batch step's) runs under the message's tool
// list too: plan_update cannot carry a command the list leaves out.
TEST_F(OdinClaudeDefsTest, ABatchStepsCheckMeetsTheCommandsToolList) {
  Put(".claude/commands/docs2.md", "---\nallowed-tools: Read, Write(docs/**)\n---\nWrite the docs.\n");
  Trust();
  json by_system = PassingReviewers();
  json plan = {{"intent", "write the docs"},
               {"acceptance_criteria", {"docs/a.md exists"}},
               {"steps", {{{"text", "write docs/a.md"}, {"files", {"docs/a.md"}}, {"check", "touch pwn_pu"}}}},
               {"workflow", "batch"}};
  by_system["You are Odin's hydrator"] = {{"text", plan.dump()}};
  json responses = {Turn({Call("WriteFile", {{"file_path", "docs/a.md"}, {"content", "a\n"}})})};
  for (int i = 0; i < 6; ++i) responses.push_back(Text("done"));
  FakeLlm llm(json({{"responses", responses}, {"by_system", by_system}}).dump());
  last_ = RunOdin(ws_.path(), {"-p", "/docs2", "--output-format", "json", "--workflow", "batch"}, Env(llm));
  EXPECT_TRUE(PathExists(ws_.Join("docs/a.md"))) << last_.err;
  EXPECT_FALSE(PathExists(ws_.Join("pwn_pu"))) << last_.out;
  std::vector<std::string> refused = LedgerRows(
      ws_.Join(".odin/odin.db"),
      "SELECT e.status FROM execution_starts s JOIN execution_ends e USING (execution_id) WHERE s.args_json LIKE "
      "'%pwn_pu%'");
  ASSERT_FALSE(refused.empty()) << last_.out << last_.err;
  for (const std::string& status : refused) EXPECT_EQ(status, "rejected");
}

// Odin's own checks run under a command's allowed-tools only where it names
// them: a list without commands cannot be turned into one by writing a
// Makefile whose test target the completion would run.
TEST_F(OdinClaudeDefsTest, ChecksTheToolListDoesNotNameAreSkippedAndSaidSo) {
  Put(".claude/commands/write-only.md", "---\nallowed-tools: Read, Write\n---\nWrite it.\n");
  Trust();
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"touch pwned_direct"}}]},
    {"tool_calls":[{"name":"WriteFile","arguments":{"file_path":"Makefile","content":"test:\n\ttouch pwned_make\n"}}]},
    {"text":"Done."}]})");
  json r = Prompt(llm, "/write-only");
  EXPECT_EQ(r["status"], "done") << last_.out << last_.err;
  EXPECT_TRUE(PathExists(ws_.Join("Makefile")));
  EXPECT_FALSE(PathExists(ws_.Join("pwned_direct")));
  EXPECT_FALSE(PathExists(ws_.Join("pwned_make")));
  std::vector<std::string> skipped =
      LedgerRows(ws_.Join(".odin/odin.db"),
                 "SELECT json_extract(detail_json, '$.command') FROM gate_events WHERE kind = 'check' AND "
                 "json_extract(detail_json, '$.status') = 'skipped'");
  EXPECT_FALSE(skipped.empty()) << last_.out;
}

}  // namespace
}  // namespace odin::testing
