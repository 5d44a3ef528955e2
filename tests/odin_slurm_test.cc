// Hosts asked of Slurm (workers.remote.launcher slurm), end to end: a
// private single-node Slurm (tests/slurm/slurm_fixture.sh: munged,
// slurmctld and slurmd on random ports, proctrack/linuxproc), the real odin
// as coordinator, and `odin host` agents that srun starts. Calls that wait
// for workers get hosts; idle hosts go back; a job Slurm kills ends its
// call crashed, and the next calls that wait get a new host.
//
// Needs root (slurmd runs as root) and the Slurm packages, which the
// fixture installs; a test that cannot have them says why and skips.

#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <string>
#include <vector>

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

const std::string kFixture = std::string(ODIN_SOURCE_DIR) + "/tests/slurm/slurm_fixture.sh";

struct Output {
  int exit_code = -1;
  std::string text;
};

Output Shell(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env = {}) {
  SpawnOptions o;
  o.argv = argv;
  o.env = CurrentEnvironment();
  for (const auto& [k, v] : env) o.env.push_back(k + "=" + v);
  StatusOr<CommandOutput> out = RunCommand(o);
  if (!out.ok()) return {-1, out.status().message()};
  return {out->exit_code, out->output};
}

class OdinSlurmTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (geteuid() != 0) {
      skip_ = "slurmd runs as root, and this test is not root";
      return;
    }
    // Once for the suite: apt-get may have to fetch the packages.
    Output installed = Shell({"/bin/bash", kFixture, "install"});
    if (installed.exit_code == 77) skip_ = installed.text;
    if (installed.exit_code != 0 && installed.exit_code != 77) {
      skip_ = "the Slurm packages could not be installed: " + installed.text;
    }
  }

  void SetUp() override {
    if (!skip_.empty()) GTEST_SKIP() << "skipped: " << skip_;
    Output started = Shell({"/bin/bash", kFixture, "start", cluster_.path()});
    if (started.exit_code == 77) GTEST_SKIP() << "skipped: " << started.text;
    ASSERT_EQ(started.exit_code, 0) << started.text;
    size_t at = started.text.find("SLURM_CONF=");
    ASSERT_NE(at, std::string::npos) << started.text;
    slurm_conf_ = started.text.substr(at + 11, started.text.find('\n', at) - at - 11);
    ASSERT_TRUE(MakeDirs(ws_.Join(".git")).ok());
    keys_ = user_.Join("keys");
    Ran keys = RunOdin(ws_.path(), {"keys", "generate", "--dir", keys_, "--host", "slurm"});
    ASSERT_EQ(keys.exit_code, 0) << keys.err;
  }

  void TearDown() override {
    if (!slurm_conf_.empty()) {
      Output stopped = Shell({"/bin/bash", kFixture, "stop", cluster_.path()});
      EXPECT_EQ(stopped.exit_code, 0) << stopped.text;
    }
    if (!IsSkipped()) {
      EXPECT_TRUE(ProcessesLeftWithEnv("ODIN_TEST_MARK", marker_).empty()) << "processes left behind";
    }
  }

  // The user's config: one local worker for read-only calls (ask mode's
  // commands among them; edit mode's run one at a time, so they never
  // wait side by side), hosts from Slurm for such calls (one CPU and one
  // worker each, two at most) that go back after two idle seconds.
  void WriteConfig() {
    json config = {{"checks", {{"build", ""}, {"lint", ""}, {"tests", ""}}},
                   {"workers",
                    {{"heartbeat_ms", 100},
                     {"count", 1},
                     {"idle_seconds", 2},
                     {"remote",
                      {{"launcher", "slurm"},
                       {"listen", "tcp://127.0.0.1:0"},
                       {"keys", keys_},
                       {"kinds", {"readonly"}},
                       {"slurm",
                        {{"cpus", 1},
                         {"memory_mb", 200},
                         {"time", "0:10:00"},
                         {"max_hosts", 2},
                         // The cluster is this machine: its hosts may dial loopback (named, so allowed),
                         // on the port the coordinator got.
                         {"connect", "tcp://127.0.0.1"}}}}}}}};
    ASSERT_TRUE(MakeDirs(user_.Join("config/odin")).ok());
    ASSERT_TRUE(WriteFileAtomic(user_.Join("config/odin/odinconfig.json"), config.dump()).ok());
  }

  std::map<std::string, std::string> Env(const FakeLlm& llm) {
    std::map<std::string, std::string> env = FakeModelEnv(llm, marker_, user_);
    env["SLURM_CONF"] = slurm_conf_;
    env["ODIN_LOG"] = "info";
    return env;
  }

  // The odin jobs Slurm runs now: "JOBID NAME STATE" each.
  std::vector<std::string> Jobs() {
    Output q = Shell({"squeue", "-h", "-o", "%i %j %T"}, {{"SLURM_CONF", slurm_conf_}});
    std::vector<std::string> jobs;
    size_t start = 0;
    while (start < q.text.size()) {
      size_t end = q.text.find('\n', start);
      if (end == std::string::npos) end = q.text.size();
      std::string line = q.text.substr(start, end - start);
      if (line.find(" odin-slurm-") != std::string::npos) jobs.push_back(line);
      start = end + 1;
    }
    return jobs;
  }

  std::vector<std::string> Rows(const std::string& sql) { return LedgerRows(ws_.Join(".odin/odin.db"), sql); }

  static inline std::string skip_;
  TempWorkspace cluster_, ws_, user_;
  std::string slurm_conf_, keys_;
  std::string marker_ = UniqueMarker();
};

// Three read-only commands at once with one worker here: the two that wait
// get a host from Slurm each (a host runs one worker), and those hosts go
// back once they have been idle for workers.idle_seconds.
TEST_F(OdinSlurmTest, CallsThatWaitGetHostsFromSlurmAndIdleHostsGoBack) {
  WriteConfig();
  // odin doctor says what the hosts will be.
  Ran doctor = RunOdin(ws_.path(), {"doctor", "--json"},
                       {{"SLURM_CONF", slurm_conf_},
                        {"XDG_CONFIG_HOME", user_.Join("config")},
                        {"XDG_STATE_HOME", user_.Join("state")}});
  json d = json::parse(doctor.out, nullptr, false);
  ASSERT_FALSE(d.is_discarded()) << doctor.out << doctor.err;
  EXPECT_EQ(d["remote_workers"]["launcher"], "slurm");
  EXPECT_NE(d["remote_workers"]["slurm"]["srun"].get<std::string>(), "");
  EXPECT_EQ(d["remote_workers"]["slurm"]["max_hosts"], 2);
  EXPECT_NE(d["remote_workers"]["slurm"]["host_key"].get<std::string>(), "") << doctor.out;

  std::vector<json> calls;
  for (int i = 1; i <= 3; ++i) {
    std::string n = std::to_string(i);
    calls.push_back(Call("ExecuteCommand", {{"command", "sleep 3; echo said-" + n}}));
  }
  // The model takes its time answering the results: meanwhile the hosts
  // idle, and go back.
  json last = Text("done");
  last["delay_ms"] = 9000;
  FakeLlm llm(json({{"responses", {Turn(calls), last}}}).dump());
  Ran r = RunOdin(ws_.path(), {"-p", "look", "--output-format", "json", "--mode", "ask"}, Env(llm));
  json out = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(out.is_discarded()) << r.out << r.err;
  EXPECT_EQ(out["status"], "done") << r.err;
  std::vector<std::string> ends = Rows(
      "SELECT s.worker_id || '|' || e.status || '|' || CAST(e.output_head AS TEXT) FROM execution_starts s "
      "JOIN execution_ends e USING (execution_id) WHERE s.tool = 'ExecuteCommand' ORDER BY s.rowid");
  ASSERT_EQ(ends.size(), 3u);
  int on_slurm = 0;
  for (size_t i = 0; i < ends.size(); ++i) {
    EXPECT_NE(ends[i].find("|ok|said-" + std::to_string(i + 1)), std::string::npos) << ends[i];
    on_slurm += ends[i].find("@slurm-") != std::string::npos;
  }
  EXPECT_EQ(on_slurm, 2) << ::testing::PrintToString(ends) << "\n" << r.err;
  EXPECT_NE(r.err.find("ms after it was asked for"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("given back: no workers for 2 s"), std::string::npos) << r.err;
  EXPECT_TRUE(Jobs().empty()) << ::testing::PrintToString(Jobs());
}

// scancel of the job under a running command: the call ends with it, the
// command does not run on, and the next call that waits gets a new host.
// (Slurm's proctrack/linuxproc signals the job's processes one by one, so
// the shell may start its next step in the gap before its own signal: the
// step after the sleep waits half a second before it shows, which a shell
// that ran on would outlive. docs/remote.md)
TEST_F(OdinSlurmTest, AJobSlurmKillsEndsItsCallAndANewHostTakesTheNext) {
  WriteConfig();
  FakeLlm llm(json({{"responses",
                     {Turn({Call("ExecuteCommand", {{"command", "sleep 8; echo here"}}),
                            Call("ExecuteCommand", {{"command", "sleep 60; sleep 0.5; echo there"}})}),
                      Turn({Call("ExecuteCommand", {{"command", "sleep 3; echo again-here"}}),
                            Call("ExecuteCommand", {{"command", "echo again-there"}})}),
                      Text("done")}}})
                  .dump());
  int out_fd = -1;
  pid_t odin = StartOdin(ws_.path(), {"-p", "look", "--output-format", "json", "--mode", "ask"}, &out_fd, Env(llm));
  // The second command runs on a host from Slurm.
  auto on_slurm = [&] { return Rows("SELECT worker_id FROM execution_starts WHERE worker_id LIKE '%@slurm-%'"); };
  // (Slurm runs the job once the ledger is open: the calls come after it.)
  ASSERT_TRUE(WaitUntil(
      [&] {
        std::vector<std::string> jobs = Jobs();
        return jobs.size() == 1 && jobs[0].find(" RUNNING") != std::string::npos;
      },
      std::chrono::seconds(60)));
  ASSERT_TRUE(WaitUntil([&] { return !on_slurm().empty(); }, std::chrono::seconds(60)));
  std::vector<std::string> jobs = Jobs();
  ASSERT_EQ(jobs.size(), 1u) << ::testing::PrintToString(jobs);
  std::string job = jobs[0].substr(0, jobs[0].find(' '));
  Output cancelled = Shell({"scancel", job}, {{"SLURM_CONF", slurm_conf_}});
  ASSERT_EQ(cancelled.exit_code, 0) << cancelled.text;

  std::string output;
  char buf[4096];
  for (ssize_t n; (n = read(out_fd, buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    output.append(buf, static_cast<size_t>(n));
  }
  close(out_fd);
  int status = 0;
  waitpid(odin, &status, 0);
  json r = json::parse(output, nullptr, false);
  ASSERT_FALSE(r.is_discarded()) << output;
  EXPECT_EQ(r["status"], "done");
  std::vector<std::string> ends = Rows(
      "SELECT s.worker_id || '|' || e.status || '|' || CAST(e.output_head AS TEXT) || '|' || e.error || '|' || "
      "IFNULL(e.exit_code, '') || '|' || e.duration_us FROM execution_starts s JOIN execution_ends e USING "
      "(execution_id) "
      "WHERE s.tool = 'ExecuteCommand' ORDER BY s.rowid");
  ASSERT_EQ(ends.size(), 4u) << ::testing::PrintToString(ends);
  EXPECT_EQ(ends[0].find("@"), std::string::npos) << "ran here: " << ends[0];
  EXPECT_NE(ends[0].find("|ok|here"), std::string::npos) << ends[0];
  EXPECT_NE(ends[1].find("@slurm-"), std::string::npos) << ends[1];
  // Slurm signals every process of the job, in no set order, so what the
  // coordinator hears first decides how the call ends, and each is true: the
  // host's loss or its worker's death (crashed), or the command's own death
  // by Slurm's signal when the worker reported it before it went itself. In
  // none of them did the command run on.
  bool crashed = ends[1].find("|crashed|") != std::string::npos &&
                 (ends[1].find("was lost") != std::string::npos ||
                  ends[1].find("died while running the call") != std::string::npos);
  bool signalled = ends[1].find("|ok|") != std::string::npos &&
                   (ends[1].find("|143|") != std::string::npos || ends[1].find("|137|") != std::string::npos);
  EXPECT_TRUE(crashed || signalled) << ends[1];
  EXPECT_EQ(ends[1].find("there"), std::string::npos) << "the command ran on: " << ends[1];
  // It ended when the job did, long before its 60 s (and the processes-left
  // check in TearDown finds nothing of it).
  int64_t took_us = std::stoll(ends[1].substr(ends[1].rfind('|') + 1));
  EXPECT_LT(took_us, 50'000'000) << ends[1];
  // The second turn's waiting call ran on a new host: another job.
  std::string first = ends[1].substr(ends[1].find("@slurm-"), ends[1].find('#') - ends[1].find("@slurm-"));
  EXPECT_NE(ends[2].find("|ok|again-here"), std::string::npos) << ends[2];
  EXPECT_NE(ends[3].find("|ok|again-there"), std::string::npos) << ends[3];
  EXPECT_NE(ends[3].find("@slurm-"), std::string::npos) << ends[3];
  EXPECT_EQ(ends[3].find(first + "#"), std::string::npos) << "the same host again: " << ends[3];
}

// Parallel attempts spread over this machine and Slurm's hosts: with two
// attempts' share here (attempts.local), the other two ask for hosts, Slurm
// starts one for each, and each runs its commands there, in its own view.
// The ledger's worker ids say where; the winner lands as ever.
TEST_F(OdinSlurmTest, AttemptsBeyondThisMachinesShareRunOnSlurmsHosts) {
  WriteConfig();
  json config = json::parse(*ReadFileToString(user_.Join("config/odin/odinconfig.json")));
  config["workers"]["remote"]["kinds"] = {"writable"};
  config["workers"]["remote"]["wait_seconds"] = 120;
  config["workers"]["idle_seconds"] = 30;
  config["attempts"] = {{"local", 2}};
  ASSERT_TRUE(WriteFileAtomic(user_.Join("config/odin/odinconfig.json"), config.dump()).ok());
  json agents = json::object();
  for (int k = 1; k <= 4; ++k) {
    std::string n = std::to_string(k);
    agents["attempt " + n + " of 4"] = {
        Turn({Call("ExecuteCommand", {{"command", "echo " + n + " > out.txt && echo where-" + n}})}), Text("done")};
  }
  FakeLlm llm(json({{"responses", json::array()}, {"agents", agents}}).dump());
  Ran r = RunOdin(ws_.path(), {"-p", "go", "--attempts", "4", "--output-format", "json"}, Env(llm));
  json out = json::parse(r.out, nullptr, false);
  ASSERT_TRUE(out.is_object()) << r.out << r.err;
  EXPECT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(out["attempts"].size(), 4u) << r.out;
  std::vector<std::string> hosts;
  for (const json& a : out["attempts"]) {
    std::vector<std::string> workers = LedgerRows(ws_.Join(".odin/odin.db"),
                                                  "SELECT worker_id FROM execution_starts WHERE tool = "
                                                  "'ExecuteCommand' AND session_id = ?",
                                                  a["session_id"].get<std::string>());
    ASSERT_EQ(workers.size(), 1u) << a.dump() << "\n" << r.err;
    hosts.push_back(workers[0].find('@') == std::string::npos ? "" : workers[0].substr(workers[0].find('@')));
  }
  EXPECT_EQ(hosts[0], "") << "attempt 1 left this machine";
  EXPECT_EQ(hosts[1], "") << "attempt 2 left this machine";
  EXPECT_EQ(hosts[2].rfind("@slurm-", 0), 0u) << hosts[2] << "\n" << r.err;
  EXPECT_EQ(hosts[3].rfind("@slurm-", 0), 0u) << hosts[3] << "\n" << r.err;
  EXPECT_NE(hosts[2].substr(0, hosts[2].find('#')), hosts[3].substr(0, hosts[3].find('#')))
      << "both on one host: " << hosts[2] << " " << hosts[3];
  EXPECT_EQ(out["winner"], 1) << r.out;
  EXPECT_EQ(*ReadFileToString(ws_.Join("out.txt")), "1\n");
}

}  // namespace
}  // namespace odin::testing
