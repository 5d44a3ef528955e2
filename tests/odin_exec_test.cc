// End-to-end tests of `odin exec` through the real binaries: odin, the
// odin-sandbox launcher, bubblewrap and odin-worker.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "tests/test_util.h"

namespace odin::testing {
namespace {

using nlohmann::json;

bool BwrapWorks() {
  static const bool works = system("bwrap --ro-bind / / --unshare-pid --unshare-net true >/dev/null 2>&1") == 0;
  return works;
}

#define REQUIRE_BWRAP()                                                   \
  if (!BwrapWorks())                                                      \
  GTEST_SKIP() << "bubblewrap cannot create namespaces on this machine; " \
                  "the sandbox layer cannot be tested here"

class OdinExecTest : public ::testing::Test {
 protected:
  // Runs odin under this fixture's sandbox policy.
  Ran Odin(std::vector<std::string> args, std::map<std::string, std::string> env = {}) {
    if (!sandbox_.empty()) args.insert(args.begin(), {"--sandbox", sandbox_});
    Ran r = RunOdin(ws_.path(), args, Env(std::move(env)));
    // An unsandboxed run says so on stderr; the tests look past that line.
    const std::string warning = "odin exec: warning: running WITHOUT a sandbox (none: sandbox off by policy)\n";
    if (sandbox_ == "off" && r.err.rfind(warning, 0) == 0) r.err.erase(0, warning.size());
    return r;
  }
  // The environment of every odin here: the user's config and state
  // directories are the test's own.
  std::map<std::string, std::string> Env(std::map<std::string, std::string> more = {}) {
    more.insert({{"ODIN_TEST_MARK", marker_},
                 {"XDG_CONFIG_HOME", user_.Join("config")},
                 {"XDG_STATE_HOME", user_.Join("state")}});
    return more;
  }
  // The user's odinconfig.json: settings a workspace's file may not make
  // until trusted (the sandbox's, the workers').
  void UserConfig(const std::string& text) {
    ASSERT_TRUE(MakeDirs(user_.Join("config/odin")).ok());
    ASSERT_TRUE(WriteFileAtomic(user_.Join("config/odin/odinconfig.json"), text).ok());
  }
  json LastExecution() {
    Ran r = Odin({"log", "--json", "--limit", "1"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    json rows = json::parse(r.out);
    return rows.empty() ? json() : rows[0];
  }
  // Nothing started by this test may outlive it.
  void TearDown() override {
    EXPECT_TRUE(ProcessesLeftWithEnv("ODIN_TEST_MARK", marker_).empty()) << "processes left behind";
  }
  // After any fault, odin must still work.
  void ExpectNextExecWorks() {
    Ran r = Odin({"exec", "--", "echo", "still fine"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "still fine\n");
  }

  TempWorkspace ws_;
  TempWorkspace user_;  // XDG_CONFIG_HOME and XDG_STATE_HOME
  std::string marker_ = UniqueMarker();
  std::string sandbox_;  // empty: the default policy (auto)
};

// The faults of issue 2, with the sandbox (bubblewrap) and without it (the
// fallback when bubblewrap is unusable): both must record the right outcome
// and leave no process behind.
class OdinExecFaultTest : public OdinExecTest, public ::testing::WithParamInterface<std::string> {
 protected:
  void SetUp() override {
    sandbox_ = GetParam();
    if (sandbox_ == "auto" && !BwrapWorks()) {
      GTEST_SKIP() << "bubblewrap cannot create namespaces on this machine; the unsandboxed variant runs";
    }
  }
  std::string Sandbox() const { return sandbox_; }
};

INSTANTIATE_TEST_SUITE_P(Policies, OdinExecFaultTest, ::testing::Values("auto", "off"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param == "auto" ? std::string("Sandboxed") : std::string("Unsandboxed");
                         });

TEST_P(OdinExecFaultTest, PassesExitStatusAndStreamsThrough) {
  Ran r = Odin({"exec", "--", "sh", "-c", "echo to-out; echo to-err >&2; exit 71"});
  EXPECT_EQ(r.exit_code, 71);
  EXPECT_EQ(r.out, "to-out\n");
  EXPECT_EQ(r.err, "to-err\n");
  json e = LastExecution();
  EXPECT_EQ(e["status"], "error");
  EXPECT_EQ(e["exit_code"], 71);
  EXPECT_EQ(e["tool"], "ExecuteCommand");
  EXPECT_EQ(e["output_bytes"], 14);
}

TEST_P(OdinExecFaultTest, SegfaultGives139AndIsRecorded) {
  Ran r = Odin({"exec", "--", "sh", "-c", "kill -SEGV $$"});
  EXPECT_EQ(r.exit_code, 139);
  EXPECT_EQ(LastExecution()["exit_code"], 139);
  ExpectNextExecWorks();
}

TEST_P(OdinExecFaultTest, SigkillGives137) {
  Ran r = Odin({"exec", "--", "sh", "-c", "kill -KILL $$"});
  EXPECT_EQ(r.exit_code, 137);
  EXPECT_EQ(LastExecution()["status"], "error");
  ExpectNextExecWorks();
}

TEST_P(OdinExecFaultTest, CommandThatKillsItsWorkerIsRecordedAsCrashed) {
  Ran r = Odin({"exec", "--", "sh", "-c", "kill -KILL $PPID; sleep 30"});
  EXPECT_EQ(r.exit_code, 125);
  EXPECT_NE(r.err.find("died while running the call"), std::string::npos) << r.err;
  json e = LastExecution();
  EXPECT_EQ(e["status"], "crashed");
  EXPECT_EQ(e["exit_reason"], "crashed");
  EXPECT_TRUE(e["exit_code"].is_null());
  ExpectNextExecWorks();
}

TEST_P(OdinExecFaultTest, WorkerThatStopsHeartbeatingIsReplaced) {
  UserConfig(R"({"workers":{"heartbeat_ms":100}})");
  // The command freezes its own worker: no more heartbeats.
  Ran r = Odin({"exec", "--", "sh", "-c", "kill -STOP $PPID; sleep 30"});
  EXPECT_EQ(r.exit_code, 125);
  EXPECT_NE(r.err.find("stopped heartbeating"), std::string::npos) << r.err;
  EXPECT_EQ(LastExecution()["status"], "crashed");
  ExpectNextExecWorks();
}

TEST_P(OdinExecFaultTest, CommandThatNeverExitsTimesOutWith124) {
  Ran r = Odin({"exec", "--timeout", "0.5", "--", "sh", "-c", "trap '' TERM; echo begun; sleep 1000"});
  EXPECT_EQ(r.exit_code, 124);
  EXPECT_EQ(r.out, "begun\n");
  EXPECT_NE(r.err.find("timed out"), std::string::npos);
  json e = LastExecution();
  EXPECT_EQ(e["status"], "timed_out");
  EXPECT_EQ(e["exit_code"], 124);
  ExpectNextExecWorks();
}

TEST_P(OdinExecFaultTest, ChildrenThatOutliveTheCommandAreKilled) {
  Ran r = Odin({"exec", "--", "sh", "-c", "sleep 1000 & setsid sleep 1000 & echo started"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "started\n");
  // TearDown checks that neither sleep survived.
}

// odin exec ends once its call is recorded and written out, without
// waiting for its sandbox to be taken down (its launcher's parent-death
// signal does that): whatever must outlast it is done by then.
TEST_P(OdinExecFaultTest, WhatMustOutliveItIsDoneWhenItEnds) {
  TempWorkspace tmp;  // TMPDIR: where the workers' sockets are
  Ran r = Odin({"exec", "--", "sh", "-c", "echo made > made.txt; echo done"}, {{"TMPDIR", tmp.path()}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "done\n");
  // Landed, and recorded as ended (another process reads it at once).
  StatusOr<std::string> made = ReadFileToString(ws_.Join("made.txt"));
  EXPECT_TRUE(made.ok() && *made == "made\n");
  json e = LastExecution();
  EXPECT_EQ(e["status"], "ok");
  EXPECT_EQ(e["exit_code"], 0);
  // Nothing of the call left in the state directory or beside the sockets.
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(ws_.Join(".odin/overlay"), ec)) {
    ADD_FAILURE() << "left in .odin/overlay: " << entry.path();
  }
  for (const auto& entry : std::filesystem::directory_iterator(tmp.path())) {
    ADD_FAILURE() << "left in TMPDIR: " << entry.path();
  }
  // And the sandbox's processes go with it (TearDown waits a few seconds).
}

TEST_F(OdinExecTest, GigabyteOfOutputIsCountedAndCappedInTheLedger) {
  Ran r = Odin({"exec", "--json", "--", "head", "-c", "1073741824", "/dev/zero"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json result = json::parse(r.out);
  EXPECT_EQ(result["output_bytes"], 1073741824LL);
  Ran show = Odin({"show", "--json", result["execution_id"]});
  json s = json::parse(show.out);
  ASSERT_EQ(s["artifacts"].size(), 1u);
  EXPECT_EQ(s["artifacts"][0]["size"], 1073741824LL);
  EXPECT_EQ(s["artifacts"][0]["stored_bytes"], 8u << 20);
  EXPECT_EQ(s["artifacts"][0]["truncated"], true);
  EXPECT_EQ(s["output_head"].get<std::string>().size(), 65536u);
  ExpectNextExecWorks();
}

TEST_F(OdinExecTest, StreamedGigabyteReachesStdout) {
  Ran r = Odin({"exec", "--", "sh", "-c", "head -c 1073741824 /dev/zero; echo end >&2"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.err, "end\n");
  EXPECT_EQ(LastExecution()["output_bytes"], 1073741828LL);
}

TEST_P(OdinExecFaultTest, MissingProgramGives127) {
  Ran r = Odin({"exec", "--", "odin-no-such-program"});
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_NE(r.err.find("odin-no-such-program: command not found"), std::string::npos);
  EXPECT_EQ(LastExecution()["exit_code"], 127);
}

TEST_F(OdinExecTest, SecretsAreScrubbedFromTheCommandAndRedactedInTheLedger) {
  Ran r = RunOdin(
      ws_.path(),
      {"exec", "--", "sh", "-c", "echo key=${OPENAI_API_KEY:-unset}; echo ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"},
      Env({{"OPENAI_API_KEY", "sk-test-1234567890abcdefghijkl"}}));
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("key=unset"), std::string::npos);
  json e = LastExecution();
  EXPECT_EQ(e["output_head"], "key=unset\n[REDACTED]\n");
}

TEST_F(OdinExecTest, SandboxKeepsRootReadOnlyTheLedgerHiddenAndNetworkOff) {
  REQUIRE_BWRAP();
  ASSERT_EQ(Odin({"exec", "--", "true"}).exit_code, 0);  // creates the ledger
  Ran r = Odin({"exec", "--", "sh", "-c",
                "touch /usr/odin-probe 2>/dev/null && echo root-writable; "
                "test -e .odin/odin.db && echo ledger-visible; "
                "touch .odin/planted 2>/dev/null && echo state-writable; "
                "touch workspace-file && echo workspace-writable; "
                "tail -n +3 /proc/net/dev | grep -vc ' lo:'; echo pid=$$"});
  ASSERT_EQ(r.out.rfind("workspace-writable\n0\npid=", 0), 0u) << r.out << r.err;
  EXPECT_LT(std::stoi(r.out.substr(r.out.find("pid=") + 4)), 10) << "not in a pid namespace";
  EXPECT_TRUE(PathExists(ws_.Join("workspace-file")));
  EXPECT_TRUE(PathExists(ws_.Join(".odin/odin.db")));
  EXPECT_EQ(Odin({"ledger", "verify"}).exit_code, 0);
}

// Network for commands: off unless the user asks (--network, or
// sandbox.network in their own config), and then for edit mode only.
TEST_F(OdinExecTest, CommandsReachTheNetworkOnlyWhenTheUserAsksAndOnlyInEditMode) {
  REQUIRE_BWRAP();
  // A listener outside the sandbox, on the host's loopback.
  int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(listener, 16), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  std::string connect = ": </dev/tcp/127.0.0.1/" + std::to_string(ntohs(addr.sin_port)) +
                        " 2>/dev/null && echo connected || echo refused";
  auto run = [&](std::vector<std::string> flags) {
    flags.insert(flags.end(), {"--", "bash", "-c", connect});
    return Odin(flags);
  };

  Ran r = run({"exec"});
  EXPECT_EQ(r.out, "refused\n") << r.err;
  EXPECT_FALSE(LastExecution()["result"].contains("network"));

  r = run({"--network", "exec"});
  EXPECT_EQ(r.out, "connected\n") << r.err;
  EXPECT_EQ(LastExecution()["result"]["network"], true) << "the ledger marks a command that had the network";
  r = run({"--network", "exec", "--mode", "edit"});
  EXPECT_EQ(r.out, "connected\n") << r.err;
  // Never in ask or plan: their workers are read-only and have no network.
  for (const char* mode : {"ask", "plan"}) {
    r = run({"--network", "exec", "--mode", mode});
    EXPECT_EQ(r.out, "refused\n") << mode << " " << r.err;
  }

  // A repository cannot turn it on: its odinconfig.json's sandbox.network
  // is ignored, with a notice, until the user trusts the workspace.
  ASSERT_TRUE(WriteFileAtomic(ws_.Join("odinconfig.json"), R"({"sandbox":{"network":true}})").ok());
  r = run({"exec"});
  EXPECT_EQ(r.out, "refused\n");
  EXPECT_NE(r.err.find("untrusted workspace: ignoring sandbox.network"), std::string::npos) << r.err;
  ASSERT_EQ(unlink(ws_.Join("odinconfig.json").c_str()), 0);

  // The user's own config may.
  UserConfig(R"({"sandbox":{"network":true}})");
  r = run({"exec"});
  EXPECT_EQ(r.out, "connected\n") << r.err;
  r = Odin({"doctor"});
  EXPECT_NE(r.out.find("network for commands  on: edit mode's commands reach the network (sandbox.network)"),
            std::string::npos)
      << r.out;
  close(listener);
}

// Issue 47: doctor says what validates a language's files when its server
// cannot run (rust-analyzer is missing on Debian 12; cargo check stands in).
TEST_F(OdinExecTest, DoctorNamesTheCheckCommandBehindEachLanguageServer) {
  UserConfig(R"({"validation":{"servers":{"rust-analyzer":{"command":["/nonexistent/rust-analyzer"]}},
                 "check_commands":{".rs":["/bin/true","{file}"]}}})");
  Ran r = Odin({"doctor"});
  EXPECT_NE(r.out.find("  rust-analyzer  not found  (.rs; else /bin/true {file})\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(.go; no check command)\n"), std::string::npos) << r.out;
  Ran j = Odin({"doctor", "--json"});
  EXPECT_NE(j.out.find("\"fallback\": \"/bin/true {file}\""), std::string::npos) << j.out;
}

// Whether changes made outside Odin can be watched here: the directories
// to watch (.git and .odin aside) against the kernel's watch limit.
TEST_F(OdinExecTest, DoctorSaysWhetherTheTreeCanBeWatched) {
  ASSERT_TRUE(MakeDirs(ws_.Join("src/a/b")).ok());
  ASSERT_TRUE(MakeDirs(ws_.Join("src/c")).ok());
  ASSERT_TRUE(MakeDirs(ws_.Join(".git/objects/00")).ok());
  Ran j = Odin({"doctor", "--json"});
  json d = json::parse(j.out, nullptr, false);
  ASSERT_FALSE(d.is_discarded()) << j.out;
  // The root, src, src/a, src/a/b, src/c.
  EXPECT_EQ(d["external_changes"]["directories"], 5) << d["external_changes"];
  EXPECT_EQ(d["external_changes"]["watched"], true);
  EXPECT_GT(d["external_changes"]["limit"].get<int64_t>(), 5);
  Ran r = Odin({"doctor"});
  EXPECT_NE(r.out.find("external changes  watched (inotify): 5 directories to watch"), std::string::npos) << r.out;
}

TEST_F(OdinExecTest, AMissingBwrapPathIsAnErrorNotAFallback) {
  // A typo in sandbox.bwrap must not turn the sandbox off.
  UserConfig(R"({"sandbox":{"bwrap":"/nonexistent/bwrap"}})");
  Ran r = Odin({"exec", "--", "touch", "ran"});
  EXPECT_EQ(r.exit_code, 125);
  EXPECT_NE(r.err.find("the configured bwrap /nonexistent/bwrap is not an executable file"), std::string::npos)
      << r.err;
  EXPECT_FALSE(PathExists(ws_.Join("ran")));
  // Under every policy but off.
  r = Odin({"--sandbox", "fallback", "exec", "--", "touch", "ran"});
  EXPECT_EQ(r.exit_code, 125);
  EXPECT_FALSE(PathExists(ws_.Join("ran")));
}

TEST_F(OdinExecTest, UnusableBwrapFallsBackLoudlyOnlyWhenChosen) {
  UserConfig(R"({"sandbox":{"bwrap":"/bin/false"}})");
  if (geteuid() == 0) {
    // As root the Landlock fallback would leave the host's sockets and
    // other processes' /proc in reach: refused unless chosen.
    Ran refused = Odin({"exec", "--", "touch", "ran"});
    EXPECT_EQ(refused.exit_code, 125);
    EXPECT_NE(refused.err.find("refusing to run a program as root without namespaces"), std::string::npos)
        << refused.err;
    EXPECT_FALSE(PathExists(ws_.Join("ran")));
  }
  Ran r = Odin({"--sandbox", "fallback", "exec", "--", "sh", "-c", "grep CapEff /proc/self/status"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "CapEff:\t0000000000000000\n");  // root keeps no capability there either
  EXPECT_NE(r.err.find("running WITHOUT a sandbox"), std::string::npos) << r.err;
  // Chosen in the user's config, the same.
  UserConfig(R"({"sandbox":{"bwrap":"/bin/false","policy":"fallback"}})");
  EXPECT_EQ(Odin({"exec", "--", "true"}).exit_code, 0);
}

TEST_F(OdinExecTest, UnusableBwrapWithRequireFailsClosed) {
  UserConfig(R"({"sandbox":{"bwrap":"/bin/false"}})");
  Ran r = Odin({"--sandbox", "require", "exec", "--", "touch", "must-not-exist"});
  EXPECT_EQ(r.exit_code, 125);
  EXPECT_NE(r.err.find("the sandbox could not be set up: sandbox required but unavailable"), std::string::npos)
      << r.err;
  EXPECT_FALSE(PathExists(ws_.Join("must-not-exist")));
  // The same through the (user's) config file.
  UserConfig(R"({"sandbox":{"bwrap":"/bin/false","require":true}})");
  EXPECT_EQ(Odin({"exec", "--", "touch", "must-not-exist"}).exit_code, 125);
  EXPECT_FALSE(PathExists(ws_.Join("must-not-exist")));
}

TEST_F(OdinExecTest, JsonResult) {
  Ran r = Odin({"exec", "--json", "--", "printf", "abc"});
  ASSERT_EQ(r.exit_code, 0);
  json j = json::parse(r.out);
  EXPECT_EQ(j["status"], "ok");
  EXPECT_EQ(j["exit_code"], 0);
  EXPECT_EQ(j["output_head"], "abc");
  EXPECT_EQ(j["output_bytes"], 3);
  EXPECT_EQ(j["recorded"], true);
  EXPECT_EQ(j["execution_id"], LastExecution()["execution_id"]);
}

TEST_P(OdinExecFaultTest, InterruptCancelsAndRecords) {
  int out;
  pid_t pid =
      StartOdin(ws_.path(), {"--sandbox", Sandbox(), "exec", "--", "sh", "-c", "echo ready; sleep 1000"}, &out, Env());
  EXPECT_NE(ReadUntil(out, "ready").find("ready"), std::string::npos);
  kill(pid, SIGINT);
  EXPECT_EQ(Wait(pid), 130);
  close(out);
  EXPECT_EQ(LastExecution()["status"], "cancelled");
}

TEST_P(OdinExecFaultTest, KilledOdinLeavesAVisibleStartedCall) {
  int out;
  pid_t pid =
      StartOdin(ws_.path(), {"--sandbox", Sandbox(), "exec", "--", "sh", "-c", "echo ready; sleep 1000"}, &out, Env());
  ReadUntil(out, "ready");
  kill(pid, SIGKILL);
  Wait(pid);
  close(out);
  json e = LastExecution();
  EXPECT_EQ(e["status"], "started");
  Ran log = Odin({"log"});
  EXPECT_NE(log.out.find("started"), std::string::npos);
  // The worker and its command died with their coordinator (TearDown checks).
}

TEST_F(OdinExecTest, StalledReaderDoesNotStarveTheWorker) {
  UserConfig(R"({"workers":{"heartbeat_ms":100}})");
  int out;
  // More output than ZeroMQ and the pipes buffer, so the worker is still
  // running (and blocked) while the reader looks away.
  pid_t pid = StartOdin(ws_.path(), {"exec", "--", "head", "-c", "536870912", "/dev/zero"}, &out, Env());
  // A reader that looks away (a paused pager) for ten heartbeat intervals:
  // this pause is the scenario itself, not a way to wait for something.
  usleep(1000 * 1000);
  size_t got = 0;
  char buf[65536];
  ssize_t n;
  while ((n = read(out, buf, sizeof buf)) > 0) got += static_cast<size_t>(n);
  close(out);
  EXPECT_EQ(Wait(pid), 0);
  EXPECT_EQ(got, 536870912u);
  EXPECT_EQ(LastExecution()["status"], "ok");
}

TEST_F(OdinExecTest, CwdIsWhereOdinRuns) {
  ASSERT_TRUE(MakeDirs(ws_.Join("sub")).ok());
  ASSERT_TRUE(MakeDirs(ws_.Join(".git")).ok());
  Ran r = RunOdin(ws_.Join("sub"), {"exec", "--", "pwd"}, Env());
  EXPECT_EQ(r.out, ws_.Join("sub") + "\n");
  // The ledger lives at the workspace root (the git top level).
  EXPECT_TRUE(PathExists(ws_.Join(".odin/odin.db")));
  Ran c = Odin({"exec", "-C", "sub", "--", "pwd"});
  EXPECT_EQ(c.out, ws_.Join("sub") + "\n");
}

// Issue 47, item 9: Odin's state directory is not "untracked" in git status:
// .odin holds a .gitignore of its own (nothing is written into .git, which
// may be a file in a worktree).
TEST_F(OdinExecTest, GitStatusDoesNotShowOdinsStateDirectory) {
  ASSERT_EQ(system(("git init -q " + ws_.path()).c_str()), 0);
  ASSERT_EQ(Odin({"exec", "--", "true"}).exit_code, 0);
  ASSERT_TRUE(PathExists(ws_.Join(".odin/odin.db")));
  std::string status;
  FILE* p = popen(("git -C " + ws_.path() + " status --porcelain --untracked-files=all").c_str(), "r");
  char buf[512];
  while (fgets(buf, sizeof buf, p)) status += buf;
  pclose(p);
  EXPECT_EQ(status, "");
  EXPECT_EQ(*ReadFileToString(ws_.Join(".odin/.gitignore")), "*\n");
}

// --- bad input: one clear line, the right exit code, nothing written --------

class OdinBadInputTest : public OdinExecTest {
 protected:
  void ExpectNothingWritten() { EXPECT_FALSE(PathExists(ws_.Join(".odin"))); }
  static int Lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }
};

TEST_F(OdinBadInputTest, UnknownSubcommand) {
  Ran r = Odin({"frobnicate"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "odin: unknown command 'frobnicate' (see odin --help)\n");
  ExpectNothingWritten();
}

TEST_F(OdinBadInputTest, UnknownFlag) {
  Ran r = Odin({"log", "--frobnicate"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(Lines(r.err), 1);
  Ran e = Odin({"exec", "--frobnicate", "--", "true"});
  EXPECT_EQ(e.exit_code, 125);
  EXPECT_EQ(e.err, "odin exec: unexpected argument '--frobnicate' (see odin --help)\n");
  ExpectNothingWritten();
}

TEST_F(OdinBadInputTest, MissingSeparator) {
  Ran r = Odin({"exec", "touch", "x"});
  EXPECT_EQ(r.exit_code, 125);
  EXPECT_EQ(Lines(r.err), 1);
  EXPECT_NE(r.err.find("touch"), std::string::npos);
  Ran m = Odin({"exec", "--"});
  EXPECT_EQ(m.exit_code, 125);
  EXPECT_EQ(m.err, "odin exec: missing command after '--' (see odin --help)\n");
  ExpectNothingWritten();
  EXPECT_FALSE(PathExists(ws_.Join("x")));
}

TEST_F(OdinBadInputTest, NonexistentDirectory) {
  Ran r = Odin({"exec", "-C", "/nonexistent/odin-dir", "--", "true"});
  EXPECT_EQ(r.exit_code, 125);
  EXPECT_EQ(r.err, "odin exec: /nonexistent/odin-dir: No such file or directory\n");
  Ran l = Odin({"-C", "/nonexistent/odin-dir", "log"});
  EXPECT_EQ(l.exit_code, 1);
  EXPECT_EQ(Lines(l.err), 1);
  ExpectNothingWritten();
}

// .odin is Odin's private state only: a file there (or anything Odin did
// not make) is left alone, said in one line, and the state is kept in the
// user's state directory; with none to keep it in, nothing runs.
TEST_F(OdinBadInputTest, AStateDirOdinDidNotMakeIsLeftAloneAndTheStateKeptElsewhere) {
  ASSERT_TRUE(WriteFileAtomic(ws_.Join(".odin"), "a file where the state directory goes").ok());
  Ran r = Odin({"exec", "--", "touch", "created"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find(ws_.Join(".odin") + " is not a directory: Odin never keeps its state there"), std::string::npos)
      << r.err;
  EXPECT_TRUE(PathExists(ws_.Join("created")));
  EXPECT_EQ(*ReadFileToString(ws_.Join(".odin")), "a file where the state directory goes");
  // The record is there, where the state went.
  EXPECT_NE(Odin({"log"}).out.find("touch created"), std::string::npos);
  Ran nowhere = RunOdin(ws_.path(), {"exec", "--", "touch", "again"}, {{"XDG_STATE_HOME", ""}, {"HOME", ""}});
  EXPECT_EQ(nowhere.exit_code, 125);
  EXPECT_EQ(Lines(nowhere.err), 1) << nowhere.err;
  EXPECT_NE(nowhere.err.find("no state directory of the user's"), std::string::npos) << nowhere.err;
  EXPECT_FALSE(PathExists(ws_.Join("again")));
}

// Issue 47, item 10: a read-only checkout is usable; Odin's state goes to
// the user's state directory, said in one line, and nothing is written in
// the workspace.
TEST_F(OdinBadInputTest, ReadOnlyWorkspaceKeepsItsStateInTheUsersStateDirectory) {
  REQUIRE_BWRAP();
  ASSERT_TRUE(WriteFileAtomic(ws_.Join("notes.txt"), "read me\n").ok());
  // Root ignores permission bits, so make the workspace read-only with a
  // read-only bind mount around odin itself.
  auto run = [&](const std::string& args) {
    std::string cmd = "env XDG_STATE_HOME=" + UserDir("XDG_STATE_HOME") +
                      " XDG_CONFIG_HOME=" + UserDir("XDG_CONFIG_HOME") + " bwrap --dev-bind / / --ro-bind " +
                      ws_.path() + " " + ws_.path() + " --chdir " + ws_.path() + " " + BinDir() + "/odin " + args +
                      " 2>&1; echo rc=$?";
    FILE* p = popen(cmd.c_str(), "r");
    std::string out;
    char buf[512];
    while (fgets(buf, sizeof buf, p)) out += buf;
    pclose(p);
    return out;
  };
  std::string out = run("exec -- cat notes.txt");
  EXPECT_NE(out.find("rc=0"), std::string::npos) << out;
  EXPECT_NE(out.find("read me"), std::string::npos) << out;
  EXPECT_NE(out.find("odin: " + ws_.path() + " is on a read-only file system: Odin's state is kept in " +
                     UserDir("XDG_STATE_HOME") + "/odin/workspaces/"),
            std::string::npos)
      << out;
  std::string log = run("log");
  EXPECT_NE(log.find("cat notes.txt"), std::string::npos) << log;
  // A write has nowhere to land, and says so.
  std::string write = run("exec -- touch new.txt");
  EXPECT_NE(write.find("could not be applied: new.txt: Read-only file system"), std::string::npos) << write;
  EXPECT_FALSE(PathExists(ws_.Join("new.txt")));
  ExpectNothingWritten();
}

TEST_F(OdinBadInputTest, MalformedConfig) {
  ASSERT_TRUE(WriteFileAtomic(ws_.Join("odinconfig.json"), R"({"sandbox":{"requir":true}})").ok());
  Ran r = Odin({"exec", "--", "true"});
  EXPECT_EQ(r.exit_code, 125);
  EXPECT_EQ(r.err, "odin exec: " + ws_.Join("odinconfig.json") +
                       ": unknown key 'sandbox.requir' (did you mean 'sandbox.require'?)\n");
  ExpectNothingWritten();
}

// Issue 47, item 16: a config that is not JSON does not disable odin doctor:
// the config row says what is wrong and where, the rest is reported, and the
// exit code says something failed.
TEST_F(OdinBadInputTest, DoctorReportsABrokenConfigAndGoesOn) {
  ASSERT_TRUE(WriteFileAtomic(ws_.Join("odinconfig.json"), "{\n  \"checks\": {\"tests\": [\"make\",]}\n}\n").ok());
  Ran r = Odin({"doctor"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("config     BROKEN: " + ws_.Join("odinconfig.json") +
                       ": not valid JSON: parse error at line 2, column 31"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("sandbox    policy"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("language servers"), std::string::npos) << r.out;
  Ran j = Odin({"doctor", "--json"});
  EXPECT_EQ(j.exit_code, 1);
  EXPECT_NE(j.out.find("\"error\": \"" + ws_.Join("odinconfig.json") + ": not valid JSON"), std::string::npos) << j.out;
}

TEST_F(OdinBadInputTest, ArgumentThatIsNotUtf8) {
  Ran r = Odin({"exec", "--", "echo", "caf\xe9"});
  EXPECT_EQ(r.exit_code, 125);
  EXPECT_EQ(r.err, "odin exec: argument 2 of the command is not valid UTF-8\n");
  ExpectNothingWritten();
}

TEST_F(OdinBadInputTest, BadTimeout) {
  for (const char* bad : {"-1", "abc", "1e12"}) {
    Ran r = Odin({"exec", "--timeout", bad, "--", "true"});
    EXPECT_EQ(r.exit_code, 125) << bad;
    EXPECT_EQ(Lines(r.err), 1) << bad;
  }
  ExpectNothingWritten();
}

}  // namespace
}  // namespace odin::testing
