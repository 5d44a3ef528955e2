#pragma once
// ProcessLauncher: how long-lived owners (the worker pool) start, signal and
// reap child processes. RealProcessLauncher uses Spawn() and pidfds; tests use
// a fake that records launches and exits on command.
//
// Thread-safety: none; owned and used by one loop.

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/subprocess.h"

namespace odin {

struct ExitedProcess {
  pid_t pid;
  int wait_status;  // as from waitpid
};

class ProcessLauncher {
 public:
  virtual ~ProcessLauncher() = default;
  // Starts a child in its own process group. Returns its pid.
  virtual StatusOr<pid_t> Launch(const SpawnOptions& options) = 0;
  // Sends sig to the child's whole process group.
  virtual void SignalGroup(pid_t pid, int sig) = 0;
  // SIGKILLs a process group that a dead child left behind, by the pgid the
  // child reported for it (only meaningful when the child shared our pid
  // namespace).
  virtual void KillOrphanedGroup(pid_t pgid) = 0;
  // Reaps the children that have exited since the last call, without blocking.
  virtual std::vector<ExitedProcess> ReapExited() = 0;
  // Fds that become readable when a child exits (to poll on), possibly none.
  virtual std::vector<int> WatchFds() const = 0;
};

// Real children. The destructor kills (SIGKILL) and reaps every child still
// alive, so no child outlives its launcher.
class RealProcessLauncher final : public ProcessLauncher {
 public:
  RealProcessLauncher() = default;
  ~RealProcessLauncher() override;
  RealProcessLauncher(const RealProcessLauncher&) = delete;
  RealProcessLauncher& operator=(const RealProcessLauncher&) = delete;

  StatusOr<pid_t> Launch(const SpawnOptions& options) override;
  void SignalGroup(pid_t pid, int sig) override;
  void KillOrphanedGroup(pid_t pgid) override;
  std::vector<ExitedProcess> ReapExited() override;
  std::vector<int> WatchFds() const override;

 private:
  std::map<pid_t, int> children_;  // pid -> pidfd (-1 if none)
};

}  // namespace odin
