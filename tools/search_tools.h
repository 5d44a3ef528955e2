#pragma once
// The search tools, built on ripgrep run as a subprocess by the tool worker:
// Grep (content, files_with_matches or count), Glob (file names) and LS (a
// tree of a directory). All of them respect .gitignore and skip hidden files,
// as rg does.
//
// Split in two halves around the rg process, so the worker stays responsive
// (heartbeats, Cancel) while rg runs: PlanSearch checks the arguments and
// builds the command line; FinishSearch turns rg's output into the result the
// model sees. Grep with content output also reports which lines of which files
// it showed, for the coordinator's file cache.

#include <string>
#include <vector>

#include "base/status.h"

namespace odin {
namespace v1 {
class ToolRequest;
class ToolResult;
}  // namespace v1

// The rg command line for the request (argv[0] is rg_path). Returns
// InvalidArgument for bad arguments or paths outside the workspace.
StatusOr<std::vector<std::string>> PlanSearch(const v1::ToolRequest& request, const std::string& workspace,
                                              const std::string& rg_path);

// Builds the result from rg's stdout, stderr and exit code. rg_truncated says
// the output was cut because it grew too large. Returns the model's text.
std::string FinishSearch(const v1::ToolRequest& request, const std::string& workspace, const std::string& rg_stdout,
                         const std::string& rg_stderr, int rg_exit, bool rg_truncated, v1::ToolResult* result);

// Most rg output a worker keeps for one call.
constexpr size_t kMaxRgOutputBytes = 64u << 20;

}  // namespace odin
