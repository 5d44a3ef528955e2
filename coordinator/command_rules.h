#pragma once
// Command rules: what a command the model wants to run may do, from
// odinconfig.json's "permissions" (deny, ask, allow). The command is split
// into its simple commands first (command_parser.h), and each part is checked
// against the deny rules, then the ask rules, then the allow rules; the first
// match decides the part. A part no rule matches runs, inside the sandbox.
// The command is denied if any part is, needs approval if any part does (or
// if it cannot be parsed, is too long, or computes a command's name when it
// runs), and runs otherwise.
//
// A rule is words: "rm", "git push", "npm run test*". Each word matches one
// word of the part exactly, or, ending in *, as a prefix; a command's name
// matches by its base name (/bin/rm is rm). A rule matches a part whose first
// words it matches.

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
  std::string rule;    // the rule that decided ("" when none did)
  std::string part;    // the simple command it decided on
  std::string reason;  // one line for the model and the ledger (the first reason to ask)
  // When asking: every reason's key ("rule:npm install*", "path:/etc/x",
  // "command:..."); an approval for the session must cover them all.
  std::vector<std::string> ask_keys;
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

// Whether path (absolute, or relative to cwd) lies outside the workspace and
// the sandbox's own places; resolved lexically (symlinks are the sandbox's
// business).
bool OutsideWorkspace(const std::string& path, const std::string& workspace, const std::string& cwd);

}  // namespace odin
