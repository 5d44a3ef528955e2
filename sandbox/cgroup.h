#pragma once
// SandboxCgroup: a control group of the sandbox's own, so a fork bomb or a
// memory bomb inside stops at a limit instead of taking the machine down
// (RLIMIT_NPROC does nothing for root, and counts per user, not per sandbox).
//
// cgroup v1: the group is made below the launcher's own group in the pids
// and memory hierarchies.
//
// cgroup v2 (a stock Debian 12 host): a group can only limit what its
// parent delegated to it (the parent's cgroup.subtree_control), and a group
// that delegates may hold no process itself (the no-internal-processes
// rule). So the coordinator prepares a parent once, at start
// (PlanCgroupV2, ApplyCgroupV2Plan):
//   - its own group, if odin is alone in it (a systemd service or scope with
//     Delegate=yes, a container): odin moves itself into a leaf below it,
//     then enables pids and memory in it for the sandboxes' groups;
//   - as root, where its own group is shared (a login session's scope):
//     a group "odin" at the top of the hierarchy, with the controllers
//     enabled there;
//   - otherwise none, and why (run odin under systemd-run --user --scope -p
//     Delegate=yes to get one).
// The launcher then makes its group below that parent (--cgroup-parent).
//
// The launcher makes its group, starts bubblewrap and moves bubblewrap into
// it at once (the grace period that move waits for overlaps bubblewrap's
// setup), then bubblewrap's child, which bubblewrap reports and which waits
// (--block-fd) until it is in before it starts the program; so the program
// and everything it starts are inside. Without
// namespaces the launcher moves itself in before it starts the program
// (Enter). Leave removes the group once the processes are gone. Groups left behind by a
// launcher that was killed are removed by the next one.
//
// Every path is below a root (/sys/fs/cgroup by default) and the process's
// own membership is read from /proc/self/cgroup's text, so the logic runs
// against a fake tree in tests. Neither this project's build machine (its
// controllers are bound to v1) nor a fresh Debian root without a cgroup
// file system can show v2 limits working for real.

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"

namespace odin {

struct CgroupLimits {
  uint64_t pids_max = 0;          // 0: no pids limit
  uint64_t memory_max_bytes = 0;  // 0: no memory limit
  bool any() const { return pids_max > 0 || memory_max_bytes > 0; }
};

// Where the cgroup file system is, and who is asking.
struct CgroupHost {
  std::string root = "/sys/fs/cgroup";
  std::string self_cgroup;  // the text of /proc/self/cgroup; empty: read it
  pid_t pid = 0;            // 0: getpid()
  int64_t uid = -1;         // -1: geteuid()
  // The real host (reads /proc/self/cgroup, getpid, geteuid).
  static CgroupHost Real();
};

// Whether root holds a cgroup v2 (unified) hierarchy.
bool IsCgroupV2(const std::string& root);

// What the coordinator does on cgroup v2 so that sandboxes can be limited.
struct CgroupV2Plan {
  bool possible = false;
  std::string reason;                    // why not, when not possible
  std::string parent;                    // absolute: where the sandboxes' groups go
  std::string make_parent;               // absolute: a directory to create first ("" none)
  std::string move_self_to;              // absolute: a leaf to move this process into first ("" none)
  bool enable = false;                   // write the controllers into parent/cgroup.subtree_control
  std::vector<std::string> controllers;  // "pids", "memory"
  std::string description;               // one line for odin doctor
};
CgroupV2Plan PlanCgroupV2(const CgroupHost& host, const CgroupLimits& limits);
// Carries the plan out. REQUIRES: plan.possible.
Status ApplyCgroupV2Plan(const CgroupV2Plan& plan, const CgroupHost& host);

class SandboxCgroup {
 public:
  // Creates the group (named after the calling process's pid) below parent
  // (cgroup v2: the prepared parent; empty: the launcher's own group, and on
  // v1 the hierarchies of the controllers) and sets the limits; no process
  // is in it yet (Add). FailedPrecondition says why not (no cgroupfs, no
  // permission, controller missing or not delegated).
  static StatusOr<std::unique_ptr<SandboxCgroup>> Create(const CgroupLimits& limits, const std::string& parent = "",
                                                         const CgroupHost& host = CgroupHost::Real());
  // Create, then Add the calling process.
  static StatusOr<std::unique_ptr<SandboxCgroup>> Enter(const CgroupLimits& limits, const std::string& parent = "",
                                                        const CgroupHost& host = CgroupHost::Real());
  // Whether a group with a pids limit could be made here, and how (for odin
  // doctor): "cgroup v1 (pids, memory)", or the reason it cannot.
  static Status Probe(std::string* how);
  ~SandboxCgroup();
  // Moves process pid (all its threads) into the group, in every hierarchy;
  // what it starts from then on is inside too, what it started before is
  // not. The first move in a while waits for an RCU grace period (5-20 ms
  // measured here), the ones right after do not.
  Status Add(pid_t pid);
  // If the calling process was added, moves it back to where it was; what it
  // started stays in the group.
  void MoveBack();
  // Moves the calling process back (if it has not) and removes the group.
  void Leave();
  const std::string& description() const { return description_; }

 private:
  SandboxCgroup() = default;
  struct Dir {
    std::string path;  // the group's directory
    std::string back;  // the group the process was in (its cgroup.procs gets it back)
  };
  std::vector<Dir> dirs_;
  std::string description_;
  pid_t pid_ = 0;
  bool self_added_ = false;
  bool left_ = false;
};

}  // namespace odin
