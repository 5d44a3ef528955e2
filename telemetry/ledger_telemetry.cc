#include "telemetry/ledger_telemetry.h"

#include <chrono>

#include "tools/tool_catalog.h"

namespace odin {
namespace {

constexpr size_t kEndedKept = 4096;

const TelemetryInstrument kSessions{"odin.session.count", "{session}", "Sessions started",
                                    TelemetryInstrument::Kind::kIntSum};
const TelemetryInstrument kTokens{"odin.token.usage", "{token}", "Tokens used, by type and model",
                                  TelemetryInstrument::Kind::kIntSum};
const TelemetryInstrument kCost{"odin.cost.usage", "USD", "What the model calls cost",
                                TelemetryInstrument::Kind::kDoubleSum};
const TelemetryInstrument kModelCalls{"odin.model.calls", "{call}", "Model calls, by model and status",
                                      TelemetryInstrument::Kind::kIntSum};
const TelemetryInstrument kModelDuration{"odin.model.duration", "ms", "Model call durations",
                                         TelemetryInstrument::Kind::kHistogram};
const TelemetryInstrument kToolCalls{"odin.tool.calls", "{call}", "Tool calls, by tool and status",
                                     TelemetryInstrument::Kind::kIntSum};
const TelemetryInstrument kToolDuration{"odin.tool.duration", "ms", "Tool call durations",
                                        TelemetryInstrument::Kind::kHistogram};
const TelemetryInstrument kValidations{"odin.validation.count", "{validation}", "Validations, by verdict",
                                       TelemetryInstrument::Kind::kIntSum};
const TelemetryInstrument kGateEvents{"odin.gate.events", "{event}", "Gate decisions, by kind",
                                      TelemetryInstrument::Kind::kIntSum};

int64_t Ns(int64_t ms) { return ms * 1000000; }

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Letters, digits and a few marks, at most max bytes; else what.
std::string Plain(const std::string& s, size_t max, const std::string& what) {
  if (s.empty() || s.size() > max) return what;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
              c == '.' || c == ':' || c == '/' || c == '@';
    if (!ok) return what;
  }
  return s;
}

// Odin's own tool names; an MCP tool's once it ran (gate 1 rejects a name
// no server has before anything runs) and if it is a plain one; else
// "other" (a name the model made up is its words, not a tool: it could
// spell out a secret).
std::string ToolName(const std::string& tool, bool ran) {
  if (FindTool(tool) != nullptr) return tool;
  if (ran && tool.rfind(kMcpToolPrefix, 0) == 0) return Plain(tool, 128, "mcp__other");
  return tool.rfind(kMcpToolPrefix, 0) == 0 ? "mcp__other" : "other";
}

// Statuses, modes, kinds: short plain words.
std::string Word(const std::string& s) { return Plain(s, 32, "other"); }

bool Failed(const std::string& status) { return status != "ok" && status != "clean"; }

}  // namespace

LedgerTelemetry::~LedgerTelemetry() {
  int64_t now = NowMs();
  for (auto& [id, open] : executions_) {
    open.span.attributes.push_back({"odin.tool.name", ToolName(open.tool, false)});
    open.span.attributes.push_back({"odin.unfinished", true});
    open.span.end_unix_ns = std::max(open.span.start_unix_ns, Ns(now));
    sink_->Emit(std::move(open.span));
  }
  for (auto& [key, queue] : messages_) {
    for (Open& open : queue) {
      open.span.end_unix_ns = std::max(open.span.start_unix_ns, Ns(now));
      open.span.attributes.push_back({"odin.unfinished", true});
      sink_->Emit(std::move(open.span));
    }
  }
  for (auto& [id, open] : sessions_) {
    open.span.end_unix_ns = Ns(now);
    sink_->Emit(std::move(open.span));
  }
}

LedgerTelemetry::Open& LedgerTelemetry::SessionSpan(const std::string& session_id, int64_t at_ms) {
  auto [it, fresh] = sessions_.try_emplace(session_id);
  if (fresh) {
    TelemetrySpan& s = it->second.span;
    s.trace_id = NewTraceId();
    s.span_id = NewSpanId();
    s.name = "odin.session";
    s.start_unix_ns = Ns(at_ms);
    s.end_unix_ns = Ns(at_ms);
    s.attributes = {{"odin.session.id", Plain(session_id, 64, "other")}};
  }
  return it->second;
}

const TelemetrySpan& LedgerTelemetry::ParentOf(const std::string& session_id, const std::string& agent_id,
                                               int64_t at_ms) {
  Open& session = SessionSpan(session_id, at_ms);
  if (auto m = messages_.find(session_id + '\n' + agent_id); m != messages_.end() && !m->second.empty()) {
    return m->second.front().span;
  }
  if (auto a = agent_call_.find(agent_id); a != agent_call_.end()) {
    if (auto e = executions_.find(a->second); e != executions_.end()) return e->second.span;
  }
  // A subagent heard of before its first call (its first model call): the
  // session's one running subagent call, if there is exactly one.
  if (agent_id != "main" && agent_id != "user") {
    const TelemetrySpan* only = nullptr;
    int running = 0;
    for (const auto& [id, e] : executions_) {
      if (e.tool == "AgentTool" && e.span.trace_id == session.span.trace_id && ++running == 1) only = &e.span;
    }
    if (running == 1) return *only;
  }
  return session.span;
}

void LedgerTelemetry::OnSession(const SessionRecord& r) {
  Open& s = SessionSpan(r.id, r.created_at_ms);
  s.span.attributes.push_back({"odin.session.kind", Word(r.kind)});
  sink_->Measure(kSessions, {{"odin.session.kind", Word(r.kind)}}, 1);
}

void LedgerTelemetry::OnMessage(const MessageRecord& m) {
  std::string key = m.session_id + '\n' + m.agent_id;
  std::deque<Open>& queue = messages_[key];
  if (m.role == "user") {
    // Recorded when sent: a message sent while another runs waits behind it
    // (its span starts when the one before it ends), under the same parent.
    Open open;
    const TelemetrySpan& parent =
        queue.empty() ? ParentOf(m.session_id, m.agent_id, m.created_at_ms) : SessionSpan(m.session_id, 0).span;
    open.span.trace_id = parent.trace_id;
    open.span.span_id = NewSpanId();
    open.span.parent_span_id = queue.empty() ? parent.span_id : queue.front().span.parent_span_id;
    open.span.name = "odin.message";
    open.span.start_unix_ns = Ns(m.created_at_ms);
    open.span.attributes = {{"odin.message.id", Plain(m.id, 64, "other")},
                            {"odin.agent.id", Plain(m.agent_id, 64, "other")},
                            {"odin.mode", Word(m.mode)}};
    if (queue.size() < 64) queue.push_back(std::move(open));
    return;
  }
  if (queue.empty()) {
    messages_.erase(key);
    return;
  }
  Open open = std::move(queue.front());
  queue.pop_front();
  if (!queue.empty()) {
    queue.front().span.start_unix_ns = std::max(queue.front().span.start_unix_ns, Ns(m.created_at_ms));
  } else {
    messages_.erase(key);
  }
  open.span.attributes.push_back({"odin.message.status", Word(m.status)});
  open.span.error = m.status == "error";
  End(std::move(open), m.created_at_ms);
}

void LedgerTelemetry::OnLlmCall(const LlmCallRecord& c) {
  const TelemetrySpan& parent = ParentOf(c.session_id, c.agent_id, c.started_at_ms);
  TelemetrySpan s;
  s.trace_id = parent.trace_id;
  s.span_id = NewSpanId();
  s.parent_span_id = parent.span_id;
  s.name = "odin.model_call";
  s.client = true;
  s.start_unix_ns = Ns(c.started_at_ms);
  s.end_unix_ns = s.start_unix_ns + c.duration_us * 1000;
  std::string model = Plain(c.model, 128, "other"), status = Word(c.status);
  s.attributes = {{"gen_ai.system", Word(c.provider)},
                  {"gen_ai.request.model", model},
                  {"gen_ai.usage.input_tokens", c.input_tokens},
                  {"gen_ai.usage.output_tokens", c.output_tokens},
                  {"odin.usage.cache_read_tokens", c.cache_read_tokens},
                  {"odin.usage.cache_write_tokens", c.cache_write_tokens},
                  {"odin.model.role", Word(c.role)},
                  {"odin.model.status", status},
                  {"odin.model.attempts", c.attempts},
                  {"odin.agent.id", Plain(c.agent_id, 64, "other")}};
  if (c.cost_microusd >= 0) s.attributes.push_back({"odin.cost_usd", static_cast<double>(c.cost_microusd) / 1e6});
  s.error = Failed(c.status);
  sink_->Emit(std::move(s));
  for (auto [type, n] : {std::pair<const char*, int64_t>{"input", c.input_tokens},
                         {"output", c.output_tokens},
                         {"cache_read", c.cache_read_tokens},
                         {"cache_write", c.cache_write_tokens}}) {
    if (n > 0) sink_->Measure(kTokens, {{"type", std::string(type)}, {"model", model}}, static_cast<double>(n));
  }
  if (c.cost_microusd > 0) sink_->Measure(kCost, {{"model", model}}, static_cast<double>(c.cost_microusd) / 1e6);
  sink_->Measure(kModelCalls, {{"model", model}, {"status", status}}, 1);
  sink_->Measure(kModelDuration, {{"model", model}}, static_cast<double>(c.duration_us) / 1000);
}

void LedgerTelemetry::OnExecutionStart(const ExecutionStart& r) {
  const TelemetrySpan* parent = nullptr;
  if (!r.parent_id.empty()) {
    if (auto e = executions_.find(r.parent_id); e != executions_.end()) parent = &e->second.span;
    if (auto e = ended_.find(r.parent_id); parent == nullptr && e != ended_.end()) parent = &e->second;
    // A subagent's calls name its AgentTool call: so do its model calls.
    if (auto e = executions_.find(r.parent_id); e != executions_.end() && e->second.tool == "AgentTool") {
      agent_call_[r.agent_id] = r.parent_id;
    }
  }
  if (parent == nullptr) parent = &ParentOf(r.session_id, r.agent_id, r.started_at_ms);
  Open open;
  open.tool = r.tool;
  open.span.trace_id = parent->trace_id;
  open.span.span_id = NewSpanId();
  open.span.parent_span_id = parent->span_id;
  open.span.name = open.tool == "lsp_check"   ? "odin.validation"
                   : open.tool == "AgentTool" ? "odin.subagent"
                                              : "odin.tool_call";
  open.span.start_unix_ns = Ns(r.started_at_ms);
  open.span.end_unix_ns = open.span.start_unix_ns;
  open.span.attributes = {{"odin.execution.id", Plain(r.execution_id, 64, "other")},
                          {"odin.agent.id", Plain(r.agent_id, 64, "other")},
                          {"odin.mode", Word(r.mode)}};
  executions_[r.execution_id] = std::move(open);
}

void LedgerTelemetry::OnExecutionEnd(const ExecutionEnd& r, const ValidationRecord* v) {
  auto it = executions_.find(r.execution_id);
  if (it == executions_.end()) return;
  Open open = std::move(it->second);
  executions_.erase(it);
  std::string status = Word(r.status);
  std::string tool = ToolName(open.tool, status != "rejected");
  open.span.attributes.push_back({"odin.tool.name", tool});
  open.span.attributes.push_back({"odin.tool.status", status});
  if (r.exit_code) open.span.attributes.push_back({"odin.exit_code", static_cast<int64_t>(*r.exit_code)});
  if (v != nullptr) {
    open.span.attributes.push_back({"odin.validation.status", Word(v->status)});
    open.span.attributes.push_back({"odin.validation.new_errors", v->new_errors});
    open.span.attributes.push_back({"odin.validation.validator", Plain(v->validator, 64, "other")});
    sink_->Measure(kValidations, {{"status", Word(v->status)}}, 1);
  }
  open.span.error = Failed(r.status);
  sink_->Measure(kToolCalls, {{"tool", tool}, {"status", status}}, 1);
  sink_->Measure(kToolDuration, {{"tool", tool}}, static_cast<double>(r.duration_us) / 1000);
  if (open.tool == "AgentTool") {
    for (auto a = agent_call_.begin(); a != agent_call_.end();) {
      a = a->second == r.execution_id ? agent_call_.erase(a) : std::next(a);
    }
  }
  ended_[r.execution_id] = open.span;
  ended_order_.push_back(r.execution_id);
  if (ended_order_.size() > kEndedKept) {
    ended_.erase(ended_order_.front());
    ended_order_.pop_front();
  }
  End(std::move(open), r.finished_at_ms);
}

void LedgerTelemetry::OnGateEvent(const GateEvent& g) { sink_->Measure(kGateEvents, {{"kind", Word(g.kind)}}, 1); }

void LedgerTelemetry::End(Open open, int64_t end_ms) {
  open.span.end_unix_ns = std::max(open.span.start_unix_ns, Ns(end_ms));
  sink_->Emit(std::move(open.span));
}

}  // namespace odin
