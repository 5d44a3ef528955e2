#include "session/hosted_session.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>

#include "base/clock.h"
#include "planner/workflows.h"
#include "tools/tool_catalog.h"

namespace odin {

StatusOr<std::unique_ptr<HostedSession>> HostedSession::Start(const AgentSessionFlags& flags, Mode default_mode,
                                                              std::string approval) {
  std::unique_ptr<HostedSession> h(new HostedSession());
  h->default_mode_ = default_mode;
  h->created_at_ms_ = RealClock::Get()->WallMillis();
  HostedSession* self = h.get();
  h->recorder_ = std::make_unique<EventRecorder>(
      "", [self](v1::SessionEvent e) { self->Publish(std::move(e)); },
      [self] {
        // Only ever called on the session's thread, once it runs.
        return self->session_ ? self->session_->runtime().coordinator().Breakers() : std::vector<BreakerInfo>{};
      });
  AgentSessionFlags f = flags;
  f.runtime.approval = approval;  // prompt: answered through Approve
  ASSIGN_OR_RETURN(h->session_, AgentSession::Start(f, h->recorder_.get()));
  Coordinator& coord = h->session_->runtime().coordinator();
  h->id_ = coord.session_id();
  h->recorder_->set_session_id(h->id_);
  EventRecorder* recorder = h->recorder_.get();
  coord.on_gate_event = [recorder](const GateEvent& g) { recorder->OnGateEvent(g); };
  if (approval == "prompt") {
    coord.on_approval_request = [recorder](const ApprovalRequest& a) { recorder->OnApprovalRequest(a); };
  }
  h->wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (h->wake_fd_ < 0) return PosixError("eventfd", errno);
  h->thread_ = std::thread([self] { self->Loop(); });
  return h;
}

HostedSession::~HostedSession() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  if (wake_fd_ >= 0) {
    uint64_t one = 1;
    (void)!write(wake_fd_, &one, sizeof one);
  }
  if (thread_.joinable()) thread_.join();
  if (session_) {
    session_->agent().CancelCurrent();
    session_.reset();  // stops its workers
  }
  if (wake_fd_ >= 0) close(wake_fd_);
}

void HostedSession::Loop() {
  for (;;) {
    std::deque<std::function<void()>> tasks;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return;
      tasks.swap(tasks_);
    }
    for (auto& t : tasks) t();
    {
      std::lock_guard<std::mutex> lock(mu_);
      busy_ = session_->agent().busy();
      queued_ = static_cast<uint32_t>(session_->agent().queued());
    }
    std::vector<PollFd> extra = {{wake_fd_}};
    Status st = session_->Poll(seconds(1), &extra);
    if (extra[0].readable) {
      uint64_t n;
      (void)!read(wake_fd_, &n, sizeof n);
    }
    if (!st.ok()) {
      recorder_->OnSessionEnded(st.message());
      std::deque<std::function<void()>> left;
      {
        std::lock_guard<std::mutex> lock(mu_);
        ended_ = true;
        left.swap(tasks_);
      }
      changed_.notify_all();
      for (auto& t : left) t();  // nobody waits forever for them
      return;
    }
  }
}

void HostedSession::Post(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!ended_ && !stopping_) {
      tasks_.push_back(std::move(task));
      task = nullptr;
    }
  }
  if (task) {
    task();  // the thread is gone: nothing else touches the session
    return;
  }
  uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof one);
}

template <typename T>
T HostedSession::RunOnLoop(std::function<T()> task) {
  auto done = std::make_shared<std::promise<T>>();
  std::future<T> result = done->get_future();
  Post([task = std::move(task), done] { done->set_value(task()); });
  return result.get();
}

void HostedSession::Publish(v1::SessionEvent e) {
  // Only ever on the session's thread (or Start's, before it runs).
  // An approval of anything but a started call (a subagent's, a commands'
  // network question) has no end here to come before.
  if (e.has_tool_call_started()) started_.insert(e.tool_call_started().execution_id());
  if (e.has_approval_requested() && started_.count(e.approval_requested().execution_id()) != 0) {
    asked_.insert(e.approval_requested().execution_id());
  }
  if (e.has_tool_call_finished()) {
    started_.erase(e.tool_call_finished().execution_id());
    asked_.erase(e.tool_call_finished().execution_id());
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    events_.push_back(std::move(e));
  }
  changed_.notify_all();
}

StatusOr<std::pair<std::string, uint64_t>> HostedSession::Send(const std::string& text, const std::string& mode_name,
                                                               const std::string& workflow_name) {
  Mode mode = default_mode_;
  if (!mode_name.empty() && !ParseMode(mode_name, &mode)) {
    return Status::InvalidArgument("mode '" + mode_name + "'", "must be ask, plan or edit");
  }
  std::optional<Workflow> workflow = ParseWorkflow(workflow_name);
  if (!workflow) {
    return Status::InvalidArgument("workflow '" + workflow_name + "'",
                                   std::string("must be one of ") + WorkflowNames());
  }
  if (text.empty()) return Status::InvalidArgument("text", "the message is empty");
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (ended_) return Status::FailedPrecondition("session " + id_, "has ended");
  }
  bool set_workflow = !workflow_name.empty();
  return RunOnLoop<std::pair<std::string, uint64_t>>([this, text, mode, set_workflow, workflow] {
    if (set_workflow) session_->agent().set_workflow(*workflow);
    uint64_t before;
    {
      std::lock_guard<std::mutex> lock(mu_);
      before = events_.size();
    }
    return std::make_pair(session_->agent().Send(text, mode), before);
  });
}

bool HostedSession::Approve(const std::string& execution_id, const std::string& answer) {
  // Anything but a known answer denies.
  ApprovalAnswer a = ParseApprovalAnswer(answer).value_or(ApprovalAnswer::kDeny);
  return RunOnLoop<bool>([this, execution_id, a, answer] {
    // The answer's event goes first, so every client sees one order: the
    // request, its answer, then what the call came to (a denied call ends
    // inside AnswerApproval).
    bool waits = asked_.erase(execution_id) != 0;
    if (waits) recorder_->OnApprovalResolved(execution_id, answer);
    bool applied = session_->runtime().coordinator().AnswerApproval(execution_id, a);
    if (!waits && applied) recorder_->OnApprovalResolved(execution_id, answer);
    return applied;
  });
}

bool HostedSession::Cancel() {
  return RunOnLoop<bool>([this] {
    if (!session_->agent().busy()) return false;
    session_->agent().CancelCurrent();
    return true;
  });
}

void HostedSession::AddNote(std::string text) {
  Post([this, text = std::move(text)] { session_->agent().AddNote(text); });
}

v1::SessionInfo HostedSession::Info() {
  v1::SessionInfo info;
  info.set_session_id(id_);
  info.set_workspace(session_->runtime().workspace().root);
  info.set_model(session_->llm().model);
  info.set_provider(session_->llm().endpoint.provider);
  info.set_created_at_ms(created_at_ms_);
  std::lock_guard<std::mutex> lock(mu_);
  info.set_busy(busy_);
  info.set_queued(queued_);
  info.set_last_seq(events_.size());
  info.set_alive(!ended_);
  return info;
}

v1::SessionStatus HostedSession::Report() {
  v1::SessionInfo info = Info();
  return RunOnLoop<v1::SessionStatus>([this, info] {
    v1::SessionStatus s;
    *s.mutable_session() = info;
    Coordinator& coord = session_->runtime().coordinator();
    for (const WorkerPool::WorkerInfo& w : coord.pool().workers()) {
      v1::WorkerStatus* ws = s.add_workers();
      ws->set_id(w.id);
      ws->set_pid(w.pid);
      ws->set_state(w.state == WorkerPool::WorkerState::kStarting ? "starting"
                    : w.state == WorkerPool::WorkerState::kIdle   ? "idle"
                    : w.state == WorkerPool::WorkerState::kBusy   ? "busy"
                                                                  : "stopping");
      ws->set_kind(WorkerPolicyName(w.policy));
      ws->set_execution_id(w.execution_id);
      ws->set_host(w.host);
    }
    if (SharedHosts* hosts = session_->runtime().remote_hosts()) {
      for (const RemoteHosts::HostInfo& h : hosts->hosts()) {
        v1::RemoteHostStatus* hs = s.add_hosts();
        hs->set_id(h.id);
        hs->set_name(h.name);
        hs->set_cores(h.cores);
        hs->set_max_workers(h.max_workers);
        hs->set_sandbox(h.sandbox);
        hs->set_workers(static_cast<uint32_t>(h.workers));
        hs->set_usable(h.usable);
      }
    }
    for (const BreakerInfo& b : coord.Breakers()) {
      v1::BreakerStatus* bs = s.add_breakers();
      bs->set_name(b.name);
      bs->set_state(BreakerStateName(b.state));
      bs->set_consecutive_failures(b.consecutive_failures);
    }
    const BudgetLimits& l = session_->budget();
    s.set_max_turns(static_cast<int32_t>(l.turns));
    s.set_max_tool_calls(l.tool_calls);
    s.set_max_tokens(l.tokens);
    s.set_max_budget_usd(static_cast<double>(l.cost_microusd) / 1e6);
    s.set_max_wall_seconds(static_cast<double>(ToMillis(l.wall)) / 1000.0);
    const MessageOutcome& t = session_->agent().totals();
    s.set_used_llm_calls(t.llm_calls);
    s.set_used_input_tokens(t.usage.input_tokens);
    s.set_used_output_tokens(t.usage.output_tokens);
    s.set_used_cost_usd(static_cast<double>(t.cost_microusd) / 1e6);
    return s;
  });
}

std::vector<v1::SessionEvent> HostedSession::EventsAfter(uint64_t seq, Duration wait, bool* ended) {
  std::unique_lock<std::mutex> lock(mu_);
  changed_.wait_for(lock, wait, [&] { return events_.size() > seq || ended_; });
  std::vector<v1::SessionEvent> out;
  for (uint64_t i = seq; i < events_.size(); ++i) out.push_back(events_[i]);
  *ended = ended_ && out.empty();
  return out;
}

}  // namespace odin
