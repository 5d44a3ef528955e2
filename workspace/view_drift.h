#pragma once
// What changed in the workspace, outside an isolated session's change set,
// since its view was copied (docs/attempts.md, "Applying"): the drift an
// apply re-validates against.
//
// The session's change set lands on the workspace as it is now, not on the
// base its checks ran on. Where nothing else changed, the two are the same
// and what the session's checks judged is what lands. Where the user (or
// another apply) changed other files meanwhile, apply brings those changes
// into the view, so that the view is the workspace as it is now plus the
// session's change, and runs the checks there before landing anything
// (session/view_recheck.h).
//
// The walk compares the two trees entry by entry (type, size, permission
// bits, a symlink's target; a file whose time differs, by its bytes), leaving
// out .odin, .git, Odin's own temporary names, every path the session changed
// (its ledger records, ignored ones included), and what git ignores (build
// output: the view's own).

#include <string>
#include <vector>

#include "base/status.h"
#include "ledger/ledger.h"
#include "workspace/isolated_views.h"

namespace odin {

struct ViewDrift {
  std::vector<std::string> changed;  // in the workspace, not as in the view (added ones too), relative
  std::vector<std::string> removed;  // in the view, gone from the workspace
  bool empty() const { return changed.empty() && removed.empty(); }
  size_t size() const { return changed.size() + removed.size(); }
};

// The workspace's drift from session sv's view.
StatusOr<ViewDrift> FindViewDrift(Ledger* ledger, const SessionView& sv, const std::string& workspace);

// Makes the view hold what the workspace holds at each drifted path, through
// the safe file layer on both sides (no symlink followed on either).
Status BringDriftIntoView(const SessionView& sv, const std::string& workspace, const ViewDrift& drift);

}  // namespace odin
