#pragma once
// Runtime: what a coordinator process sets up before it can run a tool call,
// in order: workspace, config, state directory, ledger, worker transport,
// launcher and the coordinator with its worker pool. Every front end uses it:
// odin exec, odin tool, and (through AgentSession) odin -p, the interactive
// session and odin serve.
//
// Destruction runs in reverse: the pool shuts its workers down before the
// transport and the ledger go away.

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/process_launcher.h"
#include "base/status.h"
#include "base/unique_fd.h"
#include "config/config.h"
#include "coordinator/coordinator.h"
#include "ledger/ledger.h"
#include "pool/worker_transport.h"
#include "remote/remote_hosts.h"
#include "remote/shared_hosts.h"
#include "session/commands_proxy.h"
#include "session/mcp_tokens.h"
#include "telemetry/ledger_telemetry.h"
#include "telemetry/otlp_exporter.h"
#include "pool/worker_sandbox.h"
#include "pool/worker_spawn.h"
#include "workspace/workspace.h"

namespace odin {

struct RuntimeFlags {
  std::string dir;      // -C; empty: the current directory
  std::string sandbox;  // --sandbox auto|require|off; empty: from config
  int workers = 0;      // 0: config, else the number of cores
  std::string session_kind = "exec";
  std::string mode = "exec";      // the mode whose workers start first (ask and plan: read-only)
  std::string resume_session;     // non-empty: continue this session instead of starting one
  bool validate = false;          // validate writes (if validation.enabled in the config)
  std::string profile = "auto";   // strict: memory-forced reasoning after a failed validation
  std::string approval = "deny";  // a command that needs approval: deny or allow
  bool track_changes = true;      // false only for benchmarks of what tracking costs
  bool start_mcp = false;         // start the MCP servers (agent sessions)
  bool network = false;           // --network: edit-mode commands reach the network
  // Its work belongs on workers.remote's hosts (an attempt beyond this
  // machine's share): WorkerPoolOptions::hosts_first, after
  // workers.remote.wait_seconds.
  bool hosts_first = false;
};

class Runtime {
 public:
  // Sets everything up and starts the workers. Errors name what failed, e.g.
  // "cannot create the state directory: ...". The config comes from
  // LoadConfig (config_loader.h), whose notices go to stderr.
  static StatusOr<std::unique_ptr<Runtime>> Start(const RuntimeFlags& flags);
  // The same with the workspace and its config loaded already (AgentSession
  // reads the model settings from them first): one load, one opinion.
  static StatusOr<std::unique_ptr<Runtime>> Start(const RuntimeFlags& flags, const Workspace& ws, const Config& config);
  ~Runtime();

  const Workspace& workspace() const { return workspace_; }
  const Config& config() const { return config_; }
  Coordinator& coordinator() { return *coordinator_; }
  Ledger& ledger() { return *ledger_; }
  // The hosts of workers.remote (this process's, shared by its sessions);
  // null when it is off.
  SharedHosts* remote_hosts() { return remote_hosts_.get(); }
  // Ledger::Flush, if the ledger is open (a failed Start may not have got
  // that far).
  void FlushLedger() {
    if (ledger_) ledger_->Flush();
  }
  // For a process about to end without destructors (odin exec, once its
  // call is over and written out): what must outlast the process is done
  // (the ledger on disk, the overlays' directories and the sockets' removed)
  // and the workers are left to go with it, so the process's exit waits for
  // no sandbox's teardown. False, having done nothing, where that is not
  // safe: with remote hosts, which must be told.
  bool FinishBeforeExit();

 private:
  Runtime() = default;

  Workspace workspace_;
  Config config_;
  RealProcessLauncher launcher_;
  std::unique_ptr<Ledger> ledger_;
  std::unique_ptr<ZmqWorkerTransport> transport_;
  std::unique_ptr<SharedHosts> remote_hosts_;  // workers.remote: the pool's other machines
  int worker_log_fd_ = -1;
  // The network edit mode's commands share (sandbox/shared_network.h):
  // held while workers may join it.
  UniqueFd commands_netns_;
  // sandbox.network's rules: the commands' proxy (commands_proxy.h).
  std::unique_ptr<CommandsProxy> commands_proxy_;
  // OpenTelemetry (telemetry/), when the user opted in: the ledger's
  // observer and the exporter it feeds, gone before the ledger.
  std::unique_ptr<OtlpExporter> telemetry_exporter_;
  std::unique_ptr<LedgerTelemetry> telemetry_;
  void StartTelemetry(const Config& config);
  std::unique_ptr<McpTokens> mcp_tokens_;     // outlives the coordinator, which asks it
  std::unique_ptr<Coordinator> coordinator_;  // destroyed before the ledger it records in
};

// workers.remote: listens for host agents with the keys of workers.remote.keys,
// after making sure the workspace has the token hosts read.
StatusOr<std::unique_ptr<RemoteHosts>> ListenForHosts(const Workspace& ws, const Config& config, SandboxPolicy policy,
                                                      bool commands_network, Duration heartbeat, int liveness);

}  // namespace odin
