#include "llm/llm_wire.h"

#include <algorithm>
#include <map>

#include <nlohmann/json.hpp>

#include "base/base64.h"
#include "base/json_input.h"
#include "llm/images.h"
#include "llm/wire_json.h"

namespace odin {
namespace {

using namespace wire;  // NOLINT(build/namespaces): the shared helpers

// ---- OpenAI Chat Completions -------------------------------------------------

class OpenAiDecoder final : public StreamDecoder {
 public:
  Status OnEvent(const SseEvent& e, const std::function<void(const std::string&)>& on_text) override {
    return Guarded(e, [&] { return Handle(e, on_text); });
  }

 private:
  Status Handle(const SseEvent& e, const std::function<void(const std::string&)>& on_text) {
    if (e.data == "[DONE]") {
      done_ = true;
      return Status::OK();
    }
    StatusOr<json> parsed = ParseEvent(e);
    if (!parsed.ok()) return parsed.status();
    json chunk = std::move(*parsed);
    if (chunk.is_discarded() || !chunk.is_object()) return Status::OK();  // tolerate junk lines
    if (chunk.contains("error")) {
      return Status::Unavailable("the model server reported an error", chunk["error"].dump());
    }
    if (chunk.contains("usage") && chunk["usage"].is_object()) {
      const json& u = chunk["usage"];
      r_.usage.input_tokens = Int(u, "prompt_tokens", r_.usage.input_tokens);
      r_.usage.output_tokens = Int(u, "completion_tokens", r_.usage.output_tokens);
      // Served from the prompt cache (OpenAI; writes are not reported, nor charged).
      if (u.contains("prompt_tokens_details") && u["prompt_tokens_details"].is_object()) {
        r_.usage.cache_read_tokens = Int(u["prompt_tokens_details"], "cached_tokens", r_.usage.cache_read_tokens);
      }
    }
    if (!chunk.contains("choices") || !chunk["choices"].is_array() || chunk["choices"].empty()) return Status::OK();
    const json& choice = chunk["choices"][0];
    if (choice.contains("finish_reason") && choice["finish_reason"].is_string()) {
      r_.stop_reason = choice["finish_reason"].get<std::string>();
    }
    if (!choice.contains("delta") || !choice["delta"].is_object()) return Status::OK();
    const json& delta = choice["delta"];
    if (delta.contains("content") && delta["content"].is_string()) {
      std::string text = delta["content"].get<std::string>();
      r_.text += text;
      if (on_text && !text.empty()) on_text(text);
    }
    if (delta.contains("tool_calls") && delta["tool_calls"].is_array()) {
      const json& list = delta["tool_calls"];
      for (size_t pos = 0; pos < list.size(); ++pos) {
        const json& tc = list[pos];
        // The index says which call a piece belongs to; without one, its
        // place in this array does (never merge two calls into one).
        int64_t index = Int(tc, "index", static_cast<int64_t>(pos));
        ToolCallRequest& call = calls_[index];
        std::string id = Str(tc, "id");
        if (!id.empty()) call.id = id;
        if (tc.is_object() && tc.contains("function") && tc["function"].is_object()) {
          const json& f = tc["function"];
          std::string name = Str(f, "name");
          // Some servers repeat the name in every piece.
          if (call.name.empty())
            call.name = name;
          else if (!name.empty() && name != call.name)
            call.name += name;
          call.arguments_json += Str(f, "arguments");
        }
      }
    }
    return Status::OK();
  }

 public:
  // Servers that skip [DONE] still end with a finish_reason.
  bool finished() const override { return done_ || !r_.stop_reason.empty(); }
  ChatResponse Response() const override {
    ChatResponse out = r_;
    for (const auto& [index, call] : calls_) out.tool_calls.push_back(call);
    out.truncated = !finished();
    return out;
  }

 private:
  ChatResponse r_;
  std::map<int64_t, ToolCallRequest> calls_;
  bool done_ = false;
};

class OpenAiFormat final : public WireFormat {
 public:
  HttpRequest Build(const ChatRequest& req, const ProviderEndpoint& ep, bool extras) const override {
    json messages = json::array();
    if (!req.system.empty()) messages.push_back({{"role", "system"}, {"content", req.system}});
    for (const ChatMessage& m : req.messages) {
      switch (m.role) {
        case ChatMessage::Role::kUser: {
          if (m.images.empty()) {
            messages.push_back({{"role", "user"}, {"content", m.text}});
            break;
          }
          json content = json::array({{{"type", "text"}, {"text", m.text}}});
          for (const ImageData& image : m.images) {
            content.push_back({{"type", "image_url"}, {"image_url", {{"url", ImageDataUrl(image)}}}});
          }
          messages.push_back({{"role", "user"}, {"content", std::move(content)}});
          break;
        }
        case ChatMessage::Role::kAssistant: {
          json msg = {{"role", "assistant"}, {"content", m.text.empty() ? json() : json(m.text)}};
          if (!m.tool_calls.empty()) {
            msg["tool_calls"] = json::array();
            for (const ToolCallRequest& c : m.tool_calls) {
              msg["tool_calls"].push_back({{"id", c.id},
                                           {"type", "function"},
                                           {"function", {{"name", c.name}, {"arguments", c.arguments_json}}}});
            }
          }
          messages.push_back(msg);
          break;
        }
        case ChatMessage::Role::kToolResults: {
          for (const ToolResultMessage& r : m.results) {
            messages.push_back({{"role", "tool"}, {"tool_call_id", r.call_id}, {"content", r.content}});
          }
          if (m.images.empty()) break;
          // A tool message holds text only: the images follow as the user's.
          json content = json::array({{{"type", "text"}, {"text", ToolImagesIntro(m.images)}}});
          for (const ImageData& image : m.images) {
            content.push_back({{"type", "image_url"}, {"image_url", {{"url", ImageDataUrl(image)}}}});
          }
          messages.push_back({{"role", "user"}, {"content", std::move(content)}});
          break;
        }
      }
    }
    if (!req.tail.empty()) messages.push_back({{"role", "user"}, {"content", req.tail}});
    json body = {
        {"model", req.model}, {"messages", messages}, {"stream", true}, {"stream_options", {{"include_usage", true}}}};
    if (extras && ep.prompt_cache && !req.cache_key.empty()) body["prompt_cache_key"] = req.cache_key;
    // Only when configured: newer OpenAI models refuse max_tokens (they want
    // max_completion_tokens), while most compatible servers take it.
    if (req.max_tokens > 0) body["max_tokens"] = req.max_tokens;
    if (req.temperature >= 0) body["temperature"] = req.temperature;
    if (!req.tools.empty()) {
      body["tools"] = json::array();
      for (const ToolSpec& t : req.tools) {
        body["tools"].push_back({{"type", "function"},
                                 {"function",
                                  {{"name", t.name},
                                   {"description", t.description},
                                   {"parameters", ParseOr(t.input_schema_json, json::object())}}}});
      }
    }
    if (extras && !req.answer_schema_json.empty()) {
      body["response_format"] = {{"type", "json_schema"},
                                 {"json_schema",
                                  {{"name", req.answer_name.empty() ? "answer" : req.answer_name},
                                   {"schema", ParseOr(req.answer_schema_json, json::object())}}}};
    }
    HttpRequest http;
    http.url = ep.base_url + "/chat/completions";
    http.headers = {"Content-Type: application/json", "Accept: text/event-stream"};
    if (!ep.api_key.empty()) http.headers.push_back("Authorization: Bearer " + ep.api_key);
    http.body = body.dump(-1, ' ', false, json::error_handler_t::replace);
    return http;
  }
  std::unique_ptr<StreamDecoder> NewDecoder() const override { return std::make_unique<OpenAiDecoder>(); }
};

// ---- Anthropic Messages ------------------------------------------------------

class AnthropicDecoder final : public StreamDecoder {
 public:
  Status OnEvent(const SseEvent& e, const std::function<void(const std::string&)>& on_text) override {
    return Guarded(e, [&] { return Handle(e, on_text); });
  }

 private:
  // Anthropic's input_tokens leaves out the cached tokens: they are counted
  // apart, as read from the cache or written to it. message_start has all
  // of them; message_delta may say them again (the totals so far).
  void ReadAnthropicUsage(const json& u) {
    int64_t read = Int(u, "cache_read_input_tokens", r_.usage.cache_read_tokens);
    int64_t written = Int(u, "cache_creation_input_tokens", r_.usage.cache_write_tokens);
    int64_t uncached =
        Int(u, "input_tokens", r_.usage.input_tokens - r_.usage.cache_read_tokens - r_.usage.cache_write_tokens);
    r_.usage.cache_read_tokens = read;
    r_.usage.cache_write_tokens = written;
    r_.usage.input_tokens = uncached + read + written;
    r_.usage.output_tokens = Int(u, "output_tokens", r_.usage.output_tokens);
  }

  Status Handle(const SseEvent& e, const std::function<void(const std::string&)>& on_text) {
    StatusOr<json> parsed = ParseEvent(e);
    if (!parsed.ok()) return parsed.status();
    json msg = std::move(*parsed);
    if (msg.is_discarded() || !msg.is_object()) return Status::OK();
    std::string type = Str(msg, "type");
    if (type.empty()) type = e.event;
    if (type == "error") {
      return Status::Unavailable("the model server reported an error",
                                 msg.contains("error") ? msg["error"].dump() : e.data);
    }
    if (type == "message_start" && msg.contains("message") && msg["message"].is_object() &&
        msg["message"].contains("usage")) {
      ReadAnthropicUsage(msg["message"]["usage"]);
    } else if (type == "content_block_start" && msg.contains("content_block")) {
      const json& b = msg["content_block"];
      int64_t index = Int(msg, "index", 0);
      if (Str(b, "type") == "tool_use") {
        ToolCallRequest& call = calls_[index];
        call.id = Str(b, "id");
        call.name = Str(b, "name");
      }
    } else if (type == "content_block_delta" && msg.contains("delta")) {
      const json& d = msg["delta"];
      int64_t index = Int(msg, "index", 0);
      if (Str(d, "type") == "text_delta") {
        std::string text = Str(d, "text");
        r_.text += text;
        if (on_text && !text.empty()) on_text(text);
      } else if (Str(d, "type") == "input_json_delta") {
        calls_[index].arguments_json += Str(d, "partial_json");
      }
    } else if (type == "message_delta") {
      if (msg.contains("delta")) {
        std::string stop = Str(msg["delta"], "stop_reason");
        if (!stop.empty()) r_.stop_reason = stop;
      }
      if (msg.contains("usage")) ReadAnthropicUsage(msg["usage"]);
    } else if (type == "message_stop") {
      done_ = true;
    }
    return Status::OK();
  }

 public:
  bool finished() const override { return done_; }
  ChatResponse Response() const override {
    ChatResponse out = r_;
    for (const auto& [index, call] : calls_) {
      ToolCallRequest c = call;
      if (c.arguments_json.empty()) c.arguments_json = "{}";  // a tool without arguments
      out.tool_calls.push_back(c);
    }
    out.truncated = !done_;
    return out;
  }

 private:
  ChatResponse r_;
  std::map<int64_t, ToolCallRequest> calls_;
  bool done_ = false;
};

class AnthropicFormat final : public WireFormat {
 public:
  HttpRequest Build(const ChatRequest& req, const ProviderEndpoint& ep, bool extras) const override {
    json messages = json::array();
    // The API wants user and assistant turns to alternate: consecutive user
    // content (tool results, then a new message) becomes one turn.
    auto add = [&messages](const std::string& role, json block) {
      if (!messages.empty() && messages.back()["role"] == role) {
        messages.back()["content"].push_back(std::move(block));
      } else {
        messages.push_back({{"role", role}, {"content", json::array({std::move(block)})}});
      }
    };
    auto add_images = [&add](const std::vector<ImageData>& images) {
      for (const ImageData& image : images) {
        add("user",
            {{"type", "image"},
             {"source", {{"type", "base64"}, {"media_type", image.media_type}, {"data", Base64Encode(image.bytes)}}}});
      }
    };
    for (const ChatMessage& m : req.messages) {
      switch (m.role) {
        case ChatMessage::Role::kUser:
          add("user", {{"type", "text"}, {"text", m.text.empty() ? "(empty message)" : m.text}});
          add_images(m.images);
          break;
        case ChatMessage::Role::kAssistant:
          if (!m.text.empty()) add("assistant", {{"type", "text"}, {"text", m.text}});
          for (const ToolCallRequest& c : m.tool_calls) {
            // The API wants an object here; malformed arguments were answered
            // with an error result, so an empty object stands in for them.
            json input = ParseOr(c.arguments_json, json::object());
            if (!input.is_object()) input = json::object();
            add("assistant", {{"type", "tool_use"}, {"id", c.id}, {"name", c.name}, {"input", input}});
          }
          break;
        case ChatMessage::Role::kToolResults:
          for (const ToolResultMessage& r : m.results) {
            add("user", {{"type", "tool_result"},
                         {"tool_use_id", r.call_id},
                         {"content", r.content},
                         {"is_error", r.is_error}});
          }
          // After every tool_result block of the message, as the API wants.
          if (!m.images.empty()) add("user", {{"type", "text"}, {"text", ToolImagesIntro(m.images)}});
          add_images(m.images);
          break;
      }
    }
    // Prompt caching: breakpoints after the tools, the system prompt and the
    // conversation (before the per-turn tail), so each request reads what
    // the one before wrote.
    const bool cache = extras && ep.prompt_cache;
    const json breakpoint = {{"type", "ephemeral"}};
    if (cache && !messages.empty()) messages.back()["content"].back()["cache_control"] = breakpoint;
    if (!req.tail.empty()) add("user", {{"type", "text"}, {"text", req.tail}});
    // Anthropic requires max_tokens.
    json body = {{"model", req.model},
                 {"max_tokens", req.max_tokens > 0 ? req.max_tokens : 8192},
                 {"messages", messages},
                 {"stream", true}};
    if (req.temperature >= 0) body["temperature"] = req.temperature;
    if (!req.system.empty()) {
      body["system"] = cache ? json::array({{{"type", "text"}, {"text", req.system}, {"cache_control", breakpoint}}})
                             : json(req.system);
    }
    if (!req.tools.empty()) {
      body["tools"] = json::array();
      for (const ToolSpec& t : req.tools) {
        body["tools"].push_back({{"name", t.name},
                                 {"description", t.description},
                                 {"input_schema", ParseOr(t.input_schema_json, json::object())}});
      }
      if (cache) body["tools"].back()["cache_control"] = breakpoint;
    }
    if (extras && !req.answer_schema_json.empty()) {
      // Anthropic's structured output: one tool, which the model must call.
      std::string name = req.answer_name.empty() ? "answer" : req.answer_name;
      if (!body.contains("tools")) body["tools"] = json::array();
      body["tools"].push_back({{"name", name},
                               {"description", "Give your answer as this tool's input."},
                               {"input_schema", ParseOr(req.answer_schema_json, json::object())}});
      body["tool_choice"] = {{"type", "tool"}, {"name", name}};
    }
    HttpRequest http;
    http.url = ep.base_url + "/v1/messages";
    http.headers = {"Content-Type: application/json", "Accept: text/event-stream", "anthropic-version: 2023-06-01"};
    if (!ep.api_key.empty()) http.headers.push_back("x-api-key: " + ep.api_key);
    http.body = body.dump(-1, ' ', false, json::error_handler_t::replace);
    return http;
  }
  std::unique_ptr<StreamDecoder> NewDecoder() const override { return std::make_unique<AnthropicDecoder>(); }
};

}  // namespace

std::unique_ptr<WireFormat> NewOpenAiFormat() { return std::make_unique<OpenAiFormat>(); }
std::unique_ptr<WireFormat> NewAnthropicFormat() { return std::make_unique<AnthropicFormat>(); }

std::string ErrorMessageFromBody(const std::string& body) {
  json j = ParseJson(body);
  if (!j.is_discarded() && j.is_object() && j.contains("error")) {
    const json& e = j["error"];
    if (e.is_object() && e.contains("message") && e["message"].is_string()) return e["message"].get<std::string>();
    if (e.is_string()) return e.get<std::string>();
  }
  std::string text = body.substr(0, 300);
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return text;
}

bool HasExtraFields(const ChatRequest& request, const ProviderEndpoint& endpoint) {
  if (!request.answer_schema_json.empty()) return true;
  if (!endpoint.prompt_cache) return false;
  return endpoint.provider == "anthropic" || !request.cache_key.empty();
}

bool IsExtraFieldRefusal(int http_status, const std::string& body) {
  if (http_status != 400 && http_status != 422) return false;
  for (const char* field : {"response_format", "json_schema", "tool_choice", "cache_control", "prompt_cache_key"}) {
    if (body.find(field) != std::string::npos) return true;
  }
  return false;
}

bool IsContextOverflowResponse(int http_status, const std::string& body) {
  if (http_status == 413) return true;
  if (http_status != 400) return false;
  json j = ParseJson(body);
  std::string code, message = ErrorMessageFromBody(body);
  if (!j.is_discarded() && j.is_object() && j.contains("error") && j["error"].is_object()) {
    const json& e = j["error"];
    if (e.contains("code") && e["code"].is_string()) code = e["code"].get<std::string>();
  }
  std::transform(message.begin(), message.end(), message.begin(), [](unsigned char c) { return std::tolower(c); });
  return code == "context_length_exceeded" || message.find("maximum context length") != std::string::npos ||
         message.find("prompt is too long") != std::string::npos ||
         message.find("context_length_exceeded") != std::string::npos;
}

}  // namespace odin
