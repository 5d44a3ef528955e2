#include "gates/tool_rules.h"

#include <gtest/gtest.h>

#include "tools/file_tool_args.h"

namespace odin {
namespace {

constexpr char kWs[] = "/w";
constexpr char kHome[] = "/home/u";

bool Covers(const std::string& spec, const std::string& path) { return PathRuleMatches(spec, path, kWs, kHome); }

TEST(ToolRulesTest, ClaudeCodesPathFormsAreReadAsGitignoreReadsThem) {
  // ./x and /x: from the workspace; a bare name: at any depth.
  EXPECT_TRUE(Covers("./.env", "/w/.env"));
  EXPECT_FALSE(Covers("./.env", "/w/sub/.env"));
  EXPECT_TRUE(Covers("/.env", "/w/.env"));
  EXPECT_TRUE(Covers(".env", "/w/.env"));
  EXPECT_TRUE(Covers(".env", "/w/a/b/.env"));
  EXPECT_FALSE(Covers(".env", "/w/.envrc"));
  EXPECT_TRUE(Covers("./.env.*", "/w/.env.local"));
  // A rule on a directory covers what is below it; ** spans directories.
  EXPECT_TRUE(Covers("./secrets/**", "/w/secrets/a/key.pem"));
  EXPECT_TRUE(Covers("./secrets", "/w/secrets/key.pem"));
  EXPECT_TRUE(Covers("secrets/", "/w/secrets/key.pem"));
  EXPECT_TRUE(Covers("src/**/*.ts", "/w/src/a/b/c.ts"));
  EXPECT_TRUE(Covers("src/**/*.ts", "/w/src/c.ts"));
  EXPECT_FALSE(Covers("src/**/*.ts", "/w/lib/c.ts"));
  // //abs and ~/: the file system's root and the user's home.
  EXPECT_TRUE(Covers("//etc/passwd", "/etc/passwd"));
  EXPECT_TRUE(Covers("~/.ssh/**", "/home/u/.ssh/id_ed25519"));
  EXPECT_FALSE(PathRuleMatches("~/.ssh/**", "/home/u/.ssh/id_ed25519", kWs, ""));
  // .. in a rule cannot reach around it.
  EXPECT_TRUE(Covers("./a/../.env", "/w/.env"));
  EXPECT_FALSE(Covers("", "/w/.env"));
}

TEST(ToolRulesTest, BashRulesAreCommandRulesAndOtherToolsRulesAreNot) {
  EXPECT_EQ(CommandRuleWords("Bash(npm run test:*)"), (std::vector<std::string>{"npm", "run", "test"}));
  EXPECT_EQ(CommandRuleWords("Bash(npm run test *)"), (std::vector<std::string>{"npm", "run", "test"}));
  EXPECT_EQ(CommandRuleWords("Bash(curl:*)"), (std::vector<std::string>{"curl"}));
  EXPECT_EQ(CommandRuleWords("Bash(ls*)"), (std::vector<std::string>{"ls*"}));
  EXPECT_EQ(CommandRuleWords("Bash"), (std::vector<std::string>{"*"}));
  EXPECT_EQ(CommandRuleWords("Bash(*)"), (std::vector<std::string>{"*"}));
  EXPECT_EQ(CommandRuleWords("git push"), (std::vector<std::string>{"git", "push"}));
  EXPECT_TRUE(CommandRuleWords("Read(./.env)").empty());
  EXPECT_TRUE(CommandRuleWords("WebFetch(domain:example.com)").empty());
  EXPECT_TRUE(CommandRuleWords("Edit").empty());
  EXPECT_TRUE(CommandRuleWords("WebSearch").empty());
  EXPECT_FALSE(ParseToolRule("make"));
  EXPECT_FALSE(ParseToolRule("rm -rf"));
  EXPECT_FALSE(ParseToolRule("npm install*"));
}

TEST(ToolRulesTest, BashRulesDecideCommandsAsOdinsWordRulesDo) {
  CommandRules rules;
  rules.deny = {"Bash(curl:*)", "Read(./.env)"};
  rules.ask = {"Bash(npm run test *)"};
  EXPECT_EQ(JudgeCommand("curl https://x.example", rules).decision, RuleDecision::kDeny);
  EXPECT_EQ(JudgeCommand("cd sub && curl -s x", rules).decision, RuleDecision::kDeny);
  EXPECT_EQ(JudgeCommand("npm run test --watch", rules).decision, RuleDecision::kAsk);
  // A Read rule is no program's name.
  EXPECT_EQ(JudgeCommand("ls", rules).decision, RuleDecision::kAllow);
  rules.deny = {"Bash"};
  EXPECT_EQ(JudgeCommand("true", rules).decision, RuleDecision::kDeny);
}

TEST(ToolRulesTest, ReadAndEditRulesCoverTheirFamilies) {
  CommandRules rules;
  rules.deny = {"Read(./.env)", "Edit(./generated/**)"};
  rules.ask = {"Agent(reviewer)", "Glob"};
  auto judge = [&](const char* tool, std::string path, std::string type = "") {
    return JudgeToolRules({FindTool(tool), std::move(path), std::move(type)}, rules, kWs, kHome).decision;
  };
  EXPECT_EQ(judge(kReadTool, "/w/.env"), RuleDecision::kDeny);
  EXPECT_EQ(judge(kGrepTool, "/w/.env"), RuleDecision::kDeny);
  EXPECT_EQ(judge(kReadTool, "/w/README"), RuleDecision::kAllow);
  // A Read rule is not an Edit rule.
  EXPECT_EQ(judge(kWriteFileTool, "/w/.env"), RuleDecision::kAllow);
  EXPECT_EQ(judge(kWriteFileTool, "/w/generated/a.c"), RuleDecision::kDeny);
  EXPECT_EQ(judge("EditTool", "/w/generated/a.c"), RuleDecision::kDeny);
  EXPECT_EQ(judge("MultiEditTool", "/w/generated/a.c"), RuleDecision::kDeny);
  EXPECT_EQ(judge(kReadTool, "/w/generated/a.c"), RuleDecision::kAllow);
  // A bare name is the tool; Agent(type) a subagent type.
  EXPECT_EQ(judge(kGlobTool, "/w"), RuleDecision::kAsk);
  EXPECT_EQ(judge(kAgentTool, "", "reviewer"), RuleDecision::kAsk);
  EXPECT_EQ(judge(kAgentTool, "", "explorer"), RuleDecision::kAllow);
  // Deny first, whatever the order of the lists.
  rules.allow = {"Read"};
  EXPECT_EQ(judge(kReadTool, "/w/.env"), RuleDecision::kDeny);
  RuleVerdict v = JudgeToolRules({FindTool(kReadTool), "/w/.env", ""}, rules, kWs, kHome);
  EXPECT_EQ(v.rule, "Read(./.env)");
  EXPECT_NE(v.reason.find("Read of /w/.env denied"), std::string::npos) << v.reason;
}

}  // namespace
}  // namespace odin
