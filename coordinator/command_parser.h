#pragma once
// CommandParser: a shell command split into the simple commands it would
// run, so rules can judge each of them. Parsed with tree-sitter-bash, not
// with regular expressions:
//   - lists and pipelines (&&, ||, ;, |), subshells, groups, loops,
//     conditionals and function bodies: every simple command inside;
//   - $( ) and backticks: the commands inside are parts of their own;
//   - `bash -c STR`, `sh -c STR` and `eval ARGS`: STR (the args) parsed again;
//   - wrappers unwrapped: env, timeout, nice, nohup, xargs, sudo, doas,
//     command, exec, time, stdbuf, setsid, ionice, chroot-less nice helpers.
// A command whose name is not known before it runs ($CMD, $(echo rm)) is a
// part with `dynamic` set: no rule can vouch for it.

#include <string>
#include <vector>

#include "base/status.h"

namespace odin {

struct CommandPart {
  std::vector<std::string> words;  // the command's name (as written) and arguments, quotes removed
  std::string text;                // the source text of the simple command
  bool dynamic = false;            // the name is computed when it runs
};

struct ParsedCommand {
  std::vector<CommandPart> parts;
  std::vector<std::string> redirects;  // targets of redirections known before it runs (> file, < file)
  bool complete = true;  // false: the parser found a syntax error (the parts are a best effort)
};

// Commands longer than this are not parsed (they need approval).
constexpr size_t kMaxParsedCommandBytes = 10000;

// InvalidArgument if the command is too long.
StatusOr<ParsedCommand> ParseCommand(const std::string& command);
// The same, whatever its length (for deny rules, which hold regardless).
ParsedCommand ParseCommandUnchecked(const std::string& command);

}  // namespace odin
