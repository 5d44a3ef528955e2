#pragma once
// Budget: the limits of one run (a message, and the subagents it starts,
// which charge their parent's budget) and what it has used: model
// turns, tool calls, tokens, cost and wall time.
//
// It is the one choke point: the agent asks it before each model call, the
// coordinator before each tool call, and both charge it. Turns and tool calls
// are refused once the count is reached; tokens, cost and wall time are
// checked against what has been used (a model call that crosses the token
// limit is not undone, but nothing starts after it).
//
// Thread-safety: none.

#include <cstdint>
#include <optional>
#include <string>

#include "base/clock.h"

namespace odin {

// Zero means "no limit" for every field.
struct BudgetLimits {
  int64_t turns = 0;          // model calls
  int64_t tool_calls = 0;     // tool calls submitted (refused ones included)
  int64_t tokens = 0;         // input plus output tokens
  int64_t cost_microusd = 0;  // millionths of a dollar
  Duration wall{};            // from the start of the run
};

struct BudgetUse {
  int64_t turns = 0;
  int64_t tool_calls = 0;
  int64_t tokens = 0;
  int64_t cost_microusd = 0;
  Duration wall{};
};

class Budget {
 public:
  // Starts the wall clock now. clock must outlive the budget.
  Budget(BudgetLimits limits, Clock* clock);

  // Charges one model call iff the budget allows it (no limit is used up).
  bool TryStartTurn();
  // Charges one tool call iff the budget allows it.
  bool TryStartToolCall();
  // Charges a finished model call.
  void ChargeModel(int64_t tokens, int64_t cost_microusd);

  // The name of the first limit that is used up ("turns" and "tool_calls"
  // only once a call was refused for them; "tokens", "cost", "wall_time" as
  // soon as they are reached), or nullopt.
  std::optional<std::string> Exceeded();
  // When the wall-time limit runs out, if there is one.
  std::optional<SteadyTime> deadline() const;

  // One line on a limit: "tool calls: 12 of 12 used".
  std::string Describe(const std::string& limit);
  // What is left of each set limit, as the model reads it every turn:
  // "turns 47 of 50 left, tool calls 188 of 200 left, ...". Empty if no limit
  // is set.
  std::string Remaining();

  BudgetUse used();
  const BudgetLimits& limits() const { return limits_; }

 private:
  BudgetLimits limits_;
  Clock* clock_;
  SteadyTime started_;
  BudgetUse used_;
  std::string refused_;  // the count limit that refused a call, if any
};

}  // namespace odin
