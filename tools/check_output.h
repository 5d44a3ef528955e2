#pragma once
// Diagnostics from the output of a check command (the fallback validator when
// no language server serves a file): gcc/clang's "file:line:col: error: ...",
// rustc's short form "file:line:col: error[E0061]: ..." (cargo check),
// Python's "File "f", line N ... SyntaxError: ...", and node's "f:N ...
// SyntaxError: ...".
//
// The command ran on a copy of the file; mentions of the copy's path become
// the real path.

#include <string>
#include <vector>

#include "tools/lsp_client.h"

namespace odin {

struct CheckDiagnostic {
  std::string path;  // the real path for the copy; other files as reported
  LspDiagnostic diag;
};

// Parses output. When the command failed (exit_code != 0) but nothing in its
// output parses, returns one error at 1:1 carrying the output's first line, so
// a failure is never mistaken for a clean file. Relative paths are taken
// relative to relative_to where it is given (cargo prints them relative to
// the directory it checked), else kept as reported.
std::vector<CheckDiagnostic> ParseCheckOutput(const std::string& output, int exit_code, const std::string& copy_path,
                                              const std::string& real_path, const std::string& source,
                                              const std::string& relative_to = "");

// Splits a command line the way a POSIX shell would split words (quotes and
// backslashes; no expansions), for compile_commands.json's "command".
std::vector<std::string> SplitCommandLine(const std::string& command);

// The arguments compile_commands.json gives for file, turned into a syntax
// check of check_copy: -o and -c dropped, -fsyntax-only added, the source
// replaced. compile_db is the file's JSON text. Empty if the file has no
// entry. *directory receives the entry's working directory.
std::vector<std::string> SyntaxCheckFromCompileDb(const std::string& compile_db, const std::string& file,
                                                  const std::string& check_copy, std::string* directory);

}  // namespace odin
