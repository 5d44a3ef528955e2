#pragma once
// ToolWorker: what a tool worker process does in the shared worker loop
// (workers/worker_loop.h).
//
// It runs one request at a time (ExecuteCommand, the file tools, the search
// tools), commands in the workspace, streaming output as ToolProgress and
// ending each request with exactly one ToolResult. However the loop ends
// (Shutdown, SIGTERM/SIGINT, a silent coordinator), whatever it started is
// killed first.

#include "base/clock.h"
#include "workers/worker_loop.h"

namespace odin {

// Runs the worker until it should exit. Returns the process exit code.
int RunToolWorker(const WorkerOptions& options, Clock* clock);

}  // namespace odin
