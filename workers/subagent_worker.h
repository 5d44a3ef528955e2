#pragma once
// SubagentWorker: what a subagent worker process does in the shared worker
// loop (workers/worker_loop.h). It takes AgentTool tasks
// (ToolRequest.agent_task) one at a time and runs each as a planner loop of
// its own (the Agent class, with a fresh context), whose every model
// call and tool call is a message to the coordinator: the worker has no
// network and runs nothing itself. The coordinator's gates, budget, ledger
// and breakers therefore see a subagent's calls exactly as the main agent's.
//
// The task ends with a ToolResult carrying the subagent's final answer
// (output_head) and its outcome (output_json: status, turns, error). A Cancel
// stops the loop; calls it has in flight are cancelled at the coordinator.

#include "base/clock.h"
#include "workers/worker_loop.h"

namespace odin {

// Runs the worker until it should exit. Returns the process exit code.
int RunSubagentWorker(const WorkerOptions& options, Clock* clock);

}  // namespace odin
