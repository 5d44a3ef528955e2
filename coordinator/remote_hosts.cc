#include "coordinator/remote_hosts.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include <spdlog/spdlog.h>

#include "base/file_util.h"
#include "base/ids.h"
#include "odin/v1/host.pb.h"
#include "odin/v1/worker.pb.h"

namespace odin {

namespace {

constexpr char kTokenFile[] = "host-token";

v1::HostEnvelope NewEnvelope() {
  v1::HostEnvelope env;
  env.set_protocol_version(v1::HOST_PROTOCOL_VERSION_CURRENT);
  return env;
}

}  // namespace

StatusOr<std::string> ReadWorkspaceToken(const std::string& state_dir) {
  ASSIGN_OR_RETURN(std::string text, ReadFileToString(JoinPath(state_dir, kTokenFile)));
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  if (text.size() != 64) return Status::InvalidArgument(JoinPath(state_dir, kTokenFile), "not a workspace token");
  return text;
}

StatusOr<std::string> EnsureWorkspaceToken(const std::string& state_dir) {
  std::string path = JoinPath(state_dir, kTokenFile);
  std::string token = RandomHex(32);
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0 && errno == EEXIST) return ReadWorkspaceToken(state_dir);
  if (fd < 0) return PosixError("cannot create " + path, errno);
  std::string line = token + "\n";
  bool ok = write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()) && fsync(fd) == 0;
  int err = errno;
  close(fd);
  if (!ok) {
    unlink(path.c_str());
    return PosixError("cannot write " + path, err);
  }
  return token;
}

StatusOr<std::unique_ptr<RemoteHosts>> RemoteHosts::Listen(RemoteHostsOptions options, Clock* clock) {
  if (options.allowed_hosts.empty()) {
    return Status::FailedPrecondition("workers.remote", "no host keys are allowed (run `odin keys generate`)");
  }
  ASSIGN_OR_RETURN(std::unique_ptr<ZmqEndpoint> router,
                   ZmqEndpoint::BindCurveRouter(options.listen, options.server, options.allowed_hosts));
  std::unique_ptr<RemoteHosts> hosts(new RemoteHosts(std::move(options), clock, std::move(router)));
  hosts->endpoint_ = hosts->router_->LastEndpoint();
  spdlog::info("listening for hosts on {} (the coordinator's public key {}; {} host keys allowed)", hosts->endpoint_,
               hosts->o_.server.public_key, hosts->o_.allowed_hosts.size());
  hosts->next_heartbeat_ = clock->Now() + hosts->o_.heartbeat_interval;
  return hosts;
}

RemoteHosts::~RemoteHosts() {
  v1::HostEnvelope bye = NewEnvelope();
  bye.mutable_goodbye();
  for (const auto& [peer, h] : hosts_) (void)SendTo(peer, bye);
  if (!hosts_.empty()) router_->SetLinger(milliseconds(200));
}

void RemoteHosts::Note(const std::string& kind, const std::string& text) {
  if (kind == "host_refused") {
    spdlog::warn("{}", text);
    if (refusals_.size() < 100) refusals_.push_back(text);
  } else {
    spdlog::info("{}", text);
  }
  if (on_event_) on_event_(kind, text);
}

std::string RemoteHosts::Judge(const v1::HostHello& hello) const {
  if (hello.workspace() != o_.workspace) {
    return "it sees the workspace at " + hello.workspace() + ", not at " + o_.workspace;
  }
  if (!SecretsEqual(hello.workspace_token(), o_.workspace_token)) {
    return "it does not see this workspace: the token under " + o_.workspace +
           "/.odin is not the one this coordinator wrote (a different filesystem?)";
  }
  if (o_.require_namespaces && !hello.namespaces()) {
    return "its sandbox (" + hello.sandbox() + ") is weaker than sandbox policy " + o_.sandbox_policy +
           " requires (bubblewrap's namespaces)";
  }
  return "";
}

void RemoteHosts::HandleHello(const std::string& peer, const v1::HostHello& hello) {
  std::string label = "host " + (hello.host().empty() ? std::string("(unnamed)") : hello.host());
  std::string why = Judge(hello);
  if (!why.empty()) {
    v1::HostEnvelope env = NewEnvelope();
    env.mutable_refused()->set_reason(why);
    // Only a token that does not match may heal: the first coordinator may
    // not have written it yet when the host read it.
    env.mutable_refused()->set_retry(hello.workspace() == o_.workspace &&
                                     !SecretsEqual(hello.workspace_token(), o_.workspace_token));
    Status sent = SendTo(peer, env);
    if (!sent.ok()) spdlog::debug("refusal to {}: {}", peer, sent.message());
    refused_peers_.insert(peer);
    Note("host_refused", label + " refused: " + why);
    return;
  }
  Host h;
  h.peer = peer;
  // Its name as it gives it, within bounds: it shows in records and logs.
  for (char c : hello.host().substr(0, 64))
    h.name += isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' ? c : '_';
  if (h.name.empty()) h.name = "host";
  h.id = h.name + "#" + std::to_string(++next_host_);
  h.cores = hello.cores();
  h.max_workers = std::max<uint32_t>(1, hello.max_workers());
  h.sandbox = hello.sandbox();
  h.expiry = clock_->Now() + o_.heartbeat_interval * o_.liveness;
  v1::HostEnvelope env = NewEnvelope();
  v1::HostWelcome* w = env.mutable_welcome();
  w->set_host_id(h.id);
  w->set_heartbeat_ms(static_cast<uint32_t>(ToMillis(o_.heartbeat_interval)));
  w->set_liveness(static_cast<uint32_t>(o_.liveness));
  w->set_sandbox_policy(o_.sandbox_policy);
  w->set_commands_network(o_.commands_network);
  Status sent = SendTo(peer, env);
  if (!sent.ok()) {
    spdlog::warn("welcome to {}: {}", label, sent.message());
    return;
  }
  by_id_[h.id] = peer;
  Note("host_joined", label + " joined as " + h.id + " (" + std::to_string(h.cores) + " cores, " +
                          std::to_string(h.max_workers) + " workers, sandbox " + h.sandbox + ")");
  hosts_.emplace(peer, std::move(h));
}

std::string RemoteHosts::Place(WorkerPolicy policy, const std::string& lane) {
  if (!lane.empty() || o_.kinds.count(policy) == 0) return "";
  const Host* best = nullptr;
  for (const auto& [peer, h] : hosts_) {
    if (!h.usable || h.workers.size() >= h.max_workers) continue;
    if (best == nullptr || h.workers.size() * best->max_workers < best->workers.size() * h.max_workers) best = &h;
  }
  return best == nullptr ? "" : best->id;
}

Status RemoteHosts::Spawn(const std::string& host, const std::string& worker_id, const std::string& secret,
                          WorkerPolicy policy, const std::string& lane) {
  auto id = by_id_.find(host);
  if (id == by_id_.end()) return Status::NotFound("host " + host, "not connected");
  v1::HostEnvelope env = NewEnvelope();
  v1::SpawnWorker* s = env.mutable_spawn();
  s->set_worker_id(worker_id);
  s->set_secret(secret);
  s->set_policy(static_cast<uint32_t>(policy));
  s->set_lane(lane);
  RETURN_IF_ERROR(SendTo(id->second, env));
  hosts_[id->second].workers.insert(worker_id);
  return Status::OK();
}

Status RemoteHosts::Send(const std::string& host, const std::string& worker_id, const v1::Envelope& env) {
  auto id = by_id_.find(host);
  if (id == by_id_.end()) return Status::NotFound("host " + host, "not connected");
  v1::HostEnvelope relay = NewEnvelope();
  relay.mutable_relay()->set_worker_id(worker_id);
  relay.mutable_relay()->set_envelope(env.SerializeAsString());
  return SendTo(id->second, relay);
}

void RemoteHosts::Signal(const std::string& host, const std::string& worker_id, int signal) {
  auto id = by_id_.find(host);
  if (id == by_id_.end()) return;  // lost: its workers end with it
  v1::HostEnvelope env = NewEnvelope();
  env.mutable_signal()->set_worker_id(worker_id);
  env.mutable_signal()->set_signal(signal);
  Status sent = SendTo(id->second, env);
  if (!sent.ok()) spdlog::debug("signal to {}: {}", host, sent.message());
}

void RemoteHosts::StartFailed(const std::string& host, const std::string& how) {
  auto id = by_id_.find(host);
  if (id == by_id_.end()) return;
  Host& h = hosts_[id->second];
  if (++h.start_failures >= o_.max_start_failures && h.usable) {
    h.usable = false;
    Note("host_unusable", "host " + h.name + " (" + h.id + "): its workers keep failing to start (the last one " + how +
                              "); no more workers go there");
  }
}

Status RemoteHosts::SendTo(const std::string& peer, const v1::HostEnvelope& env) {
  return router_->Send(peer, env.SerializeAsString());
}

void RemoteHosts::AddWaitFds(std::vector<PollFd>* fds) {
  for (int fd : router_->WaitFds()) fds->push_back({fd});
}

bool RemoteHosts::Pending() { return router_->Readable(); }

SteadyTime RemoteHosts::NextTimer() const {
  SteadyTime t = next_heartbeat_;
  for (const auto& [peer, h] : hosts_) t = std::min(t, h.expiry);
  return t;
}

void RemoteHosts::LoseHost(std::map<std::string, Host>::iterator it, const std::string& why,
                           std::vector<Event>* events) {
  Host& h = it->second;
  Note("host_lost", "host " + h.name + " (" + h.id + ") lost: " + why);
  for (const std::string& worker : h.workers) {
    Event e;
    e.worker_id = worker;
    e.exited = true;
    e.wait_status = SIGKILL;
    e.reason = "its host " + h.name + " was lost (" + why + ")";
    events->push_back(std::move(e));
  }
  by_id_.erase(h.id);
  // Whatever this connection says from now on is not read: the host says
  // a fresh Hello on a new one.
  refused_peers_.insert(it->first);
  hosts_.erase(it);
}

void RemoteHosts::Pump(std::vector<Event>* events) {
  std::string peer, payload;
  for (;;) {
    StatusOr<bool> got = router_->TryReceive(&peer, &payload);
    if (!got.ok()) {
      spdlog::error("hosts: {}", got.status().message());
      break;
    }
    if (!*got) break;
    if (refused_peers_.count(peer) > 0) continue;
    if (refused_peers_.size() > 4096) refused_peers_.clear();  // bounded; a refused host is refused again
    v1::HostEnvelope env;
    if (!env.ParseFromString(payload) || env.protocol_version() != v1::HOST_PROTOCOL_VERSION_CURRENT) {
      auto it = hosts_.find(peer);
      if (it != hosts_.end()) {
        LoseHost(it, "protocol violation: bad or unparseable envelope", events);
      } else {
        refused_peers_.insert(peer);
        Note("host_refused", "a host refused: it speaks another protocol");
      }
      continue;
    }
    auto it = hosts_.find(peer);
    if (it == hosts_.end()) {
      if (env.body_case() == v1::HostEnvelope::kHello) {
        HandleHello(peer, env.hello());
      } else {
        refused_peers_.insert(peer);
        Note("host_refused", "a host refused: it spoke before its Hello");
      }
      continue;
    }
    Host& h = it->second;
    h.expiry = clock_->Now() + o_.heartbeat_interval * o_.liveness;
    switch (env.body_case()) {
      case v1::HostEnvelope::kHeartbeat: break;
      case v1::HostEnvelope::kRelay:
        // Only for its own workers: a host cannot speak for another's.
        if (h.workers.count(env.relay().worker_id()) == 0) break;
        events->push_back({env.relay().worker_id(), false, env.relay().envelope(), 0, ""});
        break;
      case v1::HostEnvelope::kExited:
        if (h.workers.erase(env.exited().worker_id()) == 0) break;
        events->push_back({env.exited().worker_id(), true, "", env.exited().wait_status(), env.exited().reason()});
        break;
      default: LoseHost(it, "protocol violation: unexpected message", events);
    }
  }
  const std::vector<std::string>& keys = router_->refused_keys();
  for (; noted_keys_ < keys.size(); ++noted_keys_) {
    Note("host_refused",
         "a connection refused at its handshake: key " + keys[noted_keys_] + " is not in allowed_hosts");
  }
  SteadyTime now = clock_->Now();
  for (auto it = hosts_.begin(); it != hosts_.end();) {
    auto next = std::next(it);
    if (now >= it->second.expiry) {
      LoseHost(it, "silent for " + std::to_string(o_.liveness) + " heartbeat intervals", events);
    }
    it = next;
  }
  if (now >= next_heartbeat_) {
    v1::HostEnvelope hb = NewEnvelope();
    hb.mutable_heartbeat();
    for (const auto& [p, h] : hosts_) {
      Status sent = SendTo(p, hb);
      if (!sent.ok()) spdlog::debug("heartbeat to host {}: {}", h.id, sent.message());
    }
    next_heartbeat_ = now + o_.heartbeat_interval;
  }
}

Status RemoteHosts::WaitForHosts(size_t n, Duration timeout) {
  SteadyTime until = clock_->Now() + timeout;
  while (hosts_.size() < n && clock_->Now() < until) {
    std::vector<pollfd> fds;
    for (int fd : router_->WaitFds()) fds.push_back({fd, POLLIN, 0});
    Duration wait = std::min<Duration>(milliseconds(50), until - clock_->Now());
    if (!Pending()) poll(fds.data(), fds.size(), static_cast<int>(std::max<int64_t>(0, ToMillis(wait))));
    std::vector<Event> events;
    Pump(&events);
  }
  if (hosts_.size() >= n) return Status::OK();
  return Status::DeadlineExceeded("workers.remote.wait_hosts", std::to_string(hosts_.size()) + " of " +
                                                                   std::to_string(n) + " hosts joined within " +
                                                                   std::to_string(ToMillis(timeout) / 1000) + " s");
}

std::vector<RemoteHosts::HostInfo> RemoteHosts::hosts() const {
  std::vector<HostInfo> out;
  for (const auto& [peer, h] : hosts_) {
    out.push_back({h.id, h.name, h.cores, h.max_workers, h.sandbox, h.workers.size(), h.usable});
  }
  return out;
}

}  // namespace odin
