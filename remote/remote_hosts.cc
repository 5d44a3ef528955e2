// Long file: the coordinator's side of the host protocol in one place (the
// listener and its keys, each host's life, the workers it runs, relays and
// what hosts landed), which share the hosts' state.
#include "remote/remote_hosts.h"

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
#include "workspace/workspace_files.h"

namespace odin {

namespace {

constexpr char kTokenFile[] = "host-token";

v1::HostEnvelope NewEnvelope() {
  v1::HostEnvelope env;
  env.set_protocol_version(v1::HOST_PROTOCOL_VERSION_CURRENT);
  return env;
}

// What a host says about itself, fit for a log line or a refusal: no
// control characters (no forged lines, no terminal escapes), bounded.
std::string Shown(const std::string& text) {
  std::string out;
  for (char c : text.substr(0, 200)) {
    unsigned char u = static_cast<unsigned char>(c);
    out += u < 0x20 || u == 0x7f ? '?' : c;
  }
  return text.size() > 200 ? out + "..." : out;
}

// Messages handled in one Pump: a flood from a host cannot starve the rest
// of the loop (what is left is read at the next pass, which comes at once).
constexpr int kMaxMessagesPerPump = 1000;
// What hosts landed that no call has taken yet (its call ended otherwise).
constexpr size_t kMaxLanded = 1024;

// A path relative to the workspace that stays inside it: no "", ".", ".."
// component, not absolute, no NUL.
bool PlainRelativePath(const std::string& p) {
  if (p.empty() || p[0] == '/' || p.find('\0') != std::string::npos) return false;
  for (size_t start = 0; start <= p.size();) {
    size_t end = std::min(p.find('/', start), p.size());
    std::string_view part(p.data() + start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    start = end + 1;
  }
  return true;
}

}  // namespace

StatusOr<std::string> ReadWorkspaceToken(const std::string& state_dir) {
  ASSIGN_OR_RETURN(WorkspaceFiles state, WorkspaceFiles::Open(state_dir));
  ASSIGN_OR_RETURN(std::string text, state.ReadFile(kTokenFile, 4096, WorkspaceFiles::Links::kNone));
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  if (text.size() != 64) return Status::InvalidArgument(JoinPath(state_dir, kTokenFile), "not a workspace token");
  return text;
}

StatusOr<std::string> EnsureWorkspaceToken(const std::string& state_dir) {
  ASSIGN_OR_RETURN(WorkspaceFiles state, WorkspaceFiles::Open(state_dir));
  if (state.Look(kTokenFile).exists()) return ReadWorkspaceToken(state_dir);
  // Written whole under another name, then renamed into place if nothing is
  // there: a host (or a second coordinator) never reads half a token, and
  // of two coordinators starting at once the first wins and both use its
  // token.
  std::string token = RandomHex(32);
  std::string temp = std::string(kTokenFile) + "." + RandomHex(8) + ".tmp";
  RETURN_IF_ERROR(state.WriteFile(temp, token + "\n", 0600));
  Status placed = state.Rename(temp, kTokenFile, /*no_replace=*/true);
  (void)state.Remove(temp);
  if (placed.code() == StatusCode::kAlreadyExists) return ReadWorkspaceToken(state_dir);
  if (!placed.ok()) return placed.WithContext("cannot write " + JoinPath(state_dir, kTokenFile));
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
  for (auto& [peer, h] : hosts_) {
    if (h.release_at) continue;  // told already
    v1::HostEnvelope bye = NewEnvelope();
    bye.mutable_goodbye();
    bye.set_seq(++h.sent);
    (void)router_->Send(peer, bye.SerializeAsString());
  }
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
    return "it sees the workspace at " + Shown(hello.workspace()) + ", not at " + o_.workspace;
  }
  if (!SecretsEqual(hello.workspace_token(), o_.workspace_token)) {
    return "it does not see this workspace: the token under " + o_.workspace +
           "/.odin is not the one this coordinator wrote (a different filesystem?)";
  }
  if (o_.require_namespaces && !hello.namespaces()) {
    return "its sandbox (" + Shown(hello.sandbox()) + ") is weaker than sandbox policy " + o_.sandbox_policy +
           " requires (bubblewrap's namespaces)";
  }
  return "";
}

void RemoteHosts::HandleHello(const std::string& peer, const std::string& key, const v1::HostEnvelope& env) {
  const v1::HostHello& hello = env.hello();
  std::string label = "host " + (hello.host().empty() ? std::string("(unnamed)") : Shown(hello.host()));
  std::string why = env.seq() != 1 ? "its Hello is not the first message on its connection" : Judge(hello);
  auto launch = launches_.find(hello.host());
  if (why.empty() && launch != launches_.end() && launch->second.released) {
    why = "it was given back to the cluster";
  }
  if (!why.empty()) {
    v1::HostEnvelope refusal = NewEnvelope();
    refusal.set_seq(1);
    refusal.mutable_refused()->set_reason(why);
    // Only a token that does not match may heal: the first coordinator may
    // not have written it yet when the host read it.
    refusal.mutable_refused()->set_retry(env.seq() == 1 && hello.workspace() == o_.workspace &&
                                         !SecretsEqual(hello.workspace_token(), o_.workspace_token));
    Status sent = router_->Send(peer, refusal.SerializeAsString());
    if (!sent.ok()) spdlog::debug("refusal to {}: {}", peer, sent.message());
    refused_peers_.insert(peer);
    Note("host_refused", label + " refused: " + why);
    return;
  }
  Host h;
  h.peer = peer;
  h.key = key;
  h.received = 1;
  // Its name as it gives it, within bounds: it shows in records and logs.
  for (char c : hello.host().substr(0, 64))
    h.name += isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' ? c : '_';
  if (h.name.empty()) h.name = "host";
  h.id = h.name + "#" + std::to_string(++next_host_);
  h.cores = hello.cores();
  // What it claims, within bounds: a host cannot draw every worker to
  // itself by claiming room for millions.
  h.max_workers = std::clamp<uint32_t>(hello.max_workers(), 1, std::clamp<uint32_t>(4 * hello.cores(), 4, 256));
  h.sandbox = Shown(hello.sandbox());
  h.expiry = clock_->Now() + o_.heartbeat_interval * o_.liveness;
  v1::HostEnvelope welcome = NewEnvelope();
  v1::HostWelcome* w = welcome.mutable_welcome();
  w->set_host_id(h.id);
  w->set_heartbeat_ms(static_cast<uint32_t>(ToMillis(o_.heartbeat_interval)));
  w->set_liveness(static_cast<uint32_t>(o_.liveness));
  w->set_sandbox_policy(o_.sandbox_policy);
  w->set_commands_network(o_.commands_network);
  auto [it, inserted] = hosts_.emplace(peer, std::move(h));
  if (!inserted) return;  // cannot happen: a known peer's Hello is a protocol violation
  Status sent = SendTo(&it->second, std::move(welcome));
  if (!sent.ok()) return;  // lost already
  by_id_[it->second.id] = peer;
  std::string launched;
  if (launch != launches_.end()) {
    // Ours while its srun runs, also when it comes back after a loss.
    it->second.launched = true;
    if (!launch->second.joined) {
      launched = ", " + std::to_string(ToMillis(clock_->Now() - launch->second.at)) + " ms after it was asked for";
    }
    launch->second.joined = true;
    unjoined_ends_ = 0;
    backoff_.reset();
  }
  Note("host_joined", label + " joined as " + it->second.id + " (" + std::to_string(it->second.cores) + " cores, " +
                          std::to_string(it->second.max_workers) + " workers, sandbox " + it->second.sandbox +
                          ", key " + key.substr(0, 8) + "..." + launched + ")");
}

bool RemoteHosts::Takes(WorkerPolicy policy, const std::string& lane) const {
  return lane.empty() && o_.kinds.count(policy) > 0;
}

std::string RemoteHosts::Place(WorkerPolicy policy, const std::string& lane, bool surplus) {
  if (!Takes(policy, lane)) return "";
  const Host* best = nullptr;
  for (const auto& [peer, h] : hosts_) {
    if (!h.usable || h.release_at || h.workers.size() >= h.max_workers) continue;
    if (h.launched && !surplus) continue;
    if (best == nullptr || h.workers.size() * best->max_workers < best->workers.size() * h.max_workers) best = &h;
  }
  return best == nullptr ? "" : best->id;
}

RemoteHosts::Host* RemoteHosts::FindLive(const std::string& host_id) {
  auto id = by_id_.find(host_id);
  if (id == by_id_.end()) return nullptr;
  auto it = hosts_.find(id->second);
  if (it == hosts_.end() || it->second.release_at) return nullptr;
  return &it->second;
}

Status RemoteHosts::Spawn(const std::string& host, const std::string& worker_id, const std::string& secret,
                          WorkerPolicy policy, const std::string& lane) {
  return SpawnIn(host, worker_id, secret, policy, lane, "");
}

Status RemoteHosts::SpawnIn(const std::string& host, const std::string& worker_id, const std::string& secret,
                            WorkerPolicy policy, const std::string& lane, const std::string& view) {
  Host* h = FindLive(host);
  if (h == nullptr) return Status::NotFound("host " + host, "not connected");
  v1::HostEnvelope env = NewEnvelope();
  v1::SpawnWorker* s = env.mutable_spawn();
  s->set_worker_id(worker_id);
  s->set_secret(secret);
  s->set_policy(static_cast<uint32_t>(policy));
  s->set_lane(lane);
  s->set_view(view);
  RETURN_IF_ERROR(SendTo(h, std::move(env)));
  h->workers.insert(worker_id);
  return Status::OK();
}

Status RemoteHosts::Send(const std::string& host, const std::string& worker_id, const v1::Envelope& env) {
  Host* h = FindLive(host);
  if (h == nullptr) return Status::Unavailable("host " + host, "lost");
  v1::HostEnvelope relay = NewEnvelope();
  relay.mutable_relay()->set_worker_id(worker_id);
  relay.mutable_relay()->set_envelope(env.SerializeAsString());
  return SendTo(h, std::move(relay));
}

void RemoteHosts::Signal(const std::string& host, const std::string& worker_id, int signal) {
  Host* h = FindLive(host);
  if (h == nullptr) return;  // lost: its workers end with it
  v1::HostEnvelope env = NewEnvelope();
  env.mutable_signal()->set_worker_id(worker_id);
  env.mutable_signal()->set_signal(signal);
  (void)SendTo(h, std::move(env));  // a failure loses the host: the workers end with it
}

void RemoteHosts::StartFailed(const std::string& host, const std::string& how) {
  Host* h = FindLive(host);
  if (h == nullptr) return;
  if (++h->start_failures >= o_.max_start_failures && h->usable) {
    h->usable = false;
    Note("host_unusable", "host " + h->name + " (" + h->id + "): its workers keep failing to start (the last one " +
                              how + "); no more workers go there");
  }
}

void RemoteHosts::Drop(const std::string& host, const std::string& why) {
  Host* h = FindLive(host);
  if (h != nullptr) Lose(h, why);
}

Status RemoteHosts::SendTo(Host* h, v1::HostEnvelope env) {
  env.set_seq(++h->sent);
  Status sent = router_->Send(h->peer, env.SerializeAsString());
  // Nothing is dropped quietly: a message that cannot go (its queue is
  // full, or its connection is gone) ends the host, so its calls end too.
  if (!sent.ok()) Lose(h, "cannot send to it: " + sent.message());
  return sent;
}

void RemoteHosts::AddWaitFds(std::vector<PollFd>* fds) {
  for (int fd : router_->WaitFds()) fds->push_back({fd});
  if (launcher_) {
    for (int fd : launcher_->WatchFds()) fds->push_back({fd});
  }
}

bool RemoteHosts::Pending() { return !pending_.empty() || router_->Readable(); }

SteadyTime RemoteHosts::NextTimer() const {
  SteadyTime t = next_heartbeat_;
  for (const auto& [peer, h] : hosts_) t = std::min(t, h.release_at ? *h.release_at : h.expiry);
  for (const auto& [peer, h] : hosts_) {
    if (h.unused && !h.release_at) t = std::min(t, *h.unused + idle_);
  }
  for (const auto& [name, l] : launches_) {
    if (!l.joined && !l.released) t = std::min(t, l.at + join_timeout_);
  }
  if (backoff_ && demand_ > 0) t = std::min(t, *backoff_);
  return t;
}

void RemoteHosts::Lose(Host* h, const std::string& why) {
  if (h->release_at) return;
  Note("host_lost", "host " + h->name + " (" + h->id + ") lost: " + why);
  // Goodbye, in case it still hears us: it ends its workers at once.
  v1::HostEnvelope bye = NewEnvelope();
  bye.mutable_goodbye();
  bye.set_seq(++h->sent);
  (void)router_->Send(h->peer, bye.SerializeAsString());
  // It hears nothing more from us; within its liveness timeout it kills its
  // workers' commands. Its workers end after that, never before.
  h->release_at = clock_->Now() + o_.heartbeat_interval * (o_.liveness + 2);
  for (const std::string& worker : h->workers) {
    Event e;
    e.worker_id = worker;
    e.stopping = true;
    e.reason = "its host " + h->name + " was lost (" + why + ")";
    pending_.push_back(std::move(e));
  }
  // Whatever this connection says from now on is not read: the host says a
  // fresh Hello on a new one.
  refused_peers_.insert(h->peer);
}

void RemoteHosts::HandleMessage(Host* h, const std::string& key, const v1::HostEnvelope& env) {
  if (h->release_at) return;  // lost: nothing it says counts
  if (key != h->key) return Lose(h, "a message came with another key than its Hello's");
  if (env.seq() != h->received + 1) {
    return Lose(h, "messages were lost on its connection (expected #" + std::to_string(h->received + 1) + ", got #" +
                       std::to_string(env.seq()) + ")");
  }
  h->received = env.seq();
  h->expiry = clock_->Now() + o_.heartbeat_interval * o_.liveness;
  switch (env.body_case()) {
    case v1::HostEnvelope::kHeartbeat: break;
    case v1::HostEnvelope::kRelay:
      // Only for its own workers: a host cannot speak for another's.
      if (h->workers.count(env.relay().worker_id()) == 0) break;
      if (env.relay().has_landed()) TakeLandedFrom(h, env.relay());
      pending_.push_back({env.relay().worker_id(), false, false, env.relay().envelope(), 0, ""});
      break;
    case v1::HostEnvelope::kExited:
      if (h->workers.erase(env.exited().worker_id()) == 0) break;
      pending_.push_back(
          {env.exited().worker_id(), true, false, "", env.exited().wait_status(), Shown(env.exited().reason())});
      break;
    default: Lose(h, "protocol violation: unexpected message");
  }
}

void RemoteHosts::TakeLandedFrom(const Host* h, const v1::WorkerRelay& relay) {
  // With the result of the call it names, and only paths inside the
  // workspace; else the coordinator looks at the whole tree as before.
  const v1::CommandLanded& l = relay.landed();
  v1::Envelope inner;
  if (!inner.ParseFromString(relay.envelope()) || !inner.has_tool_result() ||
      inner.tool_result().execution_id() != l.execution_id()) {
    spdlog::warn("host {}: what it landed came without the result of its call; ignored", h->name);
    return;
  }
  for (const std::string& p : l.paths()) {
    if (!PlainRelativePath(p)) {
      spdlog::warn("host {}: it says it landed \"{}\", not a path in the workspace; the tree is looked at whole",
                   h->name, Shown(p));
      return;
    }
  }
  if (landed_.size() >= kMaxLanded) {
    landed_by_.erase(landed_.begin()->first);
    landed_.erase(landed_.begin());
  }
  landed_by_[l.execution_id()] = relay.worker_id();
  Landed& out = landed_[l.execution_id()];
  out.paths.assign(l.paths().begin(), l.paths().end());
  std::sort(out.paths.begin(), out.paths.end());
  for (const std::string& p : l.discarded()) out.discarded.push_back(Shown(p));
  for (const std::string& p : l.failed()) out.failed.push_back(Shown(p));
  for (const auto& [path, sha] : l.before_sha256()) {
    bool hex = sha.size() == 64 && std::all_of(sha.begin(), sha.end(),
                                               [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
    if (hex && std::binary_search(out.paths.begin(), out.paths.end(), path)) out.before_sha256[path] = sha;
  }
}

std::optional<WorkerHosts::Landed> RemoteHosts::TakeLanded(const std::string& execution_id,
                                                           const std::function<bool(const std::string&)>& mine) {
  auto it = landed_.find(execution_id);
  if (it == landed_.end()) return std::nullopt;
  Landed l = std::move(it->second);
  landed_.erase(it);
  landed_by_.erase(execution_id);
  // One pool's commands that write on hosts run one at a time: another
  // landing of its workers still here is one whose call had ended before
  // its result came (timed out, cancelled). What it landed is nobody's
  // record yet, so this call's answer is "look at the whole tree".
  // (Another session's landings, odin serve's, are that session's.)
  bool stale = false;
  for (auto by = landed_by_.begin(); by != landed_by_.end();) {
    if (!mine(by->second)) {
      ++by;
      continue;
    }
    stale = true;
    landed_.erase(by->first);
    by = landed_by_.erase(by);
  }
  if (stale) return std::nullopt;
  return l;
}

void RemoteHosts::Pump(std::vector<Event>* events) {
  std::string peer, key, payload;
  for (int n = 0; n < kMaxMessagesPerPump; ++n) {
    StatusOr<bool> got = router_->TryReceive(&peer, &payload, &key);
    if (!got.ok()) {
      spdlog::error("hosts: {}", got.status().message());
      break;
    }
    if (!*got) break;
    if (refused_peers_.count(peer) > 0) continue;
    if (refused_peers_.size() > 4096) refused_peers_.clear();  // bounded; a refused host is refused again
    v1::HostEnvelope env;
    auto it = hosts_.find(peer);
    if (!env.ParseFromString(payload) || env.protocol_version() != v1::HOST_PROTOCOL_VERSION_CURRENT) {
      if (it != hosts_.end()) {
        Lose(&it->second, "protocol violation: bad or unparseable envelope");
      } else {
        refused_peers_.insert(peer);
        Note("host_refused", "a host refused: it speaks another protocol");
      }
      continue;
    }
    if (it != hosts_.end()) {
      HandleMessage(&it->second, key, env);
    } else if (env.body_case() == v1::HostEnvelope::kHello) {
      HandleHello(peer, key, env);
    } else {
      refused_peers_.insert(peer);
      Note("host_refused", "a host refused: it spoke before its Hello");
    }
  }
  const std::vector<std::string>& keys = router_->refused_keys();
  for (; noted_keys_ < keys.size(); ++noted_keys_) {
    Note("host_refused",
         "a connection refused at its handshake: key " + keys[noted_keys_] + " is not in allowed_hosts");
  }
  SteadyTime now = clock_->Now();
  for (auto& [p, h] : hosts_) {
    if (!h.release_at && now >= h.expiry) {
      Lose(&h, "silent for " + std::to_string(o_.liveness) + " heartbeat intervals");
    }
  }
  if (now >= next_heartbeat_) {
    next_heartbeat_ = now + o_.heartbeat_interval;
    for (auto& [p, h] : hosts_) {
      if (h.release_at) continue;
      v1::HostEnvelope hb = NewEnvelope();
      hb.mutable_heartbeat();
      (void)SendTo(&h, std::move(hb));
    }
  }
  if (launcher_) Scale(now);
  events->insert(events->end(), std::make_move_iterator(pending_.begin()), std::make_move_iterator(pending_.end()));
  pending_.clear();
  // Lost hosts whose time is up: their workers end now.
  for (auto it = hosts_.begin(); it != hosts_.end();) {
    Host& h = it->second;
    if (!h.release_at || now < *h.release_at) {
      ++it;
      continue;
    }
    for (const std::string& worker : h.workers) {
      Event e;
      e.worker_id = worker;
      e.exited = true;
      e.wait_status = SIGKILL;
      e.reason = "its host " + h.name + " was lost";
      events->push_back(std::move(e));
    }
    by_id_.erase(h.id);
    it = hosts_.erase(it);
  }
}

void RemoteHosts::ReleaseLaunch(const std::string& name, const std::string& why) {
  auto launch = launches_.find(name);
  if (launch == launches_.end() || launch->second.released) return;
  launch->second.released = true;
  launcher_->Release(name);
  Note("host_released", "host " + name + " given back: " + why);
  for (auto& [peer, h] : hosts_) {
    if (!h.launched || h.name != name || h.release_at) continue;
    if (h.workers.empty()) {
      // It ends its (no) workers and exits; nothing it says is read again.
      h.release_at = clock_->Now();
      refused_peers_.insert(peer);
    } else {
      Lose(&h, "given back: " + why);
    }
  }
}

void RemoteHosts::Scale(SteadyTime now) {
  // Jobs that ended: a host still connected is lost with its workers. One
  // that ends before its host ever joined counts against further launches.
  for (const auto& [name, how] : launcher_->Ended()) {
    auto launch = launches_.find(name);
    bool joined = launch != launches_.end() && launch->second.joined;
    bool released = launch != launches_.end() && launch->second.released;
    if (launch != launches_.end()) launches_.erase(launch);
    for (auto& [peer, h] : hosts_) {
      if (h.launched && h.name == name && !h.release_at) Lose(&h, "its job ended: " + how);
    }
    if (released) continue;
    Note("host_ended", "host " + name + "'s job ended: " + how);
    if (!joined) {
      Duration wait = std::min<Duration>(seconds(300), seconds(5) * (1 << std::min(unjoined_ends_, 6)));
      backoff_ = now + wait;
      if (++unjoined_ends_ <= 3) {
        Note("host_launch_failed", "host " + name + " ended before it joined (" + how + "; see .odin/" + name +
                                       ".log); the next launch waits " + std::to_string(ToMillis(wait) / 1000) + " s");
      }
    }
  }
  // Launches that never joined (a job that waits in the queue, agents that
  // cannot reach us) go back: they hold a place no other host can take.
  std::vector<std::string> late;
  for (const auto& [name, l] : launches_) {
    if (!l.joined && !l.released && now - l.at >= join_timeout_) late.push_back(name);
  }
  for (const std::string& name : late) {
    ReleaseLaunch(name, "it did not join within " + std::to_string(ToMillis(join_timeout_) / 1000) + " s");
  }
  // More hosts while calls wait beyond what the hosts here and on their way
  // can take: one more per pass, up to the launcher's most.
  size_t coming = 0;
  for (const auto& [name, l] : launches_) {
    if (!l.joined && !l.released) coming += static_cast<size_t>(launcher_->cpus());
  }
  for (const auto& [peer, h] : hosts_) {
    if (!h.release_at && h.usable && h.workers.size() < h.max_workers) coming += h.max_workers - h.workers.size();
  }
  if (demand_ > coming && launches_.size() < launcher_->max_hosts() && (!backoff_ || now >= *backoff_)) {
    StatusOr<std::string> name = launcher_->Launch();
    if (name.ok()) {
      launches_[*name] = Launch{now, false, false};
      Note("host_launched", "asked for host " + *name + ": " + std::to_string(demand_) + " call(s) wait for a worker");
    } else {
      backoff_ = now + seconds(30);
      if (++unjoined_ends_ <= 3) Note("host_launch_failed", "cannot launch a host: " + name.status().message());
    }
  }
  // Hosts it started that have had no workers for idle_ go back.
  std::vector<std::string> idle;
  for (auto& [peer, h] : hosts_) {
    if (!h.launched || h.release_at) continue;
    if (!h.workers.empty()) {
      h.unused.reset();
      continue;
    }
    if (!h.unused) h.unused = now;
    if (now - *h.unused >= idle_) idle.push_back(h.name);
  }
  for (const std::string& name : idle) {
    ReleaseLaunch(name, "no workers for " + std::to_string(ToMillis(idle_) / 1000) + " s");
  }
}

Status RemoteHosts::WaitForHosts(size_t n, Duration timeout) {
  SteadyTime until = clock_->Now() + timeout;
  auto live = [this] {
    return static_cast<size_t>(
        std::count_if(hosts_.begin(), hosts_.end(), [](const auto& entry) { return !entry.second.release_at; }));
  };
  while (live() < n && clock_->Now() < until) {
    std::vector<pollfd> fds;
    for (int fd : router_->WaitFds()) fds.push_back({fd, POLLIN, 0});
    Duration wait = std::min<Duration>(milliseconds(50), until - clock_->Now());
    if (!Pending()) poll(fds.data(), fds.size(), static_cast<int>(std::max<int64_t>(0, ToMillis(wait))));
    std::vector<Event> events;
    Pump(&events);
  }
  if (live() >= n) return Status::OK();
  return Status::DeadlineExceeded("workers.remote.wait_hosts", std::to_string(live()) + " of " + std::to_string(n) +
                                                                   " hosts joined within " +
                                                                   std::to_string(ToMillis(timeout) / 1000) + " s");
}

std::vector<RemoteHosts::HostInfo> RemoteHosts::hosts() const {
  std::vector<HostInfo> out;
  for (const auto& [peer, h] : hosts_) {
    if (h.release_at) continue;  // lost: on its way out
    out.push_back({h.id, h.name, h.cores, h.max_workers, h.sandbox, h.workers.size(), h.usable, h.key});
  }
  return out;
}

}  // namespace odin
