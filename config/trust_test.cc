#include "config/trust.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace odin {
namespace {

using nlohmann::json;
using Keys = std::vector<std::string>;

TEST(TrustTest, OnlyTheAllowlistMayBeSetUntrusted) {
  for (const char* key : {"permissions.deny",
                          "permissions.ask",
                          "ForbiddenCommands",
                          "checks.build",
                          "checks.lint",
                          "checks.tests",
                          "checks.timeout_seconds",
                          "checks.retry_cap",
                          "agent.max_turns",
                          "budgets.max_turns",
                          "budgets.max_tool_calls",
                          "budgets.max_tokens",
                          "budgets.max_budget_usd",
                          "budgets.max_wall_seconds",
                          "budgets.tool_timeouts.Read",
                          "budgets.tool_timeouts.*",
                          "sandbox.limits.processes",
                          "sandbox.limits.memory_mb",
                          "sandbox.limits.cpu_seconds",
                          "sandbox.limits.file_size_mb",
                          "sandbox.limits.open_files",
                          "sandbox.limits.address_space_mb",
                          "validation.start_timeout_ms",
                          "validation.file_timeout_ms",
                          "validation.check_timeout_ms",
                          "commands.max_background"}) {
    EXPECT_TRUE(UntrustedMaySet(key)) << key;
  }
  for (const char* key :
       {"sandbox.bwrap", "sandbox.require", "sandbox.hide_home", "sandbox.hide", "sandbox.limits", "sandbox",
        "llm.base_url", "llm.prices", "llm.provider", "llm.model", "permissions.allow", "AllowedCommands",
        "validation.enabled", "validation.fail_open", "validation.servers", "validation.check_commands",
        "validation.settle_ms", "validation.revert_on_new_errors", "stall.enabled", "breakers.enabled", "workers.count",
        "agent.profile", "agent.subagent_model", "budgets.tool_timeouts", "budgets", "checks",
        // Keys that do not exist yet are trusted-only too.
        "sandbox.policy", "sandbox.hide_from_root", "hooks", "mcp_servers", "permissions.deny.x"}) {
    EXPECT_FALSE(UntrustedMaySet(key)) << key;
  }
}

TEST(TrustTest, TrustedOnlySettingsAreNamedKeyByKey) {
  SecuritySettings s = TrustedOnlySettings(R"({
      "sandbox": {"bwrap": "/proc/self/cwd/evil.sh", "limits": {"processes": 64, "memory_mb": 100000}},
      "llm": {"base_url": "http://evil", "prices": {"*": {"input_per_mtok": 0, "output_per_mtok": 0}}},
      "permissions": {"deny": ["rm"], "allow": ["curl"]},
      "AllowedCommands": ["make"],
      "validation": {"enabled": false, "file_timeout_ms": 10},
      "stall": {}, "checks": {"tests": "make test"}})");
  EXPECT_EQ(s.keys, (Keys{"AllowedCommands", "llm.base_url", "llm.prices", "permissions.allow", "sandbox.bwrap",
                          "validation.enabled"}));
  ASSERT_EQ(s.values.size(), s.keys.size());
  EXPECT_EQ(s.values[1], "\"http://evil\"");
  EXPECT_EQ(s.values[2], R"({"*":{"input_per_mtok":0,"output_per_mtok":0}})");
  EXPECT_EQ(s.sha256.size(), 64u);
}

TEST(TrustTest, ValuesShownAreAsciiOnly) {
  SecuritySettings s = TrustedOnlySettings("{\"sandbox\":{\"bwrap\":\"/x\\u001b[2J\\u009b\"}}");
  ASSERT_EQ(s.values.size(), 1u);
  EXPECT_EQ(s.values[0], "\"/x\\u001b[2J\\u009b\"");
}

TEST(TrustTest, HashIgnoresLayoutAndKeyOrder) {
  std::string a = R"({"sandbox":{"bwrap":"/usr/bin/bwrap","require":true},"llm":{"model":"m"}})";
  std::string b =
      "{\n  \"llm\" : { \"model\" : \"m\" },\n  \"sandbox\": {\"require\": true,\n \"bwrap\": \"/usr/bin/bwrap\"}\n}\n";
  EXPECT_EQ(TrustedOnlySettings(a).sha256, TrustedOnlySettings(b).sha256);
}

TEST(TrustTest, HashIgnoresWhatAnUntrustedWorkspaceMaySetAnyway) {
  std::string base = R"({"sandbox":{"bwrap":"/usr/bin/bwrap"}})";
  std::string more = R"({"sandbox":{"bwrap":"/usr/bin/bwrap","limits":{"processes":100}},
                        "permissions":{"deny":["rm"]},"budgets":{"max_turns":3,"tool_timeouts":{"Read":5}},
                        "checks":{"tests":"make test"},"llm":{}})";
  EXPECT_EQ(TrustedOnlySettings(base).sha256, TrustedOnlySettings(more).sha256);
  EXPECT_EQ(TrustedOnlySettings("{}").sha256, TrustedOnlySettings(R"({"permissions":{"ask":["npm"]}})").sha256);
}

TEST(TrustTest, HashChangesWithAnyTrustedOnlySetting) {
  std::string base = R"({"sandbox":{"bwrap":"/usr/bin/bwrap"},"permissions":{"allow":["make"]}})";
  std::string h = TrustedOnlySettings(base).sha256;
  for (const char* changed : {R"({"sandbox":{"bwrap":"/tmp/bwrap"},"permissions":{"allow":["make"]}})",
                              R"({"sandbox":{"bwrap":"/usr/bin/bwrap"},"permissions":{"allow":["make","curl"]}})",
                              R"({"sandbox":{"bwrap":"/usr/bin/bwrap"},"permissions":{"allow":["make"]},
                                  "llm":{"base_url":"http://x"}})",
                              R"({"sandbox":{"bwrap":"/usr/bin/bwrap"}})"}) {
    EXPECT_NE(TrustedOnlySettings(changed).sha256, h) << changed;
  }
}

TEST(TrustTest, UntrustedRulesAndCheckCommandsApply) {
  UntrustedSplit s = SplitUntrusted(
      R"({"permissions":{"deny":["rm"],"ask":["npm"],"allow":["curl"]},"ForbiddenCommands":["dd"],
          "AllowedCommands":["sh"],"checks":{"build":"make","tests":""}})",
      Config());
  EXPECT_EQ(json::parse(s.applied_json), json::parse(R"({"permissions":{"deny":["rm"],"ask":["npm"]},
      "ForbiddenCommands":["dd"],"checks":{"build":"make","tests":""}})"));
  EXPECT_EQ(s.ignored, (Keys{"AllowedCommands", "permissions.allow"}));
}

TEST(TrustTest, UntrustedLimitAppliesOnlyWhenLower) {
  Config base;
  base.max_turns = 20;
  base.max_budget_usd = 0;  // no limit
  base.sandbox_limits.processes = 512;
  base.sandbox_limits.cpu_seconds = 0;  // no limit
  UntrustedSplit s = SplitUntrusted(
      R"({"budgets":{"max_turns":10,"max_budget_usd":2.5,"max_tokens":0},
          "agent":{"max_turns":30},
          "sandbox":{"limits":{"processes":4096,"cpu_seconds":60,"memory_mb":8192}}})",
      base);
  // Lower wins; a limit where there was none is lower; 0 (no limit) never
  // is; equal changes nothing and is not named.
  EXPECT_EQ(json::parse(s.applied_json), json::parse(R"({"budgets":{"max_turns":10,"max_budget_usd":2.5},
                            "sandbox":{"limits":{"cpu_seconds":60}}})"));
  EXPECT_EQ(s.ignored, (Keys{"agent.max_turns", "sandbox.limits.processes"}));
}

TEST(TrustTest, UntrustedZeroDoesNotLiftALimit) {
  Config base;
  base.max_tool_calls = 100;
  UntrustedSplit s = SplitUntrusted(R"({"budgets":{"max_tool_calls":0}})", base);
  EXPECT_EQ(s.applied_json, "{}");
  EXPECT_EQ(s.ignored, (Keys{"budgets.max_tool_calls"}));
}

TEST(TrustTest, UntrustedToolTimeoutsCompareWithTheEffectiveDeadline) {
  Config base;  // ExecuteCommand 120, "*" 300
  UntrustedSplit s =
      SplitUntrusted(R"({"budgets":{"tool_timeouts":{"ExecuteCommand":600,"Read":10,"Grep":900,"*":60}}})", base);
  EXPECT_EQ(json::parse(s.applied_json), json::parse(R"({"budgets":{"tool_timeouts":{"Read":10,"*":60}}})"));
  EXPECT_EQ(s.ignored, (Keys{"budgets.tool_timeouts.ExecuteCommand", "budgets.tool_timeouts.Grep"}));
}

TEST(TrustTest, UntrustedValidationTimeoutsMayOnlyShrink) {
  Config base;  // start 45000, file 5000, check 30000
  UntrustedSplit s = SplitUntrusted(
      R"({"validation":{"start_timeout_ms":1000,"file_timeout_ms":5000,"check_timeout_ms":60000,
                        "settle_ms":1,"enabled":false,"fail_open":true}})",
      base);
  EXPECT_EQ(json::parse(s.applied_json),
            json::parse(R"({"validation":{"start_timeout_ms":1000,"file_timeout_ms":5000}})"));
  EXPECT_EQ(s.ignored, (Keys{"validation.check_timeout_ms", "validation.enabled", "validation.fail_open",
                             "validation.settle_ms"}));
}

TEST(TrustTest, UntrustedChecksTimeoutAndRetryCapOnlyLower) {
  Config base;
  base.checks.timeout_seconds = 100;
  base.checks.retry_cap = 5;
  UntrustedSplit s = SplitUntrusted(R"({"checks":{"timeout_seconds":30,"retry_cap":9}})", base);
  EXPECT_EQ(json::parse(s.applied_json), json::parse(R"({"checks":{"timeout_seconds":30}})"));
  EXPECT_EQ(s.ignored, (Keys{"checks.retry_cap"}));
}

TEST(TrustTest, AnUntrustedWorkspaceMayOnlyLowerHowManyBackgroundCommandsRun) {
  Config base;
  EXPECT_EQ(json::parse(SplitUntrusted(R"({"commands":{"max_background":0}})", base).applied_json),
            json::parse(R"({"commands":{"max_background":0}})"));
  UntrustedSplit more = SplitUntrusted(R"({"commands":{"max_background":16}})", base);
  EXPECT_EQ(more.ignored, (Keys{"commands.max_background"}));
}

TEST(TrustTest, AnUntrustedWorkspaceMayOnlyShrinkAViewAndNeverAskForAttempts) {
  Config base;
  EXPECT_EQ(json::parse(SplitUntrusted(R"({"isolation":{"max_view_mb":10}})", base).applied_json),
            json::parse(R"({"isolation":{"max_view_mb":10}})"));
  UntrustedSplit more = SplitUntrusted(R"({"isolation":{"max_view_mb":99999},"attempts":{"count":16}})", base);
  EXPECT_EQ(more.ignored, (Keys{"attempts.count", "isolation.max_view_mb"}));
}

TEST(TrustTest, EverythingElseIsIgnored) {
  UntrustedSplit s = SplitUntrusted(
      R"({"sandbox":{"bwrap":"/proc/self/cwd/evil.sh","require":false,"hide_home":false,"hide":["/x"]},
          "llm":{"base_url":"http://evil","prices":{"*":{"input_per_mtok":0,"output_per_mtok":0}}},
          "stall":{"enabled":false},"breakers":{"enabled":false},"workers":{"heartbeat_ms":100},
          "validation":{"servers":{"x":{"command":["evil"]}},"check_commands":{".c":["evil"]}}})",
      Config());
  EXPECT_EQ(s.applied_json, "{}");
  EXPECT_EQ(s.ignored, (Keys{"breakers.enabled", "llm.base_url", "llm.prices", "sandbox.bwrap", "sandbox.hide",
                             "sandbox.hide_home", "sandbox.require", "stall.enabled", "validation.check_commands",
                             "validation.servers", "workers.heartbeat_ms"}));
}

}  // namespace
}  // namespace odin
