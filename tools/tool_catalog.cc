#include "tools/tool_catalog.h"

#include <nlohmann/json.hpp>

#include "base/json_input.h"
#include "tools/exec_command.h"
#include "tools/file_tool_args.h"

namespace odin {
namespace {

constexpr ToolInfo kTools[] = {
    {kLsTool, ToolClass::kRead, false, ToolHandler::kSearch, "LS"},
    {kGlobTool, ToolClass::kRead, false, ToolHandler::kSearch, "Glob"},
    {kGrepTool, ToolClass::kRead, true, ToolHandler::kSearch, "Grep"},
    {kReadTool, ToolClass::kRead, true, ToolHandler::kFileRead, "Read"},
    // The agent's own list, not the workspace.
    {kTodoWriteTool, ToolClass::kRead, false, ToolHandler::kTodoWrite, "TodoWrite"},
    {kMemoryQueryTool, ToolClass::kRead, false, ToolHandler::kMemoryQuery, nullptr},
    // A skill's own text: read-only, every mode.
    {kSkillTool, ToolClass::kRead, false, ToolHandler::kSkill, "Skill"},
    // The agent's own conversation, and its own plan.
    {kContextSummarizerTool, ToolClass::kRead, false, ToolHandler::kContextSummarizer, nullptr},
    {kPlanUpdateTool, ToolClass::kRead, false, ToolHandler::kPlanUpdate, nullptr},
    // The symbol index's queries (index/index_query.h), answered from .odin/index.db.
    {"symbols", ToolClass::kRead, false, ToolHandler::kIndexQuery, nullptr},
    {"references", ToolClass::kRead, false, ToolHandler::kIndexQuery, nullptr},
    {"impact", ToolClass::kRead, false, ToolHandler::kIndexQuery, nullptr},
    {"outline", ToolClass::kRead, false, ToolHandler::kIndexQuery, nullptr},
    {kLspCheckTool, ToolClass::kRead, false, ToolHandler::kLspCheck, nullptr},
    {kExecuteCommandTool, ToolClass::kExec, false, ToolHandler::kCommand, "Bash"},
    // A background command's output and its end: its process, never the
    // workspace (what it writes is its ExecuteCommand's).
    {kCommandOutputTool, ToolClass::kRead, false, ToolHandler::kCommandOutput, "BashOutput"},
    {kStopCommandTool, ToolClass::kRead, false, ToolHandler::kStopCommand, "KillShell"},
    {kWriteFileTool, ToolClass::kWrite, false, ToolHandler::kFileWrite, "Write", WriteForm::kWhole},
    {kEditTool, ToolClass::kWrite, false, ToolHandler::kFileWrite, "Edit", WriteForm::kEdits},
    {kMultiEditTool, ToolClass::kWrite, false, ToolHandler::kFileWrite, "MultiEdit", WriteForm::kEdits},
    {kEditSymbolTool, ToolClass::kWrite, false, ToolHandler::kEditSymbol, nullptr, WriteForm::kSymbol},
    {kAgentTool, ToolClass::kAgent, false, ToolHandler::kSubagent, "Agent"},
    {kWebFetchTool, ToolClass::kWeb, false, ToolHandler::kWebFetch, "WebFetch"},
    {kInitTool, ToolClass::kWrite, false, ToolHandler::kInit, nullptr, WriteForm::kInit},
    {kListMcpResourcesTool, ToolClass::kRead, false, ToolHandler::kMcpResources, "ListMcpResourcesTool"},
    {kReadMcpResourceTool, ToolClass::kRead, false, ToolHandler::kMcpResource, "ReadMcpResourceTool"},
};
// Odin's own calls: found by HandlerOf, never by FindTool (so no mode offers
// them and the mode gate refuses them by name).
constexpr ToolInfo kInternalTools[] = {
    {kHookTool, ToolClass::kExec, false, ToolHandler::kHook, nullptr},
    {kIndexParseTool, ToolClass::kRead, false, ToolHandler::kIndexParse, nullptr},
    {kLspReferencesTool, ToolClass::kRead, false, ToolHandler::kLspReferences, nullptr},
    {kMcpListToolsTool, ToolClass::kRead, false, ToolHandler::kMcpList, nullptr},
    {kMcpGetPromptTool, ToolClass::kRead, false, ToolHandler::kMcpList, nullptr},
};
// What an MCP tool is: what its server does is its own (ToolClass kRead
// here; the MCP registry and the server's "writable" decide where it runs).
constexpr ToolInfo kMcpTool = {"mcp", ToolClass::kRead, false, ToolHandler::kMcp, nullptr};

}  // namespace

StatusOr<std::string> ParseContextSummarizerArgs(const std::string& arguments_json) {
  return ContextSummarizerFocusOf(ParseJson(arguments_json));
}

StatusOr<std::string> ContextSummarizerFocusOf(const nlohmann::json& j) {
  if (!j.is_object()) return Status::InvalidArgument(kContextSummarizerTool, "arguments must be a JSON object");
  for (const auto& [key, value] : j.items()) {
    if (key != "focus") return Status::InvalidArgument(kContextSummarizerTool, "unknown argument \"" + key + "\"");
    if (!value.is_string()) return Status::InvalidArgument(kContextSummarizerTool, "\"focus\" must be a string");
  }
  std::string focus = j.value("focus", "");
  if (focus.size() > 2000) return Status::InvalidArgument(kContextSummarizerTool, "\"focus\" is over 2000 bytes");
  return focus;
}

StatusOr<WebFetchArgs> ParseWebFetchArgs(const std::string& arguments_json) {
  return WebFetchArgsOf(ParseJson(arguments_json));
}

StatusOr<WebFetchArgs> WebFetchArgsOf(const nlohmann::json& j) {
  if (!j.is_object()) return Status::InvalidArgument(kWebFetchTool, "arguments must be a JSON object");
  WebFetchArgs out;
  for (const auto& [key, value] : j.items()) {
    if (key != "url" && key != "prompt") {
      return Status::InvalidArgument(kWebFetchTool, "unknown argument \"" + key + "\"");
    }
    if (!value.is_string()) return Status::InvalidArgument(kWebFetchTool, "\"" + key + "\" must be a string");
  }
  out.url = j.value("url", "");
  out.prompt = j.value("prompt", "");
  if (out.url.empty()) return Status::InvalidArgument(kWebFetchTool, "\"url\" is required");
  if (out.prompt.empty()) return Status::InvalidArgument(kWebFetchTool, "\"prompt\" is required");
  if (out.url.size() > 8192) return Status::InvalidArgument(kWebFetchTool, "\"url\" is over 8192 bytes");
  if (out.prompt.size() > 16384) return Status::InvalidArgument(kWebFetchTool, "\"prompt\" is over 16384 bytes");
  return out;
}

bool ParseMode(std::string_view text, Mode* mode) {
  if (text == "ask")
    *mode = Mode::kAsk;
  else if (text == "plan")
    *mode = Mode::kPlan;
  else if (text == "edit")
    *mode = Mode::kEdit;
  else
    return false;
  return true;
}

const char* ModeName(Mode mode) {
  switch (mode) {
    case Mode::kAsk: return "ask";
    case Mode::kPlan: return "plan";
    case Mode::kEdit: return "edit";
  }
  return "?";
}

const ToolInfo* FindTool(std::string_view name) {
  for (const ToolInfo& t : kTools) {
    if (name == t.name) return &t;
  }
  return nullptr;
}

const ToolInfo& McpToolEntry() { return kMcpTool; }

const ToolInfo* FindToolOrMcp(std::string_view name) {
  if (name.starts_with(kMcpToolPrefix)) return &kMcpTool;
  return FindTool(name);
}

ToolHandler HandlerOf(std::string_view name) {
  if (const ToolInfo* t = FindToolOrMcp(name)) return t->handler;
  for (const ToolInfo& t : kInternalTools) {
    if (name == t.name) return t.handler;
  }
  return ToolHandler::kUnknown;
}

WriteForm WriteFormOf(std::string_view name) {
  const ToolInfo* t = FindTool(name);
  return t != nullptr ? t->write_form : WriteForm::kNone;
}

bool IsWriteTool(std::string_view name) {
  const ToolInfo* t = FindTool(name);
  return t != nullptr && t->writes_files();
}

std::vector<std::string> ToolsForMode(Mode mode) {
  std::vector<std::string> out;
  for (const ToolInfo& t : kTools) {
    // InitTool is offered by /init alone (InitToolSpec), the MCP resources'
    // tools by the MCP registry while some server has resources.
    if (t.name == std::string_view(kInitTool) || t.handler == ToolHandler::kMcpResources ||
        t.handler == ToolHandler::kMcpResource) {
      continue;
    }
    // Background commands start only in edit mode: their tools with them.
    if ((t.handler == ToolHandler::kCommandOutput || t.handler == ToolHandler::kStopCommand) && mode != Mode::kEdit) {
      continue;
    }
    if (!t.writes_files() || mode == Mode::kEdit) out.push_back(t.name);
  }
  return out;
}

}  // namespace odin
