#include "gates/circuit_breaker.h"

#include <algorithm>

namespace odin {

const char* BreakerStateName(BreakerState s) {
  switch (s) {
    case BreakerState::kClosed: return "closed";
    case BreakerState::kOpen: return "open";
    case BreakerState::kHalfOpen: return "half_open";
  }
  return "unknown";
}

void CircuitBreaker::MoveTo(BreakerState to, const std::string& reason) {
  transitions_.push_back({name_, state_, to, failures_, reason});
  state_ = to;
  trials_running_ = 0;
  trial_successes_ = 0;
  if (to == BreakerState::kHalfOpen) ++period_;
}

bool CircuitBreaker::Allow(SteadyTime now, uint64_t* trial) {
  *trial = 0;
  if (!o_.enabled) return true;
  if (state_ == BreakerState::kOpen) {
    if (now < reopens_at()) return false;
    MoveTo(BreakerState::kHalfOpen, "the cooldown passed");
  }
  if (state_ == BreakerState::kHalfOpen) {
    if (trials_running_ >= std::max(o_.trials, 1)) return false;
    ++trials_running_;
    *trial = period_;
  }
  return true;
}

void CircuitBreaker::OnSuccess(uint64_t trial) {
  failures_ = 0;
  // Only this period's trials decide a half-open breaker; a call let through
  // before says little about now.
  if (state_ != BreakerState::kHalfOpen || trial != period_) return;
  trials_running_ = std::max(trials_running_ - 1, 0);
  if (++trial_successes_ >= std::max(o_.successes, 1)) {
    MoveTo(BreakerState::kClosed, std::to_string(trial_successes_) + " trial calls succeeded");
  }
}

void CircuitBreaker::OnFailure(SteadyTime now, const std::string& reason, uint64_t trial) {
  ++failures_;
  last_failure_ = reason;
  if (!o_.enabled) return;
  if (state_ == BreakerState::kHalfOpen) {
    if (trial != period_) return;
    opened_at_ = now;
    MoveTo(BreakerState::kOpen, "a trial call failed: " + reason);
  } else if (state_ == BreakerState::kClosed && failures_ >= std::max(o_.failures, 1)) {
    opened_at_ = now;
    MoveTo(BreakerState::kOpen, std::to_string(failures_) + " failures in a row, the last: " + reason);
  }
  // Open: a call that was already running when it opened; nothing changes.
}

void CircuitBreaker::OnAbandoned(uint64_t trial) {
  if (trial == period_ && state_ == BreakerState::kHalfOpen) trials_running_ = std::max(trials_running_ - 1, 0);
}

std::vector<BreakerTransition> CircuitBreaker::TakeTransitions() {
  std::vector<BreakerTransition> out = std::move(transitions_);
  transitions_.clear();
  return out;
}

}  // namespace odin
