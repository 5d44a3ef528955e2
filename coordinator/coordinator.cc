#include "coordinator/coordinator.h"

#include "tools/tool_input.h"

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
#include "ledger/memory_query.h"
#include "coordinator/coordinator_holds.h"
#include "gates/approval_gate.h"
#include "gates/mode_gate.h"
#include "gates/tool_rules.h"
#include "workspace/protected_paths.h"
#include "gates/read_before_edit_gate.h"
#include "gates/validation_gate.h"
#include "tools/tool_catalog.h"
#include "odin/v1/worker.pb.h"
#include "planner/tool_specs.h"
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
      mcp_(o_.mcp_servers, o_.mode, McpPort()),
      breakers_(o_.breakers, clock,
                [this](const BreakerTransition& t, const std::string& agent_id, const std::string& execution_id) {
                  spdlog::info("circuit breaker {}: {} -> {} ({})", t.breaker, BreakerStateName(t.from),
                               BreakerStateName(t.to), t.reason);
                  RecordGateEvent(agent_id, "", "breaker", execution_id,
                                  json({{"breaker", t.breaker},
                                        {"from", BreakerStateName(t.from)},
                                        {"to", BreakerStateName(t.to)},
                                        {"failures", t.failures},
                                        {"reason", t.reason}})
                                      .dump(-1, ' ', false, json::error_handler_t::replace));
                }),
      holds_([this](const std::string& agent_id) {
        // A subagent works under the hold of the agent that started it.
        for (const auto& [execution, s] : subagents_) {
          if (s.agent_id == agent_id) return s.parent_agent;
        }
        return std::string();
      }),
      web_pages_(o_.web_cache_ttl, clock) {}

// Calls still held end (as cancelled) while this object is whole: the pool's
// own destructor would report them into members already destroyed.
Coordinator::~Coordinator() {
  StopTracking();
  pool_.Shutdown(Duration::zero());
  // Removing a large overlay takes a while; a hung file system does not
  // hold the exit for good.
  removals_.WaitAll(std::chrono::seconds(30));
}

void Coordinator::FinishBeforeExit() {
  StopTracking();
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
  // A compaction's masked calls, and a rewind's taken-back ones, are no
  // longer in the conversation: what they read leaves the cache.
  if (kind == "compaction" || kind == "rewind") ForgetCompactedFiles(agent_id, detail_json);
  if (on_gate_event) on_gate_event(g);
}

void Coordinator::AppendGateEvent(const GateEvent& g) {
  if (ledger_ == nullptr) return;
  Status s = ledger_->AddGateEvent(g);
  LogLedgerWriteFailure(s);
}

v1::ToolRequest& Coordinator::Typed(WorkerRequest& request) {
  if (!request.typed) request.typed = std::make_shared<v1::ToolRequest>();
  return *request.typed;
}

std::string Coordinator::Submit(ToolCall call, CallHandlers handlers) {
  if (call.execution_id.empty()) call.execution_id = NewId("ex");
  if (call.agent_id.empty()) call.agent_id = o_.agent_id;
  if (!call.mode) call.mode = o_.mode;
  std::string id = call.execution_id;
  // The arguments are parsed here, once: recorded and compared in canonical
  // form, and read from here on as the parsed value (c.args) and its typed
  // input (tools/tool_input.h), never parsed again.
  auto args = std::make_shared<json>();
  Status canonical = ParseJsonValue(call.arguments_json, args.get());
  if (canonical.ok()) call.arguments_json = args->dump(-1, ' ', false, json::error_handler_t::replace);
  // Too deep to become a value: recorded as one JSON string, so that no
  // reader of the ledger meets the nesting (the call is refused below).
  if (!canonical.ok() && JsonTooDeep(call.arguments_json)) {
    call.arguments_json = json(call.arguments_json).dump(-1, ' ', false, json::error_handler_t::replace);
  }
  Call& c = calls_[id];
  c.call = std::move(call);
  c.handlers = std::move(handlers);
  const ToolCall& tc = c.call;
  const ToolHandler handler = c.handler();  // the registry's word on the tool, from here on
  // Ask and plan calls run where the workspace is read-only.
  c.request.policy =
      *tc.mode == CallMode::kAsk || *tc.mode == CallMode::kPlan ? WorkerPolicy::kReadonly : WorkerPolicy::kWritable;
  if (handler == ToolHandler::kWebFetch) c.request.policy = WorkerPolicy::kWeb;
  // A tool of an MCP server that is still starting: judged once its tools
  // are known (the server's listing ends within its startup timeout).
  // (Arguments that are not JSON are refused below, never held.)
  if (canonical.ok()) c.args = std::move(args);
  // A background command (background_commands.cc): judged like any other,
  // run by a worker of its own.
  if (handler == ToolHandler::kCommand && c.args) {
    StatusOr<CommandArgs> command = CommandArgsOf(*c.args);
    c.background = command.ok() && command->background;
  }
  if (canonical.ok() && mcp_.Wait(McpServers::ServerOf(c.call.tool, c.args.get()), id)) {
    c.mcp_waiting = true;
    return id;
  }
  Admit(c, canonical);
  return id;
}

void Coordinator::Admit(Call& c, const Status& canonical) {
  const std::string id = c.call.execution_id;
  const ToolCall& tc = c.call;
  const ToolHandler handler = c.handler();
  // A call boundary: what changed since by no call of ours is found now.
  DetectExternalChanges(tc.agent_id);

  if (handler == ToolHandler::kCommand) c.request.limits = o_.command_limits;
  if (c.background) {
    if (Status allowed = BackgroundAllowed(c); !allowed.ok()) {
      return EndHere(id, v1::TOOL_STATUS_REJECTED, allowed);
    }
    c.request.policy = WorkerPolicy::kBackground;
  }
  // The gates up to the safeguards, in order, in one step (gates/call_gates.h).
  Budget* run_budget = tc.budget;
  CallGateVerdict gated = RunCallGates(&c.call, handler, canonical, c.args.get(), GateContext(c), &c.request);
  c.evidence = std::move(gated.evidence);
  c.web_url = std::move(gated.web_url);
  c.write_path = std::move(gated.write_path);
  if (gated.event) {
    RecordGateEvent(tc.agent_id, gated.event->in_message ? tc.message_id : "", gated.event->kind, id,
                    gated.event->detail_json);
  }
  if (!gated.status.ok()) {
    return EndHere(id, gated.rejected ? v1::TOOL_STATUS_REJECTED : v1::TOOL_STATUS_ERROR, gated.status);
  }
  std::optional<ApprovalNeed> need = std::move(gated.need);
  c.run_budget = run_budget;
  if (!tc.internal && HasHooks(HookEvent::kPostToolUse, tc.tool)) WrapForPostToolUse(c);
  // PreToolUse hooks judge what the gates let through; their allow stands
  // in only for the user's answer to an approval (AfterPreToolUse).
  if (!tc.internal && HasHooks(HookEvent::kPreToolUse, tc.tool)) {
    c.hooks_pending = true;
    json fields = {{"tool_name", HookToolName(tc.tool)},
                   {"tool_input", HookToolInput(tc.tool, *c.args, o_.workspace)},
                   {"tool_use_id", id}};
    RunHooks({HookEvent::kPreToolUse, tc.agent_id, tc.mode, id, tc.tool,
              fields.dump(-1, ' ', false, json::error_handler_t::replace)},
             [this, id, need](const HookOutcome& o) { AfterPreToolUse(id, need, o); });
    return;
  }
  AfterPreToolUse(id, std::move(need), HookOutcome());
  return;
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
    return EndHere(
        id, v1::TOOL_STATUS_REJECTED,
        Status::PermissionDenied(c.shown_name(), "a PreToolUse hook refused it: " +
                                                     (reason.empty() ? std::string("no reason given") : reason)));
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
  // The registry's handler decides where the call goes: the coordinator
  // itself, the writers' queue, or a worker.
  switch (c.handler()) {
    case ToolHandler::kMemoryQuery: return RunMemoryQuery(id);
    case ToolHandler::kSkill: return RunSkill(id);
    case ToolHandler::kContextSummarizer: {
      // The agent loop compacts its conversation when this call's result is ok.
      StatusOr<std::string> focus = ContextSummarizerFocusOf(*c.args);
      if (!focus.ok()) return EndHere(id, v1::TOOL_STATUS_ERROR, focus.status());
      return EndHere(id, v1::TOOL_STATUS_OK, Status::OK(),
                     "The conversation will be compacted before your next request.\n");
    }
    case ToolHandler::kPlanUpdate: {
      // The agent loop revises its plan, and its critic judges it, when this
      // call's result is ok.
      Plan empty;
      StatusOr<Plan> plan = PlanOf(*c.args, &empty);
      if (!plan.ok()) return EndHere(id, v1::TOOL_STATUS_ERROR, plan.status().WithContext(tc.tool));
      return EndHere(id, v1::TOOL_STATUS_OK, Status::OK(), "The plan is revised.\n");
    }
    case ToolHandler::kIndexQuery: return Index().Wait(id);
    case ToolHandler::kTodoWrite: return RunTodoWrite(id);
    case ToolHandler::kCommandOutput: return RunCommandOutput(id);
    case ToolHandler::kStopCommand: return RunStopCommand(id);
    case ToolHandler::kMcpResources: {
      // The model's arguments: "server" is optional, and a string.
      const json* given = c.args && c.args->is_object() && c.args->contains("server") ? &(*c.args)["server"] : nullptr;
      if (given != nullptr && !given->is_null() && !given->is_string()) {
        return EndHere(id, v1::TOOL_STATUS_ERROR, Status::InvalidArgument(tc.tool, "server must be a string"));
      }
      std::string server = given != nullptr && given->is_string() ? given->get<std::string>() : "";
      StatusOr<std::string> listed =
          mcp_.registry().DescribeResources(server, [this](const std::string& s) { return McpServerDenied(s); });
      if (!listed.ok()) return EndHere(id, v1::TOOL_STATUS_ERROR, listed.status().WithContext(tc.tool));
      return EndHere(id, v1::TOOL_STATUS_OK, Status::OK(), *listed);
    }
    case ToolHandler::kSubagent: {
      Status prepared = PrepareSubagent(c, run_budget);
      if (!prepared.ok()) {
        return EndHere(
            id, prepared.code() == StatusCode::kPermissionDenied ? v1::TOOL_STATUS_REJECTED : v1::TOOL_STATUS_ERROR,
            prepared);
      }
      return Dispatch(c);
    }
    case ToolHandler::kWebFetch:
      // A page fetched within web_cache_ttl answers, recorded as a call of
      // its own that no worker ran.
      if (std::optional<v1::ToolResult> page = web_pages_.Answer(c.web_url, id)) return OnResult(*page);
      return Dispatch(c);
    case ToolHandler::kLspCheck: return ProceedLspCheck(c);
    case ToolHandler::kEditSymbol:
      // Its file and span come from the symbol index, brought up to date
      // first (index_calls.cc: PrepareEditSymbol, then QueueEditSymbolWrite).
      if (c.span_file_sha256.empty()) return Index().Wait(id);
      return QueueEditSymbolWrite(c);
    case ToolHandler::kFileWrite:
    case ToolHandler::kInit: return QueueWrite(c);
    case ToolHandler::kFileRead:
    case ToolHandler::kSearch:
    case ToolHandler::kCommand:
    case ToolHandler::kMcp:
    case ToolHandler::kMcpResource:
    case ToolHandler::kUnknown:
    case ToolHandler::kHook:
    case ToolHandler::kIndexParse:
    case ToolHandler::kLspReferences:
    case ToolHandler::kMcpList: return Dispatch(c);
  }
}

void Coordinator::ProceedLspCheck(Call& c) {
  const ToolCall& tc = c.call;
  const std::string id = tc.execution_id;
  const json& args = *c.args;
  std::string given = args.is_object() && args.contains("file_path") && args["file_path"].is_string()
                          ? args["file_path"].get<std::string>()
                          : "";
  StatusOr<std::string> path = ResolveWorkspacePath(given, o_.workspace);
  const WorkspaceFiles* files = WorkspaceLayer();
  StatusOr<std::string> content = !path.ok()         ? path.status()
                                  : files == nullptr ? Status::Unavailable(given, "the workspace cannot be opened")
                                                     : files->ReadFile(*path, kMaxFileBytes);
  if (!content.ok()) return EndHere(id, v1::TOOL_STATUS_ERROR, content.status().WithContext(tc.tool));
  SubmitLspCheck(id, *path, std::move(*content));
}

void Coordinator::QueueWrite(Call& c) {
  // One write per file at a time: later ones wait, and meet read-before-edit
  // only when their turn comes, against the file as the earlier write left
  // it (Dispatch).
  if (write_queues_.Push(c.write_path, c.call.execution_id)) DispatchNextWrite(c.write_path);
}

void Coordinator::QueueEditSymbolWrite(Call& c) {
  WriteTargetContext write = WriteContext(c);
  write.cited = c.evidence;
  WriteTargetVerdict target = JudgeWriteTarget(c.call.tool, Typed(c.request).input(), write);
  if (target.event) {
    RecordGateEvent(c.call.agent_id, target.event->in_message ? c.call.message_id : "", target.event->kind,
                    c.call.execution_id, target.event->detail_json);
  }
  if (!target.status.ok()) {
    return EndHere(c.call.execution_id, target.rejected ? v1::TOOL_STATUS_REJECTED : v1::TOOL_STATUS_ERROR,
                   target.status);
  }
  c.write_path = std::move(target.path);
  // Its file is known only now: the rules on where a write lands.
  if (Status landed = JudgeLandedWrite(c.call, c.write_path, true, GateContext(c).safeguards); !landed.ok()) {
    return EndHere(c.call.execution_id, v1::TOOL_STATUS_REJECTED, landed);
  }
  QueueWrite(c);
}

void Coordinator::Dispatch(Call& c) {
  // The worker's request takes what the call says of itself now.
  WorkerRequest& r = c.request;
  r.execution_id = c.call.execution_id;
  r.tool = c.call.tool;
  r.timeout = c.call.timeout;
  r.stream_limit_bytes = c.call.stream_limit_bytes;
  r.output_head_bytes = c.call.output_head_bytes;
  r.output_tail_bytes = c.call.output_tail_bytes;
  r.last_command = c.call.last_command;
  // The gates of its turn, once: a write's read-before-edit, the breakers.
  TurnGateContext turn;
  turn.workspace = o_.workspace;
  turn.cache = Agent(c.call.agent_id).cache.get();
  turn.breakers = &breakers_;
  TurnGateVerdict gated = RunTurnGates(c.call, c.handler(), c.write_path, c.span_file_sha256, turn, &r, &c.breakers);
  if (!gated.status.ok()) {
    // A write's end gives the next write on its file its turn.
    return EndHere(c.call.execution_id, gated.rejected ? v1::TOOL_STATUS_REJECTED : v1::TOOL_STATUS_ERROR,
                   gated.status);
  }
  if (c.handler() == ToolHandler::kInit) return RunInitTool(c);
  if (UsesLane(c)) {
    lane_.Wait(c.call.execution_id);
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
  // (A background command starting beside a command that writes in place:
  // what the tracker finds now is that command's, looked at when it ends.)
  if (TracksChanges(c) && c.background && tracker_ && lane_.WriterRunning()) {
    c.tracked = true;
  } else if (TracksChanges(c)) {
    StartTracking(c);
  }
  c.start_change = changes_.now();
  if (CanWriteWorkspace(c)) {
    // A command over an overlay of its own writes nothing in the workspace
    // itself: what it wrote lands through ApplyOverlayUpper, which keeps
    // protected paths aside. No snapshot, and no walk of the tree for the
    // protected index; it runs over an overlay or not at all (a worker
    // started since without one refuses it). odin exec's one command, sent
    // before its worker said, waits for that word (OnWorkerReady).
    // A command that runs on another machine is landed there by its host
    // agent, which the protected check (by stat) does not take at its
    // word: the snapshot is taken where hosts may run it.
    // A background command writes in the workspace itself (its worker has
    // no overlay), found by the tracker (background_commands.cc).
    const bool overlay = c.handler() == ToolHandler::kCommand && o_.overlay_commands && !c.background;
    if (overlay && capabilities_.overlays()) {
      c.request.needs_overlay = true;
      if (o_.pool.hosts != nullptr) SnapshotProtectedFor(c);
    } else if (overlay && o_.session_kind == "exec" && capabilities_.overlay_not_lost()) {
      c.protected_deferred = true;
    } else {
      SnapshotProtectedFor(c);
    }
  }
  if (c.background) StartBackground(c);
  // An HTTP MCP server's worker gets the user's token with every request
  // (the worker keeps the latest; a refreshed one replaces it).
  if (IsMcpPolicy(c.request.policy) && o_.mcp_authorizer != nullptr) {
    std::string header = o_.mcp_authorizer->Header(c.request.lane);
    if (!header.empty()) Typed(c.request).set_mcp_authorization(header);
  }
  pool_.Submit(c.request);
}

void Coordinator::SnapshotProtectedFor(Call& c) {
  c.protected_deferred = false;
  if (!protected_index_) protected_index_ = std::make_unique<ProtectedIndex>(o_.workspace);
  bool refreshed = RefreshProtectedIndex(c);
  if (const WorkspaceFiles* ws = WorkspaceLayer()) {
    c.protected_before = std::make_unique<ProtectedSnapshot>(SnapshotProtected(*ws, protected_index_.get(), refreshed));
  }
}

void Coordinator::DispatchNextWrite(const std::string& path) {
  if (std::optional<std::string> id = write_queues_.Front(path)) Dispatch(calls_[*id]);
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
  Status s = todos.Write(*c.args);
  if (!s.ok()) return EndHere(id, v1::TOOL_STATUS_ERROR, s);
  EndHere(id, v1::TOOL_STATUS_OK, Status::OK(), todos.Render());
}

void Coordinator::RunMemoryQuery(const std::string& id) {
  Call& c = calls_[id];
  AgentState& agent = Agent(c.call.agent_id);
  agent.profile.memory_query_at = ++event_seq_;
  StatusOr<std::string> answer = AnswerMemoryQuery(ledger_, session_id_, o_.workspace, *c.args);
  if (!answer.ok()) return EndHere(id, v1::TOOL_STATUS_ERROR, answer.status());
  EndHere(id, v1::TOOL_STATUS_OK, Status::OK(), *answer + "\n");
}

void Coordinator::RunSkill(const std::string& id) {
  Call& c = calls_[id];
  const json& args = *c.args;
  std::string name =
      args.is_object() && args.contains("skill") && args["skill"].is_string() ? args["skill"].get<std::string>() : "";
  const ClaudeDef* skill = model_.defs.FindSkill(name);
  if (skill == nullptr) {
    std::string known;
    for (const ClaudeDef& d : model_.defs.skills) known += (known.empty() ? "" : ", ") + d.name;
    return EndHere(
        id, v1::TOOL_STATUS_ERROR,
        Status::NotFound(kSkillTool, "no skill named '" + name.substr(0, 64) + "' (" +
                                         (known.empty() ? std::string("there are none") : "skills: " + known) + ")"));
  }
  // Its text as it was read at the start (and trusted); its files are read
  // and run through the tools, like any others.
  std::string dir = skill->dir;
  if (dir.starts_with(o_.workspace + "/")) dir = dir.substr(o_.workspace.size() + 1);
  std::string out = "Skill " + skill->name + " (" + skill->source + "):\n\n" + skill->body;
  if (!skill->files.empty()) {
    out += "\n\nIts files, in " + dir + "/ (Read them; run its scripts with ExecuteCommand):\n";
    for (const std::string& f : skill->files) out += "- " + dir + "/" + f + "\n";
  }
  EndHere(id, v1::TOOL_STATUS_OK, Status::OK(), out + "\n");
}

void Coordinator::NarrowToolSpecs(const std::vector<std::string>& list, std::vector<ToolSpec>* specs) const {
  std::erase_if(*specs, [&list](const ToolSpec& s) { return !ToolListOffers(list, s.name); });
}

bool Coordinator::CommandWithinList(const std::vector<std::string>& list, const std::string& command) const {
  return ToolListRefusal(list, kExecuteCommandTool, {FindTool(kExecuteCommandTool), "", ""}, command, o_.workspace, "")
      .empty();
}

CallGateContext Coordinator::GateContext(Call& c) {
  CallGateContext g;
  g.track_changes = o_.track_changes;
  g.memory_forced = o_.memory_forced;
  g.grounded_edits = o_.grounded_edits;
  g.init_offered = init_active_ && c.call.agent_id == o_.agent_id;
  g.validation = &validation_;
  g.agent = [this, id = c.call.agent_id] { return &Agent(id).profile; };
  g.mcp_mode = [this](const std::string& tool, Mode mode) { return mcp_.registry().CheckMode(tool, mode); };
  g.prepare_mcp = [this, &c] {
    // An MCP server's tool has no typed input: its arguments, checked at
    // Submit, pass through to the server as canonical JSON text. A
    // resource's read goes to the server it names, if that one has any.
    Typed(c.request).set_arguments_json(c.call.arguments_json);
    std::string server = McpServers::ServerOf(c.call.tool, c.args.get());
    if (c.handler() == ToolHandler::kMcpResource) {
      const json* uri = c.args && c.args->is_object() && c.args->contains("uri") ? &(*c.args)["uri"] : nullptr;
      if (server.empty() || uri == nullptr || !uri->is_string() || uri->get<std::string>().empty() ||
          uri->get<std::string>().size() > 4096) {
        return Status::InvalidArgument(kReadMcpResourceTool, "needs a server and a uri (4096 bytes at most)");
      }
      std::optional<Mode> mode = AgentModeOf(c.call.mode.value_or(o_.mode));
      RETURN_IF_ERROR(mcp_.registry().CheckResources(server, mode.value_or(Mode::kEdit)));
    }
    StatusOr<McpServers::Route> route = mcp_.RouteOf(server, c.call.mode.value_or(o_.mode));
    if (!route.ok()) return route.status();
    c.request.policy = route->policy;
    c.request.lane = route->lane;
    c.request.lane_concurrency = route->concurrency;
    if (c.call.timeout == Duration::zero()) c.call.timeout = route->timeout;
    return Status::OK();
  };
  g.safeguards.rules = &o_.command_rules;
  g.safeguards.workspace = o_.workspace;
  g.safeguards.state_dir = StateDir();
  g.safeguards.home = o_.home;
  g.safeguards.read_only_view_usable = ReadOnlyViewUsable(c);
  g.safeguards.web_fetch_options = o_.web_fetch_options.get();
  g.write = WriteContext(c);
  return g;
}

WriteTargetContext Coordinator::WriteContext(Call& c) {
  WriteTargetContext w;
  w.workspace = o_.workspace;
  w.grounded_edits = o_.grounded_edits;
  w.hold = [this, &c](const std::string& path) { return CheckHold(c, path); };
  w.covered = [this, &c](const std::string& path, const std::vector<std::string>& cited) {
    struct stat st {};
    return CheckEvidence(c, cited, path, lstat(path.c_str(), &st) == 0);
  };
  return w;
}

std::vector<FileVerdict> Coordinator::Verdicts() const { return validation_.Verdicts(); }

std::vector<FileVerdict> Coordinator::Blocking() const { return validation_.Blocking(); }

void Coordinator::Cancel(const std::string& execution_id, int reason) {
  auto waiting = calls_.find(execution_id);
  if (waiting != calls_.end() && jobs_.DropWaiter(execution_id)) {
    return EndHere(execution_id, v1::TOOL_STATUS_CANCELLED, Status::Cancelled("cancelled while it waited"));
  }
  if (waiting != calls_.end() && waiting->second.hooks_pending) {
    // Its hooks finish on their own; the call ends now.
    return EndHere(execution_id, v1::TOOL_STATUS_CANCELLED, Status::Cancelled("cancelled while its hooks ran"));
  }
  if (waiting != calls_.end() && waiting->second.mcp_waiting) {
    mcp_.Forget(McpServers::ServerOf(waiting->second.call.tool, waiting->second.args.get()), execution_id);
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
  if (lane_.Forget(execution_id)) {
    // Still waiting for the writers' lane: it never reaches the pool.
    EndHere(execution_id, v1::TOOL_STATUS_CANCELLED, Status::Cancelled("cancelled before it started"), "",
            reason == v1::CANCEL_REASON_BUDGET ? v1::EXIT_REASON_BUDGET_EXCEEDED : v1::EXIT_REASON_KILLED);
    return PumpLane();  // what waited behind it
  }
  auto it = calls_.find(execution_id);
  if (it != calls_.end() && !it->second.write_path.empty()) {
    if (write_queues_.ForgetWaiting(it->second.write_path, execution_id)) {
      // Still waiting for its turn on the file: it never reaches the pool.
      return EndHere(execution_id, v1::TOOL_STATUS_CANCELLED, Status::Cancelled("cancelled before it started"), "",
                     reason == v1::CANCEL_REASON_BUDGET ? v1::EXIT_REASON_BUDGET_EXCEEDED : v1::EXIT_REASON_KILLED);
    }
  }
  pool_.Cancel(execution_id, reason);
}

std::vector<BreakerInfo> Coordinator::Breakers() { return breakers_.Infos(); }

Status Coordinator::Poll(Duration max_wait, std::vector<PollFd>* extra_fds) {
  // The first look starts once there is nothing to do but wait: the model
  // request it was asked for is out, and the look does not delay it.
  if (look_wanted_ && max_wait > Duration::zero()) StartFirstLook();
  // A call waiting for a background command's end ends at its deadline.
  if (std::optional<SteadyTime> next = jobs_.NextDeadline()) {
    max_wait = std::clamp(std::chrono::duration_cast<Duration>(*next - clock_->Now()), Duration::zero(), max_wait);
  }
  // A token's refresh ends on a thread of its own: looked for often.
  if (o_.mcp_authorizer != nullptr && o_.mcp_authorizer->Poll())
    max_wait = std::min<Duration>(max_wait, milliseconds(20));
  // The commands' proxy's socket wakes the wait too: a question waits for
  // the user, a record for the ledger.
  std::vector<PollFd> own;
  std::vector<PollFd>* fds = extra_fds != nullptr ? extra_fds : &own;
  if (o_.commands_proxy_fd >= 0) fds->push_back({o_.commands_proxy_fd});
  Status polled = pool_.Poll(max_wait, fds);
  if (o_.commands_proxy_fd >= 0) fds->pop_back();
  ServiceProxy();
  AnswerDueJobWaiters();
  return polled;
}

Status Coordinator::OnDispatch(const WorkerRequest& request, const std::string& worker_id) {
  auto it = calls_.find(request.execution_id);
  if (it == calls_.end()) return Status::NotFound("call " + request.execution_id, "is not the coordinator's");
  Call& c = it->second;
  const ToolCall& call = c.call;
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
  c.started = true;
  c.dispatched_at = clock_->Now();
  c.remote = !host.empty();
  return Status::OK();
}

void Coordinator::OnProgress(const v1::ToolProgress& p) {
  auto it = calls_.find(p.execution_id());
  if (it == calls_.end()) return;
  Call& c = it->second;
  if (c.background && !c.answered && p.event_case() == v1::ToolProgress::kStartedPgid) {
    return AnswerBackgroundStart(c);
  }
  // Once answered, its output is the job's, read with CommandOutput.
  if (c.answered && p.has_output()) jobs_.Output(c.call.execution_id, p.output().data());
  if (p.has_output() && c.output.size() < o_.artifact_cap_bytes) {
    const std::string& data = p.output().data();
    c.output.append(data, 0, std::min<size_t>(data.size(), o_.artifact_cap_bytes - c.output.size()));
  }
  if (c.handlers.on_progress) c.handlers.on_progress(p);
}

void Coordinator::OnWorkerRefused(const std::string& peer, const std::string& reason) {
  // The peer's id is whatever the impostor chose: recorded as data, escaped.
  spdlog::warn("refused a worker connection: {}", reason);
  RecordGateEvent("main", "", "worker_refused", "",
                  json({{"peer", peer}, {"reason", reason}}).dump(-1, ' ', false, json::error_handler_t::replace));
}

}  // namespace odin
