#pragma once
// SubagentWorker: the loop of a subagent worker process. It takes AgentTool
// tasks (ToolRequest.agent_task) one at a time and runs each as a planner
// loop of its own (the Agent class, with a fresh context), whose every model
// call and tool call is a message to the coordinator: the worker has no
// network and runs nothing itself. The coordinator's gates, budget, ledger
// and breakers therefore see a subagent's calls exactly as the main agent's.
//
// The task ends with a ToolResult carrying the subagent's final answer
// (output_head) and its outcome (output_json: status, turns, error). A Cancel
// stops the loop; calls it has in flight are cancelled at the coordinator.
//
// One passive loop, no threads of its own.

#include <string>

#include "base/clock.h"

namespace odin {

struct SubagentWorkerOptions {
  std::string endpoint;
  std::string worker_id;
  std::string secret;  // proves this worker at Hello (from the credentials fd)
  std::string workspace;
  std::string sandbox_description;
  Duration heartbeat_interval = milliseconds(500);
  int liveness = 3;
};

// Runs the worker until it should exit. Returns the process exit code.
int RunSubagentWorker(const SubagentWorkerOptions& options, Clock* clock);

}  // namespace odin
