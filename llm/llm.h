#pragma once
// What Odin says to a model and what a model says back, independent of the
// wire format (OpenAI Chat Completions or Responses, Anthropic Messages), and the
// interface of a model client.
//
// A client is passive like everything in the coordinator loop: Start begins a
// call, callbacks report the streamed text and the end, and the loop drives
// it through Tick and the HttpClient it shares.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "llm/prices.h"

namespace odin {

// A tool call the model asked for.
struct ToolCallRequest {
  std::string id;  // the model's id for the call (echoed in the result)
  std::string name;
  std::string arguments_json;  // as the model wrote it: may be malformed
};

// The answer to one tool call, as the model will read it.
struct ToolResultMessage {
  std::string call_id;
  std::string content;  // the ground-truth record (JSON)
  bool is_error = false;
};

// An image given to the model with a user message: its bytes (checked by
// their magic: PNG, JPEG, GIF or WebP; llm/images.h), never decoded, and
// what it is called for the model ("shot.png").
struct ImageData {
  std::string media_type;  // image/png, image/jpeg, image/gif, image/webp
  std::string bytes;
  std::string label;
};

struct ChatMessage {
  enum class Role { kUser, kAssistant, kToolResults };
  Role role = Role::kUser;
  std::string text;                         // user or assistant text
  std::vector<ToolCallRequest> tool_calls;  // assistant
  std::vector<ToolResultMessage> results;   // tool results
  // assistant: the reasoning items the model sent with it (OpenAI Responses,
  // each an opaque JSON object with its encrypted content), given back
  // before its text and calls in later requests.
  std::vector<std::string> reasoning;
  // user: images sent after its text (each provider's image block).
  std::vector<ImageData> images;
};

struct ToolSpec {
  std::string name;
  std::string description;
  std::string input_schema_json;  // JSON Schema of the arguments
};

struct ChatRequest {
  std::string model;
  std::string system;
  std::vector<ChatMessage> messages;
  std::vector<ToolSpec> tools;
  int max_tokens = 0;       // 0: the provider's default
  double temperature = -1;  // sampling temperature; below 0: the provider's default
  // A compaction's summary request (planner/compaction.h). Direct clients
  // ignore it; a subagent's relay asks the coordinator for the handoff's
  // facts with it.
  bool handoff = false;
  // A utility call that is not a handoff (WebFetch's answer over a page):
  // a subagent's relay asks for no tools and nothing added.
  bool utility = false;
  // The answer as one JSON object of this JSON Schema, where the provider
  // can be told so: OpenAI's response_format (json_schema), Anthropic's
  // forced call of a tool named answer_name, whose input comes back as the
  // response's text. Optional to the server: one that refuses the field is
  // asked again without it (HttpLlmClient).
  std::string answer_schema_json;
  std::string answer_name;
  // Per-turn facts (the file cache, the todo list, the budget left): sent
  // after the conversation as the last user content, never kept in it, so
  // that the tools, the system prompt and the conversation before them are
  // the same bytes from one request to the next (providers' prompt caches
  // serve a request's longest prefix seen before).
  std::string tail;
  // A stable key for the provider's prompt cache (OpenAI's prompt_cache_key):
  // the session's and agent's ids.
  std::string cache_key;
};

struct ChatResponse {
  std::string text;
  std::vector<ToolCallRequest> tool_calls;
  std::string stop_reason;  // as the server said it
  // True iff the stream ended without its end marker: the response is cut
  // off, and its tool calls may be incomplete.
  bool truncated = false;
  std::vector<std::string> reasoning;  // as ChatMessage::reasoning
  LlmUsage usage;
  int attempts = 1;  // HTTP requests it took
  // With a handoff request through a relay: the ledger's facts of the agent
  // (ledger/handoff_facts.h), which it cannot read itself; and, when the
  // model's call failed, why (the facts come all the same, the text is
  // empty).
  std::string handoff_facts;
  std::string relay_error;
};

// A client reports a request larger than the model's context window as
// OutOfRange, and no other failure with that code: the agent answers it by
// compacting the conversation once and asking again.
inline bool IsContextOverflow(const Status& s) { return s.code() == StatusCode::kOutOfRange; }

// A failed attempt the client will make again: what failed, when the next
// attempt goes (the server's Retry-After when it sent one), and which it is.
struct LlmRetry {
  int next_attempt = 2;  // from 2
  int max_attempts = 5;
  int64_t delay_ms = 0;
  int http_status = 0;  // 0: the transport failed, or the stream broke
  std::string why;
};

class LlmClient {
 public:
  struct Callbacks {
    std::function<void(const std::string& delta)> on_text;  // streamed text
    // Before each retry (optional): the user may be waiting on it.
    std::function<void(const LlmRetry&)> on_retry;
    // Once: the response, or why there is none (after retries).
    std::function<void(const StatusOr<ChatResponse>&)> on_done;
  };
  virtual ~LlmClient() = default;
  virtual const std::string& provider() const = 0;
  // Begins a call. Returns an id for Cancel.
  virtual uint64_t Start(const ChatRequest& request, Callbacks callbacks) = 0;
  // Stops a call; its on_done is not called.
  virtual void Cancel(uint64_t id) = 0;
  // Fires what is due (retries after their backoff). Called every loop turn.
  virtual void Tick() = 0;
  // When Tick must run next, if ever.
  virtual std::optional<SteadyTime> NextTimer() const = 0;
};

}  // namespace odin
