#pragma once
// The gates a call meets once the coordinator has taken it, in DESIGN §3's
// order, as one step (Coordinator::Admit calls RunCallGates once): gate 5
// (the run's budget), the strict profile's evidence taken out of the
// arguments, gate 1 (the mode; an MCP server's tool through its registry),
// Odin's own calls and InitTool refused where nobody may ask for them, the
// typed input (tools/tool_input.h), an MCP call's preparation, the blocked
// state (gate 3's hold, the memory-forced and strict profiles), and the
// safeguards (gate 8, gates/safeguards.h), and a write's target
// (gates/write_target.h). What they need of the coordinator's state comes
// in CallGateContext. The gates that judge a call when its turn comes
// rather than when it is taken (read-before-edit, the breakers) are one
// more step, RunTurnGates, which Coordinator::Dispatch calls once.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "base/status.h"
#include "gates/breaker_bank.h"
#include "gates/safeguards.h"
#include "gates/write_target.h"
#include "planner/tool_host.h"
#include "tools/tool_catalog.h"

namespace odin {

class FileCache;
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
  WriteTargetContext write;  // WriteFile, EditTool, MultiEditTool, InitTool
};

struct CallGateVerdict {
  Status status;                      // OK: through every gate
  bool rejected = true;               // a refusal ends the call rejected, else as the tool's error
  std::vector<std::string> evidence;  // strict: the analysis ids a write cites
  std::optional<ApprovalNeed> need;   // the safeguards ask the user (or a PreToolUse hook)
  std::optional<GateFinding> event;   // for the ledger, refused or not
  std::string web_url;                // WebFetch: the page cache's key
  std::string write_path;             // a write's file (absolute), judged by JudgeWriteTarget
};

// Runs the gates on call (its budget charged and cleared, the evidence
// taken out of *args and call->arguments_json) and sets what they decide
// on *request: the typed input, the read-only view, an approved outside
// path, a fetch's options. parsed: whether the arguments parsed at Submit
// (*args is null when they did not).
CallGateVerdict RunCallGates(ToolCall* call, ToolHandler handler, const Status& parsed, nlohmann::json* args,
                             const CallGateContext& context, WorkerRequest* request);

// A write judged where it lands (path: absolute, resolved), after the
// safeguards judged it as written: the Edit/Write deny rules and the
// caller's tool lists; an ask rule refuses too where ask_refuses (EditSymbol,
// whose file the index names only once the call is queued, and which cannot
// stop for an approval there).
Status JudgeLandedWrite(const ToolCall& call, const std::string& path, bool ask_refuses, const SafeguardContext& o);

struct TurnGateContext {
  std::string workspace;
  FileCache* cache = nullptr;  // the calling agent's
  BreakerBank* breakers = nullptr;
};

struct TurnGateVerdict {
  Status status;
  bool rejected = true;  // a refusal, else the tool's error (a file that is not there to edit)
};

// When a call's turn comes (a write's, once the earlier writes to its file
// have ended): gate 2, read-before-edit, against the agent's file cache,
// setting the write's expectation on *request (EditSymbol's is the span's
// checksum, span_sha256); then gate 7, the breakers of what runs on a
// worker (not InitTool, which runs here), held in *held.
TurnGateVerdict RunTurnGates(const ToolCall& call, ToolHandler handler, const std::string& write_path,
                             const std::string& span_sha256, const TurnGateContext& context, WorkerRequest* request,
                             BreakerHolds* held);

// Gate 3's hold and the profiles' rules alone (also RunCallGates' last step).
Status CheckBlocked(const ToolCall& call, ToolHandler handler, const CallGateContext& context);

// The strict profile's "evidence" (execution ids) taken out of a writing
// call's arguments: InvalidArgument for a malformed list.
Status TakeEvidence(const std::string& tool, nlohmann::json* args, std::vector<std::string>* evidence);

}  // namespace odin
