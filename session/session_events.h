#pragma once
// Session events: what a front end shows of an agent at work, as
// v1::SessionEvent (odin/v1/coordinator.proto). One recorder turns the
// agent's and the coordinator's callbacks into events; the daemon streams
// them to its clients, and `odin -p` (local, or --connect to a daemon) prints
// them, so both print the same thing from the same events.

#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "planner/agent.h"
#include "gates/circuit_breaker.h"
#include "coordinator/coordinator.h"
#include "odin/v1/coordinator.pb.h"

namespace odin {

class EventRecorder final : public AgentObserver {
 public:
  using Sink = std::function<void(v1::SessionEvent)>;
  // sink hears of each event, numbered from 1. breakers gives the breakers'
  // state for a message's result.
  EventRecorder(std::string session_id, Sink sink, std::function<std::vector<BreakerInfo>()> breakers);

  void OnMessageStart(const std::string& message_id, const std::string& text, Mode mode) override;
  void OnTextDelta(const std::string& text) override;
  void OnToolStart(const std::string& execution_id, const ToolCallRequest& call) override;
  void OnToolProgress(const v1::ToolProgress& progress) override;
  void OnToolEnd(const std::string& execution_id, const std::string& tool, const v1::ToolResult& result) override;
  void OnLlmCall(const LlmCallRecord& call) override;
  // A gate_event of kind "model_retry" (detail: next_attempt, max_attempts,
  // delay_ms, http_status, why): not a gate's, so not in the ledger.
  void OnLlmRetry(const LlmRetry& retry) override;
  void OnMessageDone(const MessageOutcome& outcome) override;
  // Coordinator::on_gate_event and on_approval_request.
  void OnGateEvent(const GateEvent& event);
  void OnApprovalRequest(const ApprovalRequest& request);
  // An approval answered: "once", "session" or "deny".
  void OnApprovalResolved(const std::string& execution_id, const std::string& answer);
  // The session can take no more messages.
  void OnSessionEnded(const std::string& reason);

  void set_session_id(std::string id) { session_id_ = std::move(id); }
  // The outcome of the last message that finished, if any.
  const std::optional<MessageOutcome>& last_outcome() const { return last_outcome_; }

 private:
  v1::SessionEvent Next();
  void Emit(v1::SessionEvent e);

  std::string session_id_;
  Sink sink_;
  std::function<std::vector<BreakerInfo>()> breakers_;
  uint64_t seq_ = 0;
  std::string message_id_;  // the message being worked on
  std::optional<MessageOutcome> last_outcome_;
};

// A tool call's end in one line: its status and what it came to.
std::string ToolResultLine(const std::string& tool, const v1::ToolResult& result);

// The exit code `odin -p` gives a message's final status.
int ExitCodeOfStatus(const std::string& status);

// The result of a message as `odin -p --output-format json` prints it.
std::string OutcomeJson(const MessageOutcome& outcome, const std::string& session_id,
                        const std::vector<BreakerInfo>& breakers);

// The first line of `--output-format stream-json`.
std::string SessionStartJson(const std::string& session_id, const std::string& provider, const std::string& model,
                             const std::string& workspace);

// Prints one event as `odin -p` does in `format` (text, json or
// stream-json): stream-json prints every event as a line; json and text
// print the result when the message finishes (text: the model's words, then
// the ledger's report; a status other than done goes to err as one line).
void PrintPromptEvent(const v1::SessionEvent& event, const std::string& format, std::ostream& out, std::ostream& err);

}  // namespace odin
