#pragma once
// Hooks: the user's (and a trusted workspace's) commands run at points of a
// session, with Claude Code's semantics so that its hook scripts work
// unchanged. This file is the pure part: the configuration, which hooks an
// event runs, the JSON a hook reads, and what a hook's exit code and output
// decide. The coordinator runs hooks (coordinator/hook_runs.cc) as
// executions of their own, sandboxed like commands.
//
// What a hook decides (per Claude Code):
//   - exit 0: success; stdout is context for the model on SessionStart and
//     UserPromptSubmit; JSON on stdout is read (below);
//   - exit 2: blocks; stderr is the reason (PreToolUse: the call is refused;
//     PostToolUse: the model reads it; UserPromptSubmit: the prompt is
//     refused; Stop, SubagentStop: the agent goes on);
//   - any other exit, a timeout, or stdout that starts like JSON but is not:
//     a non-blocking error the user sees.
//   - JSON on stdout: "decision" ("block", or PreToolUse's old
//     "approve"), "reason", "continue": false with "stopReason",
//     "systemMessage", and hookSpecificOutput's "permissionDecision" (allow,
//     deny, ask), "permissionDecisionReason" and "additionalContext". A
//     block or deny without a reason takes the systemMessage as its reason
//     (Claude Code shows that only to the user; the model then learns
//     nothing of why, and tries again).
// Several hooks of one event run in parallel; a deny from any of them wins,
// then ask, then allow.
//
// A PreToolUse "allow" stands in for the user's answer to an ask rule and
// for nothing else: the coordinator's gates have already judged the call.

#include <map>
#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>
#include <string_view>
#include <vector>

namespace odin {

enum class HookEvent {
  kSessionStart,
  kUserPromptSubmit,
  kPreToolUse,
  kPostToolUse,
  kStop,
  kSubagentStop,
  kPreCompact,
  kSessionEnd,
  kNotification,
};
constexpr HookEvent kAllHookEvents[] = {
    HookEvent::kSessionStart, HookEvent::kUserPromptSubmit, HookEvent::kPreToolUse, HookEvent::kPostToolUse,
    HookEvent::kStop,         HookEvent::kSubagentStop,     HookEvent::kPreCompact, HookEvent::kSessionEnd,
    HookEvent::kNotification,
};
// Claude Code's names: "PreToolUse", ...
const char* HookEventName(HookEvent event);
std::optional<HookEvent> ParseHookEvent(std::string_view name);
// Whether the event's matcher is a tool name (PreToolUse, PostToolUse).
bool HookEventMatchesTools(HookEvent event);

// One hook command as configured.
struct HookCommand {
  std::string command;  // shell text, run by bash -c in the workspace
  int timeout_seconds = 60;
  bool sandbox = true;  // false: runs on the host (the user's own config only)
  std::string source;   // the file that configured it
  bool from_workspace = false;
  // Claude Code's "if": a permission rule (gates/tool_rules.h) the call
  // must match for the hook to run, "Bash(git *)", "Edit(src/**)"; "" for
  // none. The coordinator judges it (coordinator/hook_runs.cc).
  std::string if_rule;
};

// Claude Code's shape: {"matcher": "Edit|Write", "hooks": [{"type":
// "command", ...}]}. An empty matcher (or "*") matches every tool.
struct HookGroup {
  std::string matcher;
  std::vector<HookCommand> hooks;
};

struct HooksConfig {
  std::map<HookEvent, std::vector<HookGroup>> events;
  int max_stop_blocks = 3;  // hooks.max_stop_blocks: Stop blocks before the run ends anyway
  bool network = false;     // hooks.network: sandboxed hooks reach the network

  bool empty() const { return events.empty(); }
};

// Claude Code's name of an Odin tool (ExecuteCommand -> Bash, EditTool ->
// Edit, ...), or "" when it has none.
std::string ClaudeToolName(std::string_view odin_tool);

// What a PreToolUse or PostToolUse hook is told of a call, as Claude Code
// tells it, so that hook scripts written for Claude Code judge it: the
// payload's "tool_name" (Claude Code's name of the tool; Odin's where it has
// none; an MCP tool's own) and "tool_input" (the arguments in Claude Code's
// form: the file tools' file_path absolute and normalised, as the call
// resolves it in workspace; a command's timeout in milliseconds).
std::string HookToolName(const std::string& odin_tool);
nlohmann::json HookToolInput(const std::string& odin_tool, const nlohmann::json& args, const std::string& workspace);

// Whether matcher matches the tool, read as Claude Code reads it, on the
// tool's Odin name and its Claude Code name: empty or "*" matches every
// tool; one of only letters, digits, "_", "-", spaces, "," and "|" is an
// exact name or a list of them ("Edit" does not match "EditSymbol"); any
// other is an unanchored ECMAScript regex ("Edit.*" matches "NotebookEdit").
// A matcher that is not a valid regex matches only its exact text.
bool HookMatcherMatches(const std::string& matcher, const std::string& tool);
// InvalidArgument-style message ("" when valid) for a matcher in the config.
std::string HookMatcherError(const std::string& matcher);

// The hooks the event runs for tool ("" for events without a tool), in
// configuration order, each once.
std::vector<HookCommand> HooksFor(const HooksConfig& config, HookEvent event, const std::string& tool);

// The hooks in force, a line each ("PreToolUse [Bash] `./check.sh` (60 s,
// sandboxed; /home/u/.config/odin/odinconfig.json)"), or "no hooks".
std::string DescribeHooks(const HooksConfig& config);

// What one hook run ended with.
struct HookRun {
  std::string execution_id;
  std::string command;
  int exit_code = 0;
  bool ran = true;  // false: it could not be run (crashed, refused, the sandbox failed)
  bool timed_out = false;
  std::string stdout_text;
  std::string stderr_text;
  std::string error;  // why it did not run or did not finish
};

// What an event's hooks decided together.
struct HookOutcome {
  enum class Decision { kNone, kAllow, kAsk, kBlock };
  Decision decision = Decision::kNone;
  std::string reason;              // of a block or an ask: for the model (or the user)
  std::string additional_context;  // for the model
  std::vector<std::string> notes;  // for the user: non-blocking errors, systemMessage
  bool stop = false;               // "continue": false: the agent stops
  std::string stop_reason;
  std::vector<std::string> execution_ids;  // the hook runs, in order
};

// Judges the runs of one event's hooks.
HookOutcome CombineHookRuns(HookEvent event, const std::vector<HookRun>& runs);

}  // namespace odin
