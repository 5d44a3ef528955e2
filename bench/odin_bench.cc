// odin_bench: the figures issue 2 asks for, as medians and p90s.
//
//   1. Round trip of a trivial tool call: coordinator -> sandboxed worker ->
//      `true` -> result recorded in the ledger (start and end records).
//   2. Cold start of `odin exec -- true`, the whole process, as a user runs it.
//   3. The floor: a ZeroMQ ipc round trip between two processes.
//
// Usage: odin_bench [--calls N] [--starts N]. Runs in a fresh temporary
// workspace. Never asserts: it prints.

#include <signal.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "base/file_util.h"
#include "base/secrets.h"
#include "base/subprocess.h"
#include "base/zmq_endpoint.h"
#include "coordinator/runtime.h"
#include "odin/v1/worker.pb.h"
#include "tools/exec_command.h"

namespace odin {
namespace {

using Clock = std::chrono::steady_clock;

struct Stats {
  double median_ms, p90_ms, mean_ms;
};

Stats Summarize(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  double sum = 0;
  for (double v : ms) sum += v;
  return {ms[ms.size() / 2], ms[std::min(ms.size() - 1, ms.size() * 9 / 10)], sum / static_cast<double>(ms.size())};
}

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// Runs `calls` trivial tool calls one after another; returns each round trip
// and the part of it spent in the worker.
bool ToolCallRoundTrips(const std::string& dir, const std::string& sandbox, int calls,
                        std::vector<double>* total, std::vector<double>* in_worker, std::string* how) {
  RuntimeFlags flags;
  flags.dir = dir;
  flags.sandbox = sandbox;
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
  }
  return true;
}

std::vector<double> ColdStarts(const std::string& dir, int runs) {
  std::string odin = JoinPath(ExecutableDir(), "odin");
  std::vector<double> ms;
  for (int i = -3; i < runs; ++i) {
    Clock::time_point start = Clock::now();
    StatusOr<CommandOutput> out =
        RunCommand({.argv = {odin, "exec", "--", "true"}, .env = CurrentEnvironment(), .cwd = dir});
    Clock::time_point end = Clock::now();
    if (!out.ok() || out->exit_code != 0) {
      fprintf(stderr, "odin_bench: odin exec failed: %s\n", out.ok() ? out->output.c_str() : out.status().message().c_str());
      return {};
    }
    if (i >= 0) ms.push_back(Ms(end - start));
  }
  return ms;
}

// Ping-pong between a ROUTER and a DEALER in another process, as coordinator
// and worker talk: the worker connects and speaks first.
std::vector<double> ZmqRoundTrips(int n) {
  std::vector<double> ms;
  StatusOr<std::string> dir = MakeTempDir("odin-bench-zmq");
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

void Print(const char* what, const Stats& s, double target_ms) {
  printf("  %-44s median %7.3f ms   p90 %7.3f ms   mean %7.3f ms", what, s.median_ms, s.p90_ms, s.mean_ms);
  if (target_ms > 0) printf("   target <= %g ms: median is %.2fx of it", target_ms, s.median_ms / target_ms);
  printf("\n");
}

int Main(int argc, char** argv) {
  int calls = 500, starts = 40;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--calls") == 0) calls = atoi(argv[i + 1]);
    if (strcmp(argv[i], "--starts") == 0) starts = atoi(argv[i + 1]);
  }
  struct utsname u;
  uname(&u);
  setvbuf(stdout, nullptr, _IOLBF, 0);
  printf("odin_bench: %d cores, %s %s\n", CpuCount(), u.sysname, u.release);
  StatusOr<std::string> dir = MakeTempDir("odin-bench");
  if (!dir.ok()) return 1;

  for (const char* sandbox : {"auto", "off"}) {
    std::vector<double> total, worker;
    std::string how;
    if (!ToolCallRoundTrips(*dir, sandbox, calls, &total, &worker, &how)) return 1;
    printf("tool call round trip (%d calls, worker sandbox: %s)\n", calls, how.c_str());
    Print("coordinator -> worker -> `true` -> ledger", Summarize(total), strcmp(sandbox, "auto") == 0 ? 3.0 : 0);
    Print("  of which inside the worker (spawn, wait)", Summarize(worker), 0);
  }
  std::vector<double> cold = ColdStarts(*dir, starts);
  if (cold.empty()) return 1;
  printf("cold start (%d runs)\n", starts);
  Print("odin exec -- true", Summarize(cold), 30.0);
  printf("floor\n");
  std::vector<double> zmq = ZmqRoundTrips(2000);
  if (zmq.empty()) return 1;
  Print("ZeroMQ ipc round trip, 64 bytes", Summarize(zmq), 0);
  RemoveTree(*dir);
  return 0;
}

}  // namespace
}  // namespace odin

int main(int argc, char** argv) { return odin::Main(argc, argv); }
