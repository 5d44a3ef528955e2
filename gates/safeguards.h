#pragma once
// Gate 8, the safeguards, as one judgment: a command against the permission
// rules (allow, ask, deny; one that only reads goes to the read-only view),
// a WebFetch's host against the domain rules, an MCP server's tool and any
// other tool against the tool rules (gates/tool_rules.h: Read(./.env),
// Edit(src/**)), and a read outside the workspace (ask) or in Odin's state
// (refused). Deciding only: asking the user is the coordinator's
// (Coordinator::AskApproval), and so is recording a refusal (the verdict's
// event).

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "gates/command_rules.h"
#include "planner/tool_host.h"
#include "pool/worker_request.h"
#include "tools/tool_catalog.h"

namespace odin {
namespace v1 {
class WebFetchOptions;
}  // namespace v1

// A call the safeguards want the user (or a PreToolUse hook) to allow.
struct ApprovalNeed {
  std::string what;
  std::string reason;
  std::vector<std::string> keys;  // what "for the session" would allow
  std::string detail_json;
  // Whether --approval allow may answer it. A fetch's URL can carry data
  // out: only a rule or the user allows one.
  bool policy_may_allow = true;
};

// A gate's finding for the ledger (RecordGateEvent's kind and detail).
struct GateFinding {
  std::string kind;
  std::string detail_json;
  bool in_message = false;  // recorded under the call's message
};

struct SafeguardContext {
  const CommandRules* rules = nullptr;
  std::string workspace;  // absolute, symlinks resolved
  std::string state_dir;  // Odin's state: never open to the tools
  std::string home;       // where a path rule's "~/" starts ("": such rules match nothing)
  // A command judged to only read may run in the workers' read-only view
  // (Coordinator::ReadOnlyViewUsable).
  bool read_only_view_usable = false;
  const v1::WebFetchOptions* web_fetch_options = nullptr;  // the user's (web.*)
};

struct SafeguardVerdict {
  Status status;  // a refusal (the call ends rejected)
  std::optional<ApprovalNeed> need;
  std::optional<GateFinding> event;
  std::string web_url;  // WebFetch: its URL as the gate read it (the page cache's key)
};

// REQUIRES: request->typed holds the call's typed input. Sets the
// request's read-only view, the outside path approved (sent only if the
// user approves) and a fetch's options.
SafeguardVerdict JudgeSafeguards(const ToolCall& call, ToolHandler handler, WorkerRequest* request,
                                 const SafeguardContext& context);

}  // namespace odin
