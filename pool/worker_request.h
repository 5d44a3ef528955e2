#pragma once
// What a worker is asked to run, as the coordinator decides it: which
// workers may take the call (WorkerPolicy, the lane), the limits its
// processes get, what a writing tool expects of its file, and the typed
// request (the arguments' typed input and what the coordinator adds). The
// planner's ToolCall (planner/tool_host.h) says what is asked; this says
// how it runs. The pool sends it as a v1::ToolRequest.

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/process_launcher.h"

namespace odin {
namespace v1 {
class ToolRequest;
}  // namespace v1

// Which workers may take a call.
enum class WorkerPolicy {
  kWritable,  // tool worker, workspace writable (edit mode, odin exec)
  kReadonly,  // tool worker, workspace read-only (ask and plan modes)
  kLspHost,   // the lsp host (workspace read-only), one per pool
  kSubagent,  // a subagent's planner loop (workspace read-only; its calls come back to us)
  // Hooks' workers: the workspace writable (edit mode) or read-only, with the
  // hooks' scripts visible read-only; or, for the user's own hooks that say
  // "sandbox": false, no sandbox at all.
  kHookWritable,
  kHookReadonly,
  kHookHost,
  // MCP workers, one per server (the call's lane names it): the workspace
  // writable (a "writable" server in edit mode) or read-only, or, for the
  // user's own servers that say "sandbox": false, no sandbox at all.
  kMcpWritable,
  kMcpReadonly,
  kMcpHost,
  // The network worker (WebFetch): the workspace read-only, the network
  // kept, nothing writable but its private /tmp.
  kWeb,
  // A background command (ExecuteCommand with run_in_background): a tool
  // worker of its own per command, the workspace writable with no overlay
  // (what the command writes is found at call boundaries), so it may run
  // past the call that started it; never on another host.
  kBackground,
};
inline bool IsMcpPolicy(WorkerPolicy p) {
  return p == WorkerPolicy::kMcpWritable || p == WorkerPolicy::kMcpReadonly || p == WorkerPolicy::kMcpHost;
}
// Whether a worker of this policy sees the workspace writable (its sandbox
// binds it so, or it has none): the one list the sandbox's argv and the
// overlay's bookkeeping both read.
inline bool WritesWorkspace(WorkerPolicy p) {
  switch (p) {
    case WorkerPolicy::kWritable:
    case WorkerPolicy::kBackground:
    case WorkerPolicy::kHookWritable:
    case WorkerPolicy::kHookHost:
    case WorkerPolicy::kMcpWritable:
    case WorkerPolicy::kMcpHost: return true;
    case WorkerPolicy::kReadonly:
    case WorkerPolicy::kLspHost:
    case WorkerPolicy::kSubagent:
    case WorkerPolicy::kHookReadonly:
    case WorkerPolicy::kMcpReadonly:
    case WorkerPolicy::kWeb: return false;
  }
  return false;
}

// What a writing tool expects of its file (the read-before-edit gate's
// verdict), checked by the worker under the file's lock.
struct FileExpectation {
  bool set = false;
  bool must_not_exist = false;
  std::string sha256;
  bool full_read = false;
  std::vector<std::pair<uint32_t, uint32_t>> read_ranges;
};

struct WorkerRequest {
  // From the call (copied by the coordinator when it dispatches).
  std::string execution_id;
  std::string tool;
  Duration timeout{};  // zero: no deadline
  uint64_t stream_limit_bytes = 0;
  uint32_t output_head_bytes = 64 * 1024;
  uint32_t output_tail_bytes = 64 * 1024;
  bool last_command = false;  // ExecuteCommand: no other command follows
  // The workers that may take it: a tool worker that sees the workspace
  // read-only (ask and plan) or writable (edit), the lsp host, ...
  WorkerPolicy policy = WorkerPolicy::kWritable;
  // For an MCP worker: the server (its workers are this server's alone).
  std::string lane;
  // For an MCP worker: how many of its server's calls its worker runs at
  // once (1: one at a time; the coordinator says 1 for a server that may
  // write, whose changes are told apart call by call).
  int lane_concurrency = 1;
  SpawnLimits limits;
  // The typed request: the arguments' typed input (parsed once at Submit,
  // tools/tool_input.h), and lsp_check's ValidationInput, lsp_references'
  // ReferencesInput, AgentTool's AgentTask, WebFetch's WebFetchOptions; the
  // rest of it unset. The pool merges it into the worker's request as it
  // is; never a string parsed back. Null until the coordinator sets some.
  std::shared_ptr<v1::ToolRequest> typed;
  // For ExecuteCommand: run over the workspace overlay or not at all (it
  // runs beside other commands; see Coordinator::SharesLane).
  bool needs_overlay = false;
  // For ExecuteCommand: run in the worker's read-only view of the
  // workspace (it only reads; Coordinator::RunsReadOnly).
  bool read_only_view = false;
  // For a reading tool: the path outside the workspace the user approved.
  std::string approved_outside_path;
  FileExpectation expect;
  // Set by the pool when it takes the call (WorkerPoolOptions::hosts_first).
  SteadyTime queued_at{};
};

}  // namespace odin
