#pragma once
// CommandParser: a shell command split into the simple commands it would
// run, so rules can judge each of them. Parsed with tree-sitter-bash, not
// with regular expressions:
//   - lists and pipelines (&&, ||, ;, |), subshells, groups, loops,
//     conditionals and function bodies: every simple command inside;
//   - $( ), backticks and <( ): the commands inside are parts of their own;
//   - each simple command read program by program (command_wrappers.h):
//     wrappers peeled off, git's global options skipped, and command lines
//     handed to a shell (bash -c STR, eval ARGS, env -S STR, su -c STR,
//     find -exec ...) parsed again, up to kMaxNestedShells deep;
//   - words as the shell will see them: quotes and escapes removed, $'...'
//     decoded, {a,b} expanded, and a backslash-newline joins what it splits
//     (r\<newline>m is rm);
//   - what else the rules need: assignments, cd's, redirection targets.
// A command whose name is not known before it runs ($CMD, $(echo rm)) is a
// part with `dynamic` set: no rule can vouch for it.
//
// The syntax tree is walked without recursion, and a command that nests
// substitutions, subshells or blocks deeper than kMaxShellNesting is not
// read at all: no input can exhaust the stack.

#include <chrono>
#include <string>
#include <vector>

#include "base/status.h"
#include "gates/command_wrappers.h"

namespace odin {

struct CommandPart {
  std::vector<std::string> words;  // what finally runs: its name (as written) and arguments, quotes removed
  // Every program of the chain, outermost first (words is the last).
  std::vector<std::vector<std::string>> programs;
  std::vector<std::string> operands;         // the words that are not program names: options, values, arguments
  std::vector<std::string> written;          // every word as written, quotes removed; a computed one as its source text
  std::vector<bool> known;                   // per written word: known before it runs
  std::vector<GitConfigSetting> git_config;  // git -c KEY=VALUE, --config-env, --exec-path=
  std::vector<std::string> inline_code;      // code given to an interpreter (python -c, awk's program, ...)
  std::string text;                          // the source text of the simple command
  bool dynamic = false;                      // it runs something known only when it runs
  std::string why_dynamic;                   // one line, when dynamic
  bool input_arguments = false;              // xargs or parallel adds arguments from its input
  // Where it may run: each a path relative to where the command starts ("" is
  // there; "build/.." is resolved lexically), or absolute, after the cd's
  // before it. `cd x && y` runs y in x; `cd x; y` runs y in x or, if the cd
  // failed, where it started; a function's body anywhere a cd led.
  std::vector<std::string> directories = {""};
};

// A redirection whose target is known before it runs (> file, < file).
struct Redirect {
  std::string target;
  std::vector<std::string> directories = {""};  // as CommandPart::directories
};

// NAME=VALUE: before a command, on its own, in export/declare/local, or
// given to env or sudo.
struct Assignment {
  std::string name;
  std::string value;  // quotes removed; the source text if !known
  bool known = true;
};

// A cd or pushd, in the order they appear.
struct DirectoryChange {
  std::string target;  // quotes removed
  // False: the place is known only when it runs ($HOME, cd -, a computed
  // target), the cd may run repeatedly (in a loop or a function), or the
  // places a command may be in are too many to follow.
  bool known = true;
  std::string text;  // the simple command
};

// Directories followed per part at most; past this a DirectoryChange is
// unknown.
constexpr size_t kMaxDirectories = 16;

// Why a command could not be read at all.
enum class Unreadable {
  kNo,
  kTooLong,  // longer than kMaxReadableCommandBytes
  kTooDeep,  // nests deeper than kMaxShellNesting
  kTooSlow,  // parsing took longer than its time budget (tree-sitter's error recovery is slow on some inputs)
};

struct ParsedCommand {
  std::vector<CommandPart> parts;
  std::vector<Redirect> redirects;
  std::vector<Assignment> assignments;
  std::vector<DirectoryChange> directory_changes;
  // Quoted texts that hold $( ) or backticks ('a[$(cmd)]' runs cmd when
  // used in arithmetic): the rules read them as commands too.
  std::vector<std::string> literals;
  // A redirection may write a file: >, >>, >|, &>, &>>, <> or >& FILE to a
  // target other than /dev/null, or to one known only when it runs (2>&1
  // and >&2 only duplicate descriptors).
  bool redirect_writes = false;
  bool complete = true;  // false: the parser found a syntax error (the parts are a best effort)
  // Not kNo: the command could not be read, and nothing of it was.
  Unreadable unreadable = Unreadable::kNo;
};

// Commands longer than this are not parsed by ParseCommand (they need approval).
constexpr size_t kMaxParsedCommandBytes = 10000;
// Nothing longer than this goes to tree-sitter: libtree-sitter 0.20.7 (the
// one Debian ships) frees an invalid pointer during error recovery once an
// internal array passes 65,536 entries, which crafted input reaches at about
// 87 KB ('${' repeated) or 131 KB ('[[ (' repeated); 16 KiB keeps a margin.
constexpr size_t kMaxReadableCommandBytes = 16 * 1024;
// Substitutions, subshells, blocks, loops and expansions nested in one another.
constexpr int kMaxShellNesting = 64;
// Command lines handed to a shell inside command lines (bash -c 'bash -c ...').
constexpr int kMaxNestedShells = 8;
// Time to parse one command, nested command lines included (wall clock).
constexpr std::chrono::milliseconds kParseTimeBudget{2000};

// InvalidArgument if the command is too long.
StatusOr<ParsedCommand> ParseCommand(const std::string& command);
// The same, whatever its length (for deny rules, which hold regardless).
ParsedCommand ParseCommandUnchecked(const std::string& command,
                                    std::chrono::microseconds time_budget = kParseTimeBudget);

}  // namespace odin
