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

// "" if a rule from a Claude Code settings file is one Odin reads, else
// why not ("not a rule on a tool Odin or Claude Code has", "a parameter
// rule (run_in_background:...)..."): the loader names such rules once
// rather than letting a deny rule match nothing in silence.
std::string ToolRuleProblem(const std::string& rule);

// A command rule as the command judge matches it against a program's words.
struct CommandPattern {
  // Odin's own rule ("git push"): its words, a prefix of the program's,
  // each word exact or, ending in *, a prefix. A Bash rule's specifier,
  // quotes honoured: "Bash(npm run test:*)" and "Bash(npm run test *)" are
  // the prefix "npm run test"; "Bash" and "Bash(*)" are "*".
  std::vector<std::string> words;
  // "Bash(npm run build)": the program is these words and no more, as
  // Claude Code reads a rule without a trailing wildcard.
  bool exact = false;
  // "Bash(cp * /tmp/x)": a * inside spans words; the pattern the program's
  // words joined by spaces must match (fnmatch), followed by " *" too
  // unless exact. "" when none.
  std::string glob;
};
// The rule as a command rule, or nullopt for a rule on another tool.
std::optional<CommandPattern> CommandRulePattern(const std::string& rule);
// CommandRulePattern's words (none for a rule on another tool).
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

// The Read deny rules' paths as absolute patterns (PathRulePattern), for
// what the search tools leave out of their results.
std::vector<std::string> UnreadablePatterns(const CommandRules& rules, const std::string& workspace,
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

// Whether every simple command of command (read as shell) is one a rule
// names, by what finally runs in it:
// a tool list's Bash(...) entries (an agent's `tools`, a command's
// `allowed-tools`). A command that does not parse, or runs what is known
// only when it runs, is not.
// A program named by a path matches only a rule naming that path, and only
// run where the command starts (cwd: the call's, "" or "." for the
// workspace). Redirections that write, assignments (but Odin's own
// ODIN_ARG*), wrappers and git -c are outside any list.
bool CommandWithin(const std::string& command, const std::vector<std::string>& rules, const std::string& cwd = "");

// A tool list narrows what an agent may call: a custom agent's `tools`, a
// custom command's `allowed-tools`, in the rules' syntax ("Read", "Grep",
// "Bash(git add:*)", "mcp__github", "Agent(reviewer)"). The loop's own
// bookkeeping (TodoWrite, memory_query, the plan, the summariser) is always
// in it.
//
// Whether the tool named tool is offered at all (a rule names it; its
// specifier is judged per call).
bool ToolListOffers(const std::vector<std::string>& list, const std::string& tool);
// "" when the call is within the list, else one line saying why not.
// subject as JudgeToolRules'; command: an ExecuteCommand's line, each of
// whose simple commands a Bash(...) entry must name (CommandWithin).
std::string ToolListRefusal(const std::vector<std::string>& list, const std::string& tool,
                            const ToolRuleSubject& subject, const std::string& command, const std::string& workspace,
                            const std::string& home, const std::string& cwd = "");

}  // namespace odin
