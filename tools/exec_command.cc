#include "tools/exec_command.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/json_input.h"
#include "base/unique_fd.h"
#include "odin/v1/worker.pb.h"

namespace odin {
namespace {

constexpr size_t kChunkBytes = 64 * 1024;

bool IsInside(const std::string& path, const std::string& root) {
  if (root == "/") return true;
  return path == root ||
         (path.size() > root.size() && path.compare(0, root.size(), root) == 0 && path[root.size()] == '/');
}

void SetNonBlocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

}  // namespace

StatusOr<CommandArgs> CommandArgsOf(const nlohmann::json& args) {
  using nlohmann::json;
  if (args.is_discarded() || !args.is_object()) {
    return Status::InvalidArgument("ExecuteCommand", "arguments must be a JSON object");
  }
  CommandArgs parsed;
  bool has_command = args.contains("command");
  bool has_argv = args.contains("argv");
  if (has_command == has_argv) {
    return Status::InvalidArgument("ExecuteCommand", "give exactly one of \"command\" or \"argv\"");
  }
  if (has_command) {
    if (!args["command"].is_string() || args["command"].get<std::string>().empty()) {
      return Status::InvalidArgument("ExecuteCommand", "\"command\" must be a non-empty string");
    }
    parsed.script = args["command"].get<std::string>();
  } else {
    const json& argv = args["argv"];
    if (!argv.is_array() || argv.empty()) {
      return Status::InvalidArgument("ExecuteCommand", "\"argv\" must be a non-empty array of strings");
    }
    for (const json& a : argv) {
      if (!a.is_string()) {
        return Status::InvalidArgument("ExecuteCommand", "\"argv\" must be a non-empty array of strings");
      }
      parsed.argv.push_back(a.get<std::string>());
    }
  }
  if (args.contains("cwd")) {
    if (!args["cwd"].is_string()) return Status::InvalidArgument("ExecuteCommand", "\"cwd\" must be a string");
    parsed.cwd = args["cwd"].get<std::string>();
  }
  if (args.contains("run_in_background")) {
    if (!args["run_in_background"].is_boolean()) {
      return Status::InvalidArgument("ExecuteCommand", "\"run_in_background\" must be true or false");
    }
    parsed.background = args["run_in_background"].get<bool>();
  }
  return parsed;
}

StatusOr<CommandSpec> CommandSpecOf(CommandArgs args, const std::string& workspace) {
  CommandSpec spec;
  if (!args.script.empty()) {
    std::string shell = access("/bin/bash", X_OK) == 0 ? "/bin/bash" : "/bin/sh";
    spec.argv = {shell, "-c", args.script};
  } else {
    spec.argv = std::move(args.argv);
  }
  std::string cwd = workspace;
  if (!args.cwd.empty()) cwd = args.cwd[0] == '/' ? args.cwd : JoinPath(workspace, args.cwd);
  StatusOr<std::string> real = RealPath(cwd);
  if (!real.ok()) return Status::InvalidArgument("ExecuteCommand: cwd", real.status().message());
  if (!IsInside(*real, workspace)) {
    return Status::InvalidArgument("ExecuteCommand: cwd " + *real, "outside the workspace " + workspace);
  }
  spec.cwd = *real;
  return spec;
}

StatusOr<CommandSpec> ParseExecuteCommandArgs(std::string_view arguments, const std::string& workspace) {
  ASSIGN_OR_RETURN(CommandArgs args, CommandArgsOf(ParseJson(arguments)));
  return CommandSpecOf(std::move(args), workspace);
}

StatusOr<CommandSpec> HookSpecOf(const std::string& command, const std::string& workspace) {
  if (command.empty()) return Status::InvalidArgument(kHookTool, "the hook's command is empty");
  CommandSpec spec;
  std::string shell = access("/bin/bash", X_OK) == 0 ? "/bin/bash" : "/bin/sh";
  spec.argv = {shell, "-c", command};
  spec.cwd = workspace;
  return spec;
}

StatusOr<std::unique_ptr<CommandRun>> CommandRun::Start(const CommandSpec& spec, size_t head_bytes, size_t tail_bytes,
                                                        Clock* clock) {
  ASSIGN_OR_RETURN(Pipe out, MakePipe(O_CLOEXEC));
  ASSIGN_OR_RETURN(Pipe err, MakePipe(O_CLOEXEC));
  SpawnOptions o;
  o.argv = spec.argv;
  o.env = spec.env;
  o.cwd = spec.cwd;
  o.stdout_fd = out.write_end.get();
  o.stderr_fd = err.write_end.get();
  o.stdin_fd = spec.stdin_fd;
  o.limits = spec.limits;
  o.before_exec = spec.before_exec;
  o.before_exec_arg = spec.before_exec_arg;
  o.keep_fds = spec.keep_fds;
  // The worker dying must not orphan the command.
  o.parent_death_signal = SIGKILL;
  StatusOr<pid_t> pid = Spawn(o);
  out.write_end.reset();
  err.write_end.reset();
  if (!pid.ok()) return pid.status();
  SetNonBlocking(out.read_end.get());
  SetNonBlocking(err.read_end.get());
  std::unique_ptr<CommandRun> run(new CommandRun(*pid, OpenPidFd(*pid), out.read_end.release(), err.read_end.release(),
                                                 head_bytes, tail_bytes, clock));
  run->kill_escaped_ = spec.kill_escaped_descendants;
  return run;
}

CommandRun::CommandRun(pid_t pid, int pidfd, int out_fd, int err_fd, size_t head, size_t tail, Clock* clock)
    : pid_(pid),
      pidfd_(pidfd),
      out_fd_(out_fd),
      err_fd_(err_fd),
      clock_(clock),
      started_(clock->Now()),
      capture_(head, tail) {}

CommandRun::~CommandRun() {
  if (!done_) KillNow();
  if (pidfd_ >= 0) close(pidfd_);
  if (out_fd_ >= 0) close(out_fd_);
  if (err_fd_ >= 0) close(err_fd_);
}

void CommandRun::AddWatchFds(bool want_output, std::vector<PollFd>* fds) const {
  if (done_) return;
  if (pidfd_ >= 0) fds->push_back({pidfd_});
  if (want_output) {
    if (out_fd_ >= 0) fds->push_back({out_fd_});
    if (err_fd_ >= 0) fds->push_back({err_fd_});
  }
}

std::optional<SteadyTime> CommandRun::NextTimer() const {
  if (done_) return std::nullopt;
  std::optional<SteadyTime> t = kill_at_;
  // Without a pidfd, look for the exit now and then.
  if (pidfd_ < 0) {
    SteadyTime poll_at = clock_->Now() + milliseconds(20);
    if (!t || poll_at < *t) t = poll_at;
  }
  return t;
}

void CommandRun::ReadAvailable(int* fd, OutputStreamId stream, Sink* sink, size_t budget) {
  char buf[kChunkBytes];
  while (*fd >= 0 && budget > 0) {
    ssize_t n = read(*fd, buf, std::min(sizeof buf, budget));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    if (n <= 0) {  // EOF or error: this stream is finished
      close(*fd);
      *fd = -1;
      return;
    }
    capture_.Append(std::string_view(buf, static_cast<size_t>(n)));
    if (sink != nullptr) sink->OnOutput(stream, std::string_view(buf, static_cast<size_t>(n)));
    budget -= static_cast<size_t>(n);
  }
}

void CommandRun::Service(bool read_output, Sink* sink) {
  if (done_) return;
  if (read_output) {
    // One chunk per stream per call, so the caller can forward each before
    // reading more.
    ReadAvailable(&out_fd_, OutputStreamId::kStdout, sink, kChunkBytes);
    ReadAvailable(&err_fd_, OutputStreamId::kStderr, sink, kChunkBytes);
  }
  if (kill_at_ && clock_->Now() >= *kill_at_) {
    kill(-pid_, SIGKILL);
    kill_at_.reset();
  }
  int status = 0;
  if (WaitPid(pid_, &status, WNOHANG) == pid_) Finish(status, sink);
}

void CommandRun::Finish(int wait_status, Sink* sink) {
  wait_status_ = wait_status;
  finished_ = clock_->Now();
  // Whatever the command left behind dies with it: first its group, then any
  // descendant that left the group (the worker is a child subreaper).
  kill(-pid_, SIGKILL);
  if (kill_escaped_) KillAllDescendants();
  // Every writer is gone now, so the pipes reach EOF; the poll timeout only
  // guards against a writer we could not kill.
  for (;;) {
    pollfd fds[2] = {{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}};
    if (out_fd_ < 0 && err_fd_ < 0) break;
    int n = poll(fds, 2, 1000);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (fds[0].revents != 0) ReadAvailable(&out_fd_, OutputStreamId::kStdout, sink, kChunkBytes);
    if (fds[1].revents != 0) ReadAvailable(&err_fd_, OutputStreamId::kStderr, sink, kChunkBytes);
  }
  done_ = true;
}

void CommandRun::Cancel(CancelKind kind, Duration grace) {
  if (done_ || cancelled_) return;
  cancelled_ = kind;
  kill(-pid_, SIGTERM);
  kill_at_ = clock_->Now() + grace;
}

void CommandRun::KillNow() {
  if (done_) return;
  kill(-pid_, SIGKILL);
  int status = 0;
  WaitPid(pid_, &status, 0);
  Finish(status, nullptr);
}

void CommandRun::FillResult(v1::ToolResult* r) const {
  r->set_output_head(capture_.head());
  r->set_output_tail(capture_.tail());
  r->set_output_total_bytes(capture_.total());
  r->set_duration_us(static_cast<uint64_t>(std::chrono::duration_cast<microseconds>(finished_ - started_).count()));
  r->set_has_exit_code(true);
  int code = ExitCodeFromWaitStatus(wait_status_);
  if (cancelled_) {
    switch (*cancelled_) {
      case CancelKind::kTimeout:
        r->set_status(v1::TOOL_STATUS_TIMED_OUT);
        r->set_exit_reason(v1::EXIT_REASON_TIMEOUT);
        r->set_exit_code(124);
        r->mutable_error()->set_code(v1::CODE_DEADLINE_EXCEEDED);
        r->mutable_error()->set_message("command timed out and was killed");
        return;
      case CancelKind::kUser:
      case CancelKind::kBudget:
        r->set_status(v1::TOOL_STATUS_CANCELLED);
        r->set_exit_reason(*cancelled_ == CancelKind::kUser ? v1::EXIT_REASON_KILLED : v1::EXIT_REASON_BUDGET_EXCEEDED);
        r->set_exit_code(code);
        r->mutable_error()->set_code(v1::CODE_CANCELLED);
        r->mutable_error()->set_message("command cancelled");
        return;
    }
  }
  r->set_exit_code(code);
  r->set_exit_reason(v1::EXIT_REASON_NORMAL);
  r->set_status(code == 0 ? v1::TOOL_STATUS_OK : v1::TOOL_STATUS_ERROR);
}

}  // namespace odin
