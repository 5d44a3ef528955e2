#pragma once
// What changed in the workspace, outside an isolated session's change set,
// since its view was copied (docs/attempts.md, "Apply"): what apply tells
// the user it re-validated the change set with.
//
// The walk compares the two trees entry by entry (type, size, permission
// bits, a symlink's target; a file whose time differs, by its bytes' hash),
// leaving out .odin, .git, Odin's own temporary names, every path the
// session changed (its ledger records), and what git ignores (build
// output: the view's own). It informs; the re-validation itself runs on a
// fresh copy of the workspace (session/view_recheck.h), never on the view.

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

}  // namespace odin
