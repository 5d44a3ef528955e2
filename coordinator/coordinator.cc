#include "coordinator/coordinator.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "base/canonical_json.h"
#include "base/ids.h"
#include "coordinator/mode_gate.h"
#include "coordinator/read_before_edit_gate.h"
#include "coordinator/tool_catalog.h"
#include "odin/v1/worker.pb.h"
#include "tools/file_tool_args.h"
#include "tools/workspace_path.h"

namespace odin {

using nlohmann::json;

std::string ToolStatusName(int s) {
  switch (s) {
    case v1::TOOL_STATUS_OK: return "ok";
    case v1::TOOL_STATUS_ERROR: return "error";
    case v1::TOOL_STATUS_REJECTED: return "rejected";
    case v1::TOOL_STATUS_TIMED_OUT: return "timed_out";
    case v1::TOOL_STATUS_CRASHED: return "crashed";
    case v1::TOOL_STATUS_CANCELLED: return "cancelled";
    default: return "unknown";
  }
}

std::string ExitReasonName(int r) {
  switch (r) {
    case v1::EXIT_REASON_NORMAL: return "normal";
    case v1::EXIT_REASON_TIMEOUT: return "timeout";
    case v1::EXIT_REASON_KILLED: return "killed";
    case v1::EXIT_REASON_CRASHED: return "crashed";
    case v1::EXIT_REASON_SANDBOX_SETUP_FAILED: return "sandbox_setup_failed";
    case v1::EXIT_REASON_BUDGET_EXCEEDED: return "budget_exceeded";
    case v1::EXIT_REASON_STALLED: return "stalled";
    default: return "unspecified";
  }
}

Coordinator::Coordinator(CoordinatorOptions options, Clock* clock, ProcessLauncher* launcher,
                         WorkerTransport* transport)
    : o_(std::move(options)), clock_(clock),
      pool_(o_.pool, clock, launcher, transport, this), session_id_(NewId("ses")) {}

// Calls still held end (as cancelled) while this object is whole: the pool's
// own destructor would report them into members already destroyed.
Coordinator::~Coordinator() { pool_.Shutdown(Duration::zero()); }

Status Coordinator::StartWorkers() { return pool_.Start(); }

Status Coordinator::AttachLedger(Ledger* ledger) {
  ledger_ = ledger;
  return ledger_->AddSession({session_id_, o_.session_kind, o_.workspace, clock_->WallMillis()});
}

Coordinator::AgentState& Coordinator::Agent(const std::string& agent_id) {
  AgentState& a = agents_[agent_id];
  if (!a.cache) a.cache = std::make_unique<FileCache>(o_.file_cache, clock_);
  return a;
}

std::vector<CachedFileInfo> Coordinator::CachedFiles(const std::string& agent_id) {
  return Agent(agent_id).cache->List();
}

const TodoList& Coordinator::Todos(const std::string& agent_id) { return Agent(agent_id).todos; }

Status Coordinator::ResumeSession(Ledger* ledger, const std::string& session_id) {
  ledger_ = ledger;
  RETURN_IF_ERROR(ledger_->FindSession(session_id).status());
  session_id_ = session_id;
  ASSIGN_OR_RETURN(std::vector<ExecutionRow> rows, ledger_->ListSessionExecutions(session_id));
  // Replay what each successful call did to its agent's cache and todos.
  for (const ExecutionRow& row : rows) {
    if (!row.end || row.end->status != "ok") continue;
    AgentState& agent = Agent(row.start.agent_id);
    if (row.start.tool == kTodoWriteTool) {
      agent.todos.Write(row.start.args_json);
      continue;
    }
    json result = json::parse(row.end->result_json, nullptr, false);
    if (!result.is_object() || !result.contains("cache")) continue;
    for (const json& f : result["cache"]) {
      std::vector<std::pair<uint32_t, uint32_t>> ranges;
      for (const json& r : f.value("ranges", json::array())) ranges.push_back({r[0], r[1]});
      std::string path = f.value("path", "");
      agent.cache->RecordReadRanges(path, f.value("sha256", ""), f.value("size", 0), f.value("total_lines", 0),
                                    f.value("mtime_ns", int64_t{0}), f.value("full", false) || f.value("written", false),
                                    ranges, f.value("written", false));
    }
  }
  return Status::OK();
}

std::string Coordinator::Submit(ToolCall call, CallHandlers handlers) {
  if (call.execution_id.empty()) call.execution_id = NewId("ex");
  if (call.agent_id.empty()) call.agent_id = o_.agent_id;
  if (call.mode.empty()) call.mode = o_.mode;
  // Ask and plan calls run where the workspace is read-only.
  call.readonly_workspace = call.mode == "ask" || call.mode == "plan";
  std::string id = call.execution_id;
  // Arguments are recorded and compared in canonical form.
  StatusOr<std::string> canonical = CanonicalizeJson(call.arguments_json);
  if (canonical.ok()) call.arguments_json = *canonical;
  Call& c = calls_[id];
  c.call = std::move(call);
  c.handlers = std::move(handlers);
  const ToolCall& tc = c.call;

  if (!canonical.ok()) {
    EndHere(id, v1::TOOL_STATUS_REJECTED, canonical.status().WithContext(tc.tool));
    return id;
  }
  // Gate 1: the mode. (odin exec's "exec" mode runs only ExecuteCommand.)
  Mode mode;
  if (ParseMode(tc.mode, &mode)) {
    Status allowed = CheckMode(tc.tool, mode);
    if (!allowed.ok()) {
      EndHere(id, v1::TOOL_STATUS_REJECTED, allowed);
      return id;
    }
  }
  const ToolInfo* info = FindTool(tc.tool);
  if (info != nullptr && info->in_coordinator) {
    RunTodoWrite(id);
    return id;
  }
  if (info != nullptr && info->writes_files) {
    // One write per file at a time: later ones wait, and meet the gate only
    // when their turn comes, against the file as the earlier write left it.
    StatusOr<std::string> path = ResolveWorkspacePath(TargetFileOf(tc.tool, tc.arguments_json), o_.workspace);
    if (!path.ok()) {
      // Malformed arguments or a path outside the workspace: the gate says which.
      v1::FileExpectation unused;
      std::string ignored;
      Status s = CheckReadBeforeEdit(tc.tool, tc.arguments_json, o_.workspace, Agent(tc.agent_id).cache.get(),
                                     &unused, &ignored);
      EndHere(id, v1::TOOL_STATUS_ERROR, s.ok() ? path.status() : s);
      return id;
    }
    c.write_path = *path;
    std::deque<std::string>& queue = write_queues_[*path];
    queue.push_back(id);
    if (queue.size() == 1) DispatchNextWrite(*path);
    return id;
  }
  pool_.Submit(c.call);
  return id;
}

void Coordinator::DispatchNextWrite(const std::string& path) {
  auto q = write_queues_.find(path);
  if (q == write_queues_.end() || q->second.empty()) {
    if (q != write_queues_.end()) write_queues_.erase(q);
    return;
  }
  std::string id = q->second.front();
  Call& c = calls_[id];
  v1::FileExpectation expect;
  std::string resolved;
  Status gate = CheckReadBeforeEdit(c.call.tool, c.call.arguments_json, o_.workspace,
                                    Agent(c.call.agent_id).cache.get(), &expect, &resolved);
  if (!gate.ok()) {
    // Ending it pops it from the queue and gives the next write its turn.
    EndHere(id, gate.code() == StatusCode::kFailedPrecondition ? v1::TOOL_STATUS_REJECTED : v1::TOOL_STATUS_ERROR,
            gate);
    return;
  }
  ToolCall::Expectation& e = c.call.expect;
  e.set = true;
  e.must_not_exist = expect.must_not_exist();
  e.sha256 = expect.sha256();
  e.full_read = expect.full_read();
  for (const v1::LineRange& r : expect.read_ranges()) e.read_ranges.push_back({r.start(), r.end()});
  pool_.Submit(c.call);
}

void Coordinator::EndHere(const std::string& id, int tool_status, const Status& why, const std::string& text) {
  v1::ToolResult r;
  r.set_execution_id(id);
  r.set_status(static_cast<v1::ToolStatus>(tool_status));
  r.set_exit_reason(v1::EXIT_REASON_NORMAL);
  std::string shown = text;
  if (!why.ok()) {
    r.mutable_error()->set_code(static_cast<v1::Code>(why.code()));
    r.mutable_error()->set_message(why.message());
    shown = (tool_status == v1::TOOL_STATUS_REJECTED ? "Rejected: " : "Error: ") + why.message() + "\n";
  }
  r.set_output_head(shown);
  r.set_output_total_bytes(shown.size());
  // The text reaches the caller like a worker's output would.
  auto it = calls_.find(id);
  if (it != calls_.end() && it->second.handlers.on_progress && !shown.empty()) {
    v1::ToolProgress p;
    p.set_execution_id(id);
    p.mutable_output()->set_stream(v1::OUTPUT_STREAM_STDOUT);
    p.mutable_output()->set_data(shown);
    it->second.handlers.on_progress(p);
  }
  OnResult(r);
}

void Coordinator::RunTodoWrite(const std::string& id) {
  Call& c = calls_[id];
  TodoList& todos = Agent(c.call.agent_id).todos;
  Status s = todos.Write(c.call.arguments_json);
  if (!s.ok()) return EndHere(id, v1::TOOL_STATUS_ERROR, s);
  EndHere(id, v1::TOOL_STATUS_OK, Status::OK(), todos.Render());
}

void Coordinator::Cancel(const std::string& execution_id) {
  auto it = calls_.find(execution_id);
  if (it != calls_.end() && !it->second.write_path.empty()) {
    std::deque<std::string>& queue = write_queues_[it->second.write_path];
    auto pos = std::find(queue.begin(), queue.end(), execution_id);
    if (pos != queue.end() && pos != queue.begin()) {
      // Still waiting for its turn on the file: it never reaches the pool.
      queue.erase(pos);
      return EndHere(execution_id, v1::TOOL_STATUS_CANCELLED, Status::Cancelled("cancelled before it started"));
    }
  }
  pool_.Cancel(execution_id, v1::CANCEL_REASON_USER);
}

Status Coordinator::Poll(Duration max_wait, std::vector<PollFd>* extra_fds) {
  return pool_.Poll(max_wait, extra_fds);
}

Status Coordinator::OnDispatch(const ToolCall& call, const std::string& worker_id) {
  ExecutionStart start{call.execution_id, session_id_, call.agent_id, call.tool, call.arguments_json,
                       call.mode, worker_id, clock_->WallMillis()};
  // The start is durable before the worker sees the call.
  RETURN_IF_ERROR(ledger_->AddExecutionStart(start).WithContext("cannot record the call"));
  Call& c = calls_[call.execution_id];
  c.started = true;
  c.dispatched_at = clock_->Now();
  return Status::OK();
}

void Coordinator::OnProgress(const v1::ToolProgress& p) {
  auto it = calls_.find(p.execution_id());
  if (it == calls_.end()) return;
  Call& c = it->second;
  if (p.has_output() && c.output.size() < o_.artifact_cap_bytes) {
    const std::string& data = p.output().data();
    c.output.append(data, 0, std::min<size_t>(data.size(), o_.artifact_cap_bytes - c.output.size()));
  }
  if (c.handlers.on_progress) c.handlers.on_progress(p);
}

namespace {

json SnapshotJson(const v1::FileSnapshot& s, bool written) {
  json ranges = json::array();
  for (const v1::Segment& seg : s.segments()) ranges.push_back({seg.start_line(), seg.end_line()});
  return {{"path", s.path()},       {"sha256", s.sha256()},         {"size", s.size_bytes()},
          {"mtime_ns", s.mtime_ns()}, {"total_lines", s.total_lines()}, {"full", s.full()},
          {"ranges", ranges},         {"written", written}};
}

}  // namespace

// The tool's own structured result, plus what the call did to the file
// cache ("cache"), so a session's caches can be rebuilt from the ledger.
std::string Coordinator::ResultJson(const Call& c, const v1::ToolResult& r) const {
  json out = json::parse(r.output_json(), nullptr, false);
  if (!out.is_object()) out = json::object();
  json cache = json::array();
  if (r.status() == v1::TOOL_STATUS_OK) {
    for (const v1::FileSnapshot& s : r.files_read()) cache.push_back(SnapshotJson(s, false));
    if (r.has_file_written()) cache.push_back(SnapshotJson(r.file_written(), true));
  }
  if (!cache.empty()) out["cache"] = cache;
  return out.empty() ? "" : out.dump(-1, ' ', false, json::error_handler_t::replace);
}

void Coordinator::ApplyToCache(const Call& c, const v1::ToolResult& r) {
  FileCache* cache = Agent(c.call.agent_id).cache.get();
  if (r.status() == v1::TOOL_STATUS_OK) {
    for (const v1::FileSnapshot& s : r.files_read()) cache->RecordRead(s);
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

  Status recorded;
  if (!c.started) {
    // Ended before reaching a worker (refused by a gate, run here, cancelled
    // in the queue, pool unusable): record a start too, so the ledger shows
    // every call that was asked for.
    recorded = ledger_->AddExecutionStart({r.execution_id(), session_id_, c.call.agent_id, c.call.tool,
                                           c.call.arguments_json, c.call.mode, "", clock_->WallMillis()});
    c.dispatched_at = clock_->Now();
  }
  ApplyToCache(c, r);

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
  std::vector<Artifact> artifacts;
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
  if (recorded.ok()) recorded = ledger_->AddExecutionEnd(end, std::move(artifacts));
  if (c.handlers.on_done) c.handlers.on_done(r, recorded);

  if (!c.write_path.empty()) {
    // This write's turn on its file is over; the next one's begins.
    auto q = write_queues_.find(c.write_path);
    if (q != write_queues_.end() && !q->second.empty() && q->second.front() == r.execution_id()) {
      q->second.pop_front();
      DispatchNextWrite(c.write_path);
    }
  }
}

void Coordinator::OnWorkerReady(const v1::Hello& hello) {
  if (on_worker_ready) on_worker_ready(hello);
}

}  // namespace odin
