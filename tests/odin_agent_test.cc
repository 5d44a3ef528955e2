// Whole agent sessions end to end: the real odin (headless and interactive),
// sandbox, workers and ledger, against tests/fake_llm_server speaking the
// OpenAI and Anthropic wire formats.

#include <signal.h>
#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "tests/llm_requests.h"
#include "tests/test_util.h"

namespace odin::testing {
namespace {

using nlohmann::json;

class OdinAgentTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(MakeDirs(ws_.Join(".git")).ok()); }

  std::map<std::string, std::string> Env(const FakeLlm& llm, bool anthropic = false) {
    if (anthropic) {
      return UserDirs({{"ANTHROPIC_BASE_URL", llm.AnthropicUrl()},
                       {"ANTHROPIC_API_KEY", "test-key"},
                       {"OPENAI_BASE_URL", ""},
                       {"OPENAI_API_KEY", ""},
                       {"ODIN_TEST_MARK", marker_}});
    }
    return UserDirs({{"OPENAI_BASE_URL", llm.OpenAiUrl()},
                     {"OPENAI_API_KEY", "test-key"},
                     {"ANTHROPIC_BASE_URL", ""},
                     {"ANTHROPIC_API_KEY", ""},
                     {"ODIN_TEST_MARK", marker_}});
  }
  // env plus the test's own user config and state directories.
  std::map<std::string, std::string> UserDirs(std::map<std::string, std::string> env) {
    env["XDG_CONFIG_HOME"] = user_.Join("config");
    env["XDG_STATE_HOME"] = user_.Join("state");
    return env;
  }
  // The user's odinconfig.json (model settings are not a workspace's to make
  // until it is trusted).
  void UserConfig(const std::string& text) {
    ASSERT_TRUE(MakeDirs(user_.Join("config/odin")).ok());
    ASSERT_TRUE(WriteFileAtomic(user_.Join("config/odin/odinconfig.json"), text).ok());
  }
  // odin -p PROMPT --output-format json; returns the parsed result.
  json Prompt(const FakeLlm& llm, const std::string& prompt, std::vector<std::string> more = {},
              bool anthropic = false) {
    std::vector<std::string> args = {"-p", prompt, "--output-format", "json"};
    args.insert(args.end(), more.begin(), more.end());
    last_ = RunOdin(ws_.path(), args, Env(llm, anthropic));
    json j = json::parse(last_.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << "stdout: " << last_.out << "\nstderr: " << last_.err;
    return j;
  }
  // The requests the server received, parsed.
  static std::vector<json> Requests(const FakeLlm& llm) { return RequestsOf(llm); }
  static std::vector<json> ToolResults(const json& request) { return ToolResultsOf(request); }
  void Put(const std::string& rel, const std::string& content) {
    ASSERT_TRUE(WriteFileAtomic(ws_.Join(rel), content).ok());
  }
  std::string Get(const std::string& rel) { return *ReadFileToString(ws_.Join(rel)); }
  void TearDown() override {
    EXPECT_TRUE(ProcessesLeftWithEnv("ODIN_TEST_MARK", marker_).empty()) << "processes left behind";
  }

  TempWorkspace ws_;
  TempWorkspace user_;  // XDG_CONFIG_HOME and XDG_STATE_HOME
  std::string marker_ = UniqueMarker();
  Ran last_;
};

// Issue 47, items 17 and 18: -p followed by an option is a flag, as Claude
// Code users type it (the prompt is the word left over), and what is piped
// in joins the prompt.
TEST_F(OdinAgentTest, PrintFlagBeforeOptionsAndAPipedPromptReachTheModel) {
  {
    FakeLlm llm(R"({"responses":[{"text":"Four."}]})");
    last_ = RunOdin(ws_.path(), {"-p", "--mode", "ask", "--output-format", "json", "what is two and two"}, Env(llm));
    EXPECT_EQ(last_.exit_code, 0) << last_.err;
    json r = json::parse(last_.out, nullptr, false);
    EXPECT_EQ(r["result"], "Four.") << last_.out << last_.err;
    // Claude Code's fields beside Odin's.
    EXPECT_EQ(r["subtype"], "success");
    EXPECT_EQ(r["is_error"], false);
    EXPECT_EQ(r["num_turns"], 1);
    EXPECT_TRUE(r["duration_ms"].is_number_integer()) << r.dump();
    // No price for the model in llm.prices: the cost is unknown, not $0.
    EXPECT_TRUE(r.contains("total_cost_usd") && r["total_cost_usd"].is_null()) << r.dump();
    EXPECT_EQ(r["usage"]["unpriced_calls"], 1) << r.dump();
    std::vector<json> requests = Requests(llm);
    ASSERT_EQ(requests.size(), 1u);
    EXPECT_EQ(LastMessageOf(requests[0])["content"], "what is two and two");
  }
  {
    FakeLlm llm(R"({"responses":[{"text":"A diff of one line."}]})");
    last_ = RunOdinWrapped({"sh", "-c", "printf '+added line\\n' | \"$0\" \"$@\""}, ws_.path(),
                           {"-p", "review this diff", "--output-format", "json"}, Env(llm));
    EXPECT_EQ(last_.exit_code, 0) << last_.err;
    std::vector<json> requests = Requests(llm);
    ASSERT_EQ(requests.size(), 1u);
    EXPECT_EQ(LastMessageOf(requests[0])["content"], "review this diff\n\n+added line");
  }
  {
    FakeLlm llm(R"({"responses":[{"text":"Read it."}]})");
    last_ = RunOdinWrapped({"sh", "-c", "echo 'only stdin' | \"$0\" \"$@\""}, ws_.path(),
                           {"-p", "--output-format", "json"}, Env(llm));
    EXPECT_EQ(last_.exit_code, 0) << last_.err;
    std::vector<json> requests = Requests(llm);
    ASSERT_EQ(requests.size(), 1u);
    EXPECT_EQ(LastMessageOf(requests[0])["content"], "only stdin");
  }
  {
    FakeLlm llm(R"({"responses":[{"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"true"}}]},
      {"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"true 2"}}]},{"text":"never"}]})");
    json r = Prompt(llm, "loop", {"--max-turns", "1"});
    EXPECT_EQ(r["status"], "budget_exceeded") << r.dump();
    EXPECT_EQ(r["subtype"], "error_max_turns") << r.dump();
    EXPECT_EQ(r["is_error"], true);
  }
  // The demo provider after -p, as the README's quick start shows it.
  Ran demo = RunOdin(ws_.path(), {"-p", "--provider", "demo", "--mode", "ask", "say hello"},
                     UserDirs({{"OPENAI_API_KEY", ""}, {"ANTHROPIC_API_KEY", ""}, {"ODIN_TEST_MARK", marker_}}));
  EXPECT_EQ(demo.exit_code, 0) << demo.out << demo.err;
  EXPECT_NE(demo.out.find("Status: done"), std::string::npos) << demo.out;
}

// Issue 47, item 8: headless runs refuse / and the home directory as a
// workspace (one line, exit 2, nothing created) unless -C names them.
TEST_F(OdinAgentTest, RootAndHomeAreRefusedAsWorkspacesUnlessNamed) {
  RemoveTree(ws_.Join(".git"));
  FakeLlm llm(R"({"responses":[{"text":"Fine."}]})");
  std::map<std::string, std::string> env = Env(llm);
  env["HOME"] = ws_.path();
  Ran home = RunOdin(ws_.path(), {"-p", "hi"}, env);
  EXPECT_EQ(home.exit_code, 2) << home.out << home.err;
  EXPECT_EQ(home.err, "odin: " + ws_.path() +
                          " is your home directory, not a project: run odin in a project's "
                          "directory (or name this one with -C " +
                          ws_.path() + ")\n");
  EXPECT_FALSE(PathExists(ws_.Join(".odin")));
  Ran serve = RunOdin(ws_.path(), {"mcp", "serve"}, env);
  EXPECT_EQ(serve.exit_code, 2) << serve.err;
  EXPECT_NE(serve.err.find("is your home directory, not a project"), std::string::npos) << serve.err;
  // The gRPC daemon too (its sessions are headless).
  Ran daemon = RunOdin(ws_.path(), {"serve"}, env);
  EXPECT_EQ(daemon.exit_code, 2) << daemon.err;
  EXPECT_NE(daemon.err.find("odin serve: " + ws_.path() + " is your home directory, not a project"), std::string::npos)
      << daemon.err;
  EXPECT_FALSE(PathExists(ws_.Join(".odin")));
  Ran root = RunOdin("/", {"-p", "hi"}, Env(llm));
  EXPECT_EQ(root.exit_code, 2) << root.err;
  EXPECT_NE(root.err.find("odin: / is the root directory, not a project"), std::string::npos) << root.err;
  EXPECT_TRUE(Requests(llm).empty());
  Ran named = RunOdin(ws_.path(), {"-C", ws_.path(), "-p", "hi"}, env);
  EXPECT_EQ(named.exit_code, 0) << named.err;
  EXPECT_EQ(Requests(llm).size(), 1u);
}

const char kReadEditRun[] = R"({"responses":[
  {"text":"Reading first.","tool_calls":[{"name":"Read","arguments":{"file_path":"greet.sh"}}]},
  {"tool_calls":[{"name":"EditTool","arguments":{"file_path":"greet.sh","old_string":"hello","new_string":"goodbye"}}]},
  {"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"sh greet.sh"}}]},
  {"text":"Done: greet.sh now says goodbye, and running it prints that."}]})";

TEST_F(OdinAgentTest, ReadEditRunDoneOverOpenAi) {
  FakeLlm llm(kReadEditRun);
  Put("greet.sh", "echo hello\n");
  json r = Prompt(llm, "make greet.sh say goodbye");
  EXPECT_EQ(r["status"], "done") << last_.err;
  EXPECT_EQ(r["result"], "Done: greet.sh now says goodbye, and running it prints that.");
  EXPECT_EQ(r["changed_files"], json::array({"greet.sh"}));
  EXPECT_EQ(r["execution_ids"].size(), 3u);
  EXPECT_EQ(r["turns"], 4);
  EXPECT_EQ(r["usage"]["llm_calls"], 4);
  EXPECT_EQ(r["usage"]["input_tokens"], 40);
  EXPECT_EQ(last_.exit_code, 0);
  EXPECT_EQ(Get("greet.sh"), "echo goodbye\n");

  std::vector<json> requests = Requests(llm);
  ASSERT_EQ(requests.size(), 4u);
  // What the model got back from the command is the runtime's record.
  std::vector<json> results = ToolResults(requests[3]);
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[2]["tool"], "ExecuteCommand");
  EXPECT_EQ(results[2]["authority"], "ground_truth");
  EXPECT_EQ(results[2]["status"], "ok");
  EXPECT_EQ(results[2]["exit_code"], 0);
  EXPECT_EQ(results[2]["output"], "goodbye\n");
  EXPECT_EQ(results[2]["execution_id"], r["execution_ids"][2]);
  EXPECT_NE(results[1]["diff"].get<std::string>().find("+echo goodbye"), std::string::npos);
  // The edit was validated (nothing validates a shell script here) in an
  // lsp_check execution of its own, and the report says so.
  EXPECT_EQ(results[1]["validation"]["status"], "no_validator");
  const json& file = r["report"]["files"][0];
  EXPECT_EQ(file["path"], "greet.sh");
  EXPECT_EQ(file["execution_ids"], json::array({r["execution_ids"][1]}));
  EXPECT_EQ(file["validation"]["status"], "no_validator");
  EXPECT_EQ(file["validation"]["execution_id"], results[1]["validation"]["execution_id"]);
  EXPECT_EQ(r["report"]["tool_calls"], 3);
  // The ledger agrees.
  json log = json::parse(RunOdin(ws_.path(), {"log", "--json"}).out);
  ASSERT_EQ(log.size(), 4u);
  EXPECT_EQ(log[0]["tool"], "ExecuteCommand");
  EXPECT_EQ(log[1]["tool"], "lsp_check");
  EXPECT_EQ(log[1]["execution_id"], file["validation"]["execution_id"]);
  EXPECT_EQ(RunOdin(ws_.path(), {"ledger", "verify"}).exit_code, 0);
}

// The model is told whether its commands have the network: only in edit
// mode, and only when the user turned it on.
TEST_F(OdinAgentTest, ExecuteCommandSaysWhetherCommandsHaveTheNetwork) {
  auto description = [](const json& request) {
    for (const json& t : request["body"]["tools"]) {
      if (t["function"]["name"] == "ExecuteCommand") return t["function"]["description"].get<std::string>();
    }
    return std::string();
  };
  for (auto [flags, network] :
       {std::pair{std::vector<std::string>{}, false}, std::pair{std::vector<std::string>{"--network"}, true},
        std::pair{std::vector<std::string>{"--network", "--mode", "ask"}, false}}) {
    FakeLlm llm(R"({"responses":[{"text":"ok"}]})");
    Prompt(llm, "hello", flags);
    std::vector<json> requests = Requests(llm);
    ASSERT_EQ(requests.size(), 1u) << last_.err;
    std::string d = description(requests[0]);
    EXPECT_EQ(d.find("the network (the user turned it on)") != std::string::npos, network) << d;
    EXPECT_EQ(d.find("no network") != std::string::npos, !network) << d;
  }
}

TEST_F(OdinAgentTest, ReadEditRunDoneOverAnthropic) {
  FakeLlm llm(kReadEditRun);
  Put("greet.sh", "echo hello\n");
  json r = Prompt(llm, "make greet.sh say goodbye", {}, /*anthropic=*/true);
  EXPECT_EQ(r["status"], "done") << last_.err;
  EXPECT_EQ(Get("greet.sh"), "echo goodbye\n");
  std::vector<json> requests = Requests(llm);
  ASSERT_EQ(requests.size(), 4u);
  EXPECT_EQ(requests[0]["path"], "/v1/messages");
  // Tool results travel back as tool_result blocks answering the tool_use ids.
  const json& last = LastMessageOf(requests[3]);
  EXPECT_EQ(last["role"], "user");
  EXPECT_EQ(last["content"][0]["type"], "tool_result");
  EXPECT_EQ(last["content"][0]["tool_use_id"], "toolu_0");
  EXPECT_EQ(json::parse(last["content"][0]["content"].get<std::string>())["authority"], "ground_truth");
}

TEST_F(OdinAgentTest, AskModeRefusesWriteFile) {
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"WriteFile","arguments":{"file_path":"new.txt","content":"x"}}]},
    {"text":"I cannot write in ask mode."}]})");
  json r = Prompt(llm, "write a file", {"--mode", "ask"});
  EXPECT_EQ(r["status"], "done");
  EXPECT_FALSE(PathExists(ws_.Join("new.txt")));
  std::vector<json> requests = Requests(llm);
  ASSERT_EQ(requests.size(), 2u);
  // Ask mode does not even offer the tool...
  for (const json& t : requests[0]["body"]["tools"]) EXPECT_NE(t["function"]["name"], "WriteFile");
  // ...and refuses it when the model calls it anyway.
  json result = ToolResults(requests[1])[0];
  EXPECT_EQ(result["status"], "rejected");
  EXPECT_NE(result["summary"].get<std::string>().find("not available in ask mode"), std::string::npos);
}

// Issue 47, item 15: the user sees each retry as it waits, with the
// server's Retry-After, not 8 silent seconds.
TEST_F(OdinAgentTest, RetriesA429ThenSucceeds) {
  FakeLlm llm(R"({"responses":[
    {"status":429,"headers":{"Retry-After":"1"},"body":"{\"error\":{\"message\":\"slow down\"}}"},
    {"status":429,"headers":{"Retry-After":"0"},"body":"{\"error\":{\"message\":\"slow down\"}}"},
    {"text":"fine now"}]})");
  json r = Prompt(llm, "hello");
  EXPECT_EQ(r["status"], "done");
  EXPECT_EQ(r["result"], "fine now");
  EXPECT_EQ(Requests(llm).size(), 3u);
  EXPECT_NE(
      last_.err.find("odin: the model's provider is rate-limiting (HTTP 429: slow down); retrying in 1 s (2/5)\n"
                     "odin: the model's provider is rate-limiting (HTTP 429: slow down); retrying in 0 s (3/5)\n"),
      std::string::npos)
      << last_.err;
}

// The provider's error words and the model's text are someone else's bytes:
// in -p's text output their control characters are shown, never obeyed.
TEST_F(OdinAgentTest, TextOutputShowsControlCharactersOfTheModelAndTheProvider) {
  FakeLlm llm(R"({"responses":[
    {"status":429,"headers":{"Retry-After":"0"},"body":"{\"error\":{\"message\":\"slow \u001b[2J down\"}}"},
    {"text":"done \u001b]0;pwned\u0007 ok"}]})");
  last_ = RunOdin(ws_.path(), {"-p", "hello"}, Env(llm));
  ASSERT_EQ(last_.exit_code, 0) << last_.err;
  EXPECT_EQ(last_.out.find('\x1b'), std::string::npos) << last_.out;
  EXPECT_EQ(last_.err.find('\x1b'), std::string::npos) << last_.err;
  EXPECT_NE(last_.out.find("done \\x1b]0;pwned\\x07 ok"), std::string::npos) << last_.out;
  EXPECT_NE(last_.err.find("slow \\x1b[2J down"), std::string::npos) << last_.err;
}

// The same in stream-json: a gate_event of kind model_retry, as it happens.
TEST_F(OdinAgentTest, AStreamShowsEachModelRetry) {
  FakeLlm llm(R"({"responses":[
    {"status":503,"headers":{"Retry-After":"0"},"body":"{\"error\":{\"message\":\"overloaded\"}}"},
    {"text":"fine now"}]})");
  last_ = RunOdin(ws_.path(), {"-p", "hello", "--output-format", "stream-json"}, Env(llm));
  ASSERT_EQ(last_.exit_code, 0) << last_.err;
  size_t retry = last_.out.find("\"kind\":\"model_retry\"");
  ASSERT_NE(retry, std::string::npos) << last_.out;
  size_t line = last_.out.rfind('\n', retry) + 1;
  json event = json::parse(last_.out.substr(line, last_.out.find('\n', retry) - line));
  EXPECT_EQ(event["type"], "gate_event");
  EXPECT_EQ(event["detail"]["http_status"], 503);
  EXPECT_EQ(event["detail"]["next_attempt"], 2);
  EXPECT_EQ(event["detail"]["max_attempts"], 5);
  EXPECT_LT(retry, last_.out.find("\"type\":\"result\"")) << "said after the result";
}

TEST_F(OdinAgentTest, ServerErrorsUntilTheRetriesRunOut) {
  UserConfig(R"({"llm":{"max_retries":2}})");
  FakeLlm llm(R"({"responses":[{"status":500,"repeat":10,"body":"{\"error\":{\"message\":\"boom\"}}"}]})");
  json r = Prompt(llm, "hello");
  EXPECT_EQ(r["status"], "error");
  EXPECT_EQ(last_.exit_code, 1);
  EXPECT_NE(r["error"].get<std::string>().find("gave up after 3 attempts"), std::string::npos) << r.dump();
  EXPECT_NE(r["error"].get<std::string>().find("HTTP 500: boom"), std::string::npos) << r.dump();
  EXPECT_EQ(Requests(llm).size(), 3u);
}

TEST_F(OdinAgentTest, TruncatedStreamIsAnErrorResultAndTheLoopGoesOn) {
  Put("a.txt", "x\n");
  FakeLlm llm(R"({"responses":[
    {"text":"reading","tool_calls":[{"name":"Read","arguments":{"file_path":"a.txt"}},
                                   {"name":"Read","arguments":{"file_path":"a.txt"}}],"truncate":true},
    {"text":"recovered"}]})");
  json r = Prompt(llm, "read it");
  EXPECT_EQ(r["status"], "done") << last_.err;
  EXPECT_EQ(r["result"], "recovered");
  EXPECT_TRUE(r["execution_ids"].empty());  // nothing from the cut-off response ran
  std::vector<json> requests = Requests(llm);
  ASSERT_EQ(requests.size(), 2u);
  std::vector<json> results = ToolResults(requests[1]);
  ASSERT_FALSE(results.empty());
  for (const json& res : results) {
    EXPECT_EQ(res["status"], "error");
    EXPECT_NE(res["summary"].get<std::string>().find("cut off"), std::string::npos);
  }
}

TEST_F(OdinAgentTest, AnErrorAfterStreamedTextIsNotRetriedBehindTheModelsBack) {
  for (bool anthropic : {false, true}) {
    FakeLlm llm(R"({"responses":[{"text":"partial words","error_after_text":true},{"text":"the rest"}]})");
    Ran run = RunOdin(ws_.path(), {"-p", "x", "--output-format", "stream-json"}, Env(llm, anthropic));
    EXPECT_EQ(run.exit_code, 0) << run.err;
    // "partial words" streamed once, the model was told it was cut off, and
    // went on: two requests, not a silent third.
    EXPECT_EQ(Requests(llm).size(), 2u) << anthropic;
    size_t first = run.out.find("partial words");
    ASSERT_NE(first, std::string::npos);
    EXPECT_EQ(run.out.find("partial words", first + 1), std::string::npos) << "streamed twice: " << run.out;
    EXPECT_NE(Requests(llm)[1]["body"].dump().find("cut off"), std::string::npos);
  }
}

TEST_F(OdinAgentTest, AnOkAnswerThatIsNotAStreamIsAClearError) {
  FakeLlm llm(R"({"responses":[{"status":200,"body":"<html>captive portal</html>"}]})");
  json r = Prompt(llm, "x");
  EXPECT_EQ(r["status"], "error");
  EXPECT_NE(r["error"].get<std::string>().find("answered 200 without a stream of events: <html>captive portal"),
            std::string::npos)
      << r.dump();
  EXPECT_EQ(Requests(llm).size(), 1u);
}

TEST_F(OdinAgentTest, InvalidToolCallsBecomeErrorResults) {
  Put("a.txt", "x\n");
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"Read","arguments_raw":"{\"file_path\": \"a.txt\""},
                   {"name":"Frobnicate","arguments":{"x":1}},
                   {"name":"Read","arguments":{}}]},
    {"text":"noted"}]})");
  json r = Prompt(llm, "go");
  EXPECT_EQ(r["status"], "done");
  std::vector<json> results = ToolResults(Requests(llm)[1]);
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0]["status"], "rejected");
  EXPECT_NE(results[0]["summary"].get<std::string>().find("not valid JSON"), std::string::npos);
  EXPECT_EQ(results[1]["status"], "rejected");
  EXPECT_NE(results[1]["summary"].get<std::string>().find("unknown tool 'Frobnicate'"), std::string::npos);
  EXPECT_EQ(results[2]["status"], "error");
  EXPECT_NE(results[2]["summary"].get<std::string>().find("missing required field 'file_path'"), std::string::npos);
  // Every one of them is on the record.
  EXPECT_EQ(json::parse(RunOdin(ws_.path(), {"log", "--json"}).out).size(), 3u);
}

TEST_F(OdinAgentTest, StreamJsonIsOneEventPerLine) {
  FakeLlm llm(R"({"responses":[
    {"text":"hi","tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"true"}}]},
    {"text":"bye"}]})");
  Ran run = RunOdin(ws_.path(), {"-p", "x", "--output-format", "stream-json"}, Env(llm));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::vector<std::string> types;
  size_t start = 0;
  while (start < run.out.size()) {
    size_t nl = run.out.find('\n', start);
    types.push_back(json::parse(run.out.substr(start, nl - start))["type"]);
    start = nl + 1;
  }
  std::vector<std::string> expected = {"session_start", "message_start", "text_delta", "llm_call", "tool_call_start",
                                       "tool_call_end", "text_delta",    "llm_call",   "result"};
  EXPECT_EQ(types, expected);
}

TEST_F(OdinAgentTest, TextOutputIsTheAnswer) {
  FakeLlm llm(R"({"responses":[{"text":"The answer is 42."}]})");
  Ran run = RunOdin(ws_.path(), {"-p", "question"}, Env(llm));
  EXPECT_EQ(run.exit_code, 0);
  // The model's words, labelled, then the report from the ledger.
  const std::string label = "Model's explanation (its own words; the report below is from the ledger):\n";
  EXPECT_EQ(run.out.substr(0, label.size() + 19), label + "The answer is 42.\n\n");
  EXPECT_NE(run.out.find("── Odin report (from the ledger, session ses_"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("Changed files: none\n"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("1 model calls"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("Status: done\n"), std::string::npos) << run.out;
  Ran via_run = RunOdin(ws_.path(), {"run", "question"}, Env(llm));
  // The same path: the next scripted answer.
  EXPECT_EQ(via_run.out.substr(0, label.size() + 20), label + "(script exhausted)\n\n");
}

TEST_F(OdinAgentTest, MissingKeyAndUnreachableProviderAreOneClearLine) {
  Ran missing = RunOdin(
      ws_.path(), {"-p", "x"},
      UserDirs(
          {{"OPENAI_API_KEY", ""}, {"OPENAI_BASE_URL", ""}, {"ANTHROPIC_API_KEY", ""}, {"ANTHROPIC_BASE_URL", ""}}));
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(missing.err,
            "odin: OPENAI_API_KEY is not set: it is needed for openai at https://api.openai.com/v1 "
            "(or set OPENAI_BASE_URL to a local server; --provider demo runs the scripted demo model, no key "
            "needed)\n");
  EXPECT_FALSE(PathExists(ws_.Join(".odin")));  // nothing started

  UserConfig(R"({"llm":{"max_retries":0}})");
  Ran unreachable = RunOdin(ws_.path(), {"-p", "x"},
                            UserDirs({{"OPENAI_BASE_URL", "http://127.0.0.1:1/v1"}, {"OPENAI_API_KEY", "k"}}));
  EXPECT_EQ(unreachable.exit_code, 1);
  EXPECT_NE(unreachable.err.find("cannot reach http://127.0.0.1:1/v1/chat/completions"), std::string::npos)
      << unreachable.err;
  EXPECT_EQ(std::count(unreachable.err.begin(), unreachable.err.end(), '\n'), 1);
}

TEST_F(OdinAgentTest, QueueOfThreeMessagesInDifferentModes) {
  FakeLlm llm(R"({"responses":[{"text":"one"},{"text":"two"},{"text":"three"}]})");
  int in, out;
  pid_t pid = StartOdinPiped(ws_.path(), {}, &in, &out, Env(llm));
  // All three arrive at once: the later ones wait their turn, each with its mode.
  std::string input = "/ask\nfirst question\n/plan\nsecond\n/edit\nthird\n";
  ASSERT_EQ(write(in, input.data(), input.size()), static_cast<ssize_t>(input.size()));
  close(in);                                                     // end of input: odin finishes the queue, then leaves
  std::string seen = ReadUntil(out, "(the end of the output)");  // all of it, to EOF
  close(out);
  EXPECT_EQ(Wait(pid), 0);
  EXPECT_NE(seen.find("one"), std::string::npos) << seen;
  EXPECT_NE(seen.find("\nthree"), std::string::npos) << seen;
  // Each answer is followed by its report from the ledger.
  size_t reports = 0;
  for (size_t at = seen.find("── Odin report"); at != std::string::npos; at = seen.find("── Odin report", at + 1)) {
    ++reports;
  }
  EXPECT_EQ(reports, 3u) << seen;
  std::vector<json> requests = Requests(llm);
  ASSERT_EQ(requests.size(), 3u);
  const char* modes[] = {"Mode: ask", "Mode: plan", "Mode: edit"};
  const char* texts[] = {"first question", "second", "third"};
  for (int i = 0; i < 3; ++i) {
    const json& messages = requests[i]["body"]["messages"];
    EXPECT_NE(messages[0]["content"].get<std::string>().find(modes[i]), std::string::npos) << i;
    EXPECT_EQ(messages.back()["content"], texts[i]);
    bool offers_write = false;
    for (const json& t : requests[i]["body"]["tools"]) offers_write |= t["function"]["name"] == "WriteFile";
    EXPECT_EQ(offers_write, i == 2) << i;
  }
  // The conversation carries over: the third request holds the first two.
  EXPECT_EQ(requests[2]["body"]["messages"].size(), 6u);
}

TEST_F(OdinAgentTest, AskMessagesOfAnInteractiveSessionRunOnReadOnlyWorkers) {
  if (system("bwrap --ro-bind / / --unshare-pid --unshare-net true >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "bubblewrap cannot create namespaces here: no read-only workspace to test";
  }
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"touch from-ask.txt"}}]},{"text":"asked"},
    {"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"touch from-edit.txt"}}]},{"text":"edited"}]})");
  int in, out;
  pid_t pid = StartOdinPiped(ws_.path(), {}, &in, &out, Env(llm));
  std::string input = "/ask\nlook only\n/edit\nnow change\n";
  ASSERT_EQ(write(in, input.data(), input.size()), static_cast<ssize_t>(input.size()));
  close(in);
  ReadUntil(out, "\nedited");
  close(out);
  EXPECT_EQ(Wait(pid), 0);
  // One session, two policies: the ask message's command met a read-only
  // workspace, the edit message's a writable one.
  EXPECT_FALSE(PathExists(ws_.Join("from-ask.txt")));
  EXPECT_TRUE(PathExists(ws_.Join("from-edit.txt")));
}

TEST_F(OdinAgentTest, CtrlCCancelsTheTurnAndTheSessionGoesOn) {
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"touch started.flag; sleep 30"}}]},
    {"text":"second answer"}]})");
  int in, out;
  pid_t pid = StartOdinPiped(ws_.path(), {}, &in, &out, Env(llm));
  std::string first = "run the long thing\n";
  ASSERT_EQ(write(in, first.data(), first.size()), static_cast<ssize_t>(first.size()));
  // The command's files wait in its overlay until it ends.
  auto started = [&] {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(ws_.Join(".odin/overlay"), ec)) {
      if (PathExists(e.path().string() + "/u/started.flag")) return true;
    }
    return PathExists(ws_.Join("started.flag"));
  };
  ASSERT_TRUE(WaitUntil(started, std::chrono::seconds(12)));
  kill(pid, SIGINT);
  std::string seen = ReadUntil(out, "(cancelled)");
  EXPECT_NE(seen.find("cancelling the current turn"), std::string::npos) << seen;
  std::string second = "and now?\n";
  ASSERT_EQ(write(in, second.data(), second.size()), static_cast<ssize_t>(second.size()));
  seen = ReadUntil(out, "second answer");
  EXPECT_NE(seen.find("second answer"), std::string::npos) << seen;
  close(in);
  close(out);
  EXPECT_EQ(Wait(pid), 0);
  json log = json::parse(RunOdin(ws_.path(), {"log", "--json"}).out);
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0]["status"], "cancelled");
}

}  // namespace
}  // namespace odin::testing
