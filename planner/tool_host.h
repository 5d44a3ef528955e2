#pragma once
// ToolHost: what a planner loop needs of whoever runs its tool calls. In the
// coordinator's process that is the Coordinator itself; in a subagent worker
// it is a proxy that sends every call to the coordinator (subagent_worker),
// so the coordinator's gates, budgets and ledger see a subagent's calls as
// they see the main agent's.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "base/clock.h"
#include "base/process_launcher.h"
#include "llm/llm.h"
#include "planner/hooks.h"
#include "tools/tool_catalog.h"

namespace odin {

class Budget;
namespace v1 {
class ToolProgress;
class ToolResult;
}  // namespace v1

// The mode a call runs in: one an agent works in (ask, plan, edit), or exec,
// odin exec's own command: edit's sandbox, no command rules (the user typed it).
enum class CallMode { kAsk, kPlan, kEdit, kExec };
// "ask", "plan", "edit", "exec": the ledger's names.
const char* CallModeName(CallMode mode);
std::optional<CallMode> ParseCallMode(std::string_view name);
CallMode CallModeOf(Mode mode);
// The agent mode of a call's mode; nullopt for exec.
std::optional<Mode> AgentModeOf(CallMode mode);

// One tool call as the planner asks for it: what the planner (or a client:
// odin tool, odin exec, odin mcp serve) knows and wants. Where and how it
// runs is the coordinator's to decide (pool/worker_request.h).
struct ToolCall {
  std::string execution_id;
  std::string tool;
  std::string arguments_json;  // canonical once Submit has taken it
  Duration timeout{};          // zero: no deadline
  // How much of the output the caller wants back.
  uint64_t stream_limit_bytes = 0;  // 0: stream all output
  uint32_t output_head_bytes = 64 * 1024;
  uint32_t output_tail_bytes = 64 * 1024;
  // Who asks and in which mode. Empty: the coordinator's defaults.
  std::string agent_id;
  std::optional<CallMode> mode;
  // The execution this one serves (a write's validation), for the ledger.
  std::string parent_id;
  // The user's message the call belongs to ("" outside an agent's message:
  // odin tool, a subagent's calls). The strict profile's evidence must come
  // from the same message.
  std::string message_id;
  // The run's budget, charged one tool call when the coordinator takes the
  // call (null: none).
  Budget* budget = nullptr;
  // For ExecuteCommand: no other command follows (odin exec's one call).
  bool last_command = false;
  // Odin's own call (a backpressure check), not the model's: no hooks run
  // for it. Never set from a worker's message.
  bool internal = false;
  // The tools the caller may use, narrowed (gates/tool_rules.h's tool
  // lists): a custom command's allowed-tools for its message, a custom
  // agent's tools for its subagent, both for a subagent started under such
  // a message. The safeguards gate refuses a call outside any of them.
  std::vector<std::vector<std::string>> tool_lists;
  // Nobody can answer an approval now (a custom command's !`command`, run
  // while its message is made): what would be asked is refused instead.
  bool no_approval = false;
};

// A cached file as the planner sees it.
struct CachedFileInfo {
  std::string path;
  uint64_t size;
  bool full;
  bool is_modified;
  std::string ranges;  // "lines 1-40, 90-120" when partial
};

// The validation gate's verdict on a file. errors and timed_out (unverified)
// block the session; no_validator does not (nothing could check the file).
enum class Verdict { kClean, kErrors, kTimedOut, kNoValidator };
// "clean", "errors", "timed_out", "no_validator": the ledger's and the wire's names.
const char* VerdictName(Verdict verdict);
// The verdict named `name`; timed_out (unverified) for a name it does not know.
Verdict ParseVerdict(std::string_view name);
// errors and timed_out.
bool IsBlocking(Verdict verdict);

// The validation gate's latest verdict on a file the session changed.
struct FileVerdict {
  std::string path;         // absolute
  std::string mutation_id;  // the write it follows
  std::string check_id;     // the lsp_check execution
  Verdict status = Verdict::kTimedOut;
  std::string validator;
  int new_errors = 0;
  std::string summary;
  std::string reason;
};

// What the caller hears about one call.
struct CallHandlers {
  std::function<void(const v1::ToolProgress&)> on_progress;
  // Called once, after the end is recorded. `recorded` is not OK iff the
  // ledger could not record the end.
  std::function<void(const v1::ToolResult&, const Status& recorded)> on_done;
};

// An event's hooks to run (planner/hooks.h).
struct HookRequest {
  HookEvent event = HookEvent::kStop;
  std::string agent_id;
  std::optional<CallMode> mode;  // the mode they run in (their sandbox's); empty: the host's default
  std::string parent_id;         // the call or message they run for, for the ledger
  std::string tool;              // PreToolUse, PostToolUse: the tool's name
  std::string fields_json;       // the event's own fields ("prompt", "tool_input", ...): a JSON object
};

// A hold on an agent's mutations that the reviewers or the workflow keep
// (planner/reviewers.h, planner/workflows.h): while set, the coordinator
// refuses the agent's (and its subagents') file-tool writes to any path the
// hold does not allow, and puts back what their commands change there. A
// path is allowed when it matches a glob of `allowed` (workflows.h's
// IsTestPath), or, with max_files, when it is one of the first max_files
// distinct paths changed since the hold was set (counted at submit time, so
// parallel writes cannot pass together).
struct MutationHold {
  std::string rule;    // "critic", "drift", "spec", "tdd", "minor-edit"; "" for none
  std::string reason;  // what the model is told: why, and what ends the hold
  std::vector<std::string> allowed;
  size_t max_files = 0;  // 0: none
};

class ToolHost {
 public:
  virtual ~ToolHost() = default;
  // Whether the event has hooks to run (for tool: its matchers).
  virtual bool HasHooks(HookEvent event, const std::string& tool = "") const { return false; }
  // Runs the event's hooks, in parallel, and tells done what they decided
  // (perhaps before returning). Without hooks, done hears nothing decided.
  virtual void RunHooks(HookRequest request, std::function<void(const HookOutcome&)> done) { done(HookOutcome()); }
  // Tools known only at run time (MCP servers'), offered in mode besides
  // Odin's own.
  virtual std::vector<ToolSpec> ExtraToolSpecs(Mode mode) const { return {}; }
  // News for agent_id's conversation of what changed in the MCP servers'
  // listings (their words, untrusted), each once; "" if none.
  virtual std::string TakeMcpNews(const std::string& agent_id) { return ""; }
  // Leaves out of specs the tools a tool list (ToolCall::tool_lists) does
  // not name; the gate refuses them anyway.
  virtual void NarrowToolSpecs(const std::vector<std::string>& list, std::vector<ToolSpec>* specs) const {}
  // Whether a tool list lets ExecuteCommand run command (gates/tool_rules.h).
  virtual bool CommandWithinList(const std::vector<std::string>& list, const std::string& command) const {
    return false;
  }
  // Queues a tool call. Returns its execution id.
  virtual std::string Submit(ToolCall call, CallHandlers handlers) = 0;
  // reason: a v1::CancelReason (2: the user's).
  virtual void Cancel(const std::string& execution_id, int reason = 2) = 0;
  // The files an agent has cached, for its system prompt.
  virtual std::vector<CachedFileInfo> CachedFiles(const std::string& agent_id) = 0;
  // An agent's todo list, rendered ("" when empty).
  virtual std::string TodosText(const std::string& agent_id) = 0;
  // Files whose latest verdict is errors or timed_out, sorted by path.
  virtual std::vector<FileVerdict> Blocking() const = 0;
  virtual const std::string& session_id() const = 0;
  // Records a gate event of an agent's loop (a stall, a refused completion).
  virtual void RecordGateEvent(const std::string& agent_id, const std::string& message_id, const std::string& kind,
                               const std::string& execution_id, const std::string& detail_json) = 0;
  // Sets (rule "" clears) the hold on an agent's mutations.
  virtual void SetMutationHold(const std::string& agent_id, MutationHold hold) {}
  // The workspace's content as the changes recorded so far left it
  // (workspace/change_digest.h; "" while nothing changed), for the stall
  // detector. What changed by no call since the last call is looked for
  // first, where that is cheap.
  virtual std::string WorkspaceDigest() { return ""; }
  // An agent's model request in mode is on its way: the host may start
  // what that mode's tool calls will need while the model thinks.
  virtual void ModelRequestStarted(Mode mode) {}
  // The agent's message was cancelled (its calls are cancelled one by one
  // too): what outlives calls, background commands, stops.
  virtual void MessageCancelled(const std::string& agent_id) {}
  // The repository map (the workspace's most used symbols, within about
  // budget_tokens), "" when the host has none (yet).
  virtual std::string RepoMap(size_t budget_tokens) { return ""; }
};

}  // namespace odin
