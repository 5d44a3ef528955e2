#include "mcp/mcp_registry.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "gates/command_rules.h"

namespace odin {
namespace {

using nlohmann::json;

McpServerSpec Spec(const std::string& name, bool writable = false) {
  McpServerSpec s;
  s.name = name;
  s.command = "server";
  s.writable = writable;
  return s;
}

std::string Listing(std::vector<json> tools) { return json({{"tools", tools}}).dump(); }

TEST(McpRegistryTest, SplitsToolNames) {
  std::string server, tool;
  EXPECT_TRUE(McpRegistry::SplitName("mcp__fs__read_file", &server, &tool));
  EXPECT_EQ(server, "fs");
  EXPECT_EQ(tool, "read_file");
  EXPECT_TRUE(McpRegistry::SplitName("mcp__a-b__c__d", &server, &tool));
  EXPECT_EQ(server, "a-b");
  EXPECT_EQ(tool, "c__d");
  for (const char* bad : {"Read", "mcp__", "mcp__fs", "mcp__fs__", "mcp____x", "mcp_fs__x"}) {
    EXPECT_FALSE(McpRegistry::SplitName(bad, &server, &tool)) << bad;
  }
}

TEST(McpRegistryTest, AskAndPlanOfferOnlyReadOnlyToolsOfServersThatAreNotWritable) {
  McpRegistry r({Spec("ro"), Spec("rw", /*writable=*/true)});
  json read = {{"name", "look"}, {"read_only", true}};
  json write = {{"name", "change"}, {"read_only", false}};
  ASSERT_TRUE(r.OnListed("ro", Listing({read, write})).ok());
  ASSERT_TRUE(r.OnListed("rw", Listing({read})).ok());
  for (Mode mode : {Mode::kAsk, Mode::kPlan}) {
    EXPECT_TRUE(r.CheckMode("mcp__ro__look", mode).ok());
    Status change = r.CheckMode("mcp__ro__change", mode);
    EXPECT_EQ(change.code(), StatusCode::kPermissionDenied);
    EXPECT_NE(change.ToString().find("readOnlyHint"), std::string::npos) << change.ToString();
    Status writable = r.CheckMode("mcp__rw__look", mode);
    EXPECT_EQ(writable.code(), StatusCode::kPermissionDenied);
    EXPECT_NE(writable.ToString().find("is writable"), std::string::npos) << writable.ToString();
    std::vector<ToolSpec> specs = r.Specs(mode);
    ASSERT_EQ(specs.size(), 1u);
    EXPECT_EQ(specs[0].name, "mcp__ro__look");
  }
  EXPECT_TRUE(r.CheckMode("mcp__ro__change", Mode::kEdit).ok());
  EXPECT_TRUE(r.CheckMode("mcp__rw__look", Mode::kEdit).ok());
  EXPECT_EQ(r.Specs(Mode::kEdit).size(), 3u);
}

TEST(McpRegistryTest, UnknownToolsSayWhy) {
  McpRegistry r({Spec("up"), Spec("down"), Spec("slow")});
  ASSERT_TRUE(r.OnListed("up", Listing({{{"name", "x"}}})).ok());
  r.OnFailed("down", "it exited");
  EXPECT_NE(r.CheckMode("mcp__up__y", Mode::kEdit).ToString().find("has no tool 'y'"), std::string::npos);
  EXPECT_NE(r.CheckMode("mcp__down__x", Mode::kEdit).ToString().find("failed: it exited"), std::string::npos);
  EXPECT_NE(r.CheckMode("mcp__slow__x", Mode::kEdit).ToString().find("still starting"), std::string::npos);
  EXPECT_NE(r.CheckMode("mcp__nobody__x", Mode::kEdit).ToString().find("no MCP server"), std::string::npos);
  EXPECT_EQ(r.CheckMode("mcp__up__x", Mode::kEdit).code(), StatusCode::kOk);
}

TEST(McpRegistryTest, ToolsWhoseNamesModelsCannotTakeAreSkippedAndCounted) {
  McpRegistry r({Spec("s")});
  ASSERT_TRUE(r.OnListed("s", Listing({{{"name", "ok_name"}},
                                       {{"name", "has.dot"}},
                                       {{"name", std::string(70, 'a')}},
                                       {{"name", "no schema"}},
                                       {{"name", "ok_name"}}}))
                  .ok());
  ASSERT_EQ(r.servers()[0].tools.size(), 1u);
  EXPECT_EQ(r.servers()[0].tools[0].input_schema_json, R"({"type":"object"})");
  EXPECT_NE(r.servers()[0].error.find("4 tools skipped"), std::string::npos);  // the repeat too
  // What a server may put in front of the model is bounded.
  std::vector<json> many;
  for (int i = 0; i < 140; ++i) many.push_back({{"name", "t" + std::to_string(i)}});
  many.push_back({{"name", "huge"}, {"input_schema", {{"type", "object"}, {"description", std::string(40000, 'x')}}}});
  ASSERT_TRUE(r.OnListed("s", Listing(many)).ok());
  EXPECT_EQ(r.servers()[0].tools.size(), 128u);
  EXPECT_NE(r.servers()[0].error.find("schemas over 32 KiB"), std::string::npos) << r.servers()[0].error;
  EXPECT_NE(r.servers()[0].error.find("128 per server"), std::string::npos) << r.servers()[0].error;
  // A malformed listing fails the server, never a crash.
  EXPECT_FALSE(r.OnListed("s", "[1,2]").ok());
  EXPECT_EQ(r.servers()[0].state, McpRegistry::State::kFailed);
}

TEST(ToolNameRulesTest, RulesNameAServerAToolOrAPrefix) {
  CommandRules rules;
  rules.deny = {"mcp__db__drop"};
  rules.ask = {"mcp__tracker"};
  rules.allow = {"mcp__fs__read*"};
  EXPECT_EQ(JudgeToolName("mcp__db__drop", rules).decision, RuleDecision::kDeny);
  EXPECT_EQ(JudgeToolName("mcp__db__dropped", rules).decision, RuleDecision::kAllow);  // no rule: allowed
  RuleVerdict ask = JudgeToolName("mcp__tracker__create_issue", rules);
  EXPECT_EQ(ask.decision, RuleDecision::kAsk);
  EXPECT_EQ(ask.ask_keys, std::vector<std::string>{"rule:mcp__tracker"});
  EXPECT_EQ(JudgeToolName("mcp__trackerx__a", rules).decision, RuleDecision::kAllow);  // not the server
  EXPECT_EQ(JudgeToolName("mcp__fs__read_file", rules).rule, "mcp__fs__read*");
  // Deny wins over allow.
  rules.allow.push_back("mcp__db__drop");
  EXPECT_EQ(JudgeToolName("mcp__db__drop", rules).decision, RuleDecision::kDeny);
}

}  // namespace
}  // namespace odin
