// The interactive terminal as a person uses it: odin runs in tmux, keys are
// typed with send-keys, the screen is read with capture-pane. Line editing,
// history across sessions, completion, a pasted block, markdown and diffs,
// NO_COLOR, Esc, !command and /init's question; and a pipe for plain text.

#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "tests/ledger_rows.h"
#include "tests/llm_requests.h"
#include "tests/test_util.h"
#include "tests/tmux.h"

namespace odin::testing {
namespace {

using nlohmann::json;

class OdinTerminalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (system("command -v tmux >/dev/null 2>&1") != 0) {
      GTEST_SKIP() << "tmux is not installed (scripts/install-deps.sh installs it): no terminal to drive";
    }
  }
  void TearDown() override {
    EXPECT_TRUE(ProcessesLeftWithEnv("ODIN_TEST_MARK", marker_).empty()) << "processes left behind";
  }
  std::map<std::string, std::string> Env(const FakeLlm& llm, std::map<std::string, std::string> more = {}) {
    std::map<std::string, std::string> env = FakeModelEnv(llm, marker_, user_);
    env["TERM"] = "xterm-256color";
    env["LANG"] = "C.UTF-8";
    env["NO_COLOR"] = "";
    for (auto& [k, v] : more) env[k] = v;
    return env;
  }
  // The user messages the model received, in order.
  static std::vector<std::string> UserMessages(const FakeLlm& llm) {
    std::vector<std::string> out;
    for (const json& r : RequestsOf(llm)) out.push_back(LastMessageOf(r)["content"]);
    return out;
  }
  std::vector<std::string> Rows(const std::string& sql) { return LedgerRows(ws_.Join(".odin/odin.db"), sql); }

  TempWorkspace ws_;
  TempWorkspace user_;
  TempWorkspace tmp_;
  std::string marker_ = UniqueMarker();
};

// Editing keys, tab completion of commands and paths, a pasted block that
// arrives as one message, a line continued by a backslash; then, in a second
// session of the same workspace, the history brings the last message back.
TEST_F(OdinTerminalTest, LineEditingCompletionPasteAndHistoryAcrossSessions) {
  ASSERT_TRUE(MakeDirs(ws_.Join("src")).ok());
  ASSERT_TRUE(WriteFileAtomic(ws_.Join("src/main.c"), "int main(void) { return 0; }\n").ok());
  FakeLlm llm(R"({"responses":[{"text":"Noted one."},{"text":"Noted two."},{"text":"Noted three."},
                              {"text":"Noted four."},{"text":"Noted five."}]})");
  {
    Tmux t(tmp_.path(), ws_.path(), Env(llm));
    ASSERT_TRUE(t.WaitFor("edit>")) << t.Screen();
    t.Type("hello wrld");
    t.Keys({"Left", "Left", "Left", "o", "Enter"});
    ASSERT_TRUE(t.WaitFor("Noted one.")) << t.Screen();
    t.Type("/he");
    t.Keys({"Tab"});
    ASSERT_TRUE(t.WaitFor("edit> /help")) << t.Screen();
    t.Keys({"Enter"});
    ASSERT_TRUE(t.WaitFor("/compact [FOCUS]")) << t.Screen();
    t.Type("read @src/ma");
    t.Keys({"Tab"});
    ASSERT_TRUE(t.WaitFor("edit> read @src/main.c")) << t.Screen();
    t.Keys({"Enter"});
    ASSERT_TRUE(t.WaitFor("Noted two.")) << t.Screen();
    t.Paste("line one\nline two\nline three\n", tmp_.path());
    ASSERT_TRUE(t.WaitFor("[pasted 3 lines #1]")) << t.Screen();
    t.Keys({"Enter"});
    ASSERT_TRUE(t.WaitFor("Noted three.")) << t.Screen();
    t.TypeLine("first part \\");
    t.TypeLine("second part");
    ASSERT_TRUE(t.WaitFor("Noted four.")) << t.Screen();
    t.Keys({"C-d"});
    ASSERT_TRUE(WaitUntil([&] { return !t.Alive(); })) << t.Screen();
  }
  // A file name with control characters is never offered: completing it
  // would write them to the terminal.
  ASSERT_TRUE(WriteFileAtomic(ws_.Join("zz\033[2Jred"), "x").ok());
  ASSERT_TRUE(WriteFileAtomic(ws_.Join("zz-plain.txt"), "x").ok());
  {
    Tmux t(tmp_.path(), ws_.path(), Env(llm));
    ASSERT_TRUE(t.WaitFor("edit>")) << t.Screen();
    t.Type("@zz");
    t.Keys({"Tab"});
    ASSERT_TRUE(t.WaitFor("edit> @zz-plain.txt")) << t.Screen();
    t.Keys({"C-u", "Up", "Enter"});
    ASSERT_TRUE(t.WaitFor("Noted five.")) << t.Screen();
    t.Keys({"C-d"});
    ASSERT_TRUE(WaitUntil([&] { return !t.Alive(); })) << t.Screen();
  }
  std::vector<std::string> messages = UserMessages(llm);
  ASSERT_EQ(messages.size(), 5u);
  EXPECT_EQ(messages[0], "hello world");
  EXPECT_NE(messages[1].find("<file path=\"src/main.c\">\nint main(void) { return 0; }\n</file>"), std::string::npos)
      << messages[1];
  EXPECT_EQ(messages[2], "line one\nline two\nline three");
  EXPECT_EQ(messages[3], "first part \nsecond part");
  EXPECT_EQ(messages[4], messages[3]) << "the history of the workspace's last session";
}

// A change is shown as a diff with its validation beside it; the model's
// markdown table is drawn; colour is on, and NO_COLOR turns it off.
TEST_F(OdinTerminalTest, DiffsAndMarkdownAreRenderedAndNoColorTurnsColourOff) {
  std::string script = json({{"responses",
                              {Turn({Call("WriteFile", {{"file_path", "notes.txt"}, {"content", "alpha\nbeta\n"}})}),
                               Text("| name | value |\n|---|---|\n| alpha | 1 |\n\nAll **done**.\n")}}})
                           .dump();
  for (bool no_color : {false, true}) {
    SCOPED_TRACE(no_color ? "NO_COLOR" : "colour");
    FakeLlm llm(script);
    ASSERT_EQ(unlink(ws_.Join("notes.txt").c_str()) == 0 || errno == ENOENT, true);
    Tmux t(tmp_.path(), ws_.path(), Env(llm, {{"NO_COLOR", no_color ? "1" : ""}}));
    ASSERT_TRUE(t.WaitFor("edit>")) << t.Screen();
    t.TypeLine("write the notes");
    ASSERT_TRUE(t.WaitFor("Status: done")) << t.Screen();
    std::string screen = t.Screen();
    EXPECT_NE(screen.find("+alpha"), std::string::npos) << screen;
    EXPECT_NE(screen.find("+beta"), std::string::npos) << screen;
    EXPECT_NE(screen.find("alpha │ 1"), std::string::npos) << screen;
    EXPECT_NE(screen.find("──────┼──────"), std::string::npos) << screen;
    EXPECT_NE(screen.find("• validation: no_validator"), std::string::npos) << screen;
    EXPECT_EQ(screen.find("| alpha |"), std::string::npos) << "the table is drawn, not printed raw";
    std::string raw = t.Screen(true);
    bool coloured = raw.find("\033[32m") != std::string::npos || raw.find("\033[1m") != std::string::npos;
    EXPECT_EQ(coloured, !no_color) << raw;
    t.Keys({"C-d"});
    ASSERT_TRUE(WaitUntil([&] { return !t.Alive(); })) << t.Screen();
  }
}

// Esc alone interrupts the running turn (the command is cancelled);
// !command runs the user's own command in the sandbox, recorded.
TEST_F(OdinTerminalTest, EscInterruptsACommandAndBangRunsTheUsersOwnCommandSandboxed) {
  FakeLlm llm(R"({"responses":[{"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"sleep 60"}}]},
                              {"text":"never"}]})");
  Tmux t(tmp_.path(), ws_.path(), Env(llm));
  ASSERT_TRUE(t.WaitFor("edit>")) << t.Screen();
  t.TypeLine("wait a minute");
  ASSERT_TRUE(t.WaitFor("ExecuteCommand 1s")) << t.Screen();  // the status line names it
  t.Keys({"Escape"});
  ASSERT_TRUE(t.WaitFor("Esc: cancelling the current turn")) << t.Screen();
  ASSERT_TRUE(t.WaitFor("(cancelled")) << t.Screen();
  t.TypeLine("!touch made-by-me && (test -e .odin/odin.db && echo ledger-visible || echo ledger-hidden)");
  ASSERT_TRUE(t.WaitFor("exit code 0: ledger-hidden")) << t.Screen();
  t.Keys({"C-d"});
  ASSERT_TRUE(WaitUntil([&] { return !t.Alive(); })) << t.Screen();
  EXPECT_TRUE(PathExists(ws_.Join("made-by-me")));
  std::vector<std::string> rows = Rows(
      "SELECT s.agent_id || '|' || e.status FROM execution_starts s JOIN execution_ends e USING (execution_id) "
      "WHERE s.tool = 'ExecuteCommand' ORDER BY s.rowid");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0], "main|cancelled");
  EXPECT_EQ(rows[1], "user|ok");
  // What the user's command changed is a mutation like any command's.
  std::vector<std::string> mutations = Rows("SELECT path FROM mutations WHERE agent_id = 'user'");
  ASSERT_EQ(mutations.size(), 1u);
  EXPECT_NE(mutations[0].find("made-by-me"), std::string::npos);
}

// Issue 51: the status line says how much of the input the provider's
// prompt cache served, and, with no price for the model in llm.prices,
// that the price is unknown (never $0.000).
TEST_F(OdinTerminalTest, TheStatusLineShowsTheCachedShareAndAnUnknownPrice) {
  FakeLlm llm(R"({"prompt_cache": true,
                  "responses":[{"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"true"}}]},
                               {"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"sleep 3"}}]},
                               {"text":"slept"}]})");
  Tmux t(tmp_.path(), ws_.path(), Env(llm));
  ASSERT_TRUE(t.WaitFor("edit>")) << t.Screen();
  t.TypeLine("go");
  ASSERT_TRUE(t.WaitFor("% cached) · price unknown · ")) << t.Screen();
  EXPECT_EQ(t.Screen().find("$0.000"), std::string::npos) << t.Screen();
  ASSERT_TRUE(t.WaitFor("slept")) << t.Screen();
  t.Keys({"C-d"});
  ASSERT_TRUE(WaitUntil([&] { return !t.Alive(); })) << t.Screen();
}

// Issue 47, item 14: the live status line is plain text on any TERM (no
// literal "[1m[0m" after it), text typed while busy follows its "› ", and a
// notice that arrives while the user types (an MCP server that failed)
// prints above the line being edited, which comes back whole below it.
TEST_F(OdinTerminalTest, TheStatusLineIsCleanAndNoticesPrintAboveTheLineBeingEdited) {
  ASSERT_TRUE(MakeDirs(user_.Join("config/odin")).ok());
  ASSERT_TRUE(WriteFileAtomic(user_.Join("config/odin/odinconfig.json"),
                              R"({"mcpServers":{"slow":{"command":"sh","args":["-c","sleep 2; exit 3"]}}})")
                  .ok());
  FakeLlm llm(R"({"responses":[{"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"sleep 3"}}]},
                              {"text":"slept"}]})");
  for (const char* term : {"xterm-256color", "dumb"}) {
    Tmux t(tmp_.path(), ws_.path(), Env(llm, {{"TERM", term}}));
    ASSERT_TRUE(t.WaitFor("edit>")) << t.Screen();
    t.Type("half a thought");
    ASSERT_TRUE(t.WaitFor("MCP server slow failed")) << t.Screen();
    std::string screen = t.Screen();
    size_t notice = screen.find("odin: MCP server slow failed");
    size_t line = screen.find("edit> half a thought", notice);
    EXPECT_NE(line, std::string::npos) << "the line being edited did not come back below the notice:\n" << screen;
    EXPECT_EQ(screen.find("edit> half a thoughtodin"), std::string::npos) << screen;
    EXPECT_EQ(screen.rfind('\n', notice) + 1, notice) << "the notice is not on a line of its own:\n" << screen;
    t.Keys({"C-u"});
    if (std::string(term) == "dumb") break;  // the first model turn is the xterm's
    t.TypeLine("sleep please");
    ASSERT_TRUE(t.WaitFor("ExecuteCommand 1s")) << t.Screen();
    t.Type("typed while busy");
    ASSERT_TRUE(t.WaitFor("typed while busy")) << t.Screen();
    screen = t.Screen();
    EXPECT_EQ(screen.find("[1m"), std::string::npos) << screen;
    EXPECT_EQ(screen.find("[0m"), std::string::npos) << screen;
    EXPECT_NE(screen.find("ExecuteCommand "), std::string::npos);
    EXPECT_NE(screen.find("s › typed while busy"), std::string::npos) << screen;
    ASSERT_TRUE(t.WaitFor("slept")) << t.Screen();
    t.Keys({"C-u", "C-d"});
    ASSERT_TRUE(WaitUntil([&] { return !t.Alive(); })) << t.Screen();
  }
}

// Issue 47, item 12: the user's own !command stops on Esc, and on Ctrl-C
// (which does not leave the session), recorded as cancelled.
TEST_F(OdinTerminalTest, EscAndCtrlCStopTheUsersOwnCommand) {
  FakeLlm llm(R"({"responses":[{"text":"unused"}]})");
  Tmux t(tmp_.path(), ws_.path(), Env(llm));
  ASSERT_TRUE(t.WaitFor("edit>")) << t.Screen();
  // What it prints is not what was typed: the wait is for the command's own
  // output, not the echo of the line.
  t.TypeLine("!echo one-$((40+2)) && sleep 60");
  ASSERT_TRUE(t.WaitFor("one-42")) << t.Screen();
  t.Keys({"Escape"});
  ASSERT_TRUE(t.WaitFor("Esc: stopping your command")) << t.Screen();
  ASSERT_TRUE(t.WaitFor("cancelled", std::chrono::seconds(10))) << t.Screen();
  t.TypeLine("!echo two-$((40+3)) && sleep 60");
  ASSERT_TRUE(t.WaitFor("two-43")) << t.Screen();
  t.Keys({"C-c"});
  ASSERT_TRUE(t.WaitFor("^C: stopping your command")) << t.Screen();
  ASSERT_TRUE(WaitUntil(
      [&] {
        return Rows("SELECT COUNT(*) FROM execution_ends WHERE status = 'cancelled'") == std::vector<std::string>{"2"};
      },
      std::chrono::seconds(10)))
      << t.Screen();
  EXPECT_TRUE(t.Alive()) << "Ctrl-C on the user's command left the session";
  EXPECT_EQ(t.Screen().find("Ctrl-C again"), std::string::npos) << t.Screen();
  t.Keys({"C-d"});
  ASSERT_TRUE(WaitUntil([&] { return !t.Alive(); })) << t.Screen();
  EXPECT_EQ(Rows("SELECT s.agent_id || '|' || e.status FROM execution_starts s JOIN execution_ends e "
                 "USING (execution_id) WHERE s.tool = 'ExecuteCommand' ORDER BY s.rowid"),
            (std::vector<std::string>{"user|cancelled", "user|cancelled"}));
  EXPECT_TRUE(RequestsOf(llm).empty());
}

// /init asks before it changes an existing ODIN.md; "n" leaves it.
TEST_F(OdinTerminalTest, InitAsksBeforeChangingAnExistingOdinMd) {
  ASSERT_TRUE(WriteFileAtomic(ws_.Join("ODIN.md"), "# ours\n").ok());
  FakeLlm llm(R"({"responses":[{"text":"should not be asked"}]})");
  Tmux t(tmp_.path(), ws_.path(), Env(llm));
  ASSERT_TRUE(t.WaitFor("edit>")) << t.Screen();
  t.TypeLine("/init");
  ASSERT_TRUE(t.WaitFor("Update it? [y] yes, [n] no")) << t.Screen();
  t.TypeLine("n");
  ASSERT_TRUE(t.WaitFor("ODIN.md left as it is")) << t.Screen();
  t.Keys({"C-d"});
  ASSERT_TRUE(WaitUntil([&] { return !t.Alive(); })) << t.Screen();
  EXPECT_TRUE(RequestsOf(llm).empty());
  StatusOr<std::string> now = ReadFileToString(ws_.Join("ODIN.md"));
  ASSERT_TRUE(now.ok());
  EXPECT_EQ(*now, "# ours\n");
}

// In a pipe, nothing is coloured and the model's markdown comes as written.
TEST_F(OdinTerminalTest, APipeGetsPlainText) {
  FakeLlm llm(R"({"responses":[{"text":"| a | b |\n|---|---|\n| 1 | 2 |\n\nAll **done**."}]})");
  int in, out;
  pid_t pid = StartOdinPiped(ws_.path(), {}, &in, &out, FakeModelEnv(llm, marker_, user_));
  std::string input = "show me\n";
  ASSERT_EQ(write(in, input.data(), input.size()), static_cast<ssize_t>(input.size()));
  close(in);
  std::string seen = ReadUntil(out, "(the end of the output)");
  close(out);
  EXPECT_EQ(Wait(pid), 0);
  EXPECT_EQ(seen.find('\033'), std::string::npos) << seen;
  EXPECT_NE(seen.find("| 1 | 2 |\n\nAll **done**."), std::string::npos) << seen;
}

// The user's own custom command (~/.claude/commands): completed with Tab,
// listed by /help with its argument hint, and run with its arguments.
TEST_F(OdinTerminalTest, AUsersCustomCommandCompletesIsListedAndRuns) {
  ASSERT_TRUE(MakeDirs(user_.Join("claude/commands")).ok());
  ASSERT_TRUE(WriteFileAtomic(user_.Join("claude/commands/greet.md"),
                              "---\ndescription: Say hello\nargument-hint: [name]\n---\nGreet $1 warmly-3b7c.\n")
                  .ok());
  FakeLlm llm(R"({"responses":[{"text":"Greeted."}]})");
  Tmux t(tmp_.path(), ws_.path(), Env(llm));
  ASSERT_TRUE(t.WaitFor("edit>")) << t.Screen();
  t.Type("/gr");
  t.Keys({"Tab"});
  ASSERT_TRUE(t.WaitFor("edit> /greet")) << t.Screen();
  t.TypeLine(" Ann");
  ASSERT_TRUE(t.WaitFor("Greeted.")) << t.Screen();
  std::vector<std::string> messages = UserMessages(llm);
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_NE(messages[0].find("Greet Ann warmly-3b7c."), std::string::npos) << messages[0];
  t.TypeLine("/help");
  ASSERT_TRUE(t.WaitFor("Say hello (user)")) << t.Screen();
  EXPECT_NE(t.Screen().find("/greet [name]"), std::string::npos) << t.Screen();
  t.TypeLine("/quit");
  ASSERT_TRUE(WaitUntil([&] { return !t.Alive(); }, std::chrono::seconds(20)));
}

// An MCP server's prompt typed interactively: listed by /help, run with
// its argument, the message it makes sent.
TEST_F(OdinTerminalTest, AnMcpServersPromptIsASlashCommand) {
  std::string everything = BinDir() + "/../lsp/node_modules/.bin/mcp-server-everything";
  if (!PathExists(everything)) {
    GTEST_SKIP() << "the MCP reference servers are not installed (scripts/install-language-servers.sh installs them)";
  }
  ASSERT_TRUE(MakeDirs(user_.Join("config/odin")).ok());
  ASSERT_TRUE(WriteFileAtomic(user_.Join("config/odin/odinconfig.json"),
                              json({{"mcpServers", {{"everything", {{"command", everything}}}}}}).dump())
                  .ok());
  FakeLlm llm(R"({"responses":[{"text":"Sunny."}]})");
  Tmux t(tmp_.path(), ws_.path(), Env(llm));
  ASSERT_TRUE(t.WaitFor("edit>")) << t.Screen();
  t.TypeLine("/mcp__everything__args-prompt Oslo");
  ASSERT_TRUE(t.WaitFor("Sunny.")) << t.Screen();
  EXPECT_NE(t.Screen().find("(/mcp__everything__args-prompt, a prompt of MCP server everything)"), std::string::npos)
      << t.Screen();
  std::vector<std::string> messages = UserMessages(llm);
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_NE(messages[0].find("What's weather in Oslo?"), std::string::npos) << messages[0];
  t.TypeLine("/help");
  ASSERT_TRUE(t.WaitFor("MCP prompts (their servers' words):")) << t.Screen();
  EXPECT_NE(t.Screen().find("/mcp__everything__args-prompt city [state]"), std::string::npos) << t.Screen();
  t.TypeLine("/quit");
  ASSERT_TRUE(WaitUntil([&] { return !t.Alive(); }, std::chrono::seconds(20)));
}

// An MCP server's form (server-everything's trigger-elicitation-request:
// thirteen fields, one required) is asked field by field; the user's
// answers reach the server, and the ledger records the question and the
// answer's kind, never a value. The call's deadline (2 s here) stops while
// the user takes longer.
TEST_F(OdinTerminalTest, AnMcpServersFormIsAskedFieldByField) {
  std::string everything = BinDir() + "/../lsp/node_modules/.bin/mcp-server-everything";
  if (!PathExists(everything)) {
    GTEST_SKIP() << "the MCP reference servers are not installed (scripts/install-language-servers.sh installs them)";
  }
  ASSERT_TRUE(MakeDirs(user_.Join("config/odin")).ok());
  ASSERT_TRUE(
      WriteFileAtomic(user_.Join("config/odin/odinconfig.json"),
                      json({{"mcpServers", {{"everything", {{"command", everything}, {"timeout", 2}}}}}}).dump())
          .ok());
  FakeLlm llm(R"({"responses":[{"tool_calls":[{"name":"mcp__everything__trigger-elicitation-request","arguments":{}}]},
                               {"text":"Thanks."}]})");
  Tmux t(tmp_.path(), ws_.path(), Env(llm));
  ASSERT_TRUE(t.WaitFor("edit>")) << t.Screen();
  t.TypeLine("ask me");
  ASSERT_TRUE(t.WaitFor("MCP server everything asks (its words): Please provide inputs")) << t.Screen();
  // The required field first, then the others by name.
  ASSERT_TRUE(t.WaitFor("String — Your full, legal name")) << t.Screen();
  t.Keys({"Enter"});  // required: asked again
  ASSERT_TRUE(t.WaitFor("String is required")) << t.Screen();
  t.TypeLine("Ada Lovelace");
  ASSERT_TRUE(t.WaitFor("String with date format — Your date of birth [date] (optional)")) << t.Screen();
  t.Keys({"Enter"});
  ASSERT_TRUE(t.WaitFor("Boolean — Agree to the terms and conditions [y/n] (optional)")) << t.Screen();
  t.TypeLine("y");
  for (int field = 0; field < 10; ++field) {  // the rest: their defaults, or none
    t.Keys({"Enter"});
    usleep(150 * 1000);
  }
  ASSERT_TRUE(t.WaitFor("Send it to everything? [y] send")) << t.Screen();
  sleep(3);  // past the call's own deadline
  t.TypeLine("y");
  ASSERT_TRUE(t.WaitFor("Thanks.")) << t.Screen();
  std::vector<json> requests = RequestsOf(llm);
  ASSERT_EQ(requests.size(), 2u);
  std::string result = ToolResultsOf(requests[1]).back().value("output", "");
  EXPECT_NE(result.find("- Name: Ada Lovelace"), std::string::npos) << result;
  EXPECT_NE(result.find("- Agreed to terms: true"), std::string::npos) << result;
  EXPECT_NE(result.find("- Favorite Integer: 42"), std::string::npos) << result;
  t.TypeLine("/quit");
  ASSERT_TRUE(WaitUntil([&] { return !t.Alive(); }, std::chrono::seconds(20)));
  std::vector<std::string> events =
      LedgerRows(ws_.Join(".odin/odin.db"), "SELECT detail_json FROM gate_events WHERE kind = 'elicitation'");
  ASSERT_EQ(events.size(), 1u);
  json e = json::parse(events[0]);
  EXPECT_EQ(e["action"], "accept");
  EXPECT_EQ(e["answered_by"], "user");
  EXPECT_EQ(e["fields"].size(), 13u);
  EXPECT_EQ(events[0].find("Ada"), std::string::npos) << events[0];
}

}  // namespace
}  // namespace odin::testing
