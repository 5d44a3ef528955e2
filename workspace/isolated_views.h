#pragma once
// Isolated sessions' views (docs/attempts.md): a session that works on a
// copy of the workspace frozen when it starts, whose change set lands only
// when the user applies it.
//
// A view is <state_dir>/views/<id>/ (0700, in Odin's own state, which no
// repository can ship): tree/ is the copy the session works in, its
// workspace root, made with cp -a --reflink=auto (a clone where the file
// system can make one, else a copy) of everything but .odin. Its session
// records it in the ledger (a gate event, kIsolatedViewEvent), and that
// record is the only way to a view: odin diff, apply and discard take a
// session id, never a path.
//
// What the session changed is its change set, the mutation records the
// ledger kept of it (file tools, commands, hooks), never a walk of the
// tree. Apply lands, for each path, the view's final state where the
// workspace still holds what the session started from (or holds the final
// state already: an apply cut off by a crash is taken up again); anywhere
// else it refuses, naming every such path, and writes nothing.

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/unique_fd.h"
#include "ledger/ledger.h"
#include "workspace/undo.h"
#include "workspace/workspace.h"

namespace odin {

inline constexpr char kIsolatedViewEvent[] = "isolated_view";
// The gate events an apply and a discard record in the view's session.
inline constexpr char kViewAppliedEvent[] = "view_applied";
inline constexpr char kViewDiscardedEvent[] = "view_discarded";

struct View {
  std::string id;    // "view_..."
  std::string dir;   // state_dir/views/<id>
  std::string tree;  // dir/tree: the session's workspace root
};

// The views' directory in a state directory, and one view's.
std::string ViewsDir(const std::string& state_dir);
View ViewNamed(const std::string& state_dir, const std::string& id);

// Copies ws (its state directory prepared) into a new view. Refuses
// (ResourceExhausted) a workspace larger than max_bytes or than the space
// free where the state lives, before copying anything.
StatusOr<View> MakeView(const Workspace& ws, uint64_t max_bytes);

// ws as a session in view v sees it: root and cwd in the tree, the state
// directory, ledger and config still ws's.
Workspace ViewWorkspace(const Workspace& ws, const View& v);

// ws as a session in the view named id sees it, for a host agent given the
// id by a coordinator: refused unless id is a view's name and its tree is
// a directory under ws's own state directory now (no symlink on the way).
StatusOr<Workspace> ExistingViewWorkspace(const Workspace& ws, const std::string& id);

// The workspace a view's session (ViewWorkspace) was copied from: ws itself
// when it is no view's.
Workspace ViewedWorkspace(const Workspace& ws);

// The bytes a tree takes on disk (du), -1 when it cannot be told.
int64_t DiskBytes(const std::string& path);

// The views' directories in a state directory, by id.
StatusOr<std::vector<std::string>> ListViewIds(const std::string& state_dir);

// A session that ran in a view, as this workspace's ledger records it.
struct SessionView {
  std::string session_id;
  View view;
  std::string workspace;  // the workspace it was copied from
  // How its commands ran (--network, --sandbox), for apply's checks.
  bool network = false;
  std::string sandbox;
  int64_t created_at_ms = 0;
  std::string applied;  // the apply's execution id, "" if not applied
  bool discarded = false;
  bool tree_exists = false;
};

// Every session of the ledger that ran in a view, oldest first.
StatusOr<std::vector<SessionView>> ListSessionViews(Ledger* ledger, const std::string& state_dir);
// The one whose session id is id or starts with it. NotFound names a
// session that did not run in a view.
StatusOr<SessionView> FindSessionView(Ledger* ledger, const std::string& state_dir, const std::string& id);

// Held from the plan of an apply to its end: one apply at a time per
// workspace, so two sessions' applies of the same path cannot both find it
// as they started from.
StatusOr<UniqueFd> LockApplies(const std::string& state_dir);

// What applying the session's change set to workspace would do: a step per
// path whose final state differs from its first, with conflicts (the
// workspace no longer holds what the session started from) and what cannot
// be applied (the view's file is not what the ledger says the session left,
// a protected path) named.
StatusOr<UndoPlan> PlanViewApply(Ledger* ledger, const SessionView& sv, const std::string& workspace);

// The plan as a unified diff: the workspace's file now to the session's.
std::string RenderViewDiff(const UndoPlan& plan, const std::string& workspace);

// Why the plan cannot land (its conflicts and what cannot be applied, each
// named), OK when it can.
Status PlanRefusal(const UndoPlan& plan);

// Lands the plan (refused, nothing written, when it has conflicts or
// anything that cannot be applied) as one execution ("ApplyView") of a
// session of its own, undoable as one (odin undo), records the apply in the
// view's session and removes the view (the ledger keeps what it changed).
// Returns the execution's id.
StatusOr<std::string> ApplyView(Ledger* ledger, const std::string& state_dir, const SessionView& sv,
                                const std::string& workspace, const UndoPlan& plan, int64_t now_ms);

// Writes the plan's steps (PlanViewApply's, for workspace) into another
// tree instead, through the safe file layer: apply's scratch copy of the
// workspace as it is now, where its checks run on what landing would make.
Status LandPlanIn(const std::string& tree, const std::string& workspace, const UndoPlan& plan);

// Removes a view's directory (absent is fine).
Status RemoveView(const std::string& state_dir, const std::string& id);

// Removes the view's directory and records the discard.
Status DiscardView(Ledger* ledger, const std::string& state_dir, const SessionView& sv, int64_t now_ms);

}  // namespace odin
