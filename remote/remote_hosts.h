#pragma once
// RemoteHosts: the coordinator's side of the host agents on other machines
// (WorkerHosts for the pool). It listens on tcp:// with CURVE only: a ZAP
// handler lets in the host keys of the allow list and nothing else, so a
// client with another key, with none, or speaking plaintext never gets a
// message through.
//
// A host that connects says HostHello. It is refused (HostRefused, and
// nothing it says afterwards is read) when:
//   - it speaks another protocol version;
//   - it sees another workspace: its path differs, or the token it read
//     under the workspace's .odin/ is not the one this coordinator wrote
//     there (so the files it shows its workers are the ones we validate);
//   - its sandbox is weaker than the coordinator's sandbox policy demands
//     (require, or auto as root: bubblewrap's namespaces).
// A welcomed host gets workers of the kinds workers.remote.kinds allows,
// up to its max_workers, least loaded first. Its workers' envelopes are
// relayed unchanged; the pool judges them as it judges local ones. A host
// relays only for workers it was given.
//
// A host is lost when it is silent for `liveness` heartbeat intervals,
// when a message to it cannot be sent, when its messages show a gap (the
// connection dropped some), when it breaks the protocol, or when the pool
// gives it up (a worker it never ends). Then, at once, its workers take no
// more work (a `stopping` event each) and it is told goodbye; its agent,
// hearing nothing more from us, kills those workers' commands within the
// liveness timeout. Only after that time (and a margin) do its workers end
// (their calls as crashed, "host lost"), so a call that is retried never
// runs beside the one the host was still running. The agent reconnects
// with a fresh HostHello: nothing runs twice.
//
// Passive like the pool: everything happens in Pump. Thread-safety: none.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "base/zmq_endpoint.h"
#include "pool/worker_pool.h"

namespace odin {

namespace v1 {
class HostEnvelope;
class HostHello;
class WorkerRelay;
}  // namespace v1

// Starts host agents when calls wait for workers, and gives them back
// (workers.remote.launcher slurm: SlurmLauncher). A host it starts names
// itself in its Hello by the name Launch returned.
class HostLauncher {
 public:
  virtual ~HostLauncher() = default;
  // Asks for one more host; returns the name it will say.
  virtual StatusOr<std::string> Launch() = 0;
  // Gives a host back: its agent ends its workers and exits.
  virtual void Release(const std::string& name) = 0;
  // Launches that ended since the last call (the job was killed, its time
  // ran out, or it was given back), each with how.
  virtual std::vector<std::pair<std::string, std::string>> Ended() = 0;
  virtual std::vector<int> WatchFds() const = 0;
  virtual size_t max_hosts() const = 0;
  virtual int cpus() const = 0;  // the workers each host runs
};

struct RemoteHostsOptions {
  std::string listen;  // tcp://HOST:PORT
  CurveKeyPair server;
  std::set<std::string> allowed_hosts;  // hosts' public keys (Z85)
  std::string workspace;                // its path; hosts must see it there
  std::string workspace_token;          // what the coordinator wrote under .odin/
  bool require_namespaces = true;       // refuse hosts whose workers get no namespaces
  std::string sandbox_policy = "auto";  // told to the hosts
  bool commands_network = false;
  std::set<WorkerPolicy> kinds;  // the policies whose workers may go to a host
  Duration heartbeat_interval = milliseconds(500);
  int liveness = 3;
  int max_start_failures = 3;  // workers that die before Hello, then no more placement there
};

class RemoteHosts final : public WorkerHosts {
 public:
  static StatusOr<std::unique_ptr<RemoteHosts>> Listen(RemoteHostsOptions options, Clock* clock);
  // Says goodbye to every host (they look for the next coordinator at once),
  // waiting a moment for that to go out.
  ~RemoteHosts() override;

  // WorkerHosts.
  std::string Place(WorkerPolicy policy, const std::string& lane, bool surplus) override;
  Status Spawn(const std::string& host, const std::string& worker_id, const std::string& secret, WorkerPolicy policy,
               const std::string& lane) override;
  // The same for an isolated session's worker: the host runs it in view
  // (an id, checked there against its own workspace's views).
  Status SpawnIn(const std::string& host, const std::string& worker_id, const std::string& secret, WorkerPolicy policy,
                 const std::string& lane, const std::string& view);
  Status Send(const std::string& host, const std::string& worker_id, const v1::Envelope& env) override;
  void Signal(const std::string& host, const std::string& worker_id, int signal) override;
  void StartFailed(const std::string& host, const std::string& how) override;
  void Drop(const std::string& host, const std::string& why) override;
  void AddWaitFds(std::vector<PollFd>* fds) override;
  bool Pending() override;
  SteadyTime NextTimer() const override;
  // What the host that ran the call said it landed: only with that call's
  // result, only paths inside the workspace. nullopt too where another
  // landing was never taken (its call had ended first): the whole tree is
  // to be looked at.
  std::optional<Landed> TakeLanded(const std::string& execution_id) override {
    return TakeLanded(execution_id, [](const std::string&) { return true; });
  }
  // The same, where only the landings of workers that are mine (by worker
  // id) tell of a stale landing: the pool of one session among several.
  std::optional<Landed> TakeLanded(const std::string& execution_id,
                                   const std::function<bool(const std::string& worker_id)>& mine);
  void Pump(std::vector<Event>* events) override;

  bool Takes(WorkerPolicy policy, const std::string& lane) const override;
  void SetDemand(size_t waiting_calls) override { demand_ = waiting_calls; }

  // Hosts on demand: when calls wait for workers that could run on a host
  // (SetDemand), the launcher is asked for more hosts, up to its
  // max_hosts; a host it started that has had no workers for idle is
  // given back. A launch that has not joined within join_timeout is given
  // back too. Launches that end without joining (srun refused, the job
  // failed, the agent was refused) back off: 5 s, doubling to 5 min, reset
  // by a join; the first few are reported.
  void set_launcher(std::unique_ptr<HostLauncher> launcher, Duration idle, Duration join_timeout = seconds(600)) {
    launcher_ = std::move(launcher);
    idle_ = idle;
    join_timeout_ = join_timeout;
  }

  // Handles hosts' Hellos until n are welcome or timeout passes (before
  // any worker exists). DeadlineExceeded names how many came.
  Status WaitForHosts(size_t n, Duration timeout);

  // Where it listens (the port filled in when it was 0).
  std::string endpoint() const { return endpoint_; }

  struct HostInfo {
    std::string id;
    std::string name;
    uint32_t cores = 0;
    uint32_t max_workers = 0;
    std::string sandbox;
    size_t workers = 0;
    bool usable = true;
    std::string key;  // the CURVE public key it connected with (Z85)
  };
  std::vector<HostInfo> hosts() const;
  // Hosts refused so far, each with why (bounded), and client keys the ZAP
  // handler turned away.
  const std::vector<std::string>& refusals() const { return refusals_; }
  std::vector<std::string> refused_keys() const { return router_->refused_keys(); }
  // Called with each welcome, refusal, loss and launch (besides the log).
  void set_on_event(std::function<void(const std::string& kind, const std::string& text)> f) {
    on_event_ = std::move(f);
  }

 private:
  struct Host {
    std::string peer;  // routing id
    std::string id;
    std::string name;
    uint32_t cores = 0;
    uint32_t max_workers = 0;
    std::string sandbox;
    std::string key;  // the CURVE key of its connection: every message must come with it
    std::set<std::string> workers;
    SteadyTime expiry{};
    int start_failures = 0;
    bool usable = true;
    uint64_t sent = 0;      // the last seq we sent it
    uint64_t received = 0;  // the last seq it sent us
    // Set once it is lost: when its workers end and it is forgotten.
    std::optional<SteadyTime> release_at;
    bool launched = false;             // started by the launcher
    std::optional<SteadyTime> unused;  // since when it has had no workers
  };
  // The launcher's part of Pump: hosts that ended, more hosts, fewer.
  void Scale(SteadyTime now);
  RemoteHosts(RemoteHostsOptions o, Clock* clock, std::unique_ptr<ZmqEndpoint> router)
      : o_(std::move(o)), clock_(clock), router_(std::move(router)) {}
  void HandleHello(const std::string& peer, const std::string& key, const v1::HostEnvelope& env);
  // Handles one message from a welcomed host.
  void HandleMessage(Host* h, const std::string& key, const v1::HostEnvelope& env);
  // Keeps what a host says it landed with a result it relays (TakeLanded).
  void TakeLandedFrom(const Host* h, const v1::WorkerRelay& relay);
  // Why a host's Hello is refused, or "" if it is welcome.
  std::string Judge(const v1::HostHello& hello) const;
  // Sends to a welcomed host, numbering the message; a send that fails
  // loses the host.
  Status SendTo(Host* h, v1::HostEnvelope env);
  // Starts losing a host (see above); a no-op for a host lost already.
  void Lose(Host* h, const std::string& why);
  Host* FindLive(const std::string& host_id);
  void Note(const std::string& kind, const std::string& text);

  RemoteHostsOptions o_;
  Clock* clock_;
  std::unique_ptr<ZmqEndpoint> router_;
  std::string endpoint_;
  std::map<std::string, Host> hosts_;         // by peer (routing id)
  std::map<std::string, std::string> by_id_;  // host id -> peer
  std::set<std::string> refused_peers_;       // never read again
  std::vector<std::string> refusals_;
  SteadyTime next_heartbeat_{};
  std::vector<Event> pending_;                    // for the next Pump
  std::map<std::string, Landed> landed_;          // by execution id, until the coordinator takes it
  std::map<std::string, std::string> landed_by_;  // execution id -> the worker that relayed it
  std::unique_ptr<HostLauncher> launcher_;
  Duration idle_ = seconds(300);
  Duration join_timeout_ = seconds(600);
  size_t demand_ = 0;
  // Launches whose srun still runs, by host name: when each was asked for,
  // whether its host has joined (once), whether it was given back.
  struct Launch {
    SteadyTime at;
    bool joined = false;
    bool released = false;
  };
  std::map<std::string, Launch> launches_;
  int unjoined_ends_ = 0;              // launches in a row that ended before joining
  std::optional<SteadyTime> backoff_;  // no launch before this
  // Gives back a launch (and forgets its host if connected).
  void ReleaseLaunch(const std::string& name, const std::string& why);
  int next_host_ = 0;
  size_t noted_keys_ = 0;  // refused_keys() already told of
  std::function<void(const std::string&, const std::string&)> on_event_;
};

// The token hosts read to show they see this workspace:
// <state_dir>/host-token (0600), made once per workspace by the first
// coordinator that listens for hosts and read by every later one.
StatusOr<std::string> EnsureWorkspaceToken(const std::string& state_dir);
StatusOr<std::string> ReadWorkspaceToken(const std::string& state_dir);

}  // namespace odin
