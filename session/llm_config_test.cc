#include "session/llm_config.h"

#include <gtest/gtest.h>

namespace odin {
namespace {

TEST(LlmConfigTest, FlagsBeatEnvironmentWhichBeatsTheConfigFile) {
  Config c;
  c.llm_base_url = "http://from-config/v1";
  c.llm_model = "config-model";
  std::map<std::string, std::string> env = {{"OPENAI_BASE_URL", "http://from-env/v1/"}, {"OPENAI_API_KEY", "k"}};
  auto s = ResolveLlm({}, c, env);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->endpoint.base_url, "http://from-env/v1");
  EXPECT_EQ(s->model, "config-model");
  EXPECT_EQ(s->utility_model, "config-model");
  auto flagged = ResolveLlm({"", "flag-model", "small", "http://from-flag/v1"}, c, env);
  EXPECT_EQ(flagged->endpoint.base_url, "http://from-flag/v1");
  EXPECT_EQ(flagged->model, "flag-model");
  EXPECT_EQ(flagged->utility_model, "small");
  EXPECT_EQ(ResolveLlm({}, c, {{"OPENAI_API_KEY", "k"}})->endpoint.base_url, "http://from-config/v1");
}

TEST(LlmConfigTest, ProviderFromFlagConfigOrEnvironment) {
  Config c;
  EXPECT_EQ(ResolveLlm({}, c, {{"ANTHROPIC_API_KEY", "k"}})->endpoint.provider, "anthropic");
  EXPECT_EQ(ResolveLlm({}, c, {{"ANTHROPIC_API_KEY", "k"}})->endpoint.base_url, "https://api.anthropic.com");
  EXPECT_EQ(ResolveLlm({}, c, {{"OPENAI_API_KEY", "k"}})->endpoint.provider, "openai");
  EXPECT_EQ(ResolveLlm({"demo"}, c, {})->endpoint.provider, "demo");
  c.llm_provider = "anthropic";
  EXPECT_EQ(ResolveLlm({}, c, {{"OPENAI_API_KEY", "k"}, {"ANTHROPIC_API_KEY", "a"}})->endpoint.provider, "anthropic");
  EXPECT_EQ(ResolveLlm({"bogus"}, c, {}).status().code(), StatusCode::kInvalidArgument);
}

TEST(LlmConfigTest, AKeyIsNeededForTheOfficialEndpointOnly) {
  Config c;
  auto missing = ResolveLlm({}, c, {});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("OPENAI_API_KEY is not set"), std::string::npos);
  auto anthropic = ResolveLlm({"anthropic"}, c, {});
  EXPECT_NE(anthropic.status().message().find("ANTHROPIC_API_KEY is not set"), std::string::npos);
  EXPECT_TRUE(ResolveLlm({}, c, {{"OPENAI_BASE_URL", "http://localhost:11434/v1"}}).ok());  // Ollama needs none
}

}  // namespace
}  // namespace odin
