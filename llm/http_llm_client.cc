#include "llm/http_llm_client.h"

#include <algorithm>

#include <spdlog/spdlog.h>

namespace odin {

struct HttpLlmClient::Call {
  HttpRequest request;
  // With optional fields in it: what it was built from, to build it again
  // without them if the server refuses them.
  std::optional<ChatRequest> source;
  std::string answer_name;  // its answer's forced tool, whose input is the text
  Callbacks callbacks;
  int attempts = 0;
  HttpClient::Id http_id = 0;
  std::optional<SteadyTime> retry_at;
  // The attempt in flight.
  HttpResponseHead head;
  std::string error_body;
  std::unique_ptr<StreamDecoder> decoder;
  std::unique_ptr<SseParser> sse;
  Status stream_error;
  bool any_event = false;
};

HttpLlmClient::HttpLlmClient(ProviderEndpoint endpoint, std::unique_ptr<WireFormat> format, HttpClient* http,
                             Clock* clock, RetryPolicy retry, Duration request_timeout)
    : endpoint_(std::move(endpoint)),
      format_(std::move(format)),
      http_(http),
      clock_(clock),
      retry_(retry),
      timeout_(request_timeout),
      random_(std::random_device()()) {}

HttpLlmClient::~HttpLlmClient() {
  for (auto& [id, c] : calls_) {
    if (c->http_id != 0) http_->Cancel(c->http_id);
  }
}

uint64_t HttpLlmClient::Start(const ChatRequest& request, Callbacks callbacks) {
  uint64_t id = next_id_++;
  auto c = std::make_unique<Call>();
  bool extras = !extras_refused_ && HasExtraFields(request, endpoint_);
  c->request = format_->Build(request, endpoint_, extras);
  c->request.total_timeout = timeout_;
  if (extras) c->source = request;
  if (!request.answer_schema_json.empty())
    c->answer_name = request.answer_name.empty() ? "answer" : request.answer_name;
  c->callbacks = std::move(callbacks);
  calls_[id] = std::move(c);
  Attempt(id);
  return id;
}

void HttpLlmClient::Cancel(uint64_t id) {
  auto it = calls_.find(id);
  if (it == calls_.end()) return;
  if (it->second->http_id != 0) http_->Cancel(it->second->http_id);
  calls_.erase(it);
}

void HttpLlmClient::Attempt(uint64_t id) {
  Call& c = *calls_.at(id);
  ++c.attempts;
  c.retry_at.reset();
  c.head = HttpResponseHead();
  c.error_body.clear();
  c.stream_error = Status::OK();
  c.any_event = false;
  c.decoder = format_->NewDecoder();
  Call* call = &c;
  c.sse = std::make_unique<SseParser>([this, call](const SseEvent& e) {
    if (!call->stream_error.ok()) return;
    call->any_event = true;
    call->stream_error = call->decoder->OnEvent(e, call->callbacks.on_text);
  });
  HttpClient::Callbacks cb;
  cb.on_head = [call](const HttpResponseHead& h) { call->head = h; };
  cb.on_body = [call](std::string_view data) {
    // The first bytes of any body are kept, for the error message when the
    // response is not what it should be.
    if (call->error_body.size() < 8192) call->error_body.append(data.substr(0, 8192 - call->error_body.size()));
    if (call->head.status == 200) call->sse->Feed(data);
  };
  cb.on_done = [this, id](const Status& s, int status) { Finished(id, s, status); };
  c.http_id = http_->Start(c.request, std::move(cb));
}

void HttpLlmClient::Fail(uint64_t id, const Status& why) {
  auto it = calls_.find(id);
  if (it == calls_.end()) return;
  Callbacks cb = std::move(it->second->callbacks);
  calls_.erase(it);
  if (cb.on_done) cb.on_done(why);
}

void HttpLlmClient::Finished(uint64_t id, const Status& transport, int http_status) {
  auto it = calls_.find(id);
  if (it == calls_.end()) return;
  Call& c = *it->second;
  c.http_id = 0;
  const std::string& url = c.request.url;
  std::string key_var = endpoint_.provider == "anthropic" ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY";
  std::string url_var = endpoint_.provider == "anthropic" ? "ANTHROPIC_BASE_URL" : "OPENAI_BASE_URL";

  // A 200 that delivered events is an answer, even if cut off or ended by an
  // error event: what streamed has been shown, so it is not silently asked
  // again; the model hears that it was cut off.
  ChatResponse partial = c.decoder->Response();
  bool output_seen = !partial.text.empty() || !partial.tool_calls.empty();
  if (http_status == 200 && (c.stream_error.ok() ? c.any_event : output_seen)) {
    ChatResponse response = std::move(partial);
    if (!c.answer_name.empty() && response.text.empty()) {
      // The forced tool call of a structured answer: its input is the text.
      auto call = std::find_if(response.tool_calls.begin(), response.tool_calls.end(),
                               [&c](const ToolCallRequest& t) { return t.name == c.answer_name; });
      if (call != response.tool_calls.end()) {
        response.text = call->arguments_json;
        response.tool_calls.erase(call);
      }
    }
    if (!c.stream_error.ok()) response.truncated = true;
    response.truncated = response.truncated || c.sse->pending();
    response.attempts = c.attempts;
    Callbacks cb = std::move(c.callbacks);
    calls_.erase(it);
    if (cb.on_done) cb.on_done(response);
    return;
  }
  if (http_status == 200 && transport.ok() && !c.any_event) {
    // Not a stream: a server that ignores "stream": true, or a proxy's page.
    return Fail(id, Status::Unavailable(endpoint_.provider + " at " + url, "answered 200 without a stream of events: " +
                                                                               ErrorMessageFromBody(c.error_body)));
  }
  Status why;
  if (!c.stream_error.ok()) {
    why = c.stream_error.WithContext(url);
  } else if (http_status == 0) {
    why = transport;
  } else {
    why = Status::Unavailable(url, "HTTP " + std::to_string(http_status) + ": " + ErrorMessageFromBody(c.error_body));
  }
  if (IsContextOverflowResponse(http_status, c.error_body)) {
    // Asking again cannot help: the request must shrink (the agent compacts).
    return Fail(id, Status::OutOfRange(endpoint_.provider + " at " + url,
                                       "the request is larger than the model's context window: HTTP " +
                                           std::to_string(http_status) + ": " + ErrorMessageFromBody(c.error_body)));
  }
  if (c.source && IsExtraFieldRefusal(http_status, c.error_body)) {
    // A server without structured output or prompt caching: the prompt
    // asks for the form all the same. Asked again at once, and never with
    // the field again. (After the overflow check: a request too long is
    // never sent twice.)
    spdlog::info(
        "{}: the server refused an optional field (structured output or prompt caching); asking again "
        "without it",
        url);
    extras_refused_ = true;
    HttpRequest plain = format_->Build(*c.source, endpoint_, false);
    plain.total_timeout = timeout_;
    c.request = std::move(plain);
    c.source.reset();
    --c.attempts;  // not a failed attempt of the request the server takes
    return Attempt(id);
  }
  bool retryable = !c.stream_error.ok() || IsRetryable(http_status, transport);
  if (retryable && c.attempts <= retry_.max_retries) {
    auto ra = c.head.headers.find("retry-after");
    double jitter = std::uniform_real_distribution<double>(0.0, 1.0)(random_);
    Duration delay =
        RetryDelay(retry_, c.attempts - 1, ra == c.head.headers.end() ? "" : ra->second, jitter, clock_->WallMillis());
    spdlog::info("{} (attempt {}); retrying in {} ms", why.message(), c.attempts, ToMillis(delay));
    c.retry_at = clock_->Now() + delay;
    if (c.callbacks.on_retry) {
      c.callbacks.on_retry({c.attempts + 1, retry_.max_retries + 1, ToMillis(delay), http_status, why.message()});
    }
    return;
  }
  if (http_status == 401 || http_status == 403) {
    return Fail(id, Status::PermissionDenied(endpoint_.provider + " at " + url,
                                             "HTTP " + std::to_string(http_status) + ": " +
                                                 ErrorMessageFromBody(c.error_body) + " (check " + key_var + ")"));
  }
  if (http_status == 404) {
    return Fail(id,
                Status::NotFound(endpoint_.provider + " at " + url, "HTTP 404: " + ErrorMessageFromBody(c.error_body) +
                                                                        " (check the model name and " + url_var + ")"));
  }
  if (retryable) {
    return Fail(id, Status(why.code(), "gave up after " + std::to_string(c.attempts) + " attempts", why.message()));
  }
  Fail(id, why);
}

void HttpLlmClient::Tick() {
  SteadyTime now = clock_->Now();
  std::vector<uint64_t> due;
  for (auto& [id, c] : calls_) {
    if (c->retry_at && now >= *c->retry_at) due.push_back(id);
  }
  for (uint64_t id : due) Attempt(id);
}

std::optional<SteadyTime> HttpLlmClient::NextTimer() const {
  std::optional<SteadyTime> t;
  for (const auto& [id, c] : calls_) {
    if (c->retry_at && (!t || *c->retry_at < *t)) t = c->retry_at;
  }
  return t;
}

}  // namespace odin
