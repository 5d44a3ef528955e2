#pragma once
// LedgerTelemetry: the ledger's records as OpenTelemetry spans and metrics.
// The ledger is the one place everything a session does is recorded, so
// telemetry observes it (Ledger::set_observer) rather than each feature
// reporting on its own: a trace per session (its span ended with the
// observer), a span per message, model call, tool call, validation (an
// lsp_check) and subagent (an AgentTool call, the subagent's own calls and
// model calls under it); metrics of tokens, cost, model and tool calls
// with their statuses, durations, validations and gate events.
//
// Attributes come from an allow list: ids, tool names (Odin's own, or an
// MCP tool's name if it is a plain one), model and provider names,
// statuses, counts and durations. Never arguments, prompts, paths, output
// or error text.

#include <deque>
#include <map>
#include <string>

#include "ledger/ledger.h"
#include "telemetry/telemetry.h"

namespace odin {

class LedgerTelemetry final : public LedgerObserver {
 public:
  explicit LedgerTelemetry(TelemetrySink* sink) : sink_(sink) {}
  // Ends what is still open (now), the sessions' spans last.
  ~LedgerTelemetry() override;

  void OnSession(const SessionRecord& session) override;
  void OnExecutionStart(const ExecutionStart& start) override;
  void OnExecutionEnd(const ExecutionEnd& end, const ValidationRecord* validation) override;
  void OnMessage(const MessageRecord& message) override;
  void OnLlmCall(const LlmCallRecord& call) override;
  void OnGateEvent(const GateEvent& event) override;

 private:
  struct Open {
    TelemetrySpan span;
    std::string tool;  // as recorded; named for telemetry only at its end (ToolName)
  };
  // The session's span, made on its first record.
  Open& SessionSpan(const std::string& session_id, int64_t at_ms);
  // The span a record of this agent goes under: its open message, else
  // the subagent call it runs for, else the session.
  const TelemetrySpan& ParentOf(const std::string& session_id, const std::string& agent_id, int64_t at_ms);
  void End(Open open, int64_t end_ms);

  TelemetrySink* sink_;
  std::map<std::string, Open> sessions_;  // by session id
  // By session id + agent id: the message running first, then the ones
  // queued behind it (each starts when the one before it ends).
  std::map<std::string, std::deque<Open>> messages_;
  std::map<std::string, Open> executions_;         // open, by execution id
  std::map<std::string, std::string> agent_call_;  // a subagent's agent id -> its AgentTool execution id
  // Ended executions' spans, for calls that name them as parent (bounded).
  std::map<std::string, TelemetrySpan> ended_;
  std::deque<std::string> ended_order_;
};

}  // namespace odin
