#pragma once
// Permission rules written as Claude Code writes them, so that a project's
// .claude/settings.json means here what it means there: "Tool" or
// "Tool(specifier)", beside Odin's own command rules ("rm", "git push").
//
//   Bash(npm run test:*)   a command rule: the words "npm run test" (a
//                          trailing ":*" or " *" is the prefix form Odin's
//                          word rules already are); Bash and Bash(*) are "*",
//                          every command
//   Read(./.env)           a path rule on the tools that read files (Read,
//                          Grep, Glob, LS); gitignore's forms: //abs,
//                          ~/in-home, /from-the-workspace, ./or/relative,
//                          and a bare name (.env) at any depth; a rule on a
//                          directory covers what is below it
//   Edit(src/**)           the same on every tool that writes a file
//                          (Write(...) too: a user who wrote it means it)
//   Agent(name)            a subagent type (Task(name) is the old name)
//   Read, Glob, WebSearch  a tool by its Claude Code or Odin name
//   WebFetch(domain:H), mcp__SERVER__TOOL: command_rules.h's JudgeWebFetch
//                          and JudgeToolName
//
// Rules are judged deny, then ask, then allow; the first match decides.

#include <optional>
#include <string>
#include <vector>

#include "gates/command_rules.h"
#include "tools/tool_catalog.h"

namespace odin {

struct ToolRule {
  std::string tool;                      // as written: "Bash", "Read", "EditTool"
  std::optional<std::string> specifier;  // what is between the parentheses
};

// The rule as a rule on a named tool, or nullopt for a command rule ("rm",
// "git push"). A tool rule is "Name(...)" with Name starting with a capital
// letter, or a bare name of a tool Odin or Claude Code has.
std::optional<ToolRule> ParseToolRule(const std::string& rule);

// The words a command rule matches: an Odin rule's own, a Bash rule's
// specifier's (without its trailing ":*" or " *"), ["*"] for Bash and
// Bash(*); none for a rule on any other tool.
std::vector<std::string> CommandRuleWords(const std::string& rule);

// A path rule's specifier as an absolute pattern ("./.env" is
// "/w/.env", ".env" is "/w/**/.env"), or "" when it names nothing (empty, or
// "~/x" without a home).
std::string PathRulePattern(const std::string& specifier, const std::string& workspace, const std::string& home);

// Whether a path rule's specifier (gitignore's forms, above) covers path
// (absolute, normalised), or a directory above it. workspace: where "/x",
// "./x" and "x" start; home: where "~/x" does ("" if unknown: such a rule
// matches nothing).
bool PathRuleMatches(const std::string& specifier, const std::string& path, const std::string& workspace,
                     const std::string& home);

// What a tool rule is judged on.
struct ToolRuleSubject {
  const ToolInfo* tool = nullptr;  // the built-in tool called
  std::string path;                // absolute: the file or directory it reads or writes ("" if none)
  std::string subagent_type;       // AgentTool's
};

// The rules on a built-in tool's call other than a command's or a fetch's:
// deny, then ask, then allow; no rule: kAllow with an empty rule.
RuleVerdict JudgeToolRules(const ToolRuleSubject& call, const CommandRules& rules, const std::string& workspace,
                           const std::string& home);

}  // namespace odin
