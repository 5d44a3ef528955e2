#include "session/session_events.h"

#include <ostream>

#include <nlohmann/json.hpp>

#include "base/canonical_json.h"
#include "base/clock.h"
#include "base/json_input.h"
#include "base/money.h"
#include "base/terminal_text.h"
#include "ledger/ledger.h"
#include "llm/retry_policy.h"
#include "planner/run_outcome.h"
#include "tools/tool_catalog.h"
#include "odin/v1/worker.pb.h"
#include "tools/tool_result.h"

namespace odin {
namespace {

using nlohmann::json;

std::string Json(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// What a ToolCallFinished carries of a call's changes, at most.
constexpr size_t kMaxEventDiffBytes = 256u << 10;
constexpr int kMaxEventChangedPaths = 100;

// Null when no call had a price (unknown, not $0); else the priced calls'.
json CostUsd(const MessageOutcome& o) {
  if (CostUnknown(o.llm_calls, o.unpriced_calls)) return json();
  return static_cast<double>(o.cost_microusd) / 1e6;
}

json UsageJson(const MessageOutcome& o) {
  // input_tokens counts the cache's tokens too; Claude Code's names for
  // how many of them were read from the prompt cache and written to it.
  return {{"llm_calls", o.llm_calls},
          {"input_tokens", o.usage.input_tokens},
          {"output_tokens", o.usage.output_tokens},
          {"cache_read_input_tokens", o.usage.cache_read_tokens},
          {"cache_creation_input_tokens", o.usage.cache_write_tokens},
          {"cost_usd", CostUsd(o)},
          {"unpriced_calls", o.unpriced_calls}};
}

json BudgetJson(const MessageOutcome& o) {
  const BudgetLimits& l = o.budget_limits;
  const BudgetUse& u = o.budget_used;
  auto limit = [](int64_t v) { return v > 0 ? json(v) : json(); };
  json j = {
      {"used",
       {{"turns", u.turns},
        {"tool_calls", u.tool_calls},
        {"tokens", u.tokens},
        {"cost_usd", static_cast<double>(u.cost_microusd) / 1e6},
        {"wall_seconds", static_cast<double>(ToMillis(u.wall)) / 1000.0}}},
      {"limits",
       {{"turns", limit(l.turns)},
        {"tool_calls", limit(l.tool_calls)},
        {"tokens", limit(l.tokens)},
        {"cost_usd", l.cost_microusd > 0 ? json(static_cast<double>(l.cost_microusd) / 1e6) : json()},
        {"wall_seconds", l.wall > Duration::zero() ? json(static_cast<double>(ToMillis(l.wall)) / 1000.0) : json()}}}};
  if (!o.budget_limit.empty()) j["exceeded"] = o.budget_limit;
  return j;
}

json BreakersJson(const std::vector<BreakerInfo>& breakers) {
  json out = json::array();
  for (const BreakerInfo& b : breakers) {
    json j = {{"name", b.name}, {"state", BreakerStateName(b.state)}, {"consecutive_failures", b.consecutive_failures}};
    if (!b.last_failure.empty()) j["last_failure"] = b.last_failure;
    if (b.state == BreakerState::kOpen) j["reopens_in_ms"] = b.reopens_in_ms;
    out.push_back(j);
  }
  return out;
}

// Claude Code's result subtype for an outcome (docs/commands.md has the table).
std::string ClaudeSubtype(const MessageOutcome& o) {
  if (o.status == "done") return "success";
  if (o.status == "budget_exceeded" && o.budget_limit == "turns") return "error_max_turns";
  if (o.status == "budget_exceeded" && o.budget_limit == "cost") return "error_max_budget_usd";
  if (o.status == "invalid_output") return "error_max_structured_output_retries";
  return "error_during_execution";
}

json OutcomeObject(const MessageOutcome& o, const std::string& session_id, const std::vector<BreakerInfo>& breakers) {
  json j = {{"type", "result"},
            // Claude Code's fields, for scripts written against `claude -p`.
            {"subtype", ClaudeSubtype(o)},
            {"is_error", o.status != "done"},
            {"num_turns", o.turns},
            {"duration_ms", ToMillis(o.budget_used.wall)},
            {"total_cost_usd", CostUsd(o)},
            {"status", o.status},
            {"result", o.status == "error" ? std::string() : o.text},
            {"session_id", session_id},
            {"message_id", o.message_id},
            {"mode", ModeName(o.mode)},
            {"turns", o.turns},
            {"execution_ids", o.execution_ids},
            {"changed_files", o.changed_files},
            {"usage", UsageJson(o)},
            {"budget", BudgetJson(o)},
            {"breakers", BreakersJson(breakers)}};
  if (!o.error.ok()) j["error"] = o.error.message();
  // --json-schema: the answer as a value (Claude Code's field).
  if (!o.structured_output.empty() && o.status == "done") {
    json value = ParseJson(o.structured_output);
    if (!value.is_discarded()) j["structured_output"] = value;
  }
  json report = ParseJson(o.report_json);
  if (!report.is_discarded()) j["report"] = report;
  return j;
}

}  // namespace

std::string ToolResultLine(const std::string& tool, const v1::ToolResult& r) {
  std::string detail = ToolSummary(tool, r);
  if (detail.size() > 160) detail = detail.substr(0, 157) + "...";
  return ToolStatusName(r.status()) + (detail.empty() ? "" : " · " + detail);
}

namespace {}  // namespace

EventRecorder::EventRecorder(std::string session_id, Sink sink, std::function<std::vector<BreakerInfo>()> breakers)
    : session_id_(std::move(session_id)), sink_(std::move(sink)), breakers_(std::move(breakers)) {}

v1::SessionEvent EventRecorder::Next() {
  v1::SessionEvent e;
  e.set_session_id(session_id_);
  e.set_message_id(message_id_);
  e.set_time_unix_ms(RealClock::Get()->WallMillis());
  return e;
}

void EventRecorder::Emit(v1::SessionEvent e) {
  e.set_seq(++seq_);
  sink_(std::move(e));
}

void EventRecorder::OnMessageStart(const std::string& message_id, const std::string& text, Mode mode) {
  message_id_ = message_id;
  v1::SessionEvent e = Next();
  e.mutable_message_started()->set_text(text);
  e.mutable_message_started()->set_mode(ModeName(mode));
  Emit(std::move(e));
}

void EventRecorder::OnTextDelta(const std::string& text) {
  v1::SessionEvent e = Next();
  e.mutable_text_delta()->set_text(text);
  Emit(std::move(e));
}

void EventRecorder::OnToolStart(const std::string& execution_id, const ToolCallRequest& call) {
  v1::SessionEvent e = Next();
  v1::ToolCallStarted* s = e.mutable_tool_call_started();
  s->set_execution_id(execution_id);
  s->set_tool(call.name);
  s->set_arguments_json(call.arguments_json);
  Emit(std::move(e));
}

void EventRecorder::OnToolProgress(const v1::ToolProgress& p) {
  if (!p.has_mcp_progress()) return;  // command output is not an event
  v1::SessionEvent e = Next();
  v1::ToolCallProgress* out = e.mutable_tool_progress();
  out->set_execution_id(p.execution_id());
  out->set_progress(p.mcp_progress().progress());
  out->set_total(p.mcp_progress().total());
  out->set_message(p.mcp_progress().message());
  Emit(std::move(e));
}

void EventRecorder::OnToolEnd(const std::string& execution_id, const std::string& tool, const v1::ToolResult& r) {
  v1::SessionEvent e = Next();
  v1::ToolCallFinished* f = e.mutable_tool_call_finished();
  f->set_execution_id(execution_id);
  f->set_tool(tool);
  f->set_status(ToolStatusName(r.status()));
  f->set_summary(ToolResultLine(tool, r));
  if (r.has_exit_code()) f->set_exit_code(r.exit_code());
  if (r.has_verdict()) {
    f->set_validation(r.verdict().status());
    f->set_new_diagnostics(r.verdict().summary());
  }
  if (r.has_file_written() && IsValidUtf8(r.file_written().path())) {
    f->add_changed_paths(r.file_written().path());
    f->set_sha256_after(r.file_written().sha256());
    f->set_created(r.sha256_before().empty());
    if (r.diff().size() <= kMaxEventDiffBytes) f->set_diff(r.diff());
  }
  for (const v1::FileChange& c : r.changes()) {
    if (f->changed_paths_size() >= kMaxEventChangedPaths) break;
    if (IsValidUtf8(c.path())) f->add_changed_paths(c.path());
  }
  Emit(std::move(e));
}

void EventRecorder::OnLlmCall(const LlmCallRecord& c) {
  v1::SessionEvent e = Next();
  v1::LlmCallFinished* l = e.mutable_llm_call();
  l->set_model(c.model);
  l->set_status(c.status);
  l->set_input_tokens(c.input_tokens);
  l->set_output_tokens(c.output_tokens);
  l->set_duration_ms(static_cast<double>(c.duration_us) / 1000.0);
  l->set_attempts(c.attempts);
  Emit(std::move(e));
}

void EventRecorder::OnMessageDone(const MessageOutcome& o) {
  last_outcome_ = o;
  v1::SessionEvent e = Next();
  e.set_message_id(o.message_id);
  v1::MessageFinished* f = e.mutable_message_finished();
  f->set_status(o.status);
  f->set_exit_code(ExitCodeOfStatus(o.status));
  f->set_text(o.text);
  f->set_report_text(o.report_text);
  f->set_result_json(OutcomeJson(o, session_id_, breakers_ ? breakers_() : std::vector<BreakerInfo>{}));
  if (!o.error.ok()) f->set_error(o.error.message());
  message_id_.clear();
  Emit(std::move(e));
}

void EventRecorder::OnGateEvent(const GateEvent& g) {
  v1::SessionEvent e = Next();
  if (!g.message_id.empty()) e.set_message_id(g.message_id);
  v1::GateEventOccurred* o = e.mutable_gate_event();
  o->set_kind(g.kind);
  o->set_execution_id(g.execution_id);
  o->set_detail_json(g.detail_json);
  Emit(std::move(e));
}

void EventRecorder::OnLlmRetry(const LlmRetry& r) {
  v1::SessionEvent e = Next();
  if (!message_id_.empty()) e.set_message_id(message_id_);
  v1::GateEventOccurred* o = e.mutable_gate_event();
  o->set_kind("model_retry");
  o->set_detail_json(Json({{"next_attempt", r.next_attempt},
                           {"max_attempts", r.max_attempts},
                           {"delay_ms", r.delay_ms},
                           {"http_status", r.http_status},
                           {"why", r.why}}));
  Emit(std::move(e));
}

void EventRecorder::OnApprovalRequest(const ApprovalRequest& a) {
  v1::SessionEvent e = Next();
  v1::ApprovalRequested* r = e.mutable_approval_requested();
  r->set_execution_id(a.execution_id);
  r->set_agent_id(a.agent_id);
  r->set_what(a.command);
  r->set_reason(a.reason);
  r->set_saved_key(a.saved_key);
  Emit(std::move(e));
}

void EventRecorder::OnApprovalResolved(const std::string& execution_id, const std::string& answer) {
  v1::SessionEvent e = Next();
  e.mutable_approval_resolved()->set_execution_id(execution_id);
  e.mutable_approval_resolved()->set_answer(answer);
  Emit(std::move(e));
}

void EventRecorder::OnSessionEnded(const std::string& reason) {
  v1::SessionEvent e = Next();
  e.mutable_session_ended()->set_reason(reason);
  Emit(std::move(e));
}

int ExitCodeOfStatus(const std::string& status) {
  std::optional<RunOutcome> o = ParseRunOutcome(status);
  return ExitCode(o.value_or(RunOutcome::kError));
}

std::string OutcomeJson(const MessageOutcome& o, const std::string& session_id,
                        const std::vector<BreakerInfo>& breakers) {
  return Json(OutcomeObject(o, session_id, breakers));
}

std::string SessionStartJson(const std::string& session_id, const std::string& provider, const std::string& model,
                             const std::string& workspace) {
  return Json({{"type", "session_start"},
               {"session_id", session_id},
               {"provider", provider},
               {"model", model},
               {"workspace", workspace}});
}

namespace {

// The stream-json line of an event; "" for none.
std::string StreamJsonLine(const v1::SessionEvent& e) {
  switch (e.kind_case()) {
    case v1::SessionEvent::kMessageStarted:
      return Json({{"type", "message_start"}, {"message_id", e.message_id()}, {"mode", e.message_started().mode()}});
    case v1::SessionEvent::kTextDelta: return Json({{"type", "text_delta"}, {"text", e.text_delta().text()}});
    case v1::SessionEvent::kToolCallStarted: {
      const v1::ToolCallStarted& s = e.tool_call_started();
      // The model's arguments as it sent them: a value if they are one, else
      // (malformed, or too deep to serialize) the text.
      json args = JsonTooDeep(s.arguments_json()) ? json(json::value_t::discarded) : ParseJson(s.arguments_json());
      return Json({{"type", "tool_call_start"},
                   {"execution_id", s.execution_id()},
                   {"tool", s.tool()},
                   {"arguments", args.is_discarded() ? json(s.arguments_json()) : args}});
    }
    case v1::SessionEvent::kToolCallFinished: {
      const v1::ToolCallFinished& f = e.tool_call_finished();
      json j = {{"type", "tool_call_end"},
                {"execution_id", f.execution_id()},
                {"tool", f.tool()},
                {"status", f.status()},
                {"summary", f.summary()}};
      if (f.has_exit_code()) j["exit_code"] = f.exit_code();
      if (!f.validation().empty()) j["validation"] = f.validation();
      return Json(j);
    }
    case v1::SessionEvent::kGateEvent: {
      const v1::GateEventOccurred& g = e.gate_event();
      json detail = ParseJson(g.detail_json());
      json j = {{"type", "gate_event"},
                {"kind", g.kind()},
                {"detail", detail.is_discarded() ? json(g.detail_json()) : detail}};
      if (!g.execution_id().empty()) j["execution_id"] = g.execution_id();
      return Json(j);
    }
    case v1::SessionEvent::kApprovalRequested: {
      const v1::ApprovalRequested& a = e.approval_requested();
      return Json({{"type", "approval_request"},
                   {"execution_id", a.execution_id()},
                   {"agent_id", a.agent_id()},
                   {"what", a.what()},
                   {"reason", a.reason()}});
    }
    case v1::SessionEvent::kApprovalResolved:
      return Json({{"type", "approval_resolved"},
                   {"execution_id", e.approval_resolved().execution_id()},
                   {"answer", e.approval_resolved().answer()}});
    case v1::SessionEvent::kLlmCall: {
      const v1::LlmCallFinished& c = e.llm_call();
      return Json({{"type", "llm_call"},
                   {"model", c.model()},
                   {"status", c.status()},
                   {"input_tokens", c.input_tokens()},
                   {"output_tokens", c.output_tokens()},
                   {"duration_ms", c.duration_ms()},
                   {"attempts", c.attempts()}});
    }
    case v1::SessionEvent::kMessageFinished: return e.message_finished().result_json();
    case v1::SessionEvent::kSessionEnded:
      return Json({{"type", "session_end"}, {"reason", e.session_ended().reason()}});
    case v1::SessionEvent::kToolProgress: {
      const v1::ToolCallProgress& p = e.tool_progress();
      json j = {{"type", "tool_progress"}, {"execution_id", p.execution_id()}, {"progress", p.progress()}};
      if (p.total() > 0) j["total"] = p.total();
      if (!p.message().empty()) j["message"] = p.message();
      return Json(j);
    }
    case v1::SessionEvent::KIND_NOT_SET: break;
  }
  return "";
}

}  // namespace

void PrintPromptEvent(const v1::SessionEvent& e, const std::string& format, std::ostream& out, std::ostream& err) {
  if (format == "stream-json") {
    std::string line = StreamJsonLine(e);
    if (!line.empty()) out << line << "\n" << std::flush;
    return;
  }
  // A retry the user is waiting on is said as it happens.
  if (e.has_gate_event() && e.gate_event().kind() == "model_retry") {
    json d = ParseJson(e.gate_event().detail_json());
    if (d.is_object()) {
      err << "odin: "
          << RetryNotice(d.value("http_status", 0), d.value("why", ""), d.value("delay_ms", int64_t{0}),
                         d.value("next_attempt", 0), d.value("max_attempts", 0))
          << "\n"
          << std::flush;
    }
    return;
  }
  if (!e.has_message_finished()) return;
  const v1::MessageFinished& f = e.message_finished();
  if (format == "json") {
    out << f.result_json() << "\n";
    return;
  }
  // The model's own words, labelled as such; then the ledger's report.
  // A run that ended in an error has no result: what the model last said
  // (its claim) is not shown as one.
  // Someone else's bytes (the model's words, paths and names in the report,
  // an error quoting them): shown, never obeyed by the terminal.
  if (!f.text().empty() && f.status() != "error") {
    std::string text = VisibleControls(f.text());
    out << "Model's explanation (its own words; the report below is from the ledger):\n" << text;
    if (text.back() != '\n') out << "\n";
    out << "\n";
  }
  out << VisibleControls(f.report_text());
  // A ledger that could not record was said once, as it happened.
  bool said = f.status() == "error" && LedgerFailureShown(f.error());
  if (f.status() != "done" && !said) {
    err << "odin: " << f.status() << (f.error().empty() ? "" : ": " + VisibleControls(f.error())) << "\n";
  }
}

}  // namespace odin
