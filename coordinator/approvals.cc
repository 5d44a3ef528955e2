#include "coordinator/coordinator.h"
#include "tools/tool_input.h"

// The checks before a call runs that may end in asking the user (gate 2's
// safeguards, the command rules, reads outside the workspace), and the
// asking itself: AskApproval, AnswerApproval.

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

Status Coordinator::CheckSafeguards(Call& c, std::optional<ApprovalNeed>* need) {
  const ToolCall& call = c.call;
  // odin exec runs the user's own command: no rules.
  if (*call.mode == CallMode::kExec) return Status::OK();
  if (c.handler() == ToolHandler::kCommand) return CheckCommandRules(c, need);
  if (c.handler() == ToolHandler::kWebFetch) return CheckWebFetch(c, need);
  if (IsMcpPolicy(c.request.policy)) {
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
  // The typed input the worker runs (parsed at Submit): the gate judges
  // what will run. A call without one is refused; none runs unjudged.
  if (!c.request.typed || !c.request.typed->input().has_command()) return MissingInput(call.tool);
  CommandArgs args = ArgsOf(c.request.typed->input().command());
  // The command as a shell line: the script, or argv quoted word by word.
  std::string command = args.script.empty() ? ShellJoin(args.argv) : args.script;
  std::string cwd = args.cwd;
  if (!cwd.empty() && cwd[0] != '/') cwd = o_.workspace + "/" + cwd;
  RuleVerdict v = JudgeCommand(command, o_.command_rules, o_.workspace, cwd);
  c.request.read_only_view = v.only_reads && ReadOnlyViewUsable(c);
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
  std::string given = c.request.typed ? ReadPathOf(c.request.typed->input()) : "";
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
  c.request.approved_outside_path = *where;  // sent only if the user approves
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
  return Status::PermissionDenied(c.shown_name(), "needs approval: " + reason +
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
            Status::PermissionDenied(c.shown_name(), "the user did not approve it"));
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

}  // namespace odin
