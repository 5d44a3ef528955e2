#pragma once
// ExecuteCommand: one command run by a tool worker.
//
// Arguments (JSON): {"command": "shell text"} runs through bash -c (sh -c when
// bash is missing); {"argv": ["prog", "arg", ...]} runs the program directly.
// Optional "cwd": a directory inside the workspace, relative to it or absolute.
//
// The command runs in its own process group with stdin from /dev/null. When it
// exits, whatever it left running (its group, and any descendant that escaped
// the group) is killed, so a call never leaves processes behind. Output is
// streamed to a Sink as it arrives and kept as head, tail and total size.
//
// Thread-safety: none; a CommandRun belongs to the worker loop.

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "base/clock.h"
#include "base/status.h"
#include "tools/tool_catalog.h"  // kHookTool
#include "base/subprocess.h"
#include "base/zmq_endpoint.h"
#include "tools/output_capture.h"

namespace odin {
namespace v1 {
class ToolResult;
}

constexpr const char kExecuteCommandTool[] = "ExecuteCommand";
// A background command's new output and state ({"id", "wait_seconds"?}),
// and its end ({"id"}): the coordinator answers both
// (coordinator/background_commands.cc).
constexpr const char kCommandOutputTool[] = "CommandOutput";
constexpr const char kStopCommandTool[] = "StopCommand";
constexpr size_t kHookStdoutCapBytes = 1 << 20;
constexpr size_t kHookStderrCapBytes = 64 * 1024;

struct CommandSpec {
  std::vector<std::string> argv;  // the shell form is already turned into bash -c
  std::string cwd;                // absolute
  std::vector<std::string> env;
  SpawnLimits limits;
  // Where stdin comes from (-1: /dev/null). Start dups it; the caller keeps it.
  int stdin_fd = -1;
  // When the command ends, also kill every descendant of this process that
  // escaped its group (the tool worker, a child subreaper, inherits them).
  // False where this process has other children to keep (the lsp host's
  // language servers): then only the command's group is killed.
  bool kill_escaped_descendants = true;
  // SpawnOptions::before_exec: what the child does before it execs (the
  // workspace overlay, sandbox/workspace_overlay.h); null: nothing.
  int (*before_exec)(const void* arg) = nullptr;
  const void* before_exec_arg = nullptr;
  // SpawnOptions::keep_fds: what before_exec needs (it closes them).
  std::vector<int> keep_fds;
};

// ExecuteCommand's arguments, parsed once at Submit (tools/tool_input.h):
// the command-rule gate judges what this holds, and the worker runs what
// CommandSpecOf makes of the same value, so the two cannot disagree.
struct CommandArgs {
  std::string script;             // "command": shell text, run by bash -c; empty when argv is given
  std::vector<std::string> argv;  // "argv": the program and its arguments, run directly
  std::string cwd;                // "cwd" as given, relative to the workspace or absolute; "" for none
  // "run_in_background": the call returns once the command started; the
  // coordinator keeps it (it never reaches the worker as a flag).
  bool background = false;
};
// Returns InvalidArgument naming the problem (not an object, neither or both
// of command/argv, an empty command, an argv that is not strings, a
// run_in_background that is not true or false).
StatusOr<CommandArgs> CommandArgsOf(const nlohmann::json& args);

// What the worker runs: the shell form turned into bash -c, the cwd
// resolved. InvalidArgument for a cwd outside workspace or missing.
StatusOr<CommandSpec> CommandSpecOf(CommandArgs args, const std::string& workspace);
// CommandArgsOf on JSON text (malformed JSON is InvalidArgument too), then
// CommandSpecOf.
StatusOr<CommandSpec> ParseExecuteCommandArgs(std::string_view json, const std::string& workspace);

// What a Hook call runs: bash -c command in the workspace.
StatusOr<CommandSpec> HookSpecOf(const std::string& command, const std::string& workspace);

// Which stream a chunk of output came from (matches odin.v1.OutputStream).
enum class OutputStreamId { kStdout = 1, kStderr = 2 };

class CommandRun {
 public:
  class Sink {
   public:
    virtual ~Sink() = default;
    virtual void OnOutput(OutputStreamId stream, std::string_view data) = 0;
  };

  enum class CancelKind { kTimeout, kUser, kBudget };

  // Starts the command. On failure to start (not found, not executable, bad
  // cwd) returns the error; nothing is left running.
  static StatusOr<std::unique_ptr<CommandRun>> Start(const CommandSpec& spec, size_t head_bytes, size_t tail_bytes,
                                                     Clock* clock);
  ~CommandRun();
  CommandRun(const CommandRun&) = delete;
  CommandRun& operator=(const CommandRun&) = delete;

  pid_t pgid() const { return pid_; }
  bool done() const { return done_; }

  // Adds the fds to wait on: the exit notification always, the output pipes
  // only if want_output (so a slow reader applies backpressure to the command).
  void AddWatchFds(bool want_output, std::vector<PollFd>* fds) const;
  // Does whatever is ready without blocking: reads output into the sink (if
  // read_output), notices the exit, escalates a cancel to SIGKILL when due.
  void Service(bool read_output, Sink* sink);
  // When Service must run next even if no fd is ready, if ever.
  std::optional<SteadyTime> NextTimer() const;

  // Stops the command: SIGTERM to its group now, SIGKILL after grace.
  void Cancel(CancelKind kind, Duration grace);
  // Kills everything at once and waits for it (worker shutdown).
  void KillNow();

  // The outcome. REQUIRES: done().
  void FillResult(v1::ToolResult* result) const;

 private:
  CommandRun(pid_t pid, int pidfd, int out_fd, int err_fd, size_t head, size_t tail, Clock* clock);
  void ReadAvailable(int* fd, OutputStreamId stream, Sink* sink, size_t budget);
  void Finish(int wait_status, Sink* sink);

  pid_t pid_;
  int pidfd_;
  int out_fd_;
  int err_fd_;
  Clock* clock_;
  SteadyTime started_;
  SteadyTime finished_{};
  OutputCapture capture_;
  bool done_ = false;
  bool kill_escaped_ = true;
  int wait_status_ = 0;
  std::optional<CancelKind> cancelled_;
  std::optional<SteadyTime> kill_at_;
};

}  // namespace odin
