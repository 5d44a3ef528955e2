// odin exec: one command, run as an ExecuteCommand tool call in a sandboxed
// worker, recorded in the ledger, its output streamed, its exit status passed
// through.

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <iostream>
#include <optional>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "base/canonical_json.h"
#include "base/json_input.h"
#include "base/unique_fd.h"
#include "cli/cli.h"
#include "session/runtime.h"
#include "odin/v1/worker.pb.h"
#include "tools/exec_command.h"
#include "tools/tool_result.h"
#include "tools/workspace_path.h"

namespace odin {
namespace {

int g_signal_pipe[2] = {-1, -1};
volatile sig_atomic_t g_signal = 0;

void OnSignal(int sig) {
  g_signal = sig;
  (void)!write(g_signal_pipe[1], "x", 1);
}

// Writes the command's output to one of our stdio fds without ever blocking
// for long: a stalled reader (a pager nobody scrolls) must not keep the loop
// from heartbeating its workers, or they would take it for dead.
class OutputWriter {
 public:
  explicit OutputWriter(int fd) : fd_(fd) {
    // O_NONBLOCK is a property of the open file, which a terminal or pipe
    // shares with the shell; so reopen it privately instead of changing it.
    // Regular files never stall and keep their offset, so they stay as they are.
    struct stat st;
    if (fstat(fd, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))) {
      int flags = fcntl(fd, F_GETFL);
      StatusOr<UniqueFd> reopened = ReopenFd(fd, (flags & (O_ACCMODE | O_APPEND)) | O_NONBLOCK);
      if (reopened.ok()) fd_ = owned_ = reopened->release();
    }
  }
  ~OutputWriter() {
    if (owned_ >= 0) close(owned_);
  }

  // Returns false iff the reader has gone away.
  bool Write(std::string_view data, Duration heartbeat, const std::function<void()>& keep_alive) {
    while (!data.empty()) {
      ssize_t n = write(fd_, data.data(), data.size());
      if (n > 0) {
        data.remove_prefix(static_cast<size_t>(n));
      } else if (n < 0 && errno == EAGAIN) {
        // Short waits, each followed by the heartbeats then due: a wait of
        // a whole interval could let two pass between heartbeats, and a busy
        // machine a third, which the workers take for a dead coordinator.
        pollfd p = {fd_, POLLOUT, 0};
        (void)poll(&p, 1, static_cast<int>(std::max<int64_t>(1, ToMillis(heartbeat) / 4)));
        keep_alive();
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else {
        return false;
      }
    }
    return true;
  }

 private:
  int fd_;
  int owned_ = -1;
};

std::string Lossy(const std::string& bytes) {
  return nlohmann::json(bytes).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

int Fail(const std::string& message) {
  std::cerr << "odin exec: " << message << "\n";
  return kExecOwnError;
}

// odin exec's exit status: the command's own, or what ended it.
int ExitCode(const v1::ToolResult& r, const ExecFlags& f, const std::string& execution_id, bool reader_gone) {
  switch (r.status()) {
    case v1::TOOL_STATUS_OK:
    case v1::TOOL_STATUS_ERROR:
      if (r.has_exit_code()) {
        if (r.exit_code() >= 126 && r.has_error() && !f.json) {
          std::cerr << "odin exec: " << r.error().message() << "\n";
        }
        return r.exit_code();
      }
      if (!f.json) std::cerr << "odin exec: " << r.error().message() << "\n";
      return kExecOwnError;
    case v1::TOOL_STATUS_TIMED_OUT:
      if (!f.json) {
        std::cerr << "odin exec: timed out after " << f.timeout_seconds << " s; killed (" << execution_id << ")\n";
      }
      return 124;
    case v1::TOOL_STATUS_CANCELLED:
      if (reader_gone) return 128 + SIGPIPE;
      return 128 + (g_signal != 0 ? static_cast<int>(g_signal) : SIGTERM);
    default:
      if (!f.json) std::cerr << "odin exec: " << r.error().message() << " (" << execution_id << ")\n";
      return kExecOwnError;
  }
}

}  // namespace

int RunExec(const GlobalFlags& g, const ExecFlags& f) {
  // Arguments travel as JSON strings: they must be UTF-8. Checked before
  // anything is set up, so a refusal writes nothing.
  for (size_t i = 0; i < f.argv.size(); ++i) {
    if (!IsValidUtf8(f.argv[i])) {
      return Fail("argument " + std::to_string(i + 1) + " of the command is not valid UTF-8");
    }
  }

  // Everything the call's callbacks touch outlives the runtime, whose
  // destructor may still end the call.
  std::optional<v1::ToolResult> result;
  Status recorded;
  bool reader_gone = false;
  std::string execution_id;
  bool warned = false;
  OutputWriter out(STDOUT_FILENO), err(STDERR_FILENO);

  RuntimeFlags rf;
  rf.dir = g.dir;
  rf.sandbox = g.sandbox;
  rf.network = g.network;
  rf.workers = 1;  // one call needs one worker
  rf.session_kind = "exec";
  // --mode picks the sandbox policy of a mode: ask and plan see the
  // workspace read-only. Without it, odin exec's own (writable).
  rf.mode = f.mode.empty() ? "exec" : f.mode;
  StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Start(rf);
  if (!rt.ok()) return Fail(rt.status().message());
  Coordinator& coord = (*rt)->coordinator();
  const Config& config = (*rt)->config();
  if (!IsValidUtf8((*rt)->workspace().cwd)) return Fail("the working directory's name is not valid UTF-8");

  coord.on_worker_ready = [&warned](const v1::Hello& hello) {
    if (!hello.sandbox().namespaces() && !warned) {
      std::cerr << "odin exec: warning: running WITHOUT a sandbox (" << hello.sandbox().description() << ")\n";
      warned = true;
    }
  };

  nlohmann::json args = {{"argv", f.argv}, {"cwd", (*rt)->workspace().cwd}};
  ToolCall call;
  call.tool = kExecuteCommandTool;
  call.arguments_json = args.dump();
  call.mode = ParseCallMode(rf.mode);
  call.timeout = std::chrono::duration_cast<Duration>(std::chrono::duration<double>(f.timeout_seconds));
  call.stream_limit_bytes = f.json ? config.artifact_cap_bytes : 0;
  call.output_head_bytes = config.output_head_bytes;
  call.output_tail_bytes = config.output_tail_bytes;
  call.last_command = true;  // the worker need not make an overlay for another

  Duration heartbeat = milliseconds(config.heartbeat_ms);
  CallHandlers handlers;
  handlers.on_progress = [&](const v1::ToolProgress& p) {
    if (f.json || reader_gone || !p.has_output()) return;
    OutputWriter& w = p.output().stream() == v1::OUTPUT_STREAM_STDERR ? err : out;
    if (!w.Write(p.output().data(), heartbeat, [&coord] { coord.pool().SendDueHeartbeats(); })) {
      // Like a shell pipeline: the command loses its reader, so it stops.
      reader_gone = true;
      coord.Cancel(execution_id);
    }
  };
  handlers.on_done = [&](const v1::ToolResult& r, const Status& s) {
    result = r;
    recorded = s;
  };

  StatusOr<Pipe> signal_pipe = MakePipe(O_CLOEXEC | O_NONBLOCK);
  if (!signal_pipe.ok()) return Fail(signal_pipe.status().message());
  g_signal_pipe[0] = signal_pipe->read_end.release();  // open for the rest of the process, like the handler
  g_signal_pipe[1] = signal_pipe->write_end.release();
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);

  execution_id = coord.Submit(std::move(call), std::move(handlers));
  bool cancelled = false;
  while (!result) {
    std::vector<PollFd> extra = {{g_signal_pipe[0]}};
    Status s = coord.Poll(seconds(1), &extra);
    if (!s.ok()) return Fail(s.message());
    if (extra[0].readable) {
      char drain[64];
      while (read(g_signal_pipe[0], drain, sizeof drain) > 0) {
      }
    }
    if (g_signal != 0 && !cancelled) {
      cancelled = true;
      coord.Cancel(execution_id);
    }
  }
  const v1::ToolResult& r = *result;

  if (f.json) {
    // What the command changed, as the coordinator saw it.
    nlohmann::json changed = nlohmann::json::array();
    for (const v1::FileChange& c : r.changes()) {
      if (c.file_type() != "directory") changed.push_back(DisplayPath(c.path(), (*rt)->workspace().root));
    }
    nlohmann::json j = {
        {"execution_id", execution_id},
        {"session_id", coord.session_id()},
        {"status", ToolStatusName(r.status())},
        {"exit_code", r.has_exit_code() ? nlohmann::json(r.exit_code()) : nlohmann::json()},
        {"exit_reason", ExitReasonName(r.exit_reason())},
        {"duration_ms", static_cast<double>(r.duration_us()) / 1000.0},
        {"output_bytes", r.output_total_bytes()},
        {"output_head", ParseJson(Lossy(r.output_head()))},
        {"output_tail", ParseJson(Lossy(r.output_tail()))},
        {"error", r.has_error() ? nlohmann::json(r.error().message()) : nlohmann::json()},
        {"recorded", recorded.ok()},
        {"changed_files", changed},
    };
    std::cout << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  }
  if (!recorded.ok()) std::cerr << "odin exec: " << recorded.message() << "\n";

  int code = ExitCode(r, f, execution_id, reader_gone);
  // The call is over and written out: the process ends without waiting for
  // its sandbox to be taken down (several milliseconds of every odin exec).
  if ((*rt)->FinishBeforeExit()) {
    std::cout.flush();
    std::cerr.flush();
    spdlog::default_logger()->flush();
    _exit(code);
  }
  return code;
}

}  // namespace odin
