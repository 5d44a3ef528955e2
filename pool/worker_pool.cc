// Long file: the pool is one state machine (spawn, Hello, dispatch, heartbeats,
// deadlines, kills, exits, local and on remote hosts) whose parts share its
// invariants; split, each part would need the others' state.

#include "pool/worker_pool.h"

#include "pool/worker_spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>

#include <spdlog/spdlog.h>

#include "base/ids.h"
#include "base/unique_fd.h"
#include "odin/v1/worker.pb.h"
#include "sandbox/sandbox_exit_codes.h"
#include "pool/worker_spawn.h"

namespace odin {

WorkerPool::WorkerPool(WorkerPoolOptions options, Clock* clock, ProcessLauncher* launcher, WorkerTransport* transport,
                       Listener* listener)
    : o_(std::move(options)), clock_(clock), launcher_(launcher), transport_(transport), listener_(listener) {}

WorkerPool::~WorkerPool() {
  if (!shutting_down_) Shutdown(Duration::zero());
}

const char* WorkerPolicyName(WorkerPolicy policy) {
  switch (policy) {
    case WorkerPolicy::kWritable: return "tool worker";
    case WorkerPolicy::kReadonly: return "read-only tool worker";
    case WorkerPolicy::kLspHost: return "lsp host";
    case WorkerPolicy::kSubagent: return "subagent worker";
    case WorkerPolicy::kHookWritable: return "hook worker";
    case WorkerPolicy::kHookReadonly: return "read-only hook worker";
    case WorkerPolicy::kHookHost: return "unsandboxed hook worker";
    case WorkerPolicy::kMcpWritable: return "MCP worker";
    case WorkerPolicy::kMcpReadonly: return "read-only MCP worker";
    case WorkerPolicy::kMcpHost: return "unsandboxed MCP worker";
    case WorkerPolicy::kWeb: return "network worker";
    case WorkerPolicy::kBackground: return "background command worker";
  }
  return "worker";
}

const Status& WorkerPool::health(WorkerPolicy policy, const std::string& lane) const {
  static const Status kOk;
  auto it = health_.find({policy, lane});
  return it == health_.end() ? kOk : it->second;
}

Status WorkerPool::Start() {
  next_heartbeat_ = clock_->Now() + o_.heartbeat_interval;
  EnsureWorkers({o_.start_policy, ""});
  return health(o_.start_policy);
}

void WorkerPool::EnsureWorkers(const Key& key) {
  for (const auto& [pid, w] : workers_) {
    if (w.key() == key) return;
  }
  WorkerPolicy policy = key.first;
  int n = policy == WorkerPolicy::kSubagent     ? o_.subagent_size
          : policy == WorkerPolicy::kBackground ? o_.background_size
                                                : o_.size;
  // Its work belongs on hosts: they come for calls that wait.
  if (o_.hosts_first > Duration::zero() && o_.hosts != nullptr && o_.hosts->Takes(policy, key.second)) n = 0;
  // One lsp host; one worker per MCP server (it holds the server).
  if (policy == WorkerPolicy::kLspHost || IsMcpPolicy(policy)) n = 1;
  if (policy == WorkerPolicy::kWeb) n = std::min(n, 2);  // fetches are few
  for (int i = 0; i < n; ++i) {
    if (!SpawnWorker(key).ok()) return;
  }
}

Status WorkerPool::SpawnWorker(const Key& key, bool surplus) {
  WorkerPolicy policy = key.first;
  Worker w;
  // Ids are random and never in argv: a command that reads its worker's
  // command line, or outlives it, cannot guess another worker's.
  w.id = NewId("w");
  w.secret = RandomHex(32);
  w.policy = policy;
  w.lane = key.second;
  auto fail = [&](const Status& s) {
    Status why = s.WithContext(std::string("cannot start a ") + WorkerPolicyName(policy) +
                               (key.second.empty() ? "" : " for " + key.second));
    GiveUp(key, why);
    return why;
  };
  if (o_.hosts != nullptr) {
    std::string host = o_.hosts->Place(policy, w.lane, surplus);
    if (!host.empty()) {
      Status spawned = o_.hosts->Spawn(host, w.id, w.secret, policy, w.lane);
      if (spawned.ok()) {
        w.host = host;
        w.surplus = surplus;
        w.pid = --next_remote_handle_;
        w.expiry = clock_->Now() + o_.start_timeout;
        spdlog::debug("spawning worker {} on host {}", w.id, host);
        workers_.emplace(w.pid, std::move(w));
        return Status::OK();
      }
      if (surplus) return spawned;
      spdlog::warn("cannot start a {} on host {}: {}; starting it here", WorkerPolicyName(policy), host,
                   spawned.message());
    }
  }
  if (surplus) return Status::Unavailable("hosts", "no host has room");
  StatusOr<WorkerTransport::WorkerEndpoint> endpoint = transport_->OpenEndpoint(o_.worker_uid);
  if (!endpoint.ok()) return fail(endpoint.status());
  w.endpoint = endpoint->endpoint;
  StatusOr<pid_t> pid = LaunchWorker(launcher_, o_.spawn_spec,
                                     {w.id, policy, w.lane, endpoint->endpoint, endpoint->socket_path}, w.secret);
  if (!pid.ok()) {
    transport_->CloseEndpoint(w.endpoint);
    return fail(pid.status());
  }
  w.pid = *pid;
  w.expiry = clock_->Now() + o_.start_timeout;
  if (o_.host_masks) w.host_masks = o_.host_masks();
  spdlog::debug("spawned worker {} (pid {})", w.id, w.pid);
  workers_.emplace(w.pid, std::move(w));
  return Status::OK();
}

void WorkerPool::Submit(WorkerRequest call) {
  if (shutting_down_) {  // e.g. a write queued behind one that ended in the shutdown
    Fail(call, v1::TOOL_STATUS_CANCELLED, v1::CODE_CANCELLED, "the coordinator is shutting down");
    return;
  }
  if (health(call.policy, call.lane).ok()) EnsureWorkers({call.policy, call.lane});
  const Status& health = this->health(call.policy, call.lane);
  if (!health.ok()) {  // the workers of its policy could not start
    Fail(call, v1::TOOL_STATUS_CRASHED, static_cast<int>(health.code()), health.message(), std::nullopt,
         v1::EXIT_REASON_SANDBOX_SETUP_FAILED);
    return;
  }
  call.queued_at = clock_->Now();
  queue_.push_back(std::move(call));
  Dispatch();
}

void WorkerPool::Cancel(const std::string& execution_id, int reason) {
  auto queued = std::find_if(queue_.begin(), queue_.end(),
                             [&](const WorkerRequest& c) { return c.execution_id == execution_id; });
  if (queued != queue_.end()) {
    WorkerRequest call = std::move(*queued);
    queue_.erase(queued);
    Fail(call, v1::TOOL_STATUS_CANCELLED, v1::CODE_CANCELLED, "cancelled before it started", std::nullopt,
         reason == v1::CANCEL_REASON_BUDGET ? v1::EXIT_REASON_BUDGET_EXCEEDED : v1::EXIT_REASON_KILLED);
    return;
  }
  for (auto& [pid, w] : workers_) {
    auto job = w.jobs.find(execution_id);
    if (job != w.jobs.end() && job->second.phase == JobPhase::kRunning) SendCancel(&w, &job->second, reason);
  }
}

void WorkerPool::HoldDeadline(const std::string& execution_id, bool hold) {
  for (auto& [pid, w] : workers_) {
    auto job = w.jobs.find(execution_id);
    if (job == w.jobs.end()) continue;
    Job& j = job->second;
    SteadyTime now = clock_->Now();
    if (hold && j.holds++ == 0 && j.deadline) {
      // Held for ten minutes at most: a question nobody answers still ends.
      j.left_when_held = std::max(Duration::zero(), std::chrono::duration_cast<Duration>(*j.deadline - now));
      j.deadline = now + j.left_when_held + kMaxDeadlineHold;
    } else if (!hold && j.holds > 0 && --j.holds == 0 && j.deadline) {
      j.deadline = now + j.left_when_held;
    }
  }
}

void WorkerPool::SendCancel(Worker* w, Job* job, int reason) {
  v1::Envelope env;
  env.set_protocol_version(v1::PROTOCOL_VERSION_CURRENT);
  env.mutable_cancel()->set_execution_id(job->call.execution_id);
  env.mutable_cancel()->set_reason(static_cast<v1::CancelReason>(reason));
  env.mutable_cancel()->set_kill_grace_ms(static_cast<uint32_t>(ToMillis(o_.command_kill_grace)));
  Status s = SendTo(*w, env);
  if (!s.ok()) spdlog::warn("cancel to {}: {}", w->id, s.message());
  job->phase = JobPhase::kCancelSent;
  job->phase_at = clock_->Now();
  job->cancel_reason = reason;
}

size_t WorkerPool::pending() const {
  size_t n = queue_.size();
  for (const auto& [pid, w] : workers_) n += w.jobs.size();
  return n;
}

WorkerPool::Worker* WorkerPool::FindById(const std::string& id) {
  for (auto& [pid, w] : workers_) {
    if (w.id == id) return &w;
  }
  return nullptr;
}

void WorkerPool::Fail(const WorkerRequest& call, int tool_status, int code, const std::string& message,
                      std::optional<int> exit_code, int exit_reason) {
  v1::ToolResult r;
  r.set_execution_id(call.execution_id);
  r.set_status(static_cast<v1::ToolStatus>(tool_status));
  if (exit_code) {
    r.set_has_exit_code(true);
    r.set_exit_code(*exit_code);
  }
  r.set_exit_reason(static_cast<v1::ExitReason>(exit_reason));
  r.mutable_error()->set_code(static_cast<v1::Code>(code));
  r.mutable_error()->set_message(message);
  listener_->OnResult(r);
}

void WorkerPool::Finish(Worker* w, const v1::ToolResult& result, bool kill_worker) {
  w->jobs.erase(result.execution_id());
  if (w->jobs.empty()) {
    w->job_pgid = 0;
    w->state = WorkerState::kIdle;
    w->idle_since = clock_->Now();
  }
  // Settled before the listener hears of it: the listener may submit more work
  // at once, which must not go to a worker on its way out.
  if (kill_worker) KillWorker(w, "did not stop its call in time");
  listener_->OnResult(result);
}

void WorkerPool::KillWorker(Worker* w, const std::string& reason) {
  if (w->state == WorkerState::kStopping) return;
  spdlog::warn("killing worker {}: {}", w->id, reason);
  w->stop_reason = reason;
  w->state = WorkerState::kStopping;
  // SIGTERM first: the launcher then kills the worker's whole tree (which
  // matters where no pid namespace does it); SIGKILL follows if it lingers.
  Signal(*w, SIGTERM);
  w->kill_at = clock_->Now() + o_.term_grace;
}

void WorkerPool::GiveUp(const Key& key, Status why) {
  if (!health(key.first, key.second).ok()) return;
  health_[key] = why;
  spdlog::error("{}", why.message());
  std::deque<WorkerRequest> kept;
  while (!queue_.empty()) {
    WorkerRequest call = std::move(queue_.front());
    queue_.pop_front();
    if (call.policy != key.first || call.lane != key.second) {
      kept.push_back(std::move(call));
      continue;
    }
    Fail(call, v1::TOOL_STATUS_CRASHED, static_cast<int>(why.code()), why.message(), std::nullopt,
         v1::EXIT_REASON_SANDBOX_SETUP_FAILED);
  }
  queue_ = std::move(kept);
}

void WorkerPool::HandleMessage(const std::string& worker_id, const v1::Envelope& env) {
  Worker* w = FindById(worker_id);
  if (w == nullptr) {
    // A Hello from an id no worker was given: someone else connected to a
    // worker's socket. Refused (its messages are never read) and recorded,
    // once per id and at most a hundred times.
    if (env.body_case() == v1::Envelope::kHello && refused_peers_.size() < 100 &&
        refused_peers_.insert(worker_id).second) {
      listener_->OnWorkerRefused(worker_id, "a Hello from an id that no worker was given");
    }
    return;
  }
  if (w->state == WorkerState::kStopping) return;  // stale
  if (env.protocol_version() != v1::PROTOCOL_VERSION_CURRENT) {
    return KillWorker(w, "protocol violation: bad or unparseable envelope");
  }
  w->expiry = clock_->Now() + o_.heartbeat_interval * o_.liveness;
  switch (env.body_case()) {
    case v1::Envelope::kHello:
      if (w->state != WorkerState::kStarting || env.hello().worker_id() != w->id) {
        return KillWorker(w, "protocol violation: unexpected Hello");
      }
      if (!SecretsEqual(env.hello().secret(), w->secret)) {
        // Not the process we started: it never gets work. The worker we
        // started cannot take its id any more, so it goes too.
        listener_->OnWorkerRefused(worker_id, "a Hello without the worker's secret");
        return KillWorker(w, "a Hello without the worker's secret");
      }
      w->state = WorkerState::kIdle;
      w->idle_since = clock_->Now();
      w->said_hello = true;
      w->sandbox = env.hello().sandbox().description();
      w->namespaced = env.hello().sandbox().namespaces();
      // A host's worker says nothing of whether this machine's can start.
      if (w->host.empty()) start_failures_[w->key()] = 0;
      listener_->OnWorkerReady(env.hello());
      break;
    case v1::Envelope::kHeartbeat: break;
    case v1::Envelope::kToolProgress:
      if (w->jobs.count(env.tool_progress().execution_id()) == 0) {
        return KillWorker(w, "protocol violation: progress for a request it does not hold");
      }
      if (env.tool_progress().has_started_pgid()) w->job_pgid = env.tool_progress().started_pgid();
      listener_->OnProgress(env.tool_progress());
      break;
    case v1::Envelope::kToolResult: {
      auto job = w->jobs.find(env.tool_result().execution_id());
      if (job == w->jobs.end()) {
        return KillWorker(w, "protocol violation: result for a request it does not hold");
      }
      // A result can cross our SIGTERM: keep it, but finish the kill rather
      // than hand the worker new work.
      bool being_killed = job->second.phase == JobPhase::kTermSent || job->second.phase == JobPhase::kKillSent;
      Finish(w, env.tool_result(), being_killed);
      break;
    }
    case v1::Envelope::kMcpListing:
      // Unasked, whatever it holds; only an MCP worker has a listing, of the
      // one server its lane names.
      if (!IsMcpPolicy(w->policy) || !w->said_hello || w->lane.empty()) {
        return KillWorker(w, "protocol violation: an MCP listing from a worker that serves no MCP server");
      }
      if (!shutting_down_) listener_->OnMcpListing(w->lane, env.mcp_listing().output_json());
      break;
    default: {
      // A subagent's requests, an MCP server's questions: only while it
      // holds the call they are for (a worker that holds several names it).
      // Once the call is being cancelled, late requests are dropped.
      Job* job = w->only_job();
      if (env.body_case() == v1::Envelope::kMcpQuestion) {
        auto held = w->jobs.find(env.mcp_question().execution_id());
        job = held == w->jobs.end() ? nullptr : &held->second;
      }
      if (shutting_down_ || (job != nullptr && job->phase != JobPhase::kRunning)) return;
      if (job == nullptr || !listener_->OnWorkerMessage(w->id, job->call.execution_id, env)) {
        KillWorker(w, "protocol violation: unexpected message");
      }
    }
  }
}

bool WorkerPool::SendToHolder(const std::string& execution_id, const v1::Envelope& env) {
  for (auto& [pid, w] : workers_) {
    if (w.jobs.count(execution_id) != 0 && w.state != WorkerState::kStopping) {
      Status s = SendTo(w, env);
      if (!s.ok()) spdlog::warn("to {}: {}", w.id, s.message());
      return s.ok();
    }
  }
  return false;
}

void WorkerPool::HandleExit(pid_t pid, int wait_status, const std::string& reason) {
  auto it = workers_.find(pid);
  if (it == workers_.end()) return;
  Worker w = std::move(it->second);
  workers_.erase(it);
  if (w.host.empty()) transport_->CloseEndpoint(w.endpoint);
  std::string how = reason.empty() ? DescribeWaitStatus(wait_status) : reason;
  if (!w.host.empty()) how += " on host " + w.host;
  spdlog::debug("worker {} {}", w.id, how);

  if (!w.namespaced && w.job_pgid > 0 && w.host.empty()) launcher_->KillOrphanedGroup(w.job_pgid);
  for (const auto& [execution_id, job] : w.jobs) {
    if (shutting_down_) {
      Fail(job.call, v1::TOOL_STATUS_CANCELLED, v1::CODE_CANCELLED, "the coordinator shut down while the call ran",
           std::nullopt, v1::EXIT_REASON_KILLED);
    } else if (job.phase != JobPhase::kRunning && job.cancel_reason == v1::CANCEL_REASON_TIMEOUT) {
      Fail(job.call, v1::TOOL_STATUS_TIMED_OUT, v1::CODE_DEADLINE_EXCEEDED,
           "timed out; the worker did not stop the command and was killed", 124, v1::EXIT_REASON_TIMEOUT);
    } else if (job.phase != JobPhase::kRunning) {
      Fail(job.call, v1::TOOL_STATUS_CANCELLED, v1::CODE_CANCELLED,
           "cancelled; the worker did not stop the command and was killed", std::nullopt, v1::EXIT_REASON_KILLED);
    } else {
      std::string why = w.stop_reason.empty() || !reason.empty() ? how : w.stop_reason;
      Fail(job.call, v1::TOOL_STATUS_CRASHED, v1::CODE_UNAVAILABLE,
           "worker " + w.id + " died while running the call (" + why + ")", std::nullopt, v1::EXIT_REASON_CRASHED);
    }
  }
  if (shutting_down_ || !health(w.policy, w.lane).ok()) return;

  if (!w.said_hello && !w.host.empty()) {
    // The host is judged, not the policy: its own failures stop placement there.
    o_.hosts->StartFailed(w.host, how);
  } else if (!w.said_hello) {
    if (WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == kSandboxSetupFailedExit) {
      std::string why = o_.describe_setup_failure ? o_.describe_setup_failure() : "";
      return GiveUp(w.key(), Status::FailedPrecondition("the sandbox could not be set up",
                                                        (why.empty() ? std::string("bubblewrap is unusable") : why) +
                                                            " (odin doctor shows every layer)"));
    }
    if (++start_failures_[w.key()] >= o_.max_start_failures) {
      return GiveUp(w.key(), Status::Unavailable(std::string(WorkerPolicyName(w.policy)) + "s keep failing to start",
                                                 "the last one " + how + "; see .odin/worker.log"));
    }
  }
  if (w.surplus) return;  // more come when calls wait for them
  Status s = SpawnWorker(w.key());
  if (!s.ok()) spdlog::error("{}", s.message());
}

void WorkerPool::GrowOnHosts() {
  if (o_.hosts == nullptr || shutting_down_) return;
  std::map<Key, size_t> waiting, starting;
  for (const WorkerRequest& c : queue_) {
    if (o_.hosts->Takes(c.policy, c.lane) && health(c.policy, c.lane).ok()) ++waiting[{c.policy, c.lane}];
  }
  for (const auto& [pid, w] : workers_) {
    if (w.state == WorkerState::kStarting) ++starting[w.key()];
  }
  size_t demand = 0;
  for (const auto& [key, n] : waiting) {
    size_t coming = starting[key];
    while (coming < n && !o_.hosts->Place(key.first, key.second, true).empty() && SpawnWorker(key, true).ok()) {
      ++coming;
    }
    if (coming < n) demand += n - coming;
  }
  o_.hosts->SetDemand(demand);
  if (o_.hosts_first == Duration::zero()) return;
  // A pool whose work belongs on hosts: a call that has waited hosts_first
  // gets a worker of the pool's own (a static host with room, else here),
  // whatever is on its way from hosts that have not come through in time.
  SteadyTime now = clock_->Now();
  std::map<Key, SteadyTime> oldest;
  for (const WorkerRequest& c : queue_) {
    Key key{c.policy, c.lane};
    if (!o_.hosts->Takes(c.policy, c.lane) || !health(c.policy, c.lane).ok()) continue;
    auto [it, first] = oldest.emplace(key, c.queued_at);
    if (!first) it->second = std::min(it->second, c.queued_at);
  }
  for (const auto& [key, since] : oldest) {
    if (now - since < o_.hosts_first) continue;
    bool own = false;
    for (const auto& [pid, w] : workers_)
      own = own || (w.key() == key && !w.surplus && w.state != WorkerState::kStopping);
    if (own) continue;
    spdlog::info("no host came for a {} in {} ms: starting one of this session's own", WorkerPolicyName(key.first),
                 ToMillis(now - since));
    (void)SpawnWorker(key);
  }
}

void WorkerPool::CheckTimers() {
  SteadyTime now = clock_->Now();
  for (auto& [pid, w] : workers_) {
    if (w.state == WorkerState::kStopping && w.kill_at && now >= *w.kill_at) {
      Signal(w, SIGKILL);
      w.kill_at.reset();
    }
    if (w.surplus && w.state == WorkerState::kIdle && now >= w.idle_since + o_.surplus_idle) {
      // No call wanted it for that long: it goes, and is not replaced.
      spdlog::info("worker {} on host {} retires: idle for {} s", w.id, w.host, ToMillis(o_.surplus_idle) / 1000);
      v1::Envelope bye;
      bye.set_protocol_version(v1::PROTOCOL_VERSION_CURRENT);
      bye.mutable_shutdown();
      (void)SendTo(w, bye);
      w.stop_reason = "retired";
      w.state = WorkerState::kStopping;
      w.kill_at = now + o_.term_grace;
      continue;
    }
    if (w.remote_kill_deadline && now >= *w.remote_kill_deadline) {
      // Its host did not end it (or did not say so): the host is given up,
      // and the worker ends with it.
      w.remote_kill_deadline.reset();
      o_.hosts->Drop(w.host, "it did not end worker " + w.id + " after SIGKILL");
    }
    if (w.state != WorkerState::kStopping && now >= w.expiry) {
      KillWorker(&w, w.state == WorkerState::kStarting
                         ? "no Hello within the start timeout"
                         : "stopped heartbeating for " + std::to_string(o_.liveness) + " intervals");
      continue;
    }
    if (w.state == WorkerState::kStopping) continue;
    // A call that outlives its cancellation takes its worker down, and with
    // it the worker's other calls (they end as crashed when it is reaped).
    for (auto& [execution_id, job] : w.jobs) {
      switch (job.phase) {
        case JobPhase::kRunning:
          if (job.deadline && now >= *job.deadline) SendCancel(&w, &job, v1::CANCEL_REASON_TIMEOUT);
          break;
        case JobPhase::kCancelSent:
          if (now >= job.phase_at + o_.cancel_grace) {
            Signal(w, SIGTERM);
            job.phase = JobPhase::kTermSent;
            job.phase_at = now;
          }
          break;
        case JobPhase::kTermSent:
          if (now >= job.phase_at + o_.term_grace) {
            Signal(w, SIGKILL);
            job.phase = JobPhase::kKillSent;
            job.phase_at = now;
          }
          break;
        case JobPhase::kKillSent: break;
      }
    }
  }
  SendDueHeartbeats();
}

void WorkerPool::SendDueHeartbeats() {
  SteadyTime now = clock_->Now();
  if (now < next_heartbeat_) return;
  v1::Envelope hb;
  hb.set_protocol_version(v1::PROTOCOL_VERSION_CURRENT);
  hb.mutable_heartbeat();
  for (auto& [pid, w] : workers_) {
    if (w.state != WorkerState::kIdle && w.state != WorkerState::kBusy) continue;
    // A heartbeat that cannot be sent is not an error: liveness judges the worker.
    Status sent = SendTo(w, hb);
    if (!sent.ok()) spdlog::debug("heartbeat to {}: {}", w.id, sent.message());
  }
  next_heartbeat_ = now + o_.heartbeat_interval;
}

void WorkerPool::Dispatch() {
  std::optional<std::string> masks_now;  // asked once, when a call would go
  // A pass gives each worker one call; a worker that takes several (an MCP
  // server's) is offered more in another pass, as long as calls go.
  for (bool more = true; more && !queue_.empty();) {
    more = false;
    DispatchPass(&masks_now, &more);
  }
}

void WorkerPool::DispatchPass(std::optional<std::string>* masks_now, bool* more) {
  for (auto& [pid, w] : workers_) {
    if (queue_.empty()) return;
    if (w.state != WorkerState::kIdle && w.state != WorkerState::kBusy) continue;
    // The oldest call of this worker's policy and lane; calls of others
    // wait for their own workers without holding these up.
    auto next = std::find_if(queue_.begin(), queue_.end(),
                             [&w](const WorkerRequest& c) { return c.policy == w.policy && c.lane == w.lane; });
    if (next == queue_.end() || !HasRoomFor(w, *next)) continue;
    if (o_.host_masks && w.host.empty()) {
      if (!*masks_now) *masks_now = o_.host_masks();
      if (**masks_now != w.host_masks) {
        // Its replacement masks the files as they are now; the call waits
        // for it (for the calls a busy worker holds to end first).
        if (w.jobs.empty())
          KillWorker(&w, "a file its sandbox masks was replaced or made on the host since it started");
        continue;
      }
    }
    WorkerRequest call = std::move(*next);
    queue_.erase(next);
    Status ok = listener_->OnDispatch(call, w.id);
    if (!ok.ok()) {
      Fail(call, v1::TOOL_STATUS_ERROR, static_cast<int>(ok.code()), ok.message());
      continue;
    }
    v1::Envelope env;
    env.set_protocol_version(v1::PROTOCOL_VERSION_CURRENT);
    v1::ToolRequest* req = env.mutable_tool_request();
    req->set_execution_id(call.execution_id);
    req->set_tool(call.tool);
    req->set_timeout_ms(static_cast<uint64_t>(ToMillis(call.timeout)));
    if (call.timeout > Duration::zero()) {
      req->set_deadline_unix_ms(clock_->WallMillis() + ToMillis(call.timeout));
    }
    req->set_stream_limit_bytes(call.stream_limit_bytes);
    req->set_output_head_bytes(call.output_head_bytes);
    req->set_output_tail_bytes(call.output_tail_bytes);
    req->set_last_command(call.last_command);
    req->set_needs_overlay(call.needs_overlay);
    req->set_read_only_view(call.read_only_view);
    v1::ResourceLimits* l = req->mutable_limits();
    l->set_cpu_seconds(call.limits.cpu_seconds);
    l->set_address_space_bytes(call.limits.address_space_bytes);
    l->set_file_size_bytes(call.limits.file_size_bytes);
    l->set_open_files(call.limits.open_files);
    l->set_processes(call.limits.processes);
    if (call.expect.set) {
      v1::FileExpectation* e = req->mutable_expect();
      e->set_must_not_exist(call.expect.must_not_exist);
      e->set_sha256(call.expect.sha256);
      e->set_full_read(call.expect.full_read);
      for (auto [start, end] : call.expect.read_ranges) {
        v1::LineRange* r = e->add_read_ranges();
        r->set_start(start);
        r->set_end(end);
      }
    }
    // The arguments come typed, in the typed request the coordinator made
    // (only an MCP tool's travel as JSON text, set there too).
    if (call.typed) req->MergeFrom(*call.typed);
    req->set_approved_outside_path(call.approved_outside_path);
    Status sent = SendTo(w, env);
    Job job;
    job.call = std::move(call);
    if (job.call.timeout > Duration::zero()) job.deadline = clock_->Now() + job.call.timeout;
    std::string execution_id = job.call.execution_id;
    w.jobs.emplace(execution_id, std::move(job));
    w.state = WorkerState::kBusy;
    *more = *more || (IsMcpPolicy(w.policy) && !WritesWorkspace(w.policy));
    // A worker we cannot reach is as good as dead; its call ends as crashed
    // when it is reaped.
    if (!sent.ok()) KillWorker(&w, "cannot send to it: " + sent.message());
  }
}

bool WorkerPool::HasRoomFor(const Worker& w, const WorkerRequest& call) const {
  if (w.state == WorkerState::kIdle) return true;
  if (w.state != WorkerState::kBusy || !IsMcpPolicy(w.policy) || WritesWorkspace(w.policy)) return false;
  if (w.jobs.size() >= static_cast<size_t>(std::clamp(call.lane_concurrency, 1, kMaxLaneConcurrency))) return false;
  return std::all_of(w.jobs.begin(), w.jobs.end(), [](const auto& j) { return j.second.phase == JobPhase::kRunning; });
}

SteadyTime WorkerPool::NextTimer() const {
  SteadyTime t = next_heartbeat_;
  if (o_.hosts != nullptr) t = std::min(t, o_.hosts->NextTimer());
  if (o_.hosts_first > Duration::zero()) {
    // GrowOnHosts' fallback, when it falls due (not again once past: no spin).
    SteadyTime now = clock_->Now();
    for (const WorkerRequest& c : queue_) {
      if (c.queued_at + o_.hosts_first > now) t = std::min(t, c.queued_at + o_.hosts_first);
    }
  }
  for (const auto& [pid, w] : workers_) {
    if (w.state != WorkerState::kStopping) t = std::min(t, w.expiry);
    if (w.kill_at) t = std::min(t, *w.kill_at);
    if (w.remote_kill_deadline) t = std::min(t, *w.remote_kill_deadline);
    if (w.surplus && w.state == WorkerState::kIdle) t = std::min(t, w.idle_since + o_.surplus_idle);
    if (w.state == WorkerState::kStopping) continue;  // CheckTimers skips them too
    for (const auto& [execution_id, job] : w.jobs) {
      switch (job.phase) {
        case JobPhase::kRunning:
          if (job.deadline) t = std::min(t, *job.deadline);
          break;
        case JobPhase::kCancelSent: t = std::min(t, job.phase_at + o_.cancel_grace); break;
        case JobPhase::kTermSent: t = std::min(t, job.phase_at + o_.term_grace); break;
        case JobPhase::kKillSent: break;
      }
    }
  }
  return t;
}

void WorkerPool::DrainMessages() {
  std::string worker_id;
  v1::Envelope env;
  for (;;) {
    StatusOr<bool> got = transport_->Receive(&worker_id, &env);
    if (!got.ok()) {
      spdlog::error("{}", got.status().message());
      return;
    }
    if (!*got) return;
    HandleMessage(worker_id, env);
    // A worker streaming output can keep this loop busy for long; our
    // heartbeats must not wait for the stream to end, or the worker takes
    // the silence for our death.
    SendDueHeartbeats();
  }
}

Status WorkerPool::Poll(Duration max_wait, std::vector<PollFd>* extra_fds) {
  SteadyTime now = clock_->Now();
  Duration timeout = std::min(max_wait, std::max(Duration::zero(), NextTimer() - now));
  std::vector<PollFd> fds;
  if (extra_fds != nullptr) fds = *extra_fds;
  for (int fd : launcher_->WatchFds()) fds.push_back({fd});
  if (o_.hosts != nullptr) {
    o_.hosts->AddWaitFds(&fds);
    if (o_.hosts->Pending()) timeout = Duration::zero();
  }
  RETURN_IF_ERROR(transport_->Wait(timeout, &fds));
  if (extra_fds != nullptr) {
    for (size_t i = 0; i < extra_fds->size(); ++i) (*extra_fds)[i] = fds[i];
  }

  DrainMessages();
  PumpHosts();
  for (const ExitedProcess& e : launcher_->ReapExited()) HandleExit(e.pid, e.wait_status);
  CheckTimers();
  Dispatch();
  GrowOnHosts();
  return Status::OK();
}

void WorkerPool::Shutdown(Duration wait, const std::function<void()>& meanwhile) {
  shutting_down_ = true;
  if (o_.hosts != nullptr) o_.hosts->SetDemand(0);  // no host is asked for on the way out
  v1::Envelope env;
  env.set_protocol_version(v1::PROTOCOL_VERSION_CURRENT);
  env.mutable_shutdown();
  for (auto& [pid, w] : workers_) {
    if (w.state == WorkerState::kIdle || w.state == WorkerState::kBusy) {
      // One that cannot hear it is killed when the wait ends.
      Status sent = SendTo(w, env);
      if (!sent.ok()) spdlog::debug("shutdown to {}: {}", w.id, sent.message());
    } else if (w.state == WorkerState::kStarting) {
      // Holds nothing, but its sandbox may be half made: SIGTERM has the
      // launcher kill bubblewrap's children too, one of which leaves the
      // group (setsid) before it dies with its parent. Reaped below.
      Signal(w, SIGTERM);
    }
  }
  if (meanwhile) meanwhile();
  SteadyTime until = clock_->Now() + wait;
  while (!workers_.empty() && clock_->Now() < until) {
    std::vector<PollFd> fds;
    for (int fd : launcher_->WatchFds()) fds.push_back({fd});
    if (o_.hosts != nullptr) o_.hosts->AddWaitFds(&fds);
    if (fds.empty()) break;  // no way to wait for exits; stop waiting
    Duration left = until - clock_->Now();
    if (o_.hosts != nullptr && o_.hosts->Pending()) left = Duration::zero();
    Status waited = transport_->Wait(left, &fds);
    if (!waited.ok()) {
      spdlog::warn("shutdown: {}", waited.message());
      break;  // the workers left are killed below
    }
    DrainMessages();  // a result that arrives now is real: keep it
    PumpHosts();
    for (const ExitedProcess& e : launcher_->ReapExited()) HandleExit(e.pid, e.wait_status);
  }
  for (auto& [pid, w] : workers_) Signal(w, SIGKILL);
  // Calls still held end now; the launcher reaps the processes.
  std::vector<pid_t> left;
  for (auto& [pid, w] : workers_) left.push_back(pid);
  for (pid_t pid : left) HandleExit(pid, SIGKILL);
  while (!queue_.empty()) {
    WorkerRequest call = std::move(queue_.front());
    queue_.pop_front();
    Fail(call, v1::TOOL_STATUS_CANCELLED, v1::CODE_CANCELLED, "the coordinator is shutting down");
  }
}

Status WorkerPool::SendTo(Worker& w, const v1::Envelope& env) {
  return w.host.empty() ? transport_->Send(w.id, env) : o_.hosts->Send(w.host, w.id, env);
}

void WorkerPool::Signal(Worker& w, int signal) {
  if (w.host.empty()) {
    launcher_->SignalGroup(w.pid, signal);
  } else {
    o_.hosts->Signal(w.host, w.id, signal);
    if (signal == SIGKILL && !w.remote_kill_deadline) {
      w.remote_kill_deadline = clock_->Now() + o_.heartbeat_interval * o_.liveness + o_.term_grace;
    }
  }
}

void WorkerPool::PumpHosts() {
  if (o_.hosts == nullptr) return;
  std::vector<WorkerHosts::Event> events;
  o_.hosts->Pump(&events);
  for (WorkerHosts::Event& e : events) {
    Worker* w = FindById(e.worker_id);
    if (w == nullptr || w->host.empty()) continue;  // gone already, or not a remote one
    if (e.exited) {
      HandleExit(w->pid, e.wait_status, e.reason);
      continue;
    }
    if (e.stopping) {
      KillWorker(w, e.reason);
      continue;
    }
    v1::Envelope env;
    if (!env.ParseFromString(e.envelope)) env.Clear();
    HandleMessage(e.worker_id, env);
  }
}

std::vector<WorkerPool::WorkerInfo> WorkerPool::workers() const {
  std::vector<WorkerInfo> out;
  for (const auto& [pid, w] : workers_) {
    out.push_back({w.id, w.pid, w.state, w.sandbox, w.jobs.empty() ? "" : w.jobs.begin()->first, w.policy, w.lane,
                   w.host, w.jobs.size()});
  }
  return out;
}

}  // namespace odin
