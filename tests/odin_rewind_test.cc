// Rewind and fork end to end, through the real odin: `odin rewind` puts the
// files back and takes the conversation back to before a message (all or
// nothing: a later outside change refuses it), /rewind does it in the
// interactive session, and `odin sessions fork` / `--fork-session` go on
// with a copy of a session, leaving the original as it was.

#include <unistd.h>

#include <algorithm>
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

class OdinRewindTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(MakeDirs(ws_.Join(".git")).ok());
    ASSERT_TRUE(MakeDirs(user_.Join("config/odin")).ok());
    json config = {{"checks", {{"build", ""}, {"lint", ""}, {"tests", ""}}}};
    ASSERT_TRUE(WriteFileAtomic(user_.Join("config/odin/odinconfig.json"), config.dump()).ok());
  }
  void TearDown() override {
    EXPECT_TRUE(ProcessesLeftWithEnv("ODIN_TEST_MARK", marker_).empty()) << "processes left behind";
  }
  std::map<std::string, std::string> Env(const FakeLlm& llm) { return FakeModelEnv(llm, marker_, user_); }
  json Prompt(const FakeLlm& llm, std::vector<std::string> args) {
    args.insert(args.end(), {"--output-format", "json"});
    last_ = RunOdin(ws_.path(), args, Env(llm));
    json j = json::parse(last_.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << last_.out << last_.err;
    return j;
  }
  Ran Odin(const FakeLlm& llm, const std::vector<std::string>& args) { return RunOdin(ws_.path(), args, Env(llm)); }
  std::vector<std::string> Rows(const std::string& sql, const std::string& arg = "") {
    return LedgerRows(ws_.Join(".odin/odin.db"), sql, arg);
  }
  // The user's messages of a session, oldest first.
  std::vector<std::string> UserMessages(const std::string& session) {
    return Rows("SELECT id FROM messages WHERE role = 'user' AND session_id = ? ORDER BY seq", session);
  }
  std::string Get(const std::string& rel) {
    StatusOr<std::string> s = ReadFileToString(ws_.Join(rel));
    return s.ok() ? *s : "(absent)";
  }
  // The (role: text) of a request's messages after the system prompt.
  static std::string Conversation(const json& request) {
    std::string out;
    for (const json& m : request["body"]["messages"]) {
      if (m["role"] == "system") continue;
      out += m["role"].get<std::string>() + ": " + (m["content"].is_string() ? m["content"].get<std::string>() : "") +
             "\n";
    }
    return out;
  }
  static json Write(const std::string& path, const std::string& content) {
    return Turn({Call("WriteFile", {{"file_path", path}, {"content", content}})});
  }

  // An interactive odin on pipes, as a person types into it: Say sends a
  // line; what it prints is read from out_.
  void StartPiped(const FakeLlm& llm) { pid_ = StartOdinPiped(ws_.path(), {}, &in_, &out_, Env(llm)); }
  void Say(const std::string& line) {
    std::string text = line + "\n";
    ASSERT_EQ(write(in_, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  }
  // Ends it (its input closed) and returns its exit code.
  int EndPiped() {
    close(in_);
    close(out_);
    return Wait(pid_);
  }

  TempWorkspace ws_;
  TempWorkspace user_;  // XDG_CONFIG_HOME and XDG_STATE_HOME
  std::string marker_ = UniqueMarker();
  Ran last_;
  pid_t pid_ = -1;
  int in_ = -1, out_ = -1;
};

// Three messages: the first writes a.txt, the second changes it and makes
// b.txt by a command. A rewind to the second puts both files back as the
// first left them, and the next message's request has the first message's
// turns and none of the second's or the third's. Both halves are ledger
// records.
TEST_F(OdinRewindTest, RewindPutsTheFilesAndTheConversationBack) {
  FakeLlm llm(json({{"responses",
                     {Write("a.txt", "one\n"), Text("Wrote ALPHA."),
                      Turn({Call("ExecuteCommand", {{"command", "echo two > a.txt && echo new > b.txt"}})}),
                      Text("Changed BRAVO."), Text("Said CHARLIE."), Text("After the rewind.")}}})
                  .dump());
  json first = Prompt(llm, {"-p", "write a"});
  ASSERT_EQ(first["status"], "done") << last_.err;
  std::string session = first["session_id"];
  ASSERT_EQ(Prompt(llm, {"-c", "-p", "change it"})["status"], "done") << last_.err;
  ASSERT_EQ(Prompt(llm, {"-c", "-p", "say something"})["status"], "done") << last_.err;
  ASSERT_EQ(Get("a.txt"), "two\n");
  ASSERT_EQ(Get("b.txt"), "new\n");
  std::vector<std::string> messages = UserMessages(session);
  ASSERT_EQ(messages.size(), 3u);

  Ran rewound = Odin(llm, {"rewind", "--message", messages[1].substr(0, 12), "--json"});
  ASSERT_EQ(rewound.exit_code, 0) << rewound.err;
  json r = json::parse(rewound.out, nullptr, false);
  EXPECT_EQ(r["message_id"], messages[1]) << rewound.out;
  EXPECT_EQ(r["session_id"], session);
  EXPECT_EQ(r["paths"], json({"a.txt", "b.txt"})) << rewound.out;
  EXPECT_EQ(Get("a.txt"), "one\n");
  EXPECT_EQ(Get("b.txt"), "(absent)");
  EXPECT_EQ(Rows("SELECT COUNT(*) FROM gate_events WHERE kind = 'rewind' AND session_id = ?", session)[0], "1");
  EXPECT_EQ(Rows("SELECT COUNT(*) FROM conversation WHERE kind = 'rewind' AND session_id = ?", session)[0], "1");
  EXPECT_EQ(Rows("SELECT tool FROM execution_starts WHERE execution_id = ?", r["undo"].get<std::string>()),
            std::vector<std::string>{"Undo"});

  json after = Prompt(llm, {"-c", "-p", "where are we?"});
  ASSERT_EQ(after["status"], "done") << last_.err;
  std::vector<json> requests = RequestsOf(llm);
  std::string seen = Conversation(requests.back());
  EXPECT_NE(seen.find("user: write a\n"), std::string::npos) << seen;
  EXPECT_NE(seen.find("Wrote ALPHA."), std::string::npos) << seen;
  EXPECT_EQ(seen.find("change it"), std::string::npos) << seen;
  EXPECT_EQ(seen.find("BRAVO"), std::string::npos) << seen;
  EXPECT_EQ(seen.find("CHARLIE"), std::string::npos) << seen;
  EXPECT_NE(seen.find("user: where are we?"), std::string::npos) << seen;
  // The ledger's chain holds through it all.
  EXPECT_EQ(Odin(llm, {"ledger", "verify"}).exit_code, 0);
}

// A file changed since by something else: the undo would overwrite it, so
// nothing is rewound (neither the files nor the conversation) and the
// file is named.
TEST_F(OdinRewindTest, ALaterOutsideChangeRefusesTheWholeRewind) {
  FakeLlm llm(json({{"responses",
                     {Write("a.txt", "one\n"), Text("Wrote it."), Write("b.txt", "two\n"), Text("Wrote DELTA."),
                      Text("Still here.")}}})
                  .dump());
  json first = Prompt(llm, {"-p", "write a"});
  std::string session = first["session_id"];
  ASSERT_EQ(Prompt(llm, {"-c", "-p", "write b"})["status"], "done") << last_.err;
  ASSERT_TRUE(WriteFileAtomic(ws_.Join("b.txt"), "the user's own\n").ok());
  std::vector<std::string> messages = UserMessages(session);
  ASSERT_EQ(messages.size(), 2u);
  Ran refused = Odin(llm, {"rewind", "--message", messages[1]});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("nothing was rewound"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("b.txt"), std::string::npos) << refused.err;
  EXPECT_EQ(Get("b.txt"), "the user's own\n");
  EXPECT_EQ(Get("a.txt"), "one\n");
  EXPECT_EQ(Rows("SELECT COUNT(*) FROM conversation WHERE kind = 'rewind'")[0], "0");
  EXPECT_EQ(Rows("SELECT COUNT(*) FROM gate_events WHERE kind = 'rewind'")[0], "0");
  ASSERT_EQ(Prompt(llm, {"-c", "-p", "and?"})["status"], "done") << last_.err;
  EXPECT_NE(Conversation(RequestsOf(llm).back()).find("DELTA"), std::string::npos);
}

// Either half alone: --conversation-only leaves the files as they are,
// --code-only leaves the conversation. The two flags together, or a
// message that is not the user's, get one line and a non-zero exit.
TEST_F(OdinRewindTest, EitherHalfAlone) {
  FakeLlm llm(json({{"responses",
                     {Write("a.txt", "one\n"), Text("Wrote ECHO."), Write("a.txt", "two\n"), Text("Wrote FOXTROT."),
                      Text("Next."), Text("Next again.")}}})
                  .dump());
  std::string session = Prompt(llm, {"-p", "write a"})["session_id"];
  ASSERT_EQ(Prompt(llm, {"-c", "-p", "write it again"})["status"], "done") << last_.err;
  std::vector<std::string> messages = UserMessages(session);
  ASSERT_EQ(messages.size(), 2u);

  Ran both = Odin(llm, {"rewind", "--message", messages[1], "--code-only", "--conversation-only"});
  EXPECT_NE(both.exit_code, 0);
  EXPECT_EQ(std::count(both.err.begin(), both.err.end(), '\n'), 1) << both.err;
  std::string answer = Rows("SELECT id FROM messages WHERE role = 'assistant' ORDER BY seq")[0];
  Ran not_user = Odin(llm, {"rewind", "--message", answer});
  EXPECT_NE(not_user.exit_code, 0);
  EXPECT_NE(not_user.err.find("the agent's answer"), std::string::npos) << not_user.err;

  Ran code = Odin(llm, {"rewind", "--message", messages[1], "--code-only"});
  ASSERT_EQ(code.exit_code, 0) << code.err;
  EXPECT_EQ(Get("a.txt"), "one\n");
  ASSERT_EQ(Prompt(llm, {"-c", "-p", "next"})["status"], "done") << last_.err;
  EXPECT_NE(Conversation(RequestsOf(llm).back()).find("FOXTROT"), std::string::npos);

  ASSERT_TRUE(WriteFileAtomic(ws_.Join("a.txt"), "mine\n").ok());
  Ran conversation = Odin(llm, {"rewind", "--message", messages[1], "--conversation-only"});
  ASSERT_EQ(conversation.exit_code, 0) << conversation.err;
  EXPECT_EQ(Get("a.txt"), "mine\n");
  ASSERT_EQ(Prompt(llm, {"-c", "-p", "next again"})["status"], "done") << last_.err;
  std::string seen = Conversation(RequestsOf(llm).back());
  EXPECT_EQ(seen.find("FOXTROT"), std::string::npos) << seen;
  EXPECT_NE(seen.find("ECHO"), std::string::npos) << seen;
}

// A fork goes on with a copy: the original's records stay as they were,
// `odin sessions` lists both (the fork naming its original), and the
// original, resumed, knows nothing of what the fork was told.
TEST_F(OdinRewindTest, AForkLeavesTheOriginalAsItWas) {
  FakeLlm llm(json({{"responses",
                     {Text("Noted: KESTREL."), Text("Fork: it was KESTREL."), Text("Second fork."),
                      Text("Original: KESTREL.")}}})
                  .dump());
  std::string original = Prompt(llm, {"-p", "remember KESTREL"})["session_id"];
  std::vector<std::string> before = Rows("SELECT seq FROM messages WHERE session_id = ?", original);

  Ran forked = Odin(llm, {"sessions", "fork", original, "--json"});
  ASSERT_EQ(forked.exit_code, 0) << forked.err;
  std::string fork = json::parse(forked.out)["session_id"];
  EXPECT_NE(fork, original);
  json in_fork = Prompt(llm, {"-r", fork, "-p", "in the fork: what was it?"});
  ASSERT_EQ(in_fork["status"], "done") << last_.err;
  EXPECT_EQ(in_fork["session_id"], fork);
  EXPECT_NE(Conversation(RequestsOf(llm).back()).find("remember KESTREL"), std::string::npos);

  // --fork-session with -r: another copy, taken up at once.
  json second = Prompt(llm, {"-r", original, "--fork-session", "-p", "a second fork"});
  ASSERT_EQ(second["status"], "done") << last_.err;
  EXPECT_NE(second["session_id"], original);
  EXPECT_NE(second["session_id"], fork);

  EXPECT_EQ(Rows("SELECT seq FROM messages WHERE session_id = ?", original), before);
  json resumed = Prompt(llm, {"-r", original, "-p", "in the original"});
  ASSERT_EQ(resumed["session_id"], original);
  std::string seen = Conversation(RequestsOf(llm).back());
  EXPECT_NE(seen.find("remember KESTREL"), std::string::npos) << seen;
  EXPECT_EQ(seen.find("in the fork"), std::string::npos) << seen;
  EXPECT_EQ(seen.find("a second fork"), std::string::npos) << seen;

  Ran listed = Odin(llm, {"sessions", "--json"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  std::map<std::string, json> by_id;
  for (const json& s : json::parse(listed.out)) by_id[s["id"]] = s;
  ASSERT_EQ(by_id.size(), 3u) << listed.out;
  EXPECT_EQ(by_id[fork]["forked_from"], original);
  EXPECT_EQ(by_id[second["session_id"].get<std::string>()]["forked_from"], original);
  EXPECT_TRUE(by_id[original]["forked_from"].is_null());
  EXPECT_EQ(by_id[fork]["first_prompt"], "remember KESTREL");
}

// A session a live odin runs is neither forked nor rewound; the
// interactive session's /rewind lists the messages and takes one back.
TEST_F(OdinRewindTest, InteractiveRewindAndNothingTouchesARunningSession) {
  FakeLlm llm(json({{"responses",
                     {Write("a.txt", "one\n"), Text("Wrote GOLF."), Write("b.txt", "two\n"), Text("Wrote HOTEL."),
                      Text("After: INDIA.")}}})
                  .dump());
  StartPiped(llm);
  Say("write a");
  ReadUntil(out_, "Status: done");
  Say("write b");
  ReadUntil(out_, "Status: done");
  ASSERT_EQ(Get("b.txt"), "two\n");
  std::string session = Rows("SELECT id FROM sessions ORDER BY seq DESC LIMIT 1")[0];
  std::vector<std::string> messages = UserMessages(session);
  ASSERT_EQ(messages.size(), 2u);

  Ran fork = Odin(llm, {"sessions", "fork", session});
  EXPECT_NE(fork.exit_code, 0);
  EXPECT_NE(fork.err.find("is still running"), std::string::npos) << fork.err;
  Ran rewind = Odin(llm, {"rewind", "--message", messages[1]});
  EXPECT_NE(rewind.exit_code, 0);
  EXPECT_NE(rewind.err.find("is still running"), std::string::npos) << rewind.err;
  EXPECT_EQ(Get("b.txt"), "two\n");

  Say("/rewind");
  std::string listed = ReadUntil(out_, "/rewind N");
  EXPECT_NE(listed.find("1. write a"), std::string::npos) << listed;
  EXPECT_NE(listed.find("2. write b"), std::string::npos) << listed;
  Say("/rewind 2");
  std::string done = ReadUntil(out_, "rewound to before");
  EXPECT_NE(done.find("b.txt"), std::string::npos) << done;
  EXPECT_EQ(Get("b.txt"), "(absent)");
  EXPECT_EQ(Get("a.txt"), "one\n");
  Say("what now?");
  ReadUntil(out_, "Status: done");
  EXPECT_EQ(EndPiped(), 0);
  std::string seen = Conversation(RequestsOf(llm).back());
  EXPECT_NE(seen.find("GOLF"), std::string::npos) << seen;
  EXPECT_EQ(seen.find("write b"), std::string::npos) << seen;
  EXPECT_EQ(seen.find("HOTEL"), std::string::npos) << seen;
}

// A fork's copy of a message had its calls in the original session: a
// rewind in the fork takes those back too (the file the message wrote goes,
// and what it read leaves the fork's file cache, so an edit of it without
// reading it again is refused).
TEST_F(OdinRewindTest, ARewindInAForkReachesTheCallsTheOriginalMade) {
  ASSERT_TRUE(WriteFileAtomic(ws_.Join("a.txt"), "alpha\n").ok());
  json read_and_write = Turn(
      {Call("Read", {{"file_path", "a.txt"}}), Call("WriteFile", {{"file_path", "b.txt"}, {"content", "made\n"}})});
  json edit = Turn({Call("EditTool", {{"file_path", "a.txt"}, {"old_string", "alpha"}, {"new_string", "omega"}})});
  FakeLlm llm(json({{"responses", {read_and_write, Text("Read and wrote."), edit, Text("Tried.")}}}).dump());
  std::string original = Prompt(llm, {"-p", "read a, write b"})["session_id"];
  ASSERT_EQ(Get("b.txt"), "made\n");
  Ran forked = Odin(llm, {"sessions", "fork", original, "--json"});
  ASSERT_EQ(forked.exit_code, 0) << forked.err;
  std::string fork = json::parse(forked.out)["session_id"];
  std::vector<std::string> copied = UserMessages(fork);
  ASSERT_EQ(copied.size(), 1u);
  Ran rewound = Odin(llm, {"rewind", "--message", copied[0], "--json"});
  ASSERT_EQ(rewound.exit_code, 0) << rewound.err;
  EXPECT_EQ(json::parse(rewound.out)["paths"], json({"b.txt"})) << rewound.out;
  EXPECT_EQ(Get("b.txt"), "(absent)");
  json after = Prompt(llm, {"-r", fork, "-p", "change alpha to omega"});
  ASSERT_EQ(after["status"], "done") << last_.err;
  std::vector<json> results = ToolResultsOf(RequestsOf(llm).back());
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0]["status"], "rejected") << results[0].dump();
  EXPECT_EQ(Get("a.txt"), "alpha\n");
}

// A message typed while another ran waited its turn: a rewind to it takes
// back what it did, not the calls the one before it made after it was typed.
TEST_F(OdinRewindTest, ARewindStartsWhereTheMessageStartedNotWhereItWasTyped) {
  FakeLlm llm(json({{"responses",
                     {Turn({Call("ExecuteCommand", {{"command", "sleep 2.25"}})}), Write("a.txt", "from the first\n"),
                      Text("First done."), Text("Second done.")}}})
                  .dump());
  StartPiped(llm);
  Say("first");
  ASSERT_TRUE(WaitUntil([&] { return !ProcessesWithArg("sleep 2.25").empty(); })) << "the command never started";
  Say("second");  // typed while the first runs
  // Idle again only once its report is out.
  std::string seen = ReadUntil(out_, "Second done.");
  if (seen.find("Status: done", seen.find("Second done.")) == std::string::npos) ReadUntil(out_, "Status: done");
  ASSERT_EQ(Get("a.txt"), "from the first\n");
  Say("/rewind 2");
  std::string done = ReadUntil(out_, "rewound to before");
  EXPECT_NE(done.find("0 paths put back"), std::string::npos) << done;
  EXPECT_EQ(Get("a.txt"), "from the first\n");
  EXPECT_EQ(EndPiped(), 0);
}

// While a compaction runs, /rewind refuses before it touches a file.
TEST_F(OdinRewindTest, SlashRewindWaitsForACompactionWithoutTouchingFiles) {
  std::string hold = user_.Join("release");
  FakeLlm llm(
      // Enough turns that /compact has older ones to summarise (it keeps three).
      json({{"responses",
             {Write("a.txt", "one\n"), Write("b.txt", "two\n"), Write("c.txt", "three\n"), Write("d.txt", "four\n"),
              Write("e.txt", "five\n"), Text("Wrote JULIET.")}},
            {"by_system",
             {{"handoff note",
               {{"text", R"({"done": ["wrote a"], "pending": [], "current_state": "idle"})"}, {"hold_until", hold}}}}}})
          .dump());
  StartPiped(llm);
  Say("write a");
  ReadUntil(out_, "Status: done");
  Say("/compact");
  ReadUntil(out_, "compacting the conversation");
  Say("/rewind 1");
  EXPECT_NE(ReadUntil(out_, "(busy").find("(busy: cancel the turn first)"), std::string::npos);
  EXPECT_EQ(Get("a.txt"), "one\n");
  ASSERT_TRUE(WriteFileAtomic(hold, "go").ok());
  EXPECT_EQ(EndPiped(), 0);
  EXPECT_EQ(Get("a.txt"), "one\n");
  EXPECT_EQ(Rows("SELECT COUNT(*) FROM gate_events WHERE kind = 'rewind'")[0], "0");
}

}  // namespace
}  // namespace odin::testing
