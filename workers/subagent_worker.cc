#include "workers/subagent_worker.h"

#include <map>
#include <memory>
#include <optional>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "base/ids.h"
#include "base/json_input.h"
#include "planner/agent.h"
#include "odin/v1/worker.pb.h"
#include "workers/worker_channel.h"

namespace odin {
namespace {

using nlohmann::json;

v1::ChatTurn ToTurn(const ChatMessage& m) {
  v1::ChatTurn t;
  switch (m.role) {
    case ChatMessage::Role::kUser: t.set_role(v1::ChatTurn::ROLE_USER); break;
    case ChatMessage::Role::kAssistant: t.set_role(v1::ChatTurn::ROLE_ASSISTANT); break;
    case ChatMessage::Role::kToolResults: t.set_role(v1::ChatTurn::ROLE_TOOL_RESULTS); break;
  }
  t.set_text(m.text);
  for (const ToolCallRequest& c : m.tool_calls) {
    v1::PlannedCall* p = t.add_tool_calls();
    p->set_id(c.id);
    p->set_name(c.name);
    p->set_arguments_json(c.arguments_json);
  }
  for (const ToolResultMessage& r : m.results) {
    v1::PlannedResult* p = t.add_results();
    p->set_call_id(r.call_id);
    p->set_content(r.content);
    p->set_is_error(r.is_error);
  }
  return t;
}

// The model, as the coordinator calls it for us.
class RemoteModel final : public LlmClient {
 public:
  explicit RemoteModel(WorkerChannel* channel) : channel_(channel) {}
  const std::string& provider() const override { return name_; }
  uint64_t Start(const ChatRequest& request, Callbacks callbacks) override {
    uint64_t id = next_++;
    v1::Envelope env;
    v1::ModelRequest* mr = env.mutable_model_request();
    mr->set_request_id(id);
    mr->set_system(request.system);
    for (const ChatMessage& m : request.messages) *mr->add_messages() = ToTurn(m);
    // The subagent's own per-turn facts: the last user content (the
    // coordinator adds its own after them).
    if (!request.tail.empty()) *mr->add_messages() = ToTurn({ChatMessage::Role::kUser, request.tail, {}, {}});
    mr->set_max_tokens(static_cast<uint32_t>(std::max(request.max_tokens, 0)));
    mr->set_handoff(request.handoff);
    mr->set_utility(request.utility);
    channel_->Queue(std::move(env));
    pending_[id] = std::move(callbacks);
    return id;
  }
  void Cancel(uint64_t id) override { pending_.erase(id); }
  void Tick() override {}
  std::optional<SteadyTime> NextTimer() const override { return std::nullopt; }

  void Deliver(const v1::ModelResponse& r) {
    auto it = pending_.find(r.request_id());
    if (it == pending_.end()) return;  // cancelled
    Callbacks cb = std::move(it->second);
    pending_.erase(it);
    ChatResponse out;
    if (r.has_error() && !r.handoff_facts().empty()) {
      // A handoff whose summary failed: its facts, and why.
      out.handoff_facts = r.handoff_facts();
      out.relay_error = r.error().message().empty() ? "the summary call failed" : r.error().message();
      cb.on_done(out);
      return;
    }
    if (r.has_error()) {
      cb.on_done(Status(static_cast<StatusCode>(r.error().code()), r.error().message()));
      return;
    }
    out.text = r.text();
    for (const v1::PlannedCall& c : r.tool_calls()) out.tool_calls.push_back({c.id(), c.name(), c.arguments_json()});
    out.truncated = r.truncated();
    out.stop_reason = r.stop_reason();
    out.usage = {static_cast<int64_t>(r.input_tokens()), static_cast<int64_t>(r.output_tokens())};
    out.attempts = static_cast<int>(r.attempts());
    out.handoff_facts = r.handoff_facts();
    if (cb.on_text && !out.text.empty()) cb.on_text(out.text);
    cb.on_done(out);
  }

 private:
  WorkerChannel* channel_;
  std::string name_ = "coordinator";
  uint64_t next_ = 1;
  std::map<uint64_t, Callbacks> pending_;
};

// The coordinator, as the subagent's tool host: every call is a message.
class RemoteToolHost final : public ToolHost {
 public:
  RemoteToolHost(WorkerChannel* channel, bool stop_hooks) : channel_(channel), stop_hooks_(stop_hooks) {}
  bool HasHooks(HookEvent event, const std::string& tool = "") const override {
    return event == HookEvent::kSubagentStop && stop_hooks_;
  }
  // The coordinator runs them; the answer comes back as a call's result.
  void RunHooks(HookRequest request, std::function<void(const HookOutcome&)> done) override {
    if (!HasHooks(request.event)) return done(HookOutcome());
    std::string id = NewId("hk");
    v1::Envelope env;
    v1::SubagentCall* sc = env.mutable_subagent_call();
    sc->set_execution_id(id);
    sc->set_tool(HookEventName(request.event));
    sc->set_arguments_json(request.fields_json);
    sc->set_hook(true);
    channel_->Queue(std::move(env));
    hooks_[id] = std::move(done);
  }
  std::string Submit(ToolCall call, CallHandlers handlers) override {
    if (call.execution_id.empty()) call.execution_id = NewId("ex");
    v1::Envelope env;
    v1::SubagentCall* sc = env.mutable_subagent_call();
    sc->set_execution_id(call.execution_id);
    sc->set_tool(call.tool);
    sc->set_arguments_json(call.arguments_json);
    sc->set_timeout_ms(static_cast<uint64_t>(ToMillis(call.timeout)));
    channel_->Queue(std::move(env));
    handlers_[call.execution_id] = std::move(handlers);
    return call.execution_id;
  }
  void Cancel(const std::string& execution_id, int reason) override {
    if (handlers_.count(execution_id) == 0) return;
    v1::Envelope env;
    env.mutable_cancel()->set_execution_id(execution_id);
    env.mutable_cancel()->set_reason(static_cast<v1::CancelReason>(reason));
    channel_->Queue(std::move(env));
  }
  // The coordinator adds the file cache and the todo list to each request.
  std::vector<CachedFileInfo> CachedFiles(const std::string&) override { return {}; }
  std::string TodosText(const std::string&) override { return ""; }
  std::vector<FileVerdict> Blocking() const override { return blocking_; }
  // As of the last result the coordinator sent.
  std::string WorkspaceDigest() override { return digest_; }
  const std::string& session_id() const override { return session_; }
  void RecordGateEvent(const std::string&, const std::string&, const std::string& kind, const std::string& execution_id,
                       const std::string& detail_json) override {
    v1::Envelope env;
    v1::GateEventNote* note = env.mutable_gate_event();
    note->set_kind(kind);
    note->set_execution_id(execution_id);
    note->set_detail_json(detail_json);
    channel_->Queue(std::move(env));
  }

  void Deliver(const v1::SubagentCallResult& r) {
    digest_ = r.workspace_digest();
    blocking_.clear();
    for (const v1::BlockingFile& b : r.blocking()) {
      FileVerdict v;
      v.path = b.path();
      v.mutation_id = b.mutation_id();
      v.check_id = b.check_id();
      v.status = ParseVerdict(b.status());
      v.summary = b.summary();
      v.reason = b.reason();
      blocking_.push_back(v);
    }
    auto hook = hooks_.find(r.result().execution_id());
    if (hook != hooks_.end()) {
      auto done = std::move(hook->second);
      hooks_.erase(hook);
      nlohmann::json j = ParseJson(r.result().output_json());
      HookOutcome o;
      if (j.is_object()) {
        if (j.value("decision", "") == "block") o.decision = HookOutcome::Decision::kBlock;
        o.reason = j.value("reason", "");
        o.stop = j.value("stop", false);
        o.stop_reason = j.value("stop_reason", "");
      }
      return done(o);
    }
    auto it = handlers_.find(r.result().execution_id());
    if (it == handlers_.end()) return;
    CallHandlers h = std::move(it->second);
    handlers_.erase(it);
    if (h.on_done) h.on_done(r.result(), Status::OK());
  }
  // Ends every call still waiting with a cancelled result (the coordinator
  // cancels the calls themselves when the task ends).
  void CancelAll(const std::string& why) {
    std::map<std::string, CallHandlers> waiting = std::move(handlers_);
    handlers_.clear();
    std::map<std::string, std::function<void(const HookOutcome&)>> hooks = std::move(hooks_);
    hooks_.clear();
    for (auto& [id, done] : hooks) done(HookOutcome());
    for (auto& [id, h] : waiting) {
      v1::ToolResult r;
      r.set_execution_id(id);
      r.set_status(v1::TOOL_STATUS_CANCELLED);
      r.set_exit_reason(v1::EXIT_REASON_KILLED);
      r.mutable_error()->set_code(v1::CODE_CANCELLED);
      r.mutable_error()->set_message(why);
      if (h.on_done) h.on_done(r, Status::OK());
    }
  }

 private:
  WorkerChannel* channel_;
  std::string session_;
  bool stop_hooks_ = false;
  std::map<std::string, CallHandlers> handlers_;
  std::map<std::string, std::function<void(const HookOutcome&)>> hooks_;  // SubagentStop runs asked for
  std::vector<FileVerdict> blocking_;
  std::string digest_;
};

class Worker final : public AgentObserver, public WorkerLogic {
 public:
  Worker(const WorkerOptions& o, Clock* clock) : o_(o), clock_(clock) {}

  void OnMessageDone(const MessageOutcome& o) override { done_ = o; }

  void Attach(WorkerChannel* channel) override { channel_ = channel; }
  void Service() override {
    if (done_) EndTask();
  }
  // The task's agent, model and tool host hold the channel, which closes
  // after Stop: they go now, the agent (which uses the other two) first.
  void Stop() override {
    agent_.reset();
    host_.reset();
    model_.reset();
  }

  void Handle(const v1::Envelope& env) override {
    switch (env.body_case()) {
      case v1::Envelope::kToolRequest: return StartTask(env.tool_request());
      case v1::Envelope::kModelResponse:
        if (model_) model_->Deliver(env.model_response());
        break;
      case v1::Envelope::kSubagentCallResult:
        if (host_) host_->Deliver(env.subagent_call_result());
        break;
      case v1::Envelope::kCancel:
        if (agent_ && env.cancel().execution_id() == execution_id_ && !cancel_reason_) {
          // The task stops now: the loop hears of its calls as cancelled at
          // once, and the coordinator cancels them for real when the task's
          // end arrives.
          cancel_reason_ = env.cancel().reason();
          agent_->CancelCurrent();
          if (!done_ && host_) host_->CancelAll("cancelled with the subagent");
        }
        break;
      default: break;
    }
    if (done_) EndTask();
  }

 private:
  void StartTask(const v1::ToolRequest& req) {
    if (agent_) return;  // one task at a time; the pool never sends two
    const v1::AgentTask& task = req.agent_task();
    execution_id_ = req.execution_id();
    Mode mode = Mode::kAsk;
    ParseMode(task.mode(), &mode);
    AgentOptions a;
    a.agent_id = task.agent_id();
    a.workspace = o_.workspace;
    a.cwd = o_.workspace;
    a.instructions = task.instructions();
    a.agent_type = task.agent_type();
    a.agent_prompt = task.agent_prompt();
    a.budget.turns = task.max_turns();  // 0: no limit; the rest is the parent's, at the coordinator
    a.stall.enabled = task.stall_enabled();
    if (task.stall_repeat() > 0) a.stall.repeat = static_cast<int>(task.stall_repeat());
    if (task.stall_failures() > 0) a.stall.failures = static_cast<int>(task.stall_failures());
    if (task.stall_messages() > 0) a.stall.messages = static_cast<int>(task.stall_messages());
    if (task.stall_alternation_steps() > 0)
      a.stall.alternation_steps = static_cast<int>(task.stall_alternation_steps());
    if (task.stall_no_progress_turns() > 0)
      a.stall.no_progress_turns = static_cast<int>(task.stall_no_progress_turns());
    a.context_window = static_cast<int64_t>(task.context_window());
    if (task.compact_at() > 0) a.compact_at = task.compact_at();
    a.profile = Profile::kFast;  // the parent's completion runs the project's checks
    a.subagent = true;
    // A fingerprint scan of a big tree may take a while: the coordinator must
    // not take the silence for death.
    model_ = std::make_unique<RemoteModel>(channel_);
    host_ = std::make_unique<RemoteToolHost>(channel_, task.subagent_stop_hooks());
    if (task.max_stop_blocks() > 0) a.max_stop_blocks = static_cast<int>(task.max_stop_blocks());
    agent_ = std::make_unique<Agent>(a, host_.get(), model_.get(), nullptr, clock_, this);
    agent_->Send(task.prompt(), mode);
  }

  void EndTask() {
    MessageOutcome o = std::move(*done_);
    done_.reset();
    v1::ToolResult r;
    r.set_execution_id(execution_id_);
    bool ok = o.status == "done" && !cancel_reason_;
    // Stopped by the coordinator: its reason says how the call ended.
    v1::ToolStatus status = ok ? v1::TOOL_STATUS_OK : v1::TOOL_STATUS_ERROR;
    v1::ExitReason reason = o.status == "stalled"           ? v1::EXIT_REASON_STALLED
                            : o.status == "budget_exceeded" ? v1::EXIT_REASON_BUDGET_EXCEEDED
                                                            : v1::EXIT_REASON_NORMAL;
    // The coordinator refused a model call for the parent's budget: stopped
    // for the budget, as if the parent had cancelled it for that.
    if (!cancel_reason_ && o.status == "error" && o.error.code() == StatusCode::kResourceExhausted) {
      cancel_reason_ = v1::CANCEL_REASON_BUDGET;
    }
    if (cancel_reason_) {
      status = *cancel_reason_ == v1::CANCEL_REASON_TIMEOUT ? v1::TOOL_STATUS_TIMED_OUT : v1::TOOL_STATUS_CANCELLED;
      reason = *cancel_reason_ == v1::CANCEL_REASON_TIMEOUT  ? v1::EXIT_REASON_TIMEOUT
               : *cancel_reason_ == v1::CANCEL_REASON_BUDGET ? v1::EXIT_REASON_BUDGET_EXCEEDED
                                                             : v1::EXIT_REASON_KILLED;
    }
    r.set_status(status);
    r.set_exit_reason(reason);
    std::string answer = o.text;
    if (!ok && !o.error.ok())
      answer += (answer.empty() ? "" : "\n") + ("The subagent ended " + o.status + ": " + o.error.message());
    if (!ok && o.error.ok()) answer += (answer.empty() ? "" : "\n") + ("The subagent ended " + o.status + ".");
    if (!ok) {
      r.mutable_error()->set_code(v1::CODE_FAILED_PRECONDITION);
      r.mutable_error()->set_message("subagent " + o.status + (o.error.ok() ? "" : ": " + o.error.message()));
    }
    r.set_output_head(answer);
    r.set_output_total_bytes(answer.size());
    json out = {{"status", o.status}, {"turns", o.turns}, {"llm_calls", o.llm_calls}};
    if (!o.error.ok()) out["error"] = o.error.message();
    r.set_output_json(out.dump(-1, ' ', false, json::error_handler_t::replace));
    channel_->QueueResult(std::move(r));
    channel_->Flush();
    // Ready for the next task, with a fresh context.
    agent_.reset();
    host_.reset();
    model_.reset();
    cancel_reason_.reset();
    execution_id_.clear();
  }

  const WorkerOptions& o_;
  Clock* clock_;
  WorkerChannel* channel_ = nullptr;
  std::unique_ptr<RemoteModel> model_;
  std::unique_ptr<RemoteToolHost> host_;
  std::unique_ptr<Agent> agent_;
  std::optional<MessageOutcome> done_;
  std::string execution_id_;
  std::optional<int> cancel_reason_;  // a v1::CancelReason, once the coordinator cancelled the task
};

}  // namespace

int RunSubagentWorker(const WorkerOptions& options, Clock* clock) {
  Worker w(options, clock);
  return RunWorkerLoop(options, {v1::WORKER_KIND_SUBAGENT, {kAgentTool}}, clock, &w);
}

}  // namespace odin
