#include "gates/call_gates.h"

#include <nlohmann/json.hpp>

#include "gates/mode_gate.h"
#include "gates/read_before_edit_gate.h"
#include "gates/tool_rules.h"
#include "gates/validation_gate.h"
#include "odin/v1/worker.pb.h"
#include "planner/budget.h"
#include "tools/tool_input.h"

namespace odin {

using nlohmann::json;

Status TakeEvidence(const std::string& tool, json* parsed, std::vector<std::string>* evidence) {
  json& args = *parsed;
  if (!args.is_object() || !args.contains("evidence")) return Status::OK();
  const json& ids = args["evidence"];
  if (!ids.is_array() || ids.size() > 64) {
    return Status::InvalidArgument(tool, "\"evidence\" must be an array of at most 64 execution ids");
  }
  for (const json& id : ids) {
    if (!id.is_string() || id.get<std::string>().empty() || id.get<std::string>().size() > 64) {
      return Status::InvalidArgument(tool, "\"evidence\" must hold execution ids (strings)");
    }
    evidence->push_back(id.get<std::string>());
  }
  args.erase("evidence");
  return Status::OK();
}

Status CheckBlocked(const ToolCall& call, ToolHandler handler, const CallGateContext& o) {
  const bool writes = handler == ToolHandler::kFileWrite || handler == ToolHandler::kEditSymbol;
  // Only edit-mode work makes progress to stop; ask and plan change nothing.
  if (*call.mode != CallMode::kEdit) return Status::OK();
  // A command is a mutation like an edit: what it changes is validated, so
  // it may be what fixes the errors.
  bool tracked_command = o.track_changes && handler == ToolHandler::kCommand;
  if (!tracked_command && o.validation != nullptr) RETURN_IF_ERROR(o.validation->CheckBlocked(call.tool));
  if (o.memory_forced && (writes || handler == ToolHandler::kInit) &&
      o.agent()->failed_at > o.agent()->memory_query_at) {
    return Status::FailedPrecondition(
        call.tool,
        "a validation failed since your last memory_query. Run memory_query first (e.g. "
        "{\"query\": \"last_validation\"} or {\"query\": \"failed_attempts\"}) and base the next "
        "edit on what it returns");
  }
  if (o.grounded_edits && (writes || tracked_command)) {
    AgentProfileState& agent = *o.agent();
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

CallGateVerdict RunCallGates(ToolCall* call, ToolHandler handler, const Status& parsed, json* args,
                             const CallGateContext& o, WorkerRequest* request) {
  CallGateVerdict v;
  auto refuse = [&v](Status s, bool rejected = true) {
    v.status = std::move(s);
    v.rejected = rejected;
    return v;
  };
  // Gate 5: the run's budget, one choke point for every tool call.
  if (call->budget != nullptr && !call->budget->TryStartToolCall()) {
    std::string limit = call->budget->Exceeded().value_or("tool_calls");
    return refuse(Status::ResourceExhausted("budget exceeded", call->budget->Describe(limit)));
  }
  call->budget = nullptr;  // charged; the budget may end before the call does
  if (!parsed.ok()) return refuse(parsed.WithContext(call->tool));
  // The strict profile's evidence leaves the arguments here, before any
  // reader of them (the gates, the ledger's readers, the worker) sees them.
  if (o.grounded_edits &&
      (handler == ToolHandler::kFileWrite || handler == ToolHandler::kEditSymbol || handler == ToolHandler::kCommand)) {
    Status taken = TakeEvidence(call->tool, args, &v.evidence);
    if (!taken.ok()) return refuse(taken, /*rejected=*/false);
    call->arguments_json = args->dump(-1, ' ', false, json::error_handler_t::replace);
  }
  // Gate 1: the mode. (odin exec's "exec" mode runs only ExecuteCommand.)
  // An MCP server's tool: its registry knows which modes offer it.
  if (std::optional<Mode> mode = AgentModeOf(*call->mode)) {
    Status allowed = handler == ToolHandler::kMcp ? o.mcp_mode(call->tool, *mode) : CheckMode(call->tool, *mode);
    if (!allowed.ok()) return refuse(allowed);
  }
  // Odin's own calls (a hook's run, an index batch, a references question,
  // an MCP listing) are made by the coordinator itself and never come
  // through here: the mode gate knows no such tool, and exec mode, which
  // skips it, refuses them here.
  if (handler == ToolHandler::kHook || handler == ToolHandler::kIndexParse || handler == ToolHandler::kLspReferences ||
      handler == ToolHandler::kMcpList) {
    return refuse(Status::PermissionDenied(call->tool, "is Odin's own call, not a tool anyone may ask for"));
  }
  if (handler == ToolHandler::kInit && !o.init_offered) {
    return refuse(Status::PermissionDenied(kInitTool,
                                           "is offered only during /init (odin init), to the main agent; "
                                           "ODIN.md is a protected path for every other write"));
  }
  // The typed input, from the tool's own parser: what the gates after these
  // and the worker read. Arguments it refuses end the call here, refused
  // where a gate judges them (a command, a fetch), else as the tool's error.
  StatusOr<v1::ToolInput> typed = ParseToolInput(call->tool, *args);
  if (!typed.ok()) {
    return refuse(typed.status(), handler == ToolHandler::kCommand || handler == ToolHandler::kWebFetch);
  }
  if (typed->kind_case() != v1::ToolInput::KIND_NOT_SET) {
    if (!request->typed) request->typed = std::make_shared<v1::ToolRequest>();
    *request->typed->mutable_input() = std::move(*typed);
  }
  if (handler == ToolHandler::kMcp || handler == ToolHandler::kMcpResource) {
    Status prepared = o.prepare_mcp();
    if (!prepared.ok()) return refuse(prepared);
  }
  Status blocked = CheckBlocked(*call, handler, o);
  if (!blocked.ok()) return refuse(blocked);
  // Gate 8: the safeguards (rules, outside reads), deciding allow, ask or deny.
  SafeguardVerdict guarded = JudgeSafeguards(*call, handler, request, o.safeguards);
  v.need = std::move(guarded.need);
  v.event = std::move(guarded.event);
  v.web_url = std::move(guarded.web_url);
  if (!guarded.status.ok()) return refuse(guarded.status);
  // A write's file, judged once here; it queues for its turn on that path.
  if (handler == ToolHandler::kFileWrite || handler == ToolHandler::kInit) {
    WriteTargetContext write = o.write;
    write.init = handler == ToolHandler::kInit;
    write.cited = v.evidence;
    WriteTargetVerdict target = JudgeWriteTarget(call->tool, request->typed->input(), write);
    if (target.event) v.event = std::move(target.event);
    if (!target.status.ok()) return refuse(target.status, target.rejected);
    v.write_path = std::move(target.path);
    // Judged where it lands too: Edit(./src/**) holds for lnk/x when lnk is
    // a link to src (the safeguards judged the path as written).
    if (Status landed = JudgeLandedWrite(*call, v.write_path, false, o.safeguards); !landed.ok()) {
      return refuse(landed);
    }
  }
  return v;
}

Status JudgeLandedWrite(const ToolCall& call, const std::string& path, bool ask_refuses, const SafeguardContext& o) {
  const ToolInfo* tool = FindTool(call.tool);
  if (tool == nullptr || o.rules == nullptr || path.empty()) return Status::OK();
  RuleVerdict landed = JudgeToolRules({tool, path, ""}, *o.rules, o.workspace, o.home);
  if (landed.decision == RuleDecision::kDeny) {
    return Status::PermissionDenied(call.tool, landed.reason + " (permissions.deny)");
  }
  if (landed.decision == RuleDecision::kAsk && ask_refuses) {
    return Status::PermissionDenied(
        call.tool, landed.reason + ", and " + call.tool + " cannot ask for approval: use EditTool (permissions.ask)");
  }
  for (const std::vector<std::string>& list : call.tool_lists) {
    std::string why = ToolListRefusal(list, call.tool, {tool, path, ""}, "", o.workspace, o.home);
    if (!why.empty()) return Status::PermissionDenied(call.tool, why);
  }
  return Status::OK();
}

TurnGateVerdict RunTurnGates(const ToolCall& call, ToolHandler handler, const std::string& write_path,
                             const std::string& span_sha256, const TurnGateContext& o, WorkerRequest* request,
                             BreakerHolds* held) {
  TurnGateVerdict v;
  if (!write_path.empty()) {
    v1::FileExpectation expect;
    if (handler == ToolHandler::kEditSymbol) {
      // Its evidence is the span's checksum, checked against the index and
      // the file (Coordinator::PrepareEditSymbol): the worker expects the
      // file it saw.
      expect.set_sha256(span_sha256);
      expect.set_full_read(true);
    } else {
      v.status = CheckReadBeforeEdit(call.tool, write_path, o.workspace, o.cache, &expect);
      if (!v.status.ok()) {
        v.rejected = v.status.code() == StatusCode::kFailedPrecondition;
        return v;
      }
    }
    FileExpectation& e = request->expect;
    e.set = true;
    e.must_not_exist = expect.must_not_exist();
    e.sha256 = expect.sha256();
    e.full_read = expect.full_read();
    for (const v1::LineRange& r : expect.read_ranges()) e.read_ranges.push_back({r.start(), r.end()});
  }
  // Gate 7: what runs on a worker passes its breakers.
  if (handler != ToolHandler::kInit) v.status = o.breakers->Admit(*request, call.agent_id, held);
  return v;
}

}  // namespace odin
