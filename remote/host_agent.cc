// odin host: the agent on another machine (remote/host_agent.h).
// Long file: a connection's session (its workers, the relays both ways, the
// overlays it lands) and the reconnecting loop around it are one state
// machine, read together.

#include "remote/host_agent.h"

#include <fcntl.h>
#include <poll.h>
#include <grp.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <future>
#include <iostream>
#include <map>
#include <memory>
#include <optional>

#include <spdlog/spdlog.h>

#include "base/file_util.h"
#include "base/ids.h"
#include "base/process_launcher.h"
#include "base/secrets.h"
#include "base/subprocess.h"
#include "base/unique_fd.h"
#include "base/version.h"
#include "config/sandbox_settings.h"
#include "config/config_loader.h"
#include "remote/remote_hosts.h"
#include "sandbox/workspace_overlay.h"
#include "workspace/command_landing.h"
#include "workspace/git_ignore.h"
#include "workspace/isolated_views.h"
#include "workspace/overlay_changes.h"
#include "workspace/workspace_files.h"
#include "pool/worker_spawn.h"
#include "pool/worker_sandbox.h"
#include "pool/worker_transport.h"
#include "odin/v1/host.pb.h"
#include "odin/v1/worker.pb.h"

namespace odin {

namespace {

v1::HostEnvelope NewEnvelope() {
  v1::HostEnvelope env;
  env.set_protocol_version(v1::HOST_PROTOCOL_VERSION_CURRENT);
  return env;
}

std::string HostName() {
  char buf[256] = "";
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

bool Stopped(int stop_fd) {
  if (stop_fd < 0) return false;
  pollfd p{stop_fd, POLLIN, 0};
  return poll(&p, 1, 0) == 1;
}

// What odin-sandbox gives a command of edit mode here: "bwrap", or
// "none: <why>" (the Landlock fallback, or no sandbox).
std::string ProbeSandbox(const WorkerSandbox& sandbox) {
  SpawnOptions o;
  o.argv = sandbox.LauncherArgv(WorkerPolicy::kWritable);
  o.argv.insert(o.argv.end(), {"/bin/sh", "-c", "printf '@%s\\n' \"$ODIN_SANDBOX\""});
  o.env = ScrubEnvironment(CurrentEnvironment());
  StatusOr<CommandOutput> out = RunCommand(o);
  if (!out.ok()) return "none: " + out.status().message();
  size_t at = out->output.rfind('@');
  if (out->exit_code != 0 || at == std::string::npos) {
    std::string first = out->output.substr(0, out->output.find('\n'));
    return "none: " + (first.empty() ? std::string("the sandbox did not start") : first);
  }
  std::string d = out->output.substr(at + 1);
  while (!d.empty() && d.back() == '\n') d.pop_back();
  return d;
}

// How much a sandbox policy demands: the host takes the stricter of its own
// and the coordinator's.
int Strictness(SandboxPolicy p) {
  switch (p) {
    case SandboxPolicy::kRequire: return 3;
    case SandboxPolicy::kAuto: return 2;
    case SandboxPolicy::kFallback: return 1;
    case SandboxPolicy::kOff: return 0;
  }
  return 3;
}

// Kills a process group a worker without namespaces reported for its
// command, with no more power than the worker had: as its uid. As root
// with workers that run as root too, the worker's word is not enough to
// kill anything (it could name any group), so nothing is killed.
void KillReportedGroup(pid_t pgid, int64_t worker_uid) {
  if (pgid <= 1) return;
  if (worker_uid < 0 || static_cast<uid_t>(worker_uid) == geteuid()) {
    if (geteuid() != 0) kill(-pgid, SIGKILL);
    return;
  }
  pid_t child = fork();
  if (child == 0) {
    if (setgroups(0, nullptr) == 0 && setgid(static_cast<gid_t>(worker_uid)) == 0 &&
        setuid(static_cast<uid_t>(worker_uid)) == 0) {
      kill(-pgid, SIGKILL);
    }
    _exit(0);
  }
  if (child > 0) waitpid(child, nullptr, 0);
}

// An execution id as the coordinator makes them: a name, never a path.
bool PlainId(const std::string& id) {
  if (id.empty() || id.size() > 128) return false;
  return std::all_of(id.begin(), id.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'; });
}

// One connection's life: the workers it runs.
class Session {
 public:
  Session(const HostAgentOptions& o, const Workspace& ws, const Config& config, SandboxPolicy own_policy,
          ZmqEndpoint* coordinator, const v1::HostWelcome& welcome, ZmqWorkerTransport* transport,
          ProcessLauncher* launcher, const std::string& overlay_root)
      : o_(o),
        ws_(ws),
        config_(config),
        coordinator_(coordinator),
        transport_(transport),
        launcher_(launcher),
        overlay_root_(overlay_root) {
    heartbeat_ = milliseconds(std::max<uint32_t>(10, welcome.heartbeat_ms()));
    liveness_ = std::max<uint32_t>(1, welcome.liveness());
    // The coordinator may ask for more than this host's own settings, never
    // for less: the stricter sandbox policy, and network for commands only
    // where both allow it.
    StatusOr<SandboxPolicy> asked = ParseSandboxPolicy(welcome.sandbox_policy());
    policy_ = asked.ok() && Strictness(*asked) > Strictness(own_policy) ? *asked : own_policy;
    if (!asked.ok()) policy_ = SandboxPolicy::kRequire;
    commands_network_ = welcome.commands_network() && config.sandbox_network;
    spawn_spec_ = SpawnSpecFor(ws, &worker_uid_);
    // Commands write into an overlay whose upper directory is on this
    // host's own disk; the agent lands it (StartLanding). Not where commands run as
    // the workspace's owner while the agent is root (that user cannot reach
    // the agent's directory), as on the coordinator's machine.
    if (worker_uid_ >= 0) overlay_root_.clear();
  }

  // Serves until the coordinator is lost (returns false) or we are stopped
  // (returns true). Either way every worker is gone when it returns.
  // goodbye(): the coordinator said it was going.
  bool said_goodbye() const { return goodbye_; }
  // The Hello was #1 of this connection, and so was the Welcome.
  bool Serve() {
    Clock* clock = RealClock::Get();
    SteadyTime coordinator_expiry = clock->Now() + heartbeat_ * liveness_;
    SteadyTime next_heartbeat = clock->Now() + heartbeat_;
    bool stopped = false;
    while (true) {
      std::vector<PollFd> fds;
      if (o_.stop_fd >= 0) fds.push_back({o_.stop_fd});
      for (int fd : launcher_->WatchFds()) fds.push_back({fd});
      for (int fd : coordinator_->WaitFds()) fds.push_back({fd});
      SteadyTime now = clock->Now();
      Duration wait = std::max(Duration::zero(), std::min(next_heartbeat, coordinator_expiry) - now);
      if (coordinator_->Readable()) wait = Duration::zero();
      if (!landings_.empty()) wait = std::min(wait, Duration(milliseconds(10)));  // a landing's end is not a wakeup
      Status waited = transport_->Wait(wait, &fds);
      if (!waited.ok()) spdlog::warn("wait: {}", waited.message());
      if (Stopped(o_.stop_fd)) {
        stopped = true;
        break;
      }
      RelayFromWorkers();
      FinishLandings(/*wait=*/false);
      // Expired first: after a stall (a paused VM, SIGSTOP), the backlog the
      // coordinator sent long ago must not revive a session it has given up.
      if (clock->Now() >= coordinator_expiry) {
        spdlog::warn("the coordinator is silent for {} heartbeat intervals: killing {} worker(s), reconnecting",
                     liveness_, workers_.size());
        break;
      }
      if (!HandleCoordinator(&coordinator_expiry)) break;  // refused or bad: as good as lost
      for (const ExitedProcess& e : launcher_->ReapExited()) OnExit(e.pid, e.wait_status);
      now = clock->Now();
      if (now >= coordinator_expiry) {
        spdlog::warn("the coordinator is silent for {} heartbeat intervals: killing {} worker(s), reconnecting",
                     liveness_, workers_.size());
        break;
      }
      if (now >= next_heartbeat) {
        v1::HostEnvelope hb = NewEnvelope();
        hb.mutable_heartbeat();
        SendToCoordinator(std::move(hb));
        next_heartbeat = now + heartbeat_;
      }
      if (!lost_.empty()) {
        spdlog::warn("{}: killing {} worker(s), reconnecting", lost_, workers_.size());
        break;
      }
    }
    KillAll();
    return stopped;
  }

 private:
  // An isolated session's view the host runs workers in: its tree, and how
  // a worker starts there.
  struct ViewSpawn {
    std::string root;
    std::function<SpawnOptions(const WorkerSpawn&)> spec;
  };

  struct Worker {
    std::string id;
    std::string endpoint;
    pid_t pid = 0;
    bool namespaced = true;  // from its Hello
    pid_t job_pgid = 0;      // its command's group, as it reported it (without namespaces)
    std::string running;     // the execution id of the call relayed to it, until its result
    std::string root;        // its workspace: the workspace's, or a view's tree
  };

  // Numbers the message; one that cannot be sent (the queue to the
  // coordinator is full, or the connection is gone) ends the session:
  // nothing the coordinator waits for is dropped quietly.
  void SendToCoordinator(v1::HostEnvelope env) {
    if (!lost_.empty()) return;
    env.set_seq(++sent_);
    Status sent = coordinator_->Send("", env.SerializeAsString());
    if (!sent.ok()) lost_ = "cannot send to the coordinator (" + sent.message() + ")";
  }

  void RelayFromWorkers() {
    std::string id;
    v1::Envelope env;
    for (;;) {
      StatusOr<bool> got = transport_->Receive(&id, &env);
      if (!got.ok() || !*got) return;
      Worker* w = Find(id);
      if (w == nullptr) continue;  // someone else on a worker's socket: the coordinator never hears of it
      // What the host must know to clean up after a worker without
      // namespaces (the coordinator judges the rest).
      if (env.has_hello()) w->namespaced = env.hello().sandbox().namespaces();
      if (env.has_tool_progress() && env.tool_progress().has_started_pgid()) {
        w->job_pgid = env.tool_progress().started_pgid();
      }
      v1::HostEnvelope relay = NewEnvelope();
      relay.mutable_relay()->set_worker_id(id);
      relay.mutable_relay()->set_envelope(env.SerializeAsString());
      if (env.has_tool_result()) {
        w->job_pgid = 0;
        std::string call = std::move(w->running);
        w->running.clear();
        // What the command wrote lands before the coordinator hears that it
        // ended: for the call it was given, by the id we relayed, never by
        // the worker's word. The result waits for it; the rest goes on.
        if (!call.empty() && env.tool_result().execution_id() == call) {
          if (StartLanding(id, call, &relay)) continue;
        } else if (!overlay_root_.empty() && PlainId(call)) {
          RemoveWorkspaceOverlayDirs(JoinPath(overlay_root_, call));  // a result for another call: nothing lands
        }
      }
      SendToCoordinator(std::move(relay));
    }
  }

  // How this host starts a worker whose workspace is w (the workspace, or
  // one of its views).
  // *uid: whom its workers run as (-1: as we do).
  std::function<SpawnOptions(const WorkerSpawn&)> SpawnSpecFor(const Workspace& w, int64_t* uid) {
    WorkerSandbox sandbox = WorkerSandbox::Make(w, WorkerSandboxSettings(config_, w), policy_, ExecutableDir());
    sandbox.set_commands_network(commands_network_);
    PrepareCgroupParent(config_.sandbox_limits, sandbox.policy(), &sandbox);
    *uid = sandbox.run_uid();
    if (*uid < 0 && !overlay_root_.empty()) sandbox.set_overlay_root(overlay_root_);
    return WorkerSpawnSpec(sandbox, ExecutableDir(), w.root, static_cast<int>(ToMillis(heartbeat_)),
                           ScrubEnvironment(CurrentEnvironment()), McpWorkerEnvironments(config_.mcp_servers),
                           STDERR_FILENO);
  }

  // An isolated session's view of this host's workspace, by the id the
  // coordinator gave: only a view under the workspace's own state
  // directory, there now. Its spawn spec is made once.
  StatusOr<const ViewSpawn*> ViewSpec(const std::string& id) {
    auto it = views_.find(id);
    if (it != views_.end()) return &it->second;
    ASSIGN_OR_RETURN(Workspace w, ExistingViewWorkspace(ws_, id));
    int64_t uid = -1;
    auto spec = SpawnSpecFor(w, &uid);
    // Its workers' sockets and overlays are made for the workspace's.
    if (uid != worker_uid_) return Status::FailedPrecondition("view " + id, "its workers would run as another user");
    return &(views_[id] = ViewSpawn{std::move(w.root), std::move(spec)});
  }

  Worker* Find(const std::string& id) {
    for (auto& [pid, w] : workers_) {
      if (w.id == id) return &w;
    }
    return nullptr;
  }

  // A worker is gone: its socket closes, and a command it started in a
  // group of its own (no pid namespace to end it) is killed.
  void Ended(const Worker& w) {
    transport_->CloseEndpoint(w.endpoint);
    // A command cut off lands nothing: the coordinator ends its call as
    // crashed and looks at the whole tree.
    if (!overlay_root_.empty() && PlainId(w.running)) RemoveWorkspaceOverlayDirs(JoinPath(overlay_root_, w.running));
    if (!w.namespaced && w.job_pgid > 0) KillReportedGroup(w.job_pgid, worker_uid_);
  }

  // Returns false when the coordinator refused us or broke the protocol.
  bool HandleCoordinator(SteadyTime* expiry) {
    std::string peer, payload;
    for (;;) {
      StatusOr<bool> got = coordinator_->TryReceive(&peer, &payload);
      if (!got.ok()) {
        spdlog::warn("from the coordinator: {}", got.status().message());
        return true;
      }
      if (!*got) return true;
      v1::HostEnvelope env;
      if (!env.ParseFromString(payload) || env.protocol_version() != v1::HOST_PROTOCOL_VERSION_CURRENT) {
        spdlog::error("the coordinator broke the protocol; reconnecting");
        return false;
      }
      if (env.seq() != received_ + 1) {
        spdlog::warn("messages from the coordinator were lost (expected #{}, got #{}); reconnecting", received_ + 1,
                     env.seq());
        return false;
      }
      received_ = env.seq();
      *expiry = RealClock::Get()->Now() + heartbeat_ * liveness_;
      switch (env.body_case()) {
        case v1::HostEnvelope::kHeartbeat: break;
        case v1::HostEnvelope::kSpawn: Spawn(env.spawn()); break;
        case v1::HostEnvelope::kSignal:
          for (const auto& [pid, w] : workers_) {
            int sig = env.signal().signal();
            if (w.id == env.signal().worker_id() && (sig == SIGTERM || sig == SIGKILL))
              launcher_->SignalGroup(pid, sig);
          }
          break;
        case v1::HostEnvelope::kRelay: {
          v1::Envelope inner;
          if (!inner.ParseFromString(env.relay().envelope())) break;
          if (inner.has_tool_request()) {
            if (Worker* w = Find(env.relay().worker_id())) w->running = inner.tool_request().execution_id();
          }
          Status sent = transport_->Send(env.relay().worker_id(), inner);
          if (!sent.ok()) spdlog::debug("relay to {}: {}", env.relay().worker_id(), sent.message());
          break;
        }
        case v1::HostEnvelope::kRefused:
          std::cerr << "odin host: the coordinator refused this host: " << env.refused().reason() << "\n";
          return false;
        case v1::HostEnvelope::kGoodbye:
          spdlog::info("the coordinator said goodbye: ending {} worker(s), looking for the next one", workers_.size());
          goodbye_ = true;
          return false;
        default: break;
      }
    }
  }

  void Spawn(const v1::SpawnWorker& s) {
    auto exited = [&](const std::string& why) {
      spdlog::error("cannot start worker {}: {}", s.worker_id(), why);
      v1::HostEnvelope env = NewEnvelope();
      env.mutable_exited()->set_worker_id(s.worker_id());
      env.mutable_exited()->set_wait_status(1 << 8);
      env.mutable_exited()->set_reason("the host could not start it: " + why);
      SendToCoordinator(std::move(env));
    };
    if (static_cast<int>(workers_.size()) >= MaxWorkers()) return exited("the host runs its most workers already");
    WorkerPolicy policy = static_cast<WorkerPolicy>(s.policy());
    if (policy != WorkerPolicy::kWritable && policy != WorkerPolicy::kReadonly && policy != WorkerPolicy::kSubagent) {
      return exited("that kind of worker never runs on a host");
    }
    const std::function<SpawnOptions(const WorkerSpawn&)>* spec = &spawn_spec_;
    std::string root = ws_.root;
    if (!s.view().empty()) {
      auto view = ViewSpec(s.view());
      if (!view.ok()) return exited(view.status().message());
      spec = &(*view)->spec;
      root = (*view)->root;
    }
    StatusOr<WorkerTransport::WorkerEndpoint> endpoint = transport_->OpenEndpoint(worker_uid_);
    if (!endpoint.ok()) return exited(endpoint.status().message());
    StatusOr<pid_t> pid = LaunchWorker(
        launcher_, *spec, {s.worker_id(), policy, "", endpoint->endpoint, endpoint->socket_path}, s.secret());
    if (!pid.ok()) {
      transport_->CloseEndpoint(endpoint->endpoint);
      return exited(pid.status().message());
    }
    Worker w{s.worker_id(), endpoint->endpoint, *pid};
    w.root = std::move(root);
    workers_[*pid] = std::move(w);
  }

  void OnExit(pid_t pid, int wait_status) {
    auto it = workers_.find(pid);
    if (it == workers_.end()) return;
    Ended(it->second);
    v1::HostEnvelope env = NewEnvelope();
    env.mutable_exited()->set_worker_id(it->second.id);
    env.mutable_exited()->set_wait_status(wait_status);
    SendToCoordinator(std::move(env));
    workers_.erase(it);
  }

  // Every worker and its commands, killed and reaped (and what was landing, landed).
  void KillAll() {
    FinishLandings(/*wait=*/true);
    for (const auto& [pid, w] : workers_) launcher_->SignalGroup(pid, SIGKILL);
    SteadyTime until = RealClock::Get()->Now() + seconds(5);
    while (!workers_.empty() && RealClock::Get()->Now() < until) {
      std::vector<PollFd> fds;
      for (int fd : launcher_->WatchFds()) fds.push_back({fd});
      (void)transport_->Wait(milliseconds(50), &fds);
      for (const ExitedProcess& e : launcher_->ReapExited()) {
        auto it = workers_.find(e.pid);
        if (it == workers_.end()) continue;
        Ended(it->second);
        workers_.erase(it);
      }
    }
    for (const auto& [pid, w] : workers_) Ended(w);  // not reaped in time: their sockets close all the same
    workers_.clear();
  }

  // A command's overlay landing on a thread of its own (copying a big tree
  // onto a network file system outlasts the liveness timeout; the relays
  // and heartbeats go on meanwhile), and the result it holds back.
  struct Landing {
    std::string call, base;
    v1::HostEnvelope result;
    StatusOr<UniqueFd> lock = UniqueFd();
    std::optional<WorkspaceFiles> files;
    std::unique_ptr<CommandLandingRules> rules;
    std::unique_ptr<GitIgnore> ignore;
    OverlayApplyOptions options;
    std::future<OverlayApplied> done;
  };

  // Starts landing the overlay of call (worker's), if its command ran over
  // one (its upper directory is there: our look, not the worker's word),
  // into the shared workspace, with the coordinator's rules for what must
  // not land; the result goes with what landed once it has (FinishLandings).
  // False: no overlay to land. The coordinator ran the call alone among
  // those that write, so nothing of ours changed the tree meanwhile; what
  // another machine wrote there, no one here could see.
  bool StartLanding(const std::string& worker, const std::string& call, v1::HostEnvelope* result) {
    if (overlay_root_.empty() || !PlainId(call)) return false;
    Worker* w = Find(worker);
    if (w == nullptr) return false;
    const std::string root = w->root;  // the workspace, or the view it works in
    auto l = std::make_unique<Landing>();
    l->call = call;
    l->base = JoinPath(overlay_root_, call);
    if (!IsDirectory(l->base + "/u")) return false;
    l->result = std::move(*result);
    // Held as the coordinator holds its own: the worker may not have let go yet.
    l->lock = LockOverlayDir(l->base, /*exclusive=*/false);
    if (StatusOr<WorkspaceFiles> files = WorkspaceFiles::Open(root); files.ok()) l->files.emplace(std::move(*files));
    l->rules = std::make_unique<CommandLandingRules>(root, l->files ? &*l->files : nullptr, l->base + "/u");
    l->ignore = GitIgnore::Open(root);
    OverlayApplyOptions& o = l->options;
    o.changed_meanwhile = [](const std::string&) { return false; };
    o.must_not_land = [rules = l->rules.get()](const std::string& rel) { return rules->MustNotLand(rel); };
    o.ignore = l->ignore.get();
    o.image_cap_bytes = 0;  // the coordinator keeps the images; we only land
    o.discarded_dir = JoinPath(ws_.state_dir, "displaced/" + call);
    Landing* p = l.get();
    p->done = std::async(std::launch::async, [p, root] { return ApplyOverlayUpper(root, p->base + "/u", p->options); });
    landings_[worker] = std::move(l);
    return true;
  }

  // Sends the results whose overlays have landed (wait: all, once landed),
  // each with what landed.
  void FinishLandings(bool wait) {
    for (auto it = landings_.begin(); it != landings_.end();) {
      Landing& l = *it->second;
      if (!wait && l.done.wait_for(Duration::zero()) != std::future_status::ready) {
        ++it;
        continue;
      }
      OverlayApplied a = l.done.get();
      std::vector<std::string> paths(a.unchanged.begin(), a.unchanged.end());
      for (const PathChange& pc : a.changes.changes) paths.push_back(pc.path);
      for (const auto& [dir, count] : a.changes.ignored) paths.push_back(dir);
      paths.insert(paths.end(), a.counted_trees.begin(), a.counted_trees.end());
      std::sort(paths.begin(), paths.end());
      paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
      v1::CommandLanded* landed = l.result.mutable_relay()->mutable_landed();
      landed->set_execution_id(l.call);
      for (std::string& p : paths) landed->add_paths(std::move(p));
      for (const std::string& p : a.discarded) landed->add_discarded(p);
      for (const std::string& p : a.failed) landed->add_failed(p);
      for (const PathChange& pc : a.changes.changes) {
        if (pc.before && pc.before->type == EntryType::kFile && !pc.before->sha256.empty()) {
          (*landed->mutable_before_sha256())[pc.path] = pc.before->sha256;
        }
      }
      RemoveWorkspaceOverlayDirs(l.base);
      SendToCoordinator(std::move(l.result));
      it = landings_.erase(it);
    }
  }

  int MaxWorkers() const { return o_.max_workers > 0 ? o_.max_workers : CpuCount(); }

  const HostAgentOptions& o_;
  Workspace ws_;
  Config config_;
  ZmqEndpoint* coordinator_;
  ZmqWorkerTransport* transport_;
  ProcessLauncher* launcher_;
  Duration heartbeat_ = milliseconds(500);
  uint32_t liveness_ = 3;
  int64_t worker_uid_ = -1;
  SandboxPolicy policy_ = SandboxPolicy::kRequire;
  bool commands_network_ = false;
  std::function<SpawnOptions(const WorkerSpawn&)> spawn_spec_;
  // Isolated sessions' views (SpawnWorker.view): by id.
  std::map<std::string, ViewSpawn> views_;
  std::map<pid_t, Worker> workers_;
  bool goodbye_ = false;
  uint64_t sent_ = 1;         // the Hello
  uint64_t received_ = 1;     // the Welcome
  std::string lost_;          // why the connection is as good as lost
  std::string overlay_root_;  // the commands' upper directories, on this host's disk ("": none)
  std::map<std::string, std::unique_ptr<Landing>> landings_;  // by worker id
};

enum class Answer { kWelcome, kRefused, kRetry, kNone, kStopped };

// Waits for the answer to our Hello.
Answer AwaitWelcome(ZmqEndpoint* coordinator, const HostAgentOptions& o, v1::HostWelcome* welcome) {
  SteadyTime until = RealClock::Get()->Now() + o.hello_timeout;
  while (RealClock::Get()->Now() < until) {
    std::vector<PollFd> fds;
    if (o.stop_fd >= 0) fds.push_back({o.stop_fd});
    StatusOr<bool> ready = coordinator->Poll(until - RealClock::Get()->Now(), &fds);
    if (Stopped(o.stop_fd)) return Answer::kStopped;
    if (!ready.ok() || !*ready) continue;
    std::string peer, payload;
    StatusOr<bool> got = coordinator->TryReceive(&peer, &payload);
    if (!got.ok() || !*got) continue;
    v1::HostEnvelope env;
    if (!env.ParseFromString(payload) || env.protocol_version() != v1::HOST_PROTOCOL_VERSION_CURRENT) {
      std::cerr << "odin host: the coordinator speaks another protocol\n";
      return Answer::kRefused;
    }
    if (env.has_refused()) {
      std::cerr << "odin host: the coordinator refused this host: " << env.refused().reason()
                << (env.refused().retry() ? " (trying again)" : "") << "\n";
      return env.refused().retry() ? Answer::kRetry : Answer::kRefused;
    }
    if (env.has_welcome() && env.seq() == 1) {
      *welcome = env.welcome();
      return Answer::kWelcome;
    }
  }
  return Answer::kNone;
}

}  // namespace

int RunHostAgent(const HostAgentOptions& o) {
  StatusOr<Workspace> ws = FindWorkspace(o.dir);
  if (!ws.ok()) {
    std::cerr << "odin host: " << ws.status().message() << "\n";
    return 1;
  }
  StatusOr<LoadedConfig> loaded = LoadConfig(*ws, EnvironmentMap());
  if (!loaded.ok()) {
    std::cerr << "odin host: " << loaded.status().message() << "\n";
    return 1;
  }
  PrintConfigNotices(*loaded);
  const Config& config = loaded->config;
  StatusOr<SandboxPolicy> probe_policy = EffectiveSandboxPolicy(config, o.sandbox);
  if (!probe_policy.ok()) {
    std::cerr << "odin host: " << probe_policy.status().message() << "\n";
    return 2;
  }
  WorkerSandbox probe = WorkerSandbox::Make(*ws, WorkerSandboxSettings(config, *ws), *probe_policy, ExecutableDir());
  std::string sandbox = ProbeSandbox(probe);
  std::string name = o.name.empty() ? HostName() : o.name;
  spdlog::info("host {}: sandbox {}, workspace {}", name, sandbox, ws->root);

  StatusOr<std::unique_ptr<ZmqWorkerTransport>> transport = ZmqWorkerTransport::Create();
  if (!transport.ok()) {
    std::cerr << "odin host: " << transport.status().message() << "\n";
    return 1;
  }
  // The commands' overlays: their upper directories on this host's own disk
  // (an overlay's upper cannot be on a network file system), gone when the
  // agent is. Without one, commands write into the shared workspace itself,
  // and the coordinator looks at the whole tree after each.
  // Held (shared) while the agent lives: an agent killed outright leaves
  // its directory, which the next one to start removes.
  StatusOr<std::string> overlay_root = MakeTempDir("odin-host-overlays");
  StatusOr<UniqueFd> held = overlay_root.ok() ? LockOverlayDir(*overlay_root, /*exclusive=*/false)
                                              : StatusOr<UniqueFd>(overlay_root.status());
  if (!held.ok()) {
    spdlog::warn("no overlays for commands: {}", held.status().message());
    if (overlay_root.ok()) RemoveWorkspaceOverlayDirs(*overlay_root);
  } else if (int swept = SweepUnheldDirs(DirName(*overlay_root), "odin-host-overlays-"); swept > 0) {
    spdlog::info("removed {} overlay directories left by host agents that are gone", swept);
  }
  struct Remove {
    std::string dir;
    ~Remove() {
      if (!dir.empty()) RemoveWorkspaceOverlayDirs(dir);  // through the safe layer, what overlayfs left mode 000 too
    }
  } remove{held.ok() ? *overlay_root : ""};
  RealProcessLauncher launcher;
  Duration backoff = milliseconds(200);
  SteadyTime started = RealClock::Get()->Now();
  while (!Stopped(o.stop_fd)) {
    if (o.once && RealClock::Get()->Now() - started >= o.join_timeout) {
      std::cerr << "odin host: no coordinator welcomed this host within " << ToMillis(o.join_timeout) / 1000
                << " s; exiting\n";
      return 1;
    }
    StatusOr<std::unique_ptr<ZmqEndpoint>> coordinator =
        ZmqEndpoint::ConnectCurveDealer(o.connect, "host-" + RandomHex(8), o.key, o.coordinator_key);
    if (!coordinator.ok()) {
      std::cerr << "odin host: " << coordinator.status().message() << "\n";
      return 2;
    }
    // Read afresh for each Hello: the coordinator makes it when it first listens.
    StatusOr<std::string> token = ReadWorkspaceToken(ws->state_dir);
    v1::HostEnvelope hello = NewEnvelope();
    v1::HostHello* h = hello.mutable_hello();
    h->set_host(name);
    h->set_cores(static_cast<uint32_t>(CpuCount()));
    h->set_max_workers(static_cast<uint32_t>(o.max_workers > 0 ? o.max_workers : CpuCount()));
    h->set_sandbox(sandbox);
    h->set_namespaces(sandbox == "bwrap");
    h->set_workspace(ws->root);
    h->set_workspace_token(token.ok() ? *token : "");
    h->set_version(ODIN_VERSION);
    hello.set_seq(1);
    Status sent = (*coordinator)->Send("", hello.SerializeAsString());
    if (!sent.ok()) spdlog::debug("hello: {}", sent.message());
    v1::HostWelcome welcome;
    Answer answer = sent.ok() ? AwaitWelcome(coordinator->get(), o, &welcome) : Answer::kNone;
    if (answer == Answer::kStopped) break;
    if (answer == Answer::kRefused) return 1;
    if (answer == Answer::kWelcome) {
      std::cerr << "odin host: joined " << o.connect << " as " << welcome.host_id() << "\n";
      backoff = milliseconds(200);
      Session session(o, *ws, config, *probe_policy, coordinator->get(), welcome, transport->get(), &launcher,
                      remove.dir);
      if (session.Serve()) break;
      if (o.once) {
        std::cerr << "odin host: the session with " << o.connect << " ended; exiting (--once)\n";
        return 0;
      }
      if (session.said_goodbye()) {
        coordinator->reset();
        continue;  // at once: a coordinator that restarts is back within moments
      }
    } else if (answer == Answer::kNone) {
      spdlog::warn("no answer from {} (not listening, or it does not accept this host's key); retrying in {} ms",
                   o.connect, ToMillis(backoff));
    }
    coordinator->reset();
    pollfd p{o.stop_fd, POLLIN, 0};
    poll(&p, o.stop_fd >= 0 ? 1 : 0, static_cast<int>(ToMillis(backoff)));
    backoff = std::min(o.max_backoff, backoff * 2);
  }
  return 0;
}

}  // namespace odin
