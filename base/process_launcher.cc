#include "base/process_launcher.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

namespace odin {

RealProcessLauncher::~RealProcessLauncher() {
  for (auto& [pid, pidfd] : children_) {
    kill(-pid, SIGKILL);
    int status;
    WaitPid(pid, &status, 0);
    if (pidfd >= 0) close(pidfd);
  }
}

StatusOr<pid_t> RealProcessLauncher::Launch(const SpawnOptions& options) {
  ASSIGN_OR_RETURN(pid_t pid, Spawn(options));
  children_[pid] = OpenPidFd(pid);
  return pid;
}

void RealProcessLauncher::SignalGroup(pid_t pid, int sig) {
  if (children_.count(pid) == 0) return;  // never signal a pid we do not own
  kill(-pid, sig);
}

void RealProcessLauncher::KillOrphanedGroup(pid_t pgid) {
  if (pgid > 1) kill(-pgid, SIGKILL);
}

std::vector<ExitedProcess> RealProcessLauncher::ReapExited() {
  std::vector<ExitedProcess> exited;
  for (auto it = children_.begin(); it != children_.end();) {
    int status = 0;
    if (WaitPid(it->first, &status, WNOHANG) == it->first) {
      exited.push_back({it->first, status});
      if (it->second >= 0) close(it->second);
      it = children_.erase(it);
    } else {
      ++it;
    }
  }
  return exited;
}

std::vector<int> RealProcessLauncher::WatchFds() const {
  std::vector<int> fds;
  for (const auto& [pid, pidfd] : children_) {
    if (pidfd >= 0) fds.push_back(pidfd);
  }
  return fds;
}

}  // namespace odin
