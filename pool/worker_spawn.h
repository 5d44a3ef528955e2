#pragma once
// How a worker process is started: odin-sandbox's command line for its
// policy, then the worker's program. The coordinator's pool and a host
// agent's (remote/host_agent.cc) use the same.

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "base/process_launcher.h"
#include "base/status.h"
#include "base/subprocess.h"
#include "pool/worker_pool.h"
#include "pool/worker_sandbox.h"
#include "sandbox/sandbox_options.h"

namespace odin {

// The command line of a worker: odin-sandbox with the policy's sandbox,
// then the worker's program connecting to its own socket. lane_env: the
// environment entry an MCP lane's worker gets (its server's spec).
std::function<SpawnOptions(const WorkerSpawn&)> WorkerSpawnSpec(const WorkerSandbox& sandbox, const std::string& bin,
                                                                const std::string& workspace, int heartbeat_ms,
                                                                const std::vector<std::string>& worker_env,
                                                                const std::map<std::string, std::string>& lane_env,
                                                                int log_fd);

// Starts a worker with spawn_spec's command line, its credentials
// ("<id> <secret>\n") on a pipe it inherits (spawn.credentials_fd is set
// here). The line fits the pipe's buffer, so the write end is closed before
// the worker starts. The coordinator's pool and a host agent both start
// workers so.
StatusOr<pid_t> LaunchWorker(ProcessLauncher* launcher,
                             const std::function<SpawnOptions(const WorkerSpawn&)>& spawn_spec, WorkerSpawn spawn,
                             const std::string& secret);

// cgroup v2: gives the sandboxes' groups a parent that delegates pids and
// memory (odin may first move itself into a leaf). On v1 each launcher
// manages on its own; where neither works, the launchers say so.
void PrepareCgroupParent(const SandboxLimits& limits, SandboxPolicy policy, WorkerSandbox* sandbox);

// Returns the number of online CPUs (at least 1).
int CpuCount();

}  // namespace odin
