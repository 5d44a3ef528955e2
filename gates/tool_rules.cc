// Rules that judge a call by what it names rather than by a command line:
// an MCP server's tools (mcp__SERVER__TOOL) and WebFetch's domains
// (WebFetch(domain:HOST)), named as Claude Code names them.

#include <cctype>
#include <tuple>

#include "gates/command_rules.h"

namespace odin {

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
