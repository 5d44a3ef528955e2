#pragma once
// The gates a call meets once the coordinator has taken it, in DESIGN §3's
// order, as one step (Coordinator::Admit calls RunCallGates once): gate 5
// (the run's budget), the strict profile's evidence taken out of the
// arguments, gate 1 (the mode; an MCP server's tool through its registry),
// Odin's own calls and InitTool refused where nobody may ask for them, the
// typed input (tools/tool_input.h), an MCP call's preparation, the blocked
// state (gate 3's hold, the memory-forced and strict profiles), and the
// safeguards (gate 8, gates/safeguards.h). What they need of the
// coordinator's state comes in CallGateContext.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "base/status.h"
#include "gates/safeguards.h"
#include "planner/tool_host.h"
#include "tools/tool_catalog.h"

namespace odin {

class ValidationGate;
namespace v1 {
class ToolInput;
}  // namespace v1

// What the memory-forced and strict profiles hold of one agent.
struct AgentProfileState {
  uint64_t failed_at = 0;        // event number of its last failed validation
  uint64_t memory_query_at = 0;  // event number of its last memory_query
  // The strict profile: after a failed validation, one corrective write
  // (or command) at a time. The failure the last one answered, and the
  // one being validated now ("" when none).
  uint64_t corrected_failure = 0;
  uint64_t corrected_before = 0;  // a corrective write refused gives its turn back
  std::string corrective_pending;
};

struct CallGateContext {
  bool track_changes = true;    // a tracked command may run while blocked (it may be the fix)
  bool memory_forced = false;   // a write after a failed validation needs a memory_query first
  bool grounded_edits = false;  // the strict profile: evidence, one corrective change at a time
  bool init_offered = false;    // InitTool: /init runs, and the call is the main agent's
  const ValidationGate* validation = nullptr;
  // The calling agent's profile state (made on first use).
  std::function<AgentProfileState*()> agent;
  // The modes an MCP server's tool runs in (mcp/mcp_registry.h).
  std::function<Status(const std::string& tool, Mode mode)> mcp_mode;
  // An MCP server's tool: its worker's policy and lane set on the request
  // (Coordinator::PrepareMcpCall); a refusal ends the call.
  std::function<Status()> prepare_mcp;
  SafeguardContext safeguards;
};

struct CallGateVerdict {
  Status status;                      // OK: through every gate
  bool rejected = true;               // a refusal ends the call rejected, else as the tool's error
  std::vector<std::string> evidence;  // strict: the analysis ids a write cites
  std::optional<ApprovalNeed> need;   // the safeguards ask the user (or a PreToolUse hook)
  std::optional<GateFinding> event;   // for the ledger, refused or not
  std::string web_url;                // WebFetch: the page cache's key
};

// Runs the gates on call (its budget charged and cleared, the evidence
// taken out of *args and call->arguments_json) and sets what they decide
// on *request: the typed input, the read-only view, an approved outside
// path, a fetch's options. parsed: whether the arguments parsed at Submit
// (*args is null when they did not).
CallGateVerdict RunCallGates(ToolCall* call, ToolHandler handler, const Status& parsed, nlohmann::json* args,
                             const CallGateContext& context, WorkerRequest* request);

// Gate 3's hold and the profiles' rules alone (also RunCallGates' last step).
Status CheckBlocked(const ToolCall& call, ToolHandler handler, const CallGateContext& context);

// The strict profile's "evidence" (execution ids) taken out of a writing
// call's arguments: InvalidArgument for a malformed list.
Status TakeEvidence(const std::string& tool, nlohmann::json* args, std::vector<std::string>* evidence);

}  // namespace odin
