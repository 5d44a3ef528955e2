#pragma once
// WorkspaceOverlay: a command that sees the workspace through an overlay of
// its own, so that what it writes lands in an upper directory that the
// coordinator reads and applies afterwards (workspace/overlay_changes.h)
// instead of in the workspace.
//
// odin-sandbox --overlay-root DIR (a writable worker's sandbox) binds, below
// kOverlayMountDir:
//   lower   the workspace, bound plainly and read-only (no masks, no
//           submounts: an overlay cannot take the sandbox's locked ones);
//   upper   DIR, writable, on the workspace's file system: one directory
//           per command, so applying a change set is renames;
// and tells the program (the worker) through ODIN_OVERLAY, which lists the
// mounts the sandbox made inside the workspace (OverlayMountList).
//
// Each command's child goes through these steps before it changes
// directory and execs (EnterWorkspaceOverlay), or, as a writable worker
// does it, a child made ahead of the command went through steps 1 to 4
// and the command's child joins what it left (PreparedOverlay) and does
// step 5:
//   1. a user and mount namespace of its own, where it is root (the kernel
//      mounts an overlay only for a namespace's root);
//   2. the overlay over the workspace's path (lower, the command's upper and
//      work directories; userxattr);
//   3. the sandbox's mounts inside the workspace again on top of it (.git a
//      mount point, the protected files read-only, the masks), and
//      kOverlayMountDir covered, so the command reaches neither the plain
//      workspace nor other commands' upper directories;
//   4. a second user namespace, where it has its own uid and gid again: it
//      owns no mount namespace, so it holds no power over the mounts;
//   5. for good: a seccomp filter that denies mount, umount, unshare,
//      setns, pivot_root, chroot, the new mount API and clone with a
//      namespace flag, and every capability (bounding set too), so nothing
//      the command runs can take any of it down.
// Only the worker's own code mounts: the worker's filter lets mount,
// unshare and setns through (SeccompOptions::allow_overlay_setup), the
// command's does not.
//
// The plan is made in the parent (PlanWorkspaceOverlay); the children only
// make system calls on it: they are vforked (or cloned sharing memory)
// from a process that may have threads.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "base/unique_fd.h"

namespace odin {

// Mapping the parent namespace's root into a new user namespace takes a
// capability the worker does not have, so a worker that would be root is
// run under this uid and gid instead when it has the overlay; its
// commands are root again in their innermost namespace.
constexpr int kOverlayRootStandIn = 65532;
// Where odin-sandbox binds the overlay's layers inside the sandbox.
constexpr const char kOverlayMountDir[] = "/run/odin-overlay";
// The environment variable that tells the worker the overlay is there.
constexpr const char kOverlayEnv[] = "ODIN_OVERLAY";

struct WorkspaceOverlayPlan {
  std::string workspace;                           // where the overlay goes
  std::string upper;                               // this command's upper directory (kOverlayMountDir/upper/ID/u)
  std::string work;                                // the overlay's work directory (kOverlayMountDir/upper/ID/w)
  std::string mount_data;                          // lowerdir=...,upperdir=...,workdir=...,userxattr
  std::string uid_map, gid_map;                    // step 1: root inside
  std::string inner_uid_map, inner_gid_map;        // step 4: the worker's ids again
  std::vector<std::string> rw_binds, ro_binds;     // inside the workspace, in order
  std::vector<std::string> mask_dirs, mask_files;  // inside the workspace
  // Masks of paths not there when planned: nothing to mount, but made
  // later they would show unmasked, so a prepared overlay or view pins
  // their absence (never read by the children).
  std::vector<std::string> absent_masks;
  std::string hide = kOverlayMountDir;
  UniqueFd lock;      // upper's parent, locked shared from its mkdir on (LockOverlayDir)
  std::string lower;  // kOverlayMountDir/lower: the workspace, plainly
  // The read-only view's plan (PreparedOverlay::MakeReadOnlyView): lower
  // bound over the workspace instead of an overlay, no binds but the
  // masks, no directories.
  bool read_only_view = false;
};

// What odin-sandbox puts in ODIN_OVERLAY: the mounts it made inside the
// workspace, which the overlay would hide and each command's child makes
// again on top of it, one per line: "rw PATH" (bound onto itself: a mount
// point, which cannot be moved or removed: .git), "ro PATH" (read-only:
// git's control files, Odin's settings), "mask PATH" (shown empty: .odin,
// secrets). Paths outside the workspace are left out.
std::string OverlayMountList(const std::string& workspace, const std::vector<std::string>& writable,
                             const std::vector<std::string>& readonly, const std::vector<std::string>& masked,
                             const std::vector<std::string>& hidden);

// Whether id may name a command's directories: letters, digits, '_' and
// '-', 1 to 128 of them.
bool ValidOverlayId(const std::string& id);

// Makes the command's directories below kOverlayMountDir/upper/ID (id: the
// execution id, letters, digits, '_' and '-') and the plan for its child.
// mounts: ODIN_OVERLAY's value. The directory is locked shared before
// anything is made in it, and stays so while the plan's lock is open: a
// sweep, or a resume looking for what to apply, leaves it alone.
StatusOr<WorkspaceOverlayPlan> PlanWorkspaceOverlay(const std::string& workspace, const std::string& id,
                                                    const std::string& mounts);

// Whether the kernel gives this worker's commands their overlay: a child
// goes through EnterWorkspaceOverlay (every step, on a scratch upper
// directory) and exits. The worker asks once, at its start, and says so in
// its Hello (kOverlayCapability or kNoOverlayCapability), so the
// coordinator knows before the first command whether it must look at the
// tree first.
Status ProbeWorkspaceOverlay(const std::string& workspace, const std::string& mounts);
constexpr const char kOverlayCapability[] = "workspace-overlay";
constexpr const char kNoOverlayCapability[] = "no-workspace-overlay";

// Whether the read-only view (PreparedOverlay::MakeReadOnlyView) keeps
// every mask in mounts (ODIN_OVERLAY's value) for as long as a command
// runs: only where none lies inside the workspace but Odin's own state
// (workspace/.odin), which nothing replaces. The view's masks sit on the
// workspace's own files, and one replaced while a command runs (a
// sandbox.hide directory made again) would show the command what is under
// it; an overlay's masks sit on the overlay's own files and hold. The
// worker says so in its Hello (kReadOnlyViewCapability).
bool ReadOnlyViewKeepsMasks(const std::string& workspace, const std::string& mounts);
constexpr const char kReadOnlyViewCapability[] = "read-only-view";

// Removes a command's directories (kOverlayMountDir/upper/ID as the worker
// sees it, or the coordinator's path to it): the upper and work directories
// and what the overlay left in them. Works without capabilities: the
// overlay makes what it keeps in the work directory mode 000.
void RemoveWorkspaceOverlayDirs(const std::string& dir);

// Locks an overlay's directory (kOverlayMountDir/upper/ID, or the
// coordinator's path to it) for as long as the fd returned is open, not
// through a symlink, without waiting. Shared: its maker, while it lives.
// Exclusive: a sweep or a resume, sure that no maker is left. Fails where
// the other kind is held (EWOULDBLOCK) or the directory is gone.
StatusOr<UniqueFd> LockOverlayDir(const std::string& dir, bool exclusive);

// Removes what workers that are gone left below root (the coordinator's
// path to kOverlayMountDir/upper): the directories of overlays prepared
// and never used (next-*) and of probes cut short (probe-*). Their makers
// hold a lock on them (flock, shared) as long as they live, so only those
// no process holds go. A command's directories (named by its execution id)
// are never touched. Returns how many went.
int SweepWorkspaceOverlayDirs(const std::string& root);
// The same for the directories named prefix* in dir that this user owns,
// older than a minute (one just made is not held yet), and no process
// holds (LockOverlayDir, shared): a host agent's overlay roots in its
// $TMPDIR, left by an agent that was killed. Returns how many went.
int SweepUnheldDirs(const std::string& dir, std::string_view prefix);

// SpawnOptions::before_exec for a plan (arg: const WorkspaceOverlayPlan*).
// Returns 0, or the errno of the step that failed (the command never runs).
int EnterWorkspaceOverlay(const void* plan);

// A command's namespaces made before the command is known: steps 1 to 4
// done by a child that then exits, its user and mount namespaces held by
// fds. The command's child only joins them and does step 5, so the
// overlay's set-up (about a millisecond: the mount namespace's copy, the
// overlay, the mounts made again) is off the command's path. A writable
// worker makes the next one after each command's result is out.
//
// The same namespaces serve the read-only view (MakeReadOnlyView): the
// workspace's path shows kOverlayMountDir/lower, the workspace bound
// read-only by the sandbox, with the masks made again on top and
// kOverlayMountDir covered, then the second user namespace and, as each
// command joins, step 5. A command the coordinator judged one that only
// reads (ToolRequest.read_only_view) runs there, so it pays for no overlay;
// judged wrongly, it fails to write and changes nothing. A bind shows the
// workspace as it is, so one view serves every such command; what it holds
// as it was are the masks' places, and Fresh() says whether they are still
// what it masked.
class PreparedOverlay {
 public:
  // Directories below kOverlayMountDir/upper/next-RANDOM until claimed.
  static StatusOr<std::unique_ptr<PreparedOverlay>> Make(const std::string& workspace, const std::string& mounts);
  // The read-only view: no directories; never claimed.
  static StatusOr<std::unique_ptr<PreparedOverlay>> MakeReadOnlyView(const std::string& workspace,
                                                                     const std::string& mounts);
  // Lets go of the namespaces (the overlay goes with the last user of its
  // mount namespace); removes the directories unless claimed.
  ~PreparedOverlay();
  PreparedOverlay(const PreparedOverlay&) = delete;
  PreparedOverlay& operator=(const PreparedOverlay&) = delete;

  // Whether a child can join it (the kernel and the worker's filter let
  // it): a vforked child joins and exits, using nothing up. Asked once, of
  // the first.
  Status Check() const;
  // Renames its directories to execution id's (what the coordinator
  // reads): from then on they are that command's, to apply or remove.
  // Fails (FailedPrecondition) where a file it binds again was replaced or
  // removed since it was made: start the command another way.
  Status Claim(const std::string& id);
  // The read-only view: whether no masked file, and no directory above
  // one, was replaced or removed since it was made (else make another).
  bool Fresh() const { return Unchanged().ok(); }
  // kOverlayMountDir/upper/ID: next-RANDOM, or the id once claimed.
  const std::string& dir() const { return dir_; }
  // The lock on dir(), to hold past us (a claimed one's, until the
  // coordinator holds it too).
  UniqueFd TakeLock() { return std::move(lock_); }

  // SpawnOptions::before_exec (arg: const PreparedOverlay*): joins the
  // namespaces, closes their fds (SpawnOptions::keep_fds must hold them:
  // fds()) and does step 5. Returns 0 or an errno.
  static int Join(const void* prepared);
  std::vector<int> fds() const { return {outer_user_, mount_, inner_user_}; }

 private:
  PreparedOverlay() = default;

  // What the files it binds again on top were, in the workspace itself,
  // before the child bound them: a bind holds the file as it was, and the
  // command must not see a git config or an AGENTS.md replaced since.
  struct Pinned {
    std::string lower;  // kOverlayMountDir/lower/REL
    bool present = false;
    uint64_t dev = 0, ino = 0;
  };
  static Pinned Look(const std::string& lower);
  // Pins what the namespaces made of plan hold as it was (see the .cc).
  void Pin(const WorkspaceOverlayPlan& plan);
  // Steps 1 to 4 of plan, in a child; the namespaces' fds are ours.
  Status Enter(const WorkspaceOverlayPlan& plan);
  // FailedPrecondition naming a pinned path replaced or removed since.
  Status Unchanged() const;

  int outer_user_ = -1, mount_ = -1, inner_user_ = -1;  // close-on-exec
  UniqueFd lock_;                                       // dir_, locked shared while we live (SweepWorkspaceOverlayDirs)
  std::vector<Pinned> pinned_;
  std::string dir_;
  bool claimed_ = false;
};

// Drops every capability of the calling process: bounding and ambient
// sets, then effective, permitted and inheritable. Returns 0 or an errno.
// System calls only.
int DropAllCapabilitiesRaw();

// Installs the filter of step 5 (a fixed classic BPF program: no
// allocation). Returns 0 or an errno.
int InstallNoMountFilter();

// SpawnOptions::before_exec for what a worker with the overlay starts
// without one (a search's rg, a command once the kernel refused the
// overlay): the no-mount filter, so nothing it starts keeps the worker's
// leave to mount, unshare and setns. Returns 0 or an errno.
int DenyMountsBeforeExec(const void* unused);

}  // namespace odin
