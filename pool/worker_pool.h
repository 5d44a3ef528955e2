#pragma once
// WorkerPool: the coordinator's workers, run like a Majordomo broker.
// Workers are keyed by policy (a tool worker with the workspace writable, one
// with it read-only, the lsp host, subagent workers, hook workers of each
// kind, MCP workers) and lane (the MCP server a worker hosts; "" for the
// rest): a call only ever reaches a worker of its policy and lane, and each
// key gets its workers (`size` tool or hook workers, one lsp host, one worker
// per MCP server) once a call needs them.
//
// It spawns workers through a ProcessLauncher (which runs odin-sandbox),
// waits for each one's Hello, dispatches queued tool calls to idle workers one
// at a time (an MCP server's worker that only reads takes up to its lane's
// concurrency at once), and relays their progress and results to a
// Listener. It keeps
// every promise a caller relies on:
//   - every submitted call ends in exactly one OnResult, whatever happens;
//   - a worker silent for `liveness` heartbeat intervals is killed (SIGTERM to
//     its launcher's group, SIGKILL after term_grace) and replaced, and a call
//     it held ends as TOOL_STATUS_CRASHED;
//   - a worker that dies is replaced, and its call ends as CRASHED; without a
//     pid namespace around it, the call's process group is killed too, since
//     nothing else would;
//   - a call past its deadline is cancelled: Cancel to the worker, then SIGTERM
//     of the worker's process group after cancel_grace, then SIGKILL after
//     term_grace; it ends as TOOL_STATUS_TIMED_OUT with exit code 124;
//   - a worker that breaks the protocol is killed, not argued with;
//   - if workers of a policy cannot start (the sandbox is required but
//     unusable, or they keep dying before Hello), the pool stops trying for
//     that policy and fails its calls with health(policy) saying why.
//
// Passive: nothing happens outside Poll(). Time comes from the Clock, so tests
// step it across every boundary. Thread-safety: none; one loop owns the pool.

#include <sys/types.h>

#include <deque>
#include <functional>
#include <map>
#include <set>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/process_launcher.h"
#include "base/status.h"
#include "pool/worker_transport.h"
#include "pool/worker_request.h"

namespace odin {

namespace v1 {
class Envelope;
class Hello;
class ModelRequest;
class SubagentCall;
class ToolProgress;
class ToolResult;
}  // namespace v1

const char* WorkerPolicyName(WorkerPolicy policy);

// What the command line of a new worker is made from.
struct WorkerSpawn {
  std::string id;  // its routing id: random, handed over on the credentials fd, never in argv
  WorkerPolicy policy;
  std::string lane;         // the MCP server it hosts ("" for other workers)
  std::string endpoint;     // where it connects: a socket of its own
  std::string socket_path;  // that socket's file, for its sandbox to show ("" if none)
  int credentials_fd = -1;  // inherited fd holding "<id> <secret>\n"; the spec passes its number on
};

// Where workers may run besides this machine: RemoteHosts, the host agents
// connected over TCP with CURVE. The pool asks it where each new worker
// goes, and hears from it what those workers say and when they end. A
// remote worker is otherwise one like any other: the same Hello with its
// secret, heartbeats, deadlines and kills.
class WorkerHosts {
 public:
  virtual ~WorkerHosts() = default;
  // The host a new worker of this policy goes to, or "" for this machine.
  // A surplus worker (one for calls that wait; it retires when idle) may go
  // to a host a launcher started; the pool's own workers never do, or that
  // host would never be idle enough to give back.
  virtual std::string Place(WorkerPolicy policy, const std::string& lane, bool surplus) = 0;
  virtual Status Spawn(const std::string& host, const std::string& worker_id, const std::string& secret,
                       WorkerPolicy policy, const std::string& lane) = 0;
  virtual Status Send(const std::string& host, const std::string& worker_id, const v1::Envelope& env) = 0;
  virtual void Signal(const std::string& host, const std::string& worker_id, int signal) = 0;
  // A worker on host ended before its Hello.
  virtual void StartFailed(const std::string& host, const std::string& how) = 0;
  // The pool gives the host up (it does not end a worker it was told to
  // kill): it is lost as if it had gone silent.
  virtual void Drop(const std::string& host, const std::string& why) = 0;
  // Whether workers of this policy and lane may run on a host at all.
  virtual bool Takes(WorkerPolicy policy, const std::string& lane) const = 0;
  // How many calls that could run on a host wait with no worker coming for
  // them: a launcher may start hosts for them.
  virtual void SetDemand(size_t waiting_calls) = 0;
  // What the pool waits on besides its transport, and whether something is
  // waiting already (then it does not block).
  virtual void AddWaitFds(std::vector<PollFd>* fds) = 0;
  virtual bool Pending() = 0;
  virtual SteadyTime NextTimer() const = 0;
  struct Event {
    std::string worker_id;
    bool exited = false;    // else a message from the worker, or stopping
    bool stopping = false;  // its host is lost: it takes no more work, and its exit follows
    std::string envelope;   // the message, serialized
    int wait_status = 0;
    std::string reason;  // why it ended or stops, when it was not its own doing (its host was lost)
  };
  // Handles the hosts' traffic and timers; appends what their workers said
  // or did.
  virtual void Pump(std::vector<Event>* events) = 0;
  // What a host agent landed in the shared workspace from the overlay of
  // call execution_id, as it says (paths relative to the workspace), taken
  // once; nullopt where it said nothing (its command wrote in the
  // workspace itself, or was cut off).
  struct Landed {
    std::vector<std::string> paths;      // sorted
    std::vector<std::string> discarded;  // must not land: kept in the state directory's displaced/<id>
    std::vector<std::string> failed;     // could not be applied, with why
    // What a replaced or removed regular file held, as the host hashed it
    // (path -> hex SHA-256): for paths the coordinator knew no hash of.
    std::map<std::string, std::string> before_sha256;
  };
  virtual std::optional<Landed> TakeLanded(const std::string& execution_id) { return std::nullopt; }
};

struct WorkerPoolOptions {
  int size = 1;           // workers kept running, per sandbox policy in use
  int subagent_size = 4;  // subagent workers: how many subagents run at once
  // Background commands' workers: how many such commands run at once (each
  // holds its worker until it ends).
  int background_size = 4;
  Duration heartbeat_interval = milliseconds(500);
  int liveness = 3;                          // silent intervals before a worker is presumed dead
  Duration start_timeout = seconds(10);      // spawn to Hello
  Duration cancel_grace = seconds(3);        // Cancel sent, to SIGTERM of the worker
  Duration term_grace = seconds(1);          // SIGTERM of the worker, to SIGKILL
  Duration command_kill_grace = seconds(1);  // told to the worker: SIGTERM to SIGKILL of a command
  int max_start_failures = 5;                // consecutive deaths before Hello, then give up
  // The policy Start() spawns workers for; workers of the others start when a
  // call first needs them.
  WorkerPolicy start_policy = WorkerPolicy::kWritable;
  // The command line for a new worker. Required. The pool adds the
  // credentials fd to keep_fds itself.
  std::function<SpawnOptions(const WorkerSpawn& spawn)> spawn_spec;
  // The uid workers run as (-1: ours), so their sockets let them in.
  int64_t worker_uid = -1;
  // Why the sandbox launcher refused to start a worker (its last word in the
  // workers' log), for the error calls end with. Optional.
  std::function<std::string()> describe_setup_failure;
  // Other machines' hosts, when workers.remote is on. Not owned. Calls that
  // wait for a worker of a kind hosts take get more workers on hosts with
  // room (beyond size); such a worker retires once idle for surplus_idle.
  WorkerHosts* hosts = nullptr;
  Duration surplus_idle = seconds(300);
  // Nonzero: this pool's work belongs on hosts (an attempt beyond this
  // machine's share). Its own workers of kinds hosts take are not started
  // here: its calls wait for them as calls that wait get workers on hosts
  // (a Slurm launch included). A call that has waited this long with none
  // starting for it gets a worker of the pool's own after all (a static
  // host with room, else here).
  Duration hosts_first = Duration::zero();
  // What the host's files the workers' sandboxes mask are now
  // (WorkerSandbox::HostMaskIdentities). A worker of this machine started
  // when it said one thing is retired before it takes a call once it says
  // another: its masks no longer cover those files; a new worker masks them
  // again. Null: never asked.
  std::function<std::string()> host_masks;
};

class WorkerPool {
 public:
  class Listener {
   public:
    virtual ~Listener() = default;
    // Called right before the call goes to worker_id. A non-OK Status stops
    // it: it is not sent and ends with that error.
    virtual Status OnDispatch(const WorkerRequest& call, const std::string& worker_id) = 0;
    virtual void OnProgress(const v1::ToolProgress& progress) = 0;
    // Exactly once per submitted call.
    virtual void OnResult(const v1::ToolResult& result) = 0;
    // A worker said Hello.
    virtual void OnWorkerReady(const v1::Hello& hello) {}
    // A Hello was refused: from an id no worker was given, or without the
    // worker's secret. peer is the routing id it came from.
    virtual void OnWorkerRefused(const std::string& peer, const std::string& reason) {}
    // A message the pool does not handle itself, from a worker that holds a
    // call (a subagent's model or tool call). Returns false if the worker has
    // no business sending it: the pool then kills it for a protocol violation.
    virtual bool OnWorkerMessage(const std::string& worker_id, const std::string& execution_id,
                                 const v1::Envelope& env) {
      return false;
    }
    // An MCP worker's server, on lane, listed its tools and resources anew
    // (McpListTools' output_json).
    virtual void OnMcpListing(const std::string& lane, const std::string& output_json) {}
  };

  WorkerPool(WorkerPoolOptions options, Clock* clock, ProcessLauncher* launcher, WorkerTransport* transport,
             Listener* listener);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // The most calls an MCP server's worker is given at once.
  static constexpr int kMaxLaneConcurrency = 16;

  // Spawns the workers. They become usable as their Hellos arrive in Poll().
  Status Start();
  // Queues a call; it runs on the next idle worker.
  void Submit(WorkerRequest call);
  // Stops a queued or running call; it ends as CANCELLED (or per reason).
  void Cancel(const std::string& execution_id, int cancel_reason);
  // A running call's deadline stops (hold) while the user is asked
  // something for it, for ten minutes at most, and goes on from where it
  // stopped (release); holds nest.
  static constexpr Duration kMaxDeadlineHold = std::chrono::minutes(10);
  void HoldDeadline(const std::string& execution_id, bool hold);
  // One turn of the loop: waits at most max_wait for a message, a worker exit,
  // a timer or one of the caller's extra fds (whose readable flags it sets),
  // then handles everything that is due.
  Status Poll(Duration max_wait, std::vector<PollFd>* extra_fds = nullptr);
  // Sends a message to the worker that holds execution_id. False if none
  // does any more.
  bool SendToHolder(const std::string& execution_id, const v1::Envelope& env);
  // Sends the heartbeats that are due, and nothing else. For a caller that
  // must block outside Poll (writing output to a stalled reader) so that the
  // workers do not take its silence for death.
  void SendDueHeartbeats();
  // Calls queued or running.
  size_t pending() const;
  // OK while the pool can run calls of a policy (by default, Start's); else
  // why it cannot.
  const Status& health() const { return health(o_.start_policy); }
  const Status& health(WorkerPolicy policy, const std::string& lane = "") const;
  // Tells every worker to exit, waits up to `wait` for them, kills the rest.
  // meanwhile, if set, runs once the workers were told, while they exit.
  void Shutdown(Duration wait, const std::function<void()>& meanwhile = nullptr);

  enum class WorkerState { kStarting, kIdle, kBusy, kStopping };
  struct WorkerInfo {
    std::string id;
    pid_t pid;
    WorkerState state;
    std::string sandbox;       // from Hello
    std::string execution_id;  // the call it holds (the first, if it holds several)
    WorkerPolicy policy;
    std::string lane;
    std::string host;  // "" on this machine
    size_t calls = 0;  // how many calls it holds
  };
  std::vector<WorkerInfo> workers() const;

 private:
  enum class JobPhase { kRunning, kCancelSent, kTermSent, kKillSent };
  struct Job {
    WorkerRequest call;
    std::optional<SteadyTime> deadline;
    int holds = 0;              // HoldDeadline: the deadline is stopped while > 0
    Duration left_when_held{};  // what was left of it then
    JobPhase phase = JobPhase::kRunning;
    SteadyTime phase_at{};
    int cancel_reason = 0;  // v1::CancelReason once cancelled
  };
  struct Worker {
    std::string id;
    std::string secret;    // what its Hello must carry
    std::string endpoint;  // its own socket ("" on another host)
    std::string host;      // the host agent it runs under ("" here)
    pid_t pid = 0;         // negative on another host: a handle, not a process
    WorkerPolicy policy = WorkerPolicy::kWritable;
    std::string lane;
    std::pair<WorkerPolicy, std::string> key() const { return {policy, lane}; }
    WorkerState state = WorkerState::kStarting;
    SteadyTime expiry{};
    std::string sandbox;
    bool namespaced = true;             // from Hello: pids it reports are its own namespace's
    pid_t job_pgid = 0;                 // process group of the held call, as the worker reported it
    std::string stop_reason;            // why we killed it, for the crashed result
    std::optional<SteadyTime> kill_at;  // kStopping: when SIGTERM turns into SIGKILL
    // On another host: SIGKILL was sent; past this its host is given up.
    std::optional<SteadyTime> remote_kill_deadline;
    bool surplus = false;     // started for waiting calls, beyond size: never replaced
    SteadyTime idle_since{};  // when it last became idle
    bool said_hello = false;  // false: a death counts as a failure to start
    std::string host_masks;   // WorkerPoolOptions::host_masks at its spawn (this machine's workers)
    // The calls it holds, by execution id: one, but for an MCP server that
    // takes several at once (WorkerRequest::lane_concurrency).
    std::map<std::string, Job> jobs;
    // Its one call, if it holds exactly one (a tool, hook or subagent
    // worker's).
    Job* only_job() { return jobs.size() == 1 ? &jobs.begin()->second : nullptr; }
  };

  // Workers are keyed by policy and lane.
  using Key = std::pair<WorkerPolicy, std::string>;
  // surplus: only on a host (see WorkerPoolOptions::hosts).
  Status SpawnWorker(const Key& key, bool surplus = false);
  // More workers on hosts for calls that wait; tells the hosts what waits
  // beyond that.
  void GrowOnHosts();
  // Spawns the workers of a key if it has none.
  void EnsureWorkers(const Key& key);
  void HandleMessage(const std::string& worker_id, const v1::Envelope& env);
  void HandleExit(pid_t pid, int wait_status, const std::string& reason = "");
  // What the hosts' workers said and did since the last look.
  void PumpHosts();
  Status SendTo(Worker& w, const v1::Envelope& env);
  void Signal(Worker& w, int signal);
  void DrainMessages();
  void KillWorker(Worker* w, const std::string& reason);
  void CheckTimers();
  void Dispatch();
  // One pass over the workers; *more is set when another might take more.
  void DispatchPass(std::optional<std::string>* masks_now, bool* more);
  void SendCancel(Worker* w, Job* job, int reason);
  // Whether w may take call now: idle, or an MCP server's worker with room
  // for one more of its calls, none of which is being stopped.
  bool HasRoomFor(const Worker& w, const WorkerRequest& call) const;
  void Fail(const WorkerRequest& call, int tool_status, int code, const std::string& message,
            std::optional<int> exit_code = std::nullopt, int exit_reason = 0);
  // Ends w's call of result's execution id with result; if kill_worker, w
  // is stopped rather than idle.
  void Finish(Worker* w, const v1::ToolResult& result, bool kill_worker = false);
  Worker* FindById(const std::string& id);
  SteadyTime NextTimer() const;
  void GiveUp(const Key& key, Status why);

  WorkerPoolOptions o_;
  Clock* clock_;
  ProcessLauncher* launcher_;
  WorkerTransport* transport_;
  Listener* listener_;
  std::map<pid_t, Worker> workers_;
  std::deque<WorkerRequest> queue_;
  SteadyTime next_heartbeat_{};
  std::map<Key, int> start_failures_;
  std::set<std::string> refused_peers_;  // recorded once each (bounded)
  bool shutting_down_ = false;
  std::map<Key, Status> health_;  // absent: OK
  pid_t next_remote_handle_ = 0;  // remote workers' pids count down from -1
};

}  // namespace odin
