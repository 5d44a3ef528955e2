// Rules that judge a call by what it names rather than by a command line:
// an MCP server's tools (mcp__SERVER__TOOL), WebFetch's domains
// (WebFetch(domain:HOST)) and the built-in tools' rules (tool_rules.h),
// written as Claude Code writes them.

#include "gates/tool_rules.h"

#include <fnmatch.h>

#include <algorithm>
#include <cctype>
#include <sstream>
#include <tuple>

#include "base/file_util.h"
#include "tools/exec_command.h"
#include "tools/workspace_path.h"

namespace odin {
namespace {

// Claude Code's tools Odin has no entry for, so that a rule on one is read
// as a tool rule (and matches nothing here) rather than as a program's name.
constexpr const char* kClaudeOnlyTools[] = {"Agent",      "WebSearch",          "NotebookEdit", "NotebookRead",
                                            "BashOutput", "KillShell",          "ExitPlanMode", "SlashCommand",
                                            "Skill",      "TaskOutput",         "TaskStop",     "ListMcpResourcesTool",
                                            "LSP",        "ReadMcpResourceTool"};

bool KnownToolName(const std::string& name) {
  if (FindTool(name) != nullptr || name.rfind(kMcpToolPrefix, 0) == 0) return true;
  for (const std::string& n : ToolsForMode(Mode::kEdit)) {
    const ToolInfo* t = FindTool(n);
    if (t != nullptr && t->claude_code_name != nullptr && name == t->claude_code_name) return true;
  }
  return std::find(std::begin(kClaudeOnlyTools), std::end(kClaudeOnlyTools), name) != std::end(kClaudeOnlyTools);
}

std::vector<std::string> Words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  std::string w;
  while (in >> w) out.push_back(w);
  return out;
}

std::vector<std::string> Segments(const std::string& path) {
  std::vector<std::string> out;
  std::stringstream in(path);
  std::string s;
  while (std::getline(in, s, '/')) {
    if (!s.empty()) out.push_back(s);
  }
  return out;
}

// Whether the pattern's segments from pi match the path's from si: "**"
// spans any number of segments, other segments match as fnmatch does.
bool SegmentsMatch(const std::vector<std::string>& p, size_t pi, const std::vector<std::string>& s, size_t si) {
  if (pi == p.size()) return si == s.size();
  if (p[pi] == "**") {
    for (size_t k = si; k <= s.size(); ++k) {
      if (SegmentsMatch(p, pi + 1, s, k)) return true;
    }
    return false;
  }
  return si < s.size() && fnmatch(p[pi].c_str(), s[si].c_str(), 0) == 0 && SegmentsMatch(p, pi + 1, s, si + 1);
}

// The rule's name covers the tool called: its own name, its Claude Code
// name, Claude Code's name for the family ("Read" for every tool that reads
// files, "Edit" and "Write" for every one that writes one) or Agent's old
// name.
bool NameCovers(const std::string& name, const ToolInfo& t) {
  if (name == t.name || (t.claude_code_name != nullptr && name == t.claude_code_name)) return true;
  if (t.tool_class == ToolClass::kRead && t.handler != ToolHandler::kTodoWrite && name == "Read") {
    return t.handler == ToolHandler::kFileRead || t.handler == ToolHandler::kSearch;
  }
  if (t.tool_class == ToolClass::kWrite) return name == "Edit" || name == "Write";
  if (t.handler == ToolHandler::kSubagent) return name == "Agent" || name == "Task";
  return false;
}

}  // namespace

std::optional<ToolRule> ParseToolRule(const std::string& rule) {
  size_t open = rule.find('(');
  std::string name = rule.substr(0, open);
  if (name.empty() || !(isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_')) return std::nullopt;
  for (char c : name) {
    if (!isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return std::nullopt;
  }
  if (open == std::string::npos) {
    if (!KnownToolName(name)) return std::nullopt;
    return ToolRule{name, std::nullopt};
  }
  if (!isupper(static_cast<unsigned char>(name[0])) || rule.back() != ')') return std::nullopt;
  return ToolRule{name, rule.substr(open + 1, rule.size() - open - 2)};
}

std::vector<std::string> CommandRuleWords(const std::string& rule) {
  std::optional<ToolRule> r = ParseToolRule(rule);
  if (!r) return Words(rule);
  if (r->tool != "Bash" && r->tool != kExecuteCommandTool) return {};
  std::string spec = r->specifier.value_or("*");
  if (spec.size() >= 2 && spec.compare(spec.size() - 2, 2, ":*") == 0) spec.resize(spec.size() - 2);
  std::vector<std::string> words = Words(spec);
  // "npm run test *": the prefix form, which every word rule is.
  if (words.size() > 1 && words.back() == "*") words.pop_back();
  return words;
}

std::string PathRulePattern(const std::string& specifier, const std::string& workspace, const std::string& home) {
  std::string spec = specifier;
  while (spec.size() > 1 && spec.back() == '/') spec.pop_back();  // a directory: what is below it too
  std::string pattern;
  if (spec.empty()) return "";
  if (spec.rfind("//", 0) == 0) {
    pattern = spec.substr(1);
  } else if (spec == "~" || spec.rfind("~/", 0) == 0) {
    if (home.empty()) return "";
    pattern = home + spec.substr(1);
  } else if (spec[0] == '/') {
    pattern = workspace + spec;
  } else if (spec.rfind("./", 0) == 0) {
    pattern = workspace + spec.substr(1);
  } else if (spec.find('/') != std::string::npos) {
    pattern = workspace + "/" + spec;
  } else {
    pattern = workspace + "/**/" + spec;  // gitignore: a bare name at any depth
  }
  return LexicalPath(pattern, "/");
}

bool PathRuleMatches(const std::string& specifier, const std::string& path, const std::string& workspace,
                     const std::string& home) {
  std::string pattern = PathRulePattern(specifier, workspace, home);
  if (pattern.empty()) return false;
  std::vector<std::string> p = Segments(pattern);
  std::vector<std::string> s = Segments(path);
  // The path itself, or a directory above it the rule names.
  for (size_t n = s.size(); n > 0; --n) {
    std::vector<std::string> prefix(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(n));
    if (SegmentsMatch(p, 0, prefix, 0)) return true;
  }
  return false;
}

RuleVerdict JudgeToolRules(const ToolRuleSubject& call, const CommandRules& rules, const std::string& workspace,
                           const std::string& home) {
  const ToolInfo& t = *call.tool;
  auto matches = [&](const std::string& text) {
    std::optional<ToolRule> r = ParseToolRule(text);
    if (!r || !NameCovers(r->tool, t)) return false;
    if (!r->specifier || *r->specifier == "*") return true;
    if (t.handler == ToolHandler::kSubagent) return *r->specifier == call.subagent_type;
    return !call.path.empty() && PathRuleMatches(*r->specifier, call.path, workspace, home);
  };
  for (auto [list, decision, what] : {std::tuple{&rules.deny, RuleDecision::kDeny, "denied"},
                                      {&rules.ask, RuleDecision::kAsk, "needs approval"},
                                      {&rules.allow, RuleDecision::kAllow, "allowed"}}) {
    for (const std::string& rule : *list) {
      if (!matches(rule)) continue;
      std::string subject = call.path.empty() ? std::string(t.name) : std::string(t.name) + " of " + call.path;
      RuleVerdict v{decision, rule, subject, subject + " " + what + " by rule '" + rule + "'", {}};
      if (decision == RuleDecision::kAsk) v.ask_keys = {"rule:" + rule};
      return v;
    }
  }
  return RuleVerdict();
}

RuleVerdict JudgeToolName(const std::string& tool, const CommandRules& rules) {
  auto matches = [&tool](const std::string& rule) {
    if (!rule.empty() && rule.back() == '*') return tool.compare(0, rule.size() - 1, rule, 0, rule.size() - 1) == 0;
    return tool == rule ||
           (rule.rfind("mcp__", 0) == 0 && rule.find("__", 5) == std::string::npos && tool.rfind(rule + "__", 0) == 0);
  };
  for (auto [list, decision, what] : {std::tuple{&rules.deny, RuleDecision::kDeny, "denied"},
                                      {&rules.ask, RuleDecision::kAsk, "needs approval"},
                                      {&rules.allow, RuleDecision::kAllow, "allowed"}}) {
    for (const std::string& rule : *list) {
      if (rule.empty() || !matches(rule)) continue;
      RuleVerdict v{decision, rule, tool, tool + " " + what + " by rule '" + rule + "'", {}};
      if (decision == RuleDecision::kAsk) v.ask_keys = {"rule:" + rule};
      return v;
    }
  }
  return RuleVerdict();
}

RuleVerdict JudgeWebFetch(const std::string& host, const CommandRules& rules) {
  auto matches = [&host](const std::string& rule) {
    if (rule == "WebFetch") return true;
    const std::string prefix = "WebFetch(domain:";
    if (rule.size() <= prefix.size() + 1 || rule.compare(0, prefix.size(), prefix) != 0 || rule.back() != ')') {
      return false;
    }
    std::string domain = rule.substr(prefix.size(), rule.size() - prefix.size() - 1);
    for (char& ch : domain) ch = static_cast<char>(tolower(static_cast<unsigned char>(ch)));
    if (domain.rfind("*.", 0) == 0) {
      std::string parent = domain.substr(1);  // ".example.com"
      return host.size() > parent.size() && host.compare(host.size() - parent.size(), parent.size(), parent) == 0;
    }
    return host == domain;
  };
  for (auto [list, decision, what] : {std::tuple{&rules.deny, RuleDecision::kDeny, "denied"},
                                      {&rules.ask, RuleDecision::kAsk, "needs approval"},
                                      {&rules.allow, RuleDecision::kAllow, "allowed"}}) {
    for (const std::string& rule : *list) {
      if (!matches(rule)) continue;
      RuleVerdict v{decision, rule, host, "fetching " + host + " " + what + " by rule '" + rule + "'", {}};
      if (decision == RuleDecision::kAsk) v.ask_keys = {"webfetch:" + host};
      return v;
    }
  }
  return RuleVerdict{
      RuleDecision::kAsk,
      "",
      host,
      "no permission rule allows fetching " + host + " (permissions.allow: WebFetch(domain:" + host + "))",
      {"webfetch:" + host}};
}

}  // namespace odin
