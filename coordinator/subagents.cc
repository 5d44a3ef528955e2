// The coordinator's side of subagents (AgentTool): it turns an AgentTool call
// into a task for a subagent worker, makes the subagent's model calls (the
// worker has no network) and runs its tool calls through the same gates,
// budget and ledger as the main agent's, and ends whatever the subagent left
// running when its task ends.

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "base/ids.h"
#include "base/json_input.h"
#include "planner/tool_calls.h"
#include "planner/budget.h"
#include "coordinator/coordinator.h"
#include "tools/tool_input.h"
#include "ledger/handoff_facts.h"
#include "ledger/report.h"
#include "planner/tool_specs.h"
#include "odin/v1/worker.pb.h"
#include "tools/workspace_path.h"
#include "tools/tool_result.h"

namespace odin {

using nlohmann::json;

namespace {

ChatMessage FromTurn(const v1::ChatTurn& t) {
  ChatMessage m;
  switch (t.role()) {
    case v1::ChatTurn::ROLE_ASSISTANT: m.role = ChatMessage::Role::kAssistant; break;
    case v1::ChatTurn::ROLE_TOOL_RESULTS: m.role = ChatMessage::Role::kToolResults; break;
    default: m.role = ChatMessage::Role::kUser;
  }
  m.text = t.text();
  for (const v1::PlannedCall& c : t.tool_calls()) m.tool_calls.push_back({c.id(), c.name(), c.arguments_json()});
  for (const v1::PlannedResult& r : t.results()) m.results.push_back({r.call_id(), r.content(), r.is_error()});
  return m;
}

}  // namespace

bool Coordinator::IsSubagent(const std::string& agent_id) const {
  for (const auto& [id, s] : subagents_) {
    if (s.agent_id == agent_id) return true;
  }
  return false;
}

Status Coordinator::PrepareSubagent(Call& c, Budget* budget) {
  ToolCall& call = c.call;
  if (IsSubagent(call.agent_id)) {
    return Status::PermissionDenied("AgentTool", "a subagent cannot start subagents");
  }
  if (model_.llm == nullptr) {
    return Status::FailedPrecondition("AgentTool", "subagents need a model: they run only in agent sessions");
  }
  const json& args = *c.args;
  if (!args.is_object() || !args.contains("prompt") || !args["prompt"].is_string() ||
      args["prompt"].get<std::string>().empty()) {
    return Status::InvalidArgument("AgentTool", "prompt must be a non-empty string");
  }
  Mode parent_mode = AgentModeOf(*call.mode).value_or(Mode::kEdit);
  Mode mode = parent_mode;
  if (args.contains("mode")) {
    if (!args["mode"].is_string() || !ParseMode(args["mode"].get<std::string>(), &mode)) {
      return Status::InvalidArgument("AgentTool", "mode must be ask, plan or edit");
    }
    if (mode == Mode::kEdit && parent_mode != Mode::kEdit) {
      return Status::PermissionDenied(
          "AgentTool", std::string("a subagent cannot have more than your mode (") + ModeName(parent_mode) + ")");
    }
  }
  // A custom agent (.claude/agents/NAME.md): its body leads the prompt, its
  // tools narrow what the gate lets it call.
  const ClaudeDef* type = nullptr;
  if (args.contains("subagent_type")) {
    std::string name = args["subagent_type"].is_string() ? args["subagent_type"].get<std::string>() : "";
    type = model_.defs.FindAgent(name);
    // Claude Code's own general subagent is Odin's, unless a file names one so.
    bool general = name.empty() || name == "general-purpose";
    if (type == nullptr && !general) {
      std::string known;
      for (const ClaudeDef& d : model_.defs.agents) known += (known.empty() ? "" : ", ") + d.name;
      return Status::InvalidArgument("AgentTool", "no agent type '" + name.substr(0, 64) + "' (" +
                                                      (known.empty() ? std::string("there are none") : known) + ")");
    }
  }
  Subagent s;
  s.agent_id = NewId("sub");
  if (type != nullptr) {
    s.agent_type = type->name;
    if (type->tools) s.tool_lists.push_back(*type->tools);
  }
  // Started under a narrowed message: never more than it may use.
  s.tool_lists.insert(s.tool_lists.end(), call.tool_lists.begin(), call.tool_lists.end());
  s.parent_agent = call.agent_id;
  s.mode = mode;
  s.budget = budget;
  s.started_at_ms = clock_->WallMillis();
  v1::AgentTask task;
  task.set_agent_id(s.agent_id);
  task.set_mode(ModeName(s.mode));
  task.set_prompt(args["prompt"].get<std::string>());
  if (args.contains("description") && args["description"].is_string()) {
    task.set_description(args["description"].get<std::string>());
  }
  task.set_max_turns(static_cast<uint32_t>(std::max(model_.max_turns, 0)));
  task.set_instructions(model_.instructions);
  if (type != nullptr) {
    task.set_agent_type(type->name);
    task.set_agent_prompt(type->body);
  }
  task.set_context_window(static_cast<uint64_t>(model_.context_window));
  task.set_compact_at(model_.compact_at);
  const StallOptions& st = o_.subagent_stall;
  task.set_stall_enabled(st.enabled);
  task.set_stall_repeat(static_cast<uint32_t>(st.repeat));
  task.set_stall_failures(static_cast<uint32_t>(st.failures));
  task.set_stall_messages(static_cast<uint32_t>(st.messages));
  task.set_stall_alternation_steps(static_cast<uint32_t>(st.alternation_steps));
  task.set_stall_no_progress_turns(static_cast<uint32_t>(st.no_progress_turns));
  task.set_subagent_stop_hooks(HasHooks(HookEvent::kSubagentStop));
  task.set_max_stop_blocks(static_cast<uint32_t>(std::max(o_.hooks.max_stop_blocks, 0)));
  *Typed(c.request).mutable_agent_task() = std::move(task);
  c.request.policy = WorkerPolicy::kSubagent;
  if (call.timeout == Duration::zero()) call.timeout = o_.subagent_timeout;
  spdlog::debug("AgentTool {}: subagent {} in {} mode", call.execution_id, s.agent_id, ModeName(s.mode));
  subagents_[call.execution_id] = std::move(s);
  return Status::OK();
}

bool Coordinator::OnWorkerMessage(const std::string& worker_id, const std::string& execution_id,
                                  const v1::Envelope& env) {
  if (env.has_mcp_question()) return OnMcpQuestion(execution_id, env.mcp_question());
  auto it = subagents_.find(execution_id);
  if (it == subagents_.end()) return false;
  Subagent& s = it->second;
  switch (env.body_case()) {
    case v1::Envelope::kModelRequest: HandleModelRequest(execution_id, env.model_request()); return true;
    case v1::Envelope::kSubagentCall: HandleSubagentCall(execution_id, env.subagent_call()); return true;
    case v1::Envelope::kCancel: {
      // Its own calls only, by the ids it proposed; one that has ended
      // already is nothing to cancel.
      auto id = s.ids.find(env.cancel().execution_id());
      if (id == s.ids.end()) return false;
      if (subagent_calls_.count(id->second) != 0) Cancel(id->second, env.cancel().reason());
      return true;
    }
    case v1::Envelope::kGateEvent: {
      // Never the records the coordinator alone writes of a session: which
      // view it works in, what became of it, the attempts' verdicts.
      const std::string& kind = env.gate_event().kind();
      if (kind == "isolated_view" || kind == "view_applied" || kind == "view_discarded" || kind == "attempts_judged" ||
          kind == "session_forked") {
        spdlog::warn("subagent worker {} sent a gate event of kind {}, which only the coordinator records", worker_id,
                     kind);
        return false;
      }
      RecordGateEvent(s.agent_id, "", kind, env.gate_event().execution_id(), env.gate_event().detail_json());
      return true;
    }
    default: spdlog::warn("subagent worker {} sent an unexpected message", worker_id); return false;
  }
}

void Coordinator::HandleModelRequest(const std::string& execution_id, const v1::ModelRequest& mr) {
  Subagent& s = subagents_.at(execution_id);
  uint64_t request_id = mr.request_id();
  auto reply = [this, execution_id](v1::ModelResponse response) {
    v1::Envelope env;
    env.set_protocol_version(v1::PROTOCOL_VERSION_CURRENT);
    *env.mutable_model_response() = std::move(response);
    pool_.SendToHolder(execution_id, env);
  };
  if (model_.llm == nullptr) {
    v1::ModelResponse response;
    response.set_request_id(request_id);
    response.mutable_error()->set_code(v1::CODE_CANCELLED);
    response.mutable_error()->set_message("the session is ending");
    return reply(std::move(response));
  }
  if (s.budget != nullptr) {
    if (std::optional<std::string> limit = s.budget->Exceeded()) {
      v1::ModelResponse response;
      response.set_request_id(request_id);
      response.mutable_error()->set_code(v1::CODE_RESOURCE_EXHAUSTED);
      response.mutable_error()->set_message("budget exceeded: " + s.budget->Describe(*limit));
      return reply(std::move(response));
    }
  }
  Mode mode = s.mode;
  ChatRequest req;
  req.model = model_.model;
  // What the coordinator knows of the subagent goes in from here: its file
  // cache, todo list, and what is left of its parent's budget.
  bool plain = mr.handoff() || mr.utility();  // a summary or an answer over a page: no tools
  req.system = mr.system();
  for (const v1::ChatTurn& t : mr.messages()) req.messages.push_back(FromTurn(t));
  if (!plain) {
    // After the conversation, so what is before stays the same bytes (prompt caching).
    req.tail = PlannerContext(this, s.agent_id, o_.workspace, s.budget);
    req.cache_key = session_id_ + "/" + s.agent_id;
  }
  if (!plain) {
    req.tools = ToolSpecsForMode(mode, /*subagent=*/true);
    if (o_.commands_network && mode == Mode::kEdit) NoteCommandsHaveNetwork(&req.tools);
    if (o_.grounded_edits) AddEvidenceArgument(&req.tools);
    // MCP servers' tools, as the subagent's mode allows them.
    for (ToolSpec& extra : mcp_.registry().Specs(mode, [this](const std::string& s) { return McpServerDenied(s); })) {
      req.tools.push_back(std::move(extra));
    }
    ApplyClaudeDefs(&req.tools, model_.defs);
    for (const std::vector<std::string>& list : s.tool_lists) NarrowToolSpecs(list, &req.tools);
  }
  req.handoff = mr.handoff();
  if (req.handoff) AskForHandoffNoteSchema(&req);
  req.max_tokens = mr.max_tokens() > 0 ? static_cast<int>(mr.max_tokens()) : model_.max_tokens;
  auto handle = std::make_shared<uint64_t>(0);
  SteadyTime started = clock_->Now();
  int64_t started_wall = clock_->WallMillis();
  LlmClient::Callbacks cb;
  bool mr_handoff = mr.handoff();
  cb.on_done = [this, execution_id, request_id, handle, started, started_wall, reply,
                mr_handoff](const StatusOr<ChatResponse>& r) {
    auto it = subagents_.find(execution_id);
    if (it == subagents_.end()) return;
    Subagent& s = it->second;
    s.model_calls.erase(*handle);
    LlmCallRecord rec;
    rec.id = NewId("llm");
    rec.session_id = session_id_;
    rec.agent_id = s.agent_id;
    rec.role = mr_handoff ? "utility" : "subagent";
    rec.provider = model_.llm->provider();
    rec.model = model_.model;
    rec.started_at_ms = started_wall;
    rec.duration_us = std::chrono::duration_cast<microseconds>(clock_->Now() - started).count();
    rec = RecordModelCall(std::move(rec), r, model_.prices);
    v1::ModelResponse response;
    response.set_request_id(request_id);
    if (r.ok()) {
      response.set_text(r->text);
      for (const ToolCallRequest& c : r->tool_calls) {
        v1::PlannedCall* p = response.add_tool_calls();
        p->set_id(c.id);
        p->set_name(c.name);
        p->set_arguments_json(c.arguments_json);
      }
      response.set_truncated(r->truncated);
      response.set_stop_reason(r->stop_reason);
      response.set_input_tokens(static_cast<uint64_t>(r->usage.input_tokens));
      response.set_output_tokens(static_cast<uint64_t>(r->usage.output_tokens));
      response.set_attempts(static_cast<uint32_t>(r->attempts));
    } else {
      response.mutable_error()->set_code(static_cast<v1::Code>(r.status().code()));
      response.mutable_error()->set_message(r.status().message());
    }
    // A handoff's facts come even when its summary failed: the compaction
    // goes on without the summary.
    if (mr_handoff && ledger_ != nullptr) {
      StatusOr<std::string> facts = HandoffFacts(ledger_, session_id_, s.agent_id, o_.workspace);
      if (facts.ok()) response.set_handoff_facts(*facts);
    }
    if (ledger_ != nullptr) {
      Status st = ledger_->AddLlmCall(rec);
      if (!st.ok()) spdlog::error("{}", st.message());
    }
    // Subagents count against their parent's budget.
    if (s.budget != nullptr)
      s.budget->ChargeModel(rec.input_tokens + rec.output_tokens, std::max<int64_t>(rec.cost_microusd, 0));
    reply(std::move(response));
  };
  *handle = model_.llm->Start(req, std::move(cb));
  // The call may have ended already (a client that fails at once).
  auto again = subagents_.find(execution_id);
  if (again != subagents_.end()) again->second.model_calls[*handle] = true;
}

void Coordinator::HandleSubagentCall(const std::string& execution_id, const v1::SubagentCall& sc) {
  Subagent& s = subagents_.at(execution_id);
  if (sc.hook()) return RunSubagentStopHooks(execution_id, sc);
  ToolCall call;
  // Execution ids are ours to give: the subagent hears of the call under the
  // id it proposed, the ledger records it under a fresh one.
  call.execution_id = NewId("ex");
  std::string proposed = sc.execution_id();
  if (proposed.empty() || s.ids.count(proposed) != 0) proposed = call.execution_id;
  s.ids[proposed] = call.execution_id;
  call.tool = sc.tool();
  call.arguments_json = sc.arguments_json();
  call.agent_id = s.agent_id;
  call.mode = CallModeOf(s.mode);  // ours to say, not the subagent's
  call.tool_lists = s.tool_lists;  // and so are its tools
  call.parent_id = execution_id;
  call.budget = s.budget;
  // The deadline follows the configuration, as for the main agent's calls,
  // whatever the worker asked for.
  call.timeout = ToolTimeout(model_.tool_timeouts, call.tool, call.arguments_json);
  std::string id = call.execution_id;
  s.calls.push_back(id);
  subagent_calls_[id] = execution_id;
  CallHandlers handlers;
  handlers.on_done = [this, execution_id, proposed](const v1::ToolResult& r, const Status&) {
    subagent_calls_.erase(r.execution_id());
    if (subagents_.count(execution_id) == 0) return;  // its task ended meanwhile
    v1::Envelope env;
    env.set_protocol_version(v1::PROTOCOL_VERSION_CURRENT);
    v1::SubagentCallResult* out = env.mutable_subagent_call_result();
    *out->mutable_result() = r;
    // The subagent knows the call by the id it proposed.
    out->mutable_result()->set_execution_id(proposed);
    out->set_workspace_digest(digest_.Value());
    for (const FileVerdict& v : Blocking()) {
      v1::BlockingFile* b = out->add_blocking();
      b->set_path(v.path);
      b->set_mutation_id(v.mutation_id);
      b->set_check_id(v.check_id);
      b->set_status(VerdictName(v.status));
      b->set_summary(v.summary);
      b->set_reason(v.reason);
    }
    pool_.SendToHolder(execution_id, env);
  };
  Submit(std::move(call), std::move(handlers));
}

void Coordinator::RunSubagentStopHooks(const std::string& execution_id, const v1::SubagentCall& sc) {
  const Subagent& s = subagents_.at(execution_id);
  json fields = ParseJson(sc.arguments_json());
  if (!fields.is_object()) fields = json::object();
  // What the coordinator knows, not what the worker says.
  fields["agent_id"] = s.agent_id;
  std::string proposed = sc.execution_id();
  RunHooks({HookEvent::kSubagentStop, s.parent_agent, CallModeOf(s.mode), execution_id, "",
            fields.dump(-1, ' ', false, json::error_handler_t::replace)},
           [this, execution_id, proposed](const HookOutcome& o) {
             if (subagents_.count(execution_id) == 0) return;  // its task ended meanwhile
             v1::Envelope env;
             env.set_protocol_version(v1::PROTOCOL_VERSION_CURRENT);
             v1::ToolResult* r = env.mutable_subagent_call_result()->mutable_result();
             r->set_execution_id(proposed);
             r->set_status(v1::TOOL_STATUS_OK);
             r->set_output_json(json({{"decision", o.decision == HookOutcome::Decision::kBlock ? "block" : ""},
                                      {"reason", o.reason},
                                      {"stop", o.stop},
                                      {"stop_reason", o.stop_reason},
                                      {"execution_ids", o.execution_ids}})
                                    .dump(-1, ' ', false, json::error_handler_t::replace));
             pool_.SendToHolder(execution_id, env);
           });
}

void Coordinator::AbandonSubagents() {
  for (auto& [id, s] : subagents_) {
    if (model_.llm != nullptr) {
      for (const auto& [call, unused] : s.model_calls) model_.llm->Cancel(call);
    }
    s.model_calls.clear();
    s.budget = nullptr;
  }
  model_ = ModelAccess{};
}

void Coordinator::FinishSubagent(const std::string& execution_id, v1::ToolResult* r) {
  auto it = subagents_.find(execution_id);
  if (it == subagents_.end()) return;
  Subagent s = std::move(it->second);
  subagents_.erase(it);
  // Nothing of it outlives its task: model calls in flight are dropped, tool
  // calls still running are cancelled (their ends are recorded as usual).
  if (model_.llm != nullptr) {
    for (const auto& [id, unused] : s.model_calls) model_.llm->Cancel(id);
  }
  std::vector<std::string> running;
  for (const auto& [call, owner] : subagent_calls_) {
    if (owner == execution_id) running.push_back(call);
  }
  for (const std::string& id : running) Cancel(id, v1::CANCEL_REASON_USER);

  json out = ParseJson(r->output_json());
  if (!out.is_object()) out = json::object();
  out["agent_id"] = s.agent_id;
  out["mode"] = ModeName(s.mode);
  out["tool_calls"] = s.calls.size();
  std::string answer = r->output_head();
  if (r->status() == v1::TOOL_STATUS_CRASHED || r->status() == v1::TOOL_STATUS_TIMED_OUT ||
      r->status() == v1::TOOL_STATUS_CANCELLED) {
    std::string why = r->has_error() ? r->error().message() : ToolStatusName(r->status());
    answer = "The subagent " + s.agent_id + " did not finish: " + why + ".\n";
    out["status"] = ToolStatusName(r->status());
  }
  if (ledger_ != nullptr) {
    ReportInput in;
    in.session_id = session_id_;
    in.agent_id = s.agent_id;
    in.workspace = o_.workspace;
    in.status = out.value("status", ToolStatusName(r->status()));
    in.call_ids = s.calls;
    in.usage_agent = s.agent_id;
    in.started_at_ms = s.started_at_ms;
    in.wall_ms = clock_->WallMillis() - s.started_at_ms;
    StatusOr<Report> report = BuildReport(ledger_, in);
    if (report.ok()) {
      answer += "\n" + RenderReport(*report);
      json rj = ParseJson(ReportJson(*report));
      if (!rj.is_discarded()) {
        out["report"] = rj;
        json changed = json::array();
        if (rj.contains("files")) {
          for (const json& f : rj["files"]) changed.push_back(f.value("path", ""));
        }
        out["changed_files"] = changed;
      }
    }
  }
  r->set_output_head(answer);
  r->set_output_tail("");
  r->set_output_total_bytes(answer.size());
  r->set_output_json(out.dump(-1, ' ', false, json::error_handler_t::replace));
}

}  // namespace odin
