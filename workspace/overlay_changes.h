#pragma once
// Overlay change sets: what a command run over an overlay of the workspace
// changed, read by the coordinator from the overlay's upper directory (never
// taken from the worker's word), and applied to the workspace.
//
// The command saw the workspace as the overlay's lower layer and wrote only
// to the upper directory, so the upper directory is the exact change set of
// that one command, and the workspace still holds every before-image until
// the change set is applied. ApplyOverlayUpper walks the upper directory:
//
//   - a whiteout (a 0:0 character device, or a file marked
//     user.overlay.whiteout): the workspace's entry there is deleted, with
//     everything under it;
//   - an opaque directory (user.overlay.opaque or trusted.overlay.opaque
//     "y"): the workspace's entries in it that the upper directory lacks are
//     deleted, then its entries are applied;
//   - a directory the workspace has: merged (its mode applied), entries in
//     turn;
//   - anything else: it replaces the workspace's entry, by rename (the upper
//     directory lives on the workspace's file system, so an `npm install`'s
//     20,000 new files under a new directory are one rename), or by copy
//     where that fails with EXDEV.
//
// Compare-and-swap: a workspace entry that changed while the command ran
// (changed_meanwhile says so: the coordinator's own record of what the
// kernel reported since the command started) is not overwritten by the
// command's version: it is a conflict, the command's version is kept in
// conflicts_dir, and the path is reported. The same goes for a deletion
// of something changed meanwhile, and for a path the workspace no longer
// has that changed meanwhile (deleted by another command: not recreated).
// Without changed_meanwhile, an entry whose ctime (which no program can
// set) is after started_ns counts; the file system's coarse clock makes
// that take a change in the start's own tick (a few ms) before it for one
// meanwhile, so it is the fallback, not the rule.
//
// What must never land (must_not_land: protected names anywhere, .git
// replaced, git's control files) is discarded and reported. Changes inside
// .git are applied but are not mutations (counted only). Ignored paths
// (GitIgnore) are applied and counted per outermost ignored directory,
// never listed or hashed.
//
// All of it works on directory file descriptors opened without following
// symlinks, so a symlink planted in the workspace (or the upper directory)
// never sends a rename or a deletion elsewhere.
//
// Thread-safety: none; the caller holds the workspace's writers' lane.

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "workspace/change_tracker.h"

namespace odin {

class GitIgnore;

struct OverlayApplyOptions {
  // Whether the workspace's entry at a path (relative) changed since the
  // command started. Null: the ctime rule below.
  std::function<bool(const std::string&)> changed_meanwhile;
  // With changed_meanwhile, the ctime rule below as well: where the
  // coordinator's record is not the whole story (a tree without watches,
  // whose last look may be older than the command's start).
  bool ctime_too = false;
  // Whether a path the workspace does not have (relative) was deleted since
  // the command started: the command's version would bring it back. Null:
  // nothing is taken for deleted.
  std::function<bool(const std::string&)> gone_meanwhile;
  // When the command started, CLOCK_REALTIME_COARSE in ns (the clock file
  // systems stamp ctime with): without changed_meanwhile, an entry whose
  // ctime is after it changed while the command ran.
  int64_t started_ns = 0;
  // Paths (relative to the workspace) that must never land; their changes
  // are discarded. Null: everything may land.
  std::function<bool(const std::string&)> must_not_land;
  GitIgnore* ignore = nullptr;  // may be null: nothing is ignored
  // The hash of the workspace's file at a path (relative) as already known
  // (the change tracker's), if stat still says what it said then; "" if
  // not known. A file too big for a before-image whose hash is known is
  // not read again. Null: every before is read.
  std::function<std::string(const std::string&, const struct stat&)> known_sha256;
  // Bytes of a file kept as its before- and after-image (past it, the hash
  // only).
  int64_t image_cap_bytes = 1 << 20;
  // Where the command's version of a conflicting path is moved (absolute,
  // on the workspace's file system; made when needed). "": left in upper.
  std::string conflicts_dir;
  // The same for what must not land: kept, out of every sandbox's sight.
  std::string discarded_dir;
};

struct OverlayApplied {
  ChangeSet changes;                   // what landed: before the workspace's, after the command's
  std::vector<std::string> conflicts;  // changed in the workspace meanwhile; not applied
  std::vector<std::string> discarded;  // must not land; not applied
  std::vector<std::string> failed;     // could not be applied (an I/O error), with why
  int64_t git_entries = 0;             // entries applied inside a .git (not mutations)
  // What landed that is counted, not recorded (inside a .git, ignored by
  // git): each path applied on its own, and each tree that landed whole by
  // one rename (its root). The coordinator numbers them, so that a command
  // beside this one finds them changed meanwhile.
  std::vector<std::string> counted_paths, counted_trees;
  // Copied up and written back unchanged (a formatter's pass): landed, no
  // change.
  std::vector<std::string> unchanged;
};

// Applies upper (the upper directory of an overlay whose lower layer was
// workspace, the overlay unmounted) to workspace. What it moves leaves
// upper; what stays there (discarded entries) is the caller's to remove.
OverlayApplied ApplyOverlayUpper(const std::string& workspace, const std::string& upper,
                                 const OverlayApplyOptions& options);

// The paths (relative, parents first) an overlay's upper directory
// changes, down to where the workspace has the directory: below one it
// lacks, all is new, and only that directory is named. .git and a
// directory ignore says git ignores (may be null) are named, not entered.
// For a look at just those paths before the upper directory lands
// (ChangeTracker::LookAtPaths).
std::vector<std::string> UpperPaths(const std::string& workspace, const std::string& upper, GitIgnore* ignore);

// The coarse real-time clock, in ns: what ApplyOverlayUpper compares
// ctimes with.
int64_t CoarseRealtimeNs();

// Where a workspace's writable workers keep their commands' upper
// directories (odin-sandbox --overlay-root): inside Odin's state directory
// (state_dir: Workspace::state_dir), on the workspace's file system when
// that is the workspace's .odin, one directory per execution id.
std::string CommandOverlayRoot(const std::string& state_dir);

// Drops from changes each path in paths and what lies below it.
void EraseChangesUnder(const std::set<std::string>& paths, ChangeSet* changes);

}  // namespace odin
