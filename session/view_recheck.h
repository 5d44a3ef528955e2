#pragma once
// Apply's re-validation (docs/attempts.md, "Apply"): before an isolated
// session's change set lands, it is judged against the workspace as it is
// then, not against the view the session worked in.
//
// The view is the session's: what it left there outside its change set
// (build output git ignores, a .gitignore it planted) never lands, and may
// have made its own checks pass. So the checks run on a fresh copy of the
// workspace as it is now with the plan's steps written into it, which is
// exactly what landing makes of the workspace: the profile's checks (build,
// lint, tests: planner/checks.h), in the sandbox, through a runtime of
// their own (a session of kind "recheck", its writes thrown away with the
// copy), each judged as the convergence gate judges it, and a check that
// cannot run counts as failed. Where no check is configured or detected,
// nothing is copied and nothing runs.
//
// What changed in the workspace outside the change set since the view was
// copied (workspace/view_drift.h) is told, not judged: the checks judge.
//
// The caller holds the apply lock (LockApplies) and has a plan free of
// conflicts.

#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "config/config.h"
#include "ledger/ledger.h"
#include "workspace/isolated_views.h"
#include "workspace/undo.h"
#include "workspace/view_drift.h"
#include "workspace/workspace.h"

namespace odin {

struct ViewRecheck {
  ViewDrift drift;  // told, not judged
  bool drift_known = true;
  struct Check {
    std::string name;     // build, lint, tests
    std::string command;  // "" when not applicable
    std::string status;   // passed, failed, not_run, not_applicable
    std::string execution_id;
  };
  std::vector<Check> checks;
  bool passed = true;
  std::string why;  // one line: what ran and how it ended
};

// Re-validates session sv's plan against workspace ws as it is now, and
// records the outcome in sv's session (gate event "view_rechecked"). say
// hears each check's command before it runs. An error: the re-validation
// could not be made (nothing lands either).
StatusOr<ViewRecheck> RecheckView(Ledger* ledger, const Workspace& ws, const Config& config, const SessionView& sv,
                                  const UndoPlan& plan, const std::function<void(const std::string&)>& say);

}  // namespace odin
