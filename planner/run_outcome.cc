#include "planner/run_outcome.h"

namespace odin {

namespace {

constexpr RunOutcome kAll[] = {
    RunOutcome::kDone,   RunOutcome::kNotConverged, RunOutcome::kBudgetExceeded,   RunOutcome::kStalled,
    RunOutcome::kError,  RunOutcome::kCancelled,    RunOutcome::kContextExhausted, RunOutcome::kPromptRefused,
    RunOutcome::kHalted, RunOutcome::kConflict,     RunOutcome::kInvalidOutput};

}  // namespace

const char* RunOutcomeName(RunOutcome outcome) {
  switch (outcome) {
    case RunOutcome::kDone: return "done";
    case RunOutcome::kNotConverged: return "not_converged";
    case RunOutcome::kBudgetExceeded: return "budget_exceeded";
    case RunOutcome::kStalled: return "stalled";
    case RunOutcome::kError: return "error";
    case RunOutcome::kCancelled: return "cancelled";
    case RunOutcome::kContextExhausted: return "context_exhausted";
    case RunOutcome::kPromptRefused: return "prompt_refused";
    case RunOutcome::kHalted: return "halted";
    case RunOutcome::kConflict: return "conflict";
    case RunOutcome::kInvalidOutput: return "invalid_output";
  }
  return "error";
}

std::optional<RunOutcome> ParseRunOutcome(std::string_view name) {
  for (RunOutcome o : kAll) {
    if (name == RunOutcomeName(o)) return o;
  }
  return std::nullopt;
}

int ExitCode(RunOutcome outcome) {
  switch (outcome) {
    case RunOutcome::kDone: return 0;
    case RunOutcome::kNotConverged: return kNotConverged;
    case RunOutcome::kBudgetExceeded: return kBudgetExceeded;
    case RunOutcome::kStalled: return kStalled;
    case RunOutcome::kCancelled: return kCancelledExit;
    case RunOutcome::kError: return kError;
    case RunOutcome::kContextExhausted: return kContextExhaustedExit;
    case RunOutcome::kPromptRefused: return kPromptRefusedExit;
    case RunOutcome::kHalted: return kHaltedExit;
    case RunOutcome::kConflict: return kConflictExit;
    case RunOutcome::kInvalidOutput: return kInvalidOutputExit;
  }
  return kError;
}

}  // namespace odin
