// Asking the user what the safeguards (gate 8, gates/safeguards.cc) left
// to them: AskApproval, AnswerApproval.

#include <sys/stat.h>

#include <algorithm>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "coordinator/coordinator.h"
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

// The longest command "always" may save: a longer one cannot be read whole
// in the prompt that offers it.
constexpr size_t kMaxSavedCommandBytes = 1000;

// What "always" saves for a call: exactly what the user was shown, and only
// where every reason to ask was a named ask rule (for WebFetch, its host):
// then the rules read the whole call. Never what no rule could judge (a
// value known only when it runs, a word that may run a denied program, a
// git alias), a path outside the workspace (a link may lead elsewhere
// later), a hook's question, a command run from another directory, one
// with substitutions, or one that does not fit on a line.
// args: the call's arguments as Submit parsed them (its arguments_json is
// their canonical text).
std::string SavedKeyOf(const ToolCall& call, const json* args, const ApprovalNeed& need) {
  if (need.keys.empty() || args == nullptr || !args->is_object()) return "";
  for (const std::string& k : need.keys) {
    if (k.rfind("rule:", 0) != 0 && k.rfind("webfetch:", 0) != 0) return "";
  }
  if (call.tool == kExecuteCommandTool) {
    const std::string& what = need.what;
    auto cwd = args->find("cwd");
    if (cwd != args->end() && *cwd != "" && *cwd != ".") return "";
    if (what.empty() || what.size() > kMaxSavedCommandBytes) return "";
    for (unsigned char ch : what) {
      if (ch < 0x20 || ch == 0x7f) return "";
    }
    for (const char* s : {"$(", "`", "<(", ">(", "${"}) {
      if (what.find(s) != std::string::npos) return "";
    }
    return "command:" + what;
  }
  return "call:" + call.tool + " " + call.arguments_json;
}

}  // namespace

std::optional<ApprovalAnswer> ParseApprovalAnswer(std::string_view word) {
  if (word == "once") return ApprovalAnswer::kOnce;
  if (word == "session") return ApprovalAnswer::kSession;
  if (word == "workspace") return ApprovalAnswer::kWorkspace;
  if (word == "always") return ApprovalAnswer::kAlways;
  if (word == "deny") return ApprovalAnswer::kDeny;
  return std::nullopt;
}

Status Coordinator::AskApproval(Call& c, const ApprovalNeed& need, bool* wait) {
  const ToolCall& call = c.call;
  const std::string& what = need.what;
  const std::string& reason = need.reason;
  const std::vector<std::string>& keys = need.keys;
  json detail = ParseJson(need.detail_json);
  if (!detail.is_object()) detail = json::object();
  std::string saved_key = SavedKeyOf(call, c.args.get(), need);
  ApprovalGate::Decision decision =
      approvals_.Decide(keys, saved_key, static_cast<bool>(on_approval_request) && !call.no_approval);
  if (decision == ApprovalGate::Decision::kAskUser) {
    std::string key;
    for (const std::string& k : keys) key += (key.empty() ? "" : "\n") + k;
    c.approval_key = key;
    c.approval_saved_key = saved_key;
    *wait = true;
    on_approval_request({call.execution_id, call.agent_id, what, reason, saved_key});
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
  if (AnswerProxyQuestion(execution_id, answer)) return true;
  auto it = calls_.find(execution_id);
  if (it == calls_.end() || it->second.approval_key.empty()) return false;  // answered, or cancelled meanwhile
  Call& c = it->second;
  std::string key = std::move(c.approval_key);
  c.approval_key.clear();
  std::string saved_key = std::move(c.approval_saved_key);
  c.approval_saved_key.clear();
  // The one path for every front end: what may not be saved is allowed for
  // the session instead, whoever answered "always".
  bool save = answer == ApprovalAnswer::kWorkspace || answer == ApprovalAnswer::kAlways;
  if (save && saved_key.empty()) answer = ApprovalAnswer::kSession;
  const char* how = answer == ApprovalAnswer::kOnce        ? "allowed once by the user"
                    : answer == ApprovalAnswer::kSession   ? "allowed for the session by the user"
                    : answer == ApprovalAnswer::kWorkspace ? "allowed always in this workspace by the user"
                    : answer == ApprovalAnswer::kAlways    ? "allowed always by the user"
                                                           : "denied by the user";
  json detail = {{"decision", "ask"}, {"approval", how}, {"key", key}};
  if (answer == ApprovalAnswer::kWorkspace || answer == ApprovalAnswer::kAlways) {
    detail["saved_key"] = saved_key;
    Status saved = on_approval_saved ? on_approval_saved(saved_key, answer == ApprovalAnswer::kAlways)
                                     : Status::FailedPrecondition("approval", "no store for saved approvals");
    // Exactly this call from now on (for this session, if the store
    // failed); never the broader keys a session answer would allow.
    approvals_.AddSaved({saved_key});
    if (!saved.ok()) detail["saved"] = "not saved: " + saved.message();
  }
  RecordGateEvent(c.call.agent_id, "", "approval", execution_id,
                  detail.dump(-1, ' ', false, json::error_handler_t::replace));
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
