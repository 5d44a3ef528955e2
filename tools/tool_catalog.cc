#include "tools/tool_catalog.h"

#include "tools/exec_command.h"
#include "tools/file_tool_args.h"

namespace odin {
namespace {

constexpr ToolInfo kTools[] = {
    {kLsTool, false, false, false},
    {kGlobTool, false, false, false},
    {kGrepTool, false, true, false},
    {kReadTool, false, true, false},
    {kTodoWriteTool, false, false, true},
    {"memory_query", false, false, true},
    {"lsp_check", false, false, false},
    {kExecuteCommandTool, false, false, false},
    {kWriteFileTool, true, false, false},
    {kEditTool, true, false, false},
    {kMultiEditTool, true, false, false},
    {kAgentTool, false, false, false},
};

}  // namespace

bool ParseMode(std::string_view text, Mode* mode) {
  if (text == "ask") *mode = Mode::kAsk;
  else if (text == "plan") *mode = Mode::kPlan;
  else if (text == "edit") *mode = Mode::kEdit;
  else return false;
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

std::vector<std::string> ToolsForMode(Mode mode) {
  std::vector<std::string> out;
  for (const ToolInfo& t : kTools) {
    if (!t.writes_files || mode == Mode::kEdit) out.push_back(t.name);
  }
  return out;
}

}  // namespace odin
