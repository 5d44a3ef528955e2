#include "remote/slurm_launcher.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include "base/clock.h"
#include "base/file_util.h"
#include "base/ids.h"
#include "base/secrets.h"
#include "base/subprocess.h"
#include "workspace/workspace_files.h"

namespace odin {

StatusOr<std::unique_ptr<SlurmLauncher>> SlurmLauncher::Make(SlurmLauncherOptions o) {
  if (o.srun.empty() || access(o.srun.c_str(), X_OK) != 0) {
    return Status::FailedPrecondition("workers.remote.launcher slurm", "srun is not on PATH (install slurm-client)");
  }
  if (access(o.key.c_str(), R_OK) != 0) {
    return Status::FailedPrecondition(
        "workers.remote.launcher slurm",
        "the hosts' key " + o.key + " is missing (run `odin keys generate --host slurm`)");
  }
  std::string host = o.connect.compare(0, 6, "tcp://") == 0 ? o.connect.substr(6, o.connect.rfind(':') - 6) : "";
  if (host.empty() || host == "0.0.0.0" || host == "[::]" || host == "*" || o.connect.ends_with(":0") ||
      (!o.allow_loopback && (host.compare(0, 4, "127.") == 0 || host == "localhost" || host == "[::1]"))) {
    return Status::InvalidArgument("workers.remote.slurm.connect",
                                   "host agents on the cluster's nodes need an address they can dial "
                                   "(tcp://HOST:PORT, not a wildcard or loopback), not " +
                                       (o.connect.empty() ? std::string("nothing") : o.connect));
  }
  if (o.cpus < 1 || o.memory_mb < 1) {
    return Status::InvalidArgument("workers.remote.slurm", "cpus and memory_mb must be at least 1");
  }
  return std::unique_ptr<SlurmLauncher>(new SlurmLauncher(std::move(o)));
}

SlurmLauncher::~SlurmLauncher() {
  // Given back: SIGTERM reaches the agents through srun, and they end their
  // workers. What has not ended after a moment is killed with the launcher.
  for (const auto& [pid, name] : running_) launcher_.SignalGroup(pid, SIGTERM);
  SteadyTime until = RealClock::Get()->Now() + seconds(3);
  while (!running_.empty() && RealClock::Get()->Now() < until) {
    for (const ExitedProcess& e : launcher_.ReapExited()) running_.erase(e.pid);
    if (!running_.empty()) usleep(20000);
  }
}

std::vector<std::string> SlurmLauncher::SrunArgv(const std::string& name) const {
  std::vector<std::string> argv = {o_.srun,
                                   "--job-name=odin-" + name,
                                   "--nodes=1",
                                   "--ntasks=1",
                                   "--cpus-per-task=" + std::to_string(o_.cpus),
                                   "--mem=" + std::to_string(o_.memory_mb),
                                   "--time=" + o_.time,
                                   "--kill-on-bad-exit=1",
                                   "--quiet"};
  if (!o_.partition.empty()) argv.push_back("--partition=" + o_.partition);
  // --once: the host serves this coordinator alone, and exits when its
  // session ends (or none welcomes it), so a job never outlives its use.
  argv.insert(argv.end(),
              {o_.odin, "-C", o_.workspace, "host", "--once", "--connect", o_.connect, "--key", o_.key,
               "--coordinator-key", o_.coordinator_key, "--name", name, "--workers", std::to_string(o_.cpus)});
  return argv;
}

StatusOr<std::string> SlurmLauncher::Launch() {
  if (running_.size() >= static_cast<size_t>(o_.max_hosts)) {
    return Status::ResourceExhausted("workers.remote.slurm.max_hosts", std::to_string(o_.max_hosts) + " hosts run");
  }
  // The name the host says in its Hello: ours, and unlike any other
  // coordinator's.
  std::string name = "slurm-" + RandomHex(2) + "-" + std::to_string(++next_);
  SpawnOptions spawn;
  spawn.argv = SrunArgv(name);
  // SLURM_CONF and the like, which srun exports to the task; never our
  // secrets (the model's API keys stay on this machine), and never the
  // variables of an allocation we may run in (the deploy batch script):
  // with SLURM_JOB_ID, srun would make a step of that job, not a new one.
  for (std::string& e : ScrubEnvironment(CurrentEnvironment())) {
    bool job = e.compare(0, 6, "SLURM_") == 0 && e.compare(0, 11, "SLURM_CONF=") != 0;
    if (!job) spawn.env.push_back(std::move(e));
  }
  // No parent-death signal: it would come when the thread that launched
  // srun ends, and in odin serve that is whichever session's thread pumped
  // the shared hosts (remote/shared_hosts.h), not the process. srun ends
  // with its agent (--once: the agent exits once its coordinator is lost),
  // and the launcher releases every host it still has when it goes.
  std::string log = JoinPath(o_.log_dir, name + ".log");
  // In Odin's state directory: through the safe file layer.
  StatusOr<WorkspaceFiles> state = WorkspaceFiles::Open(o_.log_dir);
  StatusOr<UniqueFd> opened =
      state.ok() ? state->OpenAppend(name + ".log", 0600, /*truncate_over=*/0) : StatusOr<UniqueFd>(state.status());
  int fd = opened.ok() ? opened->release() : -1;
  if (fd >= 0) {
    spawn.stdout_fd = fd;
    spawn.stderr_fd = fd;
  }
  StatusOr<pid_t> pid = launcher_.Launch(spawn);
  if (fd >= 0) close(fd);
  if (!pid.ok()) return pid.status().WithContext("srun");
  running_[*pid] = name;
  spdlog::info("asked Slurm for host {} (srun pid {}; its output: {})", name, *pid, log);
  return name;
}

void SlurmLauncher::Release(const std::string& name) {
  for (const auto& [pid, n] : running_) {
    if (n != name) continue;
    released_[name] = true;
    launcher_.SignalGroup(pid, SIGTERM);
  }
}

std::vector<std::pair<std::string, std::string>> SlurmLauncher::Ended() {
  std::vector<std::pair<std::string, std::string>> ended;
  for (const ExitedProcess& e : launcher_.ReapExited()) {
    auto it = running_.find(e.pid);
    if (it == running_.end()) continue;
    std::string how = released_.erase(it->second) > 0 ? "given back" : "srun " + DescribeWaitStatus(e.wait_status);
    ended.emplace_back(it->second, how);
    running_.erase(it);
  }
  return ended;
}

}  // namespace odin
