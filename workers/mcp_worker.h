#pragma once
// McpWorker: what an MCP worker does in the shared worker loop
// (workers/worker_loop.h). It hosts one stdio MCP server, inside the
// worker's sandbox, and runs calls of its tools: several at once, as the
// pool sends them (a server that only reads), or one at a time (a writable
// server, stopped between its calls).
//
// The server to run comes in the environment (ODIN_MCP_SERVER, a JSON object
// with name, command, args and env), never in argv. The first request starts
// it; McpListTools answers once the session is initialized and the tools are
// listed, with the listing as output_json; mcp__SERVER__TOOL calls the tool,
// its progress notifications relayed as ToolProgress, its content returned
// as output (streamed, so the coordinator keeps it as an artifact; head and
// tail capped like command output). Cancel sends notifications/cancelled and
// ends the call at once (TIMED_OUT for a deadline).
//
// A server that exits or breaks the protocol ends the calls in flight as
// CRASHED with its exit status and the tail of its stderr, and is started
// again once; after a second death its calls fail without starting it.
// However the loop ends, the server's process group is killed.

#include "base/clock.h"
#include "workers/worker_loop.h"

namespace odin {

// Runs the worker until it should exit. Returns the process exit code.
int RunMcpWorker(const WorkerOptions& options, Clock* clock);

}  // namespace odin
