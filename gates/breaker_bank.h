#pragma once
// BreakerBank: gate 7, the circuit breakers a call passes before it goes to
// a worker (DESIGN §3). One breaker per worker kind (or per MCP server) and
// one per tool; each opens after a run of infrastructure failures (a worker
// crashed, a sandbox could not be set up, a tool timed out) and refuses
// calls until a cooldown has passed and trial calls succeed.
//
// The coordinator holds one bank and records each transition through the
// port it hands in. Thread-safety: none; the coordinator's thread only.

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "gates/circuit_breaker.h"
#include "pool/worker_request.h"

namespace odin {

namespace v1 {
class ToolResult;
}

// A breaker as odin's status output shows it.
struct BreakerInfo {
  std::string name;  // "tool:ExecuteCommand", "worker:writable", "mcp:SERVER"
  BreakerState state = BreakerState::kClosed;
  int consecutive_failures = 0;
  std::string last_failure;
  int64_t reopens_in_ms = 0;  // while open
};

// The breakers that let one call through, each with its trial token (0:
// not a trial), handed back with the call's end.
using BreakerHolds = std::vector<std::pair<std::string, uint64_t>>;

class BreakerBank {
 public:
  // Hears each transition with the call that caused it.
  using RecordFn =
      std::function<void(const BreakerTransition&, const std::string& agent_id, const std::string& execution_id)>;

  BreakerBank(BreakerOptions options, Clock* clock, RecordFn record)
      : o_(options), clock_(clock), record_(std::move(record)) {}

  // Lets a call through its worker kind's (or MCP server's) breaker, then
  // its tool's; *held names them. Unavailable, naming the breaker and why,
  // when one refuses (then nothing is held).
  Status Admit(const WorkerRequest& request, const std::string& agent_id, BreakerHolds* held);
  // The end of a call that was let through: each breaker hears whether the
  // infrastructure failed. Empties *held.
  void Report(BreakerHolds* held, const v1::ToolResult& result, const std::string& agent_id);

  std::vector<BreakerInfo> Infos() const;

 private:
  void Record(CircuitBreaker& b, const std::string& agent_id, const std::string& execution_id);

  BreakerOptions o_;
  Clock* clock_;
  RecordFn record_;
  std::map<std::string, CircuitBreaker> breakers_;  // by name
};

}  // namespace odin
