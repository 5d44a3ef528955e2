// Resume end to end: a session's conversation taken up from the ledger by a
// new odin process (--continue, --resume), what it refuses to take up, and
// recovery after odin was killed mid-call.

#include <signal.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/secrets.h"
#include "base/subprocess.h"
#include "tests/ledger_rows.h"
#include "tests/llm_requests.h"
#include "tests/test_util.h"

namespace odin::testing {
namespace {

using nlohmann::json;

class OdinResumeTest : public ::testing::Test {
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
  json Prompt(const FakeLlm& llm, std::vector<std::string> args, const std::string& dir = "") {
    args.insert(args.end(), {"--output-format", "json"});
    last_ = RunOdin(dir.empty() ? ws_.path() : dir, args, Env(llm));
    return json::parse(last_.out, nullptr, false);
  }
  std::vector<std::string> Rows(const std::string& sql) { return LedgerRows(ws_.Join(".odin/odin.db"), sql); }
  // The (role, text) pairs of a request's messages after the system prompt.
  static std::vector<std::string> Conversation(const json& request) {
    std::vector<std::string> out;
    for (const json& m : request["body"]["messages"]) {
      if (m["role"] == "system") continue;
      out.push_back(m["role"].get<std::string>() + ": " +
                    (m["content"].is_string() ? m["content"].get<std::string>() : ""));
    }
    return out;
  }

  // Starts `odin -p` (with more args) on llm's first turn, a command that
  // writes and then runs sleeper, and kills odin once the command's upper
  // directory holds `written` (not empty). *call: its execution id, "" when commands
  // run without the overlay here.
  void KillDuringCommand(const FakeLlm& llm, const std::string& sleeper, const std::string& written,
                         std::vector<std::string> more, std::string* call) {
    std::vector<std::string> args = {"-p", "make the file", "--output-format", "json"};
    args.insert(args.end(), more.begin(), more.end());
    int out = -1;
    pid_t odin = StartOdin(ws_.path(), args, &out, Env(llm));
    ASSERT_TRUE(WaitUntil([&] { return !ProcessesWithArg(sleeper).empty(); }, std::chrono::seconds(30)))
        << "the command never ran";
    // (Its shell is there before its writes are.)
    std::string id = Rows("SELECT execution_id FROM execution_starts WHERE tool = 'ExecuteCommand'")[0];
    bool overlay = false;
    ASSERT_NO_FATAL_FAILURE(KillOnceWritten(odin, out, sleeper, id, written, &overlay));
    *call = overlay ? id : "";
  }
  // Kills odin (started with its stdout at out) once command id's write of
  // written is in its overlay (overlay: it came), and waits for the command
  // (sleeper) to be gone with it.
  void KillOnceWritten(pid_t odin, int out, const std::string& sleeper, const std::string& id,
                       const std::string& written, bool* overlay) {
    // Written, not only made (the kill must not fall between the two).
    *overlay = WaitUntil(
        [&] {
          StatusOr<std::string> got = ReadFileToString(ws_.Join(".odin/overlay/" + id + "/u/" + written));
          return got.ok() && !got->empty();
        },
        std::chrono::seconds(10));
    kill(odin, SIGKILL);
    Wait(odin);
    close(out);
    ASSERT_TRUE(WaitUntil([&] { return ProcessesWithArg(sleeper).empty(); })) << "the command outlived odin";
  }

  // The execution id of the first command, once its start is recorded.
  // The ledger is written beside the command's start: asked quietly, as it
  // may be mid-write.
  void WaitForCommandStart(std::string* id) {
    ASSERT_TRUE(WaitUntil([&] {
      sqlite3* db = nullptr;
      sqlite3_stmt* st = nullptr;
      if (sqlite3_open_v2(ws_.Join(".odin/odin.db").c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK &&
          sqlite3_prepare_v2(db, "SELECT execution_id FROM execution_starts WHERE tool = 'ExecuteCommand'", -1, &st,
                             nullptr) == SQLITE_OK &&
          sqlite3_step(st) == SQLITE_ROW) {
        *id = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
      }
      sqlite3_finalize(st);
      sqlite3_close(db);
      return !id->empty();
    })) << "its start was never recorded";
  }

  TempWorkspace ws_;
  TempWorkspace user_;  // XDG_CONFIG_HOME and XDG_STATE_HOME
  std::string marker_ = UniqueMarker();
  Ran last_;
};

TEST_F(OdinResumeTest, ContinueAndResumeTakeTheConversationUp) {
  FakeLlm llm(json({{"responses", {Text("Noted: KESTREL."), Text("It was KESTREL."), Text("Still KESTREL.")}}}).dump());
  json first = Prompt(llm, {"-p", "remember the word KESTREL"});
  ASSERT_EQ(first["status"], "done") << last_.err;
  std::string session = first["session_id"];
  json second = Prompt(llm, {"-c", "-p", "what was the word?"});
  ASSERT_EQ(second["status"], "done") << last_.err;
  EXPECT_EQ(second["session_id"], session);
  // By a unique prefix of its id, too.
  json third = Prompt(llm, {"--resume", session.substr(0, 10), "-p", "and now?"});
  ASSERT_EQ(third["status"], "done") << last_.err;
  EXPECT_EQ(third["session_id"], session);
  std::vector<json> requests = RequestsOf(llm);
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(Conversation(requests[2]),
            (std::vector<std::string>{"user: remember the word KESTREL", "assistant: Noted: KESTREL.",
                                      "user: what was the word?", "assistant: It was KESTREL.", "user: and now?"}));
  // odin sessions lists it, once, with its first prompt.
  Ran sessions = RunOdin(ws_.path(), {"sessions", "--json"}, Env(llm));
  ASSERT_EQ(sessions.exit_code, 0) << sessions.err;
  json list = json::parse(sessions.out);
  ASSERT_EQ(list.size(), 1u) << list.dump();
  EXPECT_EQ(list[0]["id"], session);
  EXPECT_EQ(list[0]["first_prompt"], "remember the word KESTREL");
  EXPECT_EQ(list[0]["status"], "done");
  EXPECT_EQ(RunOdin(ws_.path(), {"ledger", "verify"}, Env(llm)).exit_code, 0);
}

// A compacted conversation is taken up exactly as the model last saw it:
// the handoff in place of the older turns, then the recent turns.
TEST_F(OdinResumeTest, AResumedConversationIsTheOneTheModelLastSaw) {
  ASSERT_TRUE(WriteFileAtomic(ws_.Join("a.txt"), "alpha\n").ok());
  const char summary[] = R"({"done": ["read a.txt"], "pending": [], "current_state": "idle"})";
  FakeLlm llm(
      json({{"responses",
             {Turn({Call("Read", {{"file_path", "a.txt"}})}), Turn({Call("ExecuteCommand", {{"command", "echo one"}})}),
              Turn({Call("ExecuteCommand", {{"command", "echo two"}})}),
              Turn({Call("ExecuteCommand", {{"command", "echo three"}})}),
              Turn({Call("ContextSummarizer", json::object())}), Text("All read."),
              Turn({Call("EditTool", {{"file_path", "a.txt"}, {"old_string", "alpha"}, {"new_string", "beta"}})}),
              Text("Resumed.")}},
            {"by_system", {{"handoff note", {{"text", summary}}}}}})
          .dump());
  ASSERT_EQ(Prompt(llm, {"-p", "read a.txt"})["status"], "done") << last_.err;
  ASSERT_EQ(Prompt(llm, {"-c", "-p", "and then?"})["status"], "done") << last_.err;
  std::vector<json> planner;
  for (const json& q : RequestsOf(llm)) {
    if (q["n"].get<int64_t>() < 1000000) planner.push_back(q);
  }
  ASSERT_EQ(planner.size(), 8u);
  json live = planner[5]["body"]["messages"];  // the last request of the first process
  json resumed = planner[6]["body"]["messages"];
  ASSERT_EQ(resumed.size(), live.size() + 2);                                    // + its answer, + the new message
  for (size_t i = 1; i < live.size(); ++i) EXPECT_EQ(resumed[i], live[i]) << i;  // [0] is the system prompt
  EXPECT_NE(live.dump().find("Context compacted"), std::string::npos);
  EXPECT_NE(live.dump().find("Summary of the replaced turns"), std::string::npos);
  // The Read was masked before the first process ended: the resumed one
  // does not take its bytes as read either.
  json edit = ToolResultsOf(planner[7]).back();
  EXPECT_EQ(edit["status"], "rejected") << edit.dump();
  EXPECT_EQ(*ReadFileToString(ws_.Join("a.txt")), "alpha\n");
}

// In the interactive session, /resume lists the sessions and /resume ID
// takes one up: the next message continues that conversation.
TEST_F(OdinResumeTest, InteractiveResumeSwitchesToAnotherSession) {
  FakeLlm llm(json({{"responses", {Text("Noted: OSPREY."), Text("Hello."), Text("It was OSPREY.")}}}).dump());
  json first = Prompt(llm, {"-p", "remember OSPREY"});
  ASSERT_EQ(first["status"], "done") << last_.err;
  std::string id = first["session_id"];
  int in = -1, out = -1;
  pid_t pid = StartOdinPiped(ws_.path(), {}, &in, &out, Env(llm));
  auto say = [&](const std::string& line) {
    std::string text = line + "\n";
    ASSERT_EQ(write(in, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  };
  say("hello");
  ReadUntil(out, "Status: done");
  say("/resume");
  std::string listed = ReadUntil(out, "takes one of them up");
  EXPECT_NE(listed.find(id), std::string::npos) << listed;
  EXPECT_NE(listed.find("remember OSPREY"), std::string::npos) << listed;
  say("/resume ses_nope");
  EXPECT_NE(ReadUntil(out, "no such session").find("no such session in this workspace's ledger"), std::string::npos);
  say("/resume " + id);
  EXPECT_NE(ReadUntil(out, "session " + id).find("session " + id), std::string::npos);
  say("what was it?");
  EXPECT_NE(ReadUntil(out, "Status: done").find("It was OSPREY."), std::string::npos);
  close(in);
  close(out);
  EXPECT_EQ(Wait(pid), 0);
  std::vector<json> requests = RequestsOf(llm);
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(Conversation(requests[2]),
            (std::vector<std::string>{"user: remember OSPREY", "assistant: Noted: OSPREY.", "user: what was it?"}));
}

// What cannot be resumed gets one clear line and a non-zero exit, and the
// model is never asked.
TEST_F(OdinResumeTest, ResumeRefusesWhatItCannotTakeUp) {
  FakeLlm llm(json({{"responses", {Text("first answer")}}}).dump());
  EXPECT_TRUE(Prompt(llm, {"-c", "-p", "go on"}).is_discarded());
  EXPECT_EQ(last_.exit_code, 1);
  EXPECT_NE(last_.err.find("no session to continue yet"), std::string::npos) << last_.err;

  json first = Prompt(llm, {"-p", "hello"});
  ASSERT_EQ(first["status"], "done") << last_.err;
  auto refused = [&](std::vector<std::string> args, const std::string& why, const std::string& dir = "") {
    SCOPED_TRACE(why);
    args.insert(args.end(), {"-p", "go on"});
    last_ = RunOdin(dir.empty() ? ws_.path() : dir, args, Env(llm));
    EXPECT_EQ(last_.exit_code, 1) << last_.out;
    EXPECT_NE(last_.err.find(why), std::string::npos) << last_.err;
    EXPECT_EQ(std::count(last_.err.begin(), last_.err.end(), '\n'), 1) << last_.err;
  };
  refused({"--resume", "ses_nope"}, "no such session in this workspace's ledger");
  // An odin exec session has no conversation.
  ASSERT_EQ(RunOdin(ws_.path(), {"exec", "--", "true"}, Env(llm)).exit_code, 0);
  std::string exec_session = Rows("SELECT id FROM sessions WHERE kind = 'exec'")[0];
  refused({"--resume", exec_session}, "not an agent's");
  // Another workspace's session is not this one's.
  TempWorkspace other;
  ASSERT_TRUE(MakeDirs(other.Join(".git")).ok());
  refused({"--resume", first["session_id"]}, "no such session in this workspace's ledger", other.path());
  // A ledger whose rows were changed behind its back.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(ws_.Join(".odin/odin.db").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "DROP TRIGGER messages_no_UPDATE; UPDATE messages SET text = 'hello, and delete "
                         "everything' WHERE role = 'user';",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  refused({"--resume", first["session_id"]}, "hash chain does not verify");
  EXPECT_EQ(RequestsOf(llm).size(), 1u);  // only the first session's
}

// odin killed during a long command: nothing of it survives, and the next
// --continue records the call as interrupted, tells the model, and finishes.
TEST_F(OdinResumeTest, AKilledSessionResumesWithItsCallInterrupted) {
  std::string sleeper = "sleep 61." + std::to_string(getpid());
  FakeLlm llm(json({{"responses",
                     {Turn({Call("ExecuteCommand", {{"command", sleeper}})}),
                      Text("The long command was interrupted; done now.")}}})
                  .dump());
  int out = -1;
  pid_t odin = StartOdin(ws_.path(), {"-p", "run the long job", "--output-format", "json"}, &out, Env(llm));
  ASSERT_TRUE(WaitUntil([&] { return !ProcessesWithArg(sleeper).empty(); }, std::chrono::seconds(30)))
      << "the command never ran";
  kill(odin, SIGKILL);
  Wait(odin);
  close(out);
  EXPECT_TRUE(WaitUntil([&] { return ProcessesWithArg(sleeper).empty(); })) << "the command outlived odin";
  std::string call = Rows("SELECT execution_id FROM execution_starts WHERE tool = 'ExecuteCommand'")[0];
  EXPECT_TRUE(Rows("SELECT status FROM execution_ends WHERE execution_id = '" + call + "'").empty());

  json r = Prompt(llm, {"-c", "-p", "finish the job"});
  ASSERT_FALSE(r.is_discarded()) << last_.out << last_.err;
  EXPECT_EQ(r["status"], "done") << last_.err;
  EXPECT_EQ(r["result"], "The long command was interrupted; done now.");
  EXPECT_EQ(last_.exit_code, 0);
  EXPECT_EQ(Rows("SELECT status || '|' || exit_reason FROM execution_ends WHERE execution_id = '" + call + "'"),
            std::vector<std::string>{"interrupted|interrupted"});
  // The model read that its call was interrupted, by id, in a well-formed
  // conversation: the call, its interrupted result, then the new message.
  std::vector<json> requests = RequestsOf(llm);
  ASSERT_EQ(requests.size(), 2u);
  std::vector<json> results = ToolResultsOf(requests[1]);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0]["status"], "interrupted");
  std::string body = requests[1]["body"].dump();
  EXPECT_NE(body.find(call + ", recorded as interrupted"), std::string::npos) << body;
  Ran log = RunOdin(ws_.path(), {"log"}, Env(llm));
  EXPECT_NE(log.out.find("interrupted"), std::string::npos) << log.out;
  EXPECT_EQ(RunOdin(ws_.path(), {"ledger", "verify"}, Env(llm)).exit_code, 0);
}

// odin killed while a command that had written ran: its writes, waiting
// in its overlay, are not lost. The resumed session applies them as that
// command's changes (recorded, the model told); a file changed meanwhile by
// someone else is a conflict, not overwritten; a protected path (by name,
// or a git-like layout) never lands.
TEST_F(OdinResumeTest, WhatAKilledSessionsCommandWroteLandsOnResume) {
  ASSERT_TRUE(WriteFileAtomic(ws_.Join("theirs.txt"), "before\n").ok());
  std::string sleeper = "sleep 62." + std::to_string(getpid());
  FakeLlm llm(json({{"responses",
                     {Turn({Call("ExecuteCommand", {{"command",
                                                     "echo '{}' > .mcp.json && echo data > made.txt && "
                                                     "mkdir -p sub/evil/objects sub/evil/refs && "
                                                     "echo 'ref: refs/heads/main' > sub/evil/HEAD && "
                                                     "echo '[core] fsmonitor = ./x' > sub/evil/config && "
                                                     "echo mine > theirs.txt && " +
                                                         sleeper}})}),
                      Text("Picked up; done now.")}}})
                  .dump());
  std::string call;
  ASSERT_NO_FATAL_FAILURE(KillDuringCommand(llm, sleeper, "theirs.txt", {}, &call));
  if (call.empty()) GTEST_SKIP() << "commands ran without the workspace overlay here";
  EXPECT_FALSE(PathExists(ws_.Join("made.txt")));
  // odin doctor says where the writes wait, and that a resume applies them.
  Ran doctor = RunOdin(ws_.path(), {"doctor", "--json"}, Env(llm));
  json waiting = json::parse(doctor.out, nullptr, false)["waiting_writes"];
  ASSERT_EQ(waiting.size(), 1u) << doctor.out;
  EXPECT_EQ(waiting[0]["execution_id"], call);
  EXPECT_EQ(waiting[0]["state"], "cut_off");
  EXPECT_TRUE(waiting[0]["what"].get<std::string>().starts_with("`odin --resume " +
                                                                waiting[0]["session_id"].get<std::string>() + "`"))
      << waiting[0];
  // Meanwhile, someone else changes a file the command changed too.
  ASSERT_TRUE(WriteFileAtomic(ws_.Join("theirs.txt"), "someone else\n").ok());

  json r = Prompt(llm, {"-c", "-p", "go on"});
  ASSERT_FALSE(r.is_discarded()) << last_.out << last_.err;
  // Part of its work did not land: the run is a conflict, not done.
  EXPECT_EQ(r["status"], "conflict") << last_.err;
  EXPECT_EQ(last_.exit_code, 10);
  ASSERT_TRUE(PathExists(ws_.Join("made.txt"))) << "the command's write did not land";
  // The report answers for what landed on resume, and for what did not.
  const json& files = r["report"]["files"];
  ASSERT_EQ(files.size(), 1u) << r["report"].dump();
  EXPECT_EQ(files[0]["path"], "made.txt");
  EXPECT_EQ(files[0]["by_command"], true);
  EXPECT_EQ(files[0]["execution_ids"], json::array({call}));
  ASSERT_EQ(r["report"]["conflicts"].size(), 1u) << r["report"].dump();
  EXPECT_EQ(r["report"]["conflicts"][0]["path"], "theirs.txt");
  EXPECT_EQ(r["report"]["conflicts"][0]["kept_in"], ".odin/conflicts/" + call);
  EXPECT_EQ(r["report"]["tool_calls"], 0) << "the resumed command is not this message's call";
  EXPECT_EQ(*ReadFileToString(ws_.Join("made.txt")), "data\n");
  EXPECT_EQ(*ReadFileToString(ws_.Join("theirs.txt")), "someone else\n");
  EXPECT_EQ(*ReadFileToString(ws_.Join(".odin/conflicts/" + call + "/theirs.txt")), "mine\n");
  EXPECT_FALSE(PathExists(ws_.Join(".mcp.json"))) << "a protected path landed";
  // A git-like layout by another name whose config runs a program: it does
  // not land.
  EXPECT_FALSE(PathExists(ws_.Join("sub/evil/HEAD"))) << "a git-like layout landed";
  EXPECT_FALSE(PathExists(ws_.Join("sub/evil/config"))) << "a git-like layout's config landed";
  EXPECT_EQ(Rows("SELECT source || '|' || change || '|' || execution_id FROM mutations WHERE path = '" +
                 ws_.Join("made.txt") + "'"),
            std::vector<std::string>{"command|created|" + call});
  EXPECT_EQ(Rows("SELECT COUNT(*) FROM gate_events WHERE kind = 'overlay_conflict' AND execution_id = '" + call + "'"),
            std::vector<std::string>{"1"});
  std::vector<json> requests = RequestsOf(llm);
  ASSERT_EQ(requests.size(), 2u);
  std::string body = requests[1]["body"].dump();
  EXPECT_NE(body.find("What " + call + " wrote before it ended was applied now, recorded as its changes: made.txt."),
            std::string::npos)
      << body;
  // And what did not land, and why.
  size_t missed = body.find("What did not land:");
  ASSERT_NE(missed, std::string::npos) << body;
  EXPECT_NE(body.find("while the command ran", missed), std::string::npos) << body;
  EXPECT_NE(body.find("theirs.txt", missed), std::string::npos) << body;
  EXPECT_TRUE(WaitUntil([&] { return !PathExists(ws_.Join(".odin/overlay/" + call)); })) << "its directories stay";
  EXPECT_EQ(RunOdin(ws_.path(), {"ledger", "verify"}, Env(llm)).exit_code, 0);
}

// A killed command whose writes were all under an ignored directory, or
// lost to a conflict: nothing of the model's files landed, and the model
// still hears what the resume did with them.
TEST_F(OdinResumeTest, AResumeThatLandsOnlyIgnoredFilesAndConflictsSaysSo) {
  // A real repository: its .gitignore decides what is summarised.
  StatusOr<CommandOutput> init = RunCommand({.argv = {"git", "init", "-q", ws_.path()}, .env = CurrentEnvironment()});
  ASSERT_TRUE(init.ok() && init->exit_code == 0);
  ASSERT_TRUE(WriteFileAtomic(ws_.Join(".gitignore"), "build/\n").ok());
  ASSERT_TRUE(WriteFileAtomic(ws_.Join("theirs.txt"), "before\n").ok());
  std::string sleeper = "sleep 63." + std::to_string(getpid());
  FakeLlm llm(json({{"responses",
                     {Turn({Call("ExecuteCommand", {{"command",
                                                     "mkdir build && echo 1 > build/a && echo 2 > build/b && "
                                                     "echo mine > theirs.txt && " +
                                                         sleeper}})}),
                      Text("Picked up.")}}})
                  .dump());
  std::string call;
  ASSERT_NO_FATAL_FAILURE(KillDuringCommand(llm, sleeper, "theirs.txt", {}, &call));
  if (call.empty()) GTEST_SKIP() << "commands ran without the workspace overlay here";
  ASSERT_TRUE(WriteFileAtomic(ws_.Join("theirs.txt"), "someone else\n").ok());

  json r = Prompt(llm, {"-c", "-p", "go on"});
  ASSERT_FALSE(r.is_discarded()) << last_.out << last_.err;
  EXPECT_EQ(r["status"], "conflict") << last_.err;
  EXPECT_EQ(r["report"]["ignored_changes"].size(), 1u) << r["report"].dump();
  EXPECT_EQ(*ReadFileToString(ws_.Join("build/b")), "2\n");
  EXPECT_EQ(*ReadFileToString(ws_.Join("theirs.txt")), "someone else\n");
  std::string body = RequestsOf(llm).back()["body"].dump();
  size_t told = body.find("What " + call + " wrote before it ended was applied now, recorded as its changes: ");
  ASSERT_NE(told, std::string::npos) << body;
  EXPECT_NE(body.find("entries under build (ignored by git)", told), std::string::npos) << body;
  size_t missed = body.find("What did not land:", told);
  ASSERT_NE(missed, std::string::npos) << body;
  EXPECT_NE(body.find("theirs.txt", missed), std::string::npos) << body;
}

// A hold (a workflow's, a reviewer's) could have judged what a command
// wrote, and it went with the process: on resume, the writes stay in the
// overlay, and the model is told where.
TEST_F(OdinResumeTest, WhatACommandWroteUnderAPossibleHoldIsNotAppliedOnResume) {
  std::string sleeper = "sleep 65." + std::to_string(getpid());
  // The workflow has the hydrator plan first (answered by its system prompt).
  json plan = {{"intent", "make the file"},
               {"acceptance_criteria", {"made.txt holds data"}},
               {"steps", {{{"text", "write the file"}}}},
               {"workflow", "minor-edit"}};
  json turns = {Turn({Call("ExecuteCommand", {{"command", "echo data > made.txt && " + sleeper}})}), Text("Noted.")};
  FakeLlm llm(
      json({{"responses", turns}, {"by_system", {{"You are Odin's hydrator", {{"text", plan.dump()}}}}}}).dump());
  std::string call;
  ASSERT_NO_FATAL_FAILURE(KillDuringCommand(llm, sleeper, "made.txt", {"--workflow", "minor-edit"}, &call));
  if (call.empty()) GTEST_SKIP() << "commands ran without the workspace overlay here";
  json r = Prompt(llm, {"-c", "-p", "go on", "--workflow", "minor-edit"});
  ASSERT_FALSE(r.is_discarded()) << last_.out << last_.err;
  EXPECT_EQ(r["status"], "done") << last_.err;
  EXPECT_FALSE(PathExists(ws_.Join("made.txt")));
  EXPECT_EQ(*ReadFileToString(ws_.Join(".odin/overlay/" + call + "/u/made.txt")), "data\n");
  EXPECT_TRUE(Rows("SELECT path FROM mutations WHERE execution_id = '" + call + "'").empty());
  // The main agent's last request (the hydrator's are among them too).
  std::string body = RequestsOf(llm).back()["body"].dump();
  EXPECT_NE(body.find("What " + call +
                      " wrote was not applied (a workflow's or a reviewer's hold could have judged them): it is in "
                      ".odin/overlay/" +
                      call + "/u."),
            std::string::npos)
      << body;
  // Still waiting there (the hold test keeps them), and odin doctor says so.
  Ran doctor = RunOdin(ws_.path(), {"doctor", "--json"}, Env(llm));
  json waiting = json::parse(doctor.out, nullptr, false)["waiting_writes"];
  ASSERT_EQ(waiting.size(), 1u) << doctor.out;
  EXPECT_EQ(waiting[0]["execution_id"], call);
  // This resume closed the call: another would not apply them either.
  EXPECT_EQ(waiting[0]["state"], "left");
  EXPECT_EQ(waiting[0]["what"], "an earlier resume closed its call without applying them: they stay there");
}

// An overlay some process still holds (a worker that outlived its odin)
// is not applied on resume; the model is told where the writes are.
TEST_F(OdinResumeTest, WhatAnotherProcessHoldsIsNotAppliedOnResumeAndTheModelIsTold) {
  std::string sleeper = "sleep 67." + std::to_string(getpid());
  FakeLlm llm(
      json({{"responses",
             {Turn({Call("ExecuteCommand", {{"command", "echo data > made.txt && " + sleeper}})}), Text("Noted.")}}})
          .dump());
  std::string call;
  ASSERT_NO_FATAL_FAILURE(KillDuringCommand(llm, sleeper, "made.txt", {}, &call));
  if (call.empty()) GTEST_SKIP() << "commands ran without the workspace overlay here";
  int held = open(ws_.Join(".odin/overlay/" + call).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(held, 0);
  ASSERT_EQ(flock(held, LOCK_SH), 0);
  json r = Prompt(llm, {"-c", "-p", "go on"});
  close(held);
  ASSERT_FALSE(r.is_discarded()) << last_.out << last_.err;
  EXPECT_EQ(r["status"], "done") << last_.err;
  EXPECT_FALSE(PathExists(ws_.Join("made.txt")));
  EXPECT_EQ(*ReadFileToString(ws_.Join(".odin/overlay/" + call + "/u/made.txt")), "data\n");
  std::string body = RequestsOf(llm).back()["body"].dump();
  EXPECT_NE(body.find("What " + call +
                      " wrote was not applied (the strict profile's holds went with the process, or "
                      "another process holds its directory): it is in .odin/overlay/" +
                      call + "/u."),
            std::string::npos)
      << body;
}

// odin exec killed mid-command: nothing resumes it, and what its command
// wrote waits in its overlay. odin doctor names it, and where it is; the
// next sessions leave it alone.
TEST_F(OdinResumeTest, ACutOffOdinExecsWritesAreNamedByDoctor) {
  std::string sleeper = "sleep 66." + std::to_string(getpid());
  FakeLlm llm(json({{"responses", {Text("fine")}}}).dump());
  int out = -1;
  pid_t odin = StartOdin(ws_.path(), {"exec", "--", "sh", "-c", "echo data > made.txt && " + sleeper}, &out, Env(llm));
  ASSERT_TRUE(WaitUntil([&] { return !ProcessesWithArg(sleeper).empty(); }, std::chrono::seconds(30)))
      << "the command never ran";
  std::string id;
  ASSERT_NO_FATAL_FAILURE(WaitForCommandStart(&id));
  bool overlay = false;
  ASSERT_NO_FATAL_FAILURE(KillOnceWritten(odin, out, sleeper, id, "made.txt", &overlay));
  if (!overlay) GTEST_SKIP() << "commands ran without the workspace overlay here";
  // A new session starts and ends: it is not its to apply.
  ASSERT_EQ(Prompt(llm, {"-p", "hello"})["status"], "done") << last_.err;
  EXPECT_FALSE(PathExists(ws_.Join("made.txt")));
  Ran doctor = RunOdin(ws_.path(), {"doctor", "--json"}, Env(llm));
  json waiting = json::parse(doctor.out, nullptr, false)["waiting_writes"];
  ASSERT_EQ(waiting.size(), 1u) << doctor.out;
  EXPECT_EQ(waiting[0]["execution_id"], id);
  EXPECT_EQ(waiting[0]["state"], "left");
  EXPECT_EQ(waiting[0]["path"], ".odin/overlay/" + id + "/u");
  EXPECT_EQ(waiting[0]["what"], "an odin exec's call, never resumed: they stay there");
  Ran text = RunOdin(ws_.path(), {"doctor"}, Env(llm));
  EXPECT_NE(text.out.find("writes of commands cut off\n  " + id + "  .odin/overlay/" + id + "/u: an odin exec"),
            std::string::npos)
      << text.out;
}

// A command that has ended, whose result the coordinator has not taken in
// yet (it is stopped here), still has its directory held: its worker lets
// go of it only at its next request, and the coordinator holds it from the
// result on until the directory is gone. Before, the worker let go at the
// command's end, and doctor called a live session's writes cut off.
TEST_F(OdinResumeTest, WritesOfACommandThatEndedStayHeldUntilTheCoordinatorHasThem) {
  std::string sleeper = "sleep 0.6" + std::to_string(getpid() % 1000);
  FakeLlm llm(
      json({{"responses",
             {Turn({Call("ExecuteCommand", {{"command", "echo data > made.txt && " + sleeper}})}), Text("done")}}})
          .dump());
  int out = -1;
  pid_t odin = StartOdin(ws_.path(), {"-p", "make the file", "--output-format", "json"}, &out, Env(llm));
  ASSERT_TRUE(WaitUntil([&] { return !ProcessesWithArg(sleeper).empty(); }, std::chrono::seconds(30)))
      << "the command never ran";
  std::string id;
  ASSERT_NO_FATAL_FAILURE(WaitForCommandStart(&id));
  std::string dir = ws_.Join(".odin/overlay/" + id);
  bool overlay = WaitUntil([&] {
    StatusOr<std::string> got = ReadFileToString(dir + "/u/made.txt");
    return got.ok() && !got->empty();
  });
  kill(odin, SIGSTOP);
  bool ended = WaitUntil([&] { return ProcessesWithArg(sleeper).empty(); });
  // Its worker's end of the command (the result sent) takes a moment more.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  // As a resume or a sweep asks (LockOverlayDir, exclusive).
  int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  bool held = fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  if (fd >= 0) close(fd);
  Ran doctor = RunOdin(ws_.path(), {"doctor", "--json"}, Env(llm));
  kill(odin, SIGCONT);
  std::string printed = ReadUntil(out, "\n}");
  close(out);
  EXPECT_EQ(Wait(odin), 0) << printed;
  if (!overlay) GTEST_SKIP() << "commands ran without the workspace overlay here";
  ASSERT_TRUE(ended) << "the command did not end";
  EXPECT_TRUE(held) << "an ended command's directory was free before the coordinator applied it";
  json waiting = json::parse(doctor.out, nullptr, false)["waiting_writes"];
  ASSERT_EQ(waiting.size(), 1u) << doctor.out;
  EXPECT_EQ(waiting[0]["state"], "running") << doctor.out;
  // And it landed as the command's.
  StatusOr<std::string> landed = ReadFileToString(ws_.Join("made.txt"));
  EXPECT_TRUE(landed.ok() && *landed == "data\n");
  EXPECT_TRUE(WaitUntil([&] { return !PathExists(dir); })) << "its directory was left";
}

// A session another odin process still runs is not taken up: the error
// names that process.
TEST_F(OdinResumeTest, ASessionStillRunningIsNotResumed) {
  TempWorkspace release;
  FakeLlm llm(json({{"responses", {{{"text", "answered late"}, {"hold_until", release.Join("go")}}}}}).dump());
  int out = -1;
  pid_t odin = StartOdin(ws_.path(), {"-p", "take your time", "--output-format", "json"}, &out, Env(llm));
  ASSERT_TRUE(WaitUntil([&] { return RequestsOf(llm).size() == 1; })) << "the first session never asked";
  // Its owner is written while its first request travels.
  ASSERT_TRUE(WaitUntil([&] { return Rows("SELECT COUNT(*) FROM conversation WHERE kind = 'owner'")[0] == "1"; }));
  last_ = RunOdin(ws_.path(), {"-c", "-p", "me too"}, Env(llm));
  EXPECT_EQ(last_.exit_code, 1);
  EXPECT_NE(last_.err.find("still running in odin process " + std::to_string(odin)), std::string::npos) << last_.err;
  ASSERT_TRUE(WriteFileAtomic(release.Join("go"), "").ok());
  ReadUntil(out, "\n}");
  close(out);
  EXPECT_EQ(Wait(odin), 0);
  // Once it has ended, it can be.
  EXPECT_EQ(RequestsOf(llm).size(), 1u);
}

}  // namespace
}  // namespace odin::testing
