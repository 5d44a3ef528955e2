#include "session/runtime.h"

#include "workspace/overlay_changes.h"

#include "odin/v1/worker.pb.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <mutex>
#include <set>

#include <spdlog/spdlog.h>

#include "base/file_util.h"
#include "base/version.h"
#include "base/secrets.h"
#include "config/mcp_token_store.h"
#include "config/sandbox_settings.h"
#include "config/approval_store.h"
#include "config/config_loader.h"
#include "remote/curve_keys.h"
#include "remote/slurm_launcher.h"
#include "pool/worker_sandbox.h"
#include "sandbox/cgroup.h"
#include "sandbox/sandbox_options.h"
#include "sandbox/shared_network.h"
#include "sandbox/workspace_overlay.h"
#include "telemetry/telemetry_settings.h"
#include "workspace/isolated_views.h"
#include "workspace/workspace_files.h"

namespace odin {

StatusOr<std::unique_ptr<RemoteHosts>> ListenForHosts(const Workspace& ws, const Config& config, SandboxPolicy policy,
                                                      bool commands_network, Duration heartbeat, int liveness) {
  const Config::RemoteWorkers& r = config.remote;
  std::string keys = r.keys.empty() ? DefaultKeysDir() : r.keys;
  RemoteHostsOptions o;
  o.listen = r.listen;
  StatusOr<CurveKeyPair> server = LoadKeyPair(JoinPath(keys, "coordinator.key"));
  if (!server.ok()) {
    return server.status().WithContext("workers.remote: the coordinator's key (run `odin keys generate`)");
  }
  o.server = *server;
  StatusOr<std::set<std::string>> allowed = LoadAllowedHosts(JoinPath(keys, "allowed_hosts"));
  if (!allowed.ok()) return allowed.status().WithContext("workers.remote: the hosts' allow list");
  o.allowed_hosts = *allowed;
  o.workspace = ws.root;
  ASSIGN_OR_RETURN(o.workspace_token, EnsureWorkspaceToken(ws.state_dir));
  // What local workers would get: bubblewrap is a must under require, and
  // under auto when we are root (no fallback for root there either).
  o.require_namespaces = policy == SandboxPolicy::kRequire || (policy == SandboxPolicy::kAuto && geteuid() == 0);
  o.sandbox_policy = SandboxPolicyName(policy);
  o.commands_network = commands_network;
  for (const std::string& k : r.kinds) {
    if (k == "subagent") o.kinds.insert(WorkerPolicy::kSubagent);
    if (k == "readonly") o.kinds.insert(WorkerPolicy::kReadonly);
    if (k == "writable") o.kinds.insert(WorkerPolicy::kWritable);
  }
  o.heartbeat_interval = heartbeat;
  o.liveness = liveness;
  StatusOr<std::unique_ptr<RemoteHosts>> hosts = RemoteHosts::Listen(std::move(o), RealClock::Get());
  if (!hosts.ok()) return hosts.status().WithContext("workers.remote: cannot listen on " + r.listen);
  return hosts;
}

namespace {

// workers.remote.launcher slurm: hosts asked of Slurm, dialing us back.
StatusOr<std::unique_ptr<SlurmLauncher>> MakeSlurmLauncher(const Workspace& ws, const Config& config,
                                                           const std::string& bin, const std::string& endpoint) {
  const Config::RemoteWorkers::Slurm& c = config.remote.slurm;
  std::string keys = config.remote.keys.empty() ? DefaultKeysDir() : config.remote.keys;
  SlurmLauncherOptions o;
  const char* path = getenv("PATH");
  o.srun = SearchPath("srun", path != nullptr ? path : "/usr/bin:/bin");
  o.odin = JoinPath(bin, "odin");
  o.workspace = ws.root;
  o.connect = c.connect;
  // Named by the user, it may be loopback (a single-node cluster); and
  // without a port, it means the one we listen on.
  o.allow_loopback = !c.connect.empty();
  std::string dial = o.connect.size() > 6 ? o.connect.substr(6) : "";
  if (!dial.empty() && (dial.find(':') == std::string::npos || dial.back() == ']')) {
    o.connect += endpoint.substr(endpoint.rfind(':'));
  }
  if (o.connect.empty()) {
    // Where we listen, as the nodes can dial it: a wildcard is our name.
    o.connect = endpoint;
    char name[256] = "";
    gethostname(name, sizeof name - 1);
    for (const char* any : {"0.0.0.0", "[::]", "*"}) {
      size_t at = o.connect.find(any);
      if (at != std::string::npos) o.connect.replace(at, strlen(any), name);
    }
  }
  o.key = JoinPath(keys, "hosts/slurm.key");
  o.coordinator_key = JoinPath(keys, "coordinator.pub");
  o.partition = c.partition;
  o.cpus = c.cpus;
  o.memory_mb = c.memory_mb;
  o.time = c.time;
  o.max_hosts = c.max_hosts;
  o.log_dir = ws.state_dir;
  return SlurmLauncher::Make(std::move(o));
}

}  // namespace

Runtime::~Runtime() {
  // The ledger's last records reach the disk, and the change tracker's
  // watches are released, while the workers exit.
  // Background commands end first, each end recorded.
  if (coordinator_) coordinator_->EndBackgroundCommands("the session ended", seconds(10));
  if (coordinator_) coordinator_->StopTracking();
  // An MCP worker with an HTTP session ends it (DELETE, at most 1 s) before
  // it exits: it gets the time, which an exit that comes sooner does not use.
  bool http_mcp = std::any_of(config_.mcp_servers.begin(), config_.mcp_servers.end(),
                              [](const auto& s) { return s.second.transport == McpServerSpec::Transport::kHttp; });
  if (coordinator_)
    coordinator_->Shutdown(http_mcp ? milliseconds(1500) : milliseconds(200), [this] { FlushLedger(); });
  coordinator_.reset();
  // The spans still open end now, and what is queued goes to the collector
  // (a wait of at most OtlpExporter::kShutdownWait).
  if (ledger_) ledger_->set_observer(nullptr);
  telemetry_.reset();
  telemetry_exporter_.reset();
  remote_hosts_.reset();
  if (worker_log_fd_ >= 0) close(worker_log_fd_);
}

void Runtime::StartTelemetry(const Config& config) {
  StatusOr<TelemetrySettings> settings = ReadTelemetrySettings(config.telemetry_enabled, EnvironmentMap());
  if (!settings.ok()) {
    std::cerr << "odin: telemetry is off: " << settings.status().message() << "\n";
    return;
  }
  if (!settings->enabled) return;
  // (A URL with a password is not logged.)
  auto shown = [](const std::string& url) {
    return url.empty() ? std::string("nowhere") : HasUrlPassword(url) ? std::string("a URL with a password") : url;
  };
  spdlog::info("telemetry on ({}): traces to {}, metrics to {}", settings->because, shown(settings->traces_url),
               shown(settings->metrics_url));
  TelemetryResource resource;
  resource.service_name = settings->service_name;
  resource.service_version = ODIN_VERSION;
  for (const auto& [k, v] : settings->resource_attributes) resource.attributes.push_back({k, v});
  telemetry_exporter_ = std::make_unique<OtlpExporter>(std::move(*settings), std::move(resource));
  telemetry_ = std::make_unique<LedgerTelemetry>(telemetry_exporter_.get());
  ledger_->set_observer(telemetry_.get());
}

bool Runtime::FinishBeforeExit() {
  // Telemetry must be sent, and remote hosts told: that takes the destructors.
  if (remote_hosts_ || telemetry_) return false;
  coordinator_->EndBackgroundCommands("the session ended", seconds(10));
  FlushLedger();  // while the overlays' removal goes on
  coordinator_->FinishBeforeExit();
  transport_->RemoveSocketDir();
  return true;
}

StatusOr<std::unique_ptr<Runtime>> Runtime::Start(const RuntimeFlags& flags) {
  ASSIGN_OR_RETURN(Workspace ws, FindWorkspace(flags.dir));
  ASSIGN_OR_RETURN(LoadedConfig loaded, LoadConfig(ws, EnvironmentMap()));
  PrintConfigNotices(loaded);
  return Start(flags, ws, loaded.config);
}

StatusOr<std::unique_ptr<Runtime>> Runtime::Start(const RuntimeFlags& flags, const Workspace& workspace,
                                                  const Config& loaded_config) {
  std::unique_ptr<Runtime> rt(new Runtime());
  rt->workspace_ = workspace;
  const Workspace& ws = rt->workspace_;
  rt->config_ = loaded_config;
  const Config& config = rt->config_;

  ASSIGN_OR_RETURN(SandboxPolicy policy, EffectiveSandboxPolicy(config, flags.sandbox));
  RETURN_IF_ERROR(PrepareStateDir(ws));

  // Odin's state, through the safe file layer (it may be in the
  // workspace).
  std::string log_path = JoinPath(ws.state_dir, "worker.log");
  ASSIGN_OR_RETURN(WorkspaceFiles state, WorkspaceFiles::Open(ws.state_dir));
  StatusOr<UniqueFd> log = state.OpenAppend("worker.log", 0600, /*truncate_over=*/1 << 20);
  if (!log.ok()) return log.status().WithContext("cannot open " + log_path);
  rt->worker_log_fd_ = log->release();

  ASSIGN_OR_RETURN(rt->transport_, ZmqWorkerTransport::Create());

  // Workers get the environment without secrets; the ledger learns the
  // secrets' values so it can redact them wherever they show up.
  std::vector<std::string> env = CurrentEnvironment();
  Redactor redactor;
  redactor.AddSecretsFromEnvironment(env);
  // What MCP servers are given (tokens in env, Authorization headers) never
  // reaches the ledger either.
  for (const auto& [name, spec] : config.mcp_servers) {
    std::vector<std::string> given;
    for (const auto& [k, v] : spec.env) given.push_back(k + "=" + v);
    redactor.AddSecretsFromEnvironment(given);
    for (const auto& [k, v] : spec.headers) {
      std::string key = "mcpServers." + name + ".headers." + k;
      if (v.size() >= 8) redactor.AddSecret(key, v);
      // The token alone too, should a server echo it.
      size_t space = v.find(' ');
      if (space != std::string::npos && v.size() - space - 1 >= 8) redactor.AddSecret(key, v.substr(space + 1));
    }
    // A URL's query (?key=...) often carries a token.
    size_t query = spec.url.find('?');
    if (query != std::string::npos && spec.url.size() - query - 1 >= 8) {
      redactor.AddSecret("mcpServers." + name + ".url", spec.url.substr(query + 1));
    }
  }
  std::vector<std::string> worker_env = ScrubEnvironment(env);
  // The HTTP servers' OAuth tokens (`odin mcp login`): handed to their
  // workers with each request, never recorded (the ledger learns each one).
  // (A refresh waits at most 10 s for another odin's: a session's end
  // waits for its refreshes.)
  rt->mcp_tokens_ =
      std::make_unique<McpTokens>(McpTokenStore(McpTokenStore::DefaultPath(), seconds(10)), config.mcp_servers);

  std::optional<CallMode> parsed_mode = ParseCallMode(flags.mode);
  if (!parsed_mode) return Status::InvalidArgument("mode " + flags.mode, "must be ask, plan, edit or exec");
  CallMode call_mode = *parsed_mode;
  CoordinatorOptions co;
  co.session_kind = flags.session_kind;
  co.workspace = ws.root;
  co.state_dir = ws.state_dir;
  co.mode = call_mode;
  co.artifact_cap_bytes = config.artifact_cap_bytes;
  co.image_cap_bytes = static_cast<int64_t>(config.before_image_cap_bytes);
  co.images_per_command_bytes = static_cast<int64_t>(config.before_images_per_command_bytes);
  co.file_cache = config.file_cache;
  co.pool.size = flags.workers > 0 ? flags.workers : (config.worker_count > 0 ? config.worker_count : CpuCount());
  co.pool.heartbeat_interval = milliseconds(config.heartbeat_ms);
  std::string bin = ExecutableDir();
  int log_fd = rt->worker_log_fd_;
  int heartbeat_ms = config.heartbeat_ms;
  co.pool.start_policy =
      call_mode == CallMode::kAsk || call_mode == CallMode::kPlan ? WorkerPolicy::kReadonly : WorkerPolicy::kWritable;
  co.validation = config.validation;
  co.validation.enabled = config.validation.enabled && flags.validate;
  co.memory_forced = flags.profile == "strict";
  co.grounded_edits = flags.profile == "strict";
  co.breakers = config.breakers;
  co.command_rules = config.permissions;
  if (const char* home = getenv("HOME"); home != nullptr && home[0] == '/') co.home = home;
  co.approval = flags.approval;
  co.track_changes = flags.track_changes;
  co.hooks = config.hooks;
  for (const auto& [name, spec] : config.mcp_servers) co.mcp_servers.push_back(spec);
  co.mcp_authorizer = rt->mcp_tokens_.get();
  if (!config.hooks.empty()) co.transcript_dir = HookTranscriptDir(ws);
  co.pool.subagent_size = config.subagent_concurrency > 0 ? config.subagent_concurrency : 2 * CpuCount();
  co.subagent_timeout = seconds(config.subagent_timeout_seconds);
  co.subagent_stall = config.stall;
  Config::Limits limits = config.sandbox_limits;
  co.command_limits.cpu_seconds = limits.cpu_seconds;
  co.command_limits.file_size_bytes = limits.file_size_mb << 20;
  co.command_limits.open_files = limits.open_files;
  co.command_limits.address_space_bytes = limits.address_space_mb << 20;
  WorkerSandboxOptions sandbox_options = WorkerSandboxSettings(config, ws);
  if (!sandbox_options.mask_notice.empty()) std::cerr << "odin: " << sandbox_options.mask_notice << "\n";
  WorkerSandbox sandbox = WorkerSandbox::Make(ws, sandbox_options, policy, bin);
  co.commands_network = flags.network || config.sandbox_network;
  co.max_background = config.max_background;
  co.pool.background_size = std::max(config.max_background, 1);
  auto web = std::make_shared<v1::WebFetchOptions>();
  for (const std::string& entry : config.web.allow_private) web->add_allow_private(entry);
  web->set_proxy(config.web.proxy);
  web->set_max_bytes(config.web.max_bytes);
  web->set_timeout_seconds(static_cast<uint32_t>(config.web.timeout_seconds));
  web->set_max_redirects(static_cast<uint32_t>(config.web.max_redirects));
  co.web_fetch_options = std::move(web);
  co.web_cache_ttl = seconds(60 * config.web.cache_minutes);
  sandbox.set_commands_network(co.commands_network);
  // Without the host's network, edit mode's commands share one network of
  // their own, so a background server is there for later commands. Not
  // for odin exec's one command (unless its commands need the proxy), nor
  // where nothing is sandboxed.
  bool proxied = !co.commands_network && config.sandbox_network_rules.on && policy != SandboxPolicy::kOff;
  if (config.sandbox_network_rules.on && !co.commands_network && policy == SandboxPolicy::kOff) {
    std::cerr << "odin: sandbox.network's rules need the sandbox: with sandbox.policy off, commands reach the "
                 "whole network\n";
  }
  UniqueFd proxy_listener;
  if (!co.commands_network && policy != SandboxPolicy::kOff && (flags.session_kind != "exec" || proxied)) {
    StatusOr<SharedNetwork> net = MakeSharedNetwork(JoinPath(bin, "odin-sandbox"), proxied ? kCommandsProxyPort : 0);
    if (net.ok()) {
      rt->commands_netns_ = std::move(net->netns);
      proxy_listener = std::move(net->proxy_listener);
      sandbox.set_commands_netns(rt->commands_netns_.get());
      if (proxied) sandbox.set_commands_proxy_port(kCommandsProxyPort);
    } else {
      spdlog::warn(
          "{}: each command has a network of its own (a server started in the background is not "
          "reachable from later commands{})",
          net.status().ToString(), proxied ? "; no host sandbox.network allows is reachable" : "");
    }
  }
  // Commands' writes wait in an overlay of their own, read and applied by
  // the coordinator: only while changes are tracked, only where the
  // directory for it can be made, and not where commands run as the
  // workspace's owner while Odin runs as root (that user cannot reach
  // Odin's state, where the directory lives).
  if (co.track_changes && sandbox.run_uid() < 0 && state.MakeDirs("overlay", 0700).ok()) {
    // What workers killed before (here or in another session) left: gone
    // before ours make theirs. Nothing to do costs a directory's listing.
    if (int swept = SweepWorkspaceOverlayDirs(CommandOverlayRoot(ws.state_dir)); swept > 0) {
      spdlog::info("removed {} overlay directories left by workers that are gone", swept);
    }
    sandbox.set_overlay_root(CommandOverlayRoot(ws.state_dir));
    co.overlay_commands = true;
  }
  PrepareCgroupParent(config.sandbox_limits, policy, &sandbox);
  co.pool.worker_uid = sandbox.run_uid();
  co.pool.describe_setup_failure = [state_dir = ws.state_dir] {
    // The launcher's last line in the log: "odin-sandbox: <why>".
    StatusOr<WorkspaceFiles> state = WorkspaceFiles::Open(state_dir);
    StatusOr<std::string> log =
        state.ok() ? state->ReadFile("worker.log", 4 << 20, WorkspaceFiles::Links::kNone) : state.status();
    if (!log.ok()) return std::string();
    size_t at = log->rfind("odin-sandbox: ");
    if (at == std::string::npos) return std::string();
    std::string line = log->substr(at + 14, log->find('\n', at) - at - 14);
    return line.size() > 400 ? line.substr(0, 400) + "..." : line;
  };
  co.pool.spawn_spec = WorkerSpawnSpec(sandbox, bin, ws.root, heartbeat_ms, worker_env,
                                       McpWorkerEnvironments(config.mcp_servers), log_fd);
  // The commands reach the hosts sandbox.network allows through the proxy,
  // and nothing else (without it, nothing at all).
  if (proxy_listener.valid()) {
    StatusOr<std::unique_ptr<CommandsProxy>> proxy =
        CommandsProxy::Start(sandbox, bin, std::move(proxy_listener), config, worker_env, log_fd);
    if (proxy.ok()) {
      rt->commands_proxy_ = std::move(*proxy);
      co.commands_proxy_fd = rt->commands_proxy_->control_fd();
    } else {
      std::cerr << "odin: the commands' network proxy: " << proxy.status().message() << "; commands reach no network\n";
    }
  }
  // Masks stay masks: a worker whose masked host files were replaced since
  // it started is retired before its next call.
  if (policy != SandboxPolicy::kOff) co.pool.host_masks = [sandbox] { return sandbox.HostMaskIdentities(); };

  if (config.remote.launcher != "off") {
    // An isolated session's hosts are the workspace's: they serve its
    // path, and run this session's workers in its view (SpawnWorker.view).
    const Workspace hosts_ws = ViewedWorkspace(ws);
    // The hosts of this process (odin serve's sessions share them), made
    // by the first session that asks: listening, Slurm's launcher, the
    // wait for the first hosts.
    auto make = [&]() -> StatusOr<std::unique_ptr<RemoteHosts>> {
      ASSIGN_OR_RETURN(
          std::unique_ptr<RemoteHosts> hosts,
          ListenForHosts(hosts_ws, config, policy, co.commands_network, co.pool.heartbeat_interval, co.pool.liveness));
      if (config.remote.launcher == "slurm") {
        ASSIGN_OR_RETURN(std::unique_ptr<SlurmLauncher> slurm,
                         MakeSlurmLauncher(hosts_ws, config, bin, hosts->endpoint()));
        hosts->set_launcher(std::move(slurm), seconds(std::max(1, config.idle_seconds)));
      }
      if (config.remote.wait_hosts > 0) {
        Status joined =
            hosts->WaitForHosts(static_cast<size_t>(config.remote.wait_hosts), seconds(config.remote.wait_seconds));
        if (!joined.ok()) std::cerr << "odin: " << joined.message() << "; going on with the hosts there are\n";
      }
      return hosts;
    };
    // Shared only by sessions that would have made the same hosts.
    const Config::RemoteWorkers& r = config.remote;
    std::string identity = hosts_ws.root + "\n" + SandboxPolicyName(policy) + (co.commands_network ? " network" : "") +
                           "\n" + r.launcher + " " + r.keys + " " + std::to_string(co.pool.heartbeat_interval.count()) +
                           " " + std::to_string(co.pool.liveness) + " " + std::to_string(config.idle_seconds);
    for (const std::string& k : r.kinds) identity += " " + k;
    identity += "\n" + r.slurm.partition + " " + std::to_string(r.slurm.cpus) + " " +
                std::to_string(r.slurm.memory_mb) + " " + r.slurm.time + " " + std::to_string(r.slurm.max_hosts) + " " +
                r.slurm.connect;
    StatusOr<std::unique_ptr<SharedHosts>> hosts = SharedHosts::Lease(r.listen, identity, make, ws.view);
    if (!hosts.ok() && hosts.status().code() != StatusCode::kAlreadyExists) return hosts.status();
    if (hosts.ok()) {
      rt->remote_hosts_ = std::move(*hosts);
      co.pool.hosts = rt->remote_hosts_.get();
      co.pool.surplus_idle = seconds(std::max(1, config.idle_seconds));
      if (flags.hosts_first) co.pool.hosts_first = seconds(std::max(1, config.remote.wait_seconds));
    } else {
      // Another odin holds the port (odin serve, while odin exec runs in the
      // same workspace): this one's workers run here.
      std::cerr << "odin: " << hosts.status().message() << "; this session's workers run on this machine\n";
    }
  }

  // Workers start first: their sandboxes come up on another core while the
  // ledger opens. A ledger that fails to open takes them down again (the
  // Runtime's destructor).
  rt->coordinator_ =
      std::make_unique<Coordinator>(std::move(co), RealClock::Get(), &rt->launcher_, rt->transport_.get());
  RETURN_IF_ERROR(rt->coordinator_->StartWorkers());
  // The user's saved approvals (config/approval_store.h): this workspace's
  // and every workspace's answer here, whichever front end asks; "always"
  // answers are saved there. A store that cannot be read answers nothing.
  if (std::string path = ApprovalStore::DefaultPath(EnvironmentMap()); !path.empty()) {
    ApprovalStore store(path);
    // An isolated session's are its workspace's.
    const std::string& root = ws.view_of.empty() ? ws.root : ws.view_of;
    StatusOr<std::vector<std::string>> saved = store.KeysFor(root);
    if (saved.ok()) {
      rt->coordinator_->AddSavedApprovals(*saved);
    } else {
      std::cerr << "odin: saved approvals not read: " << saved.status().message() << "\n";
    }
    rt->coordinator_->on_approval_saved = [store, root](const std::string& key, bool every_workspace) {
      return store.Save({key}, every_workspace ? "" : root, RealClock::Get()->WallMillis());
    };
  }
  ASSIGN_OR_RETURN(rt->ledger_, Ledger::Open(ws.ledger_path, std::move(redactor)));
  rt->StartTelemetry(config);
  rt->mcp_tokens_->set_on_secret([ledger = rt->ledger_.get()](const std::string& name, const std::string& value) {
    ledger->AddSecret(name, value);
  });
  if (flags.resume_session.empty()) {
    RETURN_IF_ERROR(rt->coordinator_->AttachLedger(rt->ledger_.get()));
  } else {
    RETURN_IF_ERROR(rt->coordinator_->ResumeSession(rt->ledger_.get(), flags.resume_session));
  }
  // In the background: the first model request does not wait for them.
  if (flags.start_mcp) rt->coordinator_->StartMcpServers();
  return rt;
}

}  // namespace odin
