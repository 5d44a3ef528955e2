// Isolated sessions and parallel attempts end to end, through the real
// odin: `odin -p --isolated`
// works in a view of its own (a copy of the workspace frozen when it
// starts), the workspace stays as it was until `odin apply` lands the
// session's change set, all or nothing, refusing where the workspace
// changed under it; `odin discard` drops the view; a session killed
// mid-call leaves its view for doctor, apply and discard. `odin -p
// --attempts N` runs N isolated sessions at once and lands the one whose
// checks pass with the smallest change.

#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/sha256.h"
#include "base/subprocess.h"
#include "tests/ledger_rows.h"
#include "tests/llm_requests.h"
#include "tests/test_util.h"
#include "tests/checks_project.h"

namespace odin::testing {
namespace {

using nlohmann::json;

constexpr int kFailed = 1;  // odin's exit code for an error (planner/run_outcome.h)

// The names in a directory, none when it is absent.
std::vector<std::string> Names(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) out.push_back(e.path().filename().string());
  return out;
}

class OdinIsolatedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(MakeDirs(ws_.Join(".git")).ok());
    ASSERT_TRUE(MakeDirs(user_.Join("config/odin")).ok());
    json config = {{"checks", {{"build", ""}, {"lint", ""}, {"tests", ""}}}};
    ASSERT_TRUE(WriteFileAtomic(user_.Join("config/odin/odinconfig.json"), config.dump()).ok());
    for (const char* name : {"a.txt", "b.txt", "c.txt"}) Put(name, std::string(1, name[0]) + "\n");
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
  Ran Odin(const std::vector<std::string>& args) { return RunOdin(ws_.path(), args, {{"ODIN_TEST_MARK", marker_}}); }
  void Put(const std::string& rel, const std::string& content) {
    ASSERT_TRUE(WriteFileAtomic(ws_.Join(rel), content).ok());
  }
  std::string Get(const std::string& rel) {
    StatusOr<std::string> s = ReadFileToString(ws_.Join(rel));
    return s.ok() ? *s : "(absent)";
  }
  // Every file of the workspace but Odin's state, with its content's hash.
  std::map<std::string, std::string> Hashes() { return TreeHashes(ws_.path()); }
  // A Read, then the write (read-before-edit).
  static json Read(const std::string& path) { return Turn({Call("Read", {{"file_path", path}})}); }
  static json Write(const std::string& path, const std::string& content) {
    return Turn({Call("WriteFile", {{"file_path", path}, {"content", content}})});
  }
  // a.txt and b.txt read, then written as A and B in one turn.
  static json WriteBoth() {
    return {Turn({Call("Read", {{"file_path", "a.txt"}}), Call("Read", {{"file_path", "b.txt"}})}),
            Turn({Call("WriteFile", {{"file_path", "a.txt"}, {"content", "A\n"}}),
                  Call("WriteFile", {{"file_path", "b.txt"}, {"content", "B\n"}})}),
            Text("Wrote both.")};
  }
  static json Command(const std::string& command) { return Turn({Call("ExecuteCommand", {{"command", command}})}); }
  // Lets a script held at hold go on, and returns what odin (pid, its
  // stdout on out) reported once it ended; it must end with 0.
  static std::string ReleaseAndReport(pid_t pid, int out, const std::string& hold) {
    EXPECT_TRUE(WriteFileAtomic(hold, "").ok());
    std::string text = ReadUntil(out, "\n}");
    close(out);
    EXPECT_EQ(Wait(pid), 0) << text;
    return text;
  }

  TempWorkspace ws_;
  TempWorkspace user_;  // XDG_CONFIG_HOME and XDG_STATE_HOME
  std::string marker_ = UniqueMarker();
  Ran last_;
};

// A session's write and command change its view only; the user's edits made
// meanwhile are not seen by it (its base was frozen at its start); apply
// lands exactly the session's change set, keeps the user's edits to files it
// did not touch, records one undoable execution and removes the view.
TEST_F(OdinIsolatedTest, TheWorkspaceStaysAsItWasUntilApplyLandsTheChangeSet) {
  FakeLlm llm(json({{"responses",
                     {Read("a.txt"), Write("a.txt", "A\n"), Text("Wrote a."),
                      Command("cat b.txt > seen.txt && echo new > n.txt"), Text("Ran it.")}}})
                  .dump());
  std::map<std::string, std::string> before = Hashes();
  json first = Prompt(llm, {"-p", "write a", "--isolated"});
  ASSERT_EQ(first["status"], "done") << last_.err;
  std::string session = first["session_id"];
  EXPECT_EQ(Hashes(), before) << "the workspace changed during an isolated session";
  // The user edits two files the session has not touched.
  Put("b.txt", "B by the user\n");
  Put("c.txt", "C by the user\n");
  before = Hashes();
  json second = Prompt(llm, {"-c", "-p", "run it"});
  ASSERT_EQ(second["status"], "done") << last_.err;
  EXPECT_EQ(second["session_id"], session);
  EXPECT_EQ(Hashes(), before) << "the workspace changed during an isolated session";

  Ran diff = Odin({"diff", session.substr(0, 10)});
  ASSERT_EQ(diff.exit_code, 0) << diff.err;
  EXPECT_NE(diff.out.find("modify a.txt"), std::string::npos) << diff.out;
  EXPECT_NE(diff.out.find("+A"), std::string::npos) << diff.out;
  EXPECT_NE(diff.out.find("create n.txt"), std::string::npos) << diff.out;
  EXPECT_NE(diff.out.find("create seen.txt"), std::string::npos) << diff.out;
  EXPECT_EQ(Get("a.txt"), "a\n");

  Ran applied = Odin({"apply", session, "--json"});
  ASSERT_EQ(applied.exit_code, 0) << applied.err;
  json a = json::parse(applied.out, nullptr, false);
  ASSERT_TRUE(a.is_object()) << applied.out;
  EXPECT_EQ(a["paths"], 3);
  EXPECT_EQ(Get("a.txt"), "A\n");
  EXPECT_EQ(Get("seen.txt"), "b\n") << "the session saw the user's edit made after it started";
  EXPECT_EQ(Get("n.txt"), "new\n");
  EXPECT_EQ(Get("b.txt"), "B by the user\n");
  EXPECT_EQ(Get("c.txt"), "C by the user\n");
  EXPECT_TRUE(Names(ws_.Join(".odin/views")).empty()) << "an applied view stays";
  // The view's files existed only under .odin: nothing else came along.
  std::map<std::string, std::string> now = Hashes();
  EXPECT_EQ(now.size(), before.size() + 2);
  EXPECT_EQ(Odin({"apply", session}).exit_code, kFailed) << "applied twice";
  // One execution puts it all back.
  Ran undone = Odin({"undo", a["execution_id"]});
  ASSERT_EQ(undone.exit_code, 0) << undone.err;
  EXPECT_EQ(Get("a.txt"), "a\n");
  EXPECT_EQ(Get("n.txt"), "(absent)");
  EXPECT_EQ(Get("seen.txt"), "(absent)");
  EXPECT_EQ(Get("b.txt"), "B by the user\n");
  Ran verify = Odin({"ledger", "verify"});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
}

// The user changes a file the session also changed: apply refuses, naming
// it, and writes nothing, not even the other paths.
TEST_F(OdinIsolatedTest, ApplyRefusesWhereTheWorkspaceChangedUnderTheSession) {
  FakeLlm llm(json({{"responses", WriteBoth()}}).dump());
  json done = Prompt(llm, {"-p", "write", "--isolated"});
  ASSERT_EQ(done["status"], "done") << last_.err;
  std::string session = done["session_id"];
  Put("a.txt", "a by the user\n");
  Ran applied = Odin({"apply", session});
  EXPECT_EQ(applied.exit_code, kFailed);
  EXPECT_NE(applied.err.find("a.txt: changed in the workspace since the session started"), std::string::npos)
      << applied.err;
  EXPECT_EQ(applied.err.find("b.txt"), std::string::npos) << applied.err;
  EXPECT_EQ(Get("a.txt"), "a by the user\n");
  EXPECT_EQ(Get("b.txt"), "b\n") << "a refused apply landed part of the change set";
  // Still there to look at, or drop.
  EXPECT_EQ(Odin({"diff", session}).exit_code, 0);
  // The user puts a.txt back; the view's b.txt is changed behind the
  // ledger's back: what lands is only what the session's record says.
  Put("a.txt", "a\n");
  std::vector<std::string> views = Names(ws_.Join(".odin/views"));
  ASSERT_EQ(views.size(), 1u);
  ASSERT_TRUE(WriteFileAtomic(ws_.Join(".odin/views/" + views[0] + "/tree/b.txt"), "planted\n").ok());
  Ran planted = Odin({"apply", session});
  EXPECT_EQ(planted.exit_code, kFailed);
  EXPECT_NE(planted.err.find("b.txt: the view's copy is not what the session left"), std::string::npos) << planted.err;
  EXPECT_EQ(Get("a.txt"), "a\n");
  EXPECT_EQ(Get("b.txt"), "b\n");
  Ran dropped = Odin({"discard", session});
  EXPECT_EQ(dropped.exit_code, 0) << dropped.err;
  EXPECT_EQ(Odin({"apply", session}).exit_code, kFailed) << "a discarded view applied";
}

// Two isolated sessions at once, each writing the same file: each view holds
// only its own change; the second apply is refused with the conflict named;
// discard leaves nothing behind.
TEST_F(OdinIsolatedTest, TwoSessionsAtOnceSeeOnlyTheirOwnChanges) {
  FakeLlm one(
      json({{"responses", {Command("echo one > a.txt && sleep 1 && cat a.txt > mine.txt"), Text("One.")}}}).dump());
  FakeLlm two(
      json({{"responses", {Command("echo two > a.txt && sleep 1 && cat a.txt > mine.txt"), Text("Two.")}}}).dump());
  int out1 = -1, out2 = -1;
  pid_t p1 = StartOdin(ws_.path(), {"-p", "one", "--isolated", "--output-format", "json"}, &out1, Env(one));
  pid_t p2 = StartOdin(ws_.path(), {"-p", "two", "--isolated", "--output-format", "json"}, &out2, Env(two));
  std::string r1 = ReadUntil(out1, "\n}"), r2 = ReadUntil(out2, "\n}");
  ASSERT_EQ(Wait(p1), 0) << r1;
  ASSERT_EQ(Wait(p2), 0) << r2;
  close(out1);
  close(out2);
  json j1 = json::parse(r1, nullptr, false), j2 = json::parse(r2, nullptr, false);
  ASSERT_TRUE(j1.is_object() && j2.is_object()) << r1 << r2;
  std::string s1 = j1["session_id"], s2 = j2["session_id"];
  ASSERT_NE(s1, s2);
  EXPECT_EQ(Get("a.txt"), "a\n");
  Ran d1 = Odin({"diff", s1}), d2 = Odin({"diff", s2});
  EXPECT_NE(d1.out.find("+one"), std::string::npos) << d1.out;
  EXPECT_EQ(d1.out.find("two"), std::string::npos) << d1.out;
  EXPECT_NE(d2.out.find("+two"), std::string::npos) << d2.out;
  EXPECT_EQ(d2.out.find("one"), std::string::npos) << d2.out;

  Ran first = Odin({"apply", s1});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(Get("a.txt"), "one\n");
  EXPECT_EQ(Get("mine.txt"), "one\n");
  Ran second = Odin({"apply", s2});
  EXPECT_EQ(second.exit_code, kFailed);
  EXPECT_NE(second.err.find("a.txt: changed in the workspace"), std::string::npos) << second.err;
  EXPECT_NE(second.err.find("mine.txt: changed in the workspace"), std::string::npos) << second.err;
  EXPECT_EQ(Get("a.txt"), "one\n");
  Ran dropped = Odin({"discard", s2});
  ASSERT_EQ(dropped.exit_code, 0) << dropped.err;
  EXPECT_TRUE(Names(ws_.Join(".odin/views")).empty()) << "discard left a view behind";
  json doctor = json::parse(Odin({"doctor", "--json"}).out, nullptr, false);
  ASSERT_TRUE(doctor.is_object());
  EXPECT_TRUE(doctor["isolated_views"]["views"].empty()) << doctor["isolated_views"].dump();
}

// odin killed (SIGKILL) while a command of an isolated session runs: the
// view survives, doctor lists it, apply lands what the session did, and the
// ledger verifies.
TEST_F(OdinIsolatedTest, AViewOutlivesAKilledSession) {
  FakeLlm llm(
      json({{"responses", {Read("a.txt"), Write("a.txt", "A\n"), Command("touch started && sleep 60"), Text("never")}}})
          .dump());
  int out = -1;
  pid_t pid = StartOdin(ws_.path(), {"-p", "work", "--isolated"}, &out, Env(llm));
  std::string views = ws_.Join(".odin/views");
  std::string started;
  ASSERT_TRUE(WaitUntil(
      [&] {
        std::vector<std::string> ids = Names(views);
        if (ids.empty()) return false;
        started = views + "/" + ids.front() + "/tree/started";
        return PathExists(started) || !ProcessesWithArg("sleep 60").empty();
      },
      std::chrono::seconds(60)));
  kill(pid, SIGKILL);
  Wait(pid);
  close(out);
  ASSERT_TRUE(WaitUntil([&] { return ProcessesWithArg("sleep 60").empty(); }, std::chrono::seconds(20)));
  EXPECT_EQ(Get("a.txt"), "a\n");
  json doctor = json::parse(Odin({"doctor", "--json"}).out, nullptr, false);
  ASSERT_TRUE(doctor.is_object());
  const json& listed = doctor["isolated_views"]["views"];
  ASSERT_EQ(listed.size(), 1u) << doctor["isolated_views"].dump();
  EXPECT_EQ(listed[0]["state"], "ended") << listed.dump();
  EXPECT_GT(listed[0]["bytes"].get<int64_t>(), 0);
  std::string session = listed[0]["session_id"];
  Ran applied = Odin({"apply", session});
  ASSERT_EQ(applied.exit_code, 0) << applied.err;
  EXPECT_EQ(Get("a.txt"), "A\n");
  Ran verify = Odin({"ledger", "verify"});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
}

// A workspace larger than isolation.max_view_mb is refused before anything
// is copied, in one line, and leaves no view.
TEST_F(OdinIsolatedTest, AWorkspaceLargerThanAViewMayBeIsRefused) {
  json config = {{"checks", {{"build", ""}, {"lint", ""}, {"tests", ""}}}, {"isolation", {{"max_view_mb", 1}}}};
  ASSERT_TRUE(WriteFileAtomic(user_.Join("config/odin/odinconfig.json"), config.dump()).ok());
  Put("big.bin", std::string(2 << 20, 'x'));
  FakeLlm llm(json({{"responses", {Text("never")}}}).dump());
  Ran r = RunOdin(ws_.path(), {"-p", "go", "--isolated"}, Env(llm));
  EXPECT_EQ(r.exit_code, kFailed);
  EXPECT_NE(r.err.find("more than an isolated view may take (isolation.max_view_mb: 1 MB)"), std::string::npos)
      << r.err;
  EXPECT_TRUE(Names(ws_.Join(".odin/views")).empty());
  EXPECT_TRUE(ScriptRequestsOf(llm).empty()) << "the model was asked";
}

// What the view was copied from stays out of reach: a command cannot read
// the workspace itself (its secrets may be hidden or masked only there), a
// Read cannot leave the view for Odin's state (the ledger is three levels
// up from it), and the session cannot be copied out of its view.
TEST_F(OdinIsolatedTest, TheSessionReachesNeitherTheWorkspaceNorOdinsState) {
  Put("secret.txt", "TOPSECRET\n");
  std::string real = ws_.Join("secret.txt");
  FakeLlm llm(json({{"responses",
                     {Command("cat " + real + " > got.txt 2>&1; cat secret.txt > mine.txt"), Read("../../../odin.db"),
                      Text("Done.")}}})
                  .dump());
  json r = Prompt(llm, {"-p", "look", "--isolated"});
  ASSERT_EQ(r["status"], "done") << last_.err;
  std::string session = r["session_id"];
  std::vector<std::string> ends =
      LedgerRows(ws_.Join(".odin/odin.db"), "SELECT status || ' ' || error FROM execution_ends ORDER BY seq");
  ASSERT_EQ(ends.size(), 2u);
  EXPECT_NE(ends[1].find("Odin's state directory"), std::string::npos) << ends[1];
  Ran applied = Odin({"apply", session});
  ASSERT_EQ(applied.exit_code, 0) << applied.err;
  EXPECT_EQ(Get("mine.txt"), "TOPSECRET\n") << "the view's own copy is the session's";
  EXPECT_EQ(Get("got.txt").find("TOPSECRET"), std::string::npos) << Get("got.txt");
  Ran fork = Odin({"sessions", "fork", session});
  EXPECT_NE(fork.exit_code, 0);
  EXPECT_NE(fork.err.find("ran in an isolated view"), std::string::npos) << fork.err;
}

// Root in another user's workspace runs commands as that user, who could
// not reach a view in root's state: refused in one line, nothing made.
TEST_F(OdinIsolatedTest, RootInAnotherUsersWorkspaceIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root: a workspace of another user";
  ASSERT_EQ(chown(ws_.path().c_str(), 4321, 4321), 0);
  FakeLlm llm(json({{"responses", {Text("never")}}}).dump());
  Ran r = RunOdin(ws_.path(), {"-p", "go", "--isolated"}, Env(llm));
  EXPECT_EQ(r.exit_code, kFailed);
  EXPECT_NE(r.err.find("isolated sessions need odin run as the workspace's owner"), std::string::npos) << r.err;
  EXPECT_TRUE(Names(ws_.Join(".odin/views")).empty());
  ASSERT_EQ(chown(ws_.path().c_str(), 0, 0), 0);
}

// An apply cut off half-way (one path landed, the other not) is finished by
// the next: the landed path is recorded with what was there before the
// first try, so one undo puts both back.
TEST_F(OdinIsolatedTest, AnApplyCutOffHalfWayIsFinishedByTheNext) {
  FakeLlm llm(json({{"responses", WriteBoth()}}).dump());
  json done = Prompt(llm, {"-p", "write", "--isolated"});
  ASSERT_EQ(done["status"], "done") << last_.err;
  Put("a.txt", "A\n");  // as the first try left it
  Ran applied = Odin({"apply", done["session_id"], "--json"});
  ASSERT_EQ(applied.exit_code, 0) << applied.err;
  EXPECT_EQ(Get("a.txt"), "A\n");
  EXPECT_EQ(Get("b.txt"), "B\n");
  json a = json::parse(applied.out, nullptr, false);
  ASSERT_TRUE(a.is_object()) << applied.out;
  Ran undone = Odin({"undo", a["execution_id"]});
  ASSERT_EQ(undone.exit_code, 0) << undone.err;
  EXPECT_EQ(Get("a.txt"), "a\n");
  EXPECT_EQ(Get("b.txt"), "b\n");
}

using OdinAttemptsTest = OdinIsolatedTest;

// odin killed (SIGKILL) while two attempts' commands run: doctor lists both
// views, one applies and the other is discarded afterwards, and the ledger
// verifies.
TEST_F(OdinAttemptsTest, AKilledAttemptsRunLeavesEachViewToApplyOrDiscard) {
  MakeProject(ws_, user_);
  // A duration no other test's command has: the processes are told apart.
  json attempt = {Write("src/x.c", "int x;\n"), Command("sleep 60.0417"), Text("never")};
  FakeLlm llm(
      json({{"responses", json::array()}, {"agents", {{"attempt 1 of 2", attempt}, {"attempt 2 of 2", attempt}}}})
          .dump());
  std::map<std::string, std::string> before = Hashes();
  int out = -1;
  pid_t pid = StartOdin(ws_.path(), {"-p", "add x", "--attempts", "2"}, &out, Env(llm));
  ASSERT_TRUE(WaitUntil([&] { return ProcessesWithArg("sleep 60.0417").size() >= 2; }, std::chrono::seconds(120)));
  kill(pid, SIGKILL);
  Wait(pid);
  close(out);
  ASSERT_TRUE(WaitUntil([&] { return ProcessesWithArg("sleep 60.0417").empty(); }, std::chrono::seconds(20)));
  EXPECT_EQ(Hashes(), before);
  json doctor = json::parse(Odin({"doctor", "--json"}).out, nullptr, false);
  ASSERT_TRUE(doctor.is_object());
  const json& listed = doctor["isolated_views"]["views"];
  ASSERT_EQ(listed.size(), 2u) << doctor["isolated_views"].dump();
  for (const json& v : listed) EXPECT_EQ(v["state"], "ended") << listed.dump();
  Ran applied = Odin({"apply", listed[0]["session_id"]});
  ASSERT_EQ(applied.exit_code, 0) << applied.out << applied.err;
  EXPECT_EQ(Get("src/x.c"), "int x;\n");
  Ran discarded = Odin({"discard", listed[1]["session_id"]});
  ASSERT_EQ(discarded.exit_code, 0) << discarded.out << discarded.err;
  EXPECT_TRUE(Names(ws_.Join(".odin/views")).empty());
  Ran verify = Odin({"ledger", "verify"});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
}

// The requests of attempt k of n (their first message names it).
int RequestsOfAttempt(const FakeLlm& llm, int k, int n) {
  std::string key = "attempt " + std::to_string(k) + " of " + std::to_string(n);
  int count = 0;
  for (const json& r : RequestsOf(llm)) count += r.dump().find(key) != std::string::npos ? 1 : 0;
  return count;
}

// Attempt 1 breaks the tests, attempt 2 passes with three files, attempt 3
// with one: attempt 3 lands; until then the workspace (every file, git's
// index) is as it was; the report gives all three verdicts.
TEST_F(OdinAttemptsTest, TheSmallestChangeWhoseChecksPassLands) {
  MakeProject(ws_, user_);
  std::string hold = user_.Join("release");
  FakeLlm llm(ThreeAttemptsScript(json::array(), {{"text", "Done."}, {"hold_until", hold}}).dump());
  std::map<std::string, std::string> before = Hashes();
  ASSERT_NE(before.count(".git/index"), 0u);
  int out = -1;
  pid_t pid = StartOdin(ws_.path(), {"-p", "add x", "--attempts", "3", "--output-format", "json"}, &out, Env(llm));
  // Attempt 3 waits for its last answer: everything has run but its end.
  ASSERT_TRUE(WaitUntil([&] { return RequestsOfAttempt(llm, 3, 3) >= 2; }, std::chrono::seconds(120)));
  EXPECT_EQ(Hashes(), before) << "the workspace changed before an attempt landed";
  std::string text = ReleaseAndReport(pid, out, hold);
  json r = json::parse(text, nullptr, false);
  ASSERT_TRUE(r.is_object()) << text;
  ASSERT_EQ(r["attempts"].size(), 3u) << text;
  const json& a = r["attempts"];
  EXPECT_FALSE(a[0]["passes"]) << a[0].dump();
  EXPECT_NE(a[0]["why"].get<std::string>().find("not_converged"), std::string::npos) << a[0].dump();
  EXPECT_TRUE(a[1]["passes"]) << a[1].dump();
  EXPECT_EQ(a[1]["files"], 3)
      << a[1].dump() << "\n"
      << ::testing::PrintToString(
             LedgerRows(ws_.Join(".odin/odin.db"),
                        "SELECT e.tool || ' ' || e.args_json || ' -> ' || coalesce(x.status, '') || ' ' || "
                        "coalesce(x.error, '') FROM execution_starts e LEFT JOIN execution_ends x ON "
                        "x.execution_id = e.execution_id WHERE e.session_id = ?",
                        a[1]["session_id"].get<std::string>()));
  EXPECT_TRUE(a[2]["passes"]) << a[2].dump();
  EXPECT_EQ(a[2]["files"], 1);
  EXPECT_EQ(r["winner"], 3);
  EXPECT_EQ(Get("src/x.c"), "int x;\n");
  EXPECT_EQ(Get("src/y.c"), "(absent)");
  EXPECT_EQ(Get("src/z.c"), "(absent)");
  // The losers stay to be looked at.
  Ran diff = Odin({"diff", a[1]["session_id"]});
  EXPECT_NE(diff.out.find("create src/y.c"), std::string::npos) << diff.out << diff.err;
  // Each attempt's record holds the verdicts.
  std::vector<std::string> judged =
      LedgerRows(ws_.Join(".odin/odin.db"), "SELECT session_id FROM gate_events WHERE kind = 'attempts_judged'");
  EXPECT_EQ(judged.size(), 3u);
}

// No attempt passes: nothing lands, exit 3, every verdict says why. (The
// user's config asks for two attempts.)
TEST_F(OdinAttemptsTest, WhenNoAttemptPassesNothingLands) {
  MakeProject(ws_, user_, 2);
  FakeLlm llm(json({{"responses", json::array()},
                    {"agents",
                     {{"attempt 1 of 2", {Write("src/x.c", "BROKEN 1\n"), Text("Done."), Text("Done.")}},
                      {"attempt 2 of 2", {Write("src/y.c", "BROKEN 2\n"), Text("Done."), Text("Done.")}}}}})
                  .dump());
  std::map<std::string, std::string> before = Hashes();
  json r = Prompt(llm, {"-p", "add x"});
  EXPECT_EQ(last_.exit_code, 3) << last_.out << last_.err;
  EXPECT_TRUE(r["winner"].is_null()) << r.dump();
  ASSERT_EQ(r["attempts"].size(), 2u);
  for (const json& a : r["attempts"]) EXPECT_FALSE(a["passes"]) << a.dump();
  EXPECT_EQ(Hashes(), before);
}

// An attempt that makes the tests pass by deleting or skipping them cannot
// win, however small.
TEST_F(OdinAttemptsTest, AnAttemptThatWeakensTestsCannotWin) {
  MakeProject(ws_, user_);
  ASSERT_TRUE(MakeDirs(ws_.Join("tests")).ok());
  Put("tests/test_x.py", "def test_x():\n    assert x() == 1\n    assert y() == 2\n");
  FakeLlm llm(json({{"responses", json::array()},
                    {"agents",
                     {{"attempt 1 of 2",
                       {Read("tests/test_x.py"), Write("tests/test_x.py", "def test_x():\n    assert x() == 1\n"),
                        Text("Done.")}},
                      {"attempt 2 of 2",
                       {Turn({Call("WriteFile", {{"file_path", "src/x.c"}, {"content", "int x;\n"}}),
                              Call("WriteFile", {{"file_path", "src/y.c"}, {"content", "int y;\n"}})}),
                        Text("Done.")}}}}})
                  .dump());
  json r = Prompt(llm, {"-p", "fix", "--attempts", "2"});
  EXPECT_EQ(last_.exit_code, 0) << last_.out << last_.err;
  ASSERT_EQ(r["attempts"].size(), 2u) << r.dump();
  EXPECT_FALSE(r["attempts"][0]["passes"]) << r.dump();
  EXPECT_NE(r["attempts"][0]["why"].get<std::string>().find("assertion"), std::string::npos) << r.dump();
  EXPECT_EQ(r["winner"], 2);
  EXPECT_EQ(Get("tests/test_x.py"), "def test_x():\n    assert x() == 1\n    assert y() == 2\n");
}

// Apply judges the change set against the workspace as it is then: a file
// the user added meanwhile (no conflict: the session never touched it)
// makes the tests fail on the workspace with the change, so nothing lands;
// once the user takes it away again, the tests pass, and it lands.
TEST_F(OdinAttemptsTest, ApplyReValidatesAgainstTheWorkspaceAsItIsNow) {
  MakeProject(ws_, user_);
  FakeLlm llm(json({{"responses", {Write("src/x.c", "int x;\n"), Text("Done.")}}}).dump());
  json r = Prompt(llm, {"-p", "add x", "--isolated"});
  ASSERT_EQ(r["status"], "done") << last_.err;
  std::string session = r["session_id"];
  Put("src/user.c", "BROKEN by the user\n");
  // Under the user's config, which says what the tests are.
  Ran refused = RunOdin(ws_.path(), {"apply", session}, Env(llm));
  EXPECT_EQ(refused.exit_code, kFailed) << refused.out;
  EXPECT_NE(refused.err.find("re-validated against the workspace as it is now: with 1 path changed in the "
                             "workspace since the session started (src/user.c), the tests check fails"),
            std::string::npos)
      << refused.err;
  EXPECT_NE(refused.err.find("re-validating on the workspace as it is now: tests: ! grep -rq BROKEN src"),
            std::string::npos)
      << refused.err;
  EXPECT_EQ(Get("src/x.c"), "(absent)") << "a change set that fails with the workspace as it is landed";
  EXPECT_EQ(Get("src/user.c"), "BROKEN by the user\n");
  ASSERT_TRUE(std::filesystem::remove(ws_.Join("src/user.c")));
  Ran applied = RunOdin(ws_.path(), {"apply", session, "--json"}, Env(llm));
  ASSERT_EQ(applied.exit_code, 0) << applied.err;
  json a = json::parse(applied.out, nullptr, false);
  ASSERT_TRUE(a.is_object()) << applied.out;
  EXPECT_EQ(a["drift"], 0) << applied.out;
  EXPECT_EQ(Get("src/x.c"), "int x;\n");
  EXPECT_EQ(Get("src/user.c"), "(absent)");
  std::vector<std::string> rechecks =
      LedgerRows(ws_.Join(".odin/odin.db"),
                 "SELECT json_extract(detail_json, '$.passed') FROM gate_events WHERE kind = "
                 "'view_rechecked' AND session_id = ? ORDER BY seq",
                 session);
  EXPECT_EQ(rechecks, (std::vector<std::string>{"0", "1"}));
  Ran verify = Odin({"ledger", "verify"});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
}

// What the view holds beyond the change set never lands, so it is not what
// apply judges: the session makes its own checks pass with a file git
// ignores (build/ok), which stays behind in its view; on the workspace as
// it is now with the change, the tests fail, and apply refuses.
TEST_F(OdinAttemptsTest, ApplyJudgesWhatLandsNotWhatTheViewHolds) {
  MakeProject(ws_, user_);
  json config = {{"checks", {{"build", ""}, {"lint", ""}, {"tests", "sh check.sh"}, {"retry_cap", 1}}}};
  ASSERT_TRUE(WriteFileAtomic(user_.Join("config/odin/odinconfig.json"), config.dump()).ok());
  Put("check.sh", "test -f build/ok || ! grep -rq BROKEN src\n");
  Put(".gitignore", "build/\n");
  FakeLlm llm(json({{"responses",
                     {Write("src/notes.txt", "BROKEN\n"), Command("mkdir -p build && touch build/ok"), Text("Done.")}}})
                  .dump());
  json r = Prompt(llm, {"-p", "add x", "--isolated"});
  ASSERT_EQ(r["status"], "done") << last_.err << "\nthe session's own checks should pass in its view";
  Ran refused = RunOdin(ws_.path(), {"apply", r["session_id"]}, Env(llm));
  EXPECT_EQ(refused.exit_code, kFailed) << refused.out;
  EXPECT_NE(refused.err.find("the tests check fails"), std::string::npos) << refused.err;
  EXPECT_EQ(Get("src/notes.txt"), "(absent)");
  EXPECT_EQ(Get("build/ok"), "(absent)");
  // The user may land it anyway, knowingly.
  Ran forced = RunOdin(ws_.path(), {"apply", r["session_id"], "--no-recheck"}, Env(llm));
  EXPECT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_EQ(Get("src/notes.txt"), "BROKEN\n");
  EXPECT_EQ(Get("build/ok"), "(absent)");
}

// attempts.budget gives each attempt limits of its own: one tool call each
// here, so the attempt that needs two stops (budget_exceeded) and cannot
// win; the one that needs one lands.
TEST_F(OdinAttemptsTest, EachAttemptHasTheBudgetAttemptsBudgetGivesIt) {
  MakeProject(ws_, user_);
  json config = {{"checks", {{"build", ""}, {"lint", ""}, {"tests", ""}}},
                 {"budgets", {{"max_tool_calls", 100}}},
                 {"attempts", {{"budget", {{"max_tool_calls", 1}}}}}};
  ASSERT_TRUE(WriteFileAtomic(user_.Join("config/odin/odinconfig.json"), config.dump()).ok());
  FakeLlm llm(json({{"responses", json::array()},
                    {"agents",
                     {{"attempt 1 of 2",
                       {Write("src/x.c", "int x;\n"), Write("src/y.c", "int y;\n"), Text("Done."), Text("Done.")}},
                      {"attempt 2 of 2", {Write("src/x.c", "int x;\n"), Text("Done.")}}}}})
                  .dump());
  json r = Prompt(llm, {"-p", "add x", "--attempts", "2"});
  EXPECT_EQ(last_.exit_code, 0) << last_.out << last_.err;
  ASSERT_EQ(r["attempts"].size(), 2u) << r.dump();
  EXPECT_EQ(r["attempts"][0]["status"], "budget_exceeded") << r.dump();
  EXPECT_FALSE(r["attempts"][0]["passes"]) << r.dump();
  EXPECT_EQ(r["winner"], 2) << r.dump();
  EXPECT_EQ(Get("src/y.c"), "(absent)");
}

// attempts.variants sets each attempt's model temperature: it reaches the
// model's requests, attempt by attempt.
TEST_F(OdinAttemptsTest, EachVariantsTemperatureReachesItsAttemptsRequests) {
  MakeProject(ws_, user_);
  json config = {{"checks", {{"build", ""}, {"lint", ""}, {"tests", ""}}},
                 {"attempts", {{"variants", {{{"temperature", 0.25}}, {{"temperature", 1.5}}}}}}};
  ASSERT_TRUE(WriteFileAtomic(user_.Join("config/odin/odinconfig.json"), config.dump()).ok());
  FakeLlm llm(json({{"responses", json::array()},
                    {"agents",
                     {{"attempt 1 of 2", {Write("src/x.c", "int x;\n"), Text("Done.")}},
                      {"attempt 2 of 2", {Write("src/x.c", "int x;\n"), Text("Done.")}}}}})
                  .dump());
  Prompt(llm, {"-p", "add x", "--attempts", "2"});
  EXPECT_EQ(last_.exit_code, 0) << last_.err;
  std::map<int, std::set<double>> seen;
  for (const json& r : RequestsOf(llm)) {
    for (int k : {1, 2}) {
      if (r.dump().find("attempt " + std::to_string(k) + " of 2") == std::string::npos) continue;
      const json& body = r["body"];
      seen[k].insert(body.contains("temperature") ? body["temperature"].get<double>() : -1);
    }
  }
  EXPECT_EQ(seen[1], (std::set<double>{0.25}));
  EXPECT_EQ(seen[2], (std::set<double>{1.5}));
}

// Attempts are re-validated as they land: the user adds a file while they
// run, with which the smallest change fails the tests; the next one, which
// passes with it, lands instead, and the report says why the first lost.
TEST_F(OdinAttemptsTest, AWinnerThatFailsWithTheWorkspaceAsItIsNowLosesToTheNext) {
  MakeProject(ws_, user_);
  json config = {{"checks", {{"build", ""}, {"lint", ""}, {"tests", "sh check.sh"}, {"retry_cap", 1}}}};
  ASSERT_TRUE(WriteFileAtomic(user_.Join("config/odin/odinconfig.json"), config.dump()).ok());
  // With src/user.c there, src/y.c must be there too.
  Put("check.sh", "! grep -rq BROKEN src && { [ ! -e src/user.c ] || [ -e src/y.c ]; }\n");
  std::string hold = user_.Join("release");
  json last = {{"text", "Done."}, {"hold_until", hold}};
  FakeLlm llm(json({{"responses", json::array()},
                    {"agents",
                     {{"attempt 1 of 2", {Write("src/x.c", "int x;\n"), last}},
                      {"attempt 2 of 2",
                       {Turn({Call("WriteFile", {{"file_path", "src/x.c"}, {"content", "int x;\n"}}),
                              Call("WriteFile", {{"file_path", "src/y.c"}, {"content", "int y;\n"}})}),
                        last}}}}})
                  .dump());
  int out = -1;
  pid_t pid = StartOdin(ws_.path(), {"-p", "add x", "--attempts", "2", "--output-format", "json"}, &out, Env(llm));
  ASSERT_TRUE(WaitUntil([&] { return RequestsOfAttempt(llm, 1, 2) >= 2 && RequestsOfAttempt(llm, 2, 2) >= 2; },
                        std::chrono::seconds(120)));
  Put("src/user.c", "int user;\n");
  std::string text = ReleaseAndReport(pid, out, hold);
  json r = json::parse(text, nullptr, false);
  ASSERT_TRUE(r.is_object()) << text;
  ASSERT_EQ(r["attempts"].size(), 2u) << text;
  EXPECT_FALSE(r["attempts"][0]["passes"]) << text;
  EXPECT_NE(r["attempts"][0]["why"].get<std::string>().find(
                "not against the workspace as it is now: with 1 path changed in the workspace since the session "
                "started (src/user.c), the tests check fails"),
            std::string::npos)
      << text;
  EXPECT_EQ(r["winner"], 2) << text;
  EXPECT_EQ(Get("src/x.c"), "int x;\n");
  EXPECT_EQ(Get("src/y.c"), "int y;\n");
  EXPECT_EQ(Get("src/user.c"), "int user;\n");
}

// A view shares the workspace's git objects (alternates) rather than
// copying them: git in the session reads history and sees its own change.
TEST_F(OdinAttemptsTest, GitInAViewReadsTheWorkspacesHistory) {
  MakeProject(ws_, user_);
  FakeLlm llm(json({{"responses",
                     {Command("echo 'int y;' >> src/main.c && git show HEAD:src/main.c > shown.txt && git status "
                              "--short src > status.txt"),
                      Text("Done.")}}})
                  .dump());
  json r = Prompt(llm, {"-p", "look", "--isolated"});
  ASSERT_EQ(r["status"], "done") << last_.err;
  std::vector<std::string> views = Names(ws_.Join(".odin/views"));
  ASSERT_EQ(views.size(), 1u);
  std::string objects = ws_.Join(".odin/views/" + views[0] + "/tree/.git/objects");
  StatusOr<std::string> alternates = ReadFileToString(objects + "/info/alternates");
  EXPECT_TRUE(alternates.ok() && *alternates == ws_.Join(".git/objects") + "\n");
  std::vector<std::string> own = Names(objects);
  EXPECT_EQ(own.size(), 2u) << "the view copied git's objects";  // info, pack
  Ran applied = Odin({"apply", r["session_id"]});
  ASSERT_EQ(applied.exit_code, 0) << applied.err;
  EXPECT_EQ(Get("shown.txt"), "int main(void) { return 0; }\n");
  EXPECT_EQ(Get("status.txt"), " M src/main.c\n");
}

}  // namespace
}  // namespace odin::testing
