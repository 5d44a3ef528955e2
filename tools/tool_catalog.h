#pragma once
// The tools Odin knows, what each one does to the workspace, and which modes
// offer it (DESIGN.md section 3, the mode table).

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

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
StatusOr<std::string> ContextSummarizerFocusOf(const nlohmann::json& args);

// A hook's run (planner/hooks.h): never offered to the model; the
// coordinator makes these calls itself. Arguments: {"command": "shell text",
// "input": "the JSON the hook reads on stdin"}. It runs like a shell
// ExecuteCommand in the workspace, with ODIN_PROJECT_DIR and
// CLAUDE_PROJECT_DIR set to it, and its result's output_json holds
// {"stdout": ..., "stderr": ...} (each capped) besides the combined output.
constexpr char kHookTool[] = "Hook";
// What an MCP worker is asked first: start the server and list its tools
// (output_json: {"server", "server_info", "protocol_version", "tools":
// [{"name", "description", "input_schema", "read_only", "destructive"}],
// "offers_resources", "resources": [{"uri", "name", "description",
// "mime_type", "size"?}], "resource_templates": [{"uri_template", ...}]}).
constexpr char kMcpListToolsTool[] = "McpListTools";
// The message an MCP server's prompt makes, for its slash command
// (session/mcp_prompts.h): Odin's own call, like McpListTools, in the
// server's worker ({"server", "name", "arguments": {NAME: VALUE}};
// output_json {"server", "is_error", "text"}).
constexpr char kMcpGetPromptTool[] = "McpGetPrompt";
// An MCP server's resources, offered (mcp/mcp_registry.h) while some server
// has any: the listing the coordinator keeps ({"server"?}), and a read,
// which the server's worker runs ({"server", "uri"}).
constexpr char kListMcpResourcesTool[] = "ListMcpResources";
constexpr char kReadMcpResourceTool[] = "ReadMcpResource";

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
StatusOr<WebFetchArgs> WebFetchArgsOf(const nlohmann::json& args);
// Writes ODIN.md, the project's instructions: offered only during /init
// (odin init), the one write that may change it.
constexpr char kInitTool[] = "InitTool";

// Validates a file in the lsp host (a language server, else the check
// command). The model may ask for it; the validation gate asks after
// every write.
constexpr char kLspCheckTool[] = "lsp_check";
// Where a symbol is used, asked of the language server in the lsp host
// (the references query's semantic answer). Odin's own call.
constexpr char kLspReferencesTool[] = "lsp_references";
// Answers from the ledger's memory of the session (ledger/memory_query.h).
constexpr char kMemoryQueryTool[] = "memory_query";
// A skill's instructions and files (.claude/skills/NAME/SKILL.md), loaded
// when the model asks: Claude Code's Skill tool.
constexpr char kSkillTool[] = "Skill";

// Parses a batch of files for the symbol index in a read-only worker
// (workers/index_parse.h). Odin's own call: not in the table below, so no
// model can make it.
constexpr char kIndexParseTool[] = "IndexParse";

// How a call of a tool is carried out once the gates let it through: the
// coordinator dispatches on this and the planner reads results by it, never
// by the tool's name.
enum class ToolHandler {
  kUnknown,            // no such tool
  kFileRead,           // Read: a tool worker; its content feeds the file cache
  kSearch,             // Grep, Glob, LS: a tool worker
  kCommand,            // ExecuteCommand: a tool worker, over the workspace overlay; its change set recorded
  kFileWrite,          // WriteFile, EditTool, MultiEditTool: resolved, one write per file at a time, validated
  kEditSymbol,         // EditSymbol: its span from the symbol index, then as kFileWrite
  kInit,               // InitTool: the write of ODIN.md, during /init only
  kWebFetch,           // WebFetch: the network worker; answers cached
  kSubagent,           // AgentTool: a subagent's planner loop in a worker of its own
  kLspCheck,           // lsp_check: the lsp host validates a file
  kTodoWrite,          // the coordinator: the agent's todo list
  kMemoryQuery,        // the coordinator: the ledger's memory of the session
  kSkill,              // the coordinator: a skill's text and its files' names
  kContextSummarizer,  // the coordinator records it; the agent loop compacts
  kPlanUpdate,         // the coordinator checks it; the agent loop revises its plan
  kIndexQuery,         // the coordinator: symbols, references, impact, outline from the symbol index
  kMcp,                // an MCP server's tool (mcp__SERVER__TOOL), in that server's worker
  kMcpResources,       // the coordinator: the MCP servers' resources, as listed
  kMcpResource,        // ReadMcpResource: in the named server's worker, as its tools are
  kCommandOutput,      // the coordinator: a background command's new output and state
  kStopCommand,        // the coordinator: ends a background command
  // Odin's own calls, never a model's (no mode offers them; Submit never
  // sees them): a hook's command, a batch for the symbol index, a
  // references question to the lsp host, an MCP server's tool listing.
  kHook,
  kIndexParse,
  kLspReferences,
  kMcpList,  // McpListTools, McpGetPrompt
};

// How a writing tool says what it writes: the read-before-edit gate's
// question (a whole file may be new; an edit needs the file read).
enum class WriteForm {
  kNone,    // writes no file
  kWhole,   // WriteFile: the whole content
  kInit,    // InitTool: the whole content of ODIN.md
  kEdits,   // EditTool, MultiEditTool: replacements in a file read before
  kSymbol,  // EditSymbol: a symbol's span, found by the index
};

// The tool registry: one entry per tool, the one place that answers what a
// tool is. The table (tool_catalog.cc) is the built-in tools; an MCP
// server's tools, known only once the server lists them, share one entry
// (McpToolEntry) and their per-tool facts live in mcp/mcp_registry.h.
struct ToolInfo {
  const char* name;
  ToolClass tool_class;
  bool reads_files;  // feeds the file cache (Read, Grep with content output)
  ToolHandler handler;
  // Its name in Claude Code, as hooks' matchers and tool_name know it ("Bash"
  // for ExecuteCommand); null where Claude Code has no such tool.
  const char* claude_code_name;
  WriteForm write_form = WriteForm::kNone;
  bool writes_files() const { return tool_class == ToolClass::kWrite; }
};

// The prefix of an MCP server's tools: mcp__SERVER__TOOL.
constexpr char kMcpToolPrefix[] = "mcp__";
// The entry every MCP tool shares.
const ToolInfo& McpToolEntry();

// The handler of the tool named name: the table's (Odin's own calls
// included), kMcp for any mcp__SERVER__TOOL, else kUnknown.
ToolHandler HandlerOf(std::string_view name);

// The built-in tool named name, or null if Odin has no such tool.
const ToolInfo* FindTool(std::string_view name);
// The same, and an MCP tool's shared entry for mcp__SERVER__TOOL.
const ToolInfo* FindToolOrMcp(std::string_view name);
// True iff name is a file-writing tool (WriteFile, EditTool, MultiEditTool,
// EditSymbol, InitTool).
bool IsWriteTool(std::string_view name);
// How the tool named name writes (kNone for any other tool).
WriteForm WriteFormOf(std::string_view name);

// The names of the tools offered in mode, in a stable order.
std::vector<std::string> ToolsForMode(Mode mode);

}  // namespace odin
