#include "config/claude_settings.h"

#include <nlohmann/json.hpp>

#include "base/json_input.h"
#include "gates/command_rules.h"
#include "gates/tool_rules.h"
#include "planner/hooks.h"

namespace odin {
namespace {

using nlohmann::json;

// Rewrites a path rule's "/x" (relative to the file's own root) to "//root/x".
std::string Rooted(const std::string& rule, const std::string& root) {
  std::optional<ToolRule> r = ParseToolRule(rule);
  if (root.empty() || !r || !r->specifier || r->tool == "Bash" || r->tool == "WebFetch" || r->tool == "Agent" ||
      r->tool == "Task") {
    return rule;
  }
  const std::string& spec = *r->specifier;
  if (spec.size() < 2 || spec[0] != '/' || spec[1] == '/') return rule;
  return r->tool + "(/" + root + spec + ")";
}

Status TakePermissions(const json& p, const std::string& path, const std::string& root, ClaudeSettings* out,
                       json* odin) {
  if (!p.is_object()) return Status::InvalidArgument(path, "permissions must be an object");
  for (auto it = p.begin(); it != p.end(); ++it) {
    const std::string& key = it.key();
    if (key != "allow" && key != "ask" && key != "deny") {
      out->skipped.push_back("permissions." + key);
      continue;
    }
    if (!it.value().is_array()) return Status::InvalidArgument(path, "permissions." + key + " must be an array");
    json rules = json::array();
    for (const json& r : it.value()) {
      if (!r.is_string()) {
        return Status::InvalidArgument(path, "permissions." + key + " must hold rules (strings)");
      }
      std::string rule = r.get<std::string>();
      if (std::string problem = ToolRuleProblem(rule); !problem.empty()) {
        out->skipped.push_back("permissions." + key + " '" + rule + "' (" + problem + ")");
        continue;
      }
      rules.push_back(Rooted(rule, root));
    }
    (*odin)["permissions"][key] = std::move(rules);
  }
  return Status::OK();
}

Status TakeHooks(const json& h, const std::string& path, ClaudeSettings* out, json* odin) {
  if (!h.is_object()) return Status::InvalidArgument(path, "hooks must be an object");
  for (auto ev = h.begin(); ev != h.end(); ++ev) {
    const std::string where = "hooks." + ev.key();
    if (!ParseHookEvent(ev.key())) {
      out->skipped.push_back(where + " (no such hook point in Odin)");
      continue;
    }
    if (!ev.value().is_array()) return Status::InvalidArgument(path, where + " must be an array");
    json groups = json::array();
    for (size_t g = 0; g < ev.value().size(); ++g) {
      const json& group = ev.value()[g];
      const std::string at = where + "[" + std::to_string(g) + "]";
      if (!group.is_object() || !group.contains("hooks") || !group["hooks"].is_array()) {
        return Status::InvalidArgument(path, at + " must be an object with a \"hooks\" array");
      }
      json taken = {{"hooks", json::array()}};
      if (group.contains("matcher")) {
        if (!group["matcher"].is_string()) return Status::InvalidArgument(path, at + ".matcher must be a string");
        taken["matcher"] = group["matcher"];
      }
      for (size_t i = 0; i < group["hooks"].size(); ++i) {
        const json& hook = group["hooks"][i];
        const std::string hat = at + ".hooks[" + std::to_string(i) + "]";
        if (!hook.is_object()) return Status::InvalidArgument(path, hat + " must be an object");
        std::string type = hook.value("type", "command");
        if (!hook.contains("type") || !hook["type"].is_string() || type != "command") {
          out->skipped.push_back(hat + " (type " + (hook.contains("type") ? hook["type"].dump() : "missing") + ")");
          continue;
        }
        if (!hook.contains("command") || !hook["command"].is_string() || hook["command"].get<std::string>().empty()) {
          return Status::InvalidArgument(path, hat + ".command must be a non-empty string");
        }
        json cmd = {{"type", "command"}, {"command", hook["command"]}};
        // "if" narrows when the hook runs: one Odin cannot read would run it
        // on every call (and its allow on every call), so the hook is left out.
        if (hook.contains("if")) {
          std::string problem =
              hook["if"].is_string() ? ToolRuleProblem(hook["if"].get<std::string>()) : std::string("not a string");
          if (!problem.empty() || !HookEventMatchesTools(*ParseHookEvent(ev.key()))) {
            out->skipped.push_back(hat + " (its \"if\" " + (problem.empty() ? "is for tool events" : problem) + ")");
            continue;
          }
          cmd["if"] = hook["if"];
        }
        for (auto f = hook.begin(); f != hook.end(); ++f) {
          const std::string& key = f.key();
          if (key == "type" || key == "command" || key == "if") continue;
          if (key == "timeout") {
            if (!f.value().is_number() || f.value().get<double>() < 1) {
              return Status::InvalidArgument(path, hat + ".timeout must be a number of seconds, at least 1");
            }
            cmd["timeout"] = static_cast<int>(f.value().get<double>());
          } else if (key == "args") {
            // The exec form: the program and its arguments, no shell.
            if (!f.value().is_array()) return Status::InvalidArgument(path, hat + ".args must be an array");
            std::vector<std::string> argv = {hook["command"].get<std::string>()};
            for (const json& a : f.value()) {
              if (!a.is_string()) return Status::InvalidArgument(path, hat + ".args must hold strings");
              argv.push_back(a.get<std::string>());
            }
            cmd["command"] = ShellJoin(argv);
          } else {
            out->skipped.push_back(hat + "." + key);
          }
        }
        taken["hooks"].push_back(std::move(cmd));
      }
      if (!taken["hooks"].empty()) groups.push_back(std::move(taken));
    }
    if (!groups.empty()) (*odin)["hooks"][ev.key()] = std::move(groups);
  }
  return Status::OK();
}

}  // namespace

StatusOr<ClaudeSettings> ReadClaudeSettings(const std::string& text, const std::string& path,
                                            const std::string& rules_root) {
  StatusOr<json> parsed = ParseJsonOrError(text, "settings");
  if (!parsed.ok()) return Status::InvalidArgument(path, parsed.status().message());
  json root = std::move(*parsed);
  if (!root.is_object()) return Status::InvalidArgument(path, "not a JSON object");
  ClaudeSettings out;
  json odin = json::object();
  for (auto it = root.begin(); it != root.end(); ++it) {
    const std::string& key = it.key();
    if (key == "$schema") continue;
    if (key == "permissions") {
      RETURN_IF_ERROR(TakePermissions(it.value(), path, rules_root, &out, &odin));
    } else if (key == "hooks") {
      RETURN_IF_ERROR(TakeHooks(it.value(), path, &out, &odin));
    } else {
      out.skipped.push_back(key);
    }
  }
  out.odin_json = odin.dump();
  return out;
}

}  // namespace odin
