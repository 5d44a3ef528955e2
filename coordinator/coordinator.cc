#include "coordinator/coordinator.h"

// Long file: the central orchestrator (STYLE.md rule 1). Each gate's
// decisions live in gates/; what stays here is the order they run in, the
// calls' lifecycle (Submit, dispatch, record, deliver) and the write queues.

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
#include "index/symbol_index.h"
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

Coordinator::Call::Call() = default;
Coordinator::Call::~Call() = default;
Coordinator::Call::Call(Call&&) noexcept = default;
Coordinator::Call& Coordinator::Call::operator=(Call&&) noexcept = default;

Coordinator::Coordinator(CoordinatorOptions options, Clock* clock, ProcessLauncher* launcher,
                         WorkerTransport* transport)
    : o_(std::move(options)),
      clock_(clock),
      pool_(o_.pool, clock, launcher, transport, this),
      session_id_(NewId("ses")),
      approvals_(ParseApprovalPolicy(o_.approval)),
      validation_(o_.validation, o_.workspace,
                  [this] {
                    if (o_.program_lookup) return o_.program_lookup;
                    const char* path = getenv("PATH");
                    return DefaultProgramLookup(path != nullptr ? path : "", ExecutableDir());
                  }()),
      mcp_(o_.mcp_servers) {}

// Calls still held end (as cancelled) while this object is whole: the pool's
// own destructor would report them into members already destroyed.
Coordinator::~Coordinator() {
  StopTracking();
  pool_.Shutdown(Duration::zero());
  // Removing a large overlay takes a while; a hung file system does not
  // hold the exit for good.
  removals_.WaitAll(std::chrono::seconds(30));
}

Status Coordinator::StartWorkers() { return pool_.Start(); }

Status Coordinator::AttachLedger(Ledger* ledger) {
  ledger_ = ledger;
  return ledger_->AddSession({session_id_, o_.session_kind, o_.workspace, clock_->WallMillis()});
}

Coordinator::AgentState& Coordinator::Agent(const std::string& agent_id) {
  AgentState& a = agents_[agent_id];
  if (!a.cache) {
    FileCacheOptions options = o_.file_cache;
    options.root = o_.workspace;
    a.cache = std::make_unique<FileCache>(options, clock_);
  }
  return a;
}

std::vector<CachedFileInfo> Coordinator::CachedFiles(const std::string& agent_id) {
  return Agent(agent_id).cache->List();
}

const TodoList& Coordinator::Todos(const std::string& agent_id) { return Agent(agent_id).todos; }

std::string Coordinator::TodosText(const std::string& agent_id) {
  const TodoList& todos = Agent(agent_id).todos;
  return todos.items().empty() ? "" : todos.Render();
}

void Coordinator::RecordGateEvent(const std::string& agent_id, const std::string& message_id, const std::string& kind,
                                  const std::string& execution_id, const std::string& detail_json) {
  GateEvent g{NewId("gate"), session_id_, agent_id, message_id, kind, execution_id, detail_json, clock_->WallMillis()};
  AppendGateEvent(g);
  if (kind == "compaction") ForgetCompactedFiles(agent_id, detail_json);
  if (on_gate_event) on_gate_event(g);
}

namespace {

// The calls whose output a compaction (its gate event's detail) masked.
std::vector<std::string> MaskedCalls(const json& detail) {
  std::vector<std::string> ids;
  if (!detail.is_object()) return ids;
  for (const json& id : detail.value("masked", json::array())) {
    if (id.is_string()) ids.push_back(id.get<std::string>());
  }
  return ids;
}

}  // namespace

void Coordinator::ForgetCompactedFiles(const std::string& agent_id, const std::string& detail_json) {
  // The model no longer sees what the masked calls read or wrote: an edit
  // based on those bytes must meet the read-before-edit gate again.
  // Those are the files each masked call put in the cache (its recorded
  // result says which: Read, Grep's content, a write), and the files the
  // calls named.
  json detail = ParseJson(detail_json);
  if (!detail.is_object()) return;
  FileCache& cache = *Agent(agent_id).cache;
  for (const json& f : detail.value("files", json::array())) {
    if (!f.is_string()) continue;
    if (StatusOr<std::string> path = ResolvePath(f.get<std::string>(), o_.workspace); path.ok()) {
      cache.Invalidate(*path);
    }
  }
  if (ledger_ == nullptr) return;
  for (const std::string& id : MaskedCalls(detail)) {
    StatusOr<ExecutionRow> row = ledger_->FindExecution(id);
    if (!row.ok() || !row->end || row->start.agent_id != agent_id) continue;
    json result = ParseJson(row->end->result_json);
    if (!result.is_object() || !result.contains("cache") || !result["cache"].is_array()) continue;
    for (const json& f : result["cache"]) {
      if (f.is_object() && f.contains("path") && f["path"].is_string()) cache.Invalidate(f["path"].get<std::string>());
    }
  }
}

void Coordinator::AppendGateEvent(const GateEvent& g) {
  if (ledger_ == nullptr) return;
  Status s = ledger_->AddGateEvent(g);
  LogLedgerWriteFailure(s);
}

Status Coordinator::ResumeSession(Ledger* ledger, const std::string& session_id) {
  ledger_ = ledger;
  RETURN_IF_ERROR(ledger_->FindSession(session_id).status());
  session_id_ = session_id;
  ASSIGN_OR_RETURN(std::vector<ExecutionRow> rows, ledger_->ListSessionExecutions(session_id));
  // The latest verdict of each file the session changed, so a blocked
  // session stays blocked.
  RETURN_IF_ERROR(validation_.Resume(ledger_, session_id, rows));
  // Calls whose output a compaction masked: the model no longer sees what
  // they read, so it does not go back into the cache.
  ASSIGN_OR_RETURN(std::vector<GateEvent> events, ledger_->ListGateEvents(session_id));
  std::set<std::string> masked;
  for (const GateEvent& e : events) {
    if (e.kind != "compaction") continue;
    for (std::string& id : MaskedCalls(ParseJson(e.detail_json))) masked.insert(std::move(id));
  }
  // Replay what each successful call did to its agent's cache and todos.
  for (const ExecutionRow& row : rows) {
    if (!row.end || row.end->status != "ok") continue;
    AgentState& agent = Agent(row.start.agent_id);
    if (row.start.tool == kTodoWriteTool) {
      Status replayed = agent.todos.Write(row.start.args_json);
      if (!replayed.ok()) spdlog::warn("cannot replay {}: {}", row.start.execution_id, replayed.message());
      continue;
    }
    if (masked.count(row.start.execution_id) != 0) continue;
    json result = ParseJson(row.end->result_json);
    if (!result.is_object() || !result.contains("cache")) continue;
    for (const json& f : result["cache"]) {
      std::vector<std::pair<uint32_t, uint32_t>> ranges;
      for (const json& r : f.value("ranges", json::array())) ranges.push_back({r[0], r[1]});
      std::string path = f.value("path", "");
      agent.cache->RecordReadRanges(
          path, f.value("sha256", ""), f.value("size", 0), f.value("total_lines", 0), f.value("mtime_ns", int64_t{0}),
          f.value("full", false) || f.value("written", false), ranges, f.value("written", false));
    }
  }
  return Status::OK();
}

std::string Coordinator::Submit(ToolCall call, CallHandlers handlers) {
  if (call.execution_id.empty()) call.execution_id = NewId("ex");
  if (call.agent_id.empty()) call.agent_id = o_.agent_id;
  if (!call.mode) call.mode = o_.mode;
  // Ask and plan calls run where the workspace is read-only.
  call.policy =
      *call.mode == CallMode::kAsk || *call.mode == CallMode::kPlan ? WorkerPolicy::kReadonly : WorkerPolicy::kWritable;
  if (call.tool == kWebFetchTool) call.policy = WorkerPolicy::kWeb;
  std::string id = call.execution_id;
  // Arguments are recorded and compared in canonical form.
  StatusOr<std::string> canonical = CanonicalizeJson(call.arguments_json);
  if (canonical.ok()) call.arguments_json = *canonical;
  // Too deep to become a value: recorded as one JSON string, so that no
  // reader of the ledger meets the nesting (the call is refused below).
  if (!canonical.ok() && JsonTooDeep(call.arguments_json)) {
    call.arguments_json = json(call.arguments_json).dump(-1, ' ', false, json::error_handler_t::replace);
  }
  Call& c = calls_[id];
  c.call = std::move(call);
  c.handlers = std::move(handlers);
  const ToolCall& tc = c.call;
  // A tool of an MCP server that is still starting: judged once its tools
  // are known (the server's listing ends within its startup timeout).
  // (Arguments that are not JSON are refused below, never held.)
  if (canonical.ok() && WaitForMcpServer(c)) return id;
  // A call boundary: what changed since by no call of ours is found now.
  DetectExternalChanges(tc.agent_id);

  if (tc.tool == "ExecuteCommand" && c.call.limits.cpu_seconds == 0 && c.call.limits.address_space_bytes == 0 &&
      c.call.limits.file_size_bytes == 0 && c.call.limits.open_files == 0 && c.call.limits.processes == 0) {
    c.call.limits = o_.command_limits;
  }
  // Gate 5: the run's budget, one choke point for every tool call.
  Budget* run_budget = tc.budget;
  if (tc.budget != nullptr && !tc.budget->TryStartToolCall()) {
    std::string limit = tc.budget->Exceeded().value_or("tool_calls");
    EndHere(id, v1::TOOL_STATUS_REJECTED, Status::ResourceExhausted("budget exceeded", tc.budget->Describe(limit)));
    return id;
  }
  c.call.budget = nullptr;  // charged; the budget may end before the call does
  if (!canonical.ok()) {
    EndHere(id, v1::TOOL_STATUS_REJECTED, canonical.status().WithContext(tc.tool));
    return id;
  }
  // The strict profile's evidence leaves the arguments here, before any
  // reader of them (the gates, the ledger's readers, the worker) sees them.
  if (o_.grounded_edits && ((IsWriteTool(tc.tool) && tc.tool != kInitTool) || tc.tool == kExecuteCommandTool)) {
    Status taken = TakeEvidence(c);
    if (!taken.ok()) {
      EndHere(id, v1::TOOL_STATUS_ERROR, taken);
      return id;
    }
  }
  // Gate 1: the mode. (odin exec's "exec" mode runs only ExecuteCommand.)
  // An MCP server's tool: the registry knows which modes offer it.
  bool mcp_tool = tc.tool.rfind(kMcpToolPrefix, 0) == 0;
  if (std::optional<Mode> mode = AgentModeOf(*tc.mode)) {
    Status allowed = mcp_tool ? mcp_.CheckMode(tc.tool, *mode) : CheckMode(tc.tool, *mode);
    if (!allowed.ok()) {
      EndHere(id, v1::TOOL_STATUS_REJECTED, allowed);
      return id;
    }
  }
  if (tc.tool == kInitTool && (!init_active_ || tc.agent_id != o_.agent_id)) {
    EndHere(id, v1::TOOL_STATUS_REJECTED,
            Status::PermissionDenied(kInitTool,
                                     "is offered only during /init (odin init), to the main agent; "
                                     "ODIN.md is a protected path for every other write"));
    return id;
  }
  if (mcp_tool) {
    Status prepared = PrepareMcpCall(c);
    if (!prepared.ok()) {
      EndHere(id, v1::TOOL_STATUS_REJECTED, prepared);
      return id;
    }
  }
  Status blocked = CheckBlocked(tc);
  if (!blocked.ok()) {
    EndHere(id, v1::TOOL_STATUS_REJECTED, blocked);
    return id;
  }
  std::optional<ApprovalNeed> need;
  Status ruled = CheckSafeguards(c, &need);
  if (!ruled.ok()) {
    EndHere(id, v1::TOOL_STATUS_REJECTED, ruled);
    return id;
  }
  c.run_budget = run_budget;
  if (!tc.internal && HasHooks(HookEvent::kPostToolUse, tc.tool)) WrapForPostToolUse(c);
  // PreToolUse hooks judge what the gates let through; their allow stands
  // in only for the user's answer to an approval (AfterPreToolUse).
  if (!tc.internal && HasHooks(HookEvent::kPreToolUse, tc.tool)) {
    c.hooks_pending = true;
    json fields = {{"tool_name", tc.tool}, {"tool_input", ParseJson(tc.arguments_json)}};
    RunHooks({HookEvent::kPreToolUse, tc.agent_id, tc.mode, id, tc.tool,
              fields.dump(-1, ' ', false, json::error_handler_t::replace)},
             [this, id, need](const HookOutcome& o) { AfterPreToolUse(id, need, o); });
    return id;
  }
  AfterPreToolUse(id, std::move(need), HookOutcome());
  return id;
}

void Coordinator::AfterPreToolUse(const std::string& id, std::optional<ApprovalNeed> need, const HookOutcome& hooks) {
  auto it = calls_.find(id);
  if (it == calls_.end()) return;  // cancelled while its hooks ran
  Call& c = it->second;
  c.hooks_pending = false;
  const ToolCall& tc = c.call;
  if (hooks.stop || hooks.decision == HookOutcome::Decision::kBlock) {
    // "continue": false refuses the call too, with its stopReason.
    std::string reason = hooks.stop && !hooks.stop_reason.empty() ? hooks.stop_reason : hooks.reason;
    RecordGateEvent(
        tc.agent_id, "", "hook", id,
        json({{"event", "PreToolUse"}, {"decision", "deny"}, {"reason", reason}, {"hooks", hooks.execution_ids}})
            .dump(-1, ' ', false, json::error_handler_t::replace));
    return EndHere(id, v1::TOOL_STATUS_REJECTED,
                   Status::PermissionDenied(
                       tc.tool == kExecuteCommandTool ? "command" : tc.tool,
                       "a PreToolUse hook refused it: " + (reason.empty() ? std::string("no reason given") : reason)));
  }
  if (hooks.decision == HookOutcome::Decision::kAllow && need) {
    // In place of the user's answer, and nothing more.
    RecordGateEvent(tc.agent_id, "", "approval", id,
                    json({{"decision", "ask"},
                          {"approval", "allowed by a PreToolUse hook"},
                          {"what", need->what},
                          {"hooks", hooks.execution_ids}})
                        .dump(-1, ' ', false, json::error_handler_t::replace));
    need.reset();
  }
  if (hooks.decision == HookOutcome::Decision::kAsk && !need) {
    std::string what = tc.tool + " " + tc.arguments_json.substr(0, 200);
    need = ApprovalNeed{what,
                        "a PreToolUse hook asks: " + hooks.reason,
                        {"hook:" + tc.tool + ":" + tc.arguments_json},
                        json({{"decision", "ask"}, {"tool", tc.tool}, {"reason", hooks.reason}}).dump()};
  }
  if (need) {
    bool wait = false;
    Status asked = AskApproval(c, *need, &wait);
    if (!asked.ok()) return EndHere(id, v1::TOOL_STATUS_REJECTED, asked);
    if (wait) return;  // AnswerApproval goes on from here
  }
  Proceed(c);
}

void Coordinator::Proceed(Call& c) {
  const ToolCall& tc = c.call;
  const std::string id = tc.execution_id;
  Budget* run_budget = c.run_budget;
  const ToolInfo* info = FindTool(tc.tool);
  if (tc.tool == kMemoryQueryTool) {
    RunMemoryQuery(id);
    return;
  }
  if (tc.tool == kContextSummarizerTool) {
    // The agent loop compacts its conversation when this call's result is ok.
    StatusOr<std::string> focus = ParseContextSummarizerArgs(tc.arguments_json);
    if (!focus.ok()) {
      EndHere(id, v1::TOOL_STATUS_ERROR, focus.status());
    } else {
      EndHere(id, v1::TOOL_STATUS_OK, Status::OK(), "The conversation will be compacted before your next request.\n");
    }
    return;
  }
  if (tc.tool == kPlanUpdateTool) {
    // The agent loop revises its plan, and its critic judges it, when this
    // call's result is ok.
    Plan empty;
    StatusOr<Plan> plan = ParsePlan(tc.arguments_json, &empty);
    if (!plan.ok()) {
      EndHere(id, v1::TOOL_STATUS_ERROR, plan.status().WithContext(kPlanUpdateTool));
    } else {
      EndHere(id, v1::TOOL_STATUS_OK, Status::OK(), "The plan is revised.\n");
    }
    return;
  }
  if (index::IsIndexQueryTool(tc.tool)) {
    RunIndexTool(c);
    return;
  }
  if (info != nullptr && info->in_coordinator) {
    RunTodoWrite(id);
    return;
  }
  if (tc.tool == kAgentTool) {
    Status prepared = PrepareSubagent(c, run_budget);
    if (!prepared.ok()) {
      EndHere(id, prepared.code() == StatusCode::kPermissionDenied ? v1::TOOL_STATUS_REJECTED : v1::TOOL_STATUS_ERROR,
              prepared);
      return;
    }
    Dispatch(c);
    return;
  }
  if (tc.tool == kWebFetchTool && AnswerWebFetchFromCache(c)) return;  // c is gone
  if (tc.tool == kLspCheckTool) {
    json args = ParseJson(tc.arguments_json);
    std::string given = args.is_object() && args.contains("file_path") && args["file_path"].is_string()
                            ? args["file_path"].get<std::string>()
                            : "";
    StatusOr<std::string> path = ResolveWorkspacePath(given, o_.workspace);
    const WorkspaceFiles* files = WorkspaceLayer();
    StatusOr<std::string> content = !path.ok()         ? path.status()
                                    : files == nullptr ? Status::Unavailable(given, "the workspace cannot be opened")
                                                       : files->ReadFile(*path, kMaxFileBytes);
    if (!content.ok()) {
      EndHere(id, v1::TOOL_STATUS_ERROR, content.status().WithContext(tc.tool));
      return;
    }
    SubmitLspCheck(id, *path, std::move(*content));
    return;
  }
  if (tc.tool == kEditSymbolTool && c.span_file_sha256.empty()) {
    // Its file and span come from the symbol index, brought up to date
    // first (index_calls.cc: PrepareEditSymbol, then ProceedWrite).
    RunIndexTool(c);
    return;
  }
  if (info != nullptr && info->writes_files()) {
    ProceedWrite(c);
    return;
  }
  Dispatch(c);
}

void Coordinator::ProceedWrite(Call& c) {
  const ToolCall& tc = c.call;
  const std::string id = tc.execution_id;
  // One write per file at a time: later ones wait, and meet the gate only
  // when their turn comes, against the file as the earlier write left it.
  // The arguments are parsed and the file resolved here, once: the gates
  // below and the write queue work on the resolved path.
  std::string given;
  StatusOr<std::string> path = ResolveWriteTarget(tc.tool, tc.arguments_json, o_.workspace, &given);
  if (!path.ok()) {
    if (IsOutsideWorkspace(given, o_.workspace)) {
      // No approval opens it: the sandbox lets no worker write there.
      std::string why = path.status().ToString();
      RecordGateEvent(tc.agent_id, "", "outside_workspace", id,
                      json({{"tool", tc.tool}, {"reason", why}}).dump(-1, ' ', false, json::error_handler_t::replace));
      EndHere(id, v1::TOOL_STATUS_REJECTED,
              Status::PermissionDenied(why, "the file tools write only inside the workspace"));
      return;
    }
    EndHere(id, v1::TOOL_STATUS_ERROR, path.status());
    return;
  }
  // ODIN.md is protected from every write but InitTool's, which only /init
  // offers (and CheckMode refuses outside it).
  std::string protected_reason = tc.tool == kInitTool ? "" : ProtectedWriteReason(*path, o_.workspace);
  if (!protected_reason.empty()) {
    RecordGateEvent(tc.agent_id, "", "protected_path", id,
                    json({{"tool", tc.tool}, {"path", DisplayPath(*path, o_.workspace)}, {"reason", protected_reason}})
                        .dump(-1, ' ', false, json::error_handler_t::replace));
    EndHere(id, v1::TOOL_STATUS_REJECTED, Status::PermissionDenied(DisplayPath(*path, o_.workspace), protected_reason));
    return;
  }
  if (Status held = tc.tool == kInitTool ? Status::OK() : CheckHold(c, *path); !held.ok()) {
    EndHere(id, v1::TOOL_STATUS_REJECTED, held);
    return;
  }
  if (o_.grounded_edits && tc.tool != kInitTool) {
    struct stat st {};
    Status grounded = CheckEvidence(c, *path, lstat(path->c_str(), &st) == 0);
    json detail = {{"tool", tc.tool},
                   {"path", DisplayPath(*path, o_.workspace)},
                   {"evidence", c.evidence},
                   {"decision", grounded.ok() ? "allow" : "deny"}};
    if (!grounded.ok()) detail["reason"] = grounded.ToString();
    RecordGateEvent(tc.agent_id, tc.message_id, "evidence", id,
                    detail.dump(-1, ' ', false, json::error_handler_t::replace));
    if (!grounded.ok()) {
      EndHere(id, v1::TOOL_STATUS_REJECTED, grounded);
      return;
    }
  }
  c.write_path = *path;
  std::deque<std::string>& queue = write_queues_[*path];
  queue.push_back(id);
  if (queue.size() == 1) DispatchNextWrite(*path);
}

void Coordinator::Dispatch(Call& c) {
  // Gate 7: what runs on a worker passes its breakers first.
  Status admitted = AdmitThroughBreakers(c);
  if (!admitted.ok()) return EndHere(c.call.execution_id, v1::TOOL_STATUS_REJECTED, admitted);
  if (UsesLane(c)) {
    lane_waiting_.push_back(c.call.execution_id);
    return PumpLane();
  }
  DispatchNow(c);
}

void Coordinator::DispatchNow(Call& c) {
  if (UsesLane(c)) EnterLane(c);
  timespec wall{}, coarse{};
  clock_gettime(CLOCK_REALTIME, &wall);
  clock_gettime(CLOCK_REALTIME_COARSE, &coarse);
  c.dispatched_wall_ns = int64_t{wall.tv_sec} * 1'000'000'000 + wall.tv_nsec;
  c.dispatched_coarse_ns = int64_t{coarse.tv_sec} * 1'000'000'000 + coarse.tv_nsec;
  // A command that may write: the tree before it, and what the protected
  // files hold now.
  if (TracksChanges(c)) StartTracking(c);
  c.start_change = change_count_;
  if (CanWriteWorkspace(c)) {
    if (!protected_index_) protected_index_ = std::make_unique<ProtectedIndex>(o_.workspace);
    bool refreshed = RefreshProtectedIndex(c);
    if (const WorkspaceFiles* ws = WorkspaceLayer()) {
      c.protected_before =
          std::make_unique<ProtectedSnapshot>(SnapshotProtected(*ws, protected_index_.get(), refreshed));
    }
  }
  pool_.Submit(c.call);
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
  // EditSymbol's evidence is the span's checksum, checked against the index
  // and the file (PrepareEditSymbol): the worker expects the file it saw.
  Status gate = Status::OK();
  if (c.call.tool == kEditSymbolTool) {
    expect.set_sha256(c.span_file_sha256);
    expect.set_full_read(true);
  } else {
    gate = CheckReadBeforeEdit(c.call.tool, c.write_path, o_.workspace, Agent(c.call.agent_id).cache.get(), &expect);
  }
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
  if (c.call.tool == kInitTool) return RunInitTool(c);
  Dispatch(c);
}

void Coordinator::EndHere(const std::string& id, int tool_status, const Status& why, const std::string& text,
                          int exit_reason) {
  v1::ToolResult r;
  r.set_execution_id(id);
  r.set_status(static_cast<v1::ToolStatus>(tool_status));
  r.set_exit_reason(static_cast<v1::ExitReason>(exit_reason));
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

void Coordinator::RunMemoryQuery(const std::string& id) {
  Call& c = calls_[id];
  AgentState& agent = Agent(c.call.agent_id);
  agent.memory_query_at = ++event_seq_;
  StatusOr<std::string> answer = odin::RunMemoryQuery(ledger_, session_id_, o_.workspace, c.call.arguments_json);
  if (!answer.ok()) return EndHere(id, v1::TOOL_STATUS_ERROR, answer.status());
  EndHere(id, v1::TOOL_STATUS_OK, Status::OK(), *answer + "\n");
}

Status Coordinator::CheckSafeguards(Call& c, std::optional<ApprovalNeed>* need) {
  const ToolCall& call = c.call;
  // odin exec runs the user's own command: no rules.
  if (*call.mode == CallMode::kExec) return Status::OK();
  if (call.tool == "ExecuteCommand") return CheckCommandRules(c, need);
  if (call.tool == kWebFetchTool) return CheckWebFetch(c, need);
  if (IsMcpPolicy(call.policy)) {
    // permissions name MCP tools as Claude Code does (mcp__SERVER, mcp__SERVER__TOOL).
    RuleVerdict v = JudgeToolName(call.tool, o_.command_rules);
    if (v.decision == RuleDecision::kAllow) return Status::OK();
    json detail = {{"decision", RuleDecisionName(v.decision)}, {"rule", v.rule}, {"tool", call.tool}};
    if (v.decision == RuleDecision::kDeny) {
      RecordGateEvent(call.agent_id, "", "tool_rule", call.execution_id,
                      detail.dump(-1, ' ', false, json::error_handler_t::replace));
      return Status::PermissionDenied(call.tool, v.reason + " (permissions.deny in odinconfig.json)");
    }
    *need = ApprovalNeed{call.tool + " " + call.arguments_json.substr(0, 200), v.reason, v.ask_keys,
                         detail.dump(-1, ' ', false, json::error_handler_t::replace)};
    return Status::OK();
  }
  return CheckOutsideRead(c, need);
}

Status Coordinator::CheckCommandRules(Call& c, std::optional<ApprovalNeed>* need) {
  const ToolCall& call = c.call;
  // The same parser as the worker's, on the same bytes: the gate judges
  // what will run. Arguments it cannot read are refused; none run unjudged.
  ASSIGN_OR_RETURN(CommandArgs args, ParseCommandArgs(call.arguments_json));
  // The command as a shell line: the script, or argv quoted word by word.
  std::string command = args.script.empty() ? ShellJoin(args.argv) : args.script;
  std::string cwd = args.cwd;
  if (!cwd.empty() && cwd[0] != '/') cwd = o_.workspace + "/" + cwd;
  RuleVerdict v = JudgeCommand(command, o_.command_rules, o_.workspace, cwd);
  c.call.read_only_view = v.only_reads && ReadOnlyViewUsable(c);
  if (v.decision == RuleDecision::kAllow) return Status::OK();
  json detail = {{"decision", RuleDecisionName(v.decision)}, {"rule", v.rule}, {"part", v.part}, {"reason", v.reason}};
  if (v.decision == RuleDecision::kDeny) {
    RecordGateEvent(call.agent_id, "", "command_rule", call.execution_id,
                    detail.dump(-1, ' ', false, json::error_handler_t::replace));
    // A rule's refusal names where the rule lives; a command too long or too
    // deep to read is refused by no rule.
    return Status::PermissionDenied("command",
                                    v.rule.empty() ? v.reason : v.reason + " (permissions.deny in odinconfig.json)");
  }
  *need = ApprovalNeed{command, v.reason, v.ask_keys, detail.dump(-1, ' ', false, json::error_handler_t::replace)};
  return Status::OK();
}

Status Coordinator::CheckOutsideRead(Call& c, std::optional<ApprovalNeed>* need) {
  const ToolCall& call = c.call;
  std::string given = ReadPathOf(call.tool, call.arguments_json);
  if (given.empty()) return Status::OK();
  StatusOr<std::string> inside = ResolveWorkspacePath(given, o_.workspace);
  if (inside.ok()) {
    std::string state = o_.workspace + "/.odin";
    if (*inside == state || inside->compare(0, state.size() + 1, state + "/") == 0 || *inside == StateDir() ||
        inside->starts_with(StateDir() + "/")) {
      return Status::PermissionDenied(given,
                                      "Odin's state directory (the ledger, sockets, tokens) is not open to "
                                      "the tools; memory_query reads the ledger");
    }
    return Status::OK();
  }
  StatusOr<std::string> where = ResolvePath(given, o_.workspace);
  if (!where.ok()) return Status::OK();  // the tool says what is wrong with it
  std::string reason =
      call.tool + " of " + given + (*where != given ? " (" + *where + ")" : "") + " reads outside the workspace";
  // For the session: reading in that directory, and below it.
  std::string dir = IsDirectory(*where) ? *where : DirName(*where);
  json detail = {{"decision", "ask"}, {"tool", call.tool}, {"path", *where}, {"reason", reason}};
  c.call.approved_outside_path = *where;  // sent only if the user approves
  *need = ApprovalNeed{
      call.tool + " " + *where, reason, {"read:" + dir}, detail.dump(-1, ' ', false, json::error_handler_t::replace)};
  return Status::OK();
}

Status Coordinator::AskApproval(Call& c, const ApprovalNeed& need, bool* wait) {
  const ToolCall& call = c.call;
  const std::string& what = need.what;
  const std::string& reason = need.reason;
  const std::vector<std::string>& keys = need.keys;
  json detail = ParseJson(need.detail_json);
  if (!detail.is_object()) detail = json::object();
  ApprovalGate::Decision decision = approvals_.Decide(keys, static_cast<bool>(on_approval_request));
  if (decision == ApprovalGate::Decision::kAskUser) {
    std::string key;
    for (const std::string& k : keys) key += (key.empty() ? "" : "\n") + k;
    c.approval_key = key;
    *wait = true;
    on_approval_request({call.execution_id, call.agent_id, what, reason});
    if (HasHooks(HookEvent::kNotification)) {
      json fields = {{"message", "Odin needs your permission: " + what + " (" + reason + ")"}};
      RunHooks({HookEvent::kNotification, call.agent_id, call.mode, call.execution_id, "",
                fields.dump(-1, ' ', false, json::error_handler_t::replace)},
               [](const HookOutcome&) {});
    }
    return Status::OK();
  }
  // --approval allow does not answer what only a rule or the user may allow.
  bool refused = decision == ApprovalGate::Decision::kDeniedByPolicy ||
                 (decision == ApprovalGate::Decision::kAllowedByPolicy && !need.policy_may_allow);
  detail["approval"] = refused && decision == ApprovalGate::Decision::kAllowedByPolicy
                           ? "denied: the approval policy allow does not cover it"
                           : ApprovalDecisionName(decision);
  RecordGateEvent(call.agent_id, "", "approval", call.execution_id,
                  detail.dump(-1, ' ', false, json::error_handler_t::replace));
  if (!refused) return Status::OK();
  if (!need.policy_may_allow) {
    return Status::PermissionDenied(call.tool, "needs approval: " + reason +
                                                   "; headless runs fetch only domains an allow rule names "
                                                   "(--approval allow does not cover WebFetch: a URL can carry "
                                                   "data out)");
  }
  return Status::PermissionDenied(call.tool == "ExecuteCommand" ? "command" : call.tool,
                                  "needs approval: " + reason +
                                      "; this run's approval policy is deny "
                                      "(odin -p --approval allow lets such calls run)");
}

bool Coordinator::AnswerApproval(const std::string& execution_id, ApprovalAnswer answer) {
  auto it = calls_.find(execution_id);
  if (it == calls_.end() || it->second.approval_key.empty()) return false;  // answered, or cancelled meanwhile
  Call& c = it->second;
  std::string key = std::move(c.approval_key);
  c.approval_key.clear();
  const char* how = answer == ApprovalAnswer::kOnce      ? "allowed once by the user"
                    : answer == ApprovalAnswer::kSession ? "allowed for the session by the user"
                                                         : "denied by the user";
  RecordGateEvent(c.call.agent_id, "", "approval", execution_id,
                  json({{"decision", "ask"}, {"approval", how}, {"key", key}})
                      .dump(-1, ' ', false, json::error_handler_t::replace));
  if (answer == ApprovalAnswer::kDeny) {
    EndHere(execution_id, v1::TOOL_STATUS_REJECTED,
            Status::PermissionDenied(c.call.tool == "ExecuteCommand" ? "command" : c.call.tool,
                                     "the user did not approve it"));
    return true;
  }
  if (answer == ApprovalAnswer::kSession) {
    std::vector<std::string> keys;
    for (size_t start = 0; start <= key.size();) {
      size_t end = key.find('\n', start);
      if (end == std::string::npos) end = key.size();
      keys.push_back(key.substr(start, end - start));
      start = end + 1;
    }
    approvals_.ApproveForSession(keys);
  }
  Proceed(c);
  return true;
}

Status Coordinator::CheckBlocked(const ToolCall& call) {
  // Only edit-mode work makes progress to stop; ask and plan change nothing.
  if (*call.mode != CallMode::kEdit) return Status::OK();
  // A command is a mutation like an edit: what it changes is validated, so
  // it may be what fixes the errors.
  bool tracked_command = o_.track_changes && call.tool == kExecuteCommandTool;
  if (!tracked_command) RETURN_IF_ERROR(validation_.CheckBlocked(call.tool));
  if (o_.memory_forced && IsWriteTool(call.tool)) {
    const AgentState& agent = Agent(call.agent_id);
    if (agent.failed_at > agent.memory_query_at) {
      return Status::FailedPrecondition(
          call.tool,
          "a validation failed since your last memory_query. Run memory_query first (e.g. "
          "{\"query\": \"last_validation\"} or {\"query\": \"failed_attempts\"}) and base the next "
          "edit on what it returns");
    }
  }
  bool changes = IsWriteTool(call.tool) || tracked_command;
  if (o_.grounded_edits && changes && call.tool != kInitTool) {
    AgentState& agent = Agent(call.agent_id);
    if (!agent.corrective_pending.empty()) {
      return Status::FailedPrecondition(
          "strict profile: " + call.tool,
          "after a failed validation, one corrective change at a time: " + agent.corrective_pending +
              " has not been validated yet; wait for its verdict before the next change");
    }
    if (agent.failed_at > agent.corrected_failure) {
      agent.corrected_before = agent.corrected_failure;
      agent.corrected_failure = agent.failed_at;
      agent.corrective_pending = call.execution_id;
    }
  }
  return Status::OK();
}

std::vector<FileVerdict> Coordinator::Verdicts() const { return validation_.Verdicts(); }

std::vector<FileVerdict> Coordinator::Blocking() const { return validation_.Blocking(); }

void Coordinator::Cancel(const std::string& execution_id, int reason) {
  auto waiting = calls_.find(execution_id);
  if (waiting != calls_.end() && waiting->second.hooks_pending) {
    // Its hooks finish on their own; the call ends now.
    return EndHere(execution_id, v1::TOOL_STATUS_CANCELLED, Status::Cancelled("cancelled while its hooks ran"));
  }
  if (waiting != calls_.end() && waiting->second.mcp_waiting) {
    std::string server, tool;
    McpRegistry::SplitName(waiting->second.call.tool, &server, &tool);
    std::vector<std::string>& ids = mcp_waiting_[server];
    ids.erase(std::remove(ids.begin(), ids.end(), execution_id), ids.end());
    return EndHere(execution_id, v1::TOOL_STATUS_CANCELLED,
                   Status::Cancelled("cancelled while its MCP server was starting"));
  }
  if (waiting != calls_.end() && !waiting->second.approval_key.empty()) {
    waiting->second.approval_key.clear();
    return EndHere(execution_id, v1::TOOL_STATUS_CANCELLED, Status::Cancelled("cancelled while waiting for approval"));
  }
  for (auto& [id, c] : calls_) {
    if (c.held && c.held->write.call.execution_id == execution_id) {
      // The write is done and waits for its validation: stop that instead.
      std::string check = id;  // the entry may be gone when Cancel returns
      return pool_.Cancel(check, reason);
    }
  }
  auto lane = std::find(lane_waiting_.begin(), lane_waiting_.end(), execution_id);
  if (lane != lane_waiting_.end()) {
    // Still waiting for the writers' lane: it never reaches the pool.
    lane_waiting_.erase(lane);
    EndHere(execution_id, v1::TOOL_STATUS_CANCELLED, Status::Cancelled("cancelled before it started"), "",
            reason == v1::CANCEL_REASON_BUDGET ? v1::EXIT_REASON_BUDGET_EXCEEDED : v1::EXIT_REASON_KILLED);
    return PumpLane();  // what waited behind it
  }
  auto it = calls_.find(execution_id);
  if (it != calls_.end() && !it->second.write_path.empty()) {
    std::deque<std::string>& queue = write_queues_[it->second.write_path];
    auto pos = std::find(queue.begin(), queue.end(), execution_id);
    if (pos != queue.end() && pos != queue.begin()) {
      // Still waiting for its turn on the file: it never reaches the pool.
      queue.erase(pos);
      return EndHere(execution_id, v1::TOOL_STATUS_CANCELLED, Status::Cancelled("cancelled before it started"), "",
                     reason == v1::CANCEL_REASON_BUDGET ? v1::EXIT_REASON_BUDGET_EXCEEDED : v1::EXIT_REASON_KILLED);
    }
  }
  pool_.Cancel(execution_id, reason);
}

namespace {

// Why a result is the infrastructure's failure rather than the tool's own,
// or "" if it is not. A worker kind's breaker hears of crashes and sandbox
// failures; a tool's also of timeouts.
std::string InfrastructureFailure(const v1::ToolResult& r, bool worker_kind) {
  if (r.exit_reason() == v1::EXIT_REASON_SANDBOX_SETUP_FAILED) return "the sandbox could not be set up";
  if (r.status() == v1::TOOL_STATUS_CRASHED || r.exit_reason() == v1::EXIT_REASON_CRASHED) {
    return "the worker crashed";
  }
  if (!worker_kind && r.status() == v1::TOOL_STATUS_TIMED_OUT) return "timed out";
  return "";
}

}  // namespace

void Coordinator::RecordTransitions(CircuitBreaker& b, const std::string& agent_id, const std::string& execution_id) {
  for (const BreakerTransition& t : b.TakeTransitions()) {
    spdlog::info("circuit breaker {}: {} -> {} ({})", t.breaker, BreakerStateName(t.from), BreakerStateName(t.to),
                 t.reason);
    RecordGateEvent(agent_id, "", "breaker", execution_id,
                    json({{"breaker", t.breaker},
                          {"from", BreakerStateName(t.from)},
                          {"to", BreakerStateName(t.to)},
                          {"failures", t.failures},
                          {"reason", t.reason}})
                        .dump(-1, ' ', false, json::error_handler_t::replace));
  }
}

Status Coordinator::AdmitThroughBreakers(Call& c) {
  std::string kind = c.call.policy == WorkerPolicy::kLspHost        ? "lsp_host"
                     : c.call.policy == WorkerPolicy::kSubagent     ? "subagent"
                     : c.call.policy == WorkerPolicy::kReadonly     ? "readonly"
                     : c.call.policy == WorkerPolicy::kHookWritable ? "hook"
                     : c.call.policy == WorkerPolicy::kHookReadonly ? "hook_readonly"
                     : c.call.policy == WorkerPolicy::kHookHost     ? "hook_host"
                                                                    : "writable";
  SteadyTime now = clock_->Now();
  // An MCP server has a breaker of its own: its crashes and timeouts.
  std::string first = IsMcpPolicy(c.call.policy) ? "mcp:" + c.call.lane : "worker:" + kind;
  for (const std::string& name : {first, "tool:" + c.call.tool}) {
    CircuitBreaker& b = breakers_.try_emplace(name, name, o_.breakers).first->second;
    uint64_t trial = 0;
    if (!b.Allow(now, &trial)) {
      for (auto& [held, was_trial] : c.breakers) breakers_.at(held).OnAbandoned(was_trial);
      c.breakers.clear();
      int64_t left = std::max<int64_t>(ToMillis(b.reopens_at() - now), 0);
      std::string why = b.state() == BreakerState::kOpen
                            ? "open after " + std::to_string(b.consecutive_failures()) +
                                  " infrastructure failures in a row (the last: " + b.last_failure() +
                                  "); calls are refused for another " + std::to_string((left + 999) / 1000) + " s"
                            : "half-open: a trial call is running; others wait for its result";
      RecordTransitions(b, c.call.agent_id, c.call.execution_id);
      return Status::Unavailable("circuit breaker " + name, why);
    }
    c.breakers.push_back({name, trial});
    RecordTransitions(b, c.call.agent_id, c.call.execution_id);
  }
  return Status::OK();
}

void Coordinator::ReportToBreakers(Call& c, const v1::ToolResult& r) {
  SteadyTime now = clock_->Now();
  for (auto& [name, trial] : c.breakers) {
    CircuitBreaker& b = breakers_.at(name);
    bool worker_kind = name.rfind("worker:", 0) == 0;
    std::string failure = InfrastructureFailure(r, worker_kind);
    if (!failure.empty()) {
      b.OnFailure(now, failure, trial);
    } else if (r.status() == v1::TOOL_STATUS_CANCELLED || r.status() == v1::TOOL_STATUS_REJECTED ||
               (worker_kind && r.status() == v1::TOOL_STATUS_TIMED_OUT)) {
      b.OnAbandoned(trial);  // says nothing about the infrastructure
    } else {
      b.OnSuccess(trial);
    }
    RecordTransitions(b, c.call.agent_id, r.execution_id());
  }
  c.breakers.clear();
}

std::vector<BreakerInfo> Coordinator::Breakers() {
  std::vector<BreakerInfo> out;
  SteadyTime now = clock_->Now();
  for (auto& [name, b] : breakers_) {
    BreakerInfo info{name, b.state(), b.consecutive_failures(), b.last_failure(), 0};
    if (b.state() == BreakerState::kOpen) info.reopens_in_ms = std::max<int64_t>(ToMillis(b.reopens_at() - now), 0);
    out.push_back(info);
  }
  return out;
}

Status Coordinator::Poll(Duration max_wait, std::vector<PollFd>* extra_fds) {
  // The first look starts once there is nothing to do but wait: the model
  // request it was asked for is out, and the look does not delay it.
  if (look_wanted_ && max_wait > Duration::zero()) StartFirstLook();
  return pool_.Poll(max_wait, extra_fds);
}

Status Coordinator::OnDispatch(const ToolCall& call, const std::string& worker_id) {
  // A worker on another machine is recorded with its host: "w-...@NAME#N".
  std::string host;
  if (o_.pool.hosts != nullptr) {
    for (const WorkerPool::WorkerInfo& w : pool_.workers()) {
      if (w.id == worker_id) host = w.host;
    }
  }
  std::string worker = host.empty() ? worker_id : worker_id + "@" + host;
  ExecutionStart start{call.execution_id,        session_id_, call.agent_id,        call.tool,     call.arguments_json,
                       CallModeName(*call.mode), worker,      clock_->WallMillis(), call.parent_id};
  // The start is durable before the worker sees the call.
  RETURN_IF_ERROR(ledger_->AddExecutionStart(start).WithContext("cannot record the call"));
  Call& c = calls_[call.execution_id];
  c.started = true;
  c.dispatched_at = clock_->Now();
  c.remote = !host.empty();
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
  if (c.call.tool == kExecuteCommandTool && c.call.policy == WorkerPolicy::kWritable && o_.commands_network) {
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
    if (o_.grounded_edits && c.call.tool == kReadTool && r.files_read_size() > 0) {
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
  ReportToBreakers(c, r);
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
  // there), so a worker that died mid-command loses nothing either.
  // (One sent to the read-only view has no overlay to apply, whatever its
  // worker says.)
  std::optional<OverlayApplied> overlay;
  if (!c.call.read_only_view &&
      (r.overlay() ||
       (CanWriteWorkspace(c) && IsDirectory(JoinPath(CommandOverlayRoot(StateDir()), r.execution_id()) + "/u")))) {
    overlay = ApplyCommandOverlay(c);
  }
  // Whether it ran in the view is the coordinator's word, never the worker's.
  if (r.read_only_view() != c.call.read_only_view) {
    if (!amended) amended = r;
    amended->set_read_only_view(c.call.read_only_view);
  }
  if (c.call.read_only_view && r.no_read_only_view() && !view_absent_) {
    // Its worker has no view after all (it could not make one): the next
    // such command goes over an overlay, so asking again runs it.
    view_absent_ = true;
    spdlog::warn("a worker had no read-only view: commands that only read run over overlays from now on");
  }
  std::set<std::string> put_back = PutBackProtected(c, r, &amended);  // relative
  // A command that could write: what it changed, as the tracker sees it
  // (protected paths already put back).
  std::vector<ChangedFile> changed;
  if (overlay) {
    if (!amended) amended = r;
    NoteOverlayOutcome(c, *overlay, &*amended);
  }
  if (c.tracked) {
    ChangeSet changes;
    if (overlay) {
      // The overlay's change set is exactly the command's; what the
      // protected check put back did not stay.
      changes = std::move(overlay->changes);
      EraseChangesUnder(put_back, &changes);
    } else {
      // No tracker: odin exec over the overlay whose command never ran
      // (its worker ended before its Hello), since a worker without the
      // overlay makes the first look before its first command.
      if (tracker_) changes = tracker_->Rescan(/*full=*/c.remote);
      // One let in beside other commands that never ran (refused for want
      // of an overlay, its overlay not made): what changed is not its.
      if (c.lane_shared) {
        RecordExternal(c.call.agent_id, changes, &c.external);
        changes = ChangeSet();
      }
    }
    if (!amended) amended = r;
    // The strict profile: a model's command changes only files it cited
    // its analysis of; the others are put back before anything records them.
    if (o_.grounded_edits && c.call.tool != kHookTool) HoldToEvidence(c, &changes, &*amended);
    if (c.call.tool != kHookTool && !HoldOf(c.call.agent_id).rule.empty()) HoldCommand(c, &changes, &*amended);
    amended->set_changes_tracked(!changes.truncated);
    for (const std::string& path : c.external) {
      v1::FileChange* fc = amended->add_external_changes();
      fc->set_path(path);
      fc->set_change("modified");
    }
    if (!changes.empty()) {
      changed = RecordChanges(r.execution_id(), c.call.agent_id,
                              c.call.tool == kHookTool     ? "hook"
                              : IsMcpPolicy(c.call.policy) ? "mcp"
                                                           : "command",
                              changes, &*amended);
    }
  }
  const v1::ToolResult& result = amended ? *amended : r;
  if (!c.check_path.empty()) return FinishLspCheck(std::move(c), result);
  if (!c.write_path.empty() && result.status() == v1::TOOL_STATUS_OK && result.has_file_written()) {
    RecordFileToolWrite(c, result);
  }
  // What it changed is known to the tracker: the next writer may go.
  LeaveLane(c);
  ForgetOldChangeNumbers();
  Status recorded = RecordEnd(c, result);
  if (c.call.tool == kWebFetchTool) CacheWebFetch(c, result);
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
      agent != agents_.end() && agent->second.corrective_pending == r.execution_id()) {
    agent->second.corrective_pending.clear();  // validated
    // Refused or failed before it changed anything: the next one corrects.
    if (r.status() != v1::TOOL_STATUS_OK) agent->second.corrected_failure = agent->second.corrected_before;
  }
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
  c.call.policy = WorkerPolicy::kLspHost;
  v1::ToolResult no_validator;
  std::optional<ValidationGate::CheckRequest> request = validation_.PrepareCheck(path, c.check_content, &no_validator);
  if (!request) {
    // Nothing to ask the lsp host: the verdict is known here.
    no_validator.set_execution_id(id);
    return OnResult(no_validator);
  }
  c.call.timeout = request->timeout;
  c.call.validation_input = std::move(request->validation_input);
  // An open lsp-host breaker refuses it at once: the verdict is timed_out
  // (unverified), which blocks, rather than a wait for a host that fails.
  Dispatch(c);
}

void Coordinator::FinishLspCheck(Call c, v1::ToolResult r) {
  const std::string path = c.check_path;
  std::string mutation = c.held ? c.held->write.call.execution_id : c.validates_command;
  ValidationGate::Judgement j =
      validation_.Judge(path, c.check_content, mutation, c.held ? &c.held->result : nullptr, &r);
  if (j.failed) Agent(c.call.agent_id).failed_at = ++event_seq_;
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
  held.result.clear_content_before();  // the caller does not need it
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
  rv.call.arguments_json = json({{"content", j.content_before}, {"file_path", DisplayPath(path, o_.workspace)}})
                               .dump(-1, ' ', false, json::error_handler_t::replace);
  rv.call.agent_id = held.write.call.agent_id;
  rv.call.mode = held.write.call.mode;
  rv.call.policy = held.write.call.policy;
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
  std::deque<std::string>& queue = write_queues_[path];
  queue.insert(queue.empty() ? queue.end() : queue.begin() + 1, revert_id);
  // The write's turn on the file ends here, and the rollback's begins.
  Deliver(held.write, held.result, held.recorded);
}

void Coordinator::OnWorkerRefused(const std::string& peer, const std::string& reason) {
  // The peer's id is whatever the impostor chose: recorded as data, escaped.
  spdlog::warn("refused a worker connection: {}", reason);
  RecordGateEvent("main", "", "worker_refused", "",
                  json({{"peer", peer}, {"reason", reason}}).dump(-1, ' ', false, json::error_handler_t::replace));
}

}  // namespace odin
