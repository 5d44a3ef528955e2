#pragma once
// The convergence gate (gate 4 of DESIGN.md): what stands between a model's
// "I am done" and a message that ends as done, in edit mode.
//
// A claim of completion is refused while the validation gate has the session
// blocked (the refusal names the blocking files and the errors), and, when
// the message changed files, while a backpressure check (build, lint, tests)
// fails or cannot run (unless fail_open). Each refusal goes back to the model
// as a [runtime] message; the same refusal (by fingerprint) coming back
// retry_cap times ends the message as not_converged.
//
// The planner loop (agent.cc) runs the checks as ExecuteCommand calls; this
// file judges. Pure functions and a counter; thread-safety: none.

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "planner/checks.h"
#include "planner/tool_host.h"

namespace odin {

namespace v1 {
class ToolResult;
}  // namespace v1

// Why completion is refused: the text the model reads, and a fingerprint
// that is the same when the same refusal comes back.
struct Refusal {
  std::string fingerprint;
  std::string text;
};

// The refusal for a blocked session, or nullopt if nothing blocks. *event is
// the completion_refused gate event's detail.
std::optional<Refusal> RefuseWhileBlocked(const std::vector<FileVerdict>& blocking, const std::string& workspace,
                                          std::string* event);

// How a backpressure check ended: passed, failed (its exit code, or its
// timeout: the project's failure) or not_run (a crash, the sandbox: the
// infrastructure's).
enum class CheckStatus { kPassed, kFailed, kNotRun };
const char* CheckStatusName(CheckStatus status);

struct CheckVerdict {
  CheckStatus status = CheckStatus::kNotRun;
  std::optional<Refusal> failure;  // what the model is told, when it blocks completion
  std::string event;               // the check gate event's detail
};
// Judges the check `spec`, run as execution `id` with result r.
CheckVerdict JudgeCheck(const CheckSpec& spec, const std::string& id, const v1::ToolResult& r, int timeout_seconds,
                        bool fail_open);

// One refusal for all the checks that failed, in order.
Refusal RefuseForChecks(const std::vector<Refusal>& failures);

// Counts refusals by fingerprint, within one message.
class RefusalCounter {
 public:
  explicit RefusalCounter(int retry_cap) : retry_cap_(retry_cap) {}
  // Counts one more; returns how many times this refusal has come.
  int Count(const std::string& fingerprint) { return ++counts_[fingerprint]; }
  // True once a refusal has come back retry_cap times: not converged.
  bool GaveUp(int times) const { return times >= retry_cap_; }
  void Clear() { counts_.clear(); }

 private:
  int retry_cap_;
  std::map<std::string, int> counts_;
};

}  // namespace odin
