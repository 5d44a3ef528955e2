// Approvals that stick, end to end through the real odin: an interactive
// "always" answer is saved in the user's config directory, answers the same
// call in the next session (headless too), is listed and revoked by `odin
// permissions`, and never outranks a deny rule or the mode; a command with
// substitutions is never offered "always".

#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "tests/ledger_rows.h"
#include "tests/llm_requests.h"
#include "tests/test_util.h"

namespace odin::testing {
namespace {

using nlohmann::json;

class OdinPermissionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(MakeDirs(ws_.Join(".git")).ok());
    ASSERT_TRUE(MakeDirs(user_.Join("config/odin")).ok());
    UserConfig(json::object());
  }
  void TearDown() override {
    EXPECT_TRUE(ProcessesLeftWithEnv("ODIN_TEST_MARK", marker_).empty()) << "processes left behind";
  }
  // The user's config: no checks, an ask rule for echo, and more.
  void UserConfig(const json& permissions) {
    json p = {{"ask", {"echo*"}}};
    if (permissions.is_object()) p.update(permissions);
    ASSERT_TRUE(
        WriteFileAtomic(user_.Join("config/odin/odinconfig.json"),
                        json({{"checks", {{"build", ""}, {"lint", ""}, {"tests", ""}}}, {"permissions", p}}).dump())
            .ok());
  }
  std::map<std::string, std::string> Env(const FakeLlm& llm) { return FakeModelEnv(llm, marker_, user_); }
  Ran Odin(const std::vector<std::string>& args, const std::map<std::string, std::string>& env) {
    return RunOdin(ws_.path(), args, env);
  }
  // The approval gate events of the ledger, oldest first.
  std::vector<std::string> Approvals() {
    return LedgerRows(ws_.Join(".odin/odin.db"),
                      "SELECT detail_json FROM gate_events WHERE kind = 'approval' ORDER BY created_at_ms, rowid");
  }
  static json Echo(const std::string& what) { return Turn({Call("ExecuteCommand", {{"command", "echo " + what}})}); }

  TempWorkspace ws_;
  TempWorkspace user_;  // XDG_CONFIG_HOME and XDG_STATE_HOME
  std::string marker_ = UniqueMarker();
};

TEST_F(OdinPermissionsTest, AlwaysSurvivesIntoTheNextSessionUntilRemoved) {
  // Session 1, interactive: "A" for one command; the one with a
  // substitution is offered only once and the session.
  ASSERT_TRUE(MakeDirs(ws_.Join("sub")).ok());
  FakeLlm first(json({{"responses",
                       {Echo("saved-one"), Turn({Call("ExecuteCommand", {{"command", "echo in-sub"}, {"cwd", "sub"}})}),
                        Echo("$(id -u)"), Text("done")}}})
                    .dump());
  int in = -1, out = -1;
  pid_t pid = StartOdinPiped(ws_.path(), {}, &in, &out, Env(first));
  auto say = [in](const std::string& line) {
    std::string l = line + "\n";
    ASSERT_EQ(write(in, l.data(), l.size()), static_cast<ssize_t>(l.size()));
  };
  say("run them");
  // (ReadUntil may read past what it waits for: each waits for the end of
  // what is asked.)
  std::string seen = ReadUntil(out, "odin permissions lists and removes it)\n");
  EXPECT_NE(seen.find("[A] always"), std::string::npos) << seen;
  EXPECT_NE(seen.find("the command `echo saved-one`"), std::string::npos) << seen;
  say("A");
  // Run from another directory: the same text elsewhere is another command.
  seen = ReadUntil(out, "[n] no\n");
  EXPECT_NE(seen.find("allowed always (saved)"), std::string::npos) << seen;
  EXPECT_NE(seen.find("`echo in-sub`"), std::string::npos) << seen;
  EXPECT_EQ(seen.find("[A] always", seen.find("`echo in-sub`")), std::string::npos)
      << "offered always for a command run elsewhere: " << seen;
  say("y");
  seen = ReadUntil(out, "[n] no\n");
  EXPECT_NE(seen.find("`echo $(id -u)`"), std::string::npos) << seen;
  EXPECT_EQ(seen.find("[A] always", seen.find("`echo $(id -u)`")), std::string::npos)
      << "offered always for a substitution: " << seen;
  say("A");  // taken as the session
  seen = ReadUntil(out, "── Odin report");
  EXPECT_NE(seen.find("allowed for this session"), std::string::npos) << seen;
  close(in);
  ReadUntil(out, "(the end)");
  close(out);
  EXPECT_EQ(Wait(pid), 0);
  std::string store = *ReadFileToString(user_.Join("config/odin/approvals.json"));
  json saved = json::parse(store);
  ASSERT_EQ(saved["approvals"].size(), 1u) << store;
  EXPECT_EQ(saved["approvals"][0]["key"], "command:echo saved-one");
  EXPECT_FALSE(saved["approvals"][0].contains("workspace"));
  EXPECT_FALSE(PathExists(ws_.Join(".odin/approvals.json")));

  // Session 2, headless with approval deny: the saved one runs, another
  // echo is refused.
  FakeLlm second(json({{"responses", {Echo("saved-one"), Echo("other"), Text("done")}}}).dump());
  Ran r = Odin({"-p", "again", "--output-format", "json"}, Env(second));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> approvals = Approvals();
  ASSERT_GE(approvals.size(), 2u);
  EXPECT_NE(approvals[approvals.size() - 2].find("allowed by a saved approval"), std::string::npos)
      << approvals[approvals.size() - 2];
  EXPECT_NE(approvals.back().find("denied by policy"), std::string::npos) << approvals.back();

  // Listed, with what it allows and where; doctor shows it; removed by number.
  Ran list = Odin({"permissions", "list"}, Env(second));
  EXPECT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find("  1. the command `echo saved-one`"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("every workspace"), std::string::npos) << list.out;
  Ran doctor = Odin({"doctor", "--json"}, Env(second));
  json d = json::parse(doctor.out, nullptr, false);
  ASSERT_FALSE(d.is_discarded()) << doctor.out << doctor.err;
  ASSERT_EQ(d["saved_approvals"].size(), 1u);
  EXPECT_EQ(d["saved_approvals"][0]["key"], "command:echo saved-one");
  Ran remove = Odin({"permissions", "remove", "1"}, Env(second));
  EXPECT_EQ(remove.exit_code, 0) << remove.err;
  EXPECT_NE(remove.out.find("removed: the command `echo saved-one`"), std::string::npos) << remove.out;
  Ran again = Odin({"permissions", "remove", "1"}, Env(second));
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_EQ(std::count(again.err.begin(), again.err.end(), '\n'), 1) << again.err;

  // Session 3: revoked, so refused again.
  FakeLlm third(json({{"responses", {Echo("saved-one"), Text("done")}}}).dump());
  ASSERT_EQ(Odin({"-p", "once more"}, Env(third)).exit_code, 0);
  EXPECT_NE(Approvals().back().find("denied by policy"), std::string::npos) << Approvals().back();
}

// Where no rule could judge the whole call, "always" is never offered: a
// command whose program's words come from its input (a deny rule may match
// them), and a read outside the workspace.
TEST_F(OdinPermissionsTest, AlwaysIsNotOfferedWhereNoRuleCouldJudgeTheWholeCall) {
  UserConfig({{"deny", {"git push"}}});
  TempWorkspace outside;
  ASSERT_TRUE(WriteFileAtomic(outside.Join("notes.txt"), "outside\n").ok());
  FakeLlm llm(json({{"responses",
                     {Turn({Call("ExecuteCommand", {{"command", "echo push | xargs git"}})}),
                      Turn({Call("Read", {{"file_path", outside.Join("notes.txt")}})}), Text("done")}}})
                  .dump());
  int in = -1, out = -1;
  pid_t pid = StartOdinPiped(ws_.path(), {}, &in, &out, Env(llm));
  auto say = [in](const std::string& line) {
    std::string l = line + "\n";
    ASSERT_EQ(write(in, l.data(), l.size()), static_cast<ssize_t>(l.size()));
  };
  say("go");
  std::string seen = ReadUntil(out, "[n] no\n");
  EXPECT_NE(seen.find("xargs git"), std::string::npos) << seen;
  EXPECT_EQ(seen.find("[A] always"), std::string::npos) << "offered always for words known only at run time: " << seen;
  EXPECT_EQ(seen.find("[w] always"), std::string::npos) << seen;
  say("n");
  seen = ReadUntil(out, "[n] no\n");
  EXPECT_NE(seen.find("notes.txt"), std::string::npos) << seen;
  EXPECT_EQ(seen.find("[A] always"), std::string::npos) << "offered always for a read outside: " << seen;
  say("A");  // taken as the session
  seen = ReadUntil(out, "── Odin report");
  close(in);
  ReadUntil(out, "(the end)");
  close(out);
  EXPECT_EQ(Wait(pid), 0);
  EXPECT_FALSE(PathExists(user_.Join("config/odin/approvals.json")));
}

// A hook's "ask" is the hook's question, judged by no rule: "always" is
// never offered for it.
TEST_F(OdinPermissionsTest, AHooksAskIsNeverOfferedAlways) {
  std::string script = user_.Join("ask.sh");
  ASSERT_TRUE(WriteFileAtomic(script,
                              "#!/bin/sh\ncat >/dev/null\necho '{\"hookSpecificOutput\": "
                              "{\"hookEventName\": \"PreToolUse\", \"permissionDecision\": \"ask\", "
                              "\"permissionDecisionReason\": \"the hook wants a look\"}}'\n")
                  .ok());
  ASSERT_EQ(chmod(script.c_str(), 0755), 0);
  json hooks = {{"PreToolUse", {{{"matcher", "*"}, {"hooks", {{{"type", "command"}, {"command", script}}}}}}}};
  ASSERT_TRUE(WriteFileAtomic(user_.Join("config/odin/odinconfig.json"),
                              json({{"checks", {{"build", ""}, {"lint", ""}, {"tests", ""}}}, {"hooks", hooks}}).dump())
                  .ok());
  FakeLlm llm(json({{"responses", {Turn({Call("ExecuteCommand", {{"command", "true"}})}), Text("done")}}}).dump());
  int in = -1, out = -1;
  pid_t pid = StartOdinPiped(ws_.path(), {}, &in, &out, Env(llm));
  auto say = [in](const std::string& line) {
    std::string l = line + "\n";
    ASSERT_EQ(write(in, l.data(), l.size()), static_cast<ssize_t>(l.size()));
  };
  say("go");
  std::string seen = ReadUntil(out, "[n] no\n");
  EXPECT_NE(seen.find("the hook wants a look"), std::string::npos) << seen;
  EXPECT_EQ(seen.find("[A] always"), std::string::npos) << "offered always for a hook's question: " << seen;
  EXPECT_EQ(seen.find("[w] always"), std::string::npos) << seen;
  say("A");  // taken as the session
  ReadUntil(out, "── Odin report");
  close(in);
  ReadUntil(out, "(the end)");
  close(out);
  EXPECT_EQ(Wait(pid), 0);
  EXPECT_FALSE(PathExists(user_.Join("config/odin/approvals.json")));
}

// A saved approval answers only what the rules left to ask: a deny rule
// added later refuses the same command, and ask mode still refuses a write.
TEST_F(OdinPermissionsTest, ASavedApprovalNeverOutranksADenyRuleOrTheMode) {
  ASSERT_TRUE(WriteFileAtomic(user_.Join("config/odin/approvals.json"),
                              R"({"version": 1, "approvals": [{"key": "command:echo saved-one"},
                                  {"key": "command:touch made.txt"}]})")
                  .ok());
  ASSERT_EQ(chmod(user_.Join("config/odin/approvals.json").c_str(), 0600), 0);
  UserConfig({{"deny", {"echo saved*"}}, {"ask", {"echo*", "touch*"}}});
  FakeLlm llm(
      json({{"responses",
             {Echo("saved-one"), Turn({Call("ExecuteCommand", {{"command", "touch made.txt"}})}), Text("done")}}})
          .dump());
  Ran r = Odin({"-p", "try", "--mode", "ask", "--output-format", "json"}, Env(llm));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<json> requests = ScriptRequestsOf(llm);
  ASSERT_EQ(requests.size(), 3u);
  std::string first = LastMessageOf(requests[1]).dump(), second = LastMessageOf(requests[2]).dump();
  EXPECT_NE(first.find("permissions.deny"), std::string::npos) << first;
  // The saved approval answered the ask rule's question; ask mode's
  // read-only view still held.
  EXPECT_NE(second.find("Read-only file system"), std::string::npos) << second;
  EXPECT_NE(Approvals().back().find("allowed by a saved approval"), std::string::npos) << Approvals().back();
  EXPECT_FALSE(PathExists(ws_.Join("made.txt")));
  // The store is the user's: a workspace's own approvals.json is nothing.
  EXPECT_FALSE(PathExists(ws_.Join(".odin/approvals.json")));
}

}  // namespace
}  // namespace odin::testing
