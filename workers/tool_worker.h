#pragma once
// ToolWorker: the loop of a tool worker process.
//
// It connects a DEALER to the coordinator, says Hello, then runs one request at
// a time (ExecuteCommand for now), streaming output as ToolProgress and ending
// each request with exactly one ToolResult. It heartbeats every interval and
// exits when the coordinator has been silent for `liveness` intervals, on
// Shutdown, or on SIGTERM/SIGINT; in every case whatever it started is killed
// first.
//
// One passive loop, no threads of its own (ZeroMQ keeps an I/O thread).

#include <string>

#include "base/clock.h"

namespace odin {

struct ToolWorkerOptions {
  std::string endpoint;             // coordinator ROUTER, e.g. ipc:///tmp/odin-x/w.sock
  std::string worker_id;            // routing id, given by the coordinator
  std::string workspace;            // absolute; commands run inside it
  std::string sandbox_description;  // from ODIN_SANDBOX, reported in Hello
  Duration heartbeat_interval = milliseconds(500);
  int liveness = 3;                 // silent intervals before the coordinator is presumed gone
  std::string secret;               // proves this worker at Hello (from the credentials fd)
};

// Runs the worker until it should exit. Returns the process exit code.
int RunToolWorker(const ToolWorkerOptions& options, Clock* clock);

}  // namespace odin
