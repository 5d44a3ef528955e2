#pragma once
// The validation gate's judgement, as pure functions: which diagnostics are
// new against the baseline, and the compact summary the model reads.
//
// New errors only: the baseline is what the validator said about the file
// before the session first changed it. A baseline diagnostic still counts as
// the same one after the edit if its line moved (matched after shifting by
// the diff of the two contents), or if its line was rewritten and the same
// diagnostic now sits among the lines that replaced it. Matching is by
// severity, code and message, one to one.
//
// The summary is deterministic: sorted by file, line, column, code and
// message; duplicates dropped; errors only unless asked; at most 20 per file
// and 30 in all, then "... and N more".

#include <cstdint>
#include <string>
#include <vector>

#include "tools/unified_diff.h"

namespace odin {

struct Diag {
  std::string path;  // absolute
  uint32_t line = 0;
  uint32_t column = 0;
  uint32_t severity = 1;  // 1 error, 2 warning, 3 information, 4 hint
  std::string code;
  std::string message;
  std::string source;
};

// For each diagnostic of `after`, whether it is new. line_map maps the
// lines of `path` (the validated file) from the baseline content to the
// current one; diagnostics in other files are matched in place.
std::vector<bool> MarkNew(const std::vector<Diag>& baseline, const std::vector<Diag>& after, const std::string& path,
                          const std::vector<MovedLine>& line_map);

struct SummaryLimits {
  size_t per_file = 20;
  size_t total = 30;
  bool errors_only = true;
};

// "src/a.cc:12:5 [undeclared_var_use] use of undeclared identifier 'x'" lines,
// paths relative to workspace. Empty if nothing qualifies.
std::string SummarizeDiagnostics(std::vector<Diag> diagnostics, const std::string& workspace,
                                 const SummaryLimits& limits = {});

}  // namespace odin
