#pragma once
// How a message (a run) ends, and the exit code each ending gives `odin -p`
// and `odin-rpc prompt`. Below the front ends, so the session's event stream
// and every front end agree.

#include <optional>
#include <string_view>

namespace odin {

enum class RunOutcome {
  kDone,
  kNotConverged,  // the convergence gate kept refusing completion
  kBudgetExceeded,
  kStalled,  // the stall detector stopped the run
  kError,
  kCancelled,
  // The conversation did not fit the model's context window even after a
  // compaction (a single huge message).
  kContextExhausted,
  // A UserPromptSubmit hook refused the prompt (exit 2, or "decision":
  // "block"): the model never saw it.
  kPromptRefused,
  // The plan critic said HALT, or sent the plan back more often than
  // reviewers.critic.max_rounds allows.
  kHalted,
  // The work of a run did not all land: a command's changes were set aside
  // because another Odin session (or something else) changed the same
  // paths while it ran. The report names the paths and where they are kept.
  kConflict,
  // With --json-schema: the final answer was not JSON valid against the
  // schema, even after it was sent back to the model once with the errors.
  kInvalidOutput,
};

// "done", "not_converged", "budget_exceeded", "stalled", "error", "cancelled",
// "context_exhausted", "prompt_refused", "halted", "conflict", "invalid_output".
const char* RunOutcomeName(RunOutcome outcome);
std::optional<RunOutcome> ParseRunOutcome(std::string_view name);

// Exit codes. `odin exec` passes the command's status through and uses 125
// for its own errors (as timeout(1) and env(1) do); the other subcommands
// exit 2 on usage errors and 1 on other errors.
constexpr int kExecOwnError = 125;
constexpr int kUsageError = 2;
constexpr int kError = 1;
constexpr int kNotConverged = 3;
constexpr int kBudgetExceeded = 4;
constexpr int kStalled = 5;
constexpr int kContextExhaustedExit = 6;
constexpr int kPromptRefusedExit = 7;
constexpr int kHaltedExit = 8;
constexpr int kInvalidOutputExit = 9;
constexpr int kConflictExit = 10;
constexpr int kCancelledExit = 130;

int ExitCode(RunOutcome outcome);

}  // namespace odin
