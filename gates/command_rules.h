#pragma once
// Command rules: what a command the model wants to run may do, from
// odinconfig.json's "permissions" (deny, ask, allow). The command is split
// into its simple commands first (command_parser.h), each read program by
// program (command_wrappers.h), and each part is checked against the deny
// rules, then the ask rules, then the allow rules; the first match decides
// the part. A part no rule matches runs, inside the sandbox.
//
// A rule is words: "rm", "git push", "npm run test*". Each word matches one
// word of a program exactly, or, ending in *, as a prefix; a command's name
// matches by its base name (/bin/rm is rm). A rule matches a program whose
// first words it matches; every program of a part counts (`sudo rm` is sudo
// and rm; `git -C . push` is git push).
//
// The command is denied if a part is, or if configuration on its command line
// names a denied program (git -c core.pager='rm x', git -c alias.x='!rm',
// GIT_PAGER=rm, GIT_CONFIG_VALUE_0=rm). It needs approval if a part matches
// an ask rule, or:
//   - a later word of a part names a denied program or holds a command line
//     that runs one (`foo --exec rm`, `xargs -0 rm`, `ssh h 'rm x'`,
//     `--cmd=rm`): wrappers odin does not know still need approval;
//   - interpreter code names one (python -c 'os.system("rm x")');
//   - git -c sets an alias or anything that may name a program, or an
//     environment variable that names programs is set (PAGER, EDITOR,
//     GIT_SSH_COMMAND, LD_PRELOAD, ...), unless the value is "", cat, true or :;
//   - it computes a command's name when it runs, cannot be parsed, or is
//     longer than kMaxParsedCommandBytes;
//   - it names a path outside the workspace (cd's are followed; a cd to a
//     place known only when it runs makes every later path unknown).
// Commands the parser cannot read (command_parser.h: longer than
// kMaxReadableCommandBytes, nested deeper than kMaxShellNesting, or slower
// than kParseTimeBudget to parse) are refused outright (rule "").

#include <string>
#include <vector>

namespace odin {

struct CommandRules {
  std::vector<std::string> deny;
  std::vector<std::string> ask;
  std::vector<std::string> allow;
};

enum class RuleDecision { kAllow, kAsk, kDeny };
const char* RuleDecisionName(RuleDecision d);

struct RuleVerdict {
  RuleDecision decision = RuleDecision::kAllow;
  std::string rule;    // the rule that decided ("" when none did: a refusal no rule made)
  std::string part;    // the simple command it decided on
  std::string reason;  // one line for the model and the ledger (the first reason to ask)
  // When asking: every reason's key ("rule:npm install*", "path:/etc/x",
  // "command:..."); an approval for the session must cover them all.
  std::vector<std::string> ask_keys;
  // Not denied, and it only reads (read_only_commands.h): it may run in a
  // read-only view of the workspace.
  bool only_reads = false;
};

// argv as one shell command line, each word quoted, for the rules.
std::string ShellJoin(const std::vector<std::string>& argv);

// workspace (absolute; "" to skip the check): a part's argument or a
// redirection that names a path outside it needs approval, unless an allow
// rule vouches for the part. The sandbox's own places are not "outside":
// /tmp and /var/tmp (private), /dev, /proc. cwd is where relative paths start
// (the workspace if empty).
RuleVerdict JudgeCommand(const std::string& command, const CommandRules& rules, const std::string& workspace = "",
                         const std::string& cwd = "");

// Whether a command rule ("git push", "Bash(npm run test:*)") matches a
// program's words (the first by its base name).
bool CommandRuleMatches(const std::string& rule, const std::vector<std::string>& words);

// The rules on a tool known by name (an MCP server's mcp__SERVER__TOOL), as
// Claude Code writes them: a rule equal to the name, "mcp__SERVER" (every
// tool of that server), or a prefix ending in *. Deny, then ask, then allow;
// no rule: allow.
RuleVerdict JudgeToolName(const std::string& tool, const CommandRules& rules);

// A WebFetch of host (lower case) by the permission rules, as Claude Code
// names them: "WebFetch" (every domain), "WebFetch(domain:example.com)" (that
// host), "WebFetch(domain:*.example.com)" (its subdomains, not itself).
// Deny, then ask, then allow; no rule is kAsk (a fetch can carry data out in
// its URL, so an unknown domain is never allowed silently), with the key
// "webfetch:HOST".
RuleVerdict JudgeWebFetch(const std::string& host, const CommandRules& rules);

// Whether path (absolute, or relative to cwd) lies outside the workspace and
// the sandbox's own places; resolved lexically (symlinks are the sandbox's
// business). A path starting with ~ or $HOME is outside.
bool OutsideWorkspace(const std::string& path, const std::string& workspace, const std::string& cwd);

}  // namespace odin
