// remote_bench: what workers on other machines cost, measured on this one.
// Host agents run in network namespaces of their own joined to ours by veth
// pairs (the bench first moves into a network namespace of its own, so
// nothing of the machine's network changes), over TCP with CURVE:
//   1. a tool call's round trip to a worker behind a host agent, against a
//      local worker over ipc:// (goal: <= 2x);
//   2. a session of 8 subagents on hosts in two namespaces, against all
//      local (the same two cores: the overhead, not a speed-up);
//   3. the time a host agent takes to join a listening coordinator;
//   4. the time a host asked of Slurm takes to join: srun, the job, the
//      agent's start and handshake (a private single-node Slurm,
//      tests/slurm/slurm_fixture.sh, in the machine's own network: it runs
//      before the bench moves into its namespace).
// Needs root and iproute2 (and, for 4, the Slurm packages the fixture
// installs). Prints medians and ratios; asserts nothing.
//
// Usage: remote_bench [--calls N] [--sessions N] [--joins N] [--slurm-joins N]

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "base/file_util.h"
#include "base/secrets.h"
#include "base/subprocess.h"
#include "bench/bench_temp.h"
#include "bench/bench_stats.h"
#include "remote/curve_keys.h"
#include "remote/remote_hosts.h"
#include "session/runtime.h"
#include "remote/slurm_launcher.h"
#include "odin/v1/worker.pb.h"
#include "tools/exec_command.h"

namespace odin {
namespace {

using bench::Clock;
using bench::Ms;
using bench::Stats;
using bench::Summarize;
using nlohmann::json;

constexpr int kPort = 7171;

std::string g_ip, g_unshare, g_nsenter, g_sleep, g_dir;
std::vector<pid_t> g_children;

bool Sh(const std::vector<std::string>& argv) {
  SpawnOptions o;
  o.argv = argv;
  StatusOr<CommandOutput> out = RunCommand(o);
  if (out.ok() && out->exit_code == 0) return true;
  fprintf(stderr, "remote_bench: %s failed: %s\n", argv[0].c_str(), out.ok() ? out->output.c_str() : "");
  return false;
}

// Host i's network namespace, linked to ours (10.77.i.1 here, .2 there).
std::string MakeHostNamespace(int i) {
  SpawnOptions o;
  o.argv = {g_unshare, "-n", g_sleep, "3600"};
  o.parent_death_signal = SIGKILL;
  StatusOr<pid_t> pid = Spawn(o);
  if (!pid.ok()) return "";
  g_children.push_back(*pid);
  std::string ns = "/proc/" + std::to_string(*pid) + "/ns/net";
  for (int tries = 0; tries < 500; ++tries) {
    char a[64] = "", b[64] = "";
    if (readlink(ns.c_str(), a, sizeof a) > 0 && readlink("/proc/self/ns/net", b, sizeof b) > 0 && strcmp(a, b) != 0) {
      break;
    }
    usleep(2000);
  }
  std::string c = "oc" + std::to_string(i), h = "oh" + std::to_string(i), net = "10.77." + std::to_string(i);
  std::string in = "--net=" + ns;
  bool ok = Sh({g_ip, "link", "add", c, "type", "veth", "peer", "name", h, "netns", std::to_string(*pid)}) &&
            Sh({g_ip, "addr", "add", net + ".1/24", "dev", c}) && Sh({g_ip, "link", "set", c, "up"}) &&
            Sh({g_nsenter, in, g_ip, "link", "set", "lo", "up"}) &&
            Sh({g_nsenter, in, g_ip, "addr", "add", net + ".2/24", "dev", h}) &&
            Sh({g_nsenter, in, g_ip, "link", "set", h, "up"});
  return ok ? ns : "";
}

StatusOr<pid_t> StartAgent(const std::string& ns, int i, const std::string& ws) {
  SpawnOptions o;
  o.argv = {g_nsenter,
            "--net=" + ns,
            JoinPath(ExecutableDir(), "odin"),
            "-C",
            ws,
            "host",
            "--connect",
            "tcp://10.77." + std::to_string(i) + ".1:" + std::to_string(kPort),
            "--keys",
            g_dir + "/keys",
            "--name",
            "h" + std::to_string(i)};
  o.env = CurrentEnvironment();
  o.parent_death_signal = SIGKILL;
  int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
  o.stderr_fd = null;
  o.stdout_fd = null;
  StatusOr<pid_t> pid = Spawn(o);
  close(null);
  return pid;
}

void StopAgent(pid_t pid) {
  kill(pid, SIGTERM);
  waitpid(pid, nullptr, 0);
}

// The user config's workers.remote (remote) or none.
bool WriteConfig(bool remote, std::vector<std::string> kinds, int wait_hosts) {
  json config = {{"checks", {{"build", ""}, {"lint", ""}, {"tests", ""}}},
                 {"agent", {{"subagent_concurrency", 8}}},
                 {"workers", {{"count", 1}}}};
  if (remote) {
    config["workers"]["remote"] = {{"launcher", "static"},     {"listen", "tcp://0.0.0.0:" + std::to_string(kPort)},
                                   {"keys", g_dir + "/keys"},  {"kinds", kinds},
                                   {"wait_hosts", wait_hosts}, {"wait_seconds", 30}};
  }
  return MakeDirs(g_dir + "/config/odin").ok() &&
         WriteFileAtomic(g_dir + "/config/odin/odinconfig.json", config.dump()).ok();
}

// `calls` calls of `true`, one after another, through a Runtime of ours.
std::vector<double> RoundTrips(const std::string& ws, int calls, std::string* where) {
  std::vector<double> out;
  RuntimeFlags flags;
  flags.dir = ws;
  flags.workers = 1;
  flags.session_kind = "bench";
  StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Start(flags);
  if (!rt.ok()) {
    fprintf(stderr, "remote_bench: %s\n", rt.status().message().c_str());
    return out;
  }
  Coordinator& coord = (*rt)->coordinator();
  for (int i = -20; i < calls; ++i) {
    ToolCall call;
    call.tool = kExecuteCommandTool;
    call.arguments_json = R"({"argv":["true"]})";
    std::optional<v1::ToolResult> result;
    Clock::time_point start = Clock::now();
    coord.Submit(call, {nullptr, [&](const v1::ToolResult& r, const Status&) { result = r; }});
    while (!result) {
      if (!coord.Poll(seconds(1)).ok()) return {};
    }
    if (result->status() != v1::TOOL_STATUS_OK) {
      fprintf(stderr, "remote_bench: call failed: %s\n", result->error().message().c_str());
      return {};
    }
    if (i >= 0) out.push_back(Ms(Clock::now() - start));
  }
  for (const WorkerPool::WorkerInfo& w : coord.pool().workers()) {
    if (w.policy == WorkerPolicy::kWritable) *where = w.host.empty() ? "this machine, ipc://" : "host " + w.host;
  }
  return out;
}

// One `odin -p` session whose single turn starts 8 subagents (each reads a
// file); returns its wall time in ms, or -1.
double SubagentSession(const std::string& ws, const std::string& url) {
  std::vector<std::string> env;
  for (const std::string& e : CurrentEnvironment()) {
    if (e.rfind("XDG_CONFIG_HOME=", 0) != 0) env.push_back(e);
  }
  env.push_back("XDG_CONFIG_HOME=" + g_dir + "/config");
  env.push_back("OPENAI_BASE_URL=" + url);
  env.push_back("OPENAI_API_KEY=bench");
  Clock::time_point t0 = Clock::now();
  StatusOr<CommandOutput> out = RunCommand(
      {.argv = {JoinPath(ExecutableDir(), "odin"), "-p", "research", "--output-format", "json", "--mode", "ask"},
       .env = env,
       .cwd = ws});
  double ms = Ms(Clock::now() - t0);
  if (!out.ok() || out->exit_code != 0 || out->output.find("\"status\":\"done\"") == std::string::npos) {
    fprintf(stderr, "remote_bench: the session failed: %s\n", out.ok() ? out->output.c_str() : "");
    return -1;
  }
  return ms;
}

StatusOr<pid_t> StartFakeModel(const std::string& script, std::string* url) {
  std::string path = g_dir + "/script.json";
  RETURN_IF_ERROR(WriteFileAtomic(path, script));
  int out[2];
  if (pipe(out) != 0) return PosixError("pipe", errno);
  SpawnOptions server;
  server.argv = {JoinPath(ExecutableDir(), "fake_llm_server"), "--script", path, "--log", g_dir + "/log.jsonl"};
  server.env = CurrentEnvironment();
  server.stdout_fd = out[1];
  server.parent_death_signal = SIGKILL;
  StatusOr<pid_t> pid = Spawn(server);
  close(out[1]);
  char buf[64] = {0};
  (void)!read(out[0], buf, sizeof buf - 1);
  close(out[0]);
  *url = "http://127.0.0.1:" + std::to_string(std::atoi(buf + 5)) + "/v1";
  return pid;
}

void Print(const char* what, const Stats& s) {
  printf("  %-52s median %8.2f ms   p90 %8.2f ms\n", what, s.median_ms, s.p90_ms);
}

// 4. Hosts asked of Slurm: from the launch to the welcome, n times.
void SlurmJoins(int n) {
  const std::string fixture = std::string(ODIN_SOURCE_DIR) + "/tests/slurm/slurm_fixture.sh";
  auto sh = [](const std::vector<std::string>& argv) {
    SpawnOptions o;
    o.argv = argv;
    o.env = CurrentEnvironment();
    StatusOr<CommandOutput> out = RunCommand(o);
    return out.ok() ? *out : CommandOutput{-1, out.status().message()};
  };
  CommandOutput installed = sh({"/bin/bash", fixture, "install"});
  if (installed.exit_code != 0) {
    printf("a host asked of Slurm joining: skipped (%s)\n", installed.output.c_str());
    return;
  }
  StatusOr<std::string> dir = odin::bench::BenchTempDir("odin-slurm-bench");
  StatusOr<std::string> cluster = odin::bench::BenchTempDir("odin-slurm-cluster");
  if (!dir.ok() || !cluster.ok()) return;
  CommandOutput started = sh({"/bin/bash", fixture, "start", *cluster});
  size_t at = started.output.find("SLURM_CONF=");
  if (started.exit_code != 0 || at == std::string::npos) {
    printf("a host asked of Slurm joining: skipped (the fixture did not start: %s)\n", started.output.c_str());
    return;
  }
  std::string conf = started.output.substr(at + 11, started.output.find('\n', at) - at - 11);
  setenv("SLURM_CONF", conf.c_str(), 1);
  setenv("XDG_CONFIG_HOME", (*dir + "/config").c_str(), 1);
  setenv("XDG_STATE_HOME", (*dir + "/state").c_str(), 1);
  std::string ws = *dir + "/ws", keys = *dir + "/keys";
  StatusOr<Workspace> w = MakeDirs(ws + "/.git").ok() && GenerateKeys(keys, {"slurm"}).ok()
                              ? FindWorkspace(ws)
                              : StatusOr<Workspace>(Status::IOError("bench", "setup"));
  StatusOr<CurveKeyPair> server = LoadKeyPair(keys + "/coordinator.key");
  StatusOr<std::set<std::string>> allowed = LoadAllowedHosts(keys + "/allowed_hosts");
  StatusOr<std::string> token =
      w.ok() && MakeDirs(w->state_dir).ok() ? EnsureWorkspaceToken(w->state_dir) : StatusOr<std::string>(w.status());
  if (!server.ok() || !allowed.ok() || !token.ok()) {
    printf("a host asked of Slurm joining: setup failed\n");
    n = 0;
  }
  std::vector<double> join;
  for (int i = 0; i < n; ++i) {
    RemoteHostsOptions o;
    o.listen = "tcp://127.0.0.1:0";
    o.server = *server;
    o.allowed_hosts = *allowed;
    o.workspace = w->root;
    o.workspace_token = *token;
    o.require_namespaces = false;
    o.kinds = {WorkerPolicy::kReadonly};
    StatusOr<std::unique_ptr<RemoteHosts>> hosts = RemoteHosts::Listen(o, RealClock::Get());
    if (!hosts.ok()) break;
    SlurmLauncherOptions so;
    so.srun = SearchPath("srun", getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
    so.odin = JoinPath(ExecutableDir(), "odin");
    so.workspace = w->root;
    so.connect = (*hosts)->endpoint();
    so.key = keys + "/hosts/slurm.key";
    so.coordinator_key = keys + "/coordinator.pub";
    so.cpus = 1;
    so.memory_mb = 200;
    so.time = "0:05:00";
    so.max_hosts = 1;
    so.log_dir = *dir;
    so.allow_loopback = true;  // the cluster is this machine
    StatusOr<std::unique_ptr<SlurmLauncher>> launcher = SlurmLauncher::Make(so);
    if (!launcher.ok()) {
      printf("a host asked of Slurm joining: %s\n", launcher.status().message().c_str());
      break;
    }
    (*hosts)->set_launcher(std::move(*launcher), seconds(300));
    (*hosts)->SetDemand(1);  // one call waits
    Clock::time_point t0 = Clock::now();
    std::vector<WorkerHosts::Event> events;
    while ((*hosts)->hosts().empty() && Clock::now() - t0 < std::chrono::seconds(60)) {
      (*hosts)->Pump(&events);
      usleep(2000);
    }
    if ((*hosts)->hosts().empty()) break;
    join.push_back(Ms(Clock::now() - t0));
    // Destroyed: the host is given back (SIGTERM through srun).
  }
  sh({"/bin/bash", fixture, "stop", *cluster});
  RemoveTree(*dir);
  RemoveTree(*cluster);
  if (join.empty()) return;
  printf("a host asked of Slurm joining (%zu joins, single-node Slurm: srun, job start, agent start, Hello)\n",
         join.size());
  Print("launch -> welcomed", Summarize(join));
}

int Main(int argc, char** argv) {
  bench::StartTempCleaner();
  int calls = 300, sessions = 5, joins = 10, slurm_joins = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--calls") == 0) calls = atoi(argv[i + 1]);
    if (strcmp(argv[i], "--sessions") == 0) sessions = atoi(argv[i + 1]);
    if (strcmp(argv[i], "--joins") == 0) joins = atoi(argv[i + 1]);
    if (strcmp(argv[i], "--slurm-joins") == 0) slurm_joins = atoi(argv[i + 1]);
  }
  spdlog::set_level(spdlog::level::warn);
  std::string path = std::string(getenv("PATH") ? getenv("PATH") : "") + ":/usr/sbin:/sbin:/usr/bin:/bin";
  g_ip = SearchPath("ip", path);
  g_unshare = SearchPath("unshare", path);
  g_nsenter = SearchPath("nsenter", path);
  g_sleep = SearchPath("sleep", path);
  if (geteuid() != 0 || g_ip.empty() || g_unshare.empty() || g_nsenter.empty()) {
    fprintf(stderr, "remote_bench: needs root, iproute2 and util-linux (network namespaces and veth pairs)\n");
    return 1;
  }
  // Slurm's daemons listen in the machine's network: this part first.
  if (slurm_joins > 0) SlurmJoins(slurm_joins);
  if (unshare(CLONE_NEWNET) != 0) {
    fprintf(stderr, "remote_bench: cannot make a network namespace: %s\n", strerror(errno));
    return 1;
  }
  StatusOr<std::string> dir = odin::bench::BenchTempDir("odin-remote-bench");
  if (!dir.ok()) return 1;
  g_dir = *dir;
  setenv("XDG_CONFIG_HOME", (g_dir + "/config").c_str(), 1);
  setenv("XDG_STATE_HOME", (g_dir + "/state").c_str(), 1);
  std::string ws = g_dir + "/ws";
  if (!MakeDirs(ws + "/.git").ok() || !Sh({g_ip, "link", "set", "lo", "up"}) ||
      !GenerateKeys(g_dir + "/keys", {"h1", "h2"}).ok()) {
    return 1;
  }
  std::string ns1 = MakeHostNamespace(1), ns2 = MakeHostNamespace(2);
  if (ns1.empty() || ns2.empty()) return 1;
  printf("remote_bench: %d cores; host agents in 2 network namespaces, veth, TCP with CURVE\n", CpuCount());

  // 1. Round trips.
  if (calls > 0) {
    std::string where_local, where_remote;
    WriteConfig(false, {}, 0);
    std::vector<double> local = RoundTrips(ws, calls, &where_local);
    StatusOr<pid_t> agent = StartAgent(ns1, 1, ws);
    if (!agent.ok()) return 1;
    WriteConfig(true, {"writable"}, 1);
    std::vector<double> remote = RoundTrips(ws, calls, &where_remote);
    StopAgent(*agent);
    if (local.empty() || remote.empty()) return 1;
    Stats l = Summarize(local), r = Summarize(remote);
    printf("tool call round trip (%d calls of `true`, coordinator -> worker -> ledger)\n", calls);
    Print(("local worker (" + where_local + ")").c_str(), l);
    Print(("worker behind a host agent (" + where_remote + ")").c_str(), r);
    printf("  %-52s %.2fx (goal <= 2x)\n", "remote / local, median", r.median_ms / l.median_ms);
  }

  // 2. Eight subagents: on hosts in two namespaces, against all local.
  if (sessions > 0) {
    json agents;
    std::vector<json> spawn;
    for (int i = 0; i < 8; ++i) {
      std::string prompt = "research part " + std::to_string(i);
      (void)WriteFileAtomic(ws + "/part" + std::to_string(i) + ".txt", "part " + std::to_string(i) + "\n");
      agents[prompt] = {
          {{"tool_calls", {{{"name", "Read"}, {"arguments", {{"file_path", "part" + std::to_string(i) + ".txt"}}}}}}},
          {{"text", "found part " + std::to_string(i)}}};
      spawn.push_back(
          {{"name", "AgentTool"}, {"arguments", {{"description", "part"}, {"prompt", prompt}, {"mode", "ask"}}}});
    }
    std::string script =
        json({{"responses", {{{"tool_calls", spawn}}, {{"text", "all parts found"}}}}, {"agents", agents}}).dump();
    StatusOr<pid_t> a1 = StartAgent(ns1, 1, ws), a2 = StartAgent(ns2, 2, ws);
    if (!a1.ok() || !a2.ok()) return 1;
    std::vector<double> local, remote;
    for (int i = 0; i < sessions; ++i) {
      for (bool on_hosts : {false, true}) {
        std::string url;
        StatusOr<pid_t> model = StartFakeModel(script, &url);
        if (!model.ok()) return 1;
        WriteConfig(on_hosts, {"subagent", "readonly"}, on_hosts ? 2 : 0);
        double ms = SubagentSession(ws, url);
        kill(*model, SIGKILL);
        waitpid(*model, nullptr, 0);
        if (ms < 0) return 1;
        (on_hosts ? remote : local).push_back(ms);
      }
    }
    StopAgent(*a1);
    StopAgent(*a2);
    Stats l = Summarize(local), r = Summarize(remote);
    printf("8 subagents, one session (%d sessions each, alternating; the same %d cores)\n", sessions, CpuCount());
    Print("all on this machine", l);
    Print("subagents and their reads on 2 hosts", r);
    printf("  %-52s %.2fx\n", "hosts / local, median", r.median_ms / l.median_ms);
  }

  // 3. A host joining a listening coordinator: from `odin host` starting to
  // its welcome.
  if (joins > 0) {
    RemoteHostsOptions o;
    o.listen = "tcp://0.0.0.0:" + std::to_string(kPort);
    o.server = *LoadKeyPair(g_dir + "/keys/coordinator.key");
    o.allowed_hosts = *LoadAllowedHosts(g_dir + "/keys/allowed_hosts");
    StatusOr<Workspace> w = FindWorkspace(ws);
    if (!w.ok()) return 1;
    o.workspace = w->root;
    o.workspace_token = *EnsureWorkspaceToken(w->state_dir);
    o.require_namespaces = false;
    std::vector<double> join;
    for (int i = 0; i < joins; ++i) {
      StatusOr<std::unique_ptr<RemoteHosts>> hosts = RemoteHosts::Listen(o, RealClock::Get());
      if (!hosts.ok()) return 1;
      Clock::time_point t0 = Clock::now();
      StatusOr<pid_t> agent = StartAgent(ns1, 1, ws);
      if (!agent.ok() || !(*hosts)->WaitForHosts(1, seconds(30)).ok()) return 1;
      join.push_back(Ms(Clock::now() - t0));
      StopAgent(*agent);
    }
    printf("a static host joining (%d joins: process start, sandbox probe, CURVE handshake, Hello, welcome)\n", joins);
    Print("odin host started -> welcomed", Summarize(join));
  }
  for (pid_t pid : g_children) kill(pid, SIGKILL);
  RemoveTree(g_dir);
  return 0;
}

}  // namespace
}  // namespace odin

int main(int argc, char** argv) { return odin::Main(argc, argv); }
