#include "gates/safeguards.h"

#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/json_input.h"
#include "gates/tool_rules.h"
#include "odin/v1/worker.pb.h"
#include "tools/tool_input.h"
#include "tools/workspace_path.h"
#include "web/url_host.h"

namespace odin {
namespace {

using nlohmann::json;

std::string Dumped(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

void JudgeCommandRules(const ToolCall& call, WorkerRequest* request, const SafeguardContext& o, SafeguardVerdict* out) {
  // The typed input the worker runs (parsed at Submit): the gate judges
  // what will run. A call without one is refused; none runs unjudged.
  if (!request->typed || !request->typed->input().has_command()) {
    out->status = MissingInput(call.tool);
    return;
  }
  CommandArgs args = ArgsOf(request->typed->input().command());
  // The command as a shell line: the script, or argv quoted word by word.
  std::string command = args.script.empty() ? ShellJoin(args.argv) : args.script;
  std::string cwd = args.cwd;
  if (!cwd.empty() && cwd[0] != '/') cwd = o.workspace + "/" + cwd;
  RuleVerdict v = JudgeCommand(command, *o.rules, o.workspace, cwd);
  request->read_only_view = v.only_reads && o.read_only_view_usable;
  if (v.decision == RuleDecision::kAllow) return;
  json detail = {{"decision", RuleDecisionName(v.decision)}, {"rule", v.rule}, {"part", v.part}, {"reason", v.reason}};
  if (v.decision == RuleDecision::kDeny) {
    out->event = GateFinding{"command_rule", Dumped(detail)};
    // A rule's refusal names where the rule lives; a command too long or too
    // deep to read is refused by no rule.
    out->status = Status::PermissionDenied("command", v.rule.empty() ? v.reason : v.reason + " (permissions.deny)");
    return;
  }
  out->need = ApprovalNeed{command, v.reason, v.ask_keys, Dumped(detail)};
}

void JudgeFetch(const ToolCall& call, WorkerRequest* request, const SafeguardContext& o, SafeguardVerdict* out) {
  if (!request->typed || !request->typed->input().has_web_fetch()) {
    out->status = MissingInput(call.tool);
    return;
  }
  WebFetchArgs args = ArgsOf(request->typed->input().web_fetch());
  StatusOr<std::string> host = StrictUrlHost(args.url);
  if (!host.ok()) {
    out->status = host.status();
    return;
  }
  // The worker fetches only if libcurl reads the same host.
  v1::WebFetchOptions* options = request->typed->mutable_web_fetch();
  if (o.web_fetch_options != nullptr) *options = *o.web_fetch_options;
  options->set_expected_host(*host);
  out->web_url = args.url;
  RuleVerdict v = JudgeWebFetch(*host, *o.rules);
  json detail = {{"decision", RuleDecisionName(v.decision)}, {"rule", v.rule}, {"tool", call.tool}, {"host", *host}};
  if (v.decision == RuleDecision::kAllow) return;
  if (v.decision == RuleDecision::kDeny) {
    out->event = GateFinding{"web_rule", Dumped(detail)};
    out->status = Status::PermissionDenied(kWebFetchTool, v.reason + " (permissions.deny)");
    return;
  }
  ApprovalNeed n{"WebFetch " + args.url, v.reason, v.ask_keys, Dumped(detail)};
  n.policy_may_allow = false;
  out->need = std::move(n);
}

void JudgeMcpTool(const ToolCall& call, const SafeguardContext& o, SafeguardVerdict* out) {
  // permissions name MCP tools as Claude Code does (mcp__SERVER, mcp__SERVER__TOOL).
  RuleVerdict v = JudgeToolName(call.tool, *o.rules);
  if (call.tool == kReadMcpResourceTool) {
    // A resource is its server's: a rule on the whole server (mcp__SERVER,
    // mcp__SERVER__*, mcp__*) covers it too, the stricter rule winning.
    json args = ParseJson(call.arguments_json);
    std::string server = args.is_object() && args.contains("server") && args["server"].is_string()
                             ? args["server"].get<std::string>()
                             : "";
    RuleVerdict of_server = JudgeToolName(std::string(kMcpToolPrefix) + server + "__", *o.rules);
    auto rank = [](const RuleVerdict& r) {
      return r.decision == RuleDecision::kDeny ? 3 : r.decision == RuleDecision::kAsk ? 2 : r.rule.empty() ? 0 : 1;
    };
    if (rank(of_server) > rank(v)) v = of_server;
  }
  if (v.decision == RuleDecision::kAllow) return;
  json detail = {{"decision", RuleDecisionName(v.decision)}, {"rule", v.rule}, {"tool", call.tool}};
  if (v.decision == RuleDecision::kDeny) {
    out->event = GateFinding{"tool_rule", Dumped(detail)};
    out->status = Status::PermissionDenied(call.tool, v.reason + " (permissions.deny)");
    return;
  }
  out->need = ApprovalNeed{call.tool + " " + call.arguments_json.substr(0, 200), v.reason, v.ask_keys, Dumped(detail)};
}

// A built-in tool's call against the rules on it (tool_rules.h): a rule's
// deny refuses it, its ask asks. What it reads or writes is judged at the
// path as written, lexically; a link to a denied file is what the
// sandbox's masks are for (Read rules mask what they deny).
// What the rules on a built-in tool judge of its call: the path it reads or
// writes (as written, lexically), AgentTool's subagent type.
ToolRuleSubject SubjectOf(const ToolCall& call, const WorkerRequest& request, const SafeguardContext& o) {
  ToolRuleSubject subject{FindTool(call.tool), "", ""};
  if (subject.tool == nullptr) return subject;
  if (request.typed) {
    std::string given = ReadPathOf(request.typed->input());
    if (given.empty()) given = WritePathOf(request.typed->input());
    if (given.empty() && subject.tool->handler == ToolHandler::kSearch) given = ".";
    if (!given.empty()) subject.path = LexicalPath(given, o.workspace);
  }
  if (subject.tool->handler == ToolHandler::kSubagent) {
    json args = ParseJson(call.arguments_json);
    if (args.is_object() && args.contains("subagent_type") && args["subagent_type"].is_string()) {
      subject.subagent_type = args["subagent_type"].get<std::string>();
    }
  }
  return subject;
}

// A call outside its caller's tool list (a custom agent's tools, a custom
// command's allowed-tools) is refused, whatever else allows it.
void JudgeToolList(const std::vector<std::string>& list, const ToolCall& call, const WorkerRequest& request,
                   const SafeguardContext& o, SafeguardVerdict* out) {
  std::string command;
  std::string cwd;
  if (request.typed && request.typed->input().has_command()) {
    CommandArgs args = ArgsOf(request.typed->input().command());
    command = args.script.empty() ? ShellJoin(args.argv) : args.script;
    cwd = args.cwd;
  }
  ToolRuleSubject subject = SubjectOf(call, request, o);
  std::string why = ToolListRefusal(list, call.tool, subject, command, o.workspace, o.home, cwd);
  // A path is judged where it leads too: Read(docs/**) does not reach
  // docs/link -> ../private.txt (a write's landing place is judged again
  // once resolved, gates/call_gates.cc).
  if (why.empty() && !subject.path.empty()) {
    if (StatusOr<std::string> real = ResolvePath(subject.path, o.workspace); real.ok() && *real != subject.path) {
      subject.path = *real;
      why = ToolListRefusal(list, call.tool, subject, command, o.workspace, o.home, cwd);
    }
  }
  if (why.empty()) return;
  out->event = GateFinding{"tool_list", Dumped({{"tool", call.tool}, {"reason", why}})};
  out->status = Status::PermissionDenied(call.tool, why);
}

void JudgeBuiltinTool(const ToolCall& call, WorkerRequest* request, const SafeguardContext& o, SafeguardVerdict* out) {
  ToolRuleSubject subject = SubjectOf(call, *request, o);
  if (subject.tool == nullptr) return;
  // What a search shows leaves out what Read may not read, files made
  // since the sandbox's masks were laid included.
  if (request->typed && subject.tool->handler == ToolHandler::kSearch) {
    for (std::string& p : UnreadablePatterns(*o.rules, o.workspace, o.home)) request->typed->add_unreadable(p);
  }
  RuleVerdict v = JudgeToolRules(subject, *o.rules, o.workspace, o.home);
  if (v.decision == RuleDecision::kAllow) return;
  json detail = {{"decision", RuleDecisionName(v.decision)}, {"rule", v.rule}, {"tool", call.tool}};
  if (!subject.path.empty()) detail["path"] = subject.path;
  if (v.decision == RuleDecision::kDeny) {
    out->event = GateFinding{"tool_rule", Dumped(detail)};
    out->status = Status::PermissionDenied(call.tool, v.reason + " (permissions.deny)");
    return;
  }
  out->need =
      ApprovalNeed{call.tool + (subject.path.empty() ? "" : " " + subject.path), v.reason, v.ask_keys, Dumped(detail)};
}

void JudgeOutsideRead(const ToolCall& call, WorkerRequest* request, const SafeguardContext& o, SafeguardVerdict* out) {
  std::string given = request->typed ? ReadPathOf(request->typed->input()) : "";
  if (given.empty()) return;
  StatusOr<std::string> inside = ResolveWorkspacePath(given, o.workspace);
  StatusOr<std::string> where = inside.ok() ? inside : ResolvePath(given, o.workspace);
  if (!where.ok()) return;  // the tool says what is wrong with it
  // Odin's state, wherever the path led: the workspace's .odin, and the
  // state directory but for an isolated session's own view, which lies in
  // it (../../../odin.db leads from a view into the ledger).
  auto under = [&](const std::string& dir) { return !dir.empty() && (*where == dir || PathIsBelow(*where, dir)); };
  bool own_view = inside.ok() && PathIsBelow(o.workspace, o.state_dir);
  if (under(o.workspace + "/.odin") || (under(o.state_dir) && !own_view)) {
    out->status = Status::PermissionDenied(given,
                                           "Odin's state directory (the ledger, sockets, tokens) is not open to "
                                           "the tools; memory_query reads the ledger");
    return;
  }
  if (inside.ok()) return;
  std::string reason =
      call.tool + " of " + given + (*where != given ? " (" + *where + ")" : "") + " reads outside the workspace";
  // For the session: reading in that directory, and below it.
  std::string dir = IsDirectory(*where) ? *where : DirName(*where);
  json detail = {{"decision", "ask"}, {"tool", call.tool}, {"path", *where}, {"reason", reason}};
  request->approved_outside_path = *where;  // sent only if the user approves
  out->need = ApprovalNeed{call.tool + " " + *where, reason, {"read:" + dir}, Dumped(detail)};
}

}  // namespace

SafeguardVerdict JudgeSafeguards(const ToolCall& call, ToolHandler handler, WorkerRequest* request,
                                 const SafeguardContext& context) {
  SafeguardVerdict out;
  // odin exec runs the user's own command: no rules.
  if (*call.mode == CallMode::kExec) return out;
  for (const std::vector<std::string>& list : call.tool_lists) {
    JudgeToolList(list, call, *request, context, &out);
    if (!out.status.ok()) return out;
  }
  if (handler == ToolHandler::kCommand) {
    JudgeCommandRules(call, request, context, &out);
  } else if (handler == ToolHandler::kWebFetch) {
    JudgeFetch(call, request, context, &out);
  } else if (IsMcpPolicy(request->policy)) {
    JudgeMcpTool(call, context, &out);
  } else {
    JudgeBuiltinTool(call, request, context, &out);
    if (!out.status.ok()) return out;
    // An ask rule still meets the outside-read judgment: a refusal there
    // wins, and one approval answers both.
    std::optional<ApprovalNeed> asked = std::move(out.need);
    out.need.reset();
    JudgeOutsideRead(call, request, context, &out);
    if (asked && out.status.ok()) {
      if (out.need) {
        asked->reason += "; " + out.need->reason;
        asked->keys.insert(asked->keys.end(), out.need->keys.begin(), out.need->keys.end());
      }
      out.need = std::move(asked);
    }
  }
  return out;
}

}  // namespace odin
