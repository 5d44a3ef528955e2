#include "coordinator/coordinator.h"
#include "tools/tool_input.h"

// A call's end: the worker's result applied to the file cache and the
// breakers, protected paths put back, the end recorded, a write validated
// (the lsp_check it asks for and its verdict), and the answer delivered.

#include <sys/stat.h>

#include <algorithm>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "base/canonical_json.h"
#include "base/file_util.h"
#include "base/ids.h"
#include "base/json_input.h"
#include "base/subprocess.h"
#include "planner/workflows.h"
#include "planner/budget.h"
#include "ledger/memory_query.h"
#include "coordinator/coordinator_holds.h"
#include "gates/approval_gate.h"
#include "gates/mode_gate.h"
#include "workspace/protected_paths.h"
#include "gates/read_before_edit_gate.h"
#include "gates/validation_gate.h"
#include "tools/tool_catalog.h"
#include "odin/v1/worker.pb.h"
#include "tools/exec_command.h"
#include "tools/file_tool_args.h"
#include "mcp/mcp_client.h"
#include "tools/text_file.h"
#include "tools/workspace_path.h"
#include "tools/tool_result.h"

namespace odin {

using nlohmann::json;

namespace {

json SnapshotJson(const v1::FileSnapshot& s, bool written) {
  json ranges = json::array();
  for (const v1::Segment& seg : s.segments()) ranges.push_back({seg.start_line(), seg.end_line()});
  return {{"path", s.path()},
          {"sha256", s.sha256()},
          {"size", s.size_bytes()},
          {"mtime_ns", s.mtime_ns()},
          {"total_lines", s.total_lines()},
          {"full", s.full()},
          {"ranges", ranges},
          {"written", written}};
}

}  // namespace

// The tool's own structured result, plus what the call did to the file
// cache ("cache"), so a session's caches can be rebuilt from the ledger.
std::string Coordinator::ResultJson(const Call& c, const v1::ToolResult& r) const {
  json out = ParseJson(r.output_json());
  if (!out.is_object()) out = json::object();
  json cache = json::array();
  if (r.status() == v1::TOOL_STATUS_OK) {
    for (const v1::FileSnapshot& s : r.files_read()) cache.push_back(SnapshotJson(s, false));
    if (r.has_file_written()) cache.push_back(SnapshotJson(r.file_written(), true));
  }
  if (!cache.empty()) out["cache"] = cache;
  if (c.handler() == ToolHandler::kCommand &&
      (c.request.policy == WorkerPolicy::kWritable || c.request.policy == WorkerPolicy::kBackground) &&
      o_.commands_network) {
    out["network"] = true;
  }
  // Its writes waited in an overlay and were applied by the coordinator.
  if (r.overlay()) out["overlay"] = true;
  // It ran where it could not write: nothing of it was tracked.
  if (r.read_only_view()) out["read_only_view"] = true;
  return out.empty() ? "" : out.dump(-1, ' ', false, json::error_handler_t::replace);
}

void Coordinator::ApplyToCache(const Call& c, const v1::ToolResult& r) {
  FileCache* cache = Agent(c.call.agent_id).cache.get();
  if (r.status() == v1::TOOL_STATUS_OK) {
    for (const v1::FileSnapshot& s : r.files_read()) {
      cache->RecordRead(s);
      NoteReadForTracking(s);
    }
    if (o_.grounded_edits && c.handler() == ToolHandler::kFileRead && r.files_read_size() > 0) {
      AgentState::Evidence& e = Agent(c.call.agent_id).evidence[c.call.execution_id];
      e.message_id = c.call.message_id;
      e.read = true;
      for (const v1::FileSnapshot& s : r.files_read()) e.files.insert(s.path());
    }
    if (r.has_file_written()) cache->RecordWrite(r.file_written());
  } else if (r.stale_read() && !c.write_path.empty()) {
    // The worker found the file changed since the read: what we hold is stale.
    cache->Invalidate(c.write_path);
  }
}

void Coordinator::OnResult(const v1::ToolResult& r) {
  auto it = calls_.find(r.execution_id());
  if (it == calls_.end()) return;
  Call c = std::move(it->second);
  calls_.erase(it);
  const bool ran = c.started;  // it reached a worker

  if (!c.started) {
    // Ended before reaching a worker (refused by a gate, run here, cancelled
    // in the queue, pool unusable): record a start too, so the ledger shows
    // every call that was asked for.
    Status started =
        ledger_->AddExecutionStart({r.execution_id(), session_id_, c.call.agent_id, c.call.tool, c.call.arguments_json,
                                    CallModeName(*c.call.mode), "", clock_->WallMillis(), c.call.parent_id});
    LogLedgerWriteFailure(started);
    c.started = started.ok();
    c.dispatched_at = clock_->Now();
  }
  ApplyToCache(c, r);
  breakers_.Report(&c.breakers, r, c.call.agent_id);
  // What the coordinator adds to a result before it is recorded: a
  // subagent's report, protected paths a command changed and that were put
  // back. The worker's result is copied only then.
  std::optional<v1::ToolResult> amended;
  if (subagents_.count(r.execution_id()) != 0) {
    amended = r;
    FinishSubagent(r.execution_id(), &*amended);
  }
  // A command run over the workspace overlay: what it wrote waits in its
  // upper directory, which the coordinator finds by the execution id (never
  // by the worker's word) and applies now, before the protected paths are
  // looked at, so that what landed is looked at too.
  // Whether it did is the coordinator's own finding (its upper directory is
  // there), never ToolResult.overlay, which is informational: a worker that
  // died mid-command loses nothing, and one that claims an overlay it never
  // made changes nothing. (One sent to the read-only view has no overlay to
  // apply.)
  std::optional<OverlayApplied> overlay;
  if (!c.request.read_only_view && CanWriteWorkspace(c) &&
      IsDirectory(JoinPath(CommandOverlayRoot(StateDir()), r.execution_id()) + "/u")) {
    overlay = ApplyCommandOverlay(c);
  }
  // Whether it ran in the view is the coordinator's word, never the worker's.
  if (r.read_only_view() != c.request.read_only_view) {
    if (!amended) amended = r;
    amended->set_read_only_view(c.request.read_only_view);
  }
  if (c.request.read_only_view && r.no_read_only_view() && capabilities_.LoseView()) {
    // Its worker has no view after all (it could not make one): the next
    // such command goes over an overlay, so asking again runs it.
    spdlog::warn("a worker had no read-only view: commands that only read run over overlays from now on");
  }
  // What a host agent landed from the command's overlay, on its machine.
  std::optional<WorkerHosts::Landed> landed;
  if (c.remote && o_.pool.hosts != nullptr && !overlay) landed = o_.pool.hosts->TakeLanded(r.execution_id());
  std::set<std::string> put_back = PutBackProtected(c, r, &amended);  // relative
  NoteNetwork(c, r, &amended);
  // A command that could write: what it changed, as the tracker sees it
  // (protected paths already put back).
  std::vector<ChangedFile> changed;
  if (overlay) {
    if (!amended) amended = r;
    NoteOverlayOutcome(c, *overlay, &*amended);
  } else if (landed && (!landed->discarded.empty() || !landed->failed.empty())) {
    OverlayApplied outcome;
    outcome.discarded = landed->discarded;
    outcome.failed = landed->failed;
    if (!amended) amended = r;
    NoteOverlayOutcome(c, outcome, &*amended);
  }
  if (c.tracked) {
    ChangeSet changes;
    if (overlay) {
      // The overlay's change set is exactly the command's; what the
      // protected check put back did not stay.
      changes = std::move(overlay->changes);
      EraseChangesUnder(put_back, &changes);
    } else if (landed) {
      // Landed by its host agent: the paths it names, looked at here (the
      // hashes and before-images are ours); the protected paths were
      // checked by stat above.
      if (tracker_) changes = tracker_->LookAtPaths(landed->paths);
      // What a file it replaced held, nobody here saw go: the host's hash
      // of it, where we knew none.
      for (PathChange& pc : changes.changes) {
        auto before = landed->before_sha256.find(pc.path);
        if (before != landed->before_sha256.end() && pc.before && pc.before->type == EntryType::kFile &&
            pc.before->sha256.empty()) {
          pc.before->sha256 = before->second;
        }
      }
    } else {
      // No tracker: odin exec over the overlay whose command never ran
      // (its worker ended before its Hello), since a worker without the
      // overlay makes the first look before its first command. A command
      // on another machine that wrote into the workspace itself (its host
      // has no overlays): the whole tree, as inotify hears only this one.
      // (A background command's end beside a command that writes in place:
      // what is found now is that one's; the next boundary finds the rest.)
      if (tracker_ && !(c.background && lane_.WriterRunning())) changes = tracker_->Rescan(/*full=*/c.remote);
      // One let in beside other commands that never ran (refused for want
      // of an overlay, its overlay not made): what changed is not its.
      if (lane_.Shared(c.call.execution_id)) {
        RecordExternal(c.call.agent_id, changes, &c.external);
        changes = ChangeSet();
      }
    }
    if (!amended) amended = r;
    // The strict profile: a model's command changes only files it cited
    // its analysis of; the others are put back before anything records them.
    if (o_.grounded_edits && c.handler() != ToolHandler::kHook) HoldToEvidence(c, &changes, &*amended);
    if (c.handler() != ToolHandler::kHook && !holds_.Of(c.call.agent_id).rule.empty())
      HoldCommand(c, &changes, &*amended);
    amended->set_changes_tracked(!changes.truncated);
    for (const std::string& path : c.external) {
      v1::FileChange* fc = amended->add_external_changes();
      fc->set_path(path);
      fc->set_change("modified");
    }
    if (!changes.empty()) {
      changed = RecordChanges(r.execution_id(), c.call.agent_id,
                              c.handler() == ToolHandler::kHook ? "hook"
                              : IsMcpPolicy(c.request.policy)   ? "mcp"
                                                                : "command",
                              changes, &*amended);
    }
  }
  const v1::ToolResult& result = amended ? *amended : r;
  // It ran where it could write and what it changed is not known whole
  // (tracking off, a change set cut short): the workspace's digest says
  // something changed.
  if (ran && !c.request.read_only_view && CanWriteWorkspace(c) && !result.changes_tracked()) digest_.NoteUnknown();
  if (!c.check_path.empty()) return FinishLspCheck(std::move(c), result);
  if (!c.write_path.empty() && result.status() == v1::TOOL_STATUS_OK && result.has_file_written()) {
    RecordFileToolWrite(c, result);
  }
  // What it changed is known to the tracker: the next writer may go.
  LeaveLane(c);
  ForgetOldChangeNumbers();
  Status recorded = RecordEnd(c, result);
  if (c.handler() == ToolHandler::kWebFetch) web_pages_.Keep(c.web_url, result);
  if (c.validate && o_.validation.enabled && !c.write_path.empty() && result.status() == v1::TOOL_STATUS_OK &&
      result.has_file_written()) {
    return StartValidation(std::move(c), result, recorded);
  }
  if (!changed.empty() && o_.validation.enabled) {
    return ValidateCommandChanges(std::move(c), result, recorded, std::move(changed));
  }
  Deliver(c, result, recorded);
}

const WorkspaceFiles* Coordinator::WorkspaceLayer() {
  if (!workspace_files_) {
    // What Odin makes there (a file put back) is the workspace owner's.
    StatusOr<WorkspaceFiles> files = WorkspaceFiles::Open(o_.workspace, WorkspaceFiles::Ownership::kParents);
    if (!files.ok()) {
      spdlog::warn("workspace {}: {}", o_.workspace, files.status().ToString());
      return nullptr;
    }
    workspace_files_.emplace(std::move(*files));
  }
  return &*workspace_files_;
}

const WorkspaceFiles* Coordinator::StateLayer() {
  if (!state_files_) {
    StatusOr<WorkspaceFiles> files = WorkspaceFiles::Open(StateDir());
    if (!files.ok()) {
      spdlog::warn("state directory {}: {}", StateDir(), files.status().ToString());
      return nullptr;
    }
    state_files_.emplace(std::move(*files));
  }
  return &*state_files_;
}

std::string Coordinator::ShownStatePath(const std::string& rel) const {
  std::string state = StateDir();
  return state == o_.workspace + "/.odin" ? ".odin/" + rel : JoinPath(state, rel);
}

// What a command changed of the protected paths (c.protected_before) is put
// back or moved aside, said on its result and in the ledger. Returns the
// paths put back (relative).
std::set<std::string> Coordinator::PutBackProtected(Call& c, const v1::ToolResult& r,
                                                    std::optional<v1::ToolResult>* amended_out) {
  std::set<std::string> put_back;
  std::optional<v1::ToolResult>& amended = *amended_out;
  if (c.protected_before) {
    bool refreshed = RefreshProtectedIndex(c);
    const WorkspaceFiles* ws = WorkspaceLayer();
    RestoreReport report;
    if (ws != nullptr) {
      report =
          RestoreProtected(*ws, *c.protected_before, protected_index_.get(), StateLayer(), r.execution_id(), refreshed);
    }
    // A file put back holds what it held before: the tracker hears so, and
    // does not take the command's attempt for a change.
    if (tracker_ && c.tracked) {
      for (const std::string& rel : report.restored) {
        auto was = c.protected_before->entries.find(rel);
        if (was == c.protected_before->entries.end() || was->second.kind != ProtectedSnapshot::Entry::kFile) continue;
        tracker_->NoteWrite(rel, was->second.sha256, &was->second.content);
      }
    }
    c.protected_before.reset();
    put_back.insert(report.restored.begin(), report.restored.end());
    put_back.insert(report.displaced.begin(), report.displaced.end());
    if (!report.empty()) {
      auto list = [](const std::vector<std::string>& paths) {
        std::string out;
        for (const std::string& p : paths) out += (out.empty() ? "" : ", ") + p;
        return out;
      };
      std::string displaced_dir = DisplayPath(report.displaced_dir, o_.workspace);
      RecordGateEvent(c.call.agent_id, "", "protected_path_restored", r.execution_id(),
                      json({{"paths", report.restored},
                            {"displaced", report.displaced},
                            {"displaced_beside", report.displaced_beside},
                            {"displaced_to", displaced_dir},
                            {"unrestored", report.unrestored},
                            {"why", report.why}})
                          .dump(-1, ' ', false, json::error_handler_t::replace));
      if (!amended) amended = r;
      std::string note =
          "\n[odin] the command changed protected paths (git's configuration, a nested git "
          "directory, Odin's settings or instructions):";
      if (!report.restored.empty()) note += " put back: " + list(report.restored) + ";";
      if (!report.displaced.empty()) note += " moved aside into " + displaced_dir + ": " + list(report.displaced) + ";";
      for (const auto& [rel, beside] : report.displaced_beside) note += " (" + rel + " renamed to " + beside + ")";
      if (!report.unrestored.empty()) {
        note += " could not be put back:";
        for (const std::string& p : report.unrestored) {
          auto why = report.why.find(p);
          note += " " + p + (why == report.why.end() ? "" : " (" + why->second + ")") + ",";
        }
        note.back() = ';';
      }
      note.back() = '\n';
      amended->set_output_tail(amended->output_tail() + note);
      amended->set_output_total_bytes(amended->output_total_bytes() + note.size());
    }
  }
  return put_back;
}

Status Coordinator::RecordEnd(Call& c, const v1::ToolResult& r, const ValidationRecord* validation,
                              const std::vector<DiagnosticRecord>& diagnostics, std::vector<Artifact> artifacts) {
  if (!c.started) return Status::Internal("ledger", "the call's start could not be recorded");
  ExecutionEnd end;
  end.execution_id = r.execution_id();
  end.status = ToolStatusName(r.status());
  if (r.has_exit_code()) end.exit_code = r.exit_code();
  end.exit_reason = ExitReasonName(r.exit_reason());
  end.finished_at_ms = clock_->WallMillis();
  end.duration_us = std::chrono::duration_cast<microseconds>(clock_->Now() - c.dispatched_at).count();
  end.output_head = r.output_head();
  end.output_tail = r.output_tail();
  end.output_bytes = static_cast<int64_t>(r.output_total_bytes());
  if (r.has_error()) end.error = r.error().message();
  end.result_json = ResultJson(c, r);
  auto artifact = [&](const char* kind, std::string content, int64_t size, bool truncated) {
    artifacts.push_back({NewId("art"), r.execution_id(), kind, std::move(content), size, truncated, ""});
  };
  // Head and tail leave something out: keep the full output, up to the cap.
  if (r.output_total_bytes() > r.output_head().size() + r.output_tail().size() && !c.output.empty()) {
    int64_t total = static_cast<int64_t>(r.output_total_bytes());
    bool truncated = c.output.size() < r.output_total_bytes();
    artifact("output", std::move(c.output), total, truncated);
  }
  if (!r.diff().empty()) artifact("diff", r.diff(), static_cast<int64_t>(r.diff().size()), false);
  if (r.has_file_written()) {
    std::string hashes = json({{"file", r.file_written().path()},
                               {"before", r.sha256_before().empty() ? json() : json(r.sha256_before())},
                               {"after", r.file_written().sha256()}})
                             .dump();
    artifact("content_hashes", hashes, static_cast<int64_t>(hashes.size()), false);
  }
  return ledger_->AddExecutionEnd(end, std::move(artifacts), validation, diagnostics);
}

void Coordinator::Deliver(Call& c, const v1::ToolResult& r, const Status& recorded) {
  if (auto agent = agents_.find(c.call.agent_id);
      agent != agents_.end() && agent->second.profile.corrective_pending == r.execution_id()) {
    agent->second.profile.corrective_pending.clear();  // validated
    // Refused or failed before it changed anything: the next one corrects.
    if (r.status() != v1::TOOL_STATUS_OK)
      agent->second.profile.corrected_failure = agent->second.profile.corrected_before;
  }
  // A background command's end: its caller heard of its start.
  if (c.background && EndBackground(c, r)) return;
  if (c.handlers.on_done) c.handlers.on_done(r, recorded);
  if (!c.write_path.empty()) {
    // This write's turn on its file is over; the next one's begins.
    if (write_queues_.PopFront(c.write_path, r.execution_id())) DispatchNextWrite(c.write_path);
  }
}

void Coordinator::StartValidation(Call write, const v1::ToolResult& result, const Status& recorded) {
  std::string path = write.write_path;
  validation_.NoteWrite(path, result);
  std::string id = NewId("ex");
  Call& check = calls_[id];
  check.call.execution_id = id;
  check.call.tool = kLspCheckTool;
  check.call.arguments_json = json({{"file_path", DisplayPath(path, o_.workspace)}}).dump();
  check.call.agent_id = write.call.agent_id;
  check.call.mode = write.call.mode;
  check.call.parent_id = write.call.execution_id;
  check.held = std::make_unique<Held>(Held{std::move(write), result, recorded});
  SubmitLspCheck(id, path, result.file_written().content());
}

void Coordinator::SubmitLspCheck(const std::string& id, const std::string& path, std::string content) {
  Call& c = calls_[id];
  c.check_path = path;
  c.check_content = std::move(content);
  c.request.policy = WorkerPolicy::kLspHost;
  v1::ToolResult no_validator;
  std::optional<ValidationGate::CheckRequest> request = validation_.PrepareCheck(path, c.check_content, &no_validator);
  if (!request) {
    // Nothing to ask the lsp host: the verdict is known here.
    no_validator.set_execution_id(id);
    return OnResult(no_validator);
  }
  c.call.timeout = request->timeout;
  c.request.typed = std::move(request->input);  // the validation set: its whole typed request
  // An open lsp-host breaker refuses it at once: the verdict is timed_out
  // (unverified), which blocks, rather than a wait for a host that fails.
  Dispatch(c);
}

void Coordinator::FinishLspCheck(Call c, v1::ToolResult r) {
  const std::string path = c.check_path;
  std::string mutation = c.held ? c.held->write.call.execution_id : c.validates_command;
  ValidationGate::Judgement j =
      validation_.Judge(path, c.check_content, mutation, c.held ? &c.held->result : nullptr, &r);
  if (j.failed) Agent(c.call.agent_id).profile.failed_at = ++event_seq_;
  j.record.session_id = session_id_;
  j.record.agent_id = c.call.agent_id;
  j.record.created_at_ms = clock_->WallMillis();
  Status recorded = RecordEnd(c, r, &j.record, j.diagnostics, std::move(j.artifacts));
  LogLedgerWriteFailure(recorded);
  Deliver(c, r, recorded);
  if (!c.validates_command.empty()) return FinishCommandCheck(c.validates_command, r);
  if (!c.held) return;
  Held& held = *c.held;
  *held.result.mutable_verdict() = r.verdict();
  // The caller does not need it, unless a PostToolUse hook is told the
  // file as it was (Claude Code's originalFile).
  if (!HasHooks(HookEvent::kPostToolUse, held.write.call.tool)) held.result.clear_content_before();
  if (j.rollback_id.empty()) {
    // The write's caller hears of it now, with the verdict.
    return Deliver(held.write, held.result, held.recorded);
  }
  // The rollback is a write of its own, next in line on the file; the
  // write's caller hears of both once it is done.
  const std::string& revert_id = j.rollback_id;
  Call& rv = calls_[revert_id];
  rv.call.execution_id = revert_id;
  rv.call.tool = kWriteFileTool;
  WriteArgs restore{DisplayPath(path, o_.workspace), j.content_before};
  rv.call.arguments_json = json({{"content", restore.content}, {"file_path", restore.file_path}})
                               .dump(-1, ' ', false, json::error_handler_t::replace);  // for the record
  SetInput(restore, Typed(rv.request).mutable_input());
  rv.call.agent_id = held.write.call.agent_id;
  rv.call.mode = held.write.call.mode;
  rv.request.policy = held.write.request.policy;
  rv.call.parent_id = r.execution_id();
  rv.write_path = path;
  rv.validate = false;
  // Back as it was: the verdict before the write holds again, unless the
  // rollback fails.
  validation_.RolledBack(path, j.previous);
  CallHandlers caller = std::move(held.write.handlers);
  rv.handlers.on_done = [this, path, verdict = j.verdict, caller, result = held.result, recorded = held.recorded](
                            const v1::ToolResult& rollback, const Status&) mutable {
    if (rollback.status() != v1::TOOL_STATUS_OK) {
      validation_.RollbackFailed(path, verdict);
      v1::ValidationVerdict* v = result.mutable_verdict();
      v->clear_revert_execution_id();
      v->set_reason("the rollback " + rollback.execution_id() + " failed: " +
                    (rollback.has_error() ? rollback.error().message() : ToolStatusName(rollback.status())));
    }
    if (caller.on_done) caller.on_done(result, recorded);
  };
  write_queues_.PushNext(path, revert_id);
  // The write's turn on the file ends here, and the rollback's begins.
  Deliver(held.write, held.result, held.recorded);
}

}  // namespace odin
