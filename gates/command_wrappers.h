#pragma once
// Programs that run other programs: what a simple command's words finally
// run, read program by program.
//   - wrappers (env, timeout, nice, sudo, xargs, unshare, nsenter, su, ...)
//     are peeled off with their options, each option read as the wrapper's
//     getopt reads it (clusters like -Eu, attached values like -n5 or
//     -S'cmd', long options abbreviated to a unique prefix);
//   - shells' -c strings, eval's arguments, env -S, su/runuser/script -c,
//     flock -c, watch's arguments and find -exec ... ; are command lines run
//     by a shell: they are handed back to be parsed again;
//   - git's global options (-C, -c, -P, --git-dir=, ...) are skipped, so a
//     rule "git push" meets `git -C . push`; what -c sets is kept;
//   - interpreters' inline code (python -c, perl -e, awk's program, ...) is
//     kept for the rules to look into.
// Lists are never complete: the rules (command_rules.h) add a general check
// on every word, so a wrapper missing here still needs approval to run a
// denied program.
//
// Pure functions: no state, thread-compatible.

#include <string>
#include <vector>

namespace odin {

// One setting on git's command line: -c KEY=VALUE, --config-env KEY=VAR, or
// --exec-path=DIR (as key "--exec-path").
struct GitConfigSetting {
  std::string key;        // as written (git compares sections and names case-insensitively)
  std::string value;      // "" when from_env
  bool from_env = false;  // --config-env: the value is known only when it runs
};

struct ProgramChain {
  // Each program's words (name first), outermost first; the last one is what
  // finally runs. Never empty when the words were not.
  std::vector<std::vector<std::string>> programs;
  // The words that are not program names: options, their values, arguments.
  std::vector<std::string> operands;
  // Command lines the chain hands to a shell, to be parsed and judged too.
  std::vector<std::string> command_lines;
  std::vector<GitConfigSetting> git_config;
  std::vector<std::string> environment;  // NAME=VALUE given to env or sudo
  std::vector<std::string> inline_code;  // python -c, perl -e, node -e, awk's program, sed's script, ...
  // Non-empty: the chain runs something no rule can read beforehand (why).
  std::string dynamic;
  // xargs or parallel runs the last program: more arguments come from its
  // input (`echo push | xargs git` runs git push).
  bool input_arguments = false;
};

// Wrappers read in one chain at most (nice nice nice ...); past this the
// chain is dynamic.
constexpr size_t kMaxWrappers = 32;

// words: a simple command's words, quotes removed, its name first; known[i]:
// word i is known before it runs (no expansion). REQUIRES: same sizes.
ProgramChain ReadProgramChain(const std::vector<std::string>& words, const std::vector<bool>& known);

// The base name of a command word (/usr/bin/rm -> rm).
std::string ProgramBaseName(const std::string& word);

// Whether name is a shell (bash, sh, dash, zsh, ...).
bool IsShell(const std::string& base_name);

}  // namespace odin
