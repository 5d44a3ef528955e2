// Providers end to end, through the real odin against the fake model server:
// OpenAI's Responses API (--provider openai-responses: streamed text,
// function calls, reasoning items given back in later requests, across a
// resume too), and a local OpenAI-compatible server (Ollama, llama.cpp,
// vLLM) set up by the example config in docs/examples, as a user would copy
// it.

#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "tests/llm_requests.h"
#include "tests/test_util.h"

namespace odin::testing {
namespace {

using nlohmann::json;

class OdinProvidersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(MakeDirs(ws_.Join(".git")).ok());
    ASSERT_TRUE(MakeDirs(user_.Join("config/odin")).ok());
    UserConfig({{"checks", {{"build", ""}, {"lint", ""}, {"tests", ""}}}});
    ASSERT_TRUE(WriteFileAtomic(ws_.Join("a.txt"), "hello\n").ok());
  }
  void TearDown() override {
    EXPECT_TRUE(ProcessesLeftWithEnv("ODIN_TEST_MARK", marker_).empty()) << "processes left behind";
  }
  void UserConfig(const json& config) {
    ASSERT_TRUE(WriteFileAtomic(user_.Join("config/odin/odinconfig.json"), config.dump()).ok());
  }
  std::map<std::string, std::string> Env(const FakeLlm& llm) { return FakeModelEnv(llm, marker_, user_); }
  // The request bodies the server received, in order.
  static std::vector<json> Bodies(const FakeLlm& llm) {
    std::vector<json> out;
    for (const json& q : RequestsOf(llm)) {
      if (q.contains("body")) out.push_back(q);
    }
    return out;
  }
  // The items of a Responses request's input of one type.
  static std::vector<json> ItemsOf(const json& body, const std::string& type) {
    std::vector<json> out;
    for (const json& item : body["input"]) {
      if (item.value("type", "") == type) out.push_back(item);
    }
    return out;
  }

  TempWorkspace ws_;
  TempWorkspace user_;  // XDG_CONFIG_HOME and XDG_STATE_HOME
  std::string marker_ = UniqueMarker();
};

// A reasoning model over the Responses API: its text streams, its function
// call runs, and the reasoning it sent (encrypted, as store: false has it)
// goes back before the call it led to, in the next request and after a
// resume; nothing asks the server to have stored anything.
TEST_F(OdinProvidersTest, AResponsesApiSessionStreamsCallsAndCarriesItsReasoning) {
  const std::string answer = "It says hello, and nothing else at all.";
  FakeLlm llm(json({{"responses",
                     {{{"reasoning", "ENC-ONE"},
                       {"text", "Let me read it."},
                       {"tool_calls", {Call("Read", {{"file_path", "a.txt"}})}}},
                      {{"reasoning", "ENC-TWO"}, {"text", answer}},
                      Text("Still hello.")}}})
                  .dump());
  Ran run = RunOdin(ws_.path(),
                    {"-p", "what is in a.txt?", "--provider", "openai-responses", "--output-format", "stream-json"},
                    Env(llm));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::string streamed;
  int deltas = 0;
  json result;
  for (size_t start = 0, nl; start < run.out.size(); start = nl + 1) {
    nl = run.out.find('\n', start);
    json e = json::parse(run.out.substr(start, nl - start));
    if (e["type"] == "text_delta") {
      streamed += e["text"].get<std::string>();
      ++deltas;
    }
    if (e["type"] == "result") result = e;
  }
  EXPECT_EQ(result["status"], "done") << run.out;
  EXPECT_EQ(result["result"], answer);
  EXPECT_NE(streamed.find(answer), std::string::npos) << streamed;
  EXPECT_GE(deltas, 3);  // streamed in pieces, not whole

  std::vector<json> requests = Bodies(llm);
  ASSERT_EQ(requests.size(), 2u);
  for (const json& q : requests) {
    EXPECT_EQ(q["path"], "/v1/responses");
    const json& b = q["body"];
    EXPECT_EQ(b["store"], false);
    EXPECT_EQ(b["include"], json({"reasoning.encrypted_content"}));
    EXPECT_EQ(b["stream"], true);
    EXPECT_FALSE(b.contains("previous_response_id"));
    EXPECT_FALSE(b.contains("messages"));
    EXPECT_NE(b["instructions"].get<std::string>().find("Odin"), std::string::npos);
    bool read_tool = false;
    for (const json& t : b["tools"]) read_tool |= t["type"] == "function" && t["name"] == "Read";
    EXPECT_TRUE(read_tool);
  }
  const json& second = requests[1]["body"];
  std::vector<json> reasoning = ItemsOf(second, "reasoning");
  ASSERT_EQ(reasoning.size(), 1u) << second.dump();
  EXPECT_EQ(reasoning[0]["encrypted_content"], "ENC-ONE");
  std::vector<json> calls = ItemsOf(second, "function_call");
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0]["name"], "Read");
  EXPECT_EQ(json::parse(calls[0]["arguments"].get<std::string>())["file_path"], "a.txt");
  std::vector<json> outputs = ItemsOf(second, "function_call_output");
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0]["call_id"], calls[0]["call_id"]);
  EXPECT_NE(outputs[0]["output"].get<std::string>().find("hello"), std::string::npos);
  // The reasoning comes before the call it led to.
  size_t reasoning_at = 0, call_at = 0;
  for (size_t i = 0; i < second["input"].size(); ++i) {
    if (second["input"][i].value("type", "") == "reasoning") reasoning_at = i;
    if (second["input"][i].value("type", "") == "function_call") call_at = i;
  }
  EXPECT_LT(reasoning_at, call_at);

  // Resumed in a new process: the reasoning comes back from the ledger.
  Ran resumed = RunOdin(
      ws_.path(), {"-c", "-p", "and now?", "--provider", "openai-responses", "--output-format", "json"}, Env(llm));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  requests = Bodies(llm);
  ASSERT_EQ(requests.size(), 3u);
  std::vector<json> carried = ItemsOf(requests[2]["body"], "reasoning");
  ASSERT_EQ(carried.size(), 2u) << requests[2]["body"].dump();
  EXPECT_EQ(carried[0]["encrypted_content"], "ENC-ONE");
  EXPECT_EQ(carried[1]["encrypted_content"], "ENC-TWO");
}

// The example config for a local server, as docs/examples has it, with
// its address pointed at the fake server: no API key, no prompt-cache
// fields, the model and limits it names, and a price of 0 that is known
// (local models cost nothing), not unknown.
TEST_F(OdinProvidersTest, TheLocalServerExampleConfigWorksAsWritten) {
  StatusOr<std::string> example = ReadFileToString(std::string(ODIN_SOURCE_DIR) + "/docs/examples/local-server.json");
  ASSERT_TRUE(example.ok()) << example.status().ToString();
  json config = json::parse(*example);
  FakeLlm llm(json({{"responses", {Turn({Call("Read", {{"file_path", "a.txt"}})}), Text("It says hello.")}}}).dump());
  std::string url = llm.OpenAiUrl();
  ASSERT_EQ(config["llm"]["base_url"], "http://localhost:11434/v1");
  config["llm"]["base_url"] = url;
  config["checks"] = {{"build", ""}, {"lint", ""}, {"tests", ""}};
  UserConfig(config);
  std::map<std::string, std::string> env = Env(llm);
  env.erase("OPENAI_BASE_URL");
  env.erase("OPENAI_API_KEY");
  Ran run = RunOdin(ws_.path(), {"-p", "what is in a.txt?", "--output-format", "json"}, env);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  json r = json::parse(run.out);
  EXPECT_EQ(r["status"], "done");
  EXPECT_EQ(r["total_cost_usd"], 0.0) << r.dump();
  std::vector<json> requests = Bodies(llm);
  ASSERT_EQ(requests.size(), 2u);
  for (const json& q : requests) {
    EXPECT_EQ(q["path"], "/v1/chat/completions");
    EXPECT_EQ(q["body"]["model"], config["llm"]["model"]);
    EXPECT_EQ(q["body"]["max_tokens"], config["llm"]["max_tokens"]);
    EXPECT_FALSE(q["body"].contains("prompt_cache_key"));
  }
}

}  // namespace
}  // namespace odin::testing
