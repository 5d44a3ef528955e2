#pragma once
// HttpLlmClient: a model reached over HTTP in one of the two wire formats,
// with the retry policy, a timeout per request, and clear errors: 401/403
// name the API key variable, 404 the base URL and model, an unreachable
// server its URL. A response cut off mid-stream is delivered as what arrived,
// marked truncated, rather than thrown away. Optional fields (the answer's
// schema) that the server refuses are dropped, and left out of every later
// request of this client: a local server that does not know them still
// answers.

#include <map>
#include <memory>
#include <random>

#include "llm/http_client.h"
#include "llm/llm.h"
#include "llm/llm_wire.h"
#include "llm/retry_policy.h"

namespace odin {

class HttpLlmClient final : public LlmClient {
 public:
  // http and clock must outlive the client.
  HttpLlmClient(ProviderEndpoint endpoint, std::unique_ptr<WireFormat> format, HttpClient* http, Clock* clock,
                RetryPolicy retry, Duration request_timeout);
  ~HttpLlmClient() override;

  const std::string& provider() const override { return endpoint_.provider; }
  uint64_t Start(const ChatRequest& request, Callbacks callbacks) override;
  void Cancel(uint64_t id) override;
  void Tick() override;
  std::optional<SteadyTime> NextTimer() const override;

 private:
  struct Call;
  void Attempt(uint64_t id);
  void Finished(uint64_t id, const Status& transport, int http_status);
  void Fail(uint64_t id, const Status& why);

  ProviderEndpoint endpoint_;
  std::unique_ptr<WireFormat> format_;
  HttpClient* http_;
  Clock* clock_;
  RetryPolicy retry_;
  Duration timeout_;
  std::mt19937_64 random_;
  std::map<uint64_t, std::unique_ptr<Call>> calls_;
  uint64_t next_id_ = 1;
  bool extras_refused_ = false;  // the server refused an optional field once
};

}  // namespace odin
