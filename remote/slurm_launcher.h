#pragma once
// SlurmLauncher: host agents asked of a Slurm cluster (workers.remote.launcher
// "slurm"). Each host is one `srun` this process runs and watches: a job of
// one task on one node, with the partition, CPUs, memory and time limit of
// workers.remote.slurm, whose task is `odin host --connect ...`. The srun
// lives as long as the job: when Slurm ends the job (scancel, the time
// limit, a node failure), srun exits and Ended() says so; Release() sends
// srun SIGTERM, which Slurm forwards to the task, and the agent ends its
// workers and exits.
//
// We schedule nothing ourselves: when to start a host is RemoteHosts'
// choice (calls wait), where and when it runs is Slurm's.
//
// The odin binary, the keys directory and the workspace must be at the same
// paths on the cluster's nodes (a shared filesystem).
//
// Thread-safety: none; owned by the pool's loop.

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/process_launcher.h"
#include "base/status.h"
#include "remote/remote_hosts.h"

namespace odin {

struct SlurmLauncherOptions {
  std::string srun;             // the srun binary (found on PATH)
  std::string odin;             // the odin binary the nodes run
  std::string workspace;        // odin -C
  std::string connect;          // tcp://HOST:PORT the agents dial
  std::string key;              // the hosts' secret key file (hosts/slurm.key)
  std::string coordinator_key;  // the coordinator's public key file
  std::string partition;        // "": the cluster's default
  int cpus = 2;
  int memory_mb = 4096;
  std::string time = "1:00:00";
  int max_hosts = 2;
  std::string log_dir;  // each srun's output: <log_dir>/<host name>.log
  // Tests: a single-node cluster's hosts dial 127.0.0.1; a real one's
  // cannot.
  bool allow_loopback = false;
};

class SlurmLauncher final : public HostLauncher {
 public:
  // Checks what the hosts need (srun, the key) before any job is asked for.
  static StatusOr<std::unique_ptr<SlurmLauncher>> Make(SlurmLauncherOptions options);
  // Releases every host still running.
  ~SlurmLauncher() override;

  StatusOr<std::string> Launch() override;
  void Release(const std::string& name) override;
  std::vector<std::pair<std::string, std::string>> Ended() override;
  std::vector<int> WatchFds() const override { return launcher_.WatchFds(); }
  size_t max_hosts() const override { return static_cast<size_t>(o_.max_hosts); }
  int cpus() const override { return o_.cpus; }

  // The srun command line for a host of this name (for tests and the log).
  std::vector<std::string> SrunArgv(const std::string& name) const;

 private:
  explicit SlurmLauncher(SlurmLauncherOptions o) : o_(std::move(o)) {}

  SlurmLauncherOptions o_;
  RealProcessLauncher launcher_;
  std::map<pid_t, std::string> running_;  // srun pid -> host name
  std::map<std::string, bool> released_;  // names given back (their end is no surprise)
  int next_ = 0;
};

}  // namespace odin
