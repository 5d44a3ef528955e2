#include "config/config.h"
#include "config/trust.h"

#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gates/validators.h"

namespace odin {
namespace {

TEST(ConfigTest, DefaultsWhenEmpty) {
  auto c = ParseConfig("{}", "odinconfig.json");
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->sandbox_require);
  EXPECT_EQ(c->artifact_cap_bytes, 8u << 20);
  EXPECT_EQ(c->output_head_bytes, 65536u);
}

TEST(ConfigTest, ReadsEverySection) {
  auto c = ParseConfig(R"({"sandbox":{"require":true,"bwrap":"/opt/bwrap"},
                           "workers":{"count":4,"heartbeat_ms":100},
                           "ledger":{"artifact_cap_bytes":1024},
                           "output":{"head_bytes":10,"tail_bytes":20}})",
                       "x");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->sandbox_require);
  EXPECT_EQ(c->bwrap_path, "/opt/bwrap");
  EXPECT_EQ(c->worker_count, 4);
  EXPECT_EQ(c->heartbeat_ms, 100);
  EXPECT_EQ(c->artifact_cap_bytes, 1024u);
  EXPECT_EQ(c->output_tail_bytes, 20u);
}

// Prices: input and output required, the cache's optional; anything else,
// a negative, a non-number or an absurd price is refused naming the key.
TEST(ConfigTest, PricesWithAndWithoutCachePrices) {
  auto c = ParseConfig(R"({"llm":{"prices":{"m":{"input_per_mtok":3,"output_per_mtok":15,"cache_read_per_mtok":0.3,
                                                   "cache_write_per_mtok":3.75},
                                             "*":{"input_per_mtok":1,"output_per_mtok":2}}}})",
                       "x");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->llm_prices["m"].cache_read_per_mtok, 0.3);
  EXPECT_EQ(c->llm_prices["m"].cache_write_per_mtok, 3.75);
  EXPECT_FALSE(c->llm_prices["*"].cache_read_per_mtok.has_value());
  for (const char* bad :
       {R"({"input_per_mtok":1})", R"({"input_per_mtok":1,"output_per_mtok":-1})",
        R"({"input_per_mtok":1,"output_per_mtok":"2"})", R"({"input_per_mtok":1,"output_per_mtok":1e300})",
        R"({"input_per_mtok":1,"output_per_mtok":1,"cache_per_mtok":1})"}) {
    auto r = ParseConfig(std::string(R"({"llm":{"prices":{"m":)") + bad + "}}}", "x");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("llm.prices.m"), std::string::npos) << r.status().message();
  }
}

TEST(ConfigTest, BeforeImageCaps) {
  auto d = ParseConfig("{}", "f");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->before_image_cap_bytes, 1u << 20);
  EXPECT_EQ(d->before_images_per_command_bytes, 64u << 20);
  auto c = ParseConfig(R"({"ledger":{"before_image_cap_bytes":4,"before_images_per_command_bytes":8}})", "f");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->before_image_cap_bytes, 4u);
  EXPECT_EQ(c->before_images_per_command_bytes, 8u);
  EXPECT_EQ(ParseConfig(R"({"ledger":{"before_image_cap_bytes":2147483648}})", "f").status().message(),
            "f: ledger.before_image caps are at most 1073741824 bytes");
}

TEST(ConfigTest, ContextWindowAndCompaction) {
  auto d = ParseConfig("{}", "f");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->llm_context_window, 0);
  EXPECT_DOUBLE_EQ(d->llm_compact_at, 0.8);
  auto c = ParseConfig(R"({"llm":{"context_window":32000,"compact_at":0.5}})", "f");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->llm_context_window, 32000);
  EXPECT_DOUBLE_EQ(c->llm_compact_at, 0.5);
  EXPECT_EQ(ParseConfig(R"({"llm":{"context_window":10}})", "f").status().message(),
            "f: llm.context_window must be between 1000 and 100000000 tokens");
  EXPECT_EQ(ParseConfig(R"({"llm":{"context_window":-5}})", "f").status().message(),
            "f: llm.context_window must be a non-negative integer");
  for (const char* bad :
       {R"({"llm":{"compact_at":1.5}})", R"({"llm":{"compact_at":0}})", R"({"llm":{"compact_at":"x"}})"}) {
    EXPECT_EQ(ParseConfig(bad, "f").status().message(), "f: llm.compact_at must be a number between 0.1 and 0.95")
        << bad;
  }
}

TEST(ConfigTest, FileCacheSettings) {
  auto c = ParseConfig(R"({"file_cache":{"max_entries":7,"eviction":"lfu"}})", "f");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->file_cache.max_entries, 7u);
  EXPECT_EQ(c->file_cache.policy, EvictionPolicy::kLfu);
  EXPECT_EQ(ParseConfig(R"({"file_cache":{"eviction":"fifo"}})", "f").status().message(),
            "f: file_cache.eviction must be lru, lfu or hybrid");
}

TEST(ConfigTest, UnknownKeyIsAnErrorNamingIt) {
  auto c = ParseConfig(R"({"sandbox":{"requir":true}})", "/ws/odinconfig.json");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(),
            "/ws/odinconfig.json: unknown key 'sandbox.requir' (did you mean 'sandbox.require'?)");
}

TEST(ConfigTest, WrongTypeIsAnError) {
  auto c = ParseConfig(R"({"sandbox":{"require":"yes"}})", "f");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(), "f: sandbox.require must be true or false");
  EXPECT_FALSE(ParseConfig(R"({"workers":{"count":-1}})", "f").ok());
}

TEST(ConfigTest, BackgroundCommandsAtOnceAreFourUnlessSaidBetweenZeroAndSixteen) {
  EXPECT_EQ(Config().max_background, 4);
  auto c = ParseConfig(R"({"commands":{"max_background":0}})", "f");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->max_background, 0);
  auto high = ParseConfig(R"({"commands":{"max_background":17}})", "f");
  ASSERT_FALSE(high.ok());
  EXPECT_EQ(high.status().message(), "f: commands.max_background must be between 0 and 16");
  EXPECT_FALSE(ParseConfig(R"({"commands":{"max_jobs":2}})", "f").ok());
}

TEST(ConfigTest, AttemptsAndIsolationAreBounded) {
  EXPECT_EQ(Config().attempts, 1);
  EXPECT_EQ(Config().isolation_max_view_mb, 8192);
  auto c = ParseConfig(
      R"({"attempts":{"count":3,"local":1,"budget":{"max_tool_calls":7,"max_budget_usd":0.5},"variants":[{"model":"m2","temperature":0.7},{"hint":"try the small fix"}]},"isolation":{"max_view_mb":100}})",
      "f");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->attempts, 3);
  EXPECT_EQ(c->attempts_local, 1);
  EXPECT_EQ(c->attempt_budget.max_tool_calls, 7);
  EXPECT_EQ(c->attempt_budget.max_tokens, 0);
  EXPECT_EQ(c->attempt_budget.max_budget_usd, 0.5);
  ASSERT_EQ(c->attempt_variants.size(), 2u);
  EXPECT_EQ(c->attempt_variants[0].model, "m2");
  EXPECT_EQ(c->attempt_variants[1].hint, "try the small fix");
  EXPECT_EQ(c->attempt_variants[0].temperature, 0.7);
  EXPECT_LT(c->attempt_variants[1].temperature, 0);
  EXPECT_EQ(c->isolation_max_view_mb, 100);
  for (const char* bad :
       {R"({"attempts":{"count":0}})", R"({"attempts":{"count":17}})", R"({"attempts":{"variants":[{"temp":1}]}})",
        R"({"attempts":{"variants":{}}})", R"({"isolation":{"max_view_mb":0}})", R"({"isolation":{"max_mb":1}})",
        R"({"attempts":{"local":-1}})", R"({"attempts":{"local":17}})", R"({"attempts":{"budget":{"max_turns":1}}})",
        R"({"attempts":{"budget":{"max_budget_usd":-1}}})"}) {
    EXPECT_FALSE(ParseConfig(bad, "f").ok()) << bad;
  }
  // A number out of its range: one line naming the key and the range.
  auto hot = ParseConfig(R"({"attempts":{"variants":[{"temperature":2.5}]}})", "f");
  ASSERT_FALSE(hot.ok());
  EXPECT_NE(hot.status().message().find("attempts.variants[].temperature must be a number from 0 to 2"),
            std::string::npos)
      << hot.status().message();
  auto rich = ParseConfig(R"({"budgets":{"max_budget_usd":"5"}})", "f");
  ASSERT_FALSE(rich.ok());
  EXPECT_NE(rich.status().message().find("budgets.max_budget_usd must be a number from 0 to 1000000"),
            std::string::npos)
      << rich.status().message();
}

TEST(ConfigTest, OntoABasePlainSettingsReplaceAndRulesCombine) {
  auto base = ParseConfig(R"({"permissions":{"deny":["rm"],"ask":["npm"],"allow":["make"]},"ForbiddenCommands":["dd"],
                              "sandbox":{"hide":["/a"],"bwrap":"/opt/bwrap"},"llm":{"model":"m1","max_retries":2},
                              "file_cache":{"eviction":"lfu"},"budgets":{"tool_timeouts":{"Read":10}}})",
                          "user");
  ASSERT_TRUE(base.ok()) << base.status().ToString();
  auto c = ParseConfig(R"({"permissions":{"deny":["curl"],"allow":["ninja"]},"AllowedCommands":["cmake"],
                           "sandbox":{"hide":["/b"]},"llm":{"model":"m2"},"file_cache":{"max_entries":9},
                           "budgets":{"tool_timeouts":{"Grep":20}}})",
                       "ws", *base);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->permissions.deny, (std::vector<std::string>{"rm", "dd", "curl"}));
  EXPECT_EQ(c->permissions.ask, std::vector<std::string>{"npm"});
  EXPECT_EQ(c->permissions.allow, (std::vector<std::string>{"make", "ninja", "cmake"}));
  EXPECT_EQ(c->sandbox_hide, (std::vector<std::string>{"/a", "/b"}));
  EXPECT_EQ(c->bwrap_path, "/opt/bwrap");  // not set here: the base's
  EXPECT_EQ(c->llm_model, "m2");
  EXPECT_EQ(c->llm_max_retries, 2);
  EXPECT_EQ(c->file_cache.policy, EvictionPolicy::kLfu);  // the base's, though the section is set
  EXPECT_EQ(c->file_cache.max_entries, 9u);
  EXPECT_EQ(c->tool_timeouts.at("Read"), 10);
  EXPECT_EQ(c->tool_timeouts.at("Grep"), 20);
}

TEST(ConfigTest, MalformedJsonIsAnErrorNamingTheLineAndColumn) {
  auto c = ParseConfig("{\n  \"checks\": {\n    \"tests\": [\"make\", ]\n  }\n}\n", "f");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message().rfind("f: not valid JSON: parse error at line 3, column 23: ", 0), 0u)
      << c.status().message() << c.status().message();
  EXPECT_EQ(c.status().message().find("[json.exception"), std::string::npos) << c.status().message();
}

// Issue 47, item 16: a mistyped key names the key it most likely meant.
TEST(ConfigTest, AnUnknownKeySuggestsTheNearestKnownOne) {
  auto c = ParseConfig(R"({"checks": {"test": ["make", "test"]}})", "f");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(), "f: unknown key 'checks.test' (did you mean 'checks.tests'?)");
  auto top = ParseConfig(R"({"Sandbox": {}})", "f");
  EXPECT_EQ(top.status().message(), "f: unknown key 'Sandbox' (did you mean 'sandbox'?)");
  auto far = ParseConfig(R"({"checks": {"frobnicate": 1}})", "f");
  EXPECT_EQ(far.status().message(), "f: unknown key 'checks.frobnicate'");
}

// validation

const ServerSpec* FindServer(const ValidationOptions& o, const std::string& name) {
  for (const ServerSpec& s : o.servers) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

// Every program is installed: at /bin/<name>, or where a path says.
std::string Installed(const std::string& name) { return name[0] == '/' ? name : "/bin/" + name; }

TEST(ConfigTest, ValidationDefaultsWhenAbsent) {
  auto c = ParseConfig("{}", "f");
  ASSERT_TRUE(c.ok());
  ValidationOptions d = DefaultValidationOptions();
  EXPECT_TRUE(c->validation.enabled);
  EXPECT_EQ(c->validation.start_timeout_ms, d.start_timeout_ms);
  EXPECT_EQ(c->validation.file_timeout_ms, d.file_timeout_ms);
  ASSERT_EQ(c->validation.servers.size(), d.servers.size());
  for (size_t i = 0; i < d.servers.size(); ++i) {
    EXPECT_EQ(c->validation.servers[i].name, d.servers[i].name);
    EXPECT_EQ(c->validation.servers[i].command, d.servers[i].command);
  }
  EXPECT_EQ(c->validation.check_commands, d.check_commands);
  EXPECT_EQ(c->profile, "auto");
  EXPECT_FALSE(c->checks.build.has_value());
  EXPECT_FALSE(c->checks.lint.has_value());
  EXPECT_FALSE(c->checks.tests.has_value());
  EXPECT_EQ(c->checks.timeout_seconds, 120);
  EXPECT_EQ(c->checks.retry_cap, 5);
}

TEST(ConfigTest, ValidationSettings) {
  auto c = ParseConfig(R"({"validation":{"enabled":false,"start_timeout_ms":1000,"file_timeout_ms":200,
                                         "settle_ms":0,"check_timeout_ms":3000,
                                         "revert_on_new_errors":true,"fail_open":true}})",
                       "f");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_FALSE(c->validation.enabled);
  EXPECT_EQ(c->validation.start_timeout_ms, 1000u);
  EXPECT_EQ(c->validation.file_timeout_ms, 200u);
  EXPECT_EQ(c->validation.settle_ms, 0u);
  EXPECT_EQ(c->validation.check_timeout_ms, 3000u);
  EXPECT_TRUE(c->validation.revert_on_new_errors);
  EXPECT_TRUE(c->validation.fail_open);
}

TEST(ConfigTest, ValidationTimeoutsMustBeAtLeastOneMillisecond) {
  for (const char* key : {"start_timeout_ms", "file_timeout_ms", "check_timeout_ms"}) {
    auto c = ParseConfig(std::string(R"({"validation":{")") + key + R"(":0}})", "f");
    ASSERT_FALSE(c.ok()) << key;
    EXPECT_EQ(c.status().message(), "f: validation timeouts must be at least 1 ms") << key;
  }
  auto negative = ParseConfig(R"({"validation":{"file_timeout_ms":-5}})", "f");
  ASSERT_FALSE(negative.ok());
  EXPECT_EQ(negative.status().message(), "f: validation.file_timeout_ms must be a non-negative integer");
}

TEST(ConfigTest, ValidationWrongTypesAreErrors) {
  EXPECT_EQ(ParseConfig(R"({"validation":{"enabled":"no"}})", "f").status().message(),
            "f: validation.enabled must be true or false");
  EXPECT_EQ(ParseConfig(R"({"validation":[]})", "f").status().message(), "f: validation must be an object");
  EXPECT_EQ(ParseConfig(R"({"validation":{"servers":[]}})", "f").status().message(),
            "f: validation.servers must be an object");
  EXPECT_EQ(ParseConfig(R"({"validation":{"check_commands":[]}})", "f").status().message(),
            "f: validation.check_commands must be an object");
}

TEST(ConfigTest, UnknownValidationKeysAreErrors) {
  EXPECT_EQ(ParseConfig(R"({"validation":{"enable":true}})", "f").status().message(),
            "f: unknown key 'validation.enable' (did you mean 'validation.enabled'?)");
  EXPECT_EQ(ParseConfig(R"({"validation":{"servers":{"zls":{"cmd":["zls"]}}}})", "f").status().message(),
            "f: unknown key 'validation.servers.zls.cmd'");
}

TEST(ConfigTest, AServerNamedLikeADefaultReplacesItInPlace) {
  auto c = ParseConfig(R"({"validation":{"servers":{"clangd":{"command":["/opt/clangd","--log=verbose"],
                                                              "file_timeout_ms":9000}}}})",
                       "f");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ValidationOptions d = DefaultValidationOptions();
  ASSERT_EQ(c->validation.servers.size(), d.servers.size());
  const ServerSpec& clangd = c->validation.servers[0];
  EXPECT_EQ(clangd.name, "clangd");
  EXPECT_EQ(clangd.command, (std::vector<std::string>{"/opt/clangd", "--log=verbose"}));
  EXPECT_EQ(clangd.extensions, FindServer(d, "clangd")->extensions);  // not given: kept
  EXPECT_EQ(clangd.file_timeout_ms, 9000u);
  FileValidator v = ResolveValidator(c->validation, "/ws/a.cc", Installed);
  EXPECT_EQ(v.server_name, "clangd");
  EXPECT_EQ(v.server_command, (std::vector<std::string>{"/opt/clangd", "--log=verbose"}));
  EXPECT_EQ(v.file_timeout_ms, 9000u);
}

TEST(ConfigTest, ReplacingOnlyTheExtensionsKeepsTheCommand) {
  auto c = ParseConfig(R"({"validation":{"servers":{"clangd":{"extensions":[".cu",".cc"]}}}})", "f");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const ServerSpec* clangd = FindServer(c->validation, "clangd");
  ASSERT_NE(clangd, nullptr);
  EXPECT_EQ(clangd->command, FindServer(DefaultValidationOptions(), "clangd")->command);
  EXPECT_EQ(clangd->extensions, (std::vector<std::string>{".cu", ".cc"}));
  EXPECT_EQ(ResolveValidator(c->validation, "/ws/k.cu", Installed).server_name, "clangd");
  EXPECT_EQ(ResolveValidator(c->validation, "/ws/a.cpp", Installed).server_name, "");
}

TEST(ConfigTest, ANewServerComesBeforeTheDefaults) {
  auto c = ParseConfig(R"({"validation":{"servers":{"ccls":{"command":["ccls"],"extensions":[".cc"],
                                                            "start_timeout_ms":7000}}}})",
                       "f");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->validation.servers.size(), DefaultValidationOptions().servers.size() + 1);
  const ServerSpec& ccls = c->validation.servers[0];
  EXPECT_EQ(ccls.name, "ccls");
  EXPECT_EQ(ccls.command, (std::vector<std::string>{"ccls"}));
  EXPECT_EQ(ccls.extensions, (std::vector<std::string>{".cc"}));
  EXPECT_EQ(ccls.start_timeout_ms, 7000u);
  EXPECT_EQ(c->validation.servers[1].name, "clangd");
  // Preferred over clangd for the files both serve.
  EXPECT_EQ(ResolveValidator(c->validation, "/ws/a.cc", Installed).server_name, "ccls");
  EXPECT_EQ(ResolveValidator(c->validation, "/ws/a.cpp", Installed).server_name, "clangd");
}

TEST(ConfigTest, AnEmptyCommandDisablesAServer) {
  auto c = ParseConfig(R"({"validation":{"servers":{"pyright":{"command":[]}}}})", "f");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const ServerSpec* pyright = FindServer(c->validation, "pyright");
  ASSERT_NE(pyright, nullptr);
  EXPECT_TRUE(pyright->command.empty());
  FileValidator v = ResolveValidator(c->validation, "/ws/a.py", Installed);
  EXPECT_EQ(v.server_name, "");
  // The check command still serves .py files.
  EXPECT_EQ(v.check_command, (std::vector<std::string>{"/bin/python3", "-m", "py_compile", "{file}"}));
}

TEST(ConfigTest, ServerExtensionsMustStartWithADot) {
  EXPECT_EQ(ParseConfig(R"({"validation":{"servers":{"zls":{"command":["zls"],"extensions":["zig"]}}}})", "f")
                .status()
                .message(),
            "f: validation.servers.zls.extensions: 'zig' must start with a dot");
  EXPECT_FALSE(ParseConfig(R"({"validation":{"servers":{"zls":{"command":["zls"],"extensions":["."]}}}})", "f").ok());
  EXPECT_FALSE(ParseConfig(R"({"validation":{"servers":{"zls":{"command":["zls"],"extensions":[""]}}}})", "f").ok());
}

TEST(ConfigTest, ServerCommandAndExtensionsMustBeArraysOfStrings) {
  EXPECT_EQ(ParseConfig(R"({"validation":{"servers":{"zls":{"command":"zls"}}}})", "f").status().message(),
            "f: validation.servers.zls.command must be an array of strings");
  EXPECT_EQ(ParseConfig(R"({"validation":{"servers":{"zls":{"command":["zls",1]}}}})", "f").status().message(),
            "f: validation.servers.zls.command must be an array of strings");
  EXPECT_EQ(ParseConfig(R"({"validation":{"servers":{"zls":{"extensions":".zig"}}}})", "f").status().message(),
            "f: validation.servers.zls.extensions must be an array of strings");
  EXPECT_EQ(ParseConfig(R"({"validation":{"servers":{"zls":"zls"}}})", "f").status().message(),
            "f: validation.servers.zls must be an object");
}

TEST(ConfigTest, CheckCommandsAreAddedReplacedOrTurnedOff) {
  auto c = ParseConfig(R"({"validation":{"check_commands":{".zig":["zig","ast-check","{file}"],
                                                           ".cc":["clang++","-fsyntax-only","{file}"],
                                                           ".py":[]}}})",
                       "f");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const auto& checks = c->validation.check_commands;
  EXPECT_EQ(checks.at(".zig"), (std::vector<std::string>{"zig", "ast-check", "{file}"}));
  EXPECT_EQ(checks.at(".cc"), (std::vector<std::string>{"clang++", "-fsyntax-only", "{file}"}));
  EXPECT_TRUE(checks.at(".py").empty());
  EXPECT_EQ(checks.at(".c"), DefaultValidationOptions().check_commands.at(".c"));  // untouched
  ValidationOptions no_servers = c->validation;
  no_servers.servers.clear();
  EXPECT_TRUE(ResolveValidator(no_servers, "/ws/a.py", Installed).check_command.empty());
  EXPECT_EQ(ResolveValidator(no_servers, "/ws/a.zig", Installed).check_command,
            (std::vector<std::string>{"/bin/zig", "ast-check", "{file}"}));
}

TEST(ConfigTest, CheckCommandsMustBeArraysOfStrings) {
  EXPECT_EQ(ParseConfig(R"({"validation":{"check_commands":{".zig":"zig {file}"}}})", "f").status().message(),
            "f: validation.check_commands..zig must be an array of strings");
}

// checks

TEST(ConfigTest, ChecksCommandsAndLimits) {
  auto c = ParseConfig(R"({"checks":{"build":"make","lint":"","tests":"make test",
                                     "timeout_seconds":60,"retry_cap":3}})",
                       "f");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_TRUE(c->checks.build.has_value());
  EXPECT_EQ(*c->checks.build, "make");
  ASSERT_TRUE(c->checks.lint.has_value());  // set, to nothing: turned off
  EXPECT_EQ(*c->checks.lint, "");
  ASSERT_TRUE(c->checks.tests.has_value());
  EXPECT_EQ(*c->checks.tests, "make test");
  EXPECT_EQ(c->checks.timeout_seconds, 60);
  EXPECT_EQ(c->checks.retry_cap, 3);
}

TEST(ConfigTest, ChecksNotGivenStayUnset) {
  auto c = ParseConfig(R"({"checks":{"tests":"pytest"}})", "f");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_FALSE(c->checks.build.has_value());
  EXPECT_FALSE(c->checks.lint.has_value());
  EXPECT_EQ(c->checks.tests, std::optional<std::string>("pytest"));
  EXPECT_EQ(c->checks.timeout_seconds, 120);
  EXPECT_EQ(c->checks.retry_cap, 5);
}

TEST(ConfigTest, ChecksTimeoutAndRetryCapMustBeAtLeastOne) {
  for (const char* text : {R"({"checks":{"timeout_seconds":0}})", R"({"checks":{"retry_cap":0}})"}) {
    auto c = ParseConfig(text, "f");
    ASSERT_FALSE(c.ok()) << text;
    EXPECT_EQ(c.status().message(), "f: checks.timeout_seconds and checks.retry_cap must be at least 1") << text;
  }
  EXPECT_TRUE(ParseConfig(R"({"checks":{"timeout_seconds":1,"retry_cap":1}})", "f").ok());
}

TEST(ConfigTest, ChecksWrongTypesAndUnknownKeysAreErrors) {
  EXPECT_EQ(ParseConfig(R"({"checks":{"build":["make"]}})", "f").status().message(),
            "f: checks.build must be a string");
  EXPECT_EQ(ParseConfig(R"({"checks":{"lint":null}})", "f").status().message(), "f: checks.lint must be a string");
  EXPECT_EQ(ParseConfig(R"({"checks":{"test":"make test"}})", "f").status().message(),
            "f: unknown key 'checks.test' (did you mean 'checks.tests'?)");
  EXPECT_EQ(ParseConfig(R"({"checks":{"retry_cap":"3"}})", "f").status().message(),
            "f: checks.retry_cap must be a non-negative integer");
  EXPECT_EQ(ParseConfig(R"({"checks":"make"})", "f").status().message(), "f: checks must be an object");
}

// agent.profile

TEST(ConfigTest, AgentProfile) {
  for (const char* profile : {"fast", "auto", "safe", "strict"}) {
    auto c = ParseConfig(std::string(R"({"agent":{"profile":")") + profile + R"("}})", "f");
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    EXPECT_EQ(c->profile, profile);
  }
  auto both = ParseConfig(R"({"agent":{"max_turns":7,"profile":"strict"}})", "f");
  ASSERT_TRUE(both.ok());
  EXPECT_EQ(both->max_turns, 7);
}

TEST(ConfigTest, AgentProfileMustBeKnown) {
  EXPECT_EQ(ParseConfig(R"({"agent":{"profile":"turbo"}})", "f").status().message(),
            "f: agent.profile must be fast, auto, safe or strict");
  EXPECT_EQ(ParseConfig(R"({"agent":{"profile":""}})", "f").status().message(),
            "f: agent.profile must be fast, auto, safe or strict");
  EXPECT_EQ(ParseConfig(R"({"agent":{"profile":2}})", "f").status().message(), "f: agent.profile must be a string");
  EXPECT_EQ(ParseConfig(R"({"agent":{"profiles":"fast"}})", "f").status().message(),
            "f: unknown key 'agent.profiles' (did you mean 'agent.profile'?)");
}

TEST(ConfigTest, BudgetsStallAndBreakers) {
  auto c = ParseConfig(R"({"budgets":{"max_turns":7,"max_tool_calls":40,"max_tokens":90000,"max_budget_usd":1.5,
                                      "max_wall_seconds":600,"tool_timeouts":{"ExecuteCommand":30,"Grep":10}},
                           "stall":{"repeat":4,"failures":5,"messages":6,"alternation_steps":8,"no_progress_turns":12},
                           "breakers":{"enabled":false,"failures":3,"cooldown_seconds":5,"trials":2,"successes":3}})",
                       "x");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->max_turns, 7);
  EXPECT_EQ(c->max_tool_calls, 40);
  EXPECT_EQ(c->max_tokens, 90000);
  EXPECT_DOUBLE_EQ(c->max_budget_usd, 1.5);
  EXPECT_EQ(c->max_wall_seconds, 600);
  EXPECT_EQ(c->tool_timeouts.at("ExecuteCommand"), 30);
  EXPECT_EQ(c->tool_timeouts.at("Grep"), 10);
  EXPECT_EQ(c->tool_timeouts.at("*"), 300);  // the default stays
  EXPECT_EQ(c->stall.repeat, 4);
  EXPECT_EQ(c->stall.failures, 5);
  EXPECT_EQ(c->stall.messages, 6);
  EXPECT_EQ(c->stall.alternation_steps, 8);
  EXPECT_EQ(c->stall.no_progress_turns, 12);
  EXPECT_FALSE(c->breakers.enabled);
  EXPECT_EQ(c->breakers.failures, 3);
  EXPECT_EQ(c->breakers.cooldown, seconds(5));
  EXPECT_EQ(c->breakers.trials, 2);
  EXPECT_EQ(c->breakers.successes, 3);
}

TEST(ConfigTest, GuardDefaults) {
  auto c = ParseConfig("{}", "x");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->max_turns, 0);
  EXPECT_EQ(c->max_tool_calls, 0);
  EXPECT_EQ(c->tool_timeouts.at("ExecuteCommand"), 120);
  EXPECT_EQ(c->stall.repeat, 3);
  EXPECT_EQ(c->stall.no_progress_turns, 10);
  EXPECT_EQ(c->breakers.failures, 5);
  EXPECT_EQ(c->breakers.cooldown, seconds(30));
}

TEST(ConfigTest, BadGuardSettingsAreErrorsNamingThem) {
  for (auto [text, needle] : std::vector<std::pair<std::string, std::string>>{
           {R"({"budgets":{"max_budget_usd":-1}})", "budgets.max_budget_usd"},
           {R"({"budgets":{"max_tokens":"lots"}})", "budgets.max_tokens"},
           {R"({"budgets":{"tool_timeouts":{"Grep":99999}}})", "budgets.tool_timeouts.Grep"},
           {R"({"budgets":{"max_wall":5}})", "budgets.max_wall"},
           {R"({"budgets":{"tool_timeouts":{"ExecuteComand":30}}})", "unknown tool 'ExecuteComand'"},
           {R"({"budgets":{"max_wall_seconds":99999999999}})", "budgets.max_wall_seconds"},
           {R"({"budgets":{"max_budget_usd":1e13}})", "budgets.max_budget_usd"},
           {R"({"stall":{"alternation_steps":100}})", "stall"},
           {R"({"stall":{"repeat":1}})", "stall"},
           {R"({"breakers":{"cooldown_seconds":0}})", "breakers"},
           {R"({"mcpServers":{"a":{"command":"x","concurrency":0}}})", "mcpServers.a.concurrency must be 1 to 16"},
           {R"({"mcpServers":{"a":{"command":"x","concurrency":17}}})", "mcpServers.a.concurrency must be 1 to 16"}}) {
    auto c = ParseConfig(text, "odinconfig.json");
    ASSERT_FALSE(c.ok()) << text;
    EXPECT_NE(c.status().message().find(needle), std::string::npos) << c.status().message();
  }
}

TEST(ConfigTest, SubagentSettings) {
  auto c = ParseConfig(
      R"({"agent":{"subagent_concurrency":6,"subagent_timeout_seconds":90,"subagent_model":"utility"}})", "x");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->subagent_concurrency, 6);
  EXPECT_EQ(c->subagent_timeout_seconds, 90);
  EXPECT_EQ(c->subagent_model, "utility");
  auto d = ParseConfig("{}", "x");
  EXPECT_EQ(d->subagent_concurrency, 0);  // 2 x cores
  EXPECT_EQ(d->subagent_timeout_seconds, 600);
  EXPECT_EQ(d->subagent_model, "planner");
  for (const char* bad : {R"({"agent":{"subagent_model":"big"}})", R"({"agent":{"subagent_timeout_seconds":0}})",
                          R"({"agent":{"subagent_concurrency":1000}})"}) {
    auto e = ParseConfig(bad, "odinconfig.json");
    ASSERT_FALSE(e.ok()) << bad;
    EXPECT_NE(e.status().message().find("agent.subagent_"), std::string::npos) << e.status().message();
  }
}

TEST(ConfigTest, SandboxHiding) {
  auto c = ParseConfig(R"({"sandbox":{"hide_home":false,"hide":["/srv/secrets","/opt/keys"]}})", "x");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_FALSE(c->sandbox_hide_home);
  EXPECT_EQ(c->sandbox_hide, (std::vector<std::string>{"/srv/secrets", "/opt/keys"}));
  EXPECT_TRUE(ParseConfig("{}", "x")->sandbox_hide_home);
  auto bad = ParseConfig(R"({"sandbox":{"hide":["relative/dir"]}})", "odinconfig.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("must be absolute"), std::string::npos);
}

TEST(ConfigTest, SandboxLimits) {
  auto d = ParseConfig("{}", "x");
  EXPECT_EQ(d->sandbox_limits.processes, 1024u);
  EXPECT_EQ(d->sandbox_limits.memory_mb, 8192u);
  EXPECT_EQ(d->sandbox_limits.open_files, 4096u);
  auto c = ParseConfig(R"({"sandbox":{"limits":{"processes":0,"memory_mb":512,"cpu_seconds":60,"file_size_mb":10,
                                                "open_files":256,"address_space_mb":2048}}})",
                       "x");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->sandbox_limits.processes, 0u);
  EXPECT_EQ(c->sandbox_limits.memory_mb, 512u);
  EXPECT_EQ(c->sandbox_limits.cpu_seconds, 60u);
  EXPECT_EQ(c->sandbox_limits.address_space_mb, 2048u);
  for (const char* bad : {R"({"sandbox":{"limits":{"processes":3}}})", R"({"sandbox":{"limits":{"memory_mb":1}}})",
                          R"({"sandbox":{"limits":{"pids":3}}})"}) {
    auto e = ParseConfig(bad, "odinconfig.json");
    ASSERT_FALSE(e.ok()) << bad;
    EXPECT_NE(e.status().message().find("sandbox.limits"), std::string::npos) << e.status().message();
  }
}

TEST(ConfigTest, PermissionsAndTheSeedsNamesForThem) {
  auto c = ParseConfig(R"({"permissions":{"deny":["rm"],"ask":["npm install*"],"allow":["make"]},
                           "ForbiddenCommands":["curl"],"AllowedCommands":["git status"]})",
                       "x");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->permissions.deny, (std::vector<std::string>{"rm", "curl"}));
  EXPECT_EQ(c->permissions.ask, (std::vector<std::string>{"npm install*"}));
  EXPECT_EQ(c->permissions.allow, (std::vector<std::string>{"make", "git status"}));
  auto bad = ParseConfig(R"({"permissions":{"forbid":["rm"]}})", "odinconfig.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("permissions.forbid"), std::string::npos);
}

}  // namespace
}  // namespace odin

namespace odin {
namespace {

TEST(ConfigTest, RemoteWorkersAndServe) {
  auto d = ParseConfig("{}", "f");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->remote.launcher, "off");
  EXPECT_EQ(d->remote.kinds, (std::vector<std::string>{"subagent", "readonly"}));
  auto c = ParseConfig(R"({"workers":{"remote":{"launcher":"static","listen":"tcp://0.0.0.0:7171","keys":"/k",
                                    "kinds":["writable"],"wait_hosts":2,"wait_seconds":5}},
                         "serve":{"tls_cert":"/c","tls_key":"/k","tls_ca":"/a"}})",
                       "f");
  ASSERT_TRUE(c.ok()) << c.status().message();
  auto slurm = ParseConfig(R"({"workers":{"idle_seconds":30,"remote":{"launcher":"slurm","listen":"tcp://h:1",
      "slurm":{"partition":"gpu-a","cpus":4,"memory_mb":2048,"time":"2:00:00","max_hosts":3,"connect":"tcp://c:1"}}}})",
                           "f");
  ASSERT_TRUE(slurm.ok()) << slurm.status().message();
  EXPECT_EQ(slurm->idle_seconds, 30);
  EXPECT_EQ(slurm->remote.slurm.partition, "gpu-a");
  EXPECT_EQ(slurm->remote.slurm.max_hosts, 3);
  EXPECT_EQ(slurm->remote.slurm.connect, "tcp://c:1");
  EXPECT_EQ(c->remote.listen, "tcp://0.0.0.0:7171");
  EXPECT_EQ(c->remote.kinds, std::vector<std::string>{"writable"});
  EXPECT_EQ(c->remote.wait_hosts, 2);
  EXPECT_EQ(c->serve.tls_ca, "/a");
  struct Bad {
    const char* json;
    const char* says;
  } bad[] = {
      {R"({"workers":{"remote":{"launcher":"static","listen":"ipc:///tmp/x"}}})", "must be tcp://HOST:PORT"},
      {R"({"workers":{"remote":{"launcher":"static"}}})", "workers.remote.listen is needed"},
      {R"({"workers":{"remote":{"launcher":"k8s"}}})", "must be off, static or slurm"},
      {R"({"workers":{"remote":{"launcher":"slurm","listen":"tcp://h:1","slurm":{"cpus":0}}}})",
       "max_hosts, cpus and memory_mb must be at least 1"},
      {R"({"workers":{"remote":{"launcher":"slurm","listen":"tcp://h:1","slurm":{"partition":"--uid=0"}}}})",
       "'--uid=0' is not a partition or time"},
      {R"({"workers":{"remote":{"launcher":"slurm","listen":"tcp://h:1","slurm":{"time":"1 --x"}}}})",
       "is not a partition or time"},
      {R"({"workers":{"remote":{"launcher":"slurm","listen":"tcp://h:1","slurm":{"connect":"h:1"}}}})",
       "slurm.connect must be tcp://HOST:PORT"},
      {R"({"workers":{"remote":{"launcher":"slurm","listen":"tcp://h:1","wait_hosts":1}}})",
       "wait_hosts is for static hosts"},
      {R"({"workers":{"remote":{"kinds":["lsp"]}}})", "'lsp' is not subagent, readonly or writable"},
      {R"({"serve":{"tls":"x"}})", "unknown key 'serve.tls'"},
  };
  for (const Bad& b : bad) {
    auto r = ParseConfig(b.json, "f");
    ASSERT_FALSE(r.ok()) << b.json;
    EXPECT_NE(r.status().message().find(b.says), std::string::npos) << r.status().message();
  }
  // A repository must not make the coordinator listen, or choose its keys,
  // its hosts' workers or its TLS: trusted-only.
  for (const char* key : {"workers.remote.launcher", "workers.remote.listen", "workers.remote.keys",
                          "workers.remote.kinds", "serve.tls_ca", "serve.tls_cert"}) {
    EXPECT_FALSE(UntrustedMaySet(key)) << key;
  }
}

}  // namespace
}  // namespace odin

namespace odin {
namespace {

TEST(ConfigTest, SandboxNetworkTakesRulesOrABoolean) {
  auto rules = ParseConfig(
      R"({"sandbox":{"network":{"allow":["*.npmjs.org","pypi.org"],"deny":["x.npmjs.org"],
          "hosts":{"Mirror.Test.":"10.0.0.5","six.test":"::1"}}}})",
      "odinconfig.json");
  ASSERT_TRUE(rules.ok()) << rules.status().ToString();
  EXPECT_TRUE(rules->sandbox_network_rules.on);
  EXPECT_FALSE(rules->sandbox_network);
  EXPECT_EQ(rules->sandbox_network_rules.allow, (std::vector<std::string>{"*.npmjs.org", "pypi.org"}));
  EXPECT_EQ(rules->sandbox_network_rules.hosts.at("mirror.test"), "10.0.0.5");
  auto on = ParseConfig(R"({"sandbox":{"network":true}})", "odinconfig.json");
  ASSERT_TRUE(on.ok());
  EXPECT_TRUE(on->sandbox_network);
  EXPECT_FALSE(on->sandbox_network_rules.on);
  for (const char* bad :
       {R"({"sandbox":{"network":{"allow":["10.0.0.1"]}}})", R"({"sandbox":{"network":{"allow":["*"]}}})",
        R"({"sandbox":{"network":{"allow":"pypi.org"}}})",
        R"({"sandbox":{"network":{"allow":["pypi.org"],"other":1}}})",
        R"({"sandbox":{"network":{"hosts":{"a.test":"not-an-ip"}}}})",
        R"({"sandbox":{"network":{"hosts":{"1.2.3.4":"10.0.0.1"}}}})"}) {
    auto c = ParseConfig(bad, "odinconfig.json");
    ASSERT_FALSE(c.ok()) << bad;
    EXPECT_NE(c.status().ToString().find("odinconfig.json"), std::string::npos) << c.status().ToString();
  }
}

}  // namespace
}  // namespace odin
