#include "pool/worker_spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>

#include <spdlog/spdlog.h>

#include "base/file_util.h"
#include "base/unique_fd.h"
#include "pool/worker_pool.h"
#include "sandbox/cgroup.h"

namespace odin {

int CpuCount() {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

std::function<SpawnOptions(const WorkerSpawn&)> WorkerSpawnSpec(const WorkerSandbox& sandbox, const std::string& bin,
                                                                const std::string& workspace, int heartbeat_ms,
                                                                const std::vector<std::string>& worker_env,
                                                                const std::map<std::string, std::string>& lane_env,
                                                                int log_fd) {
  return [=](const WorkerSpawn& w) {
    SpawnOptions o;
    o.argv = sandbox.LauncherArgv(w.policy, w.socket_path, w.credentials_fd, w.lane);
    const char* program = w.policy == WorkerPolicy::kLspHost    ? "odin-lsp-host"
                          : w.policy == WorkerPolicy::kSubagent ? "odin-subagent"
                          : IsMcpPolicy(w.policy)               ? "odin-mcp-worker"
                          : w.policy == WorkerPolicy::kWeb      ? "odin-web-worker"
                                                                : "odin-worker";
    o.argv.insert(o.argv.end(), {JoinPath(bin, program), "--connect", w.endpoint, "--credentials-fd",
                                 std::to_string(w.credentials_fd), "--workspace", workspace, "--heartbeat-ms",
                                 std::to_string(heartbeat_ms)});
    o.env = worker_env;
    for (std::string& e : sandbox.ProxyEnvFor(w.policy, w.id)) o.env.push_back(std::move(e));
    if (IsMcpPolicy(w.policy)) {
      auto server = lane_env.find(w.lane);
      if (server != lane_env.end()) o.env.push_back(server->second);
    }
    o.stderr_fd = log_fd;
    if (int netns = sandbox.NetnsFdFor(w.policy); netns >= 0) o.keep_fds.push_back(netns);
    // SIGTERM, not SIGKILL: without namespaces the launcher uses it to kill
    // the worker's whole tree before it goes.
    o.parent_death_signal = SIGTERM;
    return o;
  };
}

StatusOr<pid_t> LaunchWorker(ProcessLauncher* launcher,
                             const std::function<SpawnOptions(const WorkerSpawn&)>& spawn_spec, WorkerSpawn spawn,
                             const std::string& secret) {
  ASSIGN_OR_RETURN(Pipe credentials, MakePipe(O_CLOEXEC));
  std::string line = spawn.id + " " + secret + "\n";
  bool written = write(credentials.write_end.get(), line.data(), line.size()) == static_cast<ssize_t>(line.size());
  credentials.write_end.reset();
  if (!written) return PosixError("credentials pipe", EIO);
  spawn.credentials_fd = credentials.read_end.get();
  SpawnOptions spec = spawn_spec(spawn);
  spec.keep_fds.push_back(spawn.credentials_fd);
  return launcher->Launch(spec);  // the read end closes as we return: the worker has its copy
}

void PrepareCgroupParent(const SandboxLimits& limits, SandboxPolicy policy, WorkerSandbox* sandbox) {
  // cgroup v2: the sandboxes' groups need a parent that delegates pids and
  // memory; odin may first have to move itself into a leaf. On v1 each
  // launcher manages on its own.
  CgroupLimits cgroup_limits{limits.processes, limits.memory_mb << 20};
  if (cgroup_limits.any() && policy != SandboxPolicy::kOff && IsCgroupV2("/sys/fs/cgroup")) {
    CgroupHost host = CgroupHost::Real();
    CgroupV2Plan plan = PlanCgroupV2(host, cgroup_limits);
    Status applied =
        plan.possible ? ApplyCgroupV2Plan(plan, host) : Status::FailedPrecondition("cgroup v2", plan.reason);
    if (applied.ok()) {
      sandbox->set_cgroup_parent(plan.parent);
    } else {
      // Each launcher says so in the workers' log; odin doctor explains.
      spdlog::debug("no cgroup v2 parent for sandboxes: {}", applied.message());
    }
  }
}

}  // namespace odin
