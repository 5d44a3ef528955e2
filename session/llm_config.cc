#include "session/llm_config.h"

#include "base/secrets.h"

namespace odin {
namespace {

constexpr const char kOpenAiUrl[] = "https://api.openai.com/v1";
constexpr const char kAnthropicUrl[] = "https://api.anthropic.com";

std::string Get(const std::map<std::string, std::string>& env, const std::string& name) {
  auto it = env.find(name);
  return it == env.end() ? "" : it->second;
}

}  // namespace

StatusOr<LlmSettings> ResolveLlm(const LlmFlags& flags, const Config& config,
                                 const std::map<std::string, std::string>& env) {
  LlmSettings s;
  std::string provider = !flags.provider.empty() ? flags.provider : config.llm_provider;
  if (provider.empty()) {
    bool anthropic = !Get(env, "ANTHROPIC_API_KEY").empty() || !Get(env, "ANTHROPIC_BASE_URL").empty();
    bool openai = !Get(env, "OPENAI_API_KEY").empty() || !Get(env, "OPENAI_BASE_URL").empty();
    provider = anthropic && !openai ? "anthropic" : "openai";
  }
  if (provider != "openai" && provider != "openai-responses" && provider != "anthropic" && provider != "demo") {
    return Status::InvalidArgument("provider '" + provider + "'",
                                   "expected openai, openai-responses, anthropic or demo");
  }
  s.endpoint.provider = provider;
  if (provider != "demo") {
    // openai-responses: OpenAI's Responses API, at OpenAI's address and key.
    const bool openai = provider != "anthropic";
    std::string prefix = openai ? "OPENAI" : "ANTHROPIC";
    std::string official = openai ? kOpenAiUrl : kAnthropicUrl;
    std::string url = !flags.base_url.empty()                   ? flags.base_url
                      : !Get(env, prefix + "_BASE_URL").empty() ? Get(env, prefix + "_BASE_URL")
                      : !config.llm_base_url.empty()            ? config.llm_base_url
                                                                : official;
    while (!url.empty() && url.back() == '/') url.pop_back();
    s.endpoint.base_url = url;
    s.endpoint.api_key = Get(env, prefix + "_API_KEY");
    // Where the fields are known to be taken, unless config says otherwise:
    // an unknown one makes some compatible servers refuse the request (then
    // asked again without it, HttpLlmClient).
    s.endpoint.prompt_cache = config.llm_prompt_cache == "on" || (config.llm_prompt_cache == "auto" && url == official);
    if (s.endpoint.api_key.empty() && url == official) {
      return Status::FailedPrecondition(
          prefix + "_API_KEY is not set",
          "it is needed for " + provider + " at " + url + " (or set " + prefix +
              "_BASE_URL to a local server; --provider demo runs the scripted demo model, no key needed)");
    }
  }
  std::string fallback = provider == "openai"             ? "gpt-4.1"
                         : provider == "openai-responses" ? "gpt-5"
                         : provider == "anthropic"        ? "claude-sonnet-4-5"
                                                          : "demo";
  s.model = !flags.model.empty() ? flags.model : !config.llm_model.empty() ? config.llm_model : fallback;
  s.utility_model = !flags.utility_model.empty()        ? flags.utility_model
                    : !config.llm_utility_model.empty() ? config.llm_utility_model
                                                        : s.model;
  s.retry.max_retries = config.llm_max_retries;
  s.timeout = seconds(config.llm_timeout_seconds);
  s.max_tokens = config.llm_max_tokens;
  s.temperature = flags.temperature;
  for (const auto& [model, p] : config.llm_prices) {
    s.prices[model] = {p.input_per_mtok, p.output_per_mtok, p.cache_read_per_mtok, p.cache_write_per_mtok};
  }
  if (flags.context_window != 0 &&
      (flags.context_window < kMinContextWindow || flags.context_window > kMaxContextWindow)) {
    return Status::InvalidArgument("--context-window", "must be between " + std::to_string(kMinContextWindow) +
                                                           " and " + std::to_string(kMaxContextWindow) + " tokens");
  }
  s.context_window = flags.context_window != 0 ? flags.context_window : config.llm_context_window;
  s.compact_at = config.llm_compact_at;
  return s;
}

}  // namespace odin
