// Prompt caching end to end: the real odin against the fake model server in
// both wire formats. Providers serve a request's longest prefix seen before
// from their cache, so what comes before the per-turn facts (the tools, the
// system prompt, the conversation) must be the same bytes from one request
// to the next, across a compaction too; and the providers' own fields
// (Anthropic's cache_control breakpoints, OpenAI's prompt_cache_key) go out
// where asked.

#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "tests/ledger_rows.h"
#include "tests/llm_requests.h"
#include "tests/test_util.h"

namespace odin::testing {
namespace {

using nlohmann::json;

// USD per million tokens: input, output, cache read, cache write.
const nlohmann::json kPrices = {
    {"input_per_mtok", 3.0}, {"output_per_mtok", 15.0}, {"cache_read_per_mtok", 0.3}, {"cache_write_per_mtok", 3.75}};

const char kSummary[] = R"({"done": ["read the files"], "pending": ["more"], "current_state": "reading"})";

class OdinPromptCacheTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    ASSERT_TRUE(MakeDirs(ws_.Join(".git")).ok());
    ASSERT_TRUE(MakeDirs(user_.Join("config/odin")).ok());
    for (int i = 0; i < 5; ++i) {
      ASSERT_TRUE(WriteFileAtomic(ws_.Join("f" + std::to_string(i) + ".txt"), "line " + Word(i) + "\n").ok());
    }
  }
  void TearDown() override {
    EXPECT_TRUE(ProcessesLeftWithEnv("ODIN_TEST_MARK", marker_).empty()) << "processes left behind";
  }
  void UserConfig(const json& config) {
    ASSERT_TRUE(WriteFileAtomic(user_.Join("config/odin/odinconfig.json"), config.dump()).ok());
  }
  // The planner's requests' bodies, in order (not the utility model's).
  static std::vector<json> PlannerBodies(const FakeLlm& llm) {
    std::vector<json> out;
    for (const json& q : RequestsOf(llm)) {
      if (q.contains("body") && q.value("n", int64_t{0}) < 1000000) out.push_back(q["body"]);
    }
    return out;
  }
  json Run(const FakeLlm& llm, const std::vector<std::string>& more = {}, bool json_output = true) {
    bool anthropic = GetParam();
    std::map<std::string, std::string> env = FakeModelEnv(llm, marker_, user_);
    std::vector<std::string> args = {"-p", "read the files one by one"};
    if (json_output) args.insert(args.end(), {"--output-format", "json"});
    if (anthropic) {
      env["ANTHROPIC_BASE_URL"] = llm.AnthropicUrl();
      env["ANTHROPIC_API_KEY"] = "test-key";
      args.insert(args.end(), {"--provider", "anthropic"});
    }
    args.insert(args.end(), more.begin(), more.end());
    last_ = RunOdin(ws_.path(), args, env);
    return json::parse(last_.out, nullptr, false);
  }

  TempWorkspace ws_;
  TempWorkspace user_;  // XDG_CONFIG_HOME and XDG_STATE_HOME
  std::string marker_ = UniqueMarker();
  Ran last_;
};

// 50 turns (reads that fill the file cache, a todo list that changes, a
// budget counting down: all of it per-turn facts) and a compaction in the
// middle: the tools and the system prompt are the same bytes in every
// request; each request's conversation starts with the one before's
// (between compactions); the cache fields are there.
TEST_P(OdinPromptCacheTest, ThePrefixIsTheSameBytesAcrossFiftyTurnsAndACompaction) {
  bool anthropic = GetParam();
  UserConfig({{"checks", {{"build", ""}, {"lint", ""}, {"tests", ""}}},
              {"llm", {{"prompt_cache", "on"}, {"prices", {{"*", kPrices}}}}}});
  json responses = json::array();
  for (int i = 0; i < 50; ++i) {
    if (i == 25) {
      responses.push_back(Turn({Call("ContextSummarizer", json::object())}));
    } else if (i % 10 == 1) {
      responses.push_back(Turn({Call(
          "TodoWrite",
          {{"todos", {{{"id", "t" + Word(i)}, {"content", "read batch " + Word(i)}, {"status", "in_progress"}}}}})}));
    } else {
      responses.push_back(Turn({Call("Read", {{"file_path", "f" + std::to_string(i % 5) + ".txt"}})}));
    }
  }
  responses.push_back(Text("All read."));
  FakeLlm llm(
      json({{"responses", responses}, {"by_system", {{"handoff note", {{"text", kSummary}}}}}, {"prompt_cache", true}})
          .dump());
  json r = Run(llm, {"--max-turns", "60"});
  ASSERT_FALSE(r.is_discarded()) << last_.out << last_.err;
  EXPECT_EQ(r["status"], "done") << last_.err;
  std::vector<json> bodies = PlannerBodies(llm);
  ASSERT_EQ(bodies.size(), 51u);
  auto system_of = [anthropic](const json& b) { return anthropic ? b["system"] : b["messages"][0]; };
  size_t compacted_at = 0;
  for (size_t i = 1; i < bodies.size(); ++i) {
    SCOPED_TRACE("request " + std::to_string(i));
    EXPECT_EQ(bodies[i]["tools"], bodies[0]["tools"]);
    EXPECT_EQ(system_of(bodies[i]), system_of(bodies[0]));
    if (anthropic) {
      EXPECT_EQ(bodies[i]["system"][0]["cache_control"]["type"], "ephemeral");
      EXPECT_EQ(bodies[i]["tools"].back()["cache_control"]["type"], "ephemeral");
      continue;
    }
    EXPECT_EQ(bodies[i]["prompt_cache_key"], bodies[0]["prompt_cache_key"]);
    // The conversation before the facts: the previous request's, and more.
    json before = bodies[i - 1]["messages"], now = bodies[i]["messages"];
    if (TurnFactsOf({{"body", bodies[i - 1]}}) != "") before.erase(before.end() - 1);
    bool prefix = before.size() <= now.size() && std::equal(before.begin(), before.end(), now.begin());
    if (!prefix && compacted_at == 0 && now.dump().find("Context compacted") != std::string::npos) {
      compacted_at = i;  // the one request that starts over
      continue;
    }
    EXPECT_TRUE(prefix);
  }
  if (!anthropic) {
    EXPECT_TRUE(bodies[0]["prompt_cache_key"].is_string());
    EXPECT_EQ(compacted_at, 26u);
    // The facts changed from turn to turn, after the conversation.
    EXPECT_NE(TurnFactsOf({{"body", bodies[3]}}).find("Your todo list"), std::string::npos);
    EXPECT_NE(TurnFactsOf({{"body", bodies[40]}}).find("turns"), std::string::npos);
  } else {
    // Anthropic: a breakpoint on the conversation's last block, before the facts.
    const json& last = bodies[40]["messages"].back()["content"];
    ASSERT_GE(last.size(), 2u);
    EXPECT_EQ(last[last.size() - 2]["cache_control"]["type"], "ephemeral");
    EXPECT_NE(last.back()["text"].get<std::string>().find("This turn's state"), std::string::npos);
  }
  // The server served most of each request from its cache (it counts the
  // leading bytes a request shares with an earlier one), and Odin counted
  // and priced it: in the result and in the ledger's report alike.
  const json& u = r["usage"];
  int64_t in = u["input_tokens"], read = u["cache_read_input_tokens"], written = u["cache_creation_input_tokens"];
  EXPECT_GT(read, in * 7 / 10) << u.dump();
  if (anthropic) EXPECT_GT(written, 0) << u.dump();
  if (!anthropic) EXPECT_EQ(written, 0) << u.dump();
  double expected =
      (static_cast<double>(in - read - written) * 3.0 + static_cast<double>(read) * 0.3 +
       static_cast<double>(written) * 3.75 + static_cast<double>(u["output_tokens"].get<int64_t>()) * 15) /
      1e6;
  // Each call's cost is rounded to a millionth of a dollar.
  EXPECT_NEAR(r["total_cost_usd"].get<double>(), expected, 1e-6 * u["llm_calls"].get<double>()) << u.dump();
  EXPECT_EQ(u["unpriced_calls"], 0);
  EXPECT_EQ(r["report"]["cache_read_tokens"], read) << r["report"].dump();
  EXPECT_EQ(r["report"]["cache_write_tokens"], written);
  EXPECT_NEAR(r["report"]["cost_usd"].get<double>(), r["total_cost_usd"].get<double>(), 1e-9);
}

// The text report says how much came from the cache and what it cost; with
// no price for the model, that the price is unknown, never $0.
TEST_P(OdinPromptCacheTest, TheReportShowsCacheUseAndCostOrThatThePriceIsUnknown) {
  json responses = {Turn({Call("Read", {{"file_path", "f1.txt"}})}), Turn({Call("Read", {{"file_path", "f2.txt"}})}),
                    Text("Read.")};
  UserConfig({{"checks", {{"build", ""}, {"lint", ""}, {"tests", ""}}},
              {"llm", {{"prompt_cache", "on"}, {"prices", {{"*", kPrices}}}}}});
  {
    FakeLlm llm(json({{"responses", responses}, {"prompt_cache", true}}).dump());
    Run(llm, {}, /*json_output=*/false);
    EXPECT_EQ(last_.exit_code, 0) << last_.err;
    size_t used = last_.out.find("Used: ");
    ASSERT_NE(used, std::string::npos) << last_.out;
    std::string line = last_.out.substr(used, last_.out.find('\n', used) - used);
    EXPECT_NE(line.find(" read from the prompt cache, "), std::string::npos) << line;
    EXPECT_NE(line.find(", $0.0"), std::string::npos) << line;
  }
  UserConfig({{"checks", {{"build", ""}, {"lint", ""}, {"tests", ""}}}, {"llm", {{"prompt_cache", "on"}}}});
  {
    FakeLlm llm(json({{"responses", responses}, {"prompt_cache", true}}).dump());
    Run(llm, {}, /*json_output=*/false);
    EXPECT_EQ(last_.exit_code, 0) << last_.err;
    EXPECT_NE(last_.out.find(" out, price unknown, "), std::string::npos) << last_.out;
    json r = Run(llm, {});
    EXPECT_TRUE(r["total_cost_usd"].is_null()) << r.dump();
    EXPECT_TRUE(r["report"]["cost_usd"].is_null()) << r.dump();
  }
}

// Without llm.prompt_cache, a server that is not the provider's own gets no
// cache fields (compatible servers may refuse them); one that refuses them
// anyway is asked again without them, once in the session.
TEST_P(OdinPromptCacheTest, TheFieldsGoOnlyWhereKnownAndARefusalDropsThem) {
  bool anthropic = GetParam();
  json responses = {Turn({Call("Read", {{"file_path", "f1.txt"}})}), Turn({Call("Read", {{"file_path", "f2.txt"}})}),
                    Text("Read.")};
  {
    UserConfig({{"checks", {{"build", ""}, {"lint", ""}, {"tests", ""}}}});
    FakeLlm llm(json({{"responses", responses}}).dump());
    json r = Run(llm);
    EXPECT_EQ(r["status"], "done") << last_.err;
    for (const json& b : PlannerBodies(llm)) {
      EXPECT_EQ(b.dump().find("cache_control"), std::string::npos);
      EXPECT_FALSE(b.contains("prompt_cache_key"));
    }
  }
  {
    UserConfig({{"checks", {{"build", ""}, {"lint", ""}, {"tests", ""}}}, {"llm", {{"prompt_cache", "on"}}}});
    std::string field = anthropic ? "cache_control" : "prompt_cache_key";
    FakeLlm llm(json({{"responses", responses}, {"refuse_fields", {field}}}).dump());
    json r = Run(llm);
    EXPECT_EQ(r["status"], "done") << last_.err;
    std::vector<json> bodies = PlannerBodies(llm);
    ASSERT_EQ(bodies.size(), 3u);
    for (const json& b : bodies) EXPECT_EQ(b.dump().find(field), std::string::npos) << b.dump();
    size_t refused = 0;
    for (const json& q : RequestsOf(llm)) refused += q.contains("refused_field") ? 1 : 0;
    EXPECT_EQ(refused, 1u);
  }
}

INSTANTIATE_TEST_SUITE_P(BothWireFormats, OdinPromptCacheTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& p) { return p.param ? "Anthropic" : "OpenAi"; });

}  // namespace
}  // namespace odin::testing
