#pragma once
// Which model Odin talks to, and how: the provider, its endpoint and key, the
// planner and utility models, retries, timeouts and prices.
//
// Flags win over environment variables (OPENAI_BASE_URL / OPENAI_API_KEY,
// ANTHROPIC_BASE_URL / ANTHROPIC_API_KEY), which win over odinconfig.json. As
// in the official SDKs, OPENAI_BASE_URL includes /v1 and ANTHROPIC_BASE_URL
// does not. API keys come only from the environment.

#include <map>
#include <string>

#include "base/clock.h"
#include "base/status.h"
#include "planner/agent.h"
#include "config/config.h"
#include "llm/llm_wire.h"
#include "llm/retry_policy.h"

namespace odin {

struct LlmFlags {
  std::string provider;        // --provider openai|anthropic|demo
  std::string model;           // --model
  std::string utility_model;   // --utility-model
  std::string base_url;        // --base-url
  int64_t context_window = 0;  // --context-window TOKENS; 0: the config's, else the model family's
  double temperature = -1;     // the planner's (an attempt's variant); below 0: the provider's default
};

struct LlmSettings {
  ProviderEndpoint endpoint;  // endpoint.provider: openai, openai-responses, anthropic or demo
  std::string model;          // the planner model
  std::string utility_model;  // summaries, extraction, reviewers
  RetryPolicy retry;
  Duration timeout = seconds(300);
  int max_tokens = 0;       // 0: the provider's default
  double temperature = -1;  // the planner's; below 0: the provider's default
  PriceTable prices;
  int64_t context_window = 0;  // tokens; 0: the model family's default
  double compact_at = 0.8;     // the share of the window past which the conversation is compacted
};

// Resolves the settings. env maps variable names to values. Returns
// InvalidArgument for an unknown provider and FailedPrecondition, naming the
// variable, when the official endpoint is used without its API key (a local
// server may need none).
StatusOr<LlmSettings> ResolveLlm(const LlmFlags& flags, const Config& config,
                                 const std::map<std::string, std::string>& env);

}  // namespace odin
