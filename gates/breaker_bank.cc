#include "gates/breaker_bank.h"

#include <algorithm>

#include "odin/v1/worker.pb.h"

namespace odin {

namespace {

// Why a result is the infrastructure's failure rather than the tool's own,
// or "" if it is not. A worker kind's breaker hears of crashes and sandbox
// failures; a tool's also of timeouts.
std::string InfrastructureFailure(const v1::ToolResult& r, bool worker_kind) {
  if (r.exit_reason() == v1::EXIT_REASON_SANDBOX_SETUP_FAILED) return "the sandbox could not be set up";
  if (r.status() == v1::TOOL_STATUS_CRASHED || r.exit_reason() == v1::EXIT_REASON_CRASHED) {
    return "the worker crashed";
  }
  if (!worker_kind && r.status() == v1::TOOL_STATUS_TIMED_OUT) return "timed out";
  return "";
}

const char* WorkerKind(WorkerPolicy policy) {
  switch (policy) {
    case WorkerPolicy::kLspHost: return "lsp_host";
    case WorkerPolicy::kSubagent: return "subagent";
    case WorkerPolicy::kReadonly: return "readonly";
    case WorkerPolicy::kHookWritable: return "hook";
    case WorkerPolicy::kHookReadonly: return "hook_readonly";
    case WorkerPolicy::kHookHost: return "hook_host";
    default: return "writable";
  }
}

}  // namespace

void BreakerBank::Record(CircuitBreaker& b, const std::string& agent_id, const std::string& execution_id) {
  for (const BreakerTransition& t : b.TakeTransitions()) record_(t, agent_id, execution_id);
}

Status BreakerBank::Admit(const WorkerRequest& call, const std::string& agent_id, BreakerHolds* held) {
  SteadyTime now = clock_->Now();
  // An MCP server has a breaker of its own: its crashes and timeouts.
  std::string first = IsMcpPolicy(call.policy) ? "mcp:" + call.lane : std::string("worker:") + WorkerKind(call.policy);
  for (const std::string& name : {first, "tool:" + call.tool}) {
    CircuitBreaker& b = breakers_.try_emplace(name, name, o_).first->second;
    uint64_t trial = 0;
    if (!b.Allow(now, &trial)) {
      for (auto& [admitted, was_trial] : *held) breakers_.at(admitted).OnAbandoned(was_trial);
      held->clear();
      int64_t left = std::max<int64_t>(ToMillis(b.reopens_at() - now), 0);
      std::string why = b.state() == BreakerState::kOpen
                            ? "open after " + std::to_string(b.consecutive_failures()) +
                                  " infrastructure failures in a row (the last: " + b.last_failure() +
                                  "); calls are refused for another " + std::to_string((left + 999) / 1000) + " s"
                            : "half-open: a trial call is running; others wait for its result";
      Record(b, agent_id, call.execution_id);
      return Status::Unavailable("circuit breaker " + name, why);
    }
    held->push_back({name, trial});
    Record(b, agent_id, call.execution_id);
  }
  return Status::OK();
}

void BreakerBank::Report(BreakerHolds* held, const v1::ToolResult& r, const std::string& agent_id) {
  SteadyTime now = clock_->Now();
  for (auto& [name, trial] : *held) {
    CircuitBreaker& b = breakers_.at(name);
    bool worker_kind = name.rfind("worker:", 0) == 0;
    std::string failure = InfrastructureFailure(r, worker_kind);
    if (!failure.empty()) {
      b.OnFailure(now, failure, trial);
    } else if (r.status() == v1::TOOL_STATUS_CANCELLED || r.status() == v1::TOOL_STATUS_REJECTED ||
               (worker_kind && r.status() == v1::TOOL_STATUS_TIMED_OUT)) {
      b.OnAbandoned(trial);  // says nothing about the infrastructure
    } else {
      b.OnSuccess(trial);
    }
    Record(b, agent_id, r.execution_id());
  }
  held->clear();
}

std::vector<BreakerInfo> BreakerBank::Infos() const {
  std::vector<BreakerInfo> out;
  SteadyTime now = clock_->Now();
  for (const auto& [name, b] : breakers_) {
    BreakerInfo info{name, b.state(), b.consecutive_failures(), b.last_failure(), 0};
    if (b.state() == BreakerState::kOpen) info.reopens_in_ms = std::max<int64_t>(ToMillis(b.reopens_at() - now), 0);
    out.push_back(info);
  }
  return out;
}

}  // namespace odin
