#pragma once
// WorkspaceOverlay: a command that sees the workspace through an overlay of
// its own, so that what it writes lands in an upper directory that the
// coordinator reads and applies afterwards (coordinator/overlay_changes.h)
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
// For each command the worker forks (not vforks: a vfork child shares the
// parent's memory, and unshare(CLONE_NEWUSER) refuses that), and the child,
// before it changes directory and execs, calls EnterWorkspaceOverlay:
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
// Only the worker's own code mounts: the worker's filter lets mount and
// unshare through (SeccompOptions::allow_overlay_setup), the command's
// does not.
//
// The plan is made in the parent (PlanWorkspaceOverlay); the child only
// makes system calls on it, since it is forked from a process that may
// have threads.

#include <string>
#include <vector>

#include "base/status.h"

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
  std::string hide = kOverlayMountDir;
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

// Makes the command's directories below kOverlayMountDir/upper/ID (id: the
// execution id, letters, digits, '_' and '-') and the plan for its child.
// mounts: ODIN_OVERLAY's value.
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

// Removes a command's directories (kOverlayMountDir/upper/ID as the worker
// sees it, or the coordinator's path to it): the upper and work directories
// and what the overlay left in them. Works without capabilities: the
// overlay makes what it keeps in the work directory mode 000.
void RemoveWorkspaceOverlayDirs(const std::string& dir);

// SpawnOptions::before_exec for a plan (arg: const WorkspaceOverlayPlan*).
// Returns 0, or the errno of the step that failed (the command never runs).
int EnterWorkspaceOverlay(const void* plan);

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
// leave to mount and unshare. Returns 0 or an errno.
int DenyMountsBeforeExec(const void* unused);

}  // namespace odin
