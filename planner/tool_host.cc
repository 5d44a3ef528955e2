#include "planner/tool_host.h"

namespace odin {

const char* VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kClean: return "clean";
    case Verdict::kErrors: return "errors";
    case Verdict::kTimedOut: return "timed_out";
    case Verdict::kNoValidator: return "no_validator";
  }
  return "timed_out";
}

Verdict ParseVerdict(std::string_view name) {
  for (Verdict v : {Verdict::kClean, Verdict::kErrors, Verdict::kNoValidator}) {
    if (name == VerdictName(v)) return v;
  }
  return Verdict::kTimedOut;
}

bool IsBlocking(Verdict verdict) { return verdict == Verdict::kErrors || verdict == Verdict::kTimedOut; }

const char* CallModeName(CallMode mode) {
  switch (mode) {
    case CallMode::kAsk: return "ask";
    case CallMode::kPlan: return "plan";
    case CallMode::kEdit: return "edit";
    case CallMode::kExec: return "exec";
  }
  return "exec";
}

std::optional<CallMode> ParseCallMode(std::string_view name) {
  for (CallMode m : {CallMode::kAsk, CallMode::kPlan, CallMode::kEdit, CallMode::kExec}) {
    if (name == CallModeName(m)) return m;
  }
  return std::nullopt;
}

CallMode CallModeOf(Mode mode) {
  switch (mode) {
    case Mode::kAsk: return CallMode::kAsk;
    case Mode::kPlan: return CallMode::kPlan;
    case Mode::kEdit: return CallMode::kEdit;
  }
  return CallMode::kAsk;
}

std::optional<Mode> AgentModeOf(CallMode mode) {
  switch (mode) {
    case CallMode::kAsk: return Mode::kAsk;
    case CallMode::kPlan: return Mode::kPlan;
    case CallMode::kEdit: return Mode::kEdit;
    case CallMode::kExec: return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace odin
