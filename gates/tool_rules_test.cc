#include "gates/tool_rules.h"

#include "tools/exec_command.h"

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
  // The workspace's own name is no pattern: "[1]" in it is no class.
  EXPECT_TRUE(PathRuleMatches("./.env", "/t/ws[1]/.env", "/t/ws[1]", kHome));
  EXPECT_FALSE(PathRuleMatches("./.env", "/t/ws1/.env", "/t/ws[1]", kHome));
  EXPECT_TRUE(PathRuleMatches(".env", "/t/w*s/a/.env", "/t/w*s", kHome));
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

TEST(ToolRulesTest, BashRulesMatchAsClaudeCodeReadsThem) {
  auto decides = [](const std::string& rule, const std::string& command) {
    CommandRules rules;
    rules.deny = {rule};
    return JudgeCommand(command, rules).decision == RuleDecision::kDeny;
  };
  // No wildcard: the command exactly.
  EXPECT_TRUE(decides("Bash(npm run build)", "npm run build"));
  EXPECT_FALSE(decides("Bash(npm run build)", "npm run build --prod"));
  // A trailing ":*" or " *": a prefix on a word boundary.
  EXPECT_TRUE(decides("Bash(npm run test:*)", "npm run test --watch"));
  EXPECT_TRUE(decides("Bash(npm run test *)", "npm run test"));
  EXPECT_FALSE(decides("Bash(npm run test *)", "npm run tests"));
  EXPECT_TRUE(decides("Bash(ls*)", "lsof -i"));
  // A * inside spans words.
  EXPECT_TRUE(decides("Bash(cp * /tmp/x)", "cp -r README /tmp/x"));
  EXPECT_FALSE(decides("Bash(cp * /tmp/x)", "cp -r README /tmp/y"));
  EXPECT_TRUE(decides("Bash(docker * rm:*)", "docker -H tcp://h rm c1"));
  EXPECT_TRUE(decides("Bash(git push:*)", "git -C . push origin main"));  // as Odin reads git
  EXPECT_TRUE(decides("Bash(* --version)", "gcc --version"));
  // Quotes hold a word together, as in the command.
  EXPECT_TRUE(decides("Bash(echo \"a b\")", "echo 'a b'"));
  // Each part of a compound command, and programs a wrapper runs.
  EXPECT_TRUE(decides("Bash(rm -rf:*)", "cd build && rm -rf ."));
  EXPECT_TRUE(decides("Bash(rm:*)", "sudo rm x"));
  // Odin's own rules stay prefixes of words, lower-case tool names included.
  EXPECT_TRUE(decides("git push", "git push --force"));
  EXPECT_TRUE(decides("symbols", "symbols --all"));
  // A rule starting with a wildcard names no program for later words.
  CommandRules rules;
  rules.deny = {"Bash(* --version)"};
  EXPECT_EQ(JudgeCommand("find . -name x | xargs grep y", rules).decision, RuleDecision::kAllow);
}

TEST(ToolRulesTest, RulesOdinCannotReadAreNamed) {
  EXPECT_EQ(ToolRuleProblem("Read(./.env)"), "");
  EXPECT_EQ(ToolRuleProblem("Bash(npm run test:*)"), "");
  EXPECT_EQ(ToolRuleProblem("WebFetch(domain:x.org)"), "");
  EXPECT_EQ(ToolRuleProblem("mcp__github__create_issue"), "");
  EXPECT_EQ(ToolRuleProblem("Agent(Explore)"), "");
  EXPECT_NE(ToolRuleProblem("read(./.env)"), "");
  EXPECT_NE(ToolRuleProblem(" Read(./.env)"), "");
  EXPECT_NE(ToolRuleProblem("Bash("), "");
  EXPECT_NE(ToolRuleProblem("Read()"), "");
  EXPECT_NE(ToolRuleProblem("Frobnicate(x)"), "");
  EXPECT_NE(ToolRuleProblem("WebFetch(example.com)"), "");
  EXPECT_NE(ToolRuleProblem("Bash(run_in_background:true)").find("parameter rule"), std::string::npos);
}

// A pattern of many ** against a deep path: the match is polynomial.
TEST(ToolRulesTest, ManyDoubleStarsAgainstADeepPathAnswerAtOnce) {
  std::string spec, path = "/w";
  for (int i = 0; i < 40; ++i) spec += "**/";
  spec += "zz";
  for (int i = 0; i < 60; ++i) path += "/d";
  EXPECT_FALSE(Covers(spec, path));
  EXPECT_TRUE(Covers(spec, path + "/zz"));
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

TEST(ToolRulesTest, ToolListsNarrowToWhatTheyName) {
  std::vector<std::string> list = {
      "Read", "Grep", "Bash(git status:*)", "Bash(git diff)", "Edit(src/**)", "Agent(reviewer)", "mcp__github"};
  EXPECT_TRUE(ToolListOffers(list, kReadTool));
  EXPECT_TRUE(ToolListOffers(list, kExecuteCommandTool));
  EXPECT_TRUE(ToolListOffers(list, "EditTool"));
  EXPECT_TRUE(ToolListOffers(list, kTodoWriteTool));  // bookkeeping, always
  EXPECT_TRUE(ToolListOffers(list, "mcp__github__create_issue"));
  EXPECT_FALSE(ToolListOffers(list, kGlobTool));
  EXPECT_FALSE(ToolListOffers(list, kWebFetchTool));
  EXPECT_FALSE(ToolListOffers(list, "mcp__slack__post"));
  auto refusal = [&](const char* tool, std::string path, std::string command = "", std::string type = "") {
    return ToolListRefusal(list, tool, {FindTool(tool), std::move(path), std::move(type)}, command, kWs, kHome);
  };
  EXPECT_EQ(refusal(kReadTool, "/w/a.c"), "");
  EXPECT_EQ(refusal(kExecuteCommandTool, "", "git status --short"), "");
  EXPECT_EQ(refusal(kExecuteCommandTool, "", "git status && git diff"), "");
  EXPECT_EQ(refusal("EditTool", "/w/src/x.c"), "");
  EXPECT_EQ(refusal(kAgentTool, "", "", "reviewer"), "");
  // What the list leaves out, each with one line naming it.
  EXPECT_NE(refusal(kGlobTool, "/w").find("Glob of /w is not in the tool list"), std::string::npos);
  EXPECT_NE(refusal("EditTool", "/w/README").find("not in the tool list"), std::string::npos);
  EXPECT_NE(refusal(kAgentTool, "", "", "explorer"), "");
  EXPECT_NE(refusal(kExecuteCommandTool, "", "git diff --stat"), "");  // exact: no more words
  EXPECT_NE(refusal(kExecuteCommandTool, "", "git status; rm -rf src"), "");
  EXPECT_NE(refusal(kExecuteCommandTool, "", "git status $(rm -rf src)"), "");
  EXPECT_NE(refusal(kExecuteCommandTool, "", "timeout 5 rm -rf src"), "");
  EXPECT_NE(refusal(kExecuteCommandTool, "", "eval \"$X\""), "");
  EXPECT_NE(refusal(kExecuteCommandTool, "", "git status |"), "");  // does not parse
  EXPECT_EQ(ToolListRefusal(list, "mcp__github__x", {nullptr, "", ""}, "", kWs, kHome), "");
  EXPECT_NE(ToolListRefusal(list, "mcp__slack__x", {nullptr, "", ""}, "", kWs, kHome), "");
  // A wrapper is judged by what it runs, and bare Bash is every command.
  EXPECT_NE(ToolListRefusal({"Bash(timeout:*)"}, kExecuteCommandTool, {FindTool(kExecuteCommandTool), "", ""},
                            "timeout 5 rm -rf src", kWs, kHome),
            "");
  // A program named by a path, a redirection that writes, a variable that
  // changes what runs, git -c: outside the list.
  auto within = [](const std::string& command, const std::string& cwd = "") {
    return CommandWithin(command, {"Bash(git status:*)", "Bash(echo:*)", "Bash(./scripts/ok.sh:*)"}, cwd);
  };
  EXPECT_TRUE(within("git status --short"));
  EXPECT_TRUE(within("./scripts/ok.sh run"));
  EXPECT_TRUE(within("git status . && echo 'for read; declare' \"done\""));
  // The shell's places that run a string or set a variable without an
  // assignment: outside (a second attack review's finds).
  EXPECT_FALSE(within("ODIN_ARGUMENTS='x y' ODIN_ARG_1='x'\necho ${ODIN_ARGUMENTS}"));
  EXPECT_FALSE(within("declare -n ODIN_ARG_1=GIT_CONFIG_PARAMETERS; export GIT_CONFIG_PARAMETERS; git status"));
  EXPECT_FALSE(within("git status -- $((ODIN_ARG_1))"));
  EXPECT_FALSE(within("[[ X -eq 0 ]]; git status"));
  EXPECT_FALSE(within("echo ${X@P}"));
  EXPECT_FALSE(within("read X; echo $X"));
  EXPECT_FALSE(within("for X in 'a[$(touch p)]'; do echo $X; done"));
  EXPECT_FALSE(within("if true; then export PATH=.; fi; git status"));
  EXPECT_FALSE(within("'X=/git' status"));
  EXPECT_FALSE(within("git --git-dir=evil --work-tree=. status"));
  EXPECT_FALSE(within("git -C evil status"));
  EXPECT_FALSE(within("./git status"));
  EXPECT_FALSE(within("tools/ok.sh run"));
  EXPECT_FALSE(within("./scripts/ok.sh", "vendor"));
  EXPECT_FALSE(within("cd vendor && ./scripts/ok.sh"));
  EXPECT_FALSE(within("echo hi > pwned"));
  EXPECT_FALSE(within("PATH=.:$PATH git status"));
  EXPECT_FALSE(within("PATH=.; git status"));
  EXPECT_FALSE(within("env GIT_CONFIG_COUNT=1 git status"));
  EXPECT_FALSE(within("git -c core.fsmonitor='touch x' status"));
  EXPECT_EQ(ToolListRefusal({"Bash"}, kExecuteCommandTool, {FindTool(kExecuteCommandTool), "", ""},
                            "timeout 5 rm -rf src", kWs, kHome),
            "");
}

}  // namespace
}  // namespace odin
