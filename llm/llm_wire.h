#pragma once
// The wire formats Odin speaks to models: OpenAI Chat Completions, OpenAI
// Responses and Anthropic Messages, all streamed as server-sent events. A WireFormat turns
// a ChatRequest into an HTTP request; a StreamDecoder turns the events of one
// response back into a ChatResponse.

#include <functional>
#include <memory>
#include <string>

#include "base/status.h"
#include "llm/http_client.h"
#include "llm/llm.h"
#include "llm/sse_parser.h"

namespace odin {

struct ProviderEndpoint {
  std::string provider;  // "openai", "openai-responses" or "anthropic"
  std::string base_url;  // OpenAI: includes /v1; Anthropic: does not
  std::string api_key;   // may be empty for local servers
  // Send the provider's prompt-cache fields (Anthropic's cache_control
  // breakpoints, OpenAI's prompt_cache_key): on the official endpoints, or
  // where llm.prompt_cache says so. Optional fields (see WireFormat::Build).
  bool prompt_cache = false;
};

class StreamDecoder {
 public:
  virtual ~StreamDecoder() = default;
  // Handles one event; streamed text goes to on_text. Returns an error for an
  // error event from the server.
  virtual Status OnEvent(const SseEvent& event, const std::function<void(const std::string&)>& on_text) = 0;
  // True iff the response's end marker arrived.
  virtual bool finished() const = 0;
  // What arrived so far.
  virtual ChatResponse Response() const = 0;
};

class WireFormat {
 public:
  virtual ~WireFormat() = default;
  // extras: the fields a server may not know (the answer's schema, the
  // prompt cache's); false for a server that refused them.
  virtual HttpRequest Build(const ChatRequest& request, const ProviderEndpoint& endpoint, bool extras) const = 0;
  virtual std::unique_ptr<StreamDecoder> NewDecoder() const = 0;
};

std::unique_ptr<WireFormat> NewOpenAiFormat();
std::unique_ptr<WireFormat> NewAnthropicFormat();
// OpenAI's Responses API (responses_wire.cc).
std::unique_ptr<WireFormat> NewOpenAiResponsesFormat();

// The message in an error response body ({"error": {"message": ...}} in both
// formats), or the body itself, cut short.
std::string ErrorMessageFromBody(const std::string& body);

// True iff Build would add optional fields to this request with extras.
bool HasExtraFields(const ChatRequest& request, const ProviderEndpoint& endpoint);

// True iff an error response refuses one of the optional fields Build adds
// with extras (a 400 or 422 that names it: vLLM, llama.cpp and proxies that
// do not know response_format, tool_choice, cache_control, ...).
bool IsExtraFieldRefusal(int http_status, const std::string& body);

// True iff an error response says the request is larger than the model's
// context window: OpenAI's code context_length_exceeded (or its "maximum
// context length" message), Anthropic's "prompt is too long", a 413.
bool IsContextOverflowResponse(int http_status, const std::string& body);

}  // namespace odin
