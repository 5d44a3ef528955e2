#include "planner/hooks.h"

#include "tools/tool_catalog.h"
#include "tools/workspace_path.h"

#include <algorithm>
#include <cctype>
#include <regex>
#include <set>

#include <nlohmann/json.hpp>
#include "base/json_input.h"
#include "tools/tool_catalog.h"

namespace odin {
namespace {

using nlohmann::json;

struct EventName {
  HookEvent event;
  const char* name;
};
constexpr EventName kEventNames[] = {
    {HookEvent::kSessionStart, "SessionStart"},
    {HookEvent::kUserPromptSubmit, "UserPromptSubmit"},
    {HookEvent::kPreToolUse, "PreToolUse"},
    {HookEvent::kPostToolUse, "PostToolUse"},
    {HookEvent::kStop, "Stop"},
    {HookEvent::kSubagentStop, "SubagentStop"},
    {HookEvent::kPreCompact, "PreCompact"},
    {HookEvent::kSessionEnd, "SessionEnd"},
    {HookEvent::kNotification, "Notification"},
};

bool CanBlock(HookEvent e) {
  return e == HookEvent::kPreToolUse || e == HookEvent::kPostToolUse || e == HookEvent::kUserPromptSubmit ||
         e == HookEvent::kStop || e == HookEvent::kSubagentStop;
}

std::string Trimmed(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

void Append(std::string* to, const std::string& text) {
  std::string t = Trimmed(text);
  if (t.empty()) return;
  if (!to->empty()) *to += "\n";
  *to += t;
}

int Rank(HookOutcome::Decision d) {
  switch (d) {
    case HookOutcome::Decision::kNone: return 0;
    case HookOutcome::Decision::kAllow: return 1;
    case HookOutcome::Decision::kAsk: return 2;
    case HookOutcome::Decision::kBlock: return 3;
  }
  return 0;
}

// A decision overrides the current one iff it ranks higher (deny > ask > allow).
void Decide(HookOutcome* out, HookOutcome::Decision d, const std::string& reason) {
  if (Rank(d) > Rank(out->decision)) {
    out->decision = d;
    out->reason.clear();
  }
  if (d == out->decision && d != HookOutcome::Decision::kAllow) Append(&out->reason, reason);
}

std::string Label(const HookRun& r) {
  std::string c = r.command.size() > 60 ? r.command.substr(0, 57) + "..." : r.command;
  return "hook `" + c + "`";
}

// Reads a hook's JSON answer. False if stdout is not a JSON object.
bool ReadJsonAnswer(HookEvent event, const HookRun& r, HookOutcome* out) {
  json j = ParseJson(r.stdout_text);
  if (!j.is_object()) return false;
  auto str = [](const json& o, const char* key) {
    auto it = o.find(key);
    return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  if (j.contains("continue") && j["continue"].is_boolean() && !j["continue"].get<bool>()) {
    out->stop = true;
    Append(&out->stop_reason, str(j, "stopReason"));
  }
  std::string system_message = str(j, "systemMessage");
  if (!system_message.empty()) out->notes.push_back(Label(r) + ": " + system_message);
  std::string decision = str(j, "decision");
  // A refusal without a reason gives the model the hook's systemMessage
  // (hookify's blocks say why only there): "no reason given" helps nobody.
  std::string reason = str(j, "reason");
  if (reason.empty()) reason = system_message;
  if (decision == "block" && CanBlock(event)) Decide(out, HookOutcome::Decision::kBlock, reason);
  if (decision == "approve" && event == HookEvent::kPreToolUse) Decide(out, HookOutcome::Decision::kAllow, reason);
  if (j.contains("hookSpecificOutput") && j["hookSpecificOutput"].is_object()) {
    const json& h = j["hookSpecificOutput"];
    std::string permission = str(h, "permissionDecision");
    std::string why = str(h, "permissionDecisionReason");
    if (why.empty() && permission != "allow") why = system_message;
    if (event == HookEvent::kPreToolUse) {
      if (permission == "deny") Decide(out, HookOutcome::Decision::kBlock, why);
      if (permission == "ask") Decide(out, HookOutcome::Decision::kAsk, why);
      if (permission == "allow") Decide(out, HookOutcome::Decision::kAllow, why);
    }
    Append(&out->additional_context, str(h, "additionalContext"));
  }
  return true;
}

}  // namespace

const char* HookEventName(HookEvent event) {
  for (const EventName& e : kEventNames) {
    if (e.event == event) return e.name;
  }
  return "?";
}

std::optional<HookEvent> ParseHookEvent(std::string_view name) {
  for (const EventName& e : kEventNames) {
    if (name == e.name) return e.event;
  }
  return std::nullopt;
}

bool HookEventMatchesTools(HookEvent event) {
  return event == HookEvent::kPreToolUse || event == HookEvent::kPostToolUse;
}

std::string ClaudeToolName(std::string_view odin_tool) {
  const ToolInfo* info = FindTool(odin_tool);
  return info != nullptr && info->claude_code_name != nullptr ? info->claude_code_name : "";
}

std::string HookToolName(const std::string& odin_tool) {
  std::string claude = ClaudeToolName(odin_tool);
  return claude.empty() ? odin_tool : claude;
}

nlohmann::json HookToolInput(const std::string& odin_tool, const nlohmann::json& args, const std::string& workspace) {
  nlohmann::json input = args.is_object() ? args : nlohmann::json::object();
  // Claude Code expands a relative path before hooks see it: an absolute,
  // normalised file_path (lexically: "sub/../x" is "x"; what a symlink
  // points at is the gates' to judge).
  for (const char* key : {"file_path", "notebook_path"}) {
    if (input.contains(key) && input[key].is_string() && !input[key].get<std::string>().empty()) {
      input[key] = LexicalPath(input[key].get<std::string>(), workspace);
    }
  }
  if (HandlerOf(odin_tool) == ToolHandler::kCommand && input.contains("timeout_seconds")) {
    if (input["timeout_seconds"].is_number()) {
      input["timeout"] = static_cast<int64_t>(input["timeout_seconds"].get<double>() * 1000);
    }
    input.erase("timeout_seconds");
  }
  // Claude Code fills in Edit's default before hooks see it.
  if (HookToolName(odin_tool) == "Edit" && !input.contains("replace_all")) input["replace_all"] = false;
  return input;
}

std::string HookMatcherError(const std::string& matcher) {
  if (matcher.size() > 1000) return "a matcher is at most 1000 characters";
  if (matcher.empty() || matcher == "*") return "";
  try {
    std::regex re(matcher, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    return "matcher '" + matcher + "' is not a valid regular expression";
  }
  return "";
}

bool HookMatcherMatches(const std::string& matcher, const std::string& tool) {
  if (matcher.empty() || matcher == "*") return true;
  std::string claude = ClaudeToolName(tool);
  // Claude Code's Agent was Task before 2.1: a matcher written then still matches.
  auto is = [&](std::string_view name) {
    return name == tool || (!claude.empty() && name == claude) ||
           (name == "Task" && HandlerOf(tool) == ToolHandler::kSubagent);
  };
  // As Claude Code reads a matcher: one of only letters, digits, "_", "-",
  // spaces, "," and "|" is a name or a list of names ("Edit|Write", "Read,
  // Grep"); anything else is an unanchored regular expression ("mcp__fs__.*",
  // and "Edit.*" matches NotebookEdit too).
  bool names = std::all_of(matcher.begin(), matcher.end(), [](unsigned char ch) {
    return std::isalnum(ch) || ch == '_' || ch == '-' || ch == ' ' || ch == ',' || ch == '|';
  });
  if (names) {
    size_t start = 0;
    while (start <= matcher.size()) {
      size_t end = matcher.find_first_of(",|", start);
      if (end == std::string::npos) end = matcher.size();
      std::string_view name(matcher.data() + start, end - start);
      while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
      while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
      if (!name.empty() && is(name)) return true;
      start = end + 1;
    }
    return false;
  }
  if (is(matcher)) return true;
  try {
    std::regex re(matcher, std::regex::ECMAScript);
    return std::regex_search(tool, re) || (!claude.empty() && std::regex_search(claude, re));
  } catch (const std::regex_error&) {
    return false;
  }
}

std::vector<HookCommand> HooksFor(const HooksConfig& config, HookEvent event, const std::string& tool) {
  std::vector<HookCommand> out;
  auto it = config.events.find(event);
  if (it == config.events.end()) return out;
  std::set<std::string> seen;
  for (const HookGroup& g : it->second) {
    if (HookEventMatchesTools(event) && !HookMatcherMatches(g.matcher, tool)) continue;
    for (const HookCommand& h : g.hooks) {
      // The same command configured twice runs once (Claude Code does the same).
      if (seen.insert(h.command + '\0' + (h.sandbox ? "1" : "0")).second) out.push_back(h);
    }
  }
  return out;
}

std::string DescribeHooks(const HooksConfig& config) {
  std::string out;
  for (const auto& [event, groups] : config.events) {
    for (const HookGroup& g : groups) {
      for (const HookCommand& h : g.hooks) {
        out += std::string(HookEventName(event));
        if (HookEventMatchesTools(event)) out += " [" + (g.matcher.empty() ? std::string("*") : g.matcher) + "]";
        out += " `" + h.command + "` (" + std::to_string(h.timeout_seconds) + " s, " +
               (h.sandbox ? "sandboxed" : "on the host") + "; " + h.source + ")\n";
      }
    }
  }
  if (out.empty()) return "no hooks\n";
  if (config.network) out += "hooks.network: hooks keep the host's network\n";
  return out;
}

HookOutcome CombineHookRuns(HookEvent event, const std::vector<HookRun>& runs) {
  HookOutcome out;
  for (const HookRun& r : runs) {
    if (!r.execution_id.empty()) out.execution_ids.push_back(r.execution_id);
    if (!r.ran || r.timed_out) {
      out.notes.push_back(Label(r) + (r.timed_out ? " timed out and was killed" : " did not run") +
                          (r.error.empty() || r.timed_out ? "" : ": " + r.error));
      continue;
    }
    if (r.exit_code == 2) {
      if (CanBlock(event)) {
        Decide(&out, HookOutcome::Decision::kBlock,
               Trimmed(r.stderr_text).empty() ? Label(r) + " blocked it (exit 2)" : r.stderr_text);
      } else {
        out.notes.push_back(Label(r) + " exited 2: " + Trimmed(r.stderr_text));
      }
      continue;
    }
    if (r.exit_code != 0) {
      std::string err = Trimmed(r.stderr_text);
      out.notes.push_back(Label(r) + " failed (exit " + std::to_string(r.exit_code) + ")" +
                          (err.empty() ? "" : ": " + err));
      continue;
    }
    std::string text = Trimmed(r.stdout_text);
    if (!text.empty() && text[0] == '{') {
      if (!ReadJsonAnswer(event, r, &out)) {
        out.notes.push_back(Label(r) + " printed malformed JSON; its output is ignored");
      }
      continue;
    }
    if (event == HookEvent::kSessionStart || event == HookEvent::kUserPromptSubmit) {
      Append(&out.additional_context, text);
    }
  }
  return out;
}

}  // namespace odin
