#include "llm/llm_wire.h"

#include <cstring>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace odin {
namespace {

using nlohmann::json;

ChatRequest Conversation() {
  ChatRequest r;
  r.model = "m";
  r.system = "be good";
  r.messages = {{ChatMessage::Role::kUser, "fix it", {}, {}},
                {ChatMessage::Role::kAssistant, "reading", {{"c1", "Read", R"({"file_path":"a"})"}}, {}},
                {ChatMessage::Role::kToolResults, "", {}, {{"c1", "{\"status\":\"ok\"}", false}}},
                {ChatMessage::Role::kUser, "and then?", {}, {}}};
  r.tools = {{"Read", "reads", R"({"type":"object"})"}};
  return r;
}

// Feeds SSE text to a decoder and returns the response.
ChatResponse Decode(const WireFormat& f, const std::string& sse, std::string* streamed = nullptr) {
  auto d = f.NewDecoder();
  std::string text;
  SseParser p([&](const SseEvent& e) { EXPECT_TRUE(d->OnEvent(e, [&](const std::string& t) { text += t; }).ok()); });
  p.Feed(sse);
  if (streamed != nullptr) *streamed = text;
  return d->Response();
}

TEST(LlmWireTest, OpenAiRequestShape) {
  ProviderEndpoint ep{"openai", "http://h/v1", "k"};
  HttpRequest h = NewOpenAiFormat()->Build(Conversation(), ep, true);
  EXPECT_EQ(h.url, "http://h/v1/chat/completions");
  EXPECT_NE(std::find(h.headers.begin(), h.headers.end(), "Authorization: Bearer k"), h.headers.end());
  json b = json::parse(h.body);
  EXPECT_EQ(b["stream"], true);
  ASSERT_EQ(b["messages"].size(), 5u);
  EXPECT_EQ(b["messages"][0]["role"], "system");
  EXPECT_EQ(b["messages"][2]["tool_calls"][0]["function"]["arguments"], R"({"file_path":"a"})");
  EXPECT_EQ(b["messages"][3]["role"], "tool");
  EXPECT_EQ(b["messages"][3]["tool_call_id"], "c1");
  EXPECT_EQ(b["tools"][0]["function"]["name"], "Read");
}

// A temperature (an attempt's variant) goes in every provider's body; none
// set, none sent (the provider's default).
TEST(LlmWireTest, ATemperatureIsSentOnlyWhenSet) {
  ProviderEndpoint ep{"openai", "http://h/v1", "k"};
  std::vector<std::unique_ptr<WireFormat>> formats;
  formats.push_back(NewOpenAiFormat());
  formats.push_back(NewAnthropicFormat());
  formats.push_back(NewOpenAiResponsesFormat());
  for (const auto& f : formats) {
    ChatRequest r = Conversation();
    EXPECT_FALSE(json::parse(f->Build(r, ep, true).body).contains("temperature"));
    r.temperature = 0.7;
    EXPECT_EQ(json::parse(f->Build(r, ep, true).body)["temperature"], 0.7);
    r.temperature = 0;
    EXPECT_EQ(json::parse(f->Build(r, ep, true).body)["temperature"], 0);
  }
}

// The answer's schema: OpenAI's response_format, Anthropic's forced tool
// call; neither without extras (for a server that refused them).
TEST(LlmWireTest, TheAnswersSchemaGoesInTheProvidersFormOnlyWithExtras) {
  ChatRequest r = Conversation();
  r.tools.clear();
  r.answer_schema_json = R"({"type":"object","properties":{"done":{"type":"array"}}})";
  r.answer_name = "handoff_note";
  json o = json::parse(NewOpenAiFormat()->Build(r, {"openai", "http://h/v1", ""}, true).body);
  EXPECT_EQ(o["response_format"]["type"], "json_schema");
  EXPECT_EQ(o["response_format"]["json_schema"]["name"], "handoff_note");
  EXPECT_EQ(o["response_format"]["json_schema"]["schema"]["properties"]["done"]["type"], "array");
  EXPECT_FALSE(o.contains("tools"));
  json a = json::parse(NewAnthropicFormat()->Build(r, {"anthropic", "http://h", ""}, true).body);
  ASSERT_EQ(a["tools"].size(), 1u);
  EXPECT_EQ(a["tools"][0]["name"], "handoff_note");
  EXPECT_EQ(a["tools"][0]["input_schema"]["type"], "object");
  EXPECT_EQ(a["tool_choice"], json({{"type", "tool"}, {"name", "handoff_note"}}));
  json o2 = json::parse(NewOpenAiFormat()->Build(r, {"openai", "http://h/v1", ""}, false).body);
  EXPECT_FALSE(o2.contains("response_format"));
  json a2 = json::parse(NewAnthropicFormat()->Build(r, {"anthropic", "http://h", ""}, false).body);
  EXPECT_FALSE(a2.contains("tool_choice"));
  EXPECT_FALSE(a2.contains("tools"));
  // Refusals that name such a field, and only those, say to drop them.
  EXPECT_TRUE(
      IsExtraFieldRefusal(400, R"({"error":{"message":"Unrecognized request argument supplied: response_format"}})"));
  EXPECT_TRUE(
      IsExtraFieldRefusal(422, R"({"detail":[{"loc":["body","tool_choice"],"msg":"extra fields not permitted"}]})"));
  EXPECT_FALSE(IsExtraFieldRefusal(400, R"({"error":{"message":"bad model"}})"));
  EXPECT_FALSE(IsExtraFieldRefusal(500, R"({"error":{"message":"response_format broke"}})"));
}

// The per-turn facts go after the conversation, and with prompt caching on
// Anthropic gets breakpoints after the tools, the system prompt and the
// conversation (not the facts), OpenAI the session's cache key: everything
// before the facts is the same bytes from one turn to the next.
TEST(LlmWireTest, TheTailComesLastAndTheCacheFieldsOnlyWhereAsked) {
  ChatRequest r = Conversation();
  r.messages.pop_back();  // ends with the tool's result
  r.tail = "[runtime] budget: 3 turns left";
  r.cache_key = "ses_1/main";
  ProviderEndpoint oa{"openai", "http://h/v1", "", true};
  json o = json::parse(NewOpenAiFormat()->Build(r, oa, true).body);
  EXPECT_EQ(o["messages"].back(), json({{"role", "user"}, {"content", "[runtime] budget: 3 turns left"}}));
  EXPECT_EQ(o["messages"][o["messages"].size() - 2]["role"], "tool");
  EXPECT_EQ(o["prompt_cache_key"], "ses_1/main");
  ProviderEndpoint an{"anthropic", "http://h", "", true};
  json a = json::parse(NewAnthropicFormat()->Build(r, an, true).body);
  EXPECT_EQ(a["system"][0]["text"], "be good");
  EXPECT_EQ(a["system"][0]["cache_control"]["type"], "ephemeral");
  EXPECT_EQ(a["tools"].back()["cache_control"]["type"], "ephemeral");
  const json& last = a["messages"].back()["content"];
  ASSERT_EQ(last.size(), 2u);  // the tool's result, then the facts
  EXPECT_EQ(last[0]["type"], "tool_result");
  EXPECT_EQ(last[0]["cache_control"]["type"], "ephemeral");
  EXPECT_EQ(last[1]["text"], "[runtime] budget: 3 turns left");
  EXPECT_FALSE(last[1].contains("cache_control"));
  // Not asked (an endpoint not known to take them), or refused: none.
  for (bool extras : {true, false}) {
    ProviderEndpoint plain_oa{"openai", "http://h/v1", "", !extras};
    ProviderEndpoint plain_an{"anthropic", "http://h", "", !extras};
    json o2 = json::parse(NewOpenAiFormat()->Build(r, plain_oa, extras).body);
    json a2 = json::parse(NewAnthropicFormat()->Build(r, plain_an, extras).body);
    EXPECT_FALSE(o2.contains("prompt_cache_key"));
    EXPECT_EQ(a2["system"], "be good");
    EXPECT_EQ(a2.dump().find("cache_control"), std::string::npos);
    EXPECT_EQ(o2["messages"].back()["content"], "[runtime] budget: 3 turns left");  // the tail all the same
  }
  EXPECT_TRUE(HasExtraFields(r, an));
  EXPECT_TRUE(HasExtraFields(r, oa));
  EXPECT_FALSE(HasExtraFields(r, {"openai", "http://h/v1", "", false}));
  EXPECT_TRUE(
      IsExtraFieldRefusal(400, R"({"error":{"message":"Unrecognized request argument supplied: prompt_cache_key"}})"));
}

TEST(LlmWireTest, AnthropicRequestShapeMergesConsecutiveUserContent) {
  ProviderEndpoint ep{"anthropic", "http://h", "k"};
  HttpRequest h = NewAnthropicFormat()->Build(Conversation(), ep, true);
  EXPECT_EQ(h.url, "http://h/v1/messages");
  EXPECT_NE(std::find(h.headers.begin(), h.headers.end(), "x-api-key: k"), h.headers.end());
  json b = json::parse(h.body);
  EXPECT_EQ(b["system"], "be good");
  ASSERT_EQ(b["messages"].size(), 3u);  // user, assistant, user (tool result + text)
  EXPECT_EQ(b["messages"][1]["content"][1]["type"], "tool_use");
  EXPECT_EQ(b["messages"][1]["content"][1]["input"]["file_path"], "a");
  EXPECT_EQ(b["messages"][2]["content"][0]["type"], "tool_result");
  EXPECT_EQ(b["messages"][2]["content"][1]["text"], "and then?");
}

TEST(LlmWireTest, AnthropicGetsAnObjectForMalformedArguments) {
  ChatRequest r = Conversation();
  r.messages[1].tool_calls[0].arguments_json = "{oops";
  json b = json::parse(NewAnthropicFormat()->Build(r, {"anthropic", "http://h", ""}, true).body);
  EXPECT_TRUE(b["messages"][1]["content"][1]["input"].is_object());
}

TEST(LlmWireTest, OpenAiStreamAssemblesTextToolCallsAndUsage) {
  std::string sse =
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n"
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"}}]}\n\n"
      "data: "
      "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":{\"name\":\"Read\","
      "\"arguments\":\"{\\\"fi\"}}]}}]}\n\n"
      "data: "
      "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"le_path\\\":1}"
      "\"}}]}}]}\n\n"
      "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n"
      "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":3}}\n\n"
      "data: [DONE]\n\n";
  std::string streamed;
  ChatResponse r = Decode(*NewOpenAiFormat(), sse, &streamed);
  EXPECT_EQ(streamed, "Hello");
  EXPECT_EQ(r.text, "Hello");
  ASSERT_EQ(r.tool_calls.size(), 1u);
  EXPECT_EQ(r.tool_calls[0].id, "c");
  EXPECT_EQ(r.tool_calls[0].arguments_json, R"({"file_path":1})");
  EXPECT_EQ(r.usage.input_tokens, 12);
  EXPECT_EQ(r.usage.output_tokens, 3);
  EXPECT_FALSE(r.truncated);
}

TEST(LlmWireTest, OpenAiStreamWithoutEndIsTruncated) {
  ChatResponse r = Decode(*NewOpenAiFormat(), "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n");
  EXPECT_TRUE(r.truncated);
}

TEST(LlmWireTest, AnthropicStreamAssemblesBlocks) {
  std::string sse =
      "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":7}}}\n\n"
      "event: content_block_start\ndata: "
      "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\"}}\n\n"
      "event: content_block_delta\ndata: "
      "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"ok\"}}\n\n"
      "event: content_block_start\ndata: "
      "{\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":"
      "\"LS\"}}\n\n"
      "event: content_block_delta\ndata: "
      "{\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{"
      "\\\"path\\\":\\\".\\\"}\"}}\n\n"
      "event: message_delta\ndata: "
      "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":4}}\n\n"
      "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
  ChatResponse r = Decode(*NewAnthropicFormat(), sse);
  EXPECT_EQ(r.text, "ok");
  ASSERT_EQ(r.tool_calls.size(), 1u);
  EXPECT_EQ(r.tool_calls[0].name, "LS");
  EXPECT_EQ(r.tool_calls[0].arguments_json, R"({"path":"."})");
  EXPECT_EQ(r.usage.input_tokens, 7);
  EXPECT_EQ(r.usage.output_tokens, 4);
  EXPECT_EQ(r.stop_reason, "tool_use");
  EXPECT_FALSE(r.truncated);
}

// The providers' cache counters, as their APIs send them: OpenAI counts the
// cached tokens inside prompt_tokens; Anthropic's input_tokens leaves out
// what was read from or written to the cache. Either way input_tokens is
// then the whole request's, and the cache fields say how much of it was
// which.
TEST(LlmWireTest, CacheReadsAndWritesAreCountedInBothFormats) {
  ChatResponse o =
      Decode(*NewOpenAiFormat(),
             "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"},\"finish_reason\":\"stop\"}]}\n\n"
             "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":2006,\"completion_tokens\":300,"
             "\"prompt_tokens_details\":{\"cached_tokens\":1920}}}\n\n"
             "data: [DONE]\n\n");
  EXPECT_EQ(o.usage.input_tokens, 2006);
  EXPECT_EQ(o.usage.cache_read_tokens, 1920);
  EXPECT_EQ(o.usage.cache_write_tokens, 0);
  std::string sse =
      "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":21,"
      "\"cache_creation_input_tokens\":188,\"cache_read_input_tokens\":2000,\"output_tokens\":1}}}\n\n"
      "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},"
      "\"usage\":{\"output_tokens\":40}}\n\n"
      "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
  ChatResponse a = Decode(*NewAnthropicFormat(), sse);
  EXPECT_EQ(a.usage.input_tokens, 21 + 188 + 2000);
  EXPECT_EQ(a.usage.cache_read_tokens, 2000);
  EXPECT_EQ(a.usage.cache_write_tokens, 188);
  EXPECT_EQ(a.usage.output_tokens, 40);
}

// A model without a price costs -1 (unknown), never 0; the cache's tokens
// are priced at their own rates, or at the input price when none is given.
TEST(LlmWireTest, CacheTokensArePricedAtTheirOwnRates) {
  LlmUsage u{1'000'000, 100'000, 600'000, 200'000};
  PriceTable prices = {{"m", {3.0, 15.0, 0.3, 3.75}}, {"plain", {3.0, 15.0, std::nullopt, std::nullopt}}};
  // 200k uncached x 3 + 600k x 0.3 + 200k x 3.75 + 100k x 15, in micro-dollars.
  EXPECT_EQ(CostMicroUsd(prices, "m", u), 600'000 + 180'000 + 750'000 + 1'500'000);
  EXPECT_EQ(CostMicroUsd(prices, "plain", u), 3'000'000 + 1'500'000);
  EXPECT_EQ(CostMicroUsd(prices, "other", u), -1);
  prices["*"] = {1.0, 1.0, std::nullopt, std::nullopt};
  EXPECT_EQ(CostMicroUsd(prices, "other", u), 1'100'000);
}

TEST(LlmWireTest, OddJsonFromTheServerIsAnErrorNotACrash) {
  auto d = NewAnthropicFormat()->NewDecoder();
  // Nullable counters are fine.
  EXPECT_TRUE(
      d->OnEvent(
           {"",
            R"({"type":"message_start","message":{"usage":{"input_tokens":5,"cache_creation_input_tokens":null}}})"},
           nullptr)
          .ok());
  EXPECT_EQ(d->Response().usage.input_tokens, 5);
  EXPECT_TRUE(d->OnEvent({"", R"({"type":"message_delta","delta":null,"usage":null})"}, nullptr).ok());
  auto o = NewOpenAiFormat()->NewDecoder();
  EXPECT_TRUE(
      o->OnEvent(
           {"", R"({"choices":[{"delta":{"tool_calls":[{"function":{"name":"A"}},{"function":{"name":"B"}}]}}]})"},
           nullptr)
          .ok());
  EXPECT_EQ(o->Response().tool_calls.size(), 2u);  // no index: two calls, not one "AB"
  EXPECT_TRUE(
      o->OnEvent({"", R"({"choices":[{"delta":{"content":null}}],"usage":{"prompt_tokens":"many"}})"}, nullptr).ok());
}

TEST(LlmWireTest, ErrorEventsAndBodies) {
  auto d = NewAnthropicFormat()->NewDecoder();
  Status s = d->OnEvent({"error", R"({"type":"error","error":{"type":"overloaded_error","message":"busy"}})"}, nullptr);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_EQ(ErrorMessageFromBody(R"({"error":{"message":"bad key"}})"), "bad key");
  EXPECT_EQ(ErrorMessageFromBody("plain\ntext"), "plain text");
}

// A model can send tool arguments nested 60,000 deep: they go back to it in
// the next request without being copied or serialized as a value, and stream
// events nested that deep are an error, not a crash.
TEST(LlmWireTest, DeepJsonFromTheModelIsNeverSerialized) {
  std::string deep = std::string(60000, '[') + std::string(60000, ']');
  ChatRequest r = Conversation();
  r.messages[1].tool_calls[0].arguments_json = "{\"command\":" + deep + "}";
  json a = json::parse(NewAnthropicFormat()->Build(r, {"anthropic", "http://h", ""}, true).body);
  EXPECT_EQ(a["messages"][1]["content"][1]["input"], json::object());
  json o = json::parse(NewOpenAiFormat()->Build(r, {"openai", "http://h", ""}, true).body);
  EXPECT_EQ(o["messages"][2]["tool_calls"][0]["function"]["arguments"], r.messages[1].tool_calls[0].arguments_json);
  for (const auto& format : {NewOpenAiFormat(), NewAnthropicFormat()}) {
    auto d = format->NewDecoder();
    Status s = d->OnEvent({"error", "{\"type\":\"error\",\"error\":" + deep + "}"}, nullptr);
    EXPECT_EQ(s.code(), StatusCode::kUnavailable);
    EXPECT_NE(s.message().find("nested more than 64 levels deep"), std::string::npos) << s.message();
  }
}

}  // namespace
}  // namespace odin

namespace odin {
namespace {

TEST(LlmWireTest, ContextOverflowIsRecognisedInBothFormats) {
  EXPECT_TRUE(IsContextOverflowResponse(
      400,
      R"({"error":{"message":"This model's maximum context length is 16000 tokens. However, your messages )"
      R"(resulted in 17000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}})"));
  EXPECT_TRUE(IsContextOverflowResponse(400, R"({"error":{"message":"maximum context length exceeded","code":null}})"));
  EXPECT_TRUE(IsContextOverflowResponse(
      400,
      R"({"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208897 tokens > 200000 maximum"}})"));
  EXPECT_TRUE(IsContextOverflowResponse(413, "request entity too large"));
  // Other refusals are not.
  EXPECT_FALSE(IsContextOverflowResponse(400, R"({"error":{"message":"invalid model","code":"model_not_found"}})"));
  EXPECT_FALSE(IsContextOverflowResponse(429, R"({"error":{"message":"maximum context length"}})"));
  EXPECT_FALSE(IsContextOverflowResponse(400, "not json at all"));
}

}  // namespace
}  // namespace odin

namespace odin {
namespace {

// An SSE event of the Responses API: its type as the event name and in the data.
std::string ResponsesEvent(const std::string& type, nlohmann::json data) {
  data["type"] = type;
  return "event: " + type + "\ndata: " + data.dump() + "\n\n";
}

// The Responses API's stream as OpenAI sends it for a reasoning model that
// thinks, says something and calls a function: the reasoning item is kept
// whole (to give back), the text streams, the call's arguments are the
// done event's, the usage and its cached tokens are read.
TEST(LlmWireTest, ResponsesStreamAssemblesReasoningTextCallsAndUsage) {
  using nlohmann::json;
  std::string sse =
      ResponsesEvent("response.created", {{"response", {{"id", "resp_1"}, {"status", "in_progress"}}}}) +
      ResponsesEvent("response.output_item.added",
                     {{"output_index", 0}, {"item", {{"type", "reasoning"}, {"id", "rs_1"}}}}) +
      ResponsesEvent("response.output_item.done", {{"output_index", 0},
                                                   {"item",
                                                    {{"type", "reasoning"},
                                                     {"id", "rs_1"},
                                                     {"summary", json::array()},
                                                     {"encrypted_content", "gAAA"},
                                                     {"status", "completed"}}}}) +
      ResponsesEvent("response.output_item.added",
                     {{"output_index", 1}, {"item", {{"type", "message"}, {"id", "m"}}}}) +
      ResponsesEvent("response.output_text.delta", {{"output_index", 1}, {"delta", "Look"}}) +
      ResponsesEvent("response.output_text.delta", {{"output_index", 1}, {"delta", "ing."}}) +
      ResponsesEvent(
          "response.output_item.added",
          {{"output_index", 2},
           {"item",
            {{"type", "function_call"}, {"id", "fc_1"}, {"call_id", "call_9"}, {"name", "Read"}, {"arguments", ""}}}}) +
      ResponsesEvent("response.function_call_arguments.delta", {{"output_index", 2}, {"delta", "{\"file_"}}) +
      ResponsesEvent("response.function_call_arguments.delta", {{"output_index", 2}, {"delta", "path\":\"a\"}"}}) +
      ResponsesEvent("response.function_call_arguments.done",
                     {{"output_index", 2}, {"arguments", "{\"file_path\":\"a\"}"}}) +
      ResponsesEvent(
          "response.completed",
          {{"response",
            {{"status", "completed"},
             {"usage",
              {{"input_tokens", 900}, {"input_tokens_details", {{"cached_tokens", 768}}}, {"output_tokens", 40}}}}}});
  std::string streamed;
  ChatResponse r = Decode(*NewOpenAiResponsesFormat(), sse, &streamed);
  EXPECT_EQ(streamed, "Looking.");
  EXPECT_EQ(r.text, "Looking.");
  ASSERT_EQ(r.tool_calls.size(), 1u);
  EXPECT_EQ(r.tool_calls[0].id, "call_9");
  EXPECT_EQ(r.tool_calls[0].name, "Read");
  EXPECT_EQ(r.tool_calls[0].arguments_json, R"({"file_path":"a"})");
  ASSERT_EQ(r.reasoning.size(), 1u);
  json item = json::parse(r.reasoning[0]);
  EXPECT_EQ(item["encrypted_content"], "gAAA");
  EXPECT_EQ(item["id"], "rs_1");
  EXPECT_FALSE(item.contains("status"));
  EXPECT_EQ(r.usage.input_tokens, 900);
  EXPECT_EQ(r.usage.cache_read_tokens, 768);
  EXPECT_EQ(r.usage.output_tokens, 40);
  EXPECT_EQ(r.stop_reason, "tool_calls");
  EXPECT_FALSE(r.truncated);
}

TEST(LlmWireTest, ResponsesStreamEndsCutShortFailedOrIncomplete) {
  using nlohmann::json;
  // No response.completed: cut off.
  ChatResponse cut = Decode(*NewOpenAiResponsesFormat(),
                            ResponsesEvent("response.output_text.delta", {{"output_index", 0}, {"delta", "Hi"}}));
  EXPECT_TRUE(cut.truncated);
  // Out of output tokens: ended, as Chat Completions' "length".
  ChatResponse incomplete = Decode(
      *NewOpenAiResponsesFormat(),
      ResponsesEvent(
          "response.incomplete",
          {{"response", {{"status", "incomplete"}, {"incomplete_details", {{"reason", "max_output_tokens"}}}}}}));
  EXPECT_FALSE(incomplete.truncated);
  EXPECT_EQ(incomplete.stop_reason, "length");
  // A failure is an error naming the server's message.
  auto d = NewOpenAiResponsesFormat()->NewDecoder();
  Status failed = d->OnEvent(
      {"response.failed",
       ResponsesEvent("response.failed", {{"response", {{"error", {{"code", "server_error"}, {"message", "boom"}}}}}})
           .substr(strlen("event: response.failed\ndata: "))},
      nullptr);
  EXPECT_FALSE(failed.ok());
  EXPECT_NE(failed.message().find("boom"), std::string::npos) << failed.ToString();
  // Odd JSON is an error, not a crash.
  EXPECT_TRUE(d->OnEvent({"", R"({"type":"response.output_item.done","item":null})"}, nullptr).ok());
  EXPECT_TRUE(d->OnEvent({"", R"({"type":"response.completed","response":[1]})"}, nullptr).ok());
}

// The request: the system prompt as instructions, the conversation as
// input items (reasoning given back before the calls it led to, results as
// function_call_output), nothing stored, encrypted reasoning asked for.
TEST(LlmWireTest, ResponsesRequestCarriesTheConversationAsItems) {
  using nlohmann::json;
  ChatRequest req;
  req.model = "o4-mini";
  req.system = "be brief";
  ChatMessage user{ChatMessage::Role::kUser, "hi", {}, {}};
  ChatMessage assistant{ChatMessage::Role::kAssistant, "reading", {{"call_1", "Read", R"({"file_path":"a"})"}}, {}};
  assistant.reasoning = {R"({"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAA"})"};
  ChatMessage results{ChatMessage::Role::kToolResults, "", {}, {{"call_1", "{\"ok\":true}", false}}};
  req.messages = {user, assistant, results};
  req.tools = {{"Read", "read a file", R"({"type":"object"})"}};
  req.tail = "facts";
  req.max_tokens = 100;
  HttpRequest http = NewOpenAiResponsesFormat()->Build(req, {"openai-responses", "https://x/v1", "k", false}, true);
  EXPECT_EQ(http.url, "https://x/v1/responses");
  json b = json::parse(http.body);
  EXPECT_EQ(b["instructions"], "be brief");
  EXPECT_EQ(b["store"], false);
  EXPECT_EQ(b["include"], json({"reasoning.encrypted_content"}));
  EXPECT_EQ(b["max_output_tokens"], 100);
  EXPECT_FALSE(b.contains("previous_response_id"));
  ASSERT_EQ(b["input"].size(), 6u) << b["input"].dump();
  EXPECT_EQ(b["input"][0], json({{"role", "user"}, {"content", "hi"}}));
  EXPECT_EQ(b["input"][1]["type"], "reasoning");
  EXPECT_EQ(b["input"][1]["encrypted_content"], "gAAA");
  EXPECT_EQ(b["input"][2], json({{"role", "assistant"}, {"content", "reading"}}));
  EXPECT_EQ(
      b["input"][3],
      json(
          {{"type", "function_call"}, {"call_id", "call_1"}, {"name", "Read"}, {"arguments", R"({"file_path":"a"})"}}));
  EXPECT_EQ(b["input"][4],
            json({{"type", "function_call_output"}, {"call_id", "call_1"}, {"output", "{\"ok\":true}"}}));
  EXPECT_EQ(b["input"][5], json({{"role", "user"}, {"content", "facts"}}));
  EXPECT_EQ(b["tools"][0]["name"], "Read");
  EXPECT_EQ(b["tools"][0]["type"], "function");
}

}  // namespace
}  // namespace odin

namespace odin {
namespace {

// A sloppy or hostile Responses server: events without output_index keep
// their calls apart by item id; an arguments.done without arguments keeps
// what streamed; a reasoning item without its encrypted content is not kept
// (given back under store: false, the server would refuse every later
// request naming it).
TEST(LlmWireTest, ResponsesStreamFromASloppyServer) {
  using nlohmann::json;
  std::string sse =
      ResponsesEvent("response.output_item.added",
                     {{"item", {{"type", "function_call"}, {"id", "fc_a"}, {"call_id", "A"}, {"name", "Read"}}}}) +
      ResponsesEvent("response.output_item.added",
                     {{"item", {{"type", "function_call"}, {"id", "fc_b"}, {"call_id", "B"}, {"name", "LS"}}}}) +
      ResponsesEvent("response.function_call_arguments.delta",
                     {{"item_id", "fc_a"}, {"delta", "{\"file_path\":\"a\"}"}}) +
      ResponsesEvent("response.function_call_arguments.delta", {{"item_id", "fc_b"}, {"delta", "{\"path\":\".\"}"}}) +
      ResponsesEvent("response.function_call_arguments.done", {{"item_id", "fc_a"}}) +
      ResponsesEvent("response.function_call_arguments.done", {{"item_id", "fc_b"}, {"arguments", nullptr}}) +
      ResponsesEvent("response.output_item.done",
                     {{"output_index", 7}, {"item", {{"type", "reasoning"}, {"id", "rs_x"}, {"summary", "odd"}}}}) +
      ResponsesEvent("response.output_item.done",
                     {{"output_index", 8},
                      {"item", {{"type", "reasoning"}, {"id", 5}, {"summary", 3}, {"encrypted_content", "gB"}}}}) +
      ResponsesEvent("response.completed", {{"response", {{"status", "completed"}}}});
  ChatResponse r = Decode(*NewOpenAiResponsesFormat(), sse);
  ASSERT_EQ(r.tool_calls.size(), 2u);
  EXPECT_EQ(r.tool_calls[0].id, "A");
  EXPECT_EQ(r.tool_calls[0].name, "Read");
  EXPECT_EQ(r.tool_calls[0].arguments_json, R"({"file_path":"a"})");
  EXPECT_EQ(r.tool_calls[1].id, "B");
  EXPECT_EQ(r.tool_calls[1].arguments_json, R"({"path":"."})");
  ASSERT_EQ(r.reasoning.size(), 1u);
  json kept = json::parse(r.reasoning[0]);
  EXPECT_EQ(kept["encrypted_content"], "gB");
  EXPECT_EQ(kept["summary"], json::array());
  EXPECT_FALSE(kept.contains("id"));  // not a string: left out
}

}  // namespace
}  // namespace odin
