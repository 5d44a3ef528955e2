#include "planner/budget.h"

#include <cstdio>

namespace odin {

namespace {

std::string Dollars(int64_t microusd) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "$%.4f", static_cast<double>(microusd) / 1e6);
  return buf;
}

std::string Seconds(Duration d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", static_cast<double>(ToMillis(d)) / 1000.0);
  return buf;
}

}  // namespace

Budget::Budget(BudgetLimits limits, Clock* clock) : limits_(limits), clock_(clock), started_(clock->Now()) {}

std::optional<std::string> Budget::Exceeded() {
  if (!refused_.empty()) return refused_;
  if (limits_.tokens > 0 && used_.tokens >= limits_.tokens) return "tokens";
  if (limits_.cost_microusd > 0 && used_.cost_microusd >= limits_.cost_microusd) return "cost";
  if (limits_.wall > Duration::zero() && clock_->Now() - started_ >= limits_.wall) return "wall_time";
  return std::nullopt;
}

bool Budget::TryStartTurn() {
  if (Exceeded()) return false;
  if (limits_.turns > 0 && used_.turns >= limits_.turns) {
    refused_ = "turns";
    return false;
  }
  ++used_.turns;
  return true;
}

bool Budget::TryStartToolCall() {
  if (Exceeded()) return false;
  if (limits_.tool_calls > 0 && used_.tool_calls >= limits_.tool_calls) {
    refused_ = "tool_calls";
    return false;
  }
  ++used_.tool_calls;
  return true;
}

void Budget::ChargeModel(int64_t tokens, int64_t cost_microusd) {
  used_.tokens += tokens;
  used_.cost_microusd += cost_microusd;
}

std::optional<SteadyTime> Budget::deadline() const {
  if (limits_.wall <= Duration::zero()) return std::nullopt;
  return started_ + limits_.wall;
}

BudgetUse Budget::used() {
  BudgetUse u = used_;
  u.wall = clock_->Now() - started_;
  return u;
}

std::string Budget::Describe(const std::string& limit) {
  BudgetUse u = used();
  if (limit == "turns") return "turns: " + std::to_string(u.turns) + " of " + std::to_string(limits_.turns) + " used";
  if (limit == "tool_calls") {
    return "tool calls: " + std::to_string(u.tool_calls) + " of " + std::to_string(limits_.tool_calls) + " used";
  }
  if (limit == "tokens") {
    return "tokens: " + std::to_string(u.tokens) + " used, the limit is " + std::to_string(limits_.tokens);
  }
  if (limit == "cost")
    return "cost: " + Dollars(u.cost_microusd) + " used, the limit is " + Dollars(limits_.cost_microusd);
  if (limit == "wall_time") return "wall time: " + Seconds(u.wall) + " used, the limit is " + Seconds(limits_.wall);
  return limit;
}

std::string Budget::Remaining() {
  BudgetUse u = used();
  std::string out;
  auto add = [&out](const std::string& part) { out += (out.empty() ? "" : ", ") + part; };
  auto left = [](int64_t limit, int64_t used) { return std::to_string(used >= limit ? 0 : limit - used); };
  if (limits_.turns > 0)
    add("turns " + left(limits_.turns, u.turns) + " of " + std::to_string(limits_.turns) + " left");
  if (limits_.tool_calls > 0) {
    add("tool calls " + left(limits_.tool_calls, u.tool_calls) + " of " + std::to_string(limits_.tool_calls) + " left");
  }
  if (limits_.tokens > 0)
    add("tokens " + left(limits_.tokens, u.tokens) + " of " + std::to_string(limits_.tokens) + " left");
  if (limits_.cost_microusd > 0) {
    add(Dollars(u.cost_microusd >= limits_.cost_microusd ? 0 : limits_.cost_microusd - u.cost_microusd) + " of " +
        Dollars(limits_.cost_microusd) + " left");
  }
  if (limits_.wall > Duration::zero()) {
    add(Seconds(u.wall >= limits_.wall ? Duration::zero() : limits_.wall - u.wall) + " of " + Seconds(limits_.wall) +
        " wall time left");
  }
  return out;
}

}  // namespace odin
