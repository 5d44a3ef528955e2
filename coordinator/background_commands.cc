// Background commands: ExecuteCommand with run_in_background, and the
// CommandOutput and StopCommand calls that read and end them (the
// coordinator's side; BackgroundJobs keeps their state).
//
// A background command passes the same gates as any command, then runs in a
// tool worker of its own (WorkerPolicy::kBackground: the workspace writable
// with no overlay, the protected paths read-only, the edit mode's network
// namespace), with no deadline. Its caller is answered once the worker says
// the process started; the execution's end is recorded when it ends, which
// answers whoever waits for it (CommandOutput with wait_seconds,
// StopCommand).
//
// An overlay cannot be applied while the command writes, so what it writes
// lands in the workspace as it writes it, and the change tracker finds it:
// at each call boundary (RecordExternal), what changed by no call while
// background commands run is recorded as the newest one's mutations (its
// execution id, validated like a command's changes, undoable with it), and
// its last changes when it ends. Every agent's cache hears of each such
// path then.
//
// A background command never outlives the session: each one stops when its
// agent's message is cancelled, when an ask or plan request starts, and when
// the session ends (EndBackgroundCommands); its worker's sandbox is its own
// pid namespace, which dies with the worker, and the worker with odin.

#include <algorithm>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "base/file_util.h"
#include "base/ids.h"
#include "coordinator/coordinator.h"
#include "odin/v1/worker.pb.h"
#include "tools/exec_command.h"
#include "tools/workspace_path.h"
#include "workspace/overlay_changes.h"
#include "workspace/protected_paths.h"

namespace odin {

using nlohmann::json;

namespace {

// What CommandOutput shows of the output at a time (the newest part).
constexpr size_t kOutputShownBytes = 30000;
// How long StopCommand waits for the command's end (the pool kills it
// within its grace periods, well before).
constexpr auto kStopWait = std::chrono::seconds(30);
constexpr double kMaxWaitSeconds = 300;

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// The job an id names, from {"id": ...} (and wait_seconds, for CommandOutput).
// waits: wait_seconds may be given (CommandOutput).
Status JobArgs(const std::string& tool, const json& args, bool waits, std::string* id, double* wait_seconds) {
  if (!args.is_object()) return Status::InvalidArgument(tool, "arguments must be a JSON object");
  for (const auto& [key, value] : args.items()) {
    if (key != "id" && !(waits && key == "wait_seconds")) {
      return Status::InvalidArgument(tool, "unknown argument \"" + key + "\"");
    }
  }
  if (!args.contains("id") || !args["id"].is_string() || args["id"].get<std::string>().empty()) {
    return Status::InvalidArgument(tool, "\"id\" must be the id ExecuteCommand returned");
  }
  *id = args["id"].get<std::string>();
  if (args.contains("wait_seconds")) {
    const json& w = args["wait_seconds"];
    if (!w.is_number() || w.get<double>() < 0 || w.get<double>() > kMaxWaitSeconds) {
      return Status::InvalidArgument(tool, "\"wait_seconds\" must be a number from 0 to 300");
    }
    *wait_seconds = w.get<double>();
  }
  return Status::OK();
}

std::string CommandText(const json& args) {
  StatusOr<CommandArgs> a = CommandArgsOf(args);
  if (!a.ok()) return "";
  if (!a->script.empty()) return a->script;
  std::string out;
  for (const std::string& w : a->argv) out += (out.empty() ? "" : " ") + w;
  return out;
}

std::string Seconds(int64_t ms) { return std::to_string(std::max<int64_t>(ms, 0) / 1000) + " s"; }

// Whether a command may not change rel (relative to the workspace): a
// protected name anywhere, or inside a .git, one of git's control files
// (objects and refs are git's ordinary work).
bool ProtectedForCommands(const std::string& rel, const std::string& workspace) {
  for (size_t at = 0;;) {
    size_t slash = rel.find('/', at);
    std::string_view part(rel.data() + at, (slash == std::string::npos ? rel.size() : slash) - at);
    if (part == ".git") return slash == std::string::npos || IsGitControlPath(std::string_view(rel).substr(slash + 1));
    if (slash == std::string::npos) break;
    at = slash + 1;
  }
  return IsProtectedPath(JoinPath(workspace, rel), workspace);
}

}  // namespace

Status Coordinator::BackgroundAllowed(const Call& c) const {
  const char* what = "run_in_background";
  if (o_.max_background <= 0) {
    return Status::PermissionDenied(what, "background commands are off here (commands.max_background is 0)");
  }
  // A client of odin mcp serve has no CommandOutput or StopCommand to call.
  if (o_.session_kind == "mcp") {
    return Status::PermissionDenied(what, "odin mcp serve runs each command to its end");
  }
  if (c.call.mode != CallMode::kEdit) {
    return Status::PermissionDenied(
        what, *c.call.mode == CallMode::kExec
                  ? std::string("odin exec runs one command and ends: nothing may run past it")
                  : std::string("background commands run only in edit mode; this is ") + CallModeName(*c.call.mode) +
                        " mode");
  }
  // Those running, and those on their way (past the gates, not yet at a
  // worker: not in the table yet).
  size_t starting = 0;
  for (const auto& [id, call] : calls_) {
    if (call.background && &call != &c && jobs_.Find(id) == nullptr) ++starting;
  }
  size_t running = jobs_.Running().size() + starting;
  if (running >= static_cast<size_t>(o_.max_background)) {
    return Status::ResourceExhausted(
        what, std::to_string(running) + " background commands run already, the most at once " +
                  "(commands.max_background): end one with StopCommand first, or run this one in the foreground");
  }
  return Status::OK();
}

void Coordinator::StartBackground(Call& c) {
  // No deadline, and all of its output streamed (BackgroundJobs keeps the
  // newest part).
  c.request.timeout = Duration::zero();
  c.request.stream_limit_bytes = 0;
  jobs_.Add(c.call.execution_id, c.call.agent_id, c.args ? CommandText(*c.args) : "", clock_->WallMillis());
}

void Coordinator::AnswerBackgroundStart(Call& c) {
  c.answered = true;
  const std::string id = c.call.execution_id;
  const BackgroundJob* job = jobs_.Find(id);
  RecordGateEvent(c.call.agent_id, "", "background_started", id,
                  Dump({{"command", job != nullptr ? job->command : ""}, {"running", jobs_.Running().size()}}));
  v1::ToolResult r;
  r.set_execution_id(id);
  r.set_status(v1::TOOL_STATUS_OK);
  std::string text = "Started in the background as " + id + ". CommandOutput {\"id\": \"" + id +
                     "\"} shows what it prints and whether it still runs; StopCommand ends it. It ends with the "
                     "session at the latest. What it writes is recorded as this command's changes.\n";
  r.set_output_head(text);
  r.set_output_total_bytes(text.size());
  r.set_output_json(Dump({{"background_id", id}, {"status", "running"}}));
  // Answered once; its end is the job's (Deliver).
  std::function<void(const v1::ToolResult&, const Status&)> done = std::move(c.handlers.on_done);
  c.handlers.on_done = nullptr;
  c.handlers.on_progress = nullptr;
  if (done) done(r, Status::OK());
}

bool Coordinator::EndBackground(const Call& c, const v1::ToolResult& r) {
  const std::string id = c.call.execution_id;
  const BackgroundJob* job = jobs_.Find(id);
  std::string how;
  switch (r.status()) {
    case v1::TOOL_STATUS_OK:
    case v1::TOOL_STATUS_ERROR:
      how = r.exit_code() >= 128 && r.exit_code() < 160 ? "killed by signal " + std::to_string(r.exit_code() - 128)
                                                        : "exited " + std::to_string(r.exit_code());
      if (!c.answered && r.has_error()) how = "failed to start: " + r.error().message();
      break;
    case v1::TOOL_STATUS_CANCELLED:
      how = job != nullptr && !job->stopping.empty() ? "stopped (" + job->stopping + ")" : "stopped";
      break;
    case v1::TOOL_STATUS_CRASHED: how = "ended with its worker"; break;
    case v1::TOOL_STATUS_TIMED_OUT: how = "timed out"; break;
    default: how = r.has_error() ? "refused: " + r.error().message() : "ended"; break;
  }
  std::vector<std::string> paths;
  for (const v1::FileChange& fc : r.changes()) paths.push_back(fc.path());
  jobs_.Changed(id, paths);
  jobs_.End(id, how, r.exit_code());
  if (c.answered) spdlog::info("background command {} {}", id, how);
  for (const std::string& waiter : jobs_.TakeWaiters(id)) AnswerJobWaiter(waiter);
  return c.answered;
}

bool Coordinator::RecordBackgroundChanges(const ChangeSet& found) {
  const std::string job = jobs_.NewestRunning();
  if (job.empty()) return false;
  auto it = calls_.find(job);
  if (it == calls_.end()) return false;
  Call& c = it->second;
  ChangeSet changes = found;
  // Its sandbox binds the protected paths that existed when its worker
  // started read-only; what it made or changed of them since (a git
  // control file, an instructions file anywhere) is put back now, not when
  // it ends, and it is stopped.
  std::string touched;
  for (const PathChange& pc : changes.changes) {
    if (ProtectedForCommands(pc.path, o_.workspace)) touched = pc.path;
  }
  if (!touched.empty()) {
    v1::ToolResult as_if_ended;
    as_if_ended.set_execution_id(job);
    std::optional<v1::ToolResult> amended;
    std::set<std::string> put_back = PutBackProtected(c, as_if_ended, &amended);
    EraseChangesUnder(put_back, &changes);
    RecordGateEvent(
        c.call.agent_id, "", "background_protected", job,
        Dump({{"path", touched}, {"put_back", std::vector<std::string>(put_back.begin(), put_back.end())}}));
    StopBackgroundCommand(job, "it changed the protected path " + touched);
  }
  for (const auto& [dir, count] : changes.ignored) changes_.IgnoredDir(dir);
  std::vector<ChangedFile> files = RecordChanges(job, c.call.agent_id, "command", changes, nullptr);
  std::vector<std::string> paths;
  for (const PathChange& pc : changes.changes) paths.push_back(JoinPath(o_.workspace, pc.path));
  jobs_.Changed(job, paths);
  json running = json::array();
  for (const BackgroundJob* j : jobs_.Running()) running.push_back(j->id);
  json shown = json::array();
  for (size_t i = 0; i < paths.size() && i < 50; ++i) shown.push_back(paths[i]);
  RecordGateEvent(
      c.call.agent_id, "", "background_changes", job,
      Dump(
          {{"paths", shown}, {"count", paths.size()}, {"ignored_dirs", changes.ignored.size()}, {"running", running}}));
  if (!o_.validation.enabled) return true;
  // Validated like a command's changes; their verdicts are the session's
  // (Blocking), with nobody's result to ride on.
  size_t limit = o_.validation.max_files_per_command;
  for (ChangedFile& f : files) {
    if (f.unvalidatable || limit == 0) continue;
    --limit;
    CheckChangedFile(f, c.call.agent_id, c.call.mode, job, /*validates_command=*/false);
  }
  return true;
}

const BackgroundJob* Coordinator::JobOfCall(Call& c, double* wait_seconds) {
  const std::string id = c.call.execution_id;
  std::string job;
  if (Status s = JobArgs(c.call.tool, *c.args, wait_seconds != nullptr, &job, wait_seconds); !s.ok()) {
    EndHere(id, v1::TOOL_STATUS_ERROR, s);
    return nullptr;
  }
  const BackgroundJob* j = jobs_.Find(job);
  Status allowed;
  if (c.call.mode != CallMode::kEdit) {
    allowed = Status::PermissionDenied(c.call.tool, "background commands are edit mode's; this is " +
                                                        std::string(CallModeName(*c.call.mode)) + " mode");
  } else if (j != nullptr && c.call.agent_id != o_.agent_id && c.call.agent_id != "main" &&
             c.call.agent_id != j->agent_id) {
    // A subagent reaches its own; the main agent every one.
    allowed = Status::PermissionDenied(c.call.tool, "background command " + job + " is another agent's");
  }
  if (!allowed.ok()) {
    EndHere(id, v1::TOOL_STATUS_REJECTED, allowed);
    return nullptr;
  }
  if (j == nullptr) {
    std::string running;
    for (const BackgroundJob* r : jobs_.Running()) running += (running.empty() ? "" : ", ") + r->id;
    EndHere(id, v1::TOOL_STATUS_ERROR,
            Status::NotFound("background command " + job, running.empty()
                                                              ? "no background command runs in this session"
                                                              : "not one of this session's; running: " + running));
    return nullptr;
  }
  c.waits_for_job = job;
  return j;
}

void Coordinator::RunCommandOutput(const std::string& id) {
  double wait = 0;
  const BackgroundJob* j = JobOfCall(calls_[id], &wait);
  if (j == nullptr) return;
  if (j->running && wait > 0) {
    auto ms = std::chrono::milliseconds(static_cast<int64_t>(wait * 1000));
    return jobs_.Wait(j->id, id, clock_->Now() + ms);
  }
  AnswerJobWaiter(id);
}

void Coordinator::RunStopCommand(const std::string& id) {
  const BackgroundJob* j = JobOfCall(calls_[id], nullptr);
  if (j == nullptr) return;
  if (!j->running) return AnswerJobWaiter(id);
  std::string job = j->id;
  jobs_.Wait(job, id, clock_->Now() + kStopWait);
  StopBackgroundCommand(job, "StopCommand");
}

void Coordinator::AnswerJobWaiter(const std::string& waiter) {
  auto it = calls_.find(waiter);
  if (it == calls_.end()) return;
  const std::string job = it->second.waits_for_job;
  const BackgroundJob* j = jobs_.Find(job);
  if (j == nullptr)
    return EndHere(waiter, v1::TOOL_STATUS_ERROR, Status::NotFound("background command " + job, "gone"));
  int64_t now = clock_->WallMillis();
  std::string text = job + " `" + j->command + "`: ";
  text += j->running ? "running for " + Seconds(now - j->started_at_ms) : j->ended;
  text += ".\n";
  if (!j->changed.empty()) {
    text += "Files it changed:";
    for (size_t i = 0; i < j->changed.size() && i < 20; ++i) text += " " + DisplayPath(j->changed[i], o_.workspace);
    if (j->changed.size() > 20) text += " and " + std::to_string(j->changed.size() - 20) + " more";
    text += "\n";
  }
  BackgroundJobs::Unread unread = jobs_.TakeUnread(job, kOutputShownBytes);
  if (unread.text.empty() && unread.skipped == 0) {
    text += "No new output.\n";
  } else {
    text += "New output";
    if (unread.skipped > 0) text += " (" + std::to_string(unread.skipped) + " earlier bytes not shown)";
    text += ":\n" + unread.text;
    if (!unread.text.empty() && unread.text.back() != '\n') text += "\n";
  }
  EndHere(waiter, v1::TOOL_STATUS_OK, Status::OK(), text);
}

void Coordinator::AnswerDueJobWaiters() {
  for (const auto& [job, waiter] : jobs_.TakeDue(clock_->Now())) {
    auto it = calls_.find(waiter);
    // StopCommand past its wait: the command did not end in time.
    if (it != calls_.end() && it->second.handler() == ToolHandler::kStopCommand) {
      EndHere(waiter, v1::TOOL_STATUS_ERROR,
              Status::DeadlineExceeded("background command " + job, "did not end within 30 s of being stopped"));
      continue;
    }
    AnswerJobWaiter(waiter);
  }
}

bool Coordinator::StopBackgroundCommand(const std::string& id, const std::string& why) {
  const BackgroundJob* j = jobs_.Find(id);
  if (j == nullptr || !j->running) return false;
  if (!j->stopping.empty()) return true;  // on its way
  jobs_.Stopping(id, why);
  RecordGateEvent(j->agent_id, "", "background_stop", id, Dump({{"why", why}}));
  pool_.Cancel(id, v1::CANCEL_REASON_USER);
  return true;
}

void Coordinator::StopBackgroundCommands(const std::string& why) {
  std::vector<std::string> ids;
  for (const BackgroundJob* j : jobs_.Running()) ids.push_back(j->id);
  for (const std::string& id : ids) StopBackgroundCommand(id, why);
}

void Coordinator::EndBackgroundCommands(const std::string& why, Duration wait) {
  if (jobs_.Running().empty() || shut_down_) return;
  StopBackgroundCommands(why);
  SteadyTime deadline = clock_->Now() + wait;
  while (!jobs_.Running().empty() && clock_->Now() < deadline) {
    Status polled = Poll(std::chrono::milliseconds(50));
    if (!polled.ok()) break;
  }
}

void Coordinator::MessageCancelled(const std::string& agent_id) { StopBackgroundCommands("the message was cancelled"); }

}  // namespace odin
