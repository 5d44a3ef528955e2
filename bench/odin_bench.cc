// odin_bench: the figures issue 2 asks for, as medians and p90s.
//
//   1. Round trip of a trivial tool call: coordinator -> sandboxed worker ->
//      `true` -> result recorded in the ledger (start and end records); the
//      calls back to back, then 20 ms apart (as a model's answers space
//      them), each beside an unsandboxed worker.
//   2. Cold start of `odin exec -- true`, the whole process, as a user runs it,
//      beside `odin --version` and a bare bwrap sandbox, interleaved.
//   3. The floor: a ZeroMQ ipc round trip between two processes.
//   4. Grep over a generated tree (50k files) against rg run directly, and the
//      EditTool round trip through a worker.
//   5. An agent session (odin -p) against tests/fake_llm_server answering at
//      once: time to the first model request, the per-call overhead seen by
//      the server, the time from its final answer to odin's exit, the peak
//      RSS of the largest process.
//   6. Validation latency: an edit of a mid-size C++ file validated by a warm
//      clangd in the lsp host (the lsp_check execution, as the ledger times
//      it), against clangd's own time from didChange to publishing the
//      diagnostics of the same change, asked directly.
//   8. Subagents: 8 AgentTool calls in one turn, each running 10 CPU-bound
//      commands of ~200 ms, with 1, 2, 4 and 8 tool workers: wall time
//      against the ideal (the commands' CPU time / cores).
//   9. The ledger anchor's cost: a tool call's two records (start, end) with
//      and without the anchor outside the workspace (ledger_anchor.h).
//  10. Long sessions (issue 17): a 300-call session in a 16,000-token window
//      against the fake model (the compactions it needed: how many, their
//      time and tokens before and after; the per-call figure beside the same
//      session without a window), and the time to resume a session of 5,000
//      messages (start of `odin -c -p` to the model's first request) against
//      a new session's.
//  11. Hooks (issue 18): the per-call time of the 20-call session without
//      hooks, with a PreToolUse hook, and with PreToolUse and PostToolUse
//      hooks (each a `true` in a hook worker), alternating.
//  12. MCP (issue 18): the per-call time of a 20-call session of
//      mcp__everything__get-sum (server-everything in its MCP worker) beside
//      the 20 x ExecuteCommand session, and the same calls spoken to the
//      server directly over its stdio, without Odin (what the protocol and
//      the server cost by themselves).
//  16. Telemetry (issue 53): the per-call time of the 20-call session with
//      OpenTelemetry off, exporting to a collector that answers, and to one
//      that never answers, alternating; and each one's time to exit.
//   7. The guards' own cost per turn: the stall detector per step, and the
//      workspace digest's update by a command's change set of 100 files
//      (it replaced a walk of the tree after each command, issue 50).
//
// Usage: odin_bench [--calls N] [--starts N] [--tree FILES] [--runs N] [--edits N] [--sessions N] [--hooks N]
// [--validations N] [--guards 0|1] [--subagents N] [--daemon N] [--ledger N] [--long 0|1] [--mcp N] [--web N] [--index
// LINES] [--index-queries N] [--telemetry N]. Runs in a fresh temporary workspace, with XDG_STATE_HOME in a temporary
// directory too (ledger anchors; $TMPDIR decides the file system). Never asserts: it prints.

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "bench/bench_temp.h"
#include "bench/bench_stats.h"
#include "bench/index_bench.h"
#include "bench/web_bench.h"
#include "base/secrets.h"
#include "base/subprocess.h"
#include "base/unique_fd.h"
#include "base/zmq_endpoint.h"
#include "ledger/ledger.h"
#include "workspace/protected_paths.h"
#include "session/runtime.h"
#include "config/sandbox_settings.h"
#include "pool/worker_sandbox.h"
#include "config/config_loader.h"
#include "workspace/workspace.h"
#include "workspace/workspace_files.h"
#include "planner/stall_detector.h"
#include "base/sha256.h"
#include "workspace/change_digest.h"
#include "odin/v1/worker.pb.h"
#include "gates/validators.h"
#include "tools/exec_command.h"
#include "tools/file_tool_args.h"
#include "tools/lsp_client.h"

namespace odin {
namespace {

using bench::Clock;
using bench::Ms;
using bench::Stats;
using bench::Summarize;

// Runs `calls` trivial tool calls one after another, gap_ms apart (0: back
// to back; else the coordinator keeps polling meanwhile, as while a model
// answers); returns each round trip and the part of it spent in the worker.
// CPU time (user and system) this process and its reaped children used so far, ms.
double CpuMsSoFar() {
  double ms = 0;
  for (int who : {RUSAGE_SELF, RUSAGE_CHILDREN}) {
    struct rusage ru;
    getrusage(who, &ru);
    ms += static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
          static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
  }
  return ms;
}

// edit: the calls are an agent's in edit mode, judged by the command rules
// (`true` only reads: the read-only view); else odin exec's, never judged
// (so `true` runs as a command that may write, over an overlay).
bool ToolCallRoundTrips(const std::string& dir, const std::string& sandbox, bool track, bool edit, int calls,
                        int gap_ms, std::vector<double>* total, std::vector<double>* in_worker, std::string* how) {
  RuntimeFlags flags;
  flags.dir = dir;
  flags.sandbox = sandbox;
  flags.track_changes = track;
  if (edit) flags.mode = "edit";
  flags.workers = 1;
  flags.session_kind = "bench";
  StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Start(flags);
  if (!rt.ok()) {
    fprintf(stderr, "odin_bench: %s\n", rt.status().message().c_str());
    return false;
  }
  Coordinator& coord = (*rt)->coordinator();
  coord.on_worker_ready = [how](const v1::Hello& h) { *how = h.sandbox().description(); };
  for (int i = -20; i < calls; ++i) {  // 20 warm-up calls
    ToolCall call;
    call.tool = kExecuteCommandTool;
    call.arguments_json = R"({"argv":["true"]})";
    if (edit) call.mode = CallMode::kEdit;
    std::optional<v1::ToolResult> result;
    Clock::time_point start = Clock::now();
    coord.Submit(call, {nullptr, [&](const v1::ToolResult& r, const Status&) { result = r; }});
    while (!result) {
      Status s = coord.Poll(seconds(1));
      if (!s.ok()) return false;
    }
    Clock::time_point end = Clock::now();
    if (result->status() != v1::TOOL_STATUS_OK) {
      fprintf(stderr, "odin_bench: call failed: %s\n", result->error().message().c_str());
      return false;
    }
    if (i >= 0) {
      total->push_back(Ms(end - start));
      in_worker->push_back(static_cast<double>(result->duration_us()) / 1000.0);
    }
    for (Clock::time_point until = end + milliseconds(gap_ms); Clock::now() < until;) {
      if (!coord.Poll(std::chrono::duration_cast<Duration>(until - Clock::now())).ok()) return false;
    }
  }
  return true;
}

// Start and stop of whole processes, as a user runs them, back to back so
// that all three see the same machine: `odin exec -- true` (a sandboxed
// worker started, one call recorded, everything stopped), `odin --version`
// (the odin binary's own start) and a bare bubblewrap sandbox (the floor of
// any sandboxed start). Empty if odin exec fails; bwrap's is empty without bwrap.
struct StartFigures {
  std::vector<double> exec_ms, version_ms, bwrap_ms;
  // odin-sandbox with a tool worker's policy (Odin's mounts, seccomp,
  // landlock, limits) running `true`: the floor of odin exec's sandboxed
  // worker, before the worker itself starts.
  std::vector<double> sandbox_ms;
};

StartFigures StartStopFigures(const std::string& dir, int runs) {
  std::string odin = JoinPath(ExecutableDir(), "odin");
  std::string bwrap = SearchPath("bwrap", getenv("PATH") != nullptr ? getenv("PATH") : "");
  std::string true_path = SearchPath("true", getenv("PATH") != nullptr ? getenv("PATH") : "");
  StartFigures f;
  std::vector<std::string> sandboxed;
  StatusOr<Workspace> ws = FindWorkspace(dir);
  StatusOr<LoadedConfig> loaded = ws.ok() ? LoadConfig(*ws, EnvironmentMap()) : StatusOr<LoadedConfig>(ws.status());
  if (loaded.ok()) {
    StatusOr<SandboxPolicy> policy = EffectiveSandboxPolicy(loaded->config, "");
    if (policy.ok()) {
      sandboxed = WorkerSandbox::Make(*ws, WorkerSandboxSettings(loaded->config, *ws), *policy, ExecutableDir())
                      .LauncherArgv(WorkerPolicy::kWritable);
      sandboxed.push_back(true_path);
    }
  }
  auto time_one = [&](std::vector<std::string> argv, std::vector<double>* into, bool warm) {
    Clock::time_point start = Clock::now();
    StatusOr<CommandOutput> out = RunCommand({.argv = std::move(argv), .env = CurrentEnvironment(), .cwd = dir});
    Clock::time_point end = Clock::now();
    if (!out.ok() || out->exit_code != 0) {
      fprintf(stderr, "odin_bench: %s failed: %s\n", into == &f.exec_ms ? "odin exec" : "a start",
              out.ok() ? out->output.c_str() : out.status().message().c_str());
      return false;
    }
    if (!warm) into->push_back(Ms(end - start));
    return true;
  };
  for (int i = -3; i < runs; ++i) {
    if (!time_one({odin, "exec", "--", "true"}, &f.exec_ms, i < 0)) return {};
    if (!time_one({odin, "--version"}, &f.version_ms, i < 0)) return {};
    if (!bwrap.empty() &&
        !time_one({bwrap, "--unshare-all", "--unshare-user", "--ro-bind", "/", "/", true_path}, &f.bwrap_ms, i < 0)) {
      bwrap.clear();
      f.bwrap_ms.clear();
    }
    if (!sandboxed.empty() && !time_one(sandboxed, &f.sandbox_ms, i < 0)) {
      sandboxed.clear();
      f.sandbox_ms.clear();
    }
  }
  return f;
}

// Ping-pong between a ROUTER and a DEALER in another process, as coordinator
// and worker talk: the worker connects and speaks first.
std::vector<double> ZmqRoundTrips(int n) {
  std::vector<double> ms;
  StatusOr<std::string> dir = odin::bench::BenchTempDir("odin-bench-zmq");
  std::string endpoint = "ipc://" + *dir + "/s";
  pid_t child = fork();
  if (child == 0) {
    auto dealer = ZmqEndpoint::ConnectDealer(endpoint, "echo");
    if (!dealer.ok()) _exit(1);
    std::string peer, payload = "hello";
    (void)(*dealer)->Send("", payload);
    for (;;) {
      StatusOr<bool> ready = (*dealer)->Poll(seconds(5), nullptr);
      if (!ready.ok() || !*ready) _exit(1);  // the parent is done or gone
      StatusOr<bool> got = (*dealer)->TryReceive(&peer, &payload);
      if (got.ok() && *got) (void)(*dealer)->Send("", payload);
    }
  }
  auto router = ZmqEndpoint::BindRouter(endpoint);
  std::string peer, payload;
  auto receive = [&]() {
    for (;;) {
      StatusOr<bool> ready = (*router)->Poll(seconds(5), nullptr);
      if (!ready.ok() || !*ready) return false;
      StatusOr<bool> got = (*router)->TryReceive(&peer, &payload);
      if (got.ok() && *got) return true;
    }
  };
  if (router.ok() && receive()) {  // the hello
    std::string msg(64, 'x');
    for (int i = -10; i < n; ++i) {
      Clock::time_point start = Clock::now();
      if (!(*router)->Send("echo", msg).ok() || !receive()) break;
      if (i >= 0) ms.push_back(Ms(Clock::now() - start));
    }
  }
  kill(child, SIGKILL);
  int status;
  waitpid(child, &status, 0);
  RemoveTree(*dir);
  return ms;
}

void Print(const char* what, const Stats& s, double target_ms);

// Runs one tool call through a runtime and waits for it; returns the
// milliseconds from submit to recorded result, or -1 if it failed.
double TimeCall(Runtime* rt, const std::string& tool, const std::string& args, std::string* output = nullptr) {
  ToolCall call;
  call.tool = tool;
  call.arguments_json = args;
  std::optional<v1::ToolResult> result;
  std::string text;
  Clock::time_point start = Clock::now();
  rt->coordinator().Submit(call, {[&](const v1::ToolProgress& p) { text += p.output().data(); },
                                  [&](const v1::ToolResult& r, const Status&) { result = r; }});
  while (!result) {
    if (!rt->coordinator().Poll(seconds(1)).ok()) return -1;
  }
  double ms = Ms(Clock::now() - start);
  if (output != nullptr) *output = text;
  if (result->status() != v1::TOOL_STATUS_OK) {
    fprintf(stderr, "odin_bench: %s failed: %s\n", tool.c_str(), result->error().message().c_str());
    return -1;
  }
  return ms;
}

// A tree of `files` source-like files in directories of 100, with the needle
// in one file of every thousand.
bool MakeTree(const std::string& root, int files) {
  std::string filler;
  for (int l = 0; l < 40; ++l) filler += "    value = compute(value, " + std::to_string(l) + ");  // filler line\n";
  for (int i = 0; i < files; ++i) {
    std::string dir = root + "/src/d" + std::to_string(i / 100);
    if (i % 100 == 0 && !MakeDirs(dir).ok()) return false;
    std::string body = "// file " + std::to_string(i) + "\n" + filler;
    if (i % 1000 == 7) body += "    odin_bench_needle_xyzzy();\n";
    FILE* f = fopen((dir + "/f" + std::to_string(i) + ".cc").c_str(), "w");
    if (f == nullptr) return false;
    fwrite(body.data(), 1, body.size(), f);
    fclose(f);
  }
  return true;
}

double RunRgDirectly(const std::vector<std::string>& argv, const std::string& cwd) {
  Clock::time_point start = Clock::now();
  StatusOr<CommandOutput> out = RunCommand({.argv = argv, .env = CurrentEnvironment(), .cwd = cwd});
  if (!out.ok() || out->exit_code > 1) return -1;
  return Ms(Clock::now() - start);
}

bool FileToolFigures(int tree_files, int runs, int edits) {
  StatusOr<std::string> dir = odin::bench::BenchTempDir("odin-bench-tree");
  if (!dir.ok()) return false;
  std::string root = *dir;
  printf("file tools (a generated tree of %d files, %d runs each)\n", tree_files, runs);
  if (!MakeTree(root, tree_files)) return false;
  RuntimeFlags flags;
  flags.dir = root;
  flags.workers = 1;
  flags.session_kind = "bench";
  flags.mode = "edit";
  StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Start(flags);
  if (!rt.ok()) {
    fprintf(stderr, "odin_bench: %s\n", rt.status().message().c_str());
    return false;
  }
  std::string rg = SearchPath("rg", getenv("PATH") ? getenv("PATH") : "");
  struct Pair {
    const char* what;
    std::string args;
    std::vector<std::string> rg_argv;
  };
  std::vector<Pair> pairs = {
      {"Grep files_with_matches vs rg -l",
       R"({"pattern":"odin_bench_needle_xyzzy"})",
       {rg, "-l", "odin_bench_needle_xyzzy", root}},
      {"Grep content -n vs rg -n",
       R"({"pattern":"odin_bench_needle_xyzzy","output_mode":"content","-n":true})",
       {rg, "-n", "odin_bench_needle_xyzzy", root}},
  };
  for (const Pair& p : pairs) {
    std::vector<double> direct, odin;
    RunRgDirectly(p.rg_argv, root);  // warm the page cache
    for (int i = 0; i < runs; ++i) {
      // Alternate, so both see the same machine.
      double d = RunRgDirectly(p.rg_argv, root);
      double o = TimeCall(rt->get(), kGrepTool, p.args);
      if (d < 0 || o < 0) return false;
      direct.push_back(d);
      odin.push_back(o);
    }
    Stats sd = Summarize(direct), so = Summarize(odin);
    printf("  %s\n", p.what);
    Print("  rg run directly", sd, 0);
    Print("  Odin Grep (worker, rg, format, ledger)", so, 0);
    printf("    ratio of medians: %.3fx (target <= 1.1x)\n", so.median_ms / sd.median_ms);
  }

  // The Edit round trip: coordinator gate -> worker (lock, hash check, edit,
  // atomic write, diff) -> ledger with artifacts.
  std::string file = root + "/edit_me.txt";
  std::string text;
  for (int l = 1; l <= 200; ++l) text += "line " + std::to_string(l) + " of the file being edited\n";
  if (!WriteFileAtomic(file, text).ok()) return false;
  if (TimeCall(rt->get(), kReadTool, R"({"file_path":"edit_me.txt"})") < 0) return false;
  std::vector<double> ms;
  for (int i = 0; i < edits; ++i) {
    const char* args = i % 2 == 0
                           ? R"({"file_path":"edit_me.txt","old_string":"line 100 of","new_string":"LINE 100 of"})"
                           : R"({"file_path":"edit_me.txt","old_string":"LINE 100 of","new_string":"line 100 of"})";
    double t = TimeCall(rt->get(), kEditTool, args);
    if (t < 0) return false;
    ms.push_back(t);
  }
  printf("  EditTool round trip (%d edits of a 200-line file; gate, worker, atomic write, ledger)\n", edits);
  Print("  edit", Summarize(ms), 0);
  rt->reset();
  RemoveTree(root);
  return true;
}

// One agent session against the fake model server: returns the time from
// spawning odin to the server's first request, the gaps from each answer to
// the next request, the time from the model's final answer to odin's exit
// (reaped, its output read), and the peak RSS of the largest process of the
// session.
struct SessionFigures {
  double first_request_ms = -1;
  std::vector<double> gaps_ms;
  double answer_to_exit_ms = -1;
  long peak_rss_kb = 0;
  bool ok = false;
};

int64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Starts tests/fake_llm_server on dir/script.json (logging to dir/log.jsonl);
// *url gets its OpenAI base URL.
StatusOr<pid_t> StartFakeModel(const std::string& dir, std::string* url) {
  int out[2];
  if (pipe(out) != 0) return PosixError("pipe", errno);
  SpawnOptions server;
  server.argv = {JoinPath(ExecutableDir(), "fake_llm_server"), "--script", dir + "/script.json", "--log",
                 dir + "/log.jsonl"};
  server.env = CurrentEnvironment();
  server.stdout_fd = out[1];
  server.parent_death_signal = SIGKILL;
  StatusOr<pid_t> pid = Spawn(server);
  close(out[1]);
  if (!pid.ok()) {
    close(out[0]);
    return pid.status();
  }
  char buf[64] = {0};
  (void)!read(out[0], buf, sizeof buf - 1);
  close(out[0]);
  *url = "http://127.0.0.1:" + std::to_string(std::atoi(buf + 5)) + "/v1";
  return *pid;
}

// The user's config of the bench's sessions (XDG_CONFIG_HOME): `settings`
// with the stall detector's no_progress_turns raised. A measured session is
// twenty silent commands in a row, which is what that rule exists to stop.
// Every session gets a config of the bench's own, never the user's.
std::string g_config_home;

bool WriteUserConfig(const std::string& config_home, nlohmann::json settings = nlohmann::json::object()) {
  settings["stall"]["no_progress_turns"] = 1000;
  return MakeDirs(config_home + "/odin").ok() &&
         WriteFileAtomic(config_home + "/odin/odinconfig.json", settings.dump()).ok();
}

SessionFigures AgentSessionOnce(const std::string& ws, const std::string& url, const std::string& log_path,
                                const std::vector<std::string>& extra_args = {}) {
  SessionFigures f;
  // Measured in a child of our own, so RUSAGE_CHILDREN covers this session's
  // processes and nothing reaped before.
  int report[2];
  if (pipe(report) != 0) return f;
  pid_t helper = fork();
  if (helper == 0) {
    close(report[0]);
    std::vector<std::string> env = CurrentEnvironment();
    env.push_back("OPENAI_BASE_URL=" + url);
    env.push_back("OPENAI_API_KEY=bench");
    int64_t t0 = MonotonicNs();
    std::vector<std::string> argv = {JoinPath(ExecutableDir(), "odin"), "-p", "run true 20 times", "--output-format",
                                     "json"};
    argv.insert(argv.end(), extra_args.begin(), extra_args.end());
    StatusOr<CommandOutput> out = RunCommand({.argv = argv, .env = env, .cwd = ws});
    int64_t t_exit = MonotonicNs();
    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    int64_t msg[4] = {t0, out.ok() && out->exit_code == 0 ? 1 : 0, ru.ru_maxrss, t_exit};
    if (msg[1] == 0) fprintf(stderr, "odin_bench: the agent session failed: %s\n", out.ok() ? out->output.c_str() : "");
    (void)!write(report[1], msg, sizeof msg);
    _exit(0);
  }
  close(report[1]);
  int64_t msg[4] = {0, 0, 0, 0};
  (void)!read(report[0], msg, sizeof msg);
  close(report[0]);
  int status;
  waitpid(helper, &status, 0);
  if (msg[1] == 0) return f;
  f.peak_rss_kb = static_cast<long>(msg[2]);
  // The server's log: requests (t_ns) and finished answers (answered_ns).
  StatusOr<std::string> log = ReadFileToString(log_path);
  if (!log.ok()) return f;
  std::vector<int64_t> requests, answers;
  size_t start = 0;
  while (start < log->size()) {
    size_t nl = log->find('\n', start);
    std::string line = log->substr(start, nl - start);
    start = nl == std::string::npos ? log->size() : nl + 1;
    size_t t = line.find("\"t_ns\":"), a = line.find("\"answered_ns\":");
    if (t != std::string::npos) requests.push_back(std::atoll(line.c_str() + t + 7));
    if (a != std::string::npos) answers.push_back(std::atoll(line.c_str() + a + 14));
  }
  if (requests.empty()) return f;
  f.first_request_ms = static_cast<double>(requests[0] - msg[0]) / 1e6;
  for (size_t i = 1; i < requests.size() && i <= answers.size(); ++i) {
    f.gaps_ms.push_back(static_cast<double>(requests[i] - answers[i - 1]) / 1e6);
  }
  if (!answers.empty()) f.answer_to_exit_ms = static_cast<double>(msg[3] - answers.back()) / 1e6;
  f.ok = true;
  return f;
}

// The script of a measured session: twenty different commands (the same
// call twenty times would be a loop, and the stall detector would stop it).
// write: `echo N > out.txt` instead of `true N`: a command that writes, so
// it runs over an overlay of its own, whose change is applied and recorded
// (a `true` only reads: the read-only view).
std::string TwentyCommandsScript(bool write = false) {
  std::string script = R"({"responses":[)";
  for (int c = 0; c < 20; ++c) {
    std::string command = write ? "echo " + std::to_string(c) + " > out.txt" : "true " + std::to_string(c);
    script += R"({"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":")" + command + R"("}}]},)";
  }
  return script + R"({"text":"done"}]})";
}

// The same session as AgentFigures, sent through a daemon (odin serve) with
// odin -p --connect, next to one run locally, alternating.
bool DaemonFigures(int sessions) {
  printf("daemon (odin -p --connect to odin serve vs odin -p, same 20-call session, %d each, alternating)\n", sessions);
  std::vector<double> local_first, local_gaps, remote_first, remote_gaps;
  for (int i = 0; i < 2 * sessions; ++i) {
    bool remote = i % 2 == 1;
    StatusOr<std::string> dir = odin::bench::BenchTempDir("odin-bench-daemon");
    if (!dir.ok()) return false;
    std::string ws = *dir + "/ws";
    if (!WriteFileAtomic(*dir + "/script.json", TwentyCommandsScript()).ok() || !MakeDirs(ws).ok()) return false;
    std::string url;
    StatusOr<pid_t> model = StartFakeModel(*dir, &url);
    if (!model.ok()) return false;
    pid_t daemon = -1;
    std::vector<std::string> extra;
    if (remote) {
      SpawnOptions serve;
      serve.argv = {JoinPath(ExecutableDir(), "odin"), "serve"};
      serve.env = CurrentEnvironment();
      serve.env.push_back("OPENAI_BASE_URL=" + url);
      serve.env.push_back("OPENAI_API_KEY=bench");
      serve.cwd = ws;
      serve.parent_death_signal = SIGKILL;
      StatusOr<pid_t> started = Spawn(serve);
      if (!started.ok()) return false;
      daemon = *started;
      for (int t = 0; t < 200 && !PathExists(ws + "/.odin/daemon.json"); ++t) usleep(20000);
      // The socket is outside the workspace; daemon.json names it.
      StatusOr<std::string> info = ReadFileToString(ws + "/.odin/daemon.json");
      size_t at = info.ok() ? info->find("\"listen\":\"") : std::string::npos;
      if (at == std::string::npos) return false;
      at += 10;
      extra = {"--connect", info->substr(at, info->find('"', at) - at)};
    }
    SessionFigures f = AgentSessionOnce(ws, url, *dir + "/log.jsonl", extra);
    int status;
    if (daemon > 0) {
      kill(daemon, SIGTERM);
      waitpid(daemon, &status, 0);
    }
    kill(*model, SIGKILL);
    waitpid(*model, &status, 0);
    RemoveTree(*dir);
    if (!f.ok) return false;
    (remote ? remote_first : local_first).push_back(f.first_request_ms);
    std::vector<double>& gaps = remote ? remote_gaps : local_gaps;
    gaps.insert(gaps.end(), f.gaps_ms.begin(), f.gaps_ms.end());
  }
  Stats lf = Summarize(local_first), rf = Summarize(remote_first), lg = Summarize(local_gaps),
        rg = Summarize(remote_gaps);
  Print("local: start to first model request", lf, 0);
  Print("daemon: client start to first model request", rf, 0);
  Print("local: per call (server side)", lg, 0);
  Print("daemon: per call (server side)", rg, 3.0);
  printf("  %-44s %.2fx (first request), %.2fx (per call)\n", "daemon / local, medians", rf.median_ms / lf.median_ms,
         rg.median_ms / lg.median_ms);
  return true;
}

// A tool call's two ledger records (its start, then its end with a small
// output), `calls` times, in a ledger with the anchor and one without,
// alternating blocks of 100 so both see the same machine.
bool LedgerFigures(int calls) {
  printf("ledger: a tool call's start and end records (%d calls each, with and without the anchor)\n", calls);
  StatusOr<std::string> dir = odin::bench::BenchTempDir("odin-bench-ledger");
  if (!dir.ok()) return false;
  LedgerOptions with, without;
  with.anchor_dir = *dir + "/anchors";
  without.anchored = false;
  auto a = Ledger::Open(*dir + "/anchored.db", Redactor(), with);
  auto b = Ledger::Open(*dir + "/plain.db", Redactor(), without);
  if (!a.ok() || !b.ok()) return false;
  std::vector<double> anchored, plain;
  for (int block = 0; block * 100 < calls; ++block) {
    for (bool anchor : {true, false}) {
      Ledger* l = anchor ? a->get() : b->get();
      for (int i = 0; i < 100 && block * 100 + i < calls; ++i) {
        std::string id = "ex_" + std::to_string(block) + "_" + std::to_string(i);
        ExecutionStart start{id, "ses_1", "main", "ExecuteCommand", R"({"argv":["true"]})", "edit", "w-1", 1, ""};
        ExecutionEnd end;
        end.execution_id = id;
        end.status = "ok";
        end.exit_code = 0;
        end.exit_reason = "normal";
        end.output_head = "ok\n";
        end.output_bytes = 3;
        Clock::time_point t0 = Clock::now();
        if (!l->AddExecutionStart(start).ok() || !l->AddExecutionEnd(end, {}).ok()) return false;
        (anchor ? anchored : plain).push_back(Ms(Clock::now() - t0));
      }
    }
  }
  a->reset();
  b->reset();
  RemoveTree(*dir);
  Stats sa = Summarize(anchored), sp = Summarize(plain);
  Print("start + end, anchored", sa, 0);
  Print("start + end, no anchor", sp, 0);
  printf("  %-44s %+.3f ms median, %+.3f ms mean per call (two anchor writes)\n", "the anchor's cost",
         sa.median_ms - sp.median_ms, sa.mean_ms - sp.mean_ms);
  return true;
}

// One odin -p session of 20 x ExecuteCommand true against a fresh fake model,
// in a throwaway workspace (f.ok is false if anything failed).
SessionFigures TwentyCommandSession(bool write = false) {
  StatusOr<std::string> dir = odin::bench::BenchTempDir("odin-bench-agent");
  if (!dir.ok()) return {};
  SessionFigures f;
  std::string url;
  if (WriteFileAtomic(*dir + "/script.json", TwentyCommandsScript(write)).ok() && MakeDirs(*dir + "/ws").ok()) {
    StatusOr<pid_t> pid = StartFakeModel(*dir, &url);
    if (pid.ok()) {
      f = AgentSessionOnce(*dir + "/ws", url, *dir + "/log.jsonl");
      kill(*pid, SIGKILL);
      int status;
      waitpid(*pid, &status, 0);
    }
  }
  RemoveTree(*dir);
  return f;
}

bool AgentFigures(int sessions) {
  printf("agent session (odin -p against the fake model answering at once: 20 x ExecuteCommand true, %d sessions)\n",
         sessions);
  std::vector<double> first, gaps, to_exit, writing_gaps;
  long peak = 0;
  for (int i = 0; i < sessions; ++i) {
    SessionFigures f = TwentyCommandSession();
    if (!f.ok) return false;
    first.push_back(f.first_request_ms);
    gaps.insert(gaps.end(), f.gaps_ms.begin(), f.gaps_ms.end());
    if (f.answer_to_exit_ms >= 0) to_exit.push_back(f.answer_to_exit_ms);
    peak = std::max(peak, f.peak_rss_kb);
    // The same session whose commands write, alternating with it.
    SessionFigures w = TwentyCommandSession(/*write=*/true);
    if (!w.ok) return false;
    writing_gaps.insert(writing_gaps.end(), w.gaps_ms.begin(), w.gaps_ms.end());
  }
  Print("start to first model request", Summarize(first), 30.0);
  Print("per call, answer to next request (server side)", Summarize(gaps), 3.0);
  Print("  the same, commands that write (echo N > out.txt)", Summarize(writing_gaps), 0);
  if (!to_exit.empty()) Print("final answer to exit (odin reaped)", Summarize(to_exit), 10.0);
  printf("  %-44s %.1f MB (target <= 30 MB)\n", "peak RSS of the largest process", static_cast<double>(peak) / 1024.0);
  return true;
}

// Section 11: what hooks cost: the same 20-call session without hooks, with
// a PreToolUse hook `true` on every command, and with PreToolUse and
// PostToolUse hooks, alternating.
bool HookFigures(int sessions) {
  printf("hooks (the same 20 x ExecuteCommand true session; %d sessions each, alternating)\n", sessions);
  StatusOr<std::string> config = odin::bench::BenchTempDir("odin-bench-hooks");
  if (!config.ok()) return false;
  const char* kinds[] = {"none", "pre", "pre+post"};
  std::vector<double> gaps[3];
  for (int i = 0; i < 3 * sessions; ++i) {
    int kind = i % 3;
    std::string hooks = kind == 0   ? "{}"
                        : kind == 1 ? R"({"PreToolUse": [{"matcher": "Bash", "hooks": [{"command": "true"}]}]})"
                                    : R"({"PreToolUse": [{"matcher": "Bash", "hooks": [{"command": "true"}]}],
                                  "PostToolUse": [{"matcher": "Bash", "hooks": [{"command": "true"}]}]})";
    std::string dir_for_kind = *config + "/" + kinds[kind];
    if (!WriteUserConfig(dir_for_kind, {{"hooks", nlohmann::json::parse(hooks)}})) return false;
    setenv("XDG_CONFIG_HOME", dir_for_kind.c_str(), 1);
    SessionFigures f = TwentyCommandSession();
    if (!f.ok) return false;
    gaps[kind].insert(gaps[kind].end(), f.gaps_ms.begin(), f.gaps_ms.end());
  }
  setenv("XDG_CONFIG_HOME", g_config_home.c_str(), 1);
  RemoveTree(*config);
  Stats none = Summarize(gaps[0]), pre = Summarize(gaps[1]), both = Summarize(gaps[2]);
  Print("per call, no hooks", none, 0);
  Print("per call, PreToolUse `true`", pre, 0);
  Print("per call, PreToolUse and PostToolUse `true`", both, 0);
  printf("  %-44s %+.2f ms, %+.2f ms per call (medians)\n", "what the hooks add", pre.median_ms - none.median_ms,
         both.median_ms - none.median_ms);
  return true;
}

// The same server spoken to directly over its stdio, without Odin: 20
// tools/call round trips after initialize (ms each; empty on failure).
std::vector<double> DirectMcpCalls(const std::string& server) {
  std::vector<double> out;
  StatusOr<Pipe> in = MakePipe(O_CLOEXEC), from = MakePipe(O_CLOEXEC);
  if (!in.ok() || !from.ok()) return out;
  SpawnOptions o;
  o.argv = {server};
  o.env = CurrentEnvironment();
  o.stdin_fd = in->read_end.get();
  o.stdout_fd = from->write_end.get();
  StatusOr<pid_t> pid = Spawn(o);
  in->read_end.reset();
  from->write_end.reset();
  if (!pid.ok()) return out;
  FILE* reader = fdopen(from->read_end.release(), "r");
  int to = in->write_end.get();
  auto send = [to](const std::string& line) { return WriteAll(to, line + "\n", "mcp").ok(); };
  // Reads lines until the answer with this id.
  auto answer = [reader](int id) {
    char* line = nullptr;
    size_t cap = 0;
    bool found = false;
    while (!found && getline(&line, &cap, reader) > 0) {
      nlohmann::json m = nlohmann::json::parse(line, nullptr, false);
      found = m.is_object() && m.contains("id") && m["id"] == id;
    }
    free(line);
    return found;
  };
  bool ok = send(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",)"
                 R"("capabilities":{},"clientInfo":{"name":"bench","version":"1"}}})") &&
            answer(1) && send(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  for (int i = 0; ok && i < 20; ++i) {
    int id = 10 + i;
    Clock::time_point t0 = Clock::now();
    ok = send(R"({"jsonrpc":"2.0","id":)" + std::to_string(id) +
              R"(,"method":"tools/call","params":{"name":"get-sum","arguments":{"a":1,"b":)" + std::to_string(i) +
              "}}}") &&
         answer(id);
    if (ok) out.push_back(Ms(Clock::now() - t0));
  }
  fclose(reader);
  kill(*pid, SIGKILL);
  int status;
  waitpid(*pid, &status, 0);
  return out;
}

// Section 12: what an MCP tool call costs through Odin.
bool McpFigures(int sessions) {
  std::string server = JoinPath(ExecutableDir(), "../lsp/node_modules/.bin/mcp-server-everything");
  if (!PathExists(server)) {
    printf("mcp: skipped (server-everything is not installed; scripts/install-language-servers.sh installs it)\n");
    return true;
  }
  printf("mcp (20 x mcp__everything__get-sum vs 20 x ExecuteCommand true sessions; %d each, alternating)\n", sessions);
  StatusOr<std::string> config = odin::bench::BenchTempDir("odin-bench-mcp");
  if (!config.ok()) return false;
  std::string calls = R"({"responses":[)";
  for (int c = 0; c < 20; ++c) {
    calls +=
        R"({"tool_calls":[{"name":"mcp__everything__get-sum","arguments":{"a":1,"b":)" + std::to_string(c) + "}}]},";
  }
  calls += R"({"text":"done"}]})";
  if (!WriteUserConfig(*config, {{"mcpServers", {{"everything", {{"command", server}}}}}})) return false;
  std::vector<double> gaps[2], direct;
  for (int i = 0; i < 2 * sessions; ++i) {
    bool mcp = i % 2 == 1;
    StatusOr<std::string> dir = odin::bench::BenchTempDir("odin-bench-agent");
    if (!dir.ok()) return false;
    std::string url;
    bool ok = WriteFileAtomic(*dir + "/script.json", mcp ? calls : TwentyCommandsScript()).ok() &&
              MakeDirs(*dir + "/ws").ok();
    StatusOr<pid_t> model = ok ? StartFakeModel(*dir, &url) : StatusOr<pid_t>(Status::Internal("setup"));
    if (!model.ok()) return false;
    if (mcp) setenv("XDG_CONFIG_HOME", config->c_str(), 1);
    SessionFigures f = AgentSessionOnce(*dir + "/ws", url, *dir + "/log.jsonl");
    setenv("XDG_CONFIG_HOME", g_config_home.c_str(), 1);
    kill(*model, SIGKILL);
    int status;
    waitpid(*model, &status, 0);
    RemoveTree(*dir);
    if (!f.ok) return false;
    // The first call waits for the server to start: counted apart.
    size_t skip = mcp && !f.gaps_ms.empty() ? 1 : 0;
    gaps[mcp].insert(gaps[mcp].end(), f.gaps_ms.begin() + static_cast<long>(skip), f.gaps_ms.end());
    if (mcp) {
      std::vector<double> d = DirectMcpCalls(server);
      direct.insert(direct.end(), d.begin(), d.end());
    }
  }
  RemoveTree(*config);
  Stats command = Summarize(gaps[0]), tool = Summarize(gaps[1]), raw = Summarize(direct);
  Print("per call, ExecuteCommand true", command, 0);
  Print("per call, mcp__everything__get-sum", tool, 0);
  Print("the same call, straight to the server", raw, 0);
  printf("  %-44s %+.2f ms per call (medians; sandbox, gates, ledger, worker hop)\n", "what Odin adds to an MCP call",
         tool.median_ms - raw.median_ms);
  return true;
}

// Section 16: what OpenTelemetry costs a session: the same 20-call session
// with telemetry off, exporting to a collector that answers at once, and to
// one that never answers (it listens, but never accepts), alternating.
// Exports go every 100 ms, so several happen during each session.
bool TelemetryFigures(int sessions) {
  printf("telemetry (the same 20 x ExecuteCommand true session; %d sessions each, alternating)\n", sessions);
  httplib::Server live;
  live.Post(R"(/v1/.*)", [](const httplib::Request&, httplib::Response& res) { res.status = 200; });
  int live_port = live.bind_to_any_port("127.0.0.1");
  std::thread live_thread([&live] { live.listen_after_bind(); });
  UniqueFd dead(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  bool listening = dead.get() >= 0 && bind(dead.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
                   listen(dead.get(), 128) == 0 &&
                   getsockname(dead.get(), reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  const char* kinds[] = {"off", "collector", "dead collector"};
  std::string urls[] = {"", "http://127.0.0.1:" + std::to_string(live_port),
                        "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port))};
  std::vector<double> gaps[3], exits[3];
  bool ok = listening && live_port > 0;
  for (int i = 0; ok && i < 3 * sessions; ++i) {
    int kind = i % 3;
    if (kind == 0) {
      unsetenv("ODIN_TELEMETRY");
    } else {
      setenv("ODIN_TELEMETRY", "1", 1);
      setenv("OTEL_EXPORTER_OTLP_ENDPOINT", urls[kind].c_str(), 1);
      setenv("OTEL_BSP_SCHEDULE_DELAY", "100", 1);
      setenv("OTEL_METRIC_EXPORT_INTERVAL", "100", 1);
    }
    SessionFigures f = TwentyCommandSession();
    ok = f.ok;
    gaps[kind].insert(gaps[kind].end(), f.gaps_ms.begin(), f.gaps_ms.end());
    if (f.answer_to_exit_ms >= 0) exits[kind].push_back(f.answer_to_exit_ms);
  }
  for (const char* v :
       {"ODIN_TELEMETRY", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_BSP_SCHEDULE_DELAY", "OTEL_METRIC_EXPORT_INTERVAL"}) {
    unsetenv(v);
  }
  live.stop();
  live_thread.join();
  if (!ok) return false;
  Stats off = Summarize(gaps[0]), on = Summarize(gaps[1]), stuck = Summarize(gaps[2]);
  Print("per call, telemetry off", off, 0);
  Print("per call, exporting to a collector", on, 0);
  Print("per call, exporting to one that never answers", stuck, 0);
  printf("  %-44s %.2fx, %.2fx of off (medians)\n", "per call with telemetry", on.median_ms / off.median_ms,
         stuck.median_ms / off.median_ms);
  for (int k = 0; k < 3; ++k) {
    if (exits[k].empty()) continue;
    std::string what = std::string("final answer to exit, ") + kinds[k];
    Print(what.c_str(), Summarize(exits[k]), 0);
  }
  return true;
}

// Section 13: what the reviewers add to a message: the same 10-write message
// in the auto profile (no reviewers), safe (hydrator, critic, QA verifier)
// and strict (all five, checks off). The fake model answers every reviewer
// at once, so the difference is Odin's own cost (evidence from the ledger,
// the schema checks, the plan, the holds) plus one local round trip each.
bool ReviewerFigures(int sessions) {
  printf("reviewers (a message of 10 WriteFile calls; %d messages per profile, interleaved)\n", sessions);
  auto answer = [](const nlohmann::json& j) { return nlohmann::json{{"text", j.dump()}}; };
  nlohmann::json responses = nlohmann::json::array();
  for (int i = 0; i < 10; ++i) {
    responses.push_back({{"tool_calls",
                          {{{"name", "WriteFile"},
                            {"arguments", {{"file_path", "f" + std::to_string(i) + ".txt"}, {"content", "x\n"}}}}}}});
  }
  responses.push_back({{"text", "done"}});
  nlohmann::json script = {
      {"responses", responses},
      {"by_system",
       {{"You are Odin's hydrator", answer({{"intent", "write ten files"},
                                            {"acceptance_criteria", {"ten files exist"}},
                                            {"steps", {{{"text", "write them"}}}},
                                            {"workflow", "qa-proof"}})},
        {"You are Odin's plan critic", answer({{"verdict", "PROCEED"}, {"reasons", nlohmann::json::array()}})},
        {"You are Odin's drift auditor", answer({{"verdict", "OK"}, {"reasons", nlohmann::json::array()}})},
        {"You are Odin's QA verifier",
         answer({{"verdict", "VERIFIED"},
                 {"criteria", {{{"criterion", "ten files exist"}, {"met", true}, {"evidence", {"@evidence_id"}}}}},
                 {"findings", nlohmann::json::array()}})},
        {"You are Odin's session reflector", answer({{"asked", "ten files"},
                                                     {"done", "ten files"},
                                                     {"failed_and_fixed", nlohmann::json::array()},
                                                     {"open_risks", nlohmann::json::array()}})}}}};
  StatusOr<std::string> config = odin::bench::BenchTempDir("odin-bench-reviewers");
  if (!config.ok() || !WriteUserConfig(*config, {{"checks", {{"build", ""}, {"lint", ""}, {"tests", ""}}}})) {
    return false;
  }
  const char* profiles[] = {"auto", "safe", "strict"};
  std::vector<double> wall[3];
  int reviewer_calls[3] = {0, 0, 0};
  for (int i = 0; i < 3 * sessions; ++i) {
    int p = i % 3;
    StatusOr<std::string> dir = odin::bench::BenchTempDir("odin-bench-review");
    if (!dir.ok() || !WriteFileAtomic(*dir + "/script.json", script.dump()).ok() || !MakeDirs(*dir + "/ws/.git").ok())
      return false;
    std::string url;
    StatusOr<pid_t> pid = StartFakeModel(*dir, &url);
    if (!pid.ok()) return false;
    std::vector<std::string> env;
    for (const std::string& e : CurrentEnvironment()) {
      if (e.rfind("XDG_CONFIG_HOME=", 0) != 0) env.push_back(e);
    }
    env.push_back("OPENAI_BASE_URL=" + url);
    env.push_back("OPENAI_API_KEY=bench");
    env.push_back("XDG_CONFIG_HOME=" + *config);
    int64_t t0 = MonotonicNs();
    StatusOr<CommandOutput> out = RunCommand({.argv = {JoinPath(ExecutableDir(), "odin"), "-p", "write ten files",
                                                       "--output-format", "json", "--profile", profiles[p]},
                                              .env = env,
                                              .cwd = *dir + "/ws"});
    int64_t t1 = MonotonicNs();
    kill(*pid, SIGKILL);
    int status;
    waitpid(*pid, &status, 0);
    if (!out.ok() || out->exit_code != 0) {
      fprintf(stderr, "odin_bench: the %s message failed: %s\n", profiles[p], out.ok() ? out->output.c_str() : "");
      return false;
    }
    wall[p].push_back(static_cast<double>(t1 - t0) / 1e6);
    StatusOr<std::string> log = ReadFileToString(*dir + "/log.jsonl");
    if (log.ok() && i < 3) {
      // Reviewer requests are numbered from 2,000,000 by the fake server.
      for (size_t at = 0; (at = log->find("\"n\":20000", at)) != std::string::npos; ++at) ++reviewer_calls[p];
    }
    RemoveTree(*dir);
  }
  RemoveTree(*config);
  Stats a = Summarize(wall[0]), s = Summarize(wall[1]), x = Summarize(wall[2]);
  Print("whole message, auto (no reviewers)", a, 0);
  Print("whole message, safe (hydrator, critic, QA)", s, 0);
  Print("whole message, strict (all five)", x, 0);
  printf("  %-44s %d, %d, %d\n", "reviewer model calls (auto, safe, strict)", reviewer_calls[0] / 2,
         reviewer_calls[1] / 2, reviewer_calls[2] / 2);
  printf("  %-44s %+.1f ms (%.2fx), %+.1f ms (%.2fx) (medians)\n", "what the reviewers add (safe, strict)",
         s.median_ms - a.median_ms, s.median_ms / a.median_ms, x.median_ms - a.median_ms, x.median_ms / a.median_ms);
  return true;
}

// Section 10: compaction in a long session, and resume.
bool LongSessionFigures() {
  printf(
      "long sessions (200 calls of ~1.6 KB output, with and without a 16,000-token window, against a server with a "
      "prompt cache; resume of 5,000 messages)\n");
  auto script = [](bool window) {
    nlohmann::json responses = nlohmann::json::array();
    for (int i = 0; i < 200; ++i) {
      std::string word;
      for (int n = i; word.empty() || n > 0; n /= 26) word += static_cast<char>('a' + n % 26);
      nlohmann::json call = {{"name", "ExecuteCommand"},
                             {"arguments", {{"command", "echo " + word + "; head -c 1500 /dev/zero | tr '\\0' x"}}}};
      responses.push_back({{"tool_calls", {call}}});
    }
    responses.push_back({{"text", "done"}});
    nlohmann::json s = {{"responses", responses}, {"prompt_cache", true}};
    if (window) {
      s["context_window"] = 16000;
      s["by_system"] = {{"handoff note",
                         {{"text", R"({"done": ["ran commands"], "pending": ["more"], "current_state": "running"})"}}}};
    }
    return s.dump();
  };
  // The floor: one such command run directly by bash, no model, no sandbox.
  std::vector<double> direct;
  for (int i = 0; i < 30; ++i) {
    Clock::time_point start = Clock::now();
    StatusOr<CommandOutput> out = RunCommand(
        {.argv = {"bash", "-c", "echo abc; head -c 1500 /dev/zero | tr '\\0' x"}, .env = CurrentEnvironment()});
    if (!out.ok() || out->exit_code != 0) return false;
    direct.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  Stats floor = Summarize(direct);
  Print("floor: the same command run directly (bash -c)", floor, 0);
  for (bool window : {false, true}) {
    StatusOr<std::string> dir = odin::bench::BenchTempDir("odin-bench-long");
    if (!dir.ok() || !WriteFileAtomic(*dir + "/script.json", script(window)).ok() || !MakeDirs(*dir + "/ws").ok())
      return false;
    std::string url;
    StatusOr<pid_t> pid = StartFakeModel(*dir, &url);
    if (!pid.ok()) return false;
    std::vector<std::string> extra;
    if (window) extra.insert(extra.end(), {"--context-window", "16000"});
    SessionFigures f = AgentSessionOnce(*dir + "/ws", url, *dir + "/log.jsonl", extra);
    kill(*pid, SIGKILL);
    int status;
    waitpid(*pid, &status, 0);
    if (!f.ok) return false;
    Stats per_call = Summarize(f.gaps_ms);
    Print(window ? "per call, 16,000-token window (compactions included)" : "per call, no window (no compaction)",
          per_call, 0);
    printf("  %-44s %.1fx (medians)\n", window ? "per call / floor, window" : "per call / floor, no window",
           per_call.median_ms / floor.median_ms);
    auto ledger = Ledger::OpenReadOnly(*dir + "/ws/.odin/odin.db");
    if (!ledger.ok()) return false;
    StatusOr<std::string> session = [&]() -> StatusOr<std::string> {
      ASSIGN_OR_RETURN(std::vector<SessionRecord> all, (*ledger)->ListSessions());
      if (all.empty()) return Status::NotFound("bench", "no session");
      return all.back().id;
    }();
    if (!session.ok()) return false;
    // The fake server counts as cached the leading bytes a request shares
    // with an earlier one: what a provider's prompt cache would serve.
    StatusOr<SessionUsage> usage = (*ledger)->UsageOf(*session);
    if (!usage.ok()) return false;
    printf("  %-44s %.1f%% of %lld input tokens (%lld model calls)\n",
           window ? "cached share of input, window" : "cached share of input, no window",
           usage->input_tokens > 0
               ? 100.0 * static_cast<double>(usage->cache_read_tokens) / static_cast<double>(usage->input_tokens)
               : 0.0,
           static_cast<long long>(usage->input_tokens), static_cast<long long>(usage->llm_calls));
    if (window) {
      StatusOr<std::vector<GateEvent>> events = (*ledger)->ListGateEvents(*session);
      if (!events.ok()) return false;
      std::vector<double> ms, before, after;
      int summarized = 0;
      for (const GateEvent& e : *events) {
        if (e.kind != "compaction") continue;
        nlohmann::json d = nlohmann::json::parse(e.detail_json);
        ms.push_back(static_cast<double>(d.value("duration_us", int64_t{0})) / 1000.0);
        before.push_back(static_cast<double>(d.value("tokens_before", int64_t{0})));
        after.push_back(static_cast<double>(d.value("tokens_after", int64_t{0})));
        summarized += d.value("how", "") == "summarized" ? 1 : 0;
      }
      printf("  %-44s %zu (%d with a handoff summary, the rest masking only)\n", "compactions", ms.size(), summarized);
      if (!ms.empty()) {
        Print("compaction, time (summary call included)", Summarize(ms), 0);
        printf("  %-44s median %.0f -> %.0f tokens (estimated)\n", "compaction, request size before -> after",
               Summarize(before).median_ms, Summarize(after).median_ms);
      }
    }
    RemoveTree(*dir);
  }

  // Resume: a session of 5,000 messages written to a ledger, then taken up.
  StatusOr<std::string> dir = odin::bench::BenchTempDir("odin-bench-resume");
  if (!dir.ok() || !MakeDirs(*dir + "/ws").ok()) return false;
  std::string ws = *dir + "/ws";
  {
    // The state directory as odin makes it (with its marker): one made
    // otherwise is not taken for the workspace's own.
    StatusOr<Workspace> found = FindWorkspace(ws);
    if (!found.ok() || !PrepareStateDir(*found).ok()) return false;
    auto ledger = Ledger::Open(found->ledger_path, Redactor());
    if (!ledger.ok() || !(*ledger)->AddSession({"ses_benchresume", "agent", ws, 1}).ok()) return false;
    std::vector<ConversationEntry> entries;
    for (int i = 0; i < 5000; ++i) {
      std::string text(300, static_cast<char>('a' + i % 26));
      nlohmann::json m = i % 2 == 0 ? nlohmann::json{{"text", "request " + text}} : nlohmann::json{{"text", text}};
      entries.push_back(
          {"conv_" + std::to_string(i), "ses_benchresume", "main", i % 2 == 0 ? "user" : "assistant", m.dump(), 1});
      if (entries.size() == 500) {
        if (!(*ledger)->AddConversation(entries).ok()) return false;
        entries.clear();
      }
    }
  }
  std::vector<double> resumed, fresh;
  for (int i = 0; i < 10; ++i) {
    for (bool resume : {true, false}) {
      std::string log = *dir + "/log" + std::to_string(i) + (resume ? "r" : "f") + ".jsonl";
      if (!WriteFileAtomic(*dir + "/script.json", R"({"responses":[{"text":"ok"}]})").ok()) return false;
      std::string url;
      StatusOr<pid_t> pid = StartFakeModel(*dir, &url);
      if (!pid.ok()) return false;
      std::string fresh_ws = *dir + "/fresh" + std::to_string(i);
      if (!resume && !MakeDirs(fresh_ws).ok()) return false;
      SessionFigures f = AgentSessionOnce(resume ? ws : fresh_ws, url, *dir + "/log.jsonl",
                                          resume ? std::vector<std::string>{"-c"} : std::vector<std::string>{});
      kill(*pid, SIGKILL);
      int status;
      waitpid(*pid, &status, 0);
      (void)!std::rename((*dir + "/log.jsonl").c_str(), log.c_str());
      if (!f.ok) return false;
      (resume ? resumed : fresh).push_back(f.first_request_ms);
    }
  }
  Stats r = Summarize(resumed), n = Summarize(fresh);
  Print("resume of 5,000 messages: start to first request", r, 0);
  Print("a new session: start to first request", n, 0);
  printf("  %-44s %+.1f ms (median)\n", "resume's cost", r.median_ms - n.median_ms);
  RemoveTree(*dir);
  return true;
}

void Print(const char* what, const Stats& s, double target_ms) {
  printf("  %-44s median %7.3f ms   p90 %7.3f ms   mean %7.3f ms", what, s.median_ms, s.p90_ms, s.mean_ms);
  if (target_ms > 0) printf("   target <= %g ms: median is %.2fx of it", target_ms, s.median_ms / target_ms);
  printf("\n");
}

// A C++ file of about 1,200 lines using the standard library, as a
// mid-size translation unit.
std::string MidSizeCpp() {
  std::string text =
      "#include <algorithm>\n#include <map>\n#include <string>\n#include <vector>\n\nnamespace bench {\n\n";
  for (int i = 0; i < 60; ++i) {
    std::string n = std::to_string(i);
    text +=
        "struct Record" + n + " {\n  std::string name;\n  std::vector<int> values;\n  int weight = " + n + ";\n};\n\n";
    text += "int Score" + n + "(const std::vector<Record" + n + ">& records) {\n  int total = 0;\n" +
            "  std::map<std::string, int> seen;\n  for (const auto& r : records) {\n" +
            "    int sum = 0;\n    for (int v : r.values) sum += v * r.weight;\n" +
            "    seen[r.name] += sum;\n    total += std::max(sum, 0);\n  }\n" +
            "  return total + static_cast<int>(seen.size());\n}\n\n";
  }
  text += "int Tuned() {\n  return 1;\n}\n\n}  // namespace bench\n";
  return text;
}

bool ValidationFigures(int rounds) {
  std::string clangd = DefaultProgramLookup(getenv("PATH") ? getenv("PATH") : "", ExecutableDir())("clangd");
  if (clangd.empty()) {
    printf("validation latency: skipped (clangd is not installed; scripts/install-deps.sh installs it)\n");
    return true;
  }
  StatusOr<std::string> made = odin::bench::BenchTempDir("odin-bench-lsp");
  if (!made.ok()) return false;
  std::string root = *RealPath(*made);
  std::string text = MidSizeCpp();
  std::string file = root + "/mid.cc";
  if (!WriteFileAtomic(file, text).ok()) return false;
  size_t lines = static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
  printf("validation latency (%d edits of a %zu-line C++ file, warm clangd; alternating with clangd asked directly)\n",
         rounds, lines);

  RuntimeFlags flags;
  flags.dir = root;
  flags.workers = 1;
  flags.session_kind = "bench";
  flags.mode = "edit";
  flags.validate = true;
  StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Start(flags);
  if (!rt.ok()) {
    fprintf(stderr, "odin_bench: %s\n", rt.status().message().c_str());
    return false;
  }
  if (TimeCall(rt->get(), kReadTool, R"({"file_path":"mid.cc"})") < 0) return false;
  StatusOr<std::unique_ptr<LspServer>> raw = LspServer::Start(
      {{clangd, "--background-index=false", "--log=error"}, CurrentEnvironment(), root, -1}, RealClock::Get());
  if (!raw.ok() || !(*raw)->RunUntil([&] { return (*raw)->ready(); }, seconds(120))) {
    fprintf(stderr, "odin_bench: clangd did not start\n");
    return false;
  }
  LspServer& direct = **raw;
  int64_t version = 1;
  direct.DidOpen(file, "cpp", version, text);
  if (!direct.RunUntil([&] { return direct.Latest(file) && direct.Latest(file)->version == version; }, seconds(120))) {
    return false;
  }
  std::vector<double> raw_ms, check_ms, edit_ms;
  const int warmup = 3;
  for (int i = 0; i < warmup + rounds; ++i) {
    bool odd = i % 2 == 0;
    std::string from = odd ? "return 1;" : "return 2;", to = odd ? "return 2;" : "return 1;";
    std::string changed = text;
    changed.replace(changed.find(from), from.size(), to);
    // clangd asked directly: didChange to the publish of that version.
    ++version;
    Clock::time_point t0 = Clock::now();
    direct.DidChange(file, version, changed);
    if (!direct.RunUntil([&] { return direct.Latest(file)->version == version; }, seconds(120))) return false;
    double direct_ms = Ms(Clock::now() - t0);
    // Odin: the edit, then its lsp_check in the lsp host.
    ToolCall call;
    call.tool = kEditTool;
    call.arguments_json = R"({"file_path":"mid.cc","old_string":")" + from + R"(","new_string":")" + to + R"("})";
    std::optional<v1::ToolResult> result;
    Clock::time_point t1 = Clock::now();
    (*rt)->coordinator().Submit(call, {nullptr, [&](const v1::ToolResult& r, const Status&) { result = r; }});
    while (!result) {
      if (!(*rt)->coordinator().Poll(seconds(1)).ok()) return false;
    }
    double total = Ms(Clock::now() - t1);
    if (result->status() != v1::TOOL_STATUS_OK || result->verdict().status() != "clean") {
      fprintf(stderr, "odin_bench: the edit was not validated clean: %s %s\n", result->verdict().status().c_str(),
              result->verdict().reason().c_str());
      return false;
    }
    StatusOr<ExecutionRow> check = (*rt)->ledger().FindExecution(result->verdict().execution_id());
    if (!check.ok() || !check->end) return false;
    text = changed;
    if (i < warmup) continue;
    raw_ms.push_back(direct_ms);
    check_ms.push_back(static_cast<double>(check->end->duration_us) / 1000.0);
    edit_ms.push_back(total);
  }
  Stats r = Summarize(raw_ms), c = Summarize(check_ms), e = Summarize(edit_ms);
  Print("clangd asked directly (didChange to publish)", r, 0);
  Print("Odin lsp_check (dispatch to verdict recorded)", c, 0);
  Print("Odin EditTool + validation, end to end", e, 0);
  printf("    ratio of medians, lsp_check / clangd: %.3fx (target <= 1.2x)\n", c.median_ms / r.median_ms);
  raw->reset();
  rt->reset();
  RemoveTree(root);
  return true;
}

#define ASSERT_BENCH(cond)                             \
  if (!(cond)) {                                       \
    fprintf(stderr, "odin_bench: %s failed\n", #cond); \
    return false;                                      \
  }

bool GuardFigures(int tree_files, int runs) {
  printf("guards (stall detector per step; workspace fingerprint of a %d-file tree)\n", tree_files);
  // The stall detector over a long session of varied steps.
  StallDetector detector{StallOptions{}};
  constexpr int kSteps = 200000;
  std::vector<StallStep> steps(kSteps);
  for (int i = 0; i < kSteps; ++i) {
    steps[i].execution_id = "ex_" + std::to_string(i);
    steps[i].call = "Read\n{\"file_path\":\"src/f" + std::to_string(i % 977) + ".cc\"}";
    steps[i].label = "Read(src/f" + std::to_string(i % 977) + ".cc)";
    steps[i].result = std::to_string(i);
    steps[i].workspace = "w" + std::to_string(i / 3);
  }
  Clock::time_point t0 = Clock::now();
  int fired = 0;
  for (int i = 0; i < kSteps; ++i) {
    fired += detector.AddStep(steps[i]) ? 1 : 0;
    if (i % 3 == 2) fired += detector.EndTurn(steps[i].workspace, Clock::now()) ? 1 : 0;
  }
  double per_step_us = Ms(Clock::now() - t0) * 1000.0 / kSteps;
  printf("  %-44s %.2f us per step (%d detections in %d varied steps)\n", "stall detector", per_step_us, fired, kSteps);

  StatusOr<std::string> dir = odin::bench::BenchTempDir("odin-bench-guards");
  if (!dir.ok() || !MakeTree(*dir, tree_files)) return false;
  // The stall detector's view of the workspace: the coordinator's digest,
  // kept from change sets (a command's of 100 files here), never a walk.
  std::vector<double> noted;
  for (int r = 0; r < runs; ++r) {
    ChangeDigest digest;
    Clock::time_point a = Clock::now();
    for (int i = 0; i < 100; ++i) {
      int n = (r * 100 + i * 499) % tree_files;
      digest.Note("src/d" + std::to_string(n / 100) + "/f" + std::to_string(n) + ".cc", Sha256Hex("before"),
                  Sha256Hex("after " + std::to_string(r)));
    }
    std::string value = digest.Value();
    noted.push_back(Ms(Clock::now() - a));
    if (value.empty()) fprintf(stderr, "odin_bench: the digest missed a change\n");
  }
  Print("workspace digest, a change set of 100 files", Summarize(noted), 0);
  // What every command of edit mode adds: the protected paths captured before
  // it, checked and put back after it, with the index of nested git
  // directories and instructions kept current (one stat per directory).
  ASSERT_BENCH(MakeDirs(*dir + "/.git/hooks").ok() && WriteFileAtomic(*dir + "/.git/config", "[core]\n").ok() &&
               WriteFileAtomic(*dir + "/AGENTS.md", "rules\n").ok());
  std::vector<double> index_first, protect;
  for (int r = 0; r < runs; ++r) {
    ProtectedIndex index(*dir);
    Clock::time_point a = Clock::now();
    index.Refresh();
    index_first.push_back(Ms(Clock::now() - a));
    a = Clock::now();
    StatusOr<WorkspaceFiles> files = WorkspaceFiles::Open(*dir);
    (void)MakeDirs(*dir + "/.odin", 0700);
    StatusOr<WorkspaceFiles> kept = WorkspaceFiles::Open(*dir + "/.odin");
    ProtectedSnapshot before = SnapshotProtected(*files, &index);
    RestoreReport report = RestoreProtected(*files, before, &index, &*kept, "bench");
    protect.push_back(Ms(Clock::now() - a));
    if (!report.empty()) fprintf(stderr, "odin_bench: the protected paths changed with nothing changed\n");
  }
  Print("protected paths: first index of the tree", Summarize(index_first), 0);
  Print("protected paths: around one command", Summarize(protect), 0);
  RemoveTree(*dir);
  return true;
}

// CPU seconds (user + system) of the children reaped so far.
double ChildCpuSeconds() {
  struct rusage ru;
  getrusage(RUSAGE_CHILDREN, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

// 8 subagents, each running 10 CPU-bound commands of about 200 ms through
// the coordinator, with 1, 2, 4 and 8 tool workers: wall time against the
// ideal (the commands' CPU time divided by the cores).
bool SubagentFigures(int subagents, int commands) {
  // A busy loop of about 200 ms of CPU, calibrated here.
  auto busy = [](long n, const std::string& tag) {
    return "awk 'BEGIN{for(i=0;i<" + std::to_string(n) + ";i++)s+=i*i; print s}' # " + tag;
  };
  long n = 200000;
  double per = 0;
  for (int round = 0; round < 6; ++round) {
    std::vector<double> cpu;
    for (int i = 0; i < 5; ++i) {
      double before = ChildCpuSeconds();
      StatusOr<CommandOutput> out =
          RunCommand({.argv = {"/bin/sh", "-c", busy(n, "calibrate")}, .env = CurrentEnvironment()});
      if (!out.ok()) return false;
      cpu.push_back(ChildCpuSeconds() - before);
    }
    per = Summarize(cpu).median_ms;  // seconds here
    if (per > 0.18 && per < 0.22) break;
    n = static_cast<long>(static_cast<double>(n) * 0.2 / std::max(per, 0.001));
  }
  int cores = CpuCount();
  double ideal = per * subagents * commands / cores;
  printf(
      "subagents (%d in parallel, each %d CPU-bound commands of %.0f ms CPU; %d cores; ideal = CPU / cores = "
      "%.2f s)\n",
      subagents, commands, per * 1000, cores, ideal);
  printf("  %-12s %10s %10s %8s\n", "tool workers", "wall (s)", "ideal (s)", "ratio");
  // Ask mode's read-only commands, then edit mode's, which run over
  // overlays of their own, side by side (before, one at a time: about
  // cores x the ideal).
  std::vector<std::pair<int, const char*>> runs = {{1, "ask"}, {2, "ask"}, {4, "ask"}, {8, "ask"}, {cores, "edit"}};
  for (const auto& [workers, mode] : runs) {
    StatusOr<std::string> dir = odin::bench::BenchTempDir("odin-bench-subagents");
    if (!dir.ok() || !MakeDirs(*dir + "/ws/.git").ok()) return false;
    std::string spawn, agents;
    for (int a = 0; a < subagents; ++a) {
      std::string key = "job " + std::to_string(a) + ":";
      spawn += std::string(a ? "," : "") + R"({"name":"AgentTool","arguments":{"mode":")" + mode + R"(","prompt":")" +
               key + R"( run the busy loop"}})";
      agents += std::string(a ? "," : "") + R"(")" + key + R"(":[)";
      for (int c = 0; c < commands; ++c) {
        // The command as a JSON string: it holds no double quote or backslash.
        std::string cmd = busy(n, std::to_string(a) + "." + std::to_string(c));
        agents += R"({"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":")" + cmd + R"("}}]},)";
      }
      agents += R"({"text":"done"}])";
    }
    std::string script =
        R"({"responses":[{"tool_calls":[)" + spawn + R"(]},{"text":"all done"}],"agents":{)" + agents + "}}";
    nlohmann::json config = {{"workers", {{"count", workers}}},
                             {"agent", {{"subagent_concurrency", subagents}}},
                             {"checks", {{"build", ""}, {"lint", ""}, {"tests", ""}}}};
    // The user's config (XDG_CONFIG_HOME below): workers and subagent
    // settings are not an untrusted workspace's to make.
    if (!WriteFileAtomic(*dir + "/script.json", script).ok() || !WriteUserConfig(*dir + "/config", config)) {
      return false;
    }
    std::string url;
    StatusOr<pid_t> server = StartFakeModel(*dir, &url);
    if (!server.ok()) return false;
    std::vector<std::string> env;
    for (const std::string& e : CurrentEnvironment()) {
      if (e.rfind("XDG_CONFIG_HOME=", 0) != 0) env.push_back(e);
    }
    env.push_back("XDG_CONFIG_HOME=" + *dir + "/config");
    env.push_back("OPENAI_BASE_URL=" + url);
    env.push_back("OPENAI_API_KEY=bench");
    Clock::time_point t0 = Clock::now();
    StatusOr<CommandOutput> out = RunCommand(
        {.argv = {JoinPath(ExecutableDir(), "odin"), "-p", "run the jobs", "--output-format", "json", "--mode", mode},
         .env = env,
         .cwd = *dir + "/ws"});
    double wall = Ms(Clock::now() - t0) / 1000.0;
    kill(*server, SIGKILL);
    int status;
    waitpid(*server, &status, 0);
    bool ok = out.ok() && out->exit_code == 0 && out->output.find("\"status\":\"done\"") != std::string::npos;
    if (!ok) {
      fprintf(stderr, "odin_bench: the subagent session failed: %s\n", out.ok() ? out->output.c_str() : "");
      RemoveTree(*dir);
      return false;
    }
    RemoveTree(*dir);
    printf("  %-12s %10.2f %10.2f %7.3fx%s\n", (std::to_string(workers) + ", " + mode).c_str(), wall, ideal,
           wall / ideal, workers == cores ? "   (target <= 1.15x)" : "");
  }
  return true;
}

int Main(int argc, char** argv) {
  bench::StartTempCleaner();
  int calls = 500, starts = 40, tree = 50000, runs = 15, edits = 300, sessions = 10, validations = 30, guards = 1,
      subagents = 8, daemon = 5, ledger = 2000, long_sessions = 1, hooks = 5, mcp = 5, web = 30, index = 1000000,
      index_queries = 200, reviewers = 5, telemetry = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--calls") == 0) calls = atoi(argv[i + 1]);
    if (strcmp(argv[i], "--starts") == 0) starts = atoi(argv[i + 1]);
    if (strcmp(argv[i], "--tree") == 0) tree = atoi(argv[i + 1]);
    if (strcmp(argv[i], "--runs") == 0) runs = atoi(argv[i + 1]);
    if (strcmp(argv[i], "--edits") == 0) edits = atoi(argv[i + 1]);
    if (strcmp(argv[i], "--sessions") == 0) sessions = atoi(argv[i + 1]);
    if (strcmp(argv[i], "--validations") == 0) validations = atoi(argv[i + 1]);
    if (strcmp(argv[i], "--guards") == 0) guards = atoi(argv[i + 1]);
    if (strcmp(argv[i], "--subagents") == 0) subagents = atoi(argv[i + 1]);
    if (strcmp(argv[i], "--daemon") == 0) daemon = atoi(argv[i + 1]);
    if (strcmp(argv[i], "--ledger") == 0) ledger = atoi(argv[i + 1]);
    if (strcmp(argv[i], "--long") == 0) long_sessions = atoi(argv[i + 1]);
    if (strcmp(argv[i], "--hooks") == 0) hooks = atoi(argv[i + 1]);
    if (strcmp(argv[i], "--mcp") == 0) mcp = atoi(argv[i + 1]);
    if (strcmp(argv[i], "--web") == 0) web = atoi(argv[i + 1]);
    if (strcmp(argv[i], "--index") == 0) index = atoi(argv[i + 1]);
    if (strcmp(argv[i], "--index-queries") == 0) index_queries = atoi(argv[i + 1]);
    if (strcmp(argv[i], "--reviewers") == 0) reviewers = atoi(argv[i + 1]);
    if (strcmp(argv[i], "--telemetry") == 0) telemetry = atoi(argv[i + 1]);
  }
  // Ledger anchors (and daemon sockets, without a runtime directory) of the
  // bench's throwaway workspaces go to a directory of its own.
  StatusOr<std::string> user_dir = odin::bench::BenchTempDir("odin-bench-state");
  if (!user_dir.ok()) return 1;
  setenv("XDG_STATE_HOME", user_dir->c_str(), 1);
  g_config_home = *user_dir + "/config";
  if (!WriteUserConfig(g_config_home)) return 1;
  setenv("XDG_CONFIG_HOME", g_config_home.c_str(), 1);
  struct utsname u;
  uname(&u);
  setvbuf(stdout, nullptr, _IOLBF, 0);
  printf("odin_bench: %d cores, %s %s\n", CpuCount(), u.sysname, u.release);
  StatusOr<std::string> dir = odin::bench::BenchTempDir("odin-bench");
  if (!dir.ok()) return 1;

  // Back to back, and 20 ms apart: an agent's calls come a model's answer
  // apart, which is what a writable worker uses to make the next
  // command's overlay (PreparedOverlay, sandbox/workspace_overlay.h).
  // The sandboxed worker with tracking off shows what tracking costs a call
  // (the overlay of each command, its changes read and applied).
  // An edit-mode agent's `true` only reads: it runs in the read-only view.
  struct RoundTripConfig {
    const char* sandbox;
    bool track;
    bool edit;
  };
  for (int gap_ms : {0, 20}) {
    for (RoundTripConfig c : {RoundTripConfig{"auto", true, false},
                              {"auto", false, false},
                              {"auto", true, true},
                              {"auto", false, true},
                              {"off", true, false}}) {
      if (calls <= 0) break;
      std::vector<double> total, worker;
      std::string how;
      double cpu_before = CpuMsSoFar();
      if (!ToolCallRoundTrips(*dir, c.sandbox, c.track, c.edit, calls, gap_ms, &total, &worker, &how)) return 1;
      double cpu_per_call = (CpuMsSoFar() - cpu_before) / (calls + 20);
      std::string what = how + (c.edit ? ", edit mode" : "") +
                         (!c.track ? ", tracking off"
                          : c.edit ? ": judged to only read, the read-only view"
                                   : "");
      if (gap_ms == 0) {
        printf("tool call round trip (%d calls back to back, worker sandbox: %s)\n", calls, what.c_str());
      } else {
        printf("tool call round trip (%d calls %d ms apart, worker sandbox: %s)\n", calls, gap_ms, what.c_str());
      }
      bool target = strcmp(c.sandbox, "auto") == 0 && c.track && !c.edit;
      Print("coordinator -> worker -> `true` -> ledger", Summarize(total), target ? 3.0 : 0);
      Print("  of which inside the worker (spawn, wait)", Summarize(worker), 0);
      printf("  %-44s %.3f ms (coordinator, worker, commands; its start and stop spread over the calls)\n",
             "CPU time per call, every process", cpu_per_call);
    }
  }
  if (starts > 0) {
    StartFigures sf = StartStopFigures(*dir, starts);
    if (sf.exec_ms.empty()) return 1;
    printf("cold start (%d runs each, interleaved; whole processes)\n", starts);
    Stats exec = Summarize(sf.exec_ms), version = Summarize(sf.version_ms);
    Print("odin exec -- true", exec, 13.0);
    Print("odin --version", version, 0);
    if (!sf.bwrap_ms.empty()) {
      Stats bwrap = Summarize(sf.bwrap_ms);
      Print("bwrap --unshare-all --unshare-user true", bwrap, 0);
      printf("  %-44s %.2fx odin --version, %.2fx bare bwrap\n", "odin exec -- true, median",
             exec.median_ms / version.median_ms, exec.median_ms / bwrap.median_ms);
    }
    if (!sf.sandbox_ms.empty()) {
      Stats sandbox = Summarize(sf.sandbox_ms);
      Print("odin-sandbox (a tool worker's policy) true", sandbox, 0);
      printf("  %-44s %.2f ms (odin --version + the worker's sandbox)\n", "floor of odin exec, sum of medians",
             version.median_ms + sandbox.median_ms);
    }
  }
  if (calls > 0) {
    printf("floor\n");
    std::vector<double> zmq = ZmqRoundTrips(2000);
    if (zmq.empty()) return 1;
    Print("ZeroMQ ipc round trip, 64 bytes", Summarize(zmq), 0);
  }
  RemoveTree(*dir);
  if (tree > 0 && !FileToolFigures(tree, runs, edits)) return 1;
  if (ledger > 0 && !LedgerFigures(ledger)) return 1;
  if (sessions > 0 && !AgentFigures(sessions)) return 1;
  if (daemon > 0 && !DaemonFigures(daemon)) return 1;
  if (validations > 0 && !ValidationFigures(validations)) return 1;
  if (guards > 0 && tree > 0 && !GuardFigures(tree, runs)) return 1;
  if (subagents > 0 && !SubagentFigures(subagents, 10)) return 1;
  if (long_sessions > 0 && !LongSessionFigures()) return 1;
  if (hooks > 0 && !HookFigures(hooks)) return 1;
  if (reviewers > 0 && !ReviewerFigures(reviewers)) return 1;
  if (mcp > 0 && !McpFigures(mcp)) return 1;
  if (telemetry > 0 && !TelemetryFigures(telemetry)) return 1;
  if (web > 0 && !bench::WebFigures(web, &Print)) return 1;
  if (index > 0 && !bench::IndexFigures(index, index_queries, &Print)) return 1;
  RemoveTree(*user_dir);
  return 0;
}

}  // namespace
}  // namespace odin

int main(int argc, char** argv) { return odin::Main(argc, argv); }
