#include "tools/tool_catalog.h"

#include <nlohmann/json.hpp>

#include "base/json_input.h"
#include "tools/exec_command.h"
#include "tools/file_tool_args.h"

namespace odin {
namespace {

constexpr ToolInfo kTools[] = {
    {kLsTool, ToolClass::kRead, false, false},
    {kGlobTool, ToolClass::kRead, false, false},
    {kGrepTool, ToolClass::kRead, true, false},
    {kReadTool, ToolClass::kRead, true, false},
    {kTodoWriteTool, ToolClass::kRead, false, true},  // the agent's own list, not the workspace
    {"memory_query", ToolClass::kRead, false, true},
    {kContextSummarizerTool, ToolClass::kRead, false, true},  // the agent's own conversation
    {kPlanUpdateTool, ToolClass::kRead, false, true},         // the agent's own plan
    // The symbol index's queries (index/index_query.h), answered from .odin/index.db.
    {"symbols", ToolClass::kRead, false, true},
    {"references", ToolClass::kRead, false, true},
    {"impact", ToolClass::kRead, false, true},
    {"outline", ToolClass::kRead, false, true},
    {"lsp_check", ToolClass::kRead, false, false},
    {kExecuteCommandTool, ToolClass::kExec, false, false},
    {kWriteFileTool, ToolClass::kWrite, false, false},
    {kEditTool, ToolClass::kWrite, false, false},
    {kMultiEditTool, ToolClass::kWrite, false, false},
    {kEditSymbolTool, ToolClass::kWrite, false, false},
    {kAgentTool, ToolClass::kAgent, false, false},
    {kWebFetchTool, ToolClass::kWeb, false, false},
    {kInitTool, ToolClass::kWrite, false, false},
};

}  // namespace

StatusOr<std::string> ParseContextSummarizerArgs(const std::string& arguments_json) {
  nlohmann::json j = ParseJson(arguments_json);
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
  nlohmann::json j = ParseJson(arguments_json);
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

bool IsWriteTool(std::string_view name) {
  const ToolInfo* t = FindTool(name);
  return t != nullptr && t->writes_files();
}

std::vector<std::string> ToolsForMode(Mode mode) {
  std::vector<std::string> out;
  for (const ToolInfo& t : kTools) {
    // InitTool is offered by /init alone (InitToolSpec).
    if (t.name == std::string_view(kInitTool)) continue;
    if (!t.writes_files() || mode == Mode::kEdit) out.push_back(t.name);
  }
  return out;
}

}  // namespace odin
