// /attempts and /isolate in the interactive terminal, as a person uses
// them (tmux): N attempts run while the terminal stays the user's, Odin
// shows their verdicts and its choice, the user picks which lands (or
// none, or stops them with Esc); /isolate takes the conversation on into
// a view of its own, leaving the workspace as it is until odin apply.

#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/sha256.h"
#include "tests/checks_project.h"
#include "tests/ledger_rows.h"
#include "tests/llm_requests.h"
#include "tests/test_util.h"
#include "tests/tmux.h"

namespace odin::testing {
namespace {

using nlohmann::json;

json Write(const std::string& path, const std::string& content) {
  return Turn({Call("WriteFile", {{"file_path", path}, {"content", content}})});
}

class OdinInteractiveAttemptsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (system("command -v tmux >/dev/null 2>&1") != 0) {
      GTEST_SKIP() << "tmux is not installed (scripts/install-deps.sh installs it): no terminal to drive";
    }
  }
  void TearDown() override {
    EXPECT_TRUE(ProcessesLeftWithEnv("ODIN_TEST_MARK", marker_).empty()) << "processes left behind";
  }
  std::map<std::string, std::string> Env(const FakeLlm& llm) {
    std::map<std::string, std::string> env = FakeModelEnv(llm, marker_, user_);
    env["TERM"] = "xterm-256color";
    env["LANG"] = "C.UTF-8";
    env["NO_COLOR"] = "1";
    return env;
  }
  std::string Get(const std::string& rel) {
    StatusOr<std::string> s = ReadFileToString(ws_.Join(rel));
    return s.ok() ? *s : "(absent)";
  }
  // Every file of the workspace but Odin's state, with its content's hash.
  std::map<std::string, std::string> Hashes() { return TreeHashes(ws_.path()); }
  std::vector<std::string> Rows(const std::string& sql) { return LedgerRows(ws_.Join(".odin/odin.db"), sql); }
  // The requests whose conversation holds text.
  static std::vector<json> RequestsWith(const FakeLlm& llm, const std::string& text) {
    std::vector<json> out;
    for (const json& r : RequestsOf(llm)) {
      if (r.dump().find(text) != std::string::npos) out.push_back(r);
    }
    return out;
  }

  TempWorkspace ws_;
  TempWorkspace user_;
  TempWorkspace tmp_;
  std::string marker_ = UniqueMarker();
};

// Attempt 1 breaks the tests, 2 passes with three files, 3 with one: the
// verdicts are shown with Odin's choice (3), the workspace is untouched
// while the user decides, the user's choice (2) lands, the verdicts record
// who chose, each attempt went on from the session's conversation, and the
// session's model hears what landed with the next message.
TEST_F(OdinInteractiveAttemptsTest, TheUserChoosesWhichAttemptLandsAndTheSessionHearsOfIt) {
  MakeProject(ws_, user_);
  FakeLlm llm(ThreeAttemptsScript({Text("Hello there."), Text("Noted the landing.")}).dump());
  Tmux t(tmp_.path(), ws_.path(), Env(llm));
  ASSERT_TRUE(t.WaitFor("edit>")) << t.Screen();
  t.TypeLine("remember the word heron");
  ASSERT_TRUE(t.WaitFor("Hello there.")) << t.Screen();
  std::map<std::string, std::string> before = Hashes();
  t.TypeLine("/attempts 3 add x");
  ASSERT_TRUE(t.WaitFor("Land which?", std::chrono::seconds(120))) << t.Screen();
  std::string screen = t.Screen();
  EXPECT_NE(screen.find("land attempt [3]?"), std::string::npos) << screen;
  size_t third = screen.find("\n  3  ses_");
  ASSERT_NE(third, std::string::npos) << screen;
  EXPECT_NE(screen.substr(third, screen.find('\n', third + 1) - third).find("<- Odin's choice"), std::string::npos)
      << screen;
  EXPECT_NE(screen.find("Land which? 2 or 3 (Enter: 3)"), std::string::npos) << screen;
  EXPECT_EQ(Hashes(), before) << "the workspace changed before the user chose";
  // Attempt 1 does not pass: it cannot be chosen.
  t.TypeLine("1");
  ASSERT_TRUE(t.WaitFor("attempt 1 does not pass")) << t.Screen();
  EXPECT_EQ(Hashes(), before);
  t.TypeLine("2");
  ASSERT_TRUE(t.WaitFor("landed attempt 2 (ex_", std::chrono::seconds(60))) << t.Screen();
  EXPECT_TRUE(t.WaitFor("), your choice; odin undo ex_")) << t.Screen();
  EXPECT_EQ(Get("src/x.c"), "int x;\n");
  EXPECT_EQ(Get("src/y.c"), "int y;\n");
  EXPECT_EQ(Get("src/z.c"), "int z;\n");
  std::vector<std::string> judged = Rows("SELECT detail_json FROM gate_events WHERE kind = 'attempts_judged'");
  ASSERT_EQ(judged.size(), 3u);
  json record = json::parse(judged[0], nullptr, false);
  EXPECT_EQ(record["chosen_by"], "user") << judged[0];
  EXPECT_EQ(record["winner"], 2) << judged[0];
  // Each attempt was a copy of the session's conversation.
  for (int k = 1; k <= 3; ++k) {
    std::vector<json> asked = RequestsWith(llm, "attempt " + std::to_string(k) + " of 3");
    ASSERT_FALSE(asked.empty()) << k;
    EXPECT_NE(asked[0].dump().find("remember the word heron"), std::string::npos) << asked[0].dump();
  }
  t.TypeLine("what now");
  ASSERT_TRUE(t.WaitFor("Noted the landing.")) << t.Screen();
  std::vector<json> told = RequestsWith(llm, "Attempt 2's change landed in the workspace");
  ASSERT_EQ(told.size(), 1u) << t.Screen();
  EXPECT_NE(told[0].dump().find("src/y.c"), std::string::npos) << told[0].dump();
  t.TypeLine("/quit");
  ASSERT_TRUE(WaitUntil([&] { return !t.Alive(); }, std::chrono::seconds(20))) << t.Screen();
}

// While the attempts work the session takes no message; Esc stops them:
// each ends cancelled, none passes, nothing lands, and the terminal is the
// user's again.
TEST_F(OdinInteractiveAttemptsTest, EscStopsTheAttemptsAndNothingLands) {
  MakeProject(ws_, user_);
  std::string hold = user_.Join("never");
  json held = {{"text", "Done."}, {"hold_until", hold}};
  FakeLlm llm(json({{"responses", {Text("Still here.")}},
                    {"agents",
                     {{"attempt 1 of 2", {Write("src/x.c", "int x;\n"), held}},
                      {"attempt 2 of 2", {Write("src/y.c", "int y;\n"), held}}}}})
                  .dump());
  Tmux t(tmp_.path(), ws_.path(), Env(llm));
  ASSERT_TRUE(t.WaitFor("edit>")) << t.Screen();
  std::map<std::string, std::string> before = Hashes();
  t.TypeLine("/attempts 2 add x");
  ASSERT_TRUE(WaitUntil(
      [&] {
        return RequestsWith(llm, "attempt 2 of 2").size() >= 2 && RequestsWith(llm, "attempt 1 of 2").size() >= 2;
      },
      std::chrono::seconds(120)))
      << t.Screen();
  ASSERT_TRUE(t.WaitFor("attempts: 0 of 2 ended")) << t.Screen();
  // While they work, the session takes no message (the attempts are copies
  // of its conversation and workspace).
  t.TypeLine("do something else");
  ASSERT_TRUE(t.WaitFor("(the attempts are at work: that waits until they end; Esc stops them)")) << t.Screen();
  t.Keys({"Escape"});
  ASSERT_TRUE(t.WaitFor("stopping the attempts")) << t.Screen();
  ASSERT_TRUE(t.WaitFor("no attempt passes: nothing landed", std::chrono::seconds(60))) << t.Screen();
  EXPECT_EQ(Hashes(), before);
  t.TypeLine("hello");
  ASSERT_TRUE(t.WaitFor("Still here.")) << t.Screen();
  EXPECT_TRUE(RequestsWith(llm, "do something else").empty()) << "a message reached the model during the attempts";
  t.TypeLine("/quit");
  ASSERT_TRUE(WaitUntil([&] { return !t.Alive(); }, std::chrono::seconds(20))) << t.Screen();
}

// From a pipe, the line after /attempts is its answer: an empty line takes
// Odin's choice, which lands; the end of the input then ends the session.
TEST_F(OdinInteractiveAttemptsTest, APipedEmptyLineLandsOdinsChoice) {
  MakeProject(ws_, user_);
  FakeLlm llm(json({{"responses", json::array()},
                    {"agents",
                     {{"attempt 1 of 2", {Write("src/x.c", "BROKEN\n"), Text("Done."), Text("Done.")}},
                      {"attempt 2 of 2", {Write("src/x.c", "int x;\n"), Text("Done.")}}}}})
                  .dump());
  int in, out;
  pid_t pid = StartOdinPiped(ws_.path(), {}, &in, &out, FakeModelEnv(llm, marker_, user_));
  std::string input = "/attempts 2 add x\n\n";
  ASSERT_EQ(write(in, input.data(), input.size()), static_cast<ssize_t>(input.size()));
  close(in);
  std::string seen = ReadUntil(out, "(the end of the output)");
  close(out);
  EXPECT_EQ(Wait(pid), 0) << seen;
  EXPECT_NE(seen.find("landed attempt 2 (ex_"), std::string::npos) << seen;
  EXPECT_EQ(Get("src/x.c"), "int x;\n");
}

// /isolate: the conversation goes on in a copy of the session working in a
// view; its writes leave the workspace as it is; leaving says how to land
// it, and odin apply does.
TEST_F(OdinInteractiveAttemptsTest, IsolateTakesTheConversationIntoAView) {
  ASSERT_TRUE(WriteFileAtomic(ws_.Join("a.txt"), "a\n").ok());
  ASSERT_TRUE(MakeDirs(ws_.Join(".git")).ok());
  FakeLlm llm(
      json({{"responses",
             {Text("Hi."), Turn({Call("Read", {{"file_path", "a.txt"}})}), Write("a.txt", "A\n"), Text("Wrote a.")}}})
          .dump());
  Tmux t(tmp_.path(), ws_.path(), Env(llm));
  ASSERT_TRUE(t.WaitFor("edit>")) << t.Screen();
  t.TypeLine("remember the word heron");
  ASSERT_TRUE(t.WaitFor("Hi.")) << t.Screen();
  t.TypeLine("/isolate");
  ASSERT_TRUE(t.WaitFor("isolated: this session works in a view")) << t.Screen();
  t.TypeLine("write a");
  ASSERT_TRUE(t.WaitFor("Wrote a.")) << t.Screen();
  EXPECT_EQ(Get("a.txt"), "a\n") << "an isolated session wrote the workspace";
  std::vector<json> asked = RequestsWith(llm, "write a");
  ASSERT_FALSE(asked.empty());
  EXPECT_NE(asked[0].dump().find("remember the word heron"), std::string::npos) << "the conversation was lost";
  // The copied message is before the view: no rewind reaches it.
  t.TypeLine("/rewind 1");
  ASSERT_TRUE(t.WaitFor("before this session's view was made")) << t.Screen();
  t.TypeLine("/quit");
  ASSERT_TRUE(t.WaitFor("odin diff, apply or discard it")) << t.Screen();
  ASSERT_TRUE(WaitUntil([&] { return !t.Alive(); }, std::chrono::seconds(20))) << t.Screen();
  std::vector<std::string> isolated = Rows("SELECT session_id FROM gate_events WHERE kind = 'isolated_view'");
  ASSERT_EQ(isolated.size(), 1u);
  Ran applied = RunOdin(ws_.path(), {"apply", isolated[0]}, {{"ODIN_TEST_MARK", marker_}});
  EXPECT_EQ(applied.exit_code, 0) << applied.out << applied.err;
  EXPECT_EQ(Get("a.txt"), "A\n");
}

}  // namespace
}  // namespace odin::testing
