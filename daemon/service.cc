#include "daemon/service.h"

#include "daemon/standard_services.h"

#include <unistd.h>

#include "base/file_util.h"
#include "base/version.h"
#include "ledger/ledger.h"
#include "ledger/memory_query.h"
#include "tools/tool_catalog.h"

namespace odin {
namespace {

// How long a stream waits for an event before it checks that its client is
// still there.
constexpr Duration kStreamPoll = milliseconds(200);

grpc::Status ToGrpc(const Status& s) {
  if (s.ok()) return grpc::Status::OK;
  grpc::StatusCode code = grpc::StatusCode::INTERNAL;
  switch (s.code()) {
    case StatusCode::kInvalidArgument: code = grpc::StatusCode::INVALID_ARGUMENT; break;
    case StatusCode::kNotFound: code = grpc::StatusCode::NOT_FOUND; break;
    case StatusCode::kAlreadyExists: code = grpc::StatusCode::ALREADY_EXISTS; break;
    case StatusCode::kPermissionDenied: code = grpc::StatusCode::PERMISSION_DENIED; break;
    case StatusCode::kFailedPrecondition: code = grpc::StatusCode::FAILED_PRECONDITION; break;
    case StatusCode::kDeadlineExceeded: code = grpc::StatusCode::DEADLINE_EXCEEDED; break;
    case StatusCode::kResourceExhausted: code = grpc::StatusCode::RESOURCE_EXHAUSTED; break;
    case StatusCode::kUnavailable: code = grpc::StatusCode::UNAVAILABLE; break;
    case StatusCode::kCancelled: code = grpc::StatusCode::CANCELLED; break;
    case StatusCode::kOutOfRange: code = grpc::StatusCode::OUT_OF_RANGE; break;
    default: break;
  }
  return grpc::Status(code, s.message());
}

grpc::Status Invalid(const std::string& what) { return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, what); }

// NOT_FOUND unless the ledger has a session of that id.
grpc::Status InLedger(Ledger* ledger, const std::string& session_id) {
  if (ledger->FindSession(session_id).ok()) return grpc::Status::OK;
  return grpc::Status(grpc::StatusCode::NOT_FOUND, "no session '" + session_id + "' in the ledger");
}

void FillExecution(const ExecutionRow& row, bool with_output, v1::Execution* e) {
  e->set_execution_id(row.start.execution_id);
  e->set_session_id(row.start.session_id);
  e->set_agent_id(row.start.agent_id);
  e->set_tool(row.start.tool);
  e->set_arguments_json(row.start.args_json);
  e->set_mode(row.start.mode);
  e->set_started_at_ms(row.start.started_at_ms);
  e->set_parent_id(row.start.parent_id);
  if (!row.end) return;
  e->set_status(row.end->status);
  if (row.end->exit_code) e->set_exit_code(*row.end->exit_code);
  e->set_exit_reason(row.end->exit_reason);
  e->set_duration_ms(row.end->duration_us / 1000);
  e->set_summary(row.end->error);
  if (with_output) {
    e->set_output_head(row.end->output_head);
    e->set_output_tail(row.end->output_tail);
  }
}

// Streams a session's events after `seq` that pass `keep`, until `done` says
// the last one was sent, the session ends or the client leaves.
template <typename Keep, typename Done>
grpc::Status StreamEvents(grpc::ServerContext* ctx, HostedSession* s, uint64_t seq,
                          grpc::ServerWriter<v1::SessionEvent>* writer, Keep keep, Done done) {
  while (!ctx->IsCancelled()) {
    bool ended = false;
    for (const v1::SessionEvent& e : s->EventsAfter(seq, kStreamPoll, &ended)) {
      seq = e.seq();
      if (!keep(e)) continue;
      if (!writer->Write(e)) return grpc::Status::OK;  // the client left; the session goes on
      if (done(e)) return grpc::Status::OK;
    }
    if (ended) return grpc::Status::OK;
  }
  return grpc::Status::OK;
}

}  // namespace

void CoordinatorServiceImpl::CloseSessions() {
  std::map<std::string, std::shared_ptr<HostedSession>> sessions;
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    sessions.swap(sessions_);
  }
  sessions.clear();  // each stops its thread and workers
}

grpc::Status CoordinatorServiceImpl::Authorize(grpc::ServerContext* ctx) const {
  if (!BearerMatches(ctx->client_metadata(), o_.token)) {
    return grpc::Status(
        grpc::StatusCode::UNAUTHENTICATED,
        "this daemon needs \"authorization: Bearer TOKEN\" (odin --token, ODIN_TOKEN, or .odin/daemon.token)");
  }
  return grpc::Status::OK;
}

grpc::Status CoordinatorServiceImpl::Find(const std::string& id, std::shared_ptr<HostedSession>* session) {
  if (id.empty()) return Invalid("session_id is empty");
  std::lock_guard<std::mutex> lock(mu_);
  auto it = sessions_.find(id);
  if (it == sessions_.end()) {
    return grpc::Status(grpc::StatusCode::NOT_FOUND,
                        "no session '" + id + "' in this daemon (ListSessions lists them)");
  }
  *session = it->second;
  return grpc::Status::OK;
}

grpc::Status CoordinatorServiceImpl::CreateSession(grpc::ServerContext* ctx, const v1::CreateSessionRequest* req,
                                                   v1::SessionInfo* reply) {
  if (grpc::Status a = Authorize(ctx); !a.ok()) return a;
  Mode mode = Mode::kEdit;
  if (!req->mode().empty() && !ParseMode(req->mode(), &mode)) {
    return Invalid("mode '" + req->mode() + "' must be ask, plan or edit");
  }
  std::string approval = req->approval().empty() ? "prompt" : req->approval();
  if (approval != "prompt" && approval != "deny" && approval != "allow") {
    return Invalid("approval '" + approval + "' must be prompt, deny or allow");
  }
  if (req->max_turns() < 0 || req->max_tool_calls() < 0 || req->max_tokens() < 0 || req->max_budget_usd() < 0 ||
      req->max_wall_seconds() < 0) {
    return Invalid("budget limits must not be negative");
  }
  AgentSessionFlags flags = o_.session;
  flags.runtime.session_kind = "daemon";
  flags.runtime.start_mcp = true;
  flags.runtime.mode = ModeName(mode);
  if (!req->model().empty()) flags.llm.model = req->model();
  if (!req->profile().empty()) flags.profile = req->profile();
  if (!req->workflow().empty()) flags.workflow = req->workflow();
  if (req->max_turns() > 0) flags.max_turns = req->max_turns();
  if (req->max_tool_calls() > 0) flags.max_tool_calls = req->max_tool_calls();
  if (req->max_tokens() > 0) flags.max_tokens = req->max_tokens();
  if (req->max_budget_usd() > 0) flags.max_budget_usd = req->max_budget_usd();
  if (req->max_wall_seconds() > 0) flags.max_wall_seconds = req->max_wall_seconds();
  StatusOr<std::unique_ptr<HostedSession>> started = HostedSession::Start(flags, mode, approval);
  if (!started.ok()) return ToGrpc(started.status());
  std::shared_ptr<HostedSession> s = std::move(*started);
  *reply = s->Info();
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "the daemon is shutting down");
  sessions_[s->id()] = s;
  return grpc::Status::OK;
}

grpc::Status CoordinatorServiceImpl::Send(grpc::ServerContext* ctx, const v1::SendRequest* req,
                                          grpc::ServerWriter<v1::SessionEvent>* writer) {
  if (grpc::Status a = Authorize(ctx); !a.ok()) return a;
  std::shared_ptr<HostedSession> s;
  if (grpc::Status f = Find(req->session_id(), &s); !f.ok()) return f;
  StatusOr<std::pair<std::string, uint64_t>> sent = s->Send(req->text(), req->mode(), req->workflow());
  if (!sent.ok()) return ToGrpc(sent.status());
  const std::string id = sent->first;
  // What happens in the session while this message is the one worked on.
  return StreamEvents(
      ctx, s.get(), sent->second, writer, [&id](const v1::SessionEvent& e) { return e.message_id() == id; },
      [](const v1::SessionEvent& e) { return e.has_message_finished(); });
}

grpc::Status CoordinatorServiceImpl::Subscribe(grpc::ServerContext* ctx, const v1::SubscribeRequest* req,
                                               grpc::ServerWriter<v1::SessionEvent>* writer) {
  if (grpc::Status a = Authorize(ctx); !a.ok()) return a;
  std::shared_ptr<HostedSession> s;
  if (grpc::Status f = Find(req->session_id(), &s); !f.ok()) return f;
  // Past the end is no point to wait at: seqs have no gaps.
  if (uint64_t last = s->Info().last_seq(); req->after_seq() > last) {
    return grpc::Status(
        grpc::StatusCode::OUT_OF_RANGE,
        "after_seq " + std::to_string(req->after_seq()) + " is past the session's last event, " + std::to_string(last));
  }
  return StreamEvents(
      ctx, s.get(), req->after_seq(), writer, [](const v1::SessionEvent&) { return true; },
      [](const v1::SessionEvent&) { return false; });
}

grpc::Status CoordinatorServiceImpl::Approve(grpc::ServerContext* ctx, const v1::ApproveRequest* req,
                                             v1::ApproveResponse* reply) {
  if (grpc::Status a = Authorize(ctx); !a.ok()) return a;
  if (!ParseApprovalAnswer(req->answer())) {
    return Invalid("answer '" + req->answer() + "' must be once, session, workspace, always or deny");
  }
  if (req->execution_id().empty()) return Invalid("execution_id is empty");
  std::shared_ptr<HostedSession> s;
  if (grpc::Status f = Find(req->session_id(), &s); !f.ok()) return f;
  reply->set_applied(s->Approve(req->execution_id(), req->answer()));
  return grpc::Status::OK;
}

grpc::Status CoordinatorServiceImpl::Cancel(grpc::ServerContext* ctx, const v1::CancelRequest* req,
                                            v1::CancelResponse* reply) {
  if (grpc::Status a = Authorize(ctx); !a.ok()) return a;
  std::shared_ptr<HostedSession> s;
  if (grpc::Status f = Find(req->session_id(), &s); !f.ok()) return f;
  reply->set_cancelled(s->Cancel());
  return grpc::Status::OK;
}

grpc::Status CoordinatorServiceImpl::ListSessions(grpc::ServerContext* ctx, const v1::ListSessionsRequest*,
                                                  v1::ListSessionsResponse* reply) {
  if (grpc::Status a = Authorize(ctx); !a.ok()) return a;
  std::vector<std::shared_ptr<HostedSession>> all;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [id, s] : sessions_) all.push_back(s);
  }
  for (auto& s : all) *reply->add_sessions() = s->Info();
  return grpc::Status::OK;
}

grpc::Status CoordinatorServiceImpl::ListExecutions(grpc::ServerContext* ctx, const v1::ListExecutionsRequest* req,
                                                    v1::ListExecutionsResponse* reply) {
  if (grpc::Status a = Authorize(ctx); !a.ok()) return a;
  if (req->limit() < 0) return Invalid("limit must not be negative");
  StatusOr<std::unique_ptr<Ledger>> ledger = Ledger::OpenReadOnly(o_.ledger_path);
  if (!ledger.ok()) return ToGrpc(ledger.status());
  int limit = req->limit() == 0 ? 20 : req->limit();
  if (!req->session_id().empty()) {
    if (grpc::Status known = InLedger(ledger->get(), req->session_id()); !known.ok()) return known;
  }
  StatusOr<std::vector<ExecutionRow>> rows = req->session_id().empty()
                                                 ? (*ledger)->ListExecutions(limit)
                                                 : (*ledger)->ListSessionExecutions(req->session_id());
  if (!rows.ok()) return ToGrpc(rows.status());
  std::vector<ExecutionRow>& list = *rows;
  if (!req->session_id().empty()) {
    // The session's, newest first, as the others.
    std::reverse(list.begin(), list.end());
    if (list.size() > static_cast<size_t>(limit)) list.resize(limit);
  }
  for (const ExecutionRow& row : list) FillExecution(row, false, reply->add_executions());
  return grpc::Status::OK;
}

grpc::Status CoordinatorServiceImpl::GetExecution(grpc::ServerContext* ctx, const v1::GetExecutionRequest* req,
                                                  v1::Execution* reply) {
  if (grpc::Status a = Authorize(ctx); !a.ok()) return a;
  if (req->execution_id().empty()) return Invalid("execution_id is empty");
  StatusOr<std::unique_ptr<Ledger>> ledger = Ledger::OpenReadOnly(o_.ledger_path);
  if (!ledger.ok()) return ToGrpc(ledger.status());
  StatusOr<ExecutionRow> row = (*ledger)->FindExecution(req->execution_id());
  if (!row.ok()) return ToGrpc(row.status());
  FillExecution(*row, true, reply);
  return grpc::Status::OK;
}

grpc::Status CoordinatorServiceImpl::QueryMemory(grpc::ServerContext* ctx, const v1::QueryMemoryRequest* req,
                                                 v1::QueryMemoryResponse* reply) {
  if (grpc::Status a = Authorize(ctx); !a.ok()) return a;
  if (req->session_id().empty()) return Invalid("session_id is empty");
  StatusOr<std::unique_ptr<Ledger>> ledger = Ledger::OpenReadOnly(o_.ledger_path);
  if (!ledger.ok()) return ToGrpc(ledger.status());
  if (grpc::Status known = InLedger(ledger->get(), req->session_id()); !known.ok()) return known;
  StatusOr<std::string> answer = RunMemoryQuery(ledger->get(), req->session_id(), o_.workspace,
                                                req->arguments_json().empty() ? "{}" : req->arguments_json());
  if (!answer.ok()) return ToGrpc(answer.status());
  reply->set_result_json(*answer);
  return grpc::Status::OK;
}

grpc::Status CoordinatorServiceImpl::GetStatus(grpc::ServerContext* ctx, const v1::GetStatusRequest*,
                                               v1::StatusResponse* reply) {
  if (grpc::Status a = Authorize(ctx); !a.ok()) return a;
  reply->set_version(ODIN_VERSION);
  reply->set_pid(getpid());
  reply->set_workspace(o_.workspace);
  reply->set_listen(o_.listen);
  std::vector<std::shared_ptr<HostedSession>> all;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [id, s] : sessions_) all.push_back(s);
  }
  for (auto& s : all) *reply->add_sessions() = s->Report();
  return grpc::Status::OK;
}

}  // namespace odin
