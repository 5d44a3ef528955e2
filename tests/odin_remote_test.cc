// Workers on other machines, end to end: the real odin as coordinator and
// real `odin host` agents, each host in a network namespace of its own
// joined to the coordinator's by a veth pair. The test process first moves
// into a network namespace of its own, so the veth pairs, addresses and
// ports are never the machine's.
//
// Needs root (namespaces, veth) and iproute2's `ip` (scripts/setup.sh
// installs it); a test that cannot have them says so and skips.

#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <memory>
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

namespace odin::testing {
namespace {

using nlohmann::json;

constexpr int kPort = 7171;  // the test's own network namespace: no one else listens there

// Runs a command to completion; "" if it succeeded, else what it said.
std::string Sh(const std::vector<std::string>& argv) {
  SpawnOptions o;
  o.argv = argv;
  StatusOr<CommandOutput> out = RunCommand(o);
  if (!out.ok()) return out.status().message();
  return out->exit_code == 0 ? "" : argv[0] + " exited " + std::to_string(out->exit_code) + ": " + out->output;
}

class OdinRemoteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "skipped: network namespaces and veth pairs need root";
    std::string path = getenv("PATH") ? getenv("PATH") : "/usr/sbin:/usr/bin:/sbin:/bin";
    path += ":/usr/sbin:/sbin";
    ip_ = SearchPath("ip", path);
    if (ip_.empty()) GTEST_SKIP() << "skipped: iproute2's ip is not installed (scripts/setup.sh installs it)";
    unshare_ = SearchPath("unshare", path);
    nsenter_ = SearchPath("nsenter", path);
    sleep_ = SearchPath("sleep", path);
    if (unshare_.empty() || nsenter_.empty()) GTEST_SKIP() << "skipped: util-linux's unshare and nsenter are missing";
    if (unshare(CLONE_NEWNET) != 0) {
      GTEST_SKIP() << "skipped: cannot make a network namespace: " << strerror(errno);
    }
    ASSERT_EQ(Sh({ip_, "link", "set", "lo", "up"}), "");
    ASSERT_TRUE(MakeDirs(ws_.Join(".git")).ok());
    keys_ = user_.Join("keys");
    Ran keys = RunOdin(ws_.path(), {"keys", "generate", "--dir", keys_, "--host", "h1", "--host", "h2"});
    ASSERT_EQ(keys.exit_code, 0) << keys.err;
  }

  void TearDown() override {
    for (pid_t pid : agents_) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
    for (pid_t pid : namespaces_) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
    if (!HasSkipped()) {
      EXPECT_TRUE(ProcessesLeftWithEnv("ODIN_TEST_MARK", marker_).empty()) << "processes left behind";
    }
  }

  bool HasSkipped() const { return ::testing::Test::IsSkipped(); }

  // A host's network namespace (held by a sleeping process), linked to ours
  // by veth oc<i> (ours, 10.77.<i>.1) and oh<i> (its, 10.77.<i>.2).
  void MakeHostNamespace(int i) {
    SpawnOptions o;
    o.argv = {unshare_, "-n", sleep_, "3600"};
    StatusOr<pid_t> pid = Spawn(o);
    ASSERT_TRUE(pid.ok()) << pid.status().message();
    namespaces_.push_back(*pid);
    std::string ns = "/proc/" + std::to_string(*pid) + "/ns/net";
    ASSERT_TRUE(WaitUntil([&] {
      char a[64] = "", b[64] = "";
      return readlink(ns.c_str(), a, sizeof a) > 0 && readlink("/proc/self/ns/net", b, sizeof b) > 0 &&
             strcmp(a, b) != 0;
    }));
    std::string c = "oc" + std::to_string(i), h = "oh" + std::to_string(i), net = "10.77." + std::to_string(i);
    ASSERT_EQ(Sh({ip_, "link", "add", c, "type", "veth", "peer", "name", h, "netns", std::to_string(*pid)}), "");
    ASSERT_EQ(Sh({ip_, "addr", "add", net + ".1/24", "dev", c}), "");
    ASSERT_EQ(Sh({ip_, "link", "set", c, "up"}), "");
    std::string in = "--net=" + ns;
    ASSERT_EQ(Sh({nsenter_, in, ip_, "link", "set", "lo", "up"}), "");
    ASSERT_EQ(Sh({nsenter_, in, ip_, "addr", "add", net + ".2/24", "dev", h}), "");
    ASSERT_EQ(Sh({nsenter_, in, ip_, "link", "set", h, "up"}), "");
    host_ns_[i] = ns;
  }

  // `odin host` in host i's namespace; its stderr goes to host<i>.log.
  void StartAgent(int i, std::vector<std::string> more = {}) {
    std::string log = user_.Join("host" + std::to_string(i) + ".log");
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    ASSERT_GE(fd, 0);
    SpawnOptions o;
    o.argv = {nsenter_,           "--net=" + host_ns_[i],
              BinDir() + "/odin", "-C",
              ws_.path(),         "host",
              "--connect",        "tcp://10.77." + std::to_string(i) + ".1:" + std::to_string(kPort),
              "--keys",           keys_,
              "--name",           "h" + std::to_string(i),
              "--workers",        "4"};
    o.argv.insert(o.argv.end(), more.begin(), more.end());
    for (const auto& [k, v] : Env()) o.env.push_back(k + "=" + v);
    o.env.push_back("PATH=" + std::string(getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin"));
    o.env.push_back("ODIN_LOG=info");  // what it did, should a test fail
    // Its commands' overlays: in the test's own directory (an agent killed
    // outright leaves its own behind).
    ASSERT_TRUE(MakeDirs(user_.Join("tmp")).ok());
    o.env.push_back("TMPDIR=" + user_.Join("tmp"));
    o.stderr_fd = fd;
    o.stdout_fd = fd;
    StatusOr<pid_t> pid = Spawn(o);
    close(fd);
    ASSERT_TRUE(pid.ok()) << pid.status().message();
    agents_.push_back(*pid);
  }

  // odin -p whose one command (on host 1) runs for 4 s and touches
  // "finished" at its end; returns once it has started. (What a command
  // writes on a host shows in the workspace only once it ends: its
  // overlay lands then. Its process says it started.)
  void StartLongCommand(pid_t* odin, int* out_fd) {
    WriteConfig(/*remote=*/true, /*wait_hosts=*/1, {"writable"});
    llm_ = std::make_unique<FakeLlm>(
        json({{"responses",
               {Turn({Call("ExecuteCommand", {{"command", "sleep 4.0417; touch finished"}})}), Text("done")}}})
            .dump());
    *odin = StartOdin(ws_.path(), {"-p", "do it", "--output-format", "json", "--mode", "edit"}, out_fd,
                      FakeModelEnv(*llm_, marker_, user_));
    ASSERT_TRUE(WaitUntil([&] { return !ProcessesWithArg("sleep 4.0417").empty(); }, std::chrono::seconds(30)));
  }

  // odin serve, with the model env (its runtime dir added); returns once
  // it says where it listens.
  void StartDaemon(std::map<std::string, std::string>* env, pid_t* daemon, std::string* listen) {
    (*env)["XDG_RUNTIME_DIR"] = user_.Join("run");
    ASSERT_TRUE(MakeDirs(user_.Join("run")).ok());
    int out_fd = -1;
    *daemon = StartOdin(ws_.path(), {"serve"}, &out_fd, *env);
    close(out_fd);
    ASSERT_TRUE(WaitUntil([&] { return access(ws_.Join(".odin/daemon.json").c_str(), F_OK) == 0; }));
    json info = json::parse(*ReadFileToString(ws_.Join(".odin/daemon.json")), nullptr, false);
    ASSERT_TRUE(info.is_object() && info["listen"].is_string());
    *listen = info["listen"].get<std::string>();
  }

  std::string AgentLog(int i) {
    StatusOr<std::string> log = ReadFileToString(user_.Join("host" + std::to_string(i) + ".log"));
    return log.ok() ? *log : "";
  }

  std::map<std::string, std::string> Env() {
    std::map<std::string, std::string> env = {{"ODIN_TEST_MARK", marker_},
                                              {"XDG_CONFIG_HOME", user_.Join("config")},
                                              {"XDG_STATE_HOME", user_.Join("state")},
                                              {"XDG_RUNTIME_DIR", user_.Join("run")}};
    return env;
  }

  // The user's config: the remote hosts, fast heartbeats, no checks.
  void WriteConfig(bool remote, int wait_hosts, std::vector<std::string> kinds = {"subagent", "readonly", "writable"}) {
    json config = {{"checks", {{"build", ""}, {"lint", ""}, {"tests", ""}}},
                   {"agent", {{"subagent_concurrency", 2}}},
                   {"workers", {{"heartbeat_ms", 100}, {"count", 1}}}};
    if (remote) {
      config["workers"]["remote"] = {{"launcher", "static"},
                                     {"listen", "tcp://0.0.0.0:" + std::to_string(kPort)},
                                     {"keys", keys_},
                                     {"kinds", kinds},
                                     {"wait_hosts", wait_hosts},
                                     {"wait_seconds", 20}};
    }
    ASSERT_TRUE(MakeDirs(user_.Join("config/odin")).ok());
    ASSERT_TRUE(WriteFileAtomic(user_.Join("config/odin/odinconfig.json"), config.dump()).ok());
  }

  json Prompt(const FakeLlm& llm, const TempWorkspace& ws) {
    std::map<std::string, std::string> env = FakeModelEnv(llm, marker_, user_);
    env["ODIN_LOG"] = "info";
    last_ = RunOdin(ws.path(), {"-p", "do it", "--output-format", "json", "--mode", "edit"}, env);
    json j = json::parse(last_.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << "stdout: " << last_.out << "\nstderr: " << last_.err;
    return j;
  }

  std::vector<std::string> Rows(const TempWorkspace& ws, const std::string& sql) {
    return LedgerRows(ws.Join(".odin/odin.db"), sql);
  }

  std::string ip_, unshare_, nsenter_, sleep_, keys_;
  std::unique_ptr<FakeLlm> llm_;
  std::map<int, std::string> host_ns_;
  std::vector<pid_t> namespaces_, agents_;
  TempWorkspace ws_, user_;
  std::string marker_ = UniqueMarker();
  Ran last_;
};

// The script: a command that writes, and a subagent that reads it.
std::string Script() {
  json agents;
  agents["read the note"] = {Turn({Call("Read", {{"file_path", "note.txt"}})}), Text("it says hello")};
  return json({{"responses",
                {Turn({Call("ExecuteCommand",
                            {{"command", "printf 'hello\\n' > note.txt && mkdir -p d && echo x > d/y"}})}),
                 Turn({Call("AgentTool", {{"description", "read"}, {"prompt", "read the note"}, {"mode", "ask"}})}),
                 Text("done")}},
               {"agents", agents}})
      .dump();
}

TEST_F(OdinRemoteTest, ASessionOnTwoHostsGivesTheLedgerALocalOneGives) {
  ASSERT_NO_FATAL_FAILURE(MakeHostNamespace(1));
  ASSERT_NO_FATAL_FAILURE(MakeHostNamespace(2));
  ASSERT_NO_FATAL_FAILURE(StartAgent(1));
  ASSERT_NO_FATAL_FAILURE(StartAgent(2));
  WriteConfig(/*remote=*/true, /*wait_hosts=*/2);
  FakeLlm llm(Script());
  json remote = Prompt(llm, ws_);
  ASSERT_EQ(remote["status"], "done") << last_.err;

  // Every worker call ran on a host: recorded as w_...@h<i>#<n>.
  std::vector<std::string> workers = Rows(ws_,
                                          "SELECT tool || '|' || worker_id FROM execution_starts "
                                          "WHERE tool IN ('ExecuteCommand', 'Read', 'AgentTool') ORDER BY rowid");
  ASSERT_EQ(workers.size(), 3u) << ::testing::PrintToString(workers);
  for (const std::string& w : workers) EXPECT_NE(w.find("@h"), std::string::npos) << w << "\n" << last_.err;
  EXPECT_NE(AgentLog(1).find("joined"), std::string::npos)
      << AgentLog(1) << *ReadFileToString(keys_ + "/coordinator.pub");
  EXPECT_NE(AgentLog(2).find("joined"), std::string::npos) << AgentLog(2);

  // The same session on this machine alone.
  TempWorkspace local;
  ASSERT_TRUE(MakeDirs(local.Join(".git")).ok());
  WriteConfig(/*remote=*/false, 0);
  FakeLlm llm2(Script());
  json here = Prompt(llm2, local);
  ASSERT_EQ(here["status"], "done") << last_.err;
  auto statuses = [&](const TempWorkspace& ws) {
    return Rows(ws,
                "SELECT s.tool || '|' || e.status || '|' || ifnull(e.exit_code, '') FROM execution_starts s "
                "JOIN execution_ends e USING (execution_id) ORDER BY s.rowid");
  };
  auto changes = [&](const TempWorkspace& ws) {
    return LedgerRows(ws.Join(".odin/odin.db"),
                      "SELECT substr(path, length(?) + 2) || '|' || change || '|' || after_sha256 FROM mutations "
                      "ORDER BY path",
                      ws.path());
  };
  EXPECT_EQ(statuses(ws_), statuses(local));
  EXPECT_EQ(changes(ws_), changes(local));
  EXPECT_EQ(changes(ws_).size(), 3u) << ::testing::PrintToString(changes(ws_));  // d, d/y, note.txt
}

// A writable command on a host runs over an overlay on the host's own disk;
// the host agent lands it when the command ends, and the coordinator looks
// at the paths it landed, not at the whole shared tree: a file changed by
// hand meanwhile is not charged to the command.
TEST_F(OdinRemoteTest, AHostLandsItsCommandsOverlayAndOnlyThatIsTheCommands) {
  ASSERT_NO_FATAL_FAILURE(MakeHostNamespace(1));
  ASSERT_NO_FATAL_FAILURE(StartAgent(1));
  WriteConfig(/*remote=*/true, /*wait_hosts=*/1, {"writable"});
  ASSERT_TRUE(WriteFileAtomic(ws_.Join("kept.txt"), "before\n").ok());
  FakeLlm llm(json({{"responses",
                     {Turn({Call("ExecuteCommand",
                                 {{"command",
                                   "echo after > kept.txt && echo new > made.txt && mkdir -p d/e && echo x > d/e/f && "
                                   "echo steer > d/AGENTS.md && sleep 2.0419"}})}),
                      Text("done")}}})
                  .dump());
  int out_fd = -1;
  pid_t odin = StartOdin(ws_.path(), {"-p", "do it", "--output-format", "json", "--mode", "edit"}, &out_fd,
                         FakeModelEnv(llm, marker_, user_));
  ASSERT_TRUE(WaitUntil([&] { return !ProcessesWithArg("sleep 2.0419").empty(); }, std::chrono::seconds(30)));
  // It has written everything by now, into its overlay: the shared
  // workspace does not have it yet.
  EXPECT_NE(access(ws_.Join("made.txt").c_str(), F_OK), 0) << "the command wrote into the shared workspace itself";
  EXPECT_EQ(*ReadFileToString(ws_.Join("kept.txt")), "before\n");
  // Meanwhile, by hand, beside it.
  ASSERT_TRUE(WriteFileAtomic(ws_.Join("outside.txt"), "by hand\n").ok());
  std::string out = ReadUntil(out_fd, "\n}");
  close(out_fd);
  EXPECT_EQ(Wait(odin), 0);
  json r = json::parse(out.substr(std::min(out.find('{'), out.size())), nullptr, false);
  ASSERT_FALSE(r.is_discarded()) << out;
  EXPECT_EQ(r["status"], "done");
  EXPECT_EQ(*ReadFileToString(ws_.Join("kept.txt")), "after\n");
  EXPECT_EQ(*ReadFileToString(ws_.Join("made.txt")), "new\n");
  EXPECT_EQ(*ReadFileToString(ws_.Join("d/e/f")), "x\n");
  // Instructions never land from a command; the call's result says so.
  EXPECT_NE(access(ws_.Join("d/AGENTS.md").c_str(), F_OK), 0);
  std::vector<std::string> discarded =
      Rows(ws_, "SELECT detail_json FROM gate_events WHERE kind = 'protected_path_discarded'");
  ASSERT_EQ(discarded.size(), 1u) << AgentLog(1);
  EXPECT_NE(discarded[0].find("d/AGENTS.md"), std::string::npos) << discarded[0];
  std::vector<std::string> workers = Rows(ws_, "SELECT worker_id FROM execution_starts WHERE tool = 'ExecuteCommand'");
  ASSERT_EQ(workers.size(), 1u);
  EXPECT_NE(workers[0].find("@h1#"), std::string::npos) << workers[0];
  std::vector<std::string> mine = LedgerRows(ws_.Join(".odin/odin.db"),
                                             "SELECT substr(m.path, length(?) + 2) || '|' || m.change FROM mutations m "
                                             "JOIN execution_starts s USING (execution_id) "
                                             "WHERE s.tool = 'ExecuteCommand' ORDER BY m.path",
                                             ws_.path());
  EXPECT_EQ(mine, (std::vector<std::string>{"d|created", "d/e|created", "d/e/f|created", "kept.txt|modified",
                                            "made.txt|created"}))
      << ::testing::PrintToString(mine) << "\n"
      << AgentLog(1);
  // What landed is hashed here, not taken from the host.
  std::vector<std::string> after = Rows(ws_, "SELECT after_sha256 FROM mutations WHERE path LIKE '%/made.txt'");
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0], Sha256Hex("new\n"));
}

// An isolated session's workers run on the workspace's hosts too, in its
// view: the host is told the view (by id, checked against its own
// workspace's views) and lands the command's overlay there; the workspace
// stays as it was until odin apply.
TEST_F(OdinRemoteTest, AnIsolatedSessionsCommandsRunOnAHostInItsView) {
  ASSERT_NO_FATAL_FAILURE(MakeHostNamespace(1));
  ASSERT_NO_FATAL_FAILURE(StartAgent(1));
  WriteConfig(/*remote=*/true, /*wait_hosts=*/1, {"writable"});
  ASSERT_TRUE(WriteFileAtomic(ws_.Join("kept.txt"), "before\n").ok());
  FakeLlm llm(json({{"responses",
                     {Turn({Call("ExecuteCommand", {{"command", "echo after > kept.txt && echo new > made.txt"}})}),
                      Text("done")}}})
                  .dump());
  std::map<std::string, std::string> env = FakeModelEnv(llm, marker_, user_);
  last_ = RunOdin(ws_.path(), {"-p", "do it", "--output-format", "json", "--isolated"}, env);
  json r = json::parse(last_.out, nullptr, false);
  ASSERT_TRUE(r.is_object()) << last_.out << last_.err;
  ASSERT_EQ(r["status"], "done") << last_.err << AgentLog(1);
  EXPECT_EQ(last_.err.find("run on this machine"), std::string::npos) << last_.err;
  std::vector<std::string> workers = Rows(ws_, "SELECT worker_id FROM execution_starts WHERE tool = 'ExecuteCommand'");
  ASSERT_EQ(workers.size(), 1u);
  EXPECT_NE(workers[0].find("@h1#"), std::string::npos) << workers[0];
  EXPECT_EQ(*ReadFileToString(ws_.Join("kept.txt")), "before\n") << "the host wrote into the workspace itself";
  EXPECT_NE(access(ws_.Join("made.txt").c_str(), F_OK), 0) << "the host wrote into the workspace itself";
  std::vector<std::string> made = Rows(ws_, "SELECT path FROM mutations WHERE path LIKE '%/made.txt'");
  ASSERT_EQ(made.size(), 1u);
  EXPECT_NE(made[0].find("/.odin/views/view_"), std::string::npos) << made[0];
  Ran applied = RunOdin(ws_.path(), {"apply", r["session_id"]}, env);
  ASSERT_EQ(applied.exit_code, 0) << applied.err;
  EXPECT_EQ(*ReadFileToString(ws_.Join("kept.txt")), "after\n");
  EXPECT_EQ(*ReadFileToString(ws_.Join("made.txt")), "new\n");
}

TEST_F(OdinRemoteTest, AHostThatSeesAnotherWorkspaceIsRefusedAndSaysWhy) {
  ASSERT_NO_FATAL_FAILURE(MakeHostNamespace(1));
  // The host's view of the workspace path is another directory: a mount
  // namespace of its own with a different tree over the path.
  TempWorkspace other;
  ASSERT_TRUE(MakeDirs(other.Join(".git")).ok());
  ASSERT_TRUE(MakeDirs(other.Join(".odin")).ok());
  std::string log = user_.Join("host1.log");
  int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  SpawnOptions o;
  std::string agent = BinDir() + "/odin -C '" + ws_.path() +
                      "' host --connect tcp://10.77.1.1:" + std::to_string(kPort) + " --keys '" + keys_ + "' --name h1";
  o.argv = {nsenter_,
            "--net=" + host_ns_[1],
            unshare_,
            "-m",
            "/bin/sh",
            "-c",
            "mount --make-rprivate / && mount --bind '" + other.path() + "' '" + ws_.path() + "' && exec " + agent};
  for (const auto& [k, v] : Env()) o.env.push_back(k + "=" + v);
  o.env.push_back("PATH=" + std::string(getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin"));
  o.stderr_fd = fd;
  o.stdout_fd = fd;
  StatusOr<pid_t> pid = Spawn(o);
  close(fd);
  ASSERT_TRUE(pid.ok());
  agents_.push_back(*pid);

  WriteConfig(/*remote=*/true, /*wait_hosts=*/1);
  // The coordinator waits for it in vain, then runs here.
  json config = json::parse(*ReadFileToString(user_.Join("config/odin/odinconfig.json")));
  config["workers"]["remote"]["wait_seconds"] = 5;
  ASSERT_TRUE(WriteFileAtomic(user_.Join("config/odin/odinconfig.json"), config.dump()).ok());
  FakeLlm llm(json({{"responses", {Turn({Call("ExecuteCommand", {{"command", "echo hi"}})}), Text("done")}}}).dump());
  json r = Prompt(llm, ws_);
  EXPECT_EQ(r["status"], "done") << last_.err;
  EXPECT_NE(last_.err.find("0 of 1 hosts joined"), std::string::npos) << last_.err;
  // It was told why, and tries again (the token may not have been written
  // yet), but never joins.
  EXPECT_NE(AgentLog(1).find("refused this host: it does not see this workspace"), std::string::npos) << AgentLog(1);
  EXPECT_EQ(AgentLog(1).find("joined tcp"), std::string::npos) << AgentLog(1);
  std::vector<std::string> workers = Rows(ws_, "SELECT worker_id FROM execution_starts WHERE tool = 'ExecuteCommand'");
  ASSERT_EQ(workers.size(), 1u);
  EXPECT_EQ(workers[0].find("@"), std::string::npos) << "ran on the refused host: " << workers[0];
}

// Another odin holds the port (odin serve, while odin -p runs in the same
// workspace): this session runs its workers here and says so.
TEST_F(OdinRemoteTest, APortAnotherOdinHoldsLeavesTheSessionToLocalWorkers) {
  int held = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(held, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(kPort);
  ASSERT_EQ(bind(held, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0) << strerror(errno);
  ASSERT_EQ(listen(held, 1), 0);
  WriteConfig(/*remote=*/true, /*wait_hosts=*/0);
  FakeLlm llm(json({{"responses", {Turn({Call("ExecuteCommand", {{"command", "echo hi"}})}), Text("done")}}}).dump());
  json r = Prompt(llm, ws_);
  close(held);
  EXPECT_EQ(r["status"], "done") << last_.err;
  EXPECT_NE(last_.err.find("this session's workers run on this machine"), std::string::npos) << last_.err;
}

TEST_F(OdinRemoteTest, AHostWithAnUnknownKeyNeverJoins) {
  ASSERT_NO_FATAL_FAILURE(MakeHostNamespace(1));
  // A key pair of its own, not in the coordinator's allow list.
  std::string stranger = user_.Join("stranger");
  Ran keys = RunOdin(ws_.path(), {"keys", "generate", "--dir", stranger, "--host", "h1"});
  ASSERT_EQ(keys.exit_code, 0);
  ASSERT_NO_FATAL_FAILURE(StartAgent(1, {"--key", stranger + "/hosts/h1.key"}));
  WriteConfig(/*remote=*/true, /*wait_hosts=*/1);
  json config = json::parse(*ReadFileToString(user_.Join("config/odin/odinconfig.json")));
  config["workers"]["remote"]["wait_seconds"] = 3;
  ASSERT_TRUE(WriteFileAtomic(user_.Join("config/odin/odinconfig.json"), config.dump()).ok());
  FakeLlm llm(json({{"responses", {Turn({Call("ExecuteCommand", {{"command", "echo hi"}})}), Text("done")}}}).dump());
  json r = Prompt(llm, ws_);
  EXPECT_EQ(r["status"], "done") << last_.err;
  EXPECT_NE(last_.err.find("0 of 1 hosts joined"), std::string::npos) << last_.err;
  EXPECT_EQ(AgentLog(1).find("joined tcp"), std::string::npos) << AgentLog(1);
}

// The link is cut while a command runs on the host: the call ends crashed
// once the liveness timeout passes, the host kills the command (it never
// finishes: nothing runs twice), and joins again when the link is back.
TEST_F(OdinRemoteTest, ALinkCutMidCommandEndsItCrashedAndTheHostComesBack) {
  ASSERT_NO_FATAL_FAILURE(MakeHostNamespace(1));
  ASSERT_NO_FATAL_FAILURE(StartAgent(1));
  WriteConfig(/*remote=*/true, /*wait_hosts=*/1, {"writable"});
  std::string finished = ws_.Join("finished");
  FakeLlm llm(json({{"responses",
                     {Turn({Call("ExecuteCommand", {{"command", "sleep 4.0418; touch finished"}})}),
                      Turn({Call("ExecuteCommand", {{"command", "sleep 3; echo again > again.txt"}})}), Text("done")}}})
                  .dump());
  int out_fd = -1;
  pid_t odin = StartOdin(ws_.path(), {"-p", "do it", "--output-format", "json", "--mode", "edit"}, &out_fd,
                         FakeModelEnv(llm, marker_, user_));
  ASSERT_TRUE(WaitUntil([&] { return !ProcessesWithArg("sleep 4.0418").empty(); }, std::chrono::seconds(30)));
  ASSERT_EQ(Sh({ip_, "link", "set", "oc1", "down"}), "");
  // The host hears nothing for its liveness timeout, kills, and retries.
  ASSERT_TRUE(WaitUntil([&] { return AgentLog(1).find("silent for") != std::string::npos; }, std::chrono::seconds(15)))
      << AgentLog(1);
  ASSERT_EQ(Sh({ip_, "link", "set", "oc1", "up"}), "");
  std::string out = ReadUntil(out_fd, "\n}");
  close(out_fd);
  EXPECT_EQ(Wait(odin), 0);
  json r = json::parse(out.substr(out.find('{')), nullptr, false);
  ASSERT_FALSE(r.is_discarded()) << out;
  EXPECT_EQ(r["status"], "done");
  std::vector<std::string> ends = Rows(ws_,
                                       "SELECT e.status || '|' || e.error FROM execution_starts s JOIN "
                                       "execution_ends e USING (execution_id) WHERE s.tool = 'ExecuteCommand' "
                                       "ORDER BY s.rowid");
  ASSERT_EQ(ends.size(), 2u) << ::testing::PrintToString(ends);
  EXPECT_EQ(ends[0].rfind("crashed|", 0), 0u) << ends[0];
  EXPECT_NE(ends[0].find("was lost"), std::string::npos) << ends[0];
  EXPECT_EQ(ends[1].rfind("ok|", 0), 0u) << ends[1];
  // Well after the command would have finished: it never did.
  usleep(4500 * 1000);
  EXPECT_NE(access(finished.c_str(), F_OK), 0) << "the command ran on after its call ended";
  size_t first = AgentLog(1).find("joined tcp");
  ASSERT_NE(first, std::string::npos);
  EXPECT_NE(AgentLog(1).find("joined tcp", first + 1), std::string::npos) << "did not join again: " << AgentLog(1);
}

// A host agent SIGKILLed: its workers and their commands die with it, and
// its calls end crashed once it is missed.
TEST_F(OdinRemoteTest, AKilledHostAgentTakesItsWorkersAlong) {
  ASSERT_NO_FATAL_FAILURE(MakeHostNamespace(1));
  ASSERT_NO_FATAL_FAILURE(StartAgent(1));
  std::string finished = ws_.Join("finished");
  int out_fd = -1;
  pid_t odin = -1;
  ASSERT_NO_FATAL_FAILURE(StartLongCommand(&odin, &out_fd));
  kill(agents_[0], SIGKILL);
  std::string out = ReadUntil(out_fd, "\n}");
  close(out_fd);
  EXPECT_EQ(Wait(odin), 0);
  std::vector<std::string> ends = Rows(ws_,
                                       "SELECT e.status FROM execution_starts s JOIN execution_ends e "
                                       "USING (execution_id) WHERE s.tool = 'ExecuteCommand'");
  EXPECT_EQ(ends, std::vector<std::string>{"crashed"});
  usleep(4500 * 1000);
  EXPECT_NE(access(finished.c_str(), F_OK), 0) << "the command outlived its host agent";
}

// The coordinator SIGKILLed mid-command: the host ends the command and
// joins the next coordinator.
TEST_F(OdinRemoteTest, AHostOutlivesItsCoordinatorAndJoinsTheNext) {
  ASSERT_NO_FATAL_FAILURE(MakeHostNamespace(1));
  ASSERT_NO_FATAL_FAILURE(StartAgent(1));
  std::string finished = ws_.Join("finished");
  int out_fd = -1;
  pid_t odin = -1;
  ASSERT_NO_FATAL_FAILURE(StartLongCommand(&odin, &out_fd));
  kill(odin, SIGKILL);
  Wait(odin);
  close(out_fd);
  ASSERT_TRUE(WaitUntil([&] { return AgentLog(1).find("silent for") != std::string::npos; }, std::chrono::seconds(15)))
      << AgentLog(1);
  // A new coordinator: the host joins it and runs its command.
  FakeLlm next(
      json({{"responses", {Turn({Call("ExecuteCommand", {{"command", "echo next > next.txt"}})}), Text("done")}}})
          .dump());
  json r = Prompt(next, ws_);
  EXPECT_EQ(r["status"], "done") << last_.err;
  std::vector<std::string> workers =
      Rows(ws_, "SELECT worker_id FROM execution_starts WHERE args_json LIKE '%next.txt%'");
  ASSERT_EQ(workers.size(), 1u);
  EXPECT_NE(workers[0].find("@h1#"), std::string::npos) << workers[0];
  usleep(4500 * 1000);
  EXPECT_NE(access(finished.c_str(), F_OK), 0) << "the command outlived its coordinator";
}

}  // namespace
}  // namespace odin::testing

namespace odin::testing {
namespace {

// The daemon: its session takes the hosts, and its status lists them and
// each worker's host.
TEST_F(OdinRemoteTest, TheDaemonsStatusListsItsHostsAndTheirWorkers) {
  ASSERT_NO_FATAL_FAILURE(MakeHostNamespace(1));
  ASSERT_NO_FATAL_FAILURE(StartAgent(1));
  WriteConfig(/*remote=*/true, /*wait_hosts=*/1, {"writable", "readonly"});
  FakeLlm llm(json({{"responses", {Turn({Call("ExecuteCommand", {{"command", "echo hi"}})}), Text("done")}}}).dump());
  std::map<std::string, std::string> env = FakeModelEnv(llm, marker_, user_);
  pid_t daemon = 0;
  std::string listen;
  ASSERT_NO_FATAL_FAILURE(StartDaemon(&env, &daemon, &listen));
  Ran run = RunOdin(ws_.path(), {"-p", "do it", "--connect", listen}, env);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  json status;
  bool listed = WaitUntil(
      [&] {
        SpawnOptions o;
        o.argv = {BinDir() + "/odin-rpc", "-C", ws_.path(), "status", "--json"};
        for (const auto& [k, v] : env) o.env.push_back(k + "=" + v);
        StatusOr<CommandOutput> st = RunCommand(o);
        status = json::parse(st.ok() ? st->output : "", nullptr, false);
        return status.is_object() && !status["sessions"].empty() && !status["sessions"][0]["hosts"].empty();
      },
      std::chrono::seconds(20));
  kill(daemon, SIGTERM);
  EXPECT_EQ(Wait(daemon), 0);
  ASSERT_TRUE(listed) << status.dump();
  json host = status["sessions"][0]["hosts"][0];
  EXPECT_EQ(host["name"], "h1");
  EXPECT_EQ(host["sandbox"], "bwrap");
  bool remote_worker = false;
  for (const json& w : status["sessions"][0]["workers"])
    remote_worker |= w["host"].get<std::string>().rfind("h1#", 0) == 0;
  EXPECT_TRUE(remote_worker) << status.dump();
}

// The daemon's sessions share its hosts: each session's commands run on
// host h1, in workers of that session's own (a worker serves one session).
TEST_F(OdinRemoteTest, TheDaemonsSessionsShareItsHostsAndNotTheirWorkers) {
  ASSERT_NO_FATAL_FAILURE(MakeHostNamespace(1));
  ASSERT_NO_FATAL_FAILURE(StartAgent(1));
  WriteConfig(/*remote=*/true, /*wait_hosts=*/1, {"writable", "readonly"});
  FakeLlm llm(json({{"responses",
                     {Turn({Call("ExecuteCommand", {{"command", "echo one"}})}), Text("done"),
                      Turn({Call("ExecuteCommand", {{"command", "echo two"}})}), Text("done")}}})
                  .dump());
  std::map<std::string, std::string> env = FakeModelEnv(llm, marker_, user_);
  pid_t daemon = 0;
  std::string listen;
  ASSERT_NO_FATAL_FAILURE(StartDaemon(&env, &daemon, &listen));
  // Two sessions, the first still open while the second runs.
  Ran first = RunOdin(ws_.path(), {"-p", "first", "--connect", listen}, env);
  Ran second = RunOdin(ws_.path(), {"-p", "second", "--connect", listen}, env);
  kill(daemon, SIGTERM);
  EXPECT_EQ(Wait(daemon), 0);
  EXPECT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(second.exit_code, 0) << second.err;
  std::vector<std::string> commands =
      Rows(ws_,
           "SELECT session_id || '|' || worker_id FROM execution_starts WHERE tool = 'ExecuteCommand' "
           "ORDER BY rowid");
  ASSERT_EQ(commands.size(), 2u) << ::testing::PrintToString(commands);
  std::string session[2], worker[2];
  for (int i = 0; i < 2; ++i) {
    session[i] = commands[i].substr(0, commands[i].find('|'));
    worker[i] = commands[i].substr(commands[i].find('|') + 1);
    EXPECT_NE(worker[i].find("@h1#"), std::string::npos) << commands[i] << "\n" << AgentLog(1);
  }
  EXPECT_NE(session[0], session[1]);
  EXPECT_NE(worker[0], worker[1]);
  // The host joined once: the second session did not listen anew.
  size_t joins = 0;
  std::string log = AgentLog(1);
  for (size_t at = 0; (at = log.find("joined", at)) != std::string::npos; ++at) ++joins;
  EXPECT_EQ(joins, 1u) << log;
}

}  // namespace
}  // namespace odin::testing
