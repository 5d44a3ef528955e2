#pragma once
// The tools Odin knows, what each one does to the workspace, and which modes
// offer it (DESIGN.md section 3, the mode table).

#include <string>
#include <string_view>
#include <vector>

namespace odin {

enum class Mode { kAsk, kPlan, kEdit };

// Parses "ask", "plan", "edit". Returns false for anything else.
bool ParseMode(std::string_view text, Mode* mode);
const char* ModeName(Mode mode);

// Starts a subagent (a planner loop in a worker of its own). Offered to the
// main agent in every mode, never to a subagent.
constexpr char kAgentTool[] = "AgentTool";

struct ToolInfo {
  const char* name;
  bool writes_files;    // WriteFile, EditTool, MultiEditTool: edit mode only, per-file lock
  bool reads_files;     // feeds the file cache (Read, Grep with content output)
  bool in_coordinator;  // runs in the coordinator itself (TodoWrite), not a worker
};

// The tool named name, or null if Odin has no such tool.
const ToolInfo* FindTool(std::string_view name);

// The names of the tools offered in mode, in a stable order.
std::vector<std::string> ToolsForMode(Mode mode);

}  // namespace odin
