#pragma once
// Parallel attempts (docs/attempts.md): N agents try the same message at
// once, each an isolated session in a view of its own
// (workspace/isolated_views.h), and Odin, not a model, picks the one that
// lands. This file is the judging: what each attempt's record says, and
// which one wins; cli/cli_attempts.cc runs them.
//
// An attempt passes when its message ended done (the completion checks
// passed in its own view), every file it changed was last validated without
// new errors, its change set would apply to the workspace as it is now (no
// conflict), and it neither deletes, skips nor weakens tests. Among those
// that pass the smallest change wins: fewest lines changed, then fewest
// files, then the lowest attempt number; one whose change set is empty (it
// changed nothing, or only what git ignores) only when no other passes.

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "ledger/ledger.h"
#include "workspace/undo.h"

namespace odin {

struct AttemptOutcome {
  int number = 0;  // 1-based
  std::string session_id;
  std::string status;  // the message's end: done, not_converged, error, ...
  int exit_code = -1;
  // Filled by JudgeAttempt:
  int64_t lines = 0;  // lines added plus removed
  int64_t files = 0;  // files (and links) created, changed or deleted
  bool empty = true;  // nothing of it would land (what git ignores never does)
  bool passes = false;
  std::string why;  // what it broke, or why it passes
};

// How a test file is taken: deleted, skipped, or with assertions removed.
// "" when the plan does none of that; else one line naming the file.
std::string TestWeakening(const UndoPlan& plan, const std::string& workspace,
                          const std::vector<std::string>& test_patterns);

// Judges one attempt from the ledger and the plan of applying its view to
// workspace (PlanViewApply's).
void JudgeAttempt(Ledger* ledger, const UndoPlan& plan, const std::string& workspace,
                  const std::vector<std::string>& test_patterns, AttemptOutcome* outcome);

// The index of the winner among outcomes (judged), or -1 when none passes.
int PickAttempt(const std::vector<AttemptOutcome>& outcomes);

}  // namespace odin
