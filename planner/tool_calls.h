#pragma once
// How the planner frames calls, for itself and for the coordinator's relay of
// a subagent's calls: a call's label and deadline, the one-line summary and
// the ground-truth record of a result, the planner context of the system
// prompt, and the ledger record of a model call.

#include <map>
#include <string>

#include "base/clock.h"
#include "base/status.h"
#include "ledger/ledger.h"
#include "llm/llm.h"
#include "planner/stall_detector.h"
#include "planner/tool_host.h"

namespace odin {

class Budget;

// How a reader recognizes a call: "Read(src/a.cc)", "ExecuteCommand(make)".
std::string CallLabel(const ToolCallRequest& call);

// The deadline of a call: tool_timeouts[tool], else tool_timeouts["*"], else
// none; for ExecuteCommand its own timeout_seconds (1 to 600), else the
// configured default, else 120 s. AgentTool has its own deadline (the
// coordinator's subagent timeout) unless tool_timeouts names it; an MCP
// server's tools have their server's "timeout" (the coordinator sets it).
Duration ToolTimeout(const std::map<std::string, int>& tool_timeouts, const std::string& tool,
                     const std::string& arguments_json);

// What the planner should know of an agent's state this turn, for the
// request's tail (ChatRequest::tail, after the conversation, so that the
// system prompt stays the same bytes): the files it has read (the file
// cache), its todo list and what is left of budget (if not null); "" when
// there is nothing. The coordinator adds it to a subagent's requests.
std::string PlannerContext(ToolHost* host, const std::string& agent_id, const std::string& workspace, Budget* budget);

// Completes the ledger's record of a finished model call (who, when and how
// long are already in `call`): tokens, cost, status, attempts or the error.
LlmCallRecord RecordModelCall(LlmCallRecord call, const StatusOr<ChatResponse>& response, const PriceTable& prices);

// One line saying what a tool call did ("3 files", "exit code 0: ok",
// "changed a.txt (+1 -1 lines)"), from its structured result.
std::string ToolSummary(const std::string& tool, const v1::ToolResult& result);

// The ground-truth record of a tool result, as the model reads it.
// Paths are shown relative to workspace.
std::string GroundTruthRecord(const std::string& execution_id, const std::string& tool, const v1::ToolResult& result,
                              const std::string& workspace);

// What the stall detector compares of a result: everything the model reads,
// but not the execution id; a failure's error with digits blurred, so timings
// and pids in a test run's output do not make the same failure look new.
StallStep StallStepOf(const ToolCallRequest& call, const std::string& execution_id, const v1::ToolResult& result);

// What a finished call changed, as its result says (relative paths): a
// write's file, a command's change set (as the coordinator saw it), a
// subagent's changed files. These are the message's changes (the checks run
// over them).
struct CallChanges {
  std::vector<std::string> changed;
  std::vector<std::string> not_validated;  // changed files no validator looked at (too many at once)
};
CallChanges ChangesOf(const std::string& tool, const v1::ToolResult& result, const std::string& workspace);

}  // namespace odin
