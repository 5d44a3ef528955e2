#include "session/mcp_prompts.h"

#include <gtest/gtest.h>

namespace odin {
namespace {

McpPrompt Weather() { return {"weather", "", {{"city", "", true}, {"state", "", false}}}; }

TEST(McpPromptsTest, ArgumentsByNameOrInOrder) {
  EXPECT_EQ(*McpPromptArguments(Weather(), "Paris"), (std::map<std::string, std::string>{{"city", "Paris"}}));
  EXPECT_EQ(*McpPromptArguments(Weather(), "state=Rhone Lyon"),
            (std::map<std::string, std::string>{{"city", "Lyon"}, {"state", "Rhone"}}));
  EXPECT_EQ(*McpPromptArguments(Weather(), "'New York' NY"),
            (std::map<std::string, std::string>{{"city", "New York"}, {"state", "NY"}}));
  // A word with "=" that names no argument is a value.
  EXPECT_EQ(*McpPromptArguments(Weather(), "a=b"), (std::map<std::string, std::string>{{"city", "a=b"}}));
}

TEST(McpPromptsTest, AMissingRequiredOrAnExtraArgumentIsAnError) {
  StatusOr<std::map<std::string, std::string>> missing = McpPromptArguments(Weather(), "state=NY");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), "missing city (required)");
  StatusOr<std::map<std::string, std::string>> extra = McpPromptArguments(Weather(), "a b c");
  ASSERT_FALSE(extra.ok());
  EXPECT_NE(extra.status().message().find("'c' is one too many"), std::string::npos);
}

TEST(McpPromptsTest, OnlyAConfiguredServersCommandIsAPromptLine) {
  McpServerSpec spec;
  spec.name = "docs";
  McpRegistry registry({spec});
  std::optional<McpPromptLine> line = ParseMcpPromptLine(registry, "/mcp__docs__summary  file.md now");
  ASSERT_TRUE(line);
  EXPECT_EQ(line->server, "docs");
  EXPECT_EQ(line->prompt, "summary");
  EXPECT_EQ(line->args, "file.md now");
  EXPECT_FALSE(ParseMcpPromptLine(registry, "/mcp__other__summary"));
  EXPECT_FALSE(ParseMcpPromptLine(registry, "/mcp"));
  EXPECT_FALSE(ParseMcpPromptLine(registry, "mcp__docs__summary"));
}

}  // namespace
}  // namespace odin
