#include "telemetry/ledger_telemetry.h"

#include <gtest/gtest.h>

namespace odin {
namespace {

class Recorder : public TelemetrySink {
 public:
  void Emit(TelemetrySpan span) override { spans.push_back(std::move(span)); }
  void Measure(const TelemetryInstrument& instrument, const TelemetryAttributes& attributes, double value) override {
    measures[instrument.name] += value;
    for (const TelemetryAttribute& a : attributes) values.push_back(std::get<std::string>(a.value));
  }
  const TelemetrySpan* Named(const std::string& name) const {
    for (const TelemetrySpan& s : spans) {
      if (s.name == name) return &s;
    }
    return nullptr;
  }
  std::vector<TelemetrySpan> spans;
  std::map<std::string, double> measures;
  std::vector<std::string> values;
};

std::string Text(const TelemetryAttributes& attributes) {
  std::string out;
  for (const TelemetryAttribute& a : attributes) {
    out += a.key + "=";
    if (const std::string* s = std::get_if<std::string>(&a.value)) out += *s;
    out += ";";
  }
  return out;
}

// A session's message, model call, tool call, validation and subagent
// become one trace of nested spans; nothing the model or the tools said
// reaches an attribute.
TEST(LedgerTelemetryTest, ASessionIsOneTraceOfNestedSpansWithoutItsWords) {
  const std::string secret = "sk-live-SECRET-1234";
  Recorder rec;
  {
    LedgerTelemetry t(&rec);
    t.OnSession({"ses_1", "agent", "/work/ws", 1000});
    t.OnMessage({"msg_1", "ses_1", "main", "user", "edit", "fix it, key " + secret, "queued", 1001});
    t.OnLlmCall({"llm_1", "ses_1", "main", "planner", "openai", "gpt-x", 1002, 3000, 100, 20, 0, 0, 1500, "ok", 1, ""});
    t.OnExecutionStart(
        {"ex_w", "ses_1", "main", "EditTool", "{\"new_string\":\"" + secret + "\"}", "edit", "w_1", 1010, ""});
    t.OnExecutionEnd({"ex_w", "ok", std::nullopt, "normal", 1020, 10000, secret, secret, 10, secret, secret}, nullptr);
    t.OnExecutionStart(
        {"ex_v", "ses_1", "main", "lsp_check", "{\"path\":\"/work/ws/" + secret + "\"}", "edit", "w_2", 1021, "ex_w"});
    ValidationRecord v;
    v.status = "errors";
    v.validator = "clangd";
    v.new_errors = 2;
    v.path = "/work/ws/" + secret;
    v.summary = secret;
    t.OnExecutionEnd({"ex_v", "ok", std::nullopt, "normal", 1030, 9000, "", "", 0, "", ""}, &v);
    t.OnExecutionStart({"ex_a", "ses_1", "main", "AgentTool", "{}", "edit", "w_3", 1031, ""});
    t.OnExecutionStart({"ex_r", "ses_1", "sub_1", "Read", "{}", "ask", "w_4", 1032, "ex_a"});
    t.OnLlmCall(
        {"llm_2", "ses_1", "sub_1", "planner", "openai", "gpt-x", 1033, 1000, 10, 2, 0, 0, -1, "error", 3, secret});
    t.OnExecutionEnd({"ex_r", "ok", std::nullopt, "normal", 1034, 100, "", "", 0, "", ""}, nullptr);
    t.OnExecutionEnd({"ex_a", "ok", std::nullopt, "normal", 1040, 9000, "", "", 0, "", ""}, nullptr);
    t.OnExecutionStart({"ex_x", "ses_1", "main", "made_up_" + secret, "{}", "edit", "", 1041, ""});
    t.OnExecutionEnd({"ex_x", "rejected", std::nullopt, "normal", 1041, 0, "", "", 0, secret, ""}, nullptr);
    t.OnMessage({"msg_2", "ses_1", "main", "assistant", "edit", "done " + secret, "done", 1050});
  }
  const TelemetrySpan* session = rec.Named("odin.session");
  const TelemetrySpan* message = rec.Named("odin.message");
  const TelemetrySpan* subagent = rec.Named("odin.subagent");
  const TelemetrySpan* validation = rec.Named("odin.validation");
  ASSERT_TRUE(session && message && subagent && validation);
  EXPECT_EQ(message->parent_span_id, session->span_id);
  EXPECT_EQ(message->end_unix_ns, 1050 * 1000000LL);
  int model_calls = 0;
  for (const TelemetrySpan& s : rec.spans) {
    EXPECT_EQ(s.trace_id, session->trace_id) << s.name;
    std::string all = Text(s.attributes) + s.name;
    EXPECT_EQ(all.find(secret), std::string::npos) << all;
    EXPECT_EQ(all.find("/work/ws"), std::string::npos) << all;
    std::string tool = all.substr(all.find("odin.tool.name=") == std::string::npos ? 0 : all.find("odin.tool.name="));
    if (s.name == "odin.model_call") {
      ++model_calls;
      // The subagent's model call goes under its AgentTool call.
      bool sub = Text(s.attributes).find("odin.agent.id=sub_1") != std::string::npos;
      EXPECT_EQ(s.parent_span_id, sub ? subagent->span_id : message->span_id);
      EXPECT_EQ(s.error, sub);
    }
    if (Text(s.attributes).find("odin.tool.name=Read") != std::string::npos) {
      EXPECT_EQ(s.parent_span_id, subagent->span_id);
    }
    if (Text(s.attributes).find("odin.tool.name=other") != std::string::npos) {
      EXPECT_TRUE(s.error);  // the rejected call of a tool the model made up
    }
  }
  EXPECT_EQ(model_calls, 2);
  EXPECT_NE(Text(validation->attributes).find("odin.validation.status=errors"), std::string::npos);
  EXPECT_NE(Text(validation->attributes).find("odin.validation.validator=clangd"), std::string::npos);
  EXPECT_DOUBLE_EQ(rec.measures["odin.token.usage"], 132);
  EXPECT_DOUBLE_EQ(rec.measures["odin.cost.usage"], 0.0015);
  EXPECT_DOUBLE_EQ(rec.measures["odin.tool.calls"], 5);
  EXPECT_DOUBLE_EQ(rec.measures["odin.validation.count"], 1);
  for (const std::string& v : rec.values) EXPECT_EQ(v.find(secret), std::string::npos) << v;
}

}  // namespace
}  // namespace odin
