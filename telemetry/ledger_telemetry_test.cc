#include "telemetry/ledger_telemetry.h"

#include <algorithm>

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
    // A name no MCP server has, made up to spell a secret: refused, never sent.
    t.OnExecutionStart({"ex_m", "ses_1", "main", "mcp__x__" + secret, "{}", "edit", "", 1042, ""});
    t.OnExecutionEnd({"ex_m", "rejected", std::nullopt, "normal", 1042, 0, "", "", 0, "", ""}, nullptr);
    // An MCP tool that ran keeps its name.
    t.OnExecutionStart({"ex_e", "ses_1", "main", "mcp__everything__echo", "{}", "edit", "w_5", 1043, ""});
    t.OnExecutionEnd({"ex_e", "ok", std::nullopt, "normal", 1044, 10, "", "", 0, "", ""}, nullptr);
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
  EXPECT_DOUBLE_EQ(rec.measures["odin.tool.calls"], 7);
  EXPECT_TRUE(std::find(rec.values.begin(), rec.values.end(), "mcp__everything__echo") != rec.values.end());
  EXPECT_TRUE(std::find(rec.values.begin(), rec.values.end(), "mcp__other") != rec.values.end());
  EXPECT_DOUBLE_EQ(rec.measures["odin.validation.count"], 1);
  for (const std::string& v : rec.values) EXPECT_EQ(v.find(secret), std::string::npos) << v;
}

// A message sent while another runs waits behind it: the first's calls go
// under the first, its span starts when the first ends. A subagent's model
// call before its first tool call goes under its AgentTool call.
TEST(LedgerTelemetryTest, AQueuedMessageStartsWhenTheOneBeforeItEnds) {
  Recorder rec;
  {
    LedgerTelemetry t(&rec);
    t.OnMessage({"msg_1", "ses_1", "main", "user", "edit", "", "queued", 1000});
    t.OnMessage({"msg_2", "ses_1", "main", "user", "edit", "", "queued", 1005});
    t.OnExecutionStart({"ex_a", "ses_1", "main", "AgentTool", "{}", "edit", "w_1", 1010, ""});
    t.OnLlmCall({"llm_1", "ses_1", "sub_9", "planner", "openai", "m", 1011, 1000, 1, 1, 0, 0, 0, "ok", 1, ""});
    t.OnExecutionEnd({"ex_a", "ok", std::nullopt, "normal", 1020, 10, "", "", 0, "", ""}, nullptr);
    t.OnMessage({"msg_3", "ses_1", "main", "assistant", "edit", "", "done", 1030});
    t.OnMessage({"msg_4", "ses_1", "main", "assistant", "edit", "", "done", 1050});
  }
  std::map<std::string, const TelemetrySpan*> by_id;
  for (const TelemetrySpan& s : rec.spans) {
    std::string text = Text(s.attributes);
    size_t at = text.find("odin.message.id=");
    if (at != std::string::npos) by_id[text.substr(at + 16, 5)] = &s;
  }
  ASSERT_TRUE(by_id.count("msg_1") && by_id.count("msg_2"));
  EXPECT_EQ(by_id["msg_1"]->end_unix_ns, 1030 * 1000000LL);
  EXPECT_EQ(by_id["msg_2"]->start_unix_ns, 1030 * 1000000LL);
  EXPECT_EQ(by_id["msg_2"]->end_unix_ns, 1050 * 1000000LL);
  EXPECT_EQ(by_id["msg_2"]->parent_span_id, by_id["msg_1"]->parent_span_id);
  const TelemetrySpan* subagent = rec.Named("odin.subagent");
  const TelemetrySpan* model = rec.Named("odin.model_call");
  ASSERT_TRUE(subagent && model);
  EXPECT_EQ(subagent->parent_span_id, by_id["msg_1"]->span_id);
  EXPECT_EQ(model->parent_span_id, subagent->span_id);
}

}  // namespace
}  // namespace odin
