#pragma once
// CircuitBreaker: stops sending calls to something that keeps failing for
// reasons of its own (a worker crash, a timeout, a sandbox that cannot be set
// up), so the agent hears "unavailable" at once instead of waiting on each
// failure. A command's own non-zero exit is not such a failure.
//
//   closed  --`failures` in a row-->  open  --`cooldown`-->  half-open
//   half-open --`successes` trial successes--> closed
//   half-open --a trial fails--> open (a new cooldown)
//
// While open every call is refused; while half-open, `trials` calls at a time
// are let through. Each transition is returned by TakeTransitions for the
// ledger. Time is a parameter.
//
// Thread-safety: none.

#include <cstdint>
#include <string>
#include <vector>

#include "base/clock.h"

namespace odin {

struct BreakerOptions {
  bool enabled = true;
  int failures = 5;
  Duration cooldown = seconds(30);
  int trials = 1;     // calls let through at once while half-open
  int successes = 2;  // trial successes that close it
};

enum class BreakerState { kClosed, kOpen, kHalfOpen };
const char* BreakerStateName(BreakerState s);

struct BreakerTransition {
  std::string breaker;  // "tool:ExecuteCommand", "worker:writable"
  BreakerState from;
  BreakerState to;
  int failures = 0;    // consecutive failures when it opened
  std::string reason;  // the failure or success that caused it
};

class CircuitBreaker {
 public:
  CircuitBreaker(std::string name, BreakerOptions options) : name_(std::move(name)), o_(options) {}

  // Whether a call may go now. A call let through while half-open is a
  // trial: *trial gets a token (else 0) the caller passes back with its end,
  // so that a trial of an earlier half-open period cannot decide this one.
  bool Allow(SteadyTime now, uint64_t* trial);
  // The end of a call that was let through.
  void OnSuccess(uint64_t trial);
  void OnFailure(SteadyTime now, const std::string& reason, uint64_t trial);
  // A call that ended without telling anything (cancelled, never ran).
  void OnAbandoned(uint64_t trial);

  BreakerState state() const { return state_; }
  const std::string& name() const { return name_; }
  int consecutive_failures() const { return failures_; }
  const std::string& last_failure() const { return last_failure_; }
  // While open: when it turns half-open.
  SteadyTime reopens_at() const { return opened_at_ + o_.cooldown; }
  std::vector<BreakerTransition> TakeTransitions();

 private:
  void MoveTo(BreakerState to, const std::string& reason);

  std::string name_;
  BreakerOptions o_;
  BreakerState state_ = BreakerState::kClosed;
  int failures_ = 0;
  int trials_running_ = 0;
  int trial_successes_ = 0;
  uint64_t period_ = 0;  // numbers the half-open periods: the trial tokens
  SteadyTime opened_at_{};
  std::string last_failure_;
  std::vector<BreakerTransition> transitions_;
};

}  // namespace odin
