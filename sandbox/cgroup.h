#pragma once
// SandboxCgroup: a control group of the sandbox's own, so a fork bomb or a
// memory bomb inside stops at a limit instead of taking the machine down
// (RLIMIT_NPROC does nothing for root, and counts per user, not per sandbox).
//
// It is created below the launcher's own group: in the pids and memory
// hierarchies with cgroup v1, in the unified hierarchy with v2 (when its
// controllers can be enabled there). The launcher moves itself in before it
// starts bubblewrap, so everything inside inherits it; Leave moves it back
// out and removes the group once the processes are gone. Groups left behind
// by a launcher that was killed are removed by the next one.

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

class SandboxCgroup {
 public:
  // Creates the group (named after the calling process's pid), sets the
  // limits and moves the calling process into it. FailedPrecondition says why not (no cgroupfs, no
  // permission, controller missing).
  static StatusOr<std::unique_ptr<SandboxCgroup>> Enter(const CgroupLimits& limits);
  // Whether a group with a pids limit could be made here, and how (for odin
  // doctor): "cgroup v1 (pids, memory)", or the reason it cannot.
  static Status Probe(std::string* how);
  ~SandboxCgroup();
  // Moves the calling process back to where it was and removes the group.
  void Leave();
  const std::string& description() const { return description_; }

 private:
  SandboxCgroup() = default;
  struct Dir {
    std::string path;    // the group's directory
    std::string parent;  // where the process was
  };
  std::vector<Dir> dirs_;
  std::string description_;
  bool left_ = false;
};

}  // namespace odin
