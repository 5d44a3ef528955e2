#pragma once
// Apply's re-validation (docs/attempts.md, "Applying"): before an isolated
// session's change set lands, it is judged against the workspace as it is
// then, not only against the base its own checks ran on.
//
// Where nothing outside the change set changed in the workspace since the
// view was copied (workspace/view_drift.h), the view is exactly what
// landing makes of the workspace, and the session's own checks judged it:
// nothing runs again. Otherwise the drift is brought into the view, and the
// profile's checks (build, lint, tests: planner/checks.h) run there, in
// the sandbox, through a runtime of their own (a session of kind
// "recheck"), each judged as the convergence gate judges it. A check that
// fails, or cannot run, refuses the landing.
//
// The caller holds the apply lock (LockApplies) and has a plan free of
// conflicts; it plans again afterwards (a check may have changed the view).

#include <string>
#include <vector>

#include "base/status.h"
#include "config/config.h"
#include "ledger/ledger.h"
#include "workspace/isolated_views.h"
#include "workspace/view_drift.h"
#include "workspace/workspace.h"

namespace odin {

struct ViewRecheck {
  ViewDrift drift;
  struct Check {
    std::string name;     // build, lint, tests
    std::string command;  // "" when not applicable
    std::string status;   // passed, failed, not_run, not_applicable
    std::string execution_id;
  };
  std::vector<Check> checks;  // none when there was no drift
  bool passed = true;
  std::string why;  // one line: the drift and the checks' outcome
};

// Re-validates session sv's change set against workspace ws as it is now,
// and records the outcome in sv's session (gate event "view_rechecked").
// An error: the re-validation could not be made (nothing lands either).
StatusOr<ViewRecheck> RecheckView(Ledger* ledger, const Workspace& ws, const Config& config, const SessionView& sv);

}  // namespace odin
