#include "workers/tool_worker.h"

#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <memory>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "base/file_util.h"
#include "base/secrets.h"
#include "base/subprocess.h"
#include "base/unique_fd.h"
#include "tools/file_tool_args.h"
#include "odin/v1/worker.pb.h"
#include "sandbox/workspace_overlay.h"
#include "tools/exec_command.h"
#include "tools/file_tools.h"
#include "tools/output_capture.h"
#include "tools/search_tools.h"
#include "tools/text_file.h"
#include "tools/tool_input.h"
#include "tools/tool_result.h"
#include "workers/index_parse.h"
#include "workers/overlay_keeper.h"
#include "workers/worker_channel.h"

namespace odin {
namespace {

// Failures to prepare an overlay (or to join one) in a row before commands
// all make their own.
constexpr int kPrepareOverlayTries = 3;

class Worker : public CommandRun::Sink, public WorkerLogic {
 public:
  Worker(const WorkerOptions& o, Clock* clock) : o_(o), clock_(clock) {
    // The workspace overlay (sandbox/workspace_overlay.h): odin-sandbox says
    // so in the environment, which commands must not inherit.
    if (const char* mounts = getenv(kOverlayEnv)) {
      overlay_mounts_ = mounts;
      unsetenv(kOverlayEnv);
      relaxed_filter_ = true;
      // Asked once, before the Hello says it: the coordinator looks at the
      // tree before the first command only where there is no overlay. The
      // first command's prepared overlay answers it (a child went through
      // the overlay's steps, another joined what it left); without one, the
      // probe does, and says why.
      StatusOr<std::unique_ptr<PreparedOverlay>> next = PreparedOverlay::Make(o_.workspace, *overlay_mounts_);
      if (next.ok()) {
        if (Status joined = (*next)->Check(); joined.ok()) {
          keeper_ = std::make_unique<OverlayKeeper>(
              [workspace = o_.workspace, mounts = *overlay_mounts_] {
                return PreparedOverlay::Make(workspace, mounts);
              },
              std::move(*next), kPrepareOverlayTries);
        } else {
          next = joined;
        }
      }
      if (keeper_ == nullptr) {
        if (Status probe = ProbeWorkspaceOverlay(o_.workspace, *overlay_mounts_); !probe.ok()) {
          fprintf(stderr, "odin-worker: no workspace overlay for commands: %s\n", probe.ToString().c_str());
          overlay_mounts_.reset();
        } else {
          fprintf(stderr, "odin-worker: commands make their overlay as they start: %s\n",
                  next.status().ToString().c_str());
        }
      }
      view_usable_ = overlay_mounts_ && ReadOnlyViewKeepsMasks(o_.workspace, *overlay_mounts_);
    }
  }

  // What the Hello adds to the tools: whether commands run over the
  // workspace overlay (a worker the sandbox gave none says nothing).
  std::vector<std::string> OverlayCapabilities() const {
    if (!relaxed_filter_) return {};
    std::vector<std::string> caps = {overlay_mounts_ ? kOverlayCapability : kNoOverlayCapability};
    if (view_usable_) caps.push_back(kReadOnlyViewCapability);
    return caps;
  }

  void OnOutput(OutputStreamId stream, std::string_view data) override;

  void Attach(WorkerChannel* channel) override { channel_ = channel; }
  void Handle(const v1::Envelope& env) override;
  void AddWatchFds(std::vector<PollFd>* fds) override;
  SteadyTime NextTimer() const override;
  void Service() override;
  void Stop() override;

 private:
  void StartRequest(const v1::ToolRequest& req);
  void StartCommand(const v1::ToolRequest& req, std::vector<std::string> argv_override);
  void StartHook(const v1::ToolRequest& req);
  void StartSpec(const v1::ToolRequest& req, CommandSpec spec, bool capture);
  // Sends a finished tool's text as output (progress chunks, head and tail)
  // and then its result.
  void EmitTextResult(const v1::ToolRequest& req, const std::string& text, v1::ToolResult result);
  void FinishRun();
  // The read-only view for commands that only read: made at the first,
  // made again where it no longer masks what it masked.
  StatusOr<PreparedOverlay*> ReadOnlyView();
  // Answers a command sent to the read-only view that it cannot run there
  // (no view, or it cannot be made): not run, no_read_only_view set.
  void RefuseReadOnlyView(const v1::ToolRequest& req, const Status& why);
  // Starts spec over an overlay it makes as it starts (none prepared).
  StatusOr<std::unique_ptr<CommandRun>> StartOverOverlay(const v1::ToolRequest& req, CommandSpec spec);

  const WorkerOptions& o_;
  Clock* clock_;
  WorkerChannel* channel_ = nullptr;

  // The request being run, if any.
  std::unique_ptr<CommandRun> run_;
  v1::ToolRequest request_;
  std::string execution_id_;
  uint64_t stream_limit_ = 0;  // 0: stream everything
  uint64_t streamed_ = 0;
  // For the search tools: rg's output, kept rather than streamed.
  bool capturing_ = false;
  std::string captured_out_, captured_err_;
  bool captured_truncated_ = false;
  std::string rg_path_;
  // IndexParse's parsers, made at its first call.
  std::unique_ptr<index::Extractor> extractor_;
  // For a hook: its stdout and stderr apart (capped), besides the stream.
  bool hook_ = false;
  // The sandbox's mounts to make again over the overlay; unset: no overlay.
  std::optional<std::string> overlay_mounts_;
  // The running command's overlay plan, where it made its own (its child
  // reads it before exec).
  std::optional<WorkspaceOverlayPlan> overlay_plan_;
  // The last command's overlay directory, still locked (shared) until our
  // next request: by then the coordinator holds it too (it locks it as the
  // result arrives, before it can send us another), so a sweep, a resume
  // or doctor never finds a live command's writes unheld.
  UniqueFd finished_lock_;
  // Makes the next command's overlay while this one runs, and lets go of
  // used ones, on a thread of its own. Null: commands make their overlay
  // as they start (the first one made at our start could not be joined).
  std::unique_ptr<OverlayKeeper> keeper_;
  // The one the running (or last) command joined. We hold its namespaces
  // until its result is out: the last to let go of a mount namespace
  // unmounts its tree, and a command exiting as the last would do it before
  // the kernel tells us it ended.
  std::unique_ptr<PreparedOverlay> joined_overlay_;
  // What commands that only read run in (ReadOnlyView); null until the
  // first. view_usable_: the Hello offers it (ReadOnlyViewKeepsMasks).
  std::unique_ptr<PreparedOverlay> read_only_view_;
  bool view_usable_ = false;
  int join_failures_ = 0;  // in a row, where an overlay of the command's own then did
  // Whether the running command runs over an overlay.
  bool over_overlay_ = false;
  // This worker's own seccomp filter lets mount, unshare and setns through (for
  // the overlay): nothing it starts may keep that, overlay or not.
  bool relaxed_filter_ = false;
  std::string hook_out_, hook_err_;
};

void Worker::OnOutput(OutputStreamId stream, std::string_view data) {
  if (capturing_) {
    std::string& into = stream == OutputStreamId::kStdout ? captured_out_ : captured_err_;
    size_t cap = stream == OutputStreamId::kStdout ? kMaxRgOutputBytes : 64 * 1024;
    if (into.size() + data.size() > cap) {
      into.append(data.substr(0, cap - std::min(cap, into.size())));
      if (stream == OutputStreamId::kStdout && !captured_truncated_) {
        captured_truncated_ = true;
        run_->Cancel(CommandRun::CancelKind::kUser, Duration::zero());  // enough: stop rg
      }
      return;
    }
    into.append(data);
    return;
  }
  if (hook_) {
    std::string& into = stream == OutputStreamId::kStdout ? hook_out_ : hook_err_;
    size_t cap = stream == OutputStreamId::kStdout ? kHookStdoutCapBytes : kHookStderrCapBytes;
    into.append(data.substr(0, cap - std::min(cap, into.size())));
  }
  if (stream_limit_ != 0) {
    if (streamed_ >= stream_limit_) return;
    data = data.substr(0, static_cast<size_t>(std::min<uint64_t>(data.size(), stream_limit_ - streamed_)));
  }
  streamed_ += data.size();
  v1::Envelope env;
  v1::ToolProgress* p = env.mutable_tool_progress();
  p->set_execution_id(execution_id_);
  p->mutable_output()->set_stream(static_cast<v1::OutputStream>(stream));
  p->mutable_output()->set_data(data.data(), data.size());
  channel_->Queue(std::move(env));
}

void Worker::EmitTextResult(const v1::ToolRequest& req, const std::string& text, v1::ToolResult result) {
  execution_id_ = req.execution_id();
  stream_limit_ = req.stream_limit_bytes();
  streamed_ = 0;
  OutputCapture capture(req.output_head_bytes(), req.output_tail_bytes());
  capture.Append(text);
  for (size_t pos = 0; pos < text.size(); pos += 64 * 1024) {
    OnOutput(OutputStreamId::kStdout, std::string_view(text).substr(pos, 64 * 1024));
  }
  result.set_execution_id(req.execution_id());
  result.set_output_head(capture.head());
  result.set_output_tail(capture.tail());
  result.set_output_total_bytes(capture.total());
  channel_->QueueResult(std::move(result));
}

void Worker::StartRequest(const v1::ToolRequest& req) {
  v1::ToolResult result;
  result.set_execution_id(req.execution_id());
  auto reject = [&](const Status& why) {
    EmitTextResult(req, FailResult(&result, v1::TOOL_STATUS_ERROR, why), std::move(result));
  };
  if (run_ != nullptr) {
    // A protocol slip by the coordinator: answer it without touching the
    // call that is running.
    FailResult(&result, v1::TOOL_STATUS_ERROR, Status::FailedPrecondition("worker " + o_.worker_id, "is busy"));
    return channel_->QueueResult(std::move(result));
  }
  finished_lock_.reset();
  // What runs is what the typed input is (tools/tool_input.h): the tool's
  // name is only what messages call it.
  using Kind = v1::ToolInput::KindCase;
  const Kind kind = req.input().kind_case();
  if (kind == Kind::kRead || kind == Kind::kWrite || kind == Kind::kEdit || kind == Kind::kEditSymbol) {
    // Bounded work (files are at most kMaxFileBytes): done right here, after
    // a heartbeat, so the whole liveness window is available for it.
    channel_->HeartbeatNow();
    SteadyTime start = clock_->Now();
    std::string text = RunFileTool(req, o_.workspace, &result);
    result.set_duration_us(
        static_cast<uint64_t>(std::chrono::duration_cast<microseconds>(clock_->Now() - start).count()));
    return EmitTextResult(req, text, std::move(result));
  }
  if (kind == Kind::kIndexParse) {
    // Bounded too: the coordinator sends batches of a few megabytes.
    channel_->HeartbeatNow();
    if (!extractor_) extractor_ = std::make_unique<index::Extractor>();
    SteadyTime start = clock_->Now();
    SteadyTime beat = start;
    auto tick = [&] {
      SteadyTime now = clock_->Now();
      if (now - beat < milliseconds(200)) return;
      beat = now;
      channel_->HeartbeatNow();
    };
    std::string text = RunIndexParse(req, o_.workspace, extractor_.get(), tick, &result);
    result.set_duration_us(
        static_cast<uint64_t>(std::chrono::duration_cast<microseconds>(clock_->Now() - start).count()));
    return EmitTextResult(req, text, std::move(result));
  }
  if (kind == Kind::kGrep || kind == Kind::kGlob || kind == Kind::kLs) {
    if (rg_path_.empty()) {
      const char* path = getenv("PATH");
      rg_path_ = SearchPath("rg", path ? path : "");
    }
    if (rg_path_.empty()) return reject(Status::Unavailable(req.tool(), "ripgrep (rg) is not installed"));
    StatusOr<std::vector<std::string>> argv = PlanSearch(req, o_.workspace, rg_path_);
    if (!argv.ok()) return reject(argv.status());
    return StartCommand(req, std::move(*argv));
  }
  if (kind == Kind::kHook) return StartHook(req);
  if (kind != Kind::kCommand) return reject(Status::NotFound("no tool of this worker runs '" + req.tool() + "'"));
  StartCommand(req, {});
}

void Worker::StartHook(const v1::ToolRequest& req) {
  v1::ToolResult result;
  result.set_execution_id(req.execution_id());
  if (!req.input().has_hook()) {
    return EmitTextResult(req, FailResult(&result, v1::TOOL_STATUS_ERROR, MissingInput(req.tool())), std::move(result));
  }
  const std::string& input = req.input().hook().stdin_text();
  StatusOr<CommandSpec> spec = HookSpecOf(req.input().hook().command(), o_.workspace);
  if (!spec.ok())
    return EmitTextResult(req, FailResult(&result, v1::TOOL_STATUS_ERROR, spec.status()), std::move(result));
  // The input waits in a memory file: the hook reads it when it likes, and
  // a hook that never reads it cannot stall us on a full pipe.
  UniqueFd in(static_cast<int>(syscall(SYS_memfd_create, "hook-input", MFD_CLOEXEC)));
  if (!in.valid()) {
    return EmitTextResult(req, FailResult(&result, v1::TOOL_STATUS_ERROR, PosixError("memfd_create", errno)),
                          std::move(result));
  }
  if (Status written = WriteAll(in.get(), input, "hook input"); !written.ok()) {
    return EmitTextResult(req, FailResult(&result, v1::TOOL_STATUS_ERROR, written), std::move(result));
  }
  lseek(in.get(), 0, SEEK_SET);
  spec->stdin_fd = in.get();
  spec->env = CurrentEnvironment();
  spec->env.push_back("ODIN_PROJECT_DIR=" + o_.workspace);
  spec->env.push_back("CLAUDE_PROJECT_DIR=" + o_.workspace);
  hook_ = true;
  hook_out_.clear();
  hook_err_.clear();
  StartSpec(req, std::move(*spec), false);
}

void Worker::StartCommand(const v1::ToolRequest& req, std::vector<std::string> argv_override) {
  v1::ToolResult result;
  result.set_execution_id(req.execution_id());
  CommandSpec spec;
  bool capture = !argv_override.empty();
  if (capture) {
    spec.argv = std::move(argv_override);
    spec.cwd = o_.workspace;
  } else {
    StatusOr<CommandSpec> parsed = req.input().has_command()
                                       ? CommandSpecOf(ArgsOf(req.input().command()), o_.workspace)
                                       : StatusOr<CommandSpec>(MissingInput(req.tool()));
    if (!parsed.ok()) {
      return EmitTextResult(req, FailResult(&result, v1::TOOL_STATUS_ERROR, parsed.status()), std::move(result));
    }
    spec = std::move(*parsed);
    if (req.read_only_view() && !view_usable_) return RefuseReadOnlyView(req, Status::OK());
    if (req.needs_overlay() && !overlay_mounts_) {
      // It would write into the workspace itself, beside other commands or
      // past the protected paths' snapshot it was sent without.
      return EmitTextResult(
          req,
          FailResult(&result, v1::TOOL_STATUS_ERROR,
                     Status::FailedPrecondition("command",
                                                "not run: it was sent to run over a workspace "
                                                "overlay, which this worker has not; ask for it again")),
          std::move(result));
    }
  }
  spec.env = CurrentEnvironment();
  StartSpec(req, std::move(spec), capture);
}

void Worker::StartSpec(const v1::ToolRequest& req, CommandSpec spec, bool capture) {
  v1::ToolResult result;
  result.set_execution_id(req.execution_id());
  const v1::ResourceLimits& l = req.limits();
  spec.limits = {l.cpu_seconds(), l.address_space_bytes(), l.file_size_bytes(), l.open_files(), l.processes()};
  // A command or hook that may write runs over the workspace overlay, so
  // what it writes waits in its upper directory for the coordinator.
  // (Searches only read.) No overlay, no command: a failed plan fails it.
  overlay_plan_.reset();
  StatusOr<std::unique_ptr<CommandRun>> run = Status::Internal("not started");
  // The last command's namespaces go once this one has started.
  std::unique_ptr<PreparedOverlay> last_joined = std::move(joined_overlay_);
  if (req.read_only_view() && !capture) {
    // Nothing to track: no overlay is used up, and the prepared one waits
    // for a command that can write.
    StatusOr<PreparedOverlay*> view = ReadOnlyView();
    if (!view.ok()) {
      joined_overlay_ = std::move(last_joined);  // still ours until a command runs
      return RefuseReadOnlyView(req, view.status());
    }
    spec.before_exec = PreparedOverlay::Join;
    spec.before_exec_arg = *view;
    spec.keep_fds = (*view)->fds();
    run = CommandRun::Start(spec, req.output_head_bytes(), req.output_tail_bytes(), clock_);
  } else if (overlay_mounts_ && !capture) {
    result.set_overlay(true);
    // (A prepared overlay whose bound files, or directories above its
    // mounts, were replaced since is not used: the command would see them
    // as they were.)
    std::unique_ptr<PreparedOverlay> prepared;
    if (keeper_ != nullptr) prepared = keeper_->Take();
    if (prepared != nullptr) {
      if (Status claimed = prepared->Claim(req.execution_id()); !claimed.ok()) {
        fprintf(stderr, "odin-worker: the prepared overlay is not used: %s\n", claimed.ToString().c_str());
        keeper_->Release(std::move(prepared));
      }
    }
    if (prepared != nullptr) {
      spec.before_exec = PreparedOverlay::Join;
      spec.before_exec_arg = prepared.get();
      spec.keep_fds = prepared->fds();
      run = CommandRun::Start(spec, req.output_head_bytes(), req.output_tail_bytes(), clock_);
      if (run.ok()) {
        joined_overlay_ = std::move(prepared);
        join_failures_ = 0;
      } else {
        // The namespaces (and the overlay) go first, then its directories.
        std::string dir = prepared->dir();
        prepared.reset();  // also the fds keep_fds names
        spec.keep_fds.clear();
        RemoveWorkspaceOverlayDirs(dir);
        // Nothing ran. Once more over an overlay of its own: if that
        // starts it, joining was what failed (or something passing), and
        // after a few such in a row no more are prepared.
        if (run.status().code() != StatusCode::kNotFound) {
          Status joining = run.status();
          run = StartOverOverlay(req, std::move(spec));
          if (run.ok() && ++join_failures_ >= kPrepareOverlayTries) {
            fprintf(stderr, "odin-worker: commands make their overlay as they start: %s\n", joining.ToString().c_str());
            keeper_->StopPreparing();
          }
        }
      }
    } else {
      run = StartOverOverlay(req, std::move(spec));
    }
    // Nothing ran (not found, or no overlay for it: our start found the
    // overlay works, so the Hello promised one and the coordinator did not look at
    // the tree, and the command does not run without; the model may try
    // again): nothing in its directories to apply, which are gone.
    if (!run.ok()) result.set_overlay(false);
  } else {
    if (relaxed_filter_) spec.before_exec = DenyMountsBeforeExec;
    run = CommandRun::Start(spec, req.output_head_bytes(), req.output_tail_bytes(), clock_);
  }
  // The next command's overlay is made while this one runs (or at once,
  // if this one did not start), unless none is coming.
  if (keeper_ != nullptr) {
    keeper_->Release(std::move(last_joined));
    if (!req.last_command()) keeper_->Prepare();
  }
  if (!run.ok()) {
    // Shell conventions: 127 not found, 126 found but not executable.
    FailResult(&result, v1::TOOL_STATUS_ERROR, run.status());
    result.set_has_exit_code(true);
    result.set_exit_code(run.status().code() == StatusCode::kNotFound ? 127 : 126);
    hook_ = false;
    return channel_->QueueResult(std::move(result));
  }
  run_ = std::move(*run);
  over_overlay_ = result.overlay();
  capturing_ = capture;
  request_ = req;
  execution_id_ = req.execution_id();
  stream_limit_ = req.stream_limit_bytes();
  streamed_ = 0;
  captured_out_.clear();
  captured_err_.clear();
  captured_truncated_ = false;
  v1::Envelope env;
  env.mutable_tool_progress()->set_execution_id(execution_id_);
  env.mutable_tool_progress()->set_started_pgid(run_->pgid());
  channel_->Queue(std::move(env));
  // Out now: the coordinator needs the group id if the command kills us.
  channel_->Flush();
}

void Worker::RefuseReadOnlyView(const v1::ToolRequest& req, const Status& why) {
  v1::ToolResult result;
  result.set_execution_id(req.execution_id());
  result.set_no_read_only_view(true);
  Status refused = Status::FailedPrecondition("command", "not run: this worker has no read-only view of the workspace" +
                                                             (why.ok() ? std::string() : " (" + why.ToString() + ")") +
                                                             "; ask for it again");
  fprintf(stderr, "odin-worker: %s\n", refused.ToString().c_str());
  EmitTextResult(req, FailResult(&result, v1::TOOL_STATUS_ERROR, refused), std::move(result));
}

StatusOr<PreparedOverlay*> Worker::ReadOnlyView() {
  if (read_only_view_ != nullptr && !read_only_view_->Fresh()) read_only_view_.reset();
  if (read_only_view_ == nullptr) {
    ASSIGN_OR_RETURN(read_only_view_, PreparedOverlay::MakeReadOnlyView(o_.workspace, *overlay_mounts_));
  }
  return read_only_view_.get();
}

StatusOr<std::unique_ptr<CommandRun>> Worker::StartOverOverlay(const v1::ToolRequest& req, CommandSpec spec) {
  ASSIGN_OR_RETURN(WorkspaceOverlayPlan plan, PlanWorkspaceOverlay(o_.workspace, req.execution_id(), *overlay_mounts_));
  overlay_plan_ = std::move(plan);
  spec.before_exec = EnterWorkspaceOverlay;
  spec.before_exec_arg = &*overlay_plan_;
  StatusOr<std::unique_ptr<CommandRun>> run =
      CommandRun::Start(spec, req.output_head_bytes(), req.output_tail_bytes(), clock_);
  if (!run.ok()) {
    RemoveWorkspaceOverlayDirs(DirName(overlay_plan_->upper));
    overlay_plan_.reset();
  }
  return run;
}

void Worker::FinishRun() {
  v1::ToolResult result;
  result.set_execution_id(execution_id_);
  run_->FillResult(&result);
  run_.reset();
  if (over_overlay_) result.set_overlay(true);
  over_overlay_ = false;
  if (overlay_plan_) finished_lock_ = std::move(overlay_plan_->lock);
  if (joined_overlay_ != nullptr) finished_lock_ = joined_overlay_->TakeLock();
  overlay_plan_.reset();
  if (hook_) {
    hook_ = false;
    using nlohmann::json;
    result.set_output_json(
        json({{"stdout", hook_out_}, {"stderr", hook_err_}}).dump(-1, ' ', false, json::error_handler_t::replace));
    hook_out_.clear();
    hook_err_.clear();
  }
  if (!capturing_) {
    channel_->QueueResult(std::move(result));
    return;
  }
  capturing_ = false;
  // A search that was stopped (timeout, cancel) ends as such; one that
  // finished, or that we stopped for producing too much, gets formatted.
  bool stopped = result.status() == v1::TOOL_STATUS_TIMED_OUT ||
                 (result.status() == v1::TOOL_STATUS_CANCELLED && !captured_truncated_);
  if (stopped) {
    channel_->QueueResult(std::move(result));
    return;
  }
  v1::ToolResult formatted;
  formatted.set_duration_us(result.duration_us());
  std::string text = FinishSearch(request_, o_.workspace, captured_out_, captured_err_,
                                  captured_truncated_ ? 0 : result.exit_code(), captured_truncated_, &formatted);
  captured_out_.clear();
  captured_err_.clear();
  EmitTextResult(request_, text, std::move(formatted));
}

void Worker::Handle(const v1::Envelope& env) {
  switch (env.body_case()) {
    case v1::Envelope::kToolRequest: StartRequest(env.tool_request()); break;
    case v1::Envelope::kCancel:
      if (run_ != nullptr && env.cancel().execution_id() == execution_id_) {
        CommandRun::CancelKind kind = CommandRun::CancelKind::kUser;
        if (env.cancel().reason() == v1::CANCEL_REASON_TIMEOUT) kind = CommandRun::CancelKind::kTimeout;
        if (env.cancel().reason() == v1::CANCEL_REASON_BUDGET) kind = CommandRun::CancelKind::kBudget;
        run_->Cancel(kind, milliseconds(env.cancel().kill_grace_ms()));
      }
      break;
    default: spdlog::warn("ignoring unexpected message {}", static_cast<int>(env.body_case()));
  }
}

void Worker::AddWatchFds(std::vector<PollFd>* fds) {
  if (run_ != nullptr) run_->AddWatchFds(capturing_ || channel_->outbox_empty(), fds);
}

SteadyTime Worker::NextTimer() const {
  if (run_ == nullptr) return SteadyTime::max();
  return run_->NextTimer().value_or(SteadyTime::max());
}

void Worker::Service() {
  if (run_ == nullptr) return;
  // A search keeps rg's output, so it reads whether or not the outbox is
  // clear; a command streams, so it reads only when it is.
  run_->Service(capturing_ || channel_->outbox_empty(), this);
  if (run_->done()) {
    FinishRun();
    channel_->Flush();
    // The result is on its way: the joined namespaces may go.
    if (keeper_ != nullptr) keeper_->Release(std::move(joined_overlay_));
  }
}

void Worker::Stop() {
  if (run_ != nullptr) run_->KillNow();
  // The keeper's thread first (the child making an overlay is one of our
  // descendants), then what it holds: namespaces, and the unclaimed
  // overlay's directories.
  if (keeper_ != nullptr) keeper_->Release(std::move(joined_overlay_));
  keeper_.reset();
  KillAllDescendants();
}

}  // namespace

int RunToolWorker(const WorkerOptions& options, Clock* clock) {
  // Orphans of the commands we run come back to us, so we can kill them.
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  Worker worker(options, clock);
  WorkerHello hello{v1::WORKER_KIND_TOOL,
                    {kExecuteCommandTool, kLsTool, kGlobTool, kGrepTool, kReadTool, kWriteFileTool, kEditTool,
                     kMultiEditTool, kHookTool}};
  for (std::string& c : worker.OverlayCapabilities()) hello.capabilities.push_back(std::move(c));
  return RunWorkerLoop(options, hello, clock, &worker);
}

}  // namespace odin
