// fake_llm_server: a scriptable model server for tests and benchmarks. It
// speaks the wire formats Odin uses, streamed as server-sent events:
// OpenAI Chat Completions (POST /v1/chat/completions), OpenAI Responses
// (POST /v1/responses) and Anthropic Messages (POST /v1/messages).
//
// Responses: "reasoning": "TEXT" in a scripted answer adds a reasoning item
// before its text and calls, whose encrypted_content is TEXT (what a model
// that reasons sends with store: false and include
// reasoning.encrypted_content; the client must give it back). Routing by
// agent, "when" and "@last_execution_id" read Chat Completions' messages
// only; "by_system" reads Responses' instructions too.
//
// Usage: fake_llm_server --script FILE [--log FILE]
// Prints "PORT=<n>" once it listens on 127.0.0.1, then answers each request
// with the next scripted response:
//
//   {"responses": [
//     {"text": "hello", "tool_calls": [{"name": "Read", "arguments": {"file_path": "a"}}],
//      "usage": {"input": 10, "output": 5}},
//     {"tool_calls": [{"name": "EditTool", "arguments_raw": "{not json"}]},
//     {"status": 429, "headers": {"Retry-After": "0"}, "body": "{\"error\":{\"message\":\"slow down\"}}"},
//     {"status": 500, "repeat": 10},
//     {"text": "cut", "truncate": true},
//     {"text": "late", "delay_ms": 200},
//     {"text": "when told", "hold_until": "/tmp/dir/go"},
//     {"status": 200, "body": "{\"not\": \"a stream\"}"},
//     {"text": "partial", "error_after_text": true}
//   ]}
//
// Requests of subagents running in parallel arrive in no fixed order, so a
// script may also route by conversation: "agents" maps a KEY to a list of
// responses for requests whose first user message contains KEY (the
// subagent's prompt), or failing that a later one (a copy of a
// conversation given a task of its own: an attempt), taken in order; such
// requests never use "responses".
// An entry {"when": "TEXT", "then": [...]} is replaced by its "then" list if
// the request's last message contains TEXT, and dropped if not:
//
//   {"responses": [...], "agents": {"task A": [{"tool_calls": [...]},
//                                   {"when": "changed since", "then": [...]},
//                                   {"text": "A done"}]}}
//
// "hold_until" holds the answer until the test creates that file (checked
// every 10 ms, for at most a minute): the test decides when it arrives.
//
// "context_window": N makes the server count each request's tokens (its
// body's bytes / 4) and refuse one of more than N with the provider's real
// error (OpenAI: 400, code context_length_exceeded; Anthropic: 400, "prompt
// is too long"), consuming no scripted response; answers then report the
// count as their input tokens unless they script "usage". "by_system" maps a
// TEXT to a response given to every request whose system prompt contains
// TEXT (a utility model's summary requests), also consuming nothing; a
// list there instead is taken in order (with "repeat" as above), its last
// entry answering every request after it (reviewers' verdicts in turn).
//
// "refuse_fields": ["response_format", ...] answers a request whose body
// has a field of that name (at any depth: "cache_control" is on blocks)
// with a 400 naming it, as OpenAI does for an argument it does not know
// (and vLLM or llama.cpp for structured output), consuming nothing; the log
// gets {"n": -1, "refused_field": NAME}.
//
// "prompt_cache": true makes the server a provider with a prompt cache:
// each request is rendered as the provider reads it (tools, system prompt,
// messages, each as JSON without cache_control fields), its tokens counted
// as bytes / 4, and the leading bytes it shares with one of the last 16
// requests count as read from the cache (bytes / 4 again; no minimum
// length, no 128-token steps). OpenAI reports them as
// prompt_tokens_details.cached_tokens, for every request; Anthropic as
// cache_read_input_tokens, only for requests with a cache_control
// breakpoint, whose other tokens all count as written to the cache
// (cache_creation_input_tokens). Scripted "usage" is used as it is.
//
// After the script: a plain "(script exhausted)" answer. The log gets one JSON
// line per request ({"n", "t_ns", "path", "body"}) and one per finished answer
// ({"n", "answered_ns"}), times from CLOCK_MONOTONIC.

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <deque>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <iostream>
#include <mutex>
#include <thread>

#include <httplib.h>
#include <nlohmann/json.hpp>

using nlohmann::json;

namespace {

int64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::mutex g_mu;
std::vector<json> g_script;  // expanded: one entry per request
size_t g_next = 0;
size_t g_routed = 0;
std::map<std::string, std::deque<json>> g_agents;  // KEY -> responses left
int64_t g_context_window = 0;                      // tokens; 0: no limit
bool g_prompt_cache = false;
std::deque<std::string> g_rendered;                         // the last requests as rendered for the prompt cache
json g_refuse_fields = json::array();                       // top-level fields answered with a 400
json g_by_system = json::object();                          // TEXT -> response
std::map<std::string, std::deque<json>> g_by_system_lists;  // TEXT -> responses left (the last stays)

// The text of a message in either wire format (content as a string, or as
// blocks with text or tool results).
std::string MessageText(const json& m) {
  if (!m.is_object() || !m.contains("content")) return "";
  const json& c = m["content"];
  if (c.is_string()) return c.get<std::string>();
  return c.dump();
}

// The system prompt of a request in either wire format.
std::string SystemText(const json& body) {
  if (!body.is_object()) return "";
  if (body.contains("system")) {
    return body["system"].is_string() ? body["system"].get<std::string>() : body["system"].dump();
  }
  if (body.contains("instructions") && body["instructions"].is_string()) return body["instructions"].get<std::string>();
  if (body.contains("messages") && body["messages"].is_array() && !body["messages"].empty() &&
      body["messages"][0].value("role", "") == "system") {
    return MessageText(body["messages"][0]);
  }
  return "";
}

// A request as a provider's prompt cache sees it, in the order the model
// reads it, without the cache_control markers (which move from one block
// to the next between requests and are not content).
void StripCacheControl(json* j) {
  if (j->is_object()) {
    j->erase("cache_control");
    for (auto& [k, v] : j->items()) StripCacheControl(&v);
  } else if (j->is_array()) {
    for (json& v : *j) StripCacheControl(&v);
  }
}
std::string RenderForCache(json body) {
  if (!body.is_object()) return "";
  StripCacheControl(&body);
  std::string out = body.value("tools", json::array()).dump();
  if (body.contains("system")) out += body["system"].dump();
  if (body.contains("instructions")) out += body["instructions"].dump();
  for (const json& m : body.value("messages", json::array())) out += m.dump();
  for (const json& m : body.value("input", json::array())) out += m.dump();
  return out;
}

// The bytes of rendered that one of the last requests began with too.
// REQUIRES: g_mu held.
size_t CachedBytes(const std::string& rendered) {
  size_t best = 0;
  for (const std::string& before : g_rendered) {
    size_t n = 0, end = std::min(before.size(), rendered.size());
    while (n < end && before[n] == rendered[n]) ++n;
    best = std::max(best, n);
  }
  g_rendered.push_back(rendered);
  if (g_rendered.size() > 16) g_rendered.pop_front();
  return best;
}

// The response for a request from a routed conversation, if it is one.
// REQUIRES: g_mu held.
std::optional<json> RouteByAgent(const json& body) {
  if (!body.is_object() || !body.contains("messages") || !body["messages"].is_array()) return std::nullopt;
  std::string first, last;
  std::vector<std::string> later;  // the other user messages, in order
  for (const json& m : body["messages"]) {
    if (m.value("role", "") != "user") continue;
    if (first.empty()) {
      first = MessageText(m);
    } else {
      later.push_back(MessageText(m));
    }
  }
  // The conversation's last message: not the per-turn facts Odin sends
  // after it (a user message of their own on OpenAI's wire).
  for (auto m = body["messages"].rbegin(); m != body["messages"].rend(); ++m) {
    last = MessageText(*m);
    if (last.rfind("[runtime] This turn's state, from Odin:", 0) != 0) break;
  }
  // By the first user message; else (a copy of a conversation given a new
  // task: an attempt forked from a session) by the first later one that
  // names a key.
  std::deque<json>* queue_of = nullptr;
  std::string routed;
  for (auto& [key, queue] : g_agents) {
    if (first.find(key) != std::string::npos) {
      queue_of = &queue;
      routed = key;
      break;
    }
  }
  for (size_t i = 0; queue_of == nullptr && i < later.size(); ++i) {
    for (auto& [key, queue] : g_agents) {
      if (later[i].find(key) == std::string::npos) continue;
      queue_of = &queue;
      routed = key;
      break;
    }
  }
  if (queue_of != nullptr) {
    const std::string& key = routed;
    std::deque<json>& queue = *queue_of;
    while (!queue.empty()) {
      json r = queue.front();
      queue.pop_front();
      if (!r.contains("when")) return r;
      if (last.find(r["when"].get<std::string>()) == std::string::npos) continue;
      const json& then = r["then"];
      for (auto it = then.rbegin(); it != then.rend(); ++it) queue.push_front(*it);
    }
    return json{{"text", "(script exhausted for " + key + ")"}};
  }
  return std::nullopt;
}
std::ofstream g_log;

void Log(const json& line) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_log.is_open()) g_log << line.dump() << "\n" << std::flush;
}

std::string Event(const std::string& event, const json& data) {
  std::string out;
  if (!event.empty()) out += "event: " + event + "\n";
  return out + "data: " + data.dump() + "\n\n";
}

// Arguments as the model would stream them: split in two pieces.
std::pair<std::string, std::string> ArgumentPieces(const json& call) {
  std::string args = call.contains("arguments_raw") ? call["arguments_raw"].get<std::string>()
                                                    : call.value("arguments", json::object()).dump();
  size_t half = args.size() / 2;
  return {args.substr(0, half), args.substr(half)};
}

std::vector<std::string> OpenAiEvents(const json& r) {
  std::vector<std::string> ev;
  auto chunk = [](json delta, json finish) {
    return json{{"id", "chatcmpl-fake"},
                {"object", "chat.completion.chunk"},
                {"model", "fake"},
                {"choices", {{{"index", 0}, {"delta", delta}, {"finish_reason", finish}}}}};
  };
  std::string text = r.value("text", "");
  for (size_t i = 0; i < text.size(); i += 16) {
    ev.push_back(Event("", chunk({{"role", "assistant"}, {"content", text.substr(i, 16)}}, nullptr)));
  }
  const json calls = r.value("tool_calls", json::array());
  for (size_t i = 0; i < calls.size(); ++i) {
    auto [a, b] = ArgumentPieces(calls[i]);
    std::string id = calls[i].value("id", "call_" + std::to_string(i));
    ev.push_back(Event("", chunk({{"tool_calls",
                                   {{{"index", i},
                                     {"id", id},
                                     {"type", "function"},
                                     {"function", {{"name", calls[i]["name"]}, {"arguments", a}}}}}}},
                                 nullptr)));
    ev.push_back(Event("", chunk({{"tool_calls", {{{"index", i}, {"function", {{"arguments", b}}}}}}}, nullptr)));
  }
  ev.push_back(Event("", chunk(json::object(), calls.empty() ? "stop" : "tool_calls")));
  json usage = r.value("usage", json{{"input", 10}, {"output", 5}});
  ev.push_back(Event("", {{"id", "chatcmpl-fake"},
                          {"object", "chat.completion.chunk"},
                          {"choices", json::array()},
                          {"usage",
                           {{"prompt_tokens", usage["input"]},
                            {"completion_tokens", usage["output"]},
                            {"prompt_tokens_details", {{"cached_tokens", usage.value("cache_read", 0)}}}}}}));
  ev.push_back("data: [DONE]\n\n");
  return ev;
}

// OpenAI Responses: each output item added, streamed and done in turn,
// then response.completed with the whole response and its usage.
std::vector<std::string> ResponsesEvents(const json& r) {
  std::vector<std::string> ev;
  json usage = r.value("usage", json{{"input", 10}, {"output", 5}});
  json output = json::array();
  int seq = 0;
  auto event = [&](const std::string& type, json data) {
    data["type"] = type;
    data["sequence_number"] = seq++;
    ev.push_back(Event(type, data));
  };
  event("response.created",
        {{"response", {{"id", "resp_fake"}, {"status", "in_progress"}, {"output", json::array()}}}});
  auto item = [&](const json& added, const std::function<void(int)>& stream, const json& done) {
    int index = static_cast<int>(output.size());
    event("response.output_item.added", {{"output_index", index}, {"item", added}});
    stream(index);
    event("response.output_item.done", {{"output_index", index}, {"item", done}});
    output.push_back(done);
  };
  if (r.contains("reasoning")) {
    json reasoning = {{"type", "reasoning"},
                      {"id", "rs_" + std::to_string(seq)},
                      {"summary", json::array()},
                      {"encrypted_content", r["reasoning"]}};
    item(
        reasoning, [](int) {}, reasoning);
  }
  std::string text = r.value("text", "");
  if (!text.empty()) {
    std::string id = "msg_" + std::to_string(seq);
    // As OpenAI streams a message: the item, its text part, the deltas, the
    // text and part done (a client such as Codex wants each in turn).
    json message = {
        {"type", "message"}, {"id", id}, {"role", "assistant"}, {"status", "in_progress"}, {"content", json::array()}};
    item(message,
         [&](int index) {
           json at = {{"item_id", id}, {"output_index", index}, {"content_index", 0}};
           json added = at, delta = at, done = at, part_done = at;
           added["part"] = {{"type", "output_text"}, {"text", ""}, {"annotations", json::array()}};
           event("response.content_part.added", added);
           for (size_t i = 0; i < text.size(); i += 16) {
             delta["delta"] = text.substr(i, 16);
             event("response.output_text.delta", delta);
           }
           done["text"] = text;
           event("response.output_text.done", done);
           part_done["part"] = {{"type", "output_text"}, {"text", text}, {"annotations", json::array()}};
           event("response.content_part.done", part_done);
         },
         {{"type", "message"},
          {"id", id},
          {"role", "assistant"},
          {"status", "completed"},
          {"content", {{{"type", "output_text"}, {"text", text}, {"annotations", json::array()}}}}});
  }
  const json calls = r.value("tool_calls", json::array());
  for (size_t i = 0; i < calls.size(); ++i) {
    auto [a, b] = ArgumentPieces(calls[i]);
    std::string id = "fc_" + std::to_string(seq), call_id = calls[i].value("id", "call_" + std::to_string(i));
    json call = {{"type", "function_call"}, {"id", id}, {"call_id", call_id}, {"name", calls[i]["name"]}};
    json added = call, done = call;
    added["arguments"] = "";
    added["status"] = "in_progress";
    done["arguments"] = a + b;
    done["status"] = "completed";
    item(
        added,
        [&](int index) {
          for (const std::string& piece : {a, b}) {
            event("response.function_call_arguments.delta",
                  {{"item_id", id}, {"output_index", index}, {"delta", piece}});
          }
          event("response.function_call_arguments.done",
                {{"item_id", id}, {"output_index", index}, {"arguments", a + b}});
        },
        done);
  }
  int64_t input = usage["input"].get<int64_t>(), output_tokens = usage["output"].get<int64_t>();
  event("response.completed", {{"response",
                                {{"id", "resp_fake"},
                                 {"status", "completed"},
                                 {"output", output},
                                 {"usage",
                                  {{"input_tokens", input},
                                   {"input_tokens_details", {{"cached_tokens", usage.value("cache_read", 0)}}},
                                   {"output_tokens", output_tokens},
                                   {"output_tokens_details", {{"reasoning_tokens", r.contains("reasoning") ? 3 : 0}}},
                                   {"total_tokens", input + output_tokens}}}}}});
  return ev;
}

std::vector<std::string> AnthropicEvents(const json& r) {
  std::vector<std::string> ev;
  json usage = r.value("usage", json{{"input", 10}, {"output", 5}});
  ev.push_back(Event("message_start",
                     {{"type", "message_start"},
                      {"message",
                       {{"id", "msg_fake"},
                        {"type", "message"},
                        {"role", "assistant"},
                        {"model", "fake"},
                        {"content", json::array()},
                        // input_tokens: those neither read from the cache nor written to it
                        {"usage",
                         {{"input_tokens", usage["input"].get<int64_t>() - usage.value("cache_read", int64_t{0}) -
                                               usage.value("cache_write", int64_t{0})},
                          {"cache_read_input_tokens", usage.value("cache_read", 0)},
                          {"cache_creation_input_tokens", usage.value("cache_write", 0)},
                          {"output_tokens", 1}}}}}}));
  int index = 0;
  std::string text = r.value("text", "");
  if (!text.empty()) {
    ev.push_back(Event(
        "content_block_start",
        {{"type", "content_block_start"}, {"index", index}, {"content_block", {{"type", "text"}, {"text", ""}}}}));
    for (size_t i = 0; i < text.size(); i += 16) {
      ev.push_back(Event("content_block_delta", {{"type", "content_block_delta"},
                                                 {"index", index},
                                                 {"delta", {{"type", "text_delta"}, {"text", text.substr(i, 16)}}}}));
    }
    ev.push_back(Event("content_block_stop", {{"type", "content_block_stop"}, {"index", index}}));
    ++index;
  }
  const json calls = r.value("tool_calls", json::array());
  for (size_t i = 0; i < calls.size(); ++i, ++index) {
    auto [a, b] = ArgumentPieces(calls[i]);
    std::string id = calls[i].value("id", "toolu_" + std::to_string(i));
    ev.push_back(Event("content_block_start",
                       {{"type", "content_block_start"},
                        {"index", index},
                        {"content_block",
                         {{"type", "tool_use"}, {"id", id}, {"name", calls[i]["name"]}, {"input", json::object()}}}}));
    for (const std::string& piece : {a, b}) {
      ev.push_back(Event("content_block_delta", {{"type", "content_block_delta"},
                                                 {"index", index},
                                                 {"delta", {{"type", "input_json_delta"}, {"partial_json", piece}}}}));
    }
    ev.push_back(Event("content_block_stop", {{"type", "content_block_stop"}, {"index", index}}));
  }
  ev.push_back(Event("message_delta", {{"type", "message_delta"},
                                       {"delta", {{"stop_reason", calls.empty() ? "end_turn" : "tool_use"}}},
                                       {"usage", {{"output_tokens", usage["output"]}}}}));
  ev.push_back(Event("message_stop", {{"type", "message_stop"}}));
  return ev;
}

enum class Api { kChat, kResponses, kAnthropic };

void Handle(const httplib::Request& req, httplib::Response& res, Api api) {
  const bool anthropic = api == Api::kAnthropic;
  size_t n;
  json r;
  json body = json::parse(req.body, nullptr, false);
  int64_t tokens = static_cast<int64_t>(req.body.size() / 4);
  if (g_context_window > 0 && tokens > g_context_window) {
    Log({{"n", -1}, {"t_ns", MonotonicNs()}, {"path", req.path}, {"refused_tokens", tokens}});
    std::string limit = std::to_string(g_context_window), got = std::to_string(tokens);
    json error = anthropic ? json{{"type", "error"},
                                  {"error",
                                   {{"type", "invalid_request_error"},
                                    {"message", "prompt is too long: " + got + " tokens > " + limit + " maximum"}}}}
                           : json{{"error",
                                   {{"message", "This model's maximum context length is " + limit +
                                                    " tokens. However, your messages resulted in " + got +
                                                    " tokens. Please reduce the length of the messages."},
                                    {"type", "invalid_request_error"},
                                    {"param", "messages"},
                                    {"code", "context_length_exceeded"}}}};
    res.status = 400;
    res.set_content(error.dump(), "application/json");
    return;
  }
  for (const json& field : g_refuse_fields) {
    if (!field.is_string() || req.body.find("\"" + field.get<std::string>() + "\":") == std::string::npos) continue;
    Log({{"n", -1}, {"t_ns", MonotonicNs()}, {"path", req.path}, {"refused_field", field}});
    res.status = 400;
    res.set_content(json{{"error",
                          {{"message", "Unrecognized request argument supplied: " + field.get<std::string>()},
                           {"type", "invalid_request_error"},
                           {"param", nullptr},
                           {"code", nullptr}}}}
                        .dump(),
                    "application/json");
    return;
  }
  std::string system = SystemText(body);
  json cache_usage;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    if (g_prompt_cache) {
      std::string rendered = RenderForCache(body);
      int64_t input = static_cast<int64_t>(rendered.size() / 4);
      int64_t cached = static_cast<int64_t>(CachedBytes(rendered) / 4);
      bool breakpoint = req.body.find("\"cache_control\":") != std::string::npos;
      if (anthropic && !breakpoint) cached = 0;
      cache_usage = {{"input", input}, {"output", 5}, {"cache_read", cached}};
      if (anthropic && breakpoint) cache_usage["cache_write"] = input - cached;
    }
    std::optional<json> by_system;
    for (auto& [text, response] : g_by_system.items()) {
      if (system.find(text) == std::string::npos) continue;
      by_system = response;
      auto list = g_by_system_lists.find(text);
      if (list != g_by_system_lists.end() && !list->second.empty()) {
        by_system = list->second.front();
        if (list->second.size() > 1) list->second.pop_front();
      }
    }
    // A routed conversation's queue is only consumed by its own requests.
    std::optional<json> routed = by_system ? std::nullopt : RouteByAgent(body);
    if (by_system) {
      n = 2000000 + g_routed++;
      r = *by_system;
    } else if (routed) {
      n = 1000000 + g_routed++;  // numbered apart from the main script
      r = *routed;
    } else {
      n = g_next++;
      r = n < g_script.size() ? g_script[n] : json{{"text", "(script exhausted)"}};
    }
  }
  Log({{"n", n}, {"t_ns", MonotonicNs()}, {"path", req.path}, {"body", body.is_discarded() ? json(req.body) : body}});
  if (!cache_usage.is_null() && !r.contains("usage")) r["usage"] = cache_usage;
  if (g_context_window > 0 && !r.contains("usage")) r["usage"] = {{"input", tokens}, {"output", 5}};
  if (r.contains("delay_ms")) std::this_thread::sleep_for(std::chrono::milliseconds(r["delay_ms"].get<int>()));
  if (r.contains("hold_until")) {
    std::string path = r["hold_until"];
    for (int i = 0; i < 6000 && access(path.c_str(), F_OK) != 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  int status = r.value("status", 200);
  if (status != 200 || r.contains("body")) {
    res.status = status;
    const json headers = r.value("headers", json::object());
    for (auto& [k, v] : headers.items()) res.set_header(k, v.get<std::string>());
    res.set_content(r.value("body", "{\"error\":{\"message\":\"scripted failure\"}}"), "application/json");
    Log({{"n", n}, {"answered_ns", MonotonicNs()}});
    return;
  }
  // "@last_execution_id" in a scripted call's arguments becomes the
  // execution id of the newest tool result in the request (OpenAI wire
  // format), "@last_execution_id_of:TOOL" that of the newest result of
  // TOOL, and "@first_execution_id_of:TOOL" that of its oldest: scripts can
  // cite what an earlier call returned.
  if (r.contains("tool_calls") && body.is_object() && body.contains("messages")) {
    std::string last;
    std::map<std::string, std::string> last_of, first_of;
    for (const json& m : body["messages"]) {
      if (m.value("role", "") != "tool") continue;
      json result = json::parse(MessageText(m), nullptr, false);
      if (!result.is_object() || !result.contains("execution_id")) continue;
      last = result["execution_id"];
      last_of[result.value("tool", "")] = last;
      first_of.emplace(result.value("tool", ""), last);
    }
    for (json& call : r["tool_calls"]) {
      if (!call.contains("arguments")) continue;
      std::string args = call["arguments"].dump();
      for (const auto& [of, ids] :
           {std::pair<std::string, const std::map<std::string, std::string>*>{"@last_execution_id_of:", &last_of},
            {"@first_execution_id_of:", &first_of}}) {
        for (size_t at; (at = args.find(of)) != std::string::npos;) {
          size_t end = args.find('"', at);
          std::string tool = args.substr(at + of.size(), end - at - of.size());
          auto id = ids->find(tool);
          args.replace(at, end - at, id == ids->end() ? "" : id->second);
        }
      }
      for (size_t at; (at = args.find("@last_execution_id")) != std::string::npos;) args.replace(at, 18, last);
      call["arguments"] = json::parse(args);
    }
  }
  // "@evidence_id" in a scripted text becomes the first id in the
  // reviewer's evidence (Odin's <evidence> document: a change's, else a
  // call's): a scripted QA verifier can cite real evidence.
  if (r.contains("text") && r["text"].is_string() &&
      r["text"].get<std::string>().find("@evidence_id") != std::string::npos && body.is_object() &&
      body.contains("messages") && !body["messages"].empty()) {
    std::string ask;
    for (const json& m : body["messages"]) {
      if (MessageText(m).find("<evidence>") != std::string::npos) ask = MessageText(m);
    }
    size_t open = ask.find("<evidence>\n"), close = ask.find("\n</evidence>");
    json evidence = open == std::string::npos || close == std::string::npos
                        ? json()
                        : json::parse(ask.substr(open + 11, close - open - 11), nullptr, false);
    std::string id = "no-evidence";
    for (const char* list : {"calls", "changes"}) {
      if (evidence.is_object() && evidence.contains(list) && !evidence[list].empty()) id = evidence[list][0]["id"];
    }
    std::string text = r["text"];
    for (size_t at; (at = text.find("@evidence_id")) != std::string::npos;) text.replace(at, 12, id);
    r["text"] = text;
  }
  auto events = std::make_shared<std::vector<std::string>>(anthropic                ? AnthropicEvents(r)
                                                           : api == Api::kResponses ? ResponsesEvents(r)
                                                                                    : OpenAiEvents(r));
  if (r.value("error_after_text", false)) {
    // The text streams, then the server reports an error and ends the stream.
    std::vector<std::string> cut;
    for (const std::string& e : *events) {
      if (e.find("content_block_stop") != std::string::npos || e.find("finish_reason\":\"") != std::string::npos) break;
      cut.push_back(e);
    }
    json error = {{"type", "error"}, {"error", {{"type", "overloaded_error"}, {"message", "overloaded"}}}};
    cut.push_back(anthropic ? Event("error", error) : Event("", {{"error", error["error"]}}));
    *events = cut;
  }
  bool truncate = r.value("truncate", false);
  res.set_chunked_content_provider("text/event-stream", [events, truncate, n](size_t, httplib::DataSink& sink) {
    size_t stop = truncate ? events->size() / 2 : events->size();
    for (size_t i = 0; i < stop; ++i) sink.write((*events)[i].data(), (*events)[i].size());
    if (truncate) {
      // Half an event, then the connection drops: a stream cut mid-event.
      const std::string& next = (*events)[stop];
      sink.write(next.data(), next.size() / 2);
      Log({{"n", n}, {"answered_ns", MonotonicNs()}});
      return false;
    }
    sink.done();
    Log({{"n", n}, {"answered_ns", MonotonicNs()}});
    return true;
  });
}

}  // namespace

int main(int argc, char** argv) {
  std::string script_path, log_path;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--script") script_path = argv[i + 1];
    if (flag == "--log") log_path = argv[i + 1];
  }
  std::ifstream in(script_path);
  json script = json::parse(in, nullptr, false);
  if (script.is_discarded() || !script.is_object() || !script.contains("responses")) {
    std::cerr << "fake_llm_server: cannot read the script " << script_path << "\n";
    return 2;
  }
  for (const json& r : script["responses"]) {
    for (int i = 0; i < r.value("repeat", 1); ++i) g_script.push_back(r);
  }
  if (script.contains("agents")) {
    for (auto& [key, list] : script["agents"].items()) {
      for (const json& r : list) g_agents[key].push_back(r);
    }
  }
  g_context_window = script.value("context_window", int64_t{0});
  g_prompt_cache = script.value("prompt_cache", false);
  if (script.contains("refuse_fields") && script["refuse_fields"].is_array()) g_refuse_fields = script["refuse_fields"];
  if (script.contains("by_system")) g_by_system = script["by_system"];
  for (auto& [text, response] : g_by_system.items()) {
    if (!response.is_array()) continue;
    for (const json& r : response) {
      for (int i = 0; i < r.value("repeat", 1); ++i) g_by_system_lists[text].push_back(r);
    }
  }
  if (!log_path.empty()) g_log.open(log_path, std::ios::app);

  httplib::Server server;
  // Small SSE writes must not wait for ACKs (Nagle vs delayed ACK: 40 ms each).
  server.set_tcp_nodelay(true);
  // Parallel subagents each hold a kept-alive connection: enough threads.
  server.new_task_queue = [] { return new httplib::ThreadPool(64); };
  server.Post("/v1/chat/completions",
              [](const httplib::Request& q, httplib::Response& s) { Handle(q, s, Api::kChat); });
  server.Post("/v1/responses", [](const httplib::Request& q, httplib::Response& s) { Handle(q, s, Api::kResponses); });
  server.Post("/v1/messages", [](const httplib::Request& q, httplib::Response& s) { Handle(q, s, Api::kAnthropic); });
  int port = server.bind_to_any_port("127.0.0.1");
  if (port <= 0) {
    std::cerr << "fake_llm_server: cannot listen\n";
    return 1;
  }
  std::cout << "PORT=" << port << std::endl;
  server.listen_after_bind();
  return 0;
}
