#include "tools/tool_catalog.h"

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
    {"lsp_check", ToolClass::kRead, false, false},
    {kExecuteCommandTool, ToolClass::kExec, false, false},
    {kWriteFileTool, ToolClass::kWrite, false, false},
    {kEditTool, ToolClass::kWrite, false, false},
    {kMultiEditTool, ToolClass::kWrite, false, false},
    {kAgentTool, ToolClass::kAgent, false, false},
};

}  // namespace

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
    if (!t.writes_files() || mode == Mode::kEdit) out.push_back(t.name);
  }
  return out;
}

}  // namespace odin
