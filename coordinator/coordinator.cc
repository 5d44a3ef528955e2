#include "coordinator/coordinator.h"

#include "base/canonical_json.h"
#include "base/ids.h"
#include "odin/v1/worker.pb.h"

namespace odin {

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

std::string Coordinator::Submit(ToolCall call, CallHandlers handlers) {
  if (call.execution_id.empty()) call.execution_id = NewId("ex");
  std::string id = call.execution_id;
  // Arguments are recorded and compared in canonical form; malformed ones end
  // the call here, recorded as rejected, without reaching a worker.
  StatusOr<std::string> canonical = CanonicalizeJson(call.arguments_json);
  Call& c = calls_[id];
  c.tool = call.tool;
  c.arguments_json = canonical.ok() ? *canonical : call.arguments_json;
  c.handlers = std::move(handlers);
  if (!canonical.ok()) {
    v1::ToolResult rejected;
    rejected.set_execution_id(id);
    rejected.set_status(v1::TOOL_STATUS_REJECTED);
    rejected.mutable_error()->set_code(v1::CODE_INVALID_ARGUMENT);
    rejected.mutable_error()->set_message(canonical.status().message());
    OnResult(rejected);
    return id;
  }
  call.arguments_json = *canonical;
  pool_.Submit(std::move(call));
  return id;
}

void Coordinator::Cancel(const std::string& execution_id) {
  pool_.Cancel(execution_id, v1::CANCEL_REASON_USER);
}

Status Coordinator::Poll(Duration max_wait, std::vector<PollFd>* extra_fds) {
  return pool_.Poll(max_wait, extra_fds);
}

Status Coordinator::OnDispatch(const ToolCall& call, const std::string& worker_id) {
  ExecutionStart start{call.execution_id, session_id_, o_.agent_id, call.tool, call.arguments_json,
                       o_.mode, worker_id, clock_->WallMillis()};
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

void Coordinator::OnResult(const v1::ToolResult& r) {
  auto it = calls_.find(r.execution_id());
  if (it == calls_.end()) return;
  Call c = std::move(it->second);
  calls_.erase(it);

  Status recorded;
  if (!c.started) {
    // Ended before reaching a worker (cancelled in the queue, pool unusable):
    // record a start too, so the ledger shows every call that was asked for.
    recorded = ledger_->AddExecutionStart({r.execution_id(), session_id_, o_.agent_id, c.tool,
                                           c.arguments_json, o_.mode, "", clock_->WallMillis()});
    c.dispatched_at = clock_->Now();
  }
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
  std::vector<Artifact> artifacts;
  // Head and tail leave something out: keep the full output, up to the cap.
  if (r.output_total_bytes() > r.output_head().size() + r.output_tail().size() && !c.output.empty()) {
    Artifact a;
    a.id = NewId("art");
    a.execution_id = r.execution_id();
    a.kind = "output";
    a.size = static_cast<int64_t>(r.output_total_bytes());
    a.truncated = c.output.size() < r.output_total_bytes();
    a.content = std::move(c.output);
    artifacts.push_back(std::move(a));
  }
  if (recorded.ok()) recorded = ledger_->AddExecutionEnd(end, std::move(artifacts));
  if (c.handlers.on_done) c.handlers.on_done(r, recorded);
}

void Coordinator::OnWorkerReady(const v1::Hello& hello) {
  if (on_worker_ready) on_worker_ready(hello);
}

}  // namespace odin
