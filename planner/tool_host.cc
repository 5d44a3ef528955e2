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

}  // namespace odin
