#include "pool/worker_spawn.h"

#include <signal.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include "base/file_util.h"
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
    if (IsMcpPolicy(w.policy)) {
      auto server = lane_env.find(w.lane);
      if (server != lane_env.end()) o.env.push_back(server->second);
    }
    o.stderr_fd = log_fd;
    // SIGTERM, not SIGKILL: without namespaces the launcher uses it to kill
    // the worker's whole tree before it goes.
    o.parent_death_signal = SIGTERM;
    return o;
  };
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
