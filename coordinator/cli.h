#pragma once
// The subcommands of `odin`, one function each; odin_main.cc parses the command
// line (CLI11) and calls them. Each returns the process exit code and prints
// errors as one line on stderr.
//
// Exit codes: `odin exec` passes the command's status through and uses 125 for
// its own errors (as timeout(1) and env(1) do); the other subcommands exit 2 on
// usage errors and 1 on other errors.

#include <string>
#include <vector>

namespace odin {

constexpr int kExecOwnError = 125;
constexpr int kUsageError = 2;
constexpr int kError = 1;

struct GlobalFlags {
  std::string dir;      // -C DIR
  std::string sandbox;  // --sandbox auto|require|off
};

struct ExecFlags {
  double timeout_seconds = 0;      // --timeout; 0: none
  bool json = false;               // --json
  std::vector<std::string> argv;   // after --
};

struct ToolFlags {
  std::string name;                  // the tool, e.g. "Read"
  std::string arguments = "{}";      // its JSON arguments
  std::string session;               // --session: continue this session
  std::string mode = "edit";         // --mode ask|plan|edit
  bool json = false;                 // --json
};

int RunExec(const GlobalFlags& g, const ExecFlags& f);
// Exit 0 iff the call succeeded; 1 if it failed or a gate refused it.
int RunTool(const GlobalFlags& g, const ToolFlags& f);
int RunLog(const GlobalFlags& g, bool json, int limit);
int RunShow(const GlobalFlags& g, const std::string& id, bool json, bool output_only);
int RunLedgerVerify(const GlobalFlags& g, bool json);
int RunDoctor(const GlobalFlags& g, bool json);

}  // namespace odin
