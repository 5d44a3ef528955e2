#pragma once
// The tools Odin knows, what each one does to the workspace, and which modes
// offer it (DESIGN.md section 3, the mode table).

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace odin {

enum class Mode { kAsk, kPlan, kEdit };

// Parses "ask", "plan", "edit". Returns false for anything else.
bool ParseMode(std::string_view text, Mode* mode);
const char* ModeName(Mode mode);

// Starts a subagent (a planner loop in a worker of its own). Offered to the
// main agent in every mode, never to a subagent.
constexpr char kAgentTool[] = "AgentTool";

// Asks for the conversation to be compacted before the next request (seed
// 001's ContextSummarizer). The coordinator records it; the agent loop,
// which holds the conversation, compacts.
constexpr char kContextSummarizerTool[] = "ContextSummarizer";
// Revises the plan the reviewers hold the work to (planner/workflows.h).
constexpr char kPlanUpdateTool[] = "plan_update";
// Its arguments: {"focus"?: string}. Returns the focus ("" if none), or
// InvalidArgument naming the problem.
StatusOr<std::string> ParseContextSummarizerArgs(const std::string& arguments_json);

// What a tool may do: the gates judge a call by its class.
enum class ToolClass {
  kRead,   // looks at the workspace (Read, Grep, LS, ...), or at Odin's own state
  kWrite,  // changes one file through the file tools: edit mode only, one write per file at a time
  kExec,   // runs a command (ExecuteCommand): what it changes, the command rules and the sandbox decide
  kAgent,  // starts a subagent, whose own calls meet the gates
  kWeb,    // fetches a URL (WebFetch) in the network worker: the domain rules and approval decide
};

// Fetches a web page in the network worker; the utility model answers the
// call's prompt over it. Offered in every mode.
constexpr char kWebFetchTool[] = "WebFetch";
struct WebFetchArgs {
  std::string url;     // at most 8 KiB
  std::string prompt;  // not empty, at most 16 KiB
};
// {"url": string, "prompt": string}; InvalidArgument naming the problem.
StatusOr<WebFetchArgs> ParseWebFetchArgs(const std::string& arguments_json);
// Writes ODIN.md, the project's instructions: offered only during /init
// (odin init), the one write that may change it.
constexpr char kInitTool[] = "InitTool";

// Parses a batch of files for the symbol index in a read-only worker
// (workers/index_parse.h). Odin's own call: not in the table below, so no
// model can make it.
constexpr char kIndexParseTool[] = "IndexParse";

// A tool's descriptor. The table (tool_catalog.cc) is the one place that
// answers "does it write", "does it feed the file cache", "where does it run".
struct ToolInfo {
  const char* name;
  ToolClass tool_class;
  bool reads_files;     // feeds the file cache (Read, Grep with content output)
  bool in_coordinator;  // runs in the coordinator itself (TodoWrite, memory_query), not a worker
  bool writes_files() const { return tool_class == ToolClass::kWrite; }
};

// The tool named name, or null if Odin has no such tool.
const ToolInfo* FindTool(std::string_view name);
// True iff name is a file-writing tool (WriteFile, EditTool, MultiEditTool).
bool IsWriteTool(std::string_view name);

// The names of the tools offered in mode, in a stable order.
std::vector<std::string> ToolsForMode(Mode mode);

}  // namespace odin
