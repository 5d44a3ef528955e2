// OpenAI's Responses API (POST /v1/responses), streamed: the third wire
// format, for models and accounts that want it (reasoning models keep their
// reasoning between turns here).
//
// Nothing is stored at OpenAI (store: false), so no previous_response_id:
// every request carries the whole conversation, like the other formats, and
// the reasoning items a model sent come back to it, encrypted as it sent
// them (include: reasoning.encrypted_content), before the calls they led to.

#include <map>

#include <nlohmann/json.hpp>

#include "llm/images.h"
#include "llm/llm_wire.h"
#include "llm/wire_json.h"

namespace odin {
namespace {

using namespace wire;  // NOLINT(build/namespaces): the shared helpers

class ResponsesDecoder final : public StreamDecoder {
 public:
  Status OnEvent(const SseEvent& e, const std::function<void(const std::string&)>& on_text) override {
    return Guarded(e, [&] { return Handle(e, on_text); });
  }
  bool finished() const override { return done_; }
  ChatResponse Response() const override {
    ChatResponse out = r_;
    for (const auto& [index, call] : calls_) {
      ToolCallRequest c = call;
      if (c.arguments_json.empty()) c.arguments_json = "{}";
      out.tool_calls.push_back(c);
    }
    for (const auto& [index, item] : reasoning_) out.reasoning.push_back(item);
    out.truncated = !done_;
    return out;
  }

 private:
  Status Handle(const SseEvent& e, const std::function<void(const std::string&)>& on_text) {
    StatusOr<json> parsed = ParseEvent(e);
    if (!parsed.ok()) return parsed.status();
    const json& msg = *parsed;
    if (msg.is_discarded() || !msg.is_object()) return Status::OK();
    std::string type = Str(msg, "type");
    if (type.empty()) type = e.event;
    int64_t index = IndexOf(msg);
    if (type == "error") {
      return Status::Unavailable("the model server reported an error",
                                 Str(msg, "message").empty() ? e.data.substr(0, 300) : Str(msg, "message"));
    }
    if (type == "response.failed") {
      const json& response = msg.value("response", json::object());
      const json& error = response.is_object() ? response.value("error", json::object()) : json::object();
      return Status::Unavailable("the model server reported an error",
                                 Str(error, "message").empty() ? e.data.substr(0, 300) : Str(error, "message"));
    }
    if (type == "response.output_text.delta") {
      std::string text = Str(msg, "delta");
      r_.text += text;
      if (on_text && !text.empty()) on_text(text);
    } else if (type == "response.output_item.added" || type == "response.output_item.done") {
      const json& item = msg.value("item", json::object());
      std::string kind = Str(item, "type");
      if (kind == "function_call") {
        ToolCallRequest& call = calls_[index];
        if (!Str(item, "call_id").empty()) call.id = Str(item, "call_id");
        if (!Str(item, "name").empty()) call.name = Str(item, "name");
        if (type == "response.output_item.done" && item.is_object() && item.contains("arguments") &&
            item["arguments"].is_string()) {
          call.arguments_json = item["arguments"].get<std::string>();
        }
      } else if (kind == "reasoning" && type == "response.output_item.done" &&
                 !Str(item, "encrypted_content").empty()) {
        // Given back as it came (its id, summary and encrypted content),
        // nothing else of it read. One without its encrypted content is
        // dropped: with store: false the server has nothing to find it by,
        // and would refuse every later request that names it.
        json summary = item.contains("summary") && item["summary"].is_array() ? item["summary"] : json::array();
        json kept = {
            {"type", "reasoning"}, {"summary", summary}, {"encrypted_content", Str(item, "encrypted_content")}};
        if (!Str(item, "id").empty()) kept["id"] = Str(item, "id");
        reasoning_[index] = Dump(kept);
      } else if (kind == "message" && type == "response.output_item.done" && r_.text.empty()) {
        // A server that sends the text only whole, in the item.
        for (const json& part : item.value("content", json::array())) {
          if (Str(part, "type") == "output_text") r_.text += Str(part, "text");
        }
      }
    } else if (type == "response.function_call_arguments.delta") {
      calls_[index].arguments_json += Str(msg, "delta");
    } else if (type == "response.function_call_arguments.done") {
      if (msg.contains("arguments") && msg["arguments"].is_string()) {
        calls_[index].arguments_json = msg["arguments"].get<std::string>();
      }
    } else if (type == "response.completed" || type == "response.incomplete") {
      const json& response = msg.value("response", json::object());
      const json& u = response.is_object() ? response.value("usage", json::object()) : json::object();
      r_.usage.input_tokens = Int(u, "input_tokens", 0);
      r_.usage.output_tokens = Int(u, "output_tokens", 0);
      if (u.is_object() && u.contains("input_tokens_details")) {
        r_.usage.cache_read_tokens = Int(u["input_tokens_details"], "cached_tokens", 0);
      }
      // The other formats' words for why it stopped.
      std::string reason;
      if (response.is_object() && response.contains("incomplete_details")) {
        reason = Str(response["incomplete_details"], "reason");
      }
      r_.stop_reason = type == "response.completed"    ? (calls_.empty() ? "stop" : "tool_calls")
                       : reason == "max_output_tokens" ? "length"
                                                       : (reason.empty() ? "incomplete" : reason);
      done_ = true;
    }
    return Status::OK();
  }

  // Where an event's item sits in the output: its output_index, else (a
  // server that leaves it out) a place of its own for each item id, after
  // the indexed ones, so that two calls are never merged into one.
  int64_t IndexOf(const json& msg) {
    if (msg.contains("output_index") && msg["output_index"].is_number_integer()) {
      return msg["output_index"].get<int64_t>();
    }
    std::string id = Str(msg, "item_id");
    if (id.empty() && msg.contains("item")) id = Str(msg["item"], "id");
    if (id.empty()) return 0;
    auto [it, added] = by_item_.emplace(id, kUnindexed + static_cast<int64_t>(by_item_.size()));
    return it->second;
  }
  static constexpr int64_t kUnindexed = int64_t{1} << 40;

  ChatResponse r_;
  std::map<std::string, int64_t> by_item_;    // item id -> its place, for events without an output_index
  std::map<int64_t, ToolCallRequest> calls_;  // by output index
  std::map<int64_t, std::string> reasoning_;  // by output index
  bool done_ = false;
};

class ResponsesFormat final : public WireFormat {
 public:
  HttpRequest Build(const ChatRequest& req, const ProviderEndpoint& ep, bool extras) const override {
    json input = json::array();
    for (const ChatMessage& m : req.messages) {
      switch (m.role) {
        case ChatMessage::Role::kUser: {
          if (m.images.empty()) {
            input.push_back({{"role", "user"}, {"content", m.text}});
            break;
          }
          json content = json::array({{{"type", "input_text"}, {"text", m.text}}});
          for (const ImageData& image : m.images) {
            content.push_back({{"type", "input_image"}, {"image_url", ImageDataUrl(image)}});
          }
          input.push_back({{"role", "user"}, {"content", std::move(content)}});
          break;
        }
        case ChatMessage::Role::kAssistant:
          // The reasoning first: it led to the text and the calls.
          for (const std::string& item : m.reasoning) {
            json r = ParseOr(item, json());
            if (r.is_object()) input.push_back(std::move(r));
          }
          if (!m.text.empty()) input.push_back({{"role", "assistant"}, {"content", m.text}});
          for (const ToolCallRequest& c : m.tool_calls) {
            input.push_back(
                {{"type", "function_call"}, {"call_id", c.id}, {"name", c.name}, {"arguments", c.arguments_json}});
          }
          break;
        case ChatMessage::Role::kToolResults: {
          for (const ToolResultMessage& r : m.results) {
            input.push_back({{"type", "function_call_output"}, {"call_id", r.call_id}, {"output", r.content}});
          }
          if (m.images.empty()) break;
          json content = json::array({{{"type", "input_text"}, {"text", ToolImagesIntro(m.images)}}});
          for (const ImageData& image : m.images) {
            content.push_back({{"type", "input_image"}, {"image_url", ImageDataUrl(image)}});
          }
          input.push_back({{"role", "user"}, {"content", std::move(content)}});
          break;
        }
      }
    }
    if (!req.tail.empty()) input.push_back({{"role", "user"}, {"content", req.tail}});
    json body = {{"model", req.model},
                 {"input", input},
                 {"stream", true},
                 {"store", false},
                 {"include", json::array({"reasoning.encrypted_content"})}};
    if (!req.system.empty()) body["instructions"] = req.system;
    if (req.max_tokens > 0) body["max_output_tokens"] = req.max_tokens;
    if (req.temperature >= 0) body["temperature"] = req.temperature;
    if (extras && ep.prompt_cache && !req.cache_key.empty()) body["prompt_cache_key"] = req.cache_key;
    if (!req.tools.empty()) {
      body["tools"] = json::array();
      for (const ToolSpec& t : req.tools) {
        body["tools"].push_back({{"type", "function"},
                                 {"name", t.name},
                                 {"description", t.description},
                                 {"parameters", ParseOr(t.input_schema_json, json::object())},
                                 {"strict", false}});
      }
    }
    if (extras && !req.answer_schema_json.empty()) {
      body["text"] = {{"format",
                       {{"type", "json_schema"},
                        {"name", req.answer_name.empty() ? "answer" : req.answer_name},
                        {"schema", ParseOr(req.answer_schema_json, json::object())},
                        {"strict", false}}}};
    }
    HttpRequest http;
    http.url = ep.base_url + "/responses";
    http.headers = {"Content-Type: application/json", "Accept: text/event-stream"};
    if (!ep.api_key.empty()) http.headers.push_back("Authorization: Bearer " + ep.api_key);
    http.body = Dump(body);
    return http;
  }
  std::unique_ptr<StreamDecoder> NewDecoder() const override { return std::make_unique<ResponsesDecoder>(); }
};

}  // namespace

std::unique_ptr<WireFormat> NewOpenAiResponsesFormat() { return std::make_unique<ResponsesFormat>(); }

}  // namespace odin
