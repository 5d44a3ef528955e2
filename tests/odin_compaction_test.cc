// Long sessions end to end: the real odin against a fake model that refuses
// requests past its context window with the provider's real error, so the
// conversation must be compacted before it gets there, and keep what matters
// when it is.

#include <algorithm>
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

constexpr int kWindow = 16000;  // tokens, as the fake server counts them

// A handoff summary as a utility model would write it.
const char kSummary[] =
    R"({"done": ["ran the batch commands"], "pending": ["finish the batch"], "current_state": "running batch commands"})";

class OdinCompactionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(MakeDirs(ws_.Join(".git")).ok());
    ASSERT_TRUE(MakeDirs(user_.Join("config/odin")).ok());
    json config = {{"checks", {{"build", ""}, {"lint", ""}, {"tests", ""}}}};
    ASSERT_TRUE(WriteFileAtomic(user_.Join("config/odin/odinconfig.json"), config.dump()).ok());
  }
  void TearDown() override {
    EXPECT_TRUE(ProcessesLeftWithEnv("ODIN_TEST_MARK", marker_).empty()) << "processes left behind";
  }
  std::map<std::string, std::string> Env(const FakeLlm& llm) { return FakeModelEnv(llm, marker_, user_); }
  json Prompt(const FakeLlm& llm, const std::string& prompt, std::vector<std::string> more = {}) {
    std::vector<std::string> args = {
        "-p", prompt, "--output-format", "json", "--context-window", std::to_string(kWindow)};
    args.insert(args.end(), more.begin(), more.end());
    last_ = RunOdin(ws_.path(), args, Env(llm));
    return json::parse(last_.out, nullptr, false);
  }
  std::vector<std::string> Rows(const std::string& sql) { return LedgerRows(ws_.Join(".odin/odin.db"), sql); }
  static std::vector<json> Refused(const FakeLlm& llm) {
    std::vector<json> out;
    for (const json& r : RequestsOf(llm)) {
      if (r.contains("refused_tokens")) out.push_back(r);
    }
    return out;
  }
  // The first user message of an OpenAI request: after a compaction, the handoff.
  static std::string FirstUserText(const json& request) {
    for (const json& m : request["body"]["messages"]) {
      if (m["role"] == "user") return m["content"].is_string() ? m["content"].get<std::string>() : m["content"].dump();
    }
    return "";
  }
  // The requests the server answered: a refusal (of its size or of a field)
  // is logged with no body.
  static std::vector<json> Answered(const FakeLlm& llm) {
    std::vector<json> out;
    for (const json& r : RequestsOf(llm)) {
      if (r.contains("body")) out.push_back(r);
    }
    return out;
  }

  TempWorkspace ws_;
  TempWorkspace user_;  // XDG_CONFIG_HOME and XDG_STATE_HOME
  std::string marker_ = UniqueMarker();
  Ran last_;
};

// 300 calls, each returning about 1.6 KB, in a 16,000-token window: the
// session finishes, every request fits, and after a compaction the model
// still has the todo ids, the failed attempt's id and the instructions.
TEST_F(OdinCompactionTest, AThreeHundredCallSessionCompactsBeforeTheLimitAndKeepsWhatMatters) {
  ASSERT_TRUE(WriteFileAtomic(ws_.Join("AGENTS.md"), "Project rule: the batch word is PELICAN-SEVEN.\n").ok());
  json responses = json::array();
  responses.push_back(
      Turn({Call("TodoWrite", {{"todos",
                                {{{"id", "todo-alpha"}, {"content", "run the batch"}, {"status", "in_progress"}},
                                 {{"id", "todo-beta"}, {"content", "report"}, {"status", "pending"}}}}}),
            Call("ExecuteCommand", {{"command", "echo broken-step; exit 3"}})}));
  for (int i = 0; i < 300; ++i) {
    responses.push_back(
        Turn({Call("ExecuteCommand",
                   {{"command", "echo step-" + Word(i) + "; head -c 1500 /dev/zero | tr '\\\\0' " + Word(i % 26)}})}));
  }
  responses.push_back(Text("Batch finished."));
  FakeLlm llm(json({{"responses", responses},
                    {"context_window", kWindow},
                    {"by_system", {{"handoff note", {{"text", kSummary}}}}}})
                  .dump());
  json r = Prompt(llm, "Run the batch: keep every step's output short.", {"--max-turns", "400"});
  ASSERT_FALSE(r.is_discarded()) << last_.out << last_.err;
  EXPECT_EQ(r["status"], "done") << last_.err;
  EXPECT_EQ(last_.exit_code, 0);
  // Compaction came before the limit: the server refused nothing.
  EXPECT_TRUE(Refused(llm).empty());
  std::vector<std::string> compactions =
      Rows("SELECT json_extract(detail_json, '$.how') FROM gate_events WHERE kind = 'compaction' ORDER BY seq");
  ASSERT_FALSE(compactions.empty());
  EXPECT_NE(std::find(compactions.begin(), compactions.end(), "summarized"), compactions.end());
  // Every compaction made the conversation smaller.
  for (const std::string& row : Rows("SELECT json_extract(detail_json, '$.tokens_before') || '|' || "
                                     "json_extract(detail_json, '$.tokens_after') FROM gate_events WHERE kind = "
                                     "'compaction'")) {
    int64_t before = std::stoll(row.substr(0, row.find('|'))), after = std::stoll(row.substr(row.find('|') + 1));
    EXPECT_LT(after, before) << row;
  }
  std::vector<std::string> failed = Rows(
      "SELECT s.execution_id FROM execution_starts s JOIN execution_ends e ON e.execution_id = s.execution_id "
      "WHERE s.args_json LIKE '%broken-step%'");
  ASSERT_EQ(failed.size(), 1u);
  // The requests after the first summary hold what matters.
  std::vector<json> answered = Answered(llm);
  auto first = std::find_if(answered.begin(), answered.end(), [](const json& q) {
    return q["body"].dump().find("Context compacted") != std::string::npos &&
           q["body"].dump().find("Summary of the replaced turns") != std::string::npos;
  });
  ASSERT_NE(first, answered.end()) << "no request carried a summarised handoff";
  std::string body = (*first)["body"].dump();
  for (const std::string& want :
       {std::string("todo-alpha"), std::string("todo-beta"), failed[0], std::string("PELICAN-SEVEN"),
        std::string("Run the batch: keep every step"), std::string("running batch commands")}) {
    EXPECT_NE(body.find(want), std::string::npos) << want;
  }
  // The last request too (the conversation kept compacting as it grew).
  EXPECT_NE(answered.back()["body"].dump().find("todo-alpha"), std::string::npos);
  // The utility model's calls are in the ledger and the budget.
  EXPECT_FALSE(Rows("SELECT id FROM llm_calls WHERE role = 'utility'").empty());
  EXPECT_EQ(RunOdin(ws_.path(), {"ledger", "verify"}, Env(llm)).exit_code, 0);
}

// Issue 51's session: 500 calls, each printing 300 lines, in a window of
// 16,000 tokens, against a server that refuses anything longer and whose
// utility model answers every summary request in prose instead of the JSON
// asked for. The session ends done; a refused request never reaches the
// server again unchanged (at most one refusal per compaction); and at call
// 480 the handoff still holds the blocked file, the todo list and the failed
// attempt of call 3, Odin's records, beside the model's prose.
TEST_F(OdinCompactionTest, FiveHundredCallsWithProseSummariesFinish) {
  json config = {
      {"checks", {{"build", ""}, {"lint", ""}, {"tests", ""}}},
      {"validation", {{"check_commands", {{".zz", {"/bin/sh", "-c", "grep -n ERROR {file} && exit 1; exit 0"}}}}}}};
  ASSERT_TRUE(WriteFileAtomic(user_.Join("config/odin/odinconfig.json"), config.dump()).ok());
  constexpr int kCalls = 500;
  json responses = json::array();
  responses.push_back(Turn({Call(
      "TodoWrite", {{"todos", {{{"id", "todo-alpha"}, {"content", "run the batch"}, {"status", "in_progress"}}}}})}));
  responses.push_back(Turn({Call("WriteFile", {{"file_path", "broken.zz"}, {"content", "ERROR left for later\n"}})}));
  responses.push_back(Turn({Call("ExecuteCommand", {{"command", "echo broken-step; exit 3"}})}));
  for (int i = 3; i < kCalls - 1; ++i) {
    responses.push_back(Turn({Call(
        "ExecuteCommand", {{"command", "echo step-" + Word(i) + "; seq 300 | sed 's/^/" + Word(i) + " line /'"}})}));
  }
  // Its write left the conversation, so the file is read again before it is fixed.
  responses.push_back(Turn({Call("Read", {{"file_path", "broken.zz"}})}));
  responses.push_back(Turn({Call("WriteFile", {{"file_path", "broken.zz"}, {"content", "fixed\n"}})}));
  responses.push_back(Text("Batch finished."));
  const std::string prose =
      "The agent has been running the batch commands one at a time; each printed its lines and exited cleanly, "
      "apart from an early step that failed. It should keep going with the next step.";
  FakeLlm llm(
      json(
          {{"responses", responses}, {"context_window", kWindow}, {"by_system", {{"handoff note", {{"text", prose}}}}}})
          .dump());
  json r = Prompt(llm, "Run the batch, step by step.");
  ASSERT_FALSE(r.is_discarded()) << last_.out << last_.err;
  EXPECT_EQ(r["status"], "done") << r.value("error", "") << last_.err;
  EXPECT_EQ(last_.exit_code, 0);
  EXPECT_EQ(*ReadFileToString(ws_.Join("broken.zz")), "fixed\n");

  std::vector<std::string> compactions = Rows(
      "SELECT json_extract(detail_json, '$.trigger') || '|' || json_extract(detail_json, '$.how') || '|' || "
      "IFNULL(json_extract(detail_json, '$.summary_form'), '') FROM gate_events WHERE kind = 'compaction'");
  ASSERT_FALSE(compactions.empty());
  EXPECT_NE(std::find(compactions.begin(), compactions.end(), "threshold|summarized|prose"), compactions.end());
  size_t after_errors = std::count_if(compactions.begin(), compactions.end(),
                                      [](const std::string& c) { return c.rfind("context_error|", 0) == 0; });
  EXPECT_LE(Refused(llm).size(), after_errors);

  std::vector<std::string> failed =
      Rows("SELECT execution_id FROM execution_starts WHERE args_json LIKE '%broken-step%'");
  ASSERT_EQ(failed.size(), 1u);
  std::vector<json> planner;
  for (const json& q : Answered(llm)) {
    if (q["n"].get<int64_t>() < 1000000) planner.push_back(q);
  }
  ASSERT_EQ(planner.size(), responses.size());
  // The request of call 480 opens with the latest handoff.
  std::string at480 = FirstUserText(planner[480]);
  for (const std::string& want :
       {std::string("Context compacted"), std::string("Blocked: broken.zz"), std::string("todo-alpha"), failed[0],
        std::string("Run the batch, step by step."), std::string("not in the form asked for"), prose}) {
    EXPECT_NE(at480.find(want), std::string::npos) << want << "\n" << at480.substr(0, 4000);
  }
  EXPECT_EQ(RunOdin(ws_.path(), {"ledger", "verify"}, Env(llm)).exit_code, 0);
}

// A request that compaction cannot shrink (one huge user message) ends with
// a clear error and exit code 6: no compaction makes it smaller, so it is
// never sent again.
// /compact FOCUS in the interactive session: the conversation is compacted
// while the agent is idle, and the next message starts from the handoff.
TEST_F(OdinCompactionTest, SlashCompactInTheInteractiveSession) {
  json responses = {Turn({Call("ExecuteCommand", {{"command", "echo a"}})}),
                    Turn({Call("ExecuteCommand", {{"command", "echo b"}})}),
                    Turn({Call("ExecuteCommand", {{"command", "echo c"}})}),
                    Turn({Call("ExecuteCommand", {{"command", "echo d"}})}),
                    Text("Four commands ran."),
                    Text("Next done.")};
  FakeLlm llm(json({{"responses", responses}, {"by_system", {{"handoff note", {{"text", kSummary}}}}}}).dump());
  int in = -1, out = -1;
  pid_t pid = StartOdinPiped(ws_.path(), {}, &in, &out, Env(llm));
  auto say = [&](const std::string& line) {
    std::string text = line + "\n";
    ASSERT_EQ(write(in, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  };
  say("run four commands");
  ReadUntil(out, "Status: done");
  say("/compact the command outputs");
  std::string seen = ReadUntil(out, "tokens; cmp_");
  EXPECT_NE(seen.find("context compacted, summarized"), std::string::npos) << seen;
  say("/cost");
  seen = ReadUntil(out, "compactions");
  EXPECT_NE(seen.find("1 compactions"), std::string::npos) << seen;
  say("next");
  ReadUntil(out, "Status: done");
  close(in);
  close(out);
  EXPECT_EQ(Wait(pid), 0);
  EXPECT_EQ(Rows("SELECT json_extract(detail_json, '$.trigger') || '|' || json_extract(detail_json, '$.focus') FROM "
                 "gate_events WHERE kind = 'compaction'"),
            std::vector<std::string>{"user|the command outputs"});
  std::vector<json> answered = Answered(llm);
  ASSERT_FALSE(answered.empty());
  std::string last = answered.back()["body"].dump();
  EXPECT_NE(last.find("Context compacted"), std::string::npos);
  EXPECT_NE(last.find("run four commands"), std::string::npos);  // the user's words, in the handoff
}

class OdinTooBigTest : public OdinCompactionTest, public ::testing::WithParamInterface<bool> {};

TEST_P(OdinTooBigTest, AMessageTooBigForTheWindowEndsWithItsOwnExitCode) {
  bool anthropic = GetParam();
  FakeLlm llm(json({{"responses", {Text("never reached")}}, {"context_window", kWindow}}).dump());
  std::string huge = "Summarise this: " + std::string(100000, 'z');
  std::map<std::string, std::string> env = Env(llm);
  if (anthropic) {
    env["ANTHROPIC_BASE_URL"] = llm.AnthropicUrl();
    env["ANTHROPIC_API_KEY"] = "test-key";
  }
  std::vector<std::string> args = {"-p", huge, "--output-format", "json", "--context-window", std::to_string(kWindow)};
  if (anthropic) args.insert(args.end(), {"--provider", "anthropic"});
  last_ = RunOdin(ws_.path(), args, env);
  json r = json::parse(last_.out, nullptr, false);
  EXPECT_EQ(last_.exit_code, 6) << last_.out << last_.err;
  ASSERT_FALSE(r.is_discarded()) << last_.out;
  EXPECT_EQ(r["status"], "context_exhausted");
  EXPECT_NE(r.value("error", "").find("does not fit the model's context window even after compaction"),
            std::string::npos)
      << r.dump();
  EXPECT_NE(r.value("error", "").find(anthropic ? "prompt is too long" : "maximum context length"), std::string::npos)
      << r.dump();
  // Never the same request twice: nothing could make it smaller.
  EXPECT_EQ(Refused(llm).size(), 1u);
  EXPECT_TRUE(Answered(llm).empty());
}

INSTANTIATE_TEST_SUITE_P(BothWireFormats, OdinTooBigTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& p) { return p.param ? "Anthropic" : "OpenAi"; });

// The model asks for a compaction (ContextSummarizer); the utility model
// answers in prose, or its request fails: the older turns are replaced all
// the same (the prose kept as the summary, or the handoff saying there is
// none, the failure recorded), the session goes on; the Read that left the
// conversation left the file cache, so an edit based on it is refused until
// the file is read again.
// A subagent compacts the same way, and its handoff holds the ledger's
// facts, which the coordinator reads for it (its loop runs without the
// ledger).
TEST_F(OdinCompactionTest, ASubagentsHandoffHoldsTheLedgersFacts) {
  json sub = json::array({Turn({Call("ExecuteCommand", {{"command", "echo sub-broken; exit 4"}})}),
                          Turn({Call("ExecuteCommand", {{"command", "echo one"}})}),
                          Turn({Call("ExecuteCommand", {{"command", "echo two"}})}),
                          Turn({Call("ExecuteCommand", {{"command", "echo three"}})}),
                          Turn({Call("ContextSummarizer", json::object())}), Text("sub done")});
  FakeLlm llm(
      json({{"responses",
             {Turn({Call("AgentTool",
                         {{"description", "helper"}, {"prompt", "helper task: run four commands"}, {"mode", "edit"}})}),
              Text("All done.")}},
            {"agents", {{"helper task", sub}}},
            {"by_system", {{"handoff note", {{"text", kSummary}}}}}})
          .dump());
  json r = Prompt(llm, "delegate the commands");
  ASSERT_FALSE(r.is_discarded()) << last_.out << last_.err;
  EXPECT_EQ(r["status"], "done") << last_.err;
  std::vector<std::string> failed = Rows(
      "SELECT s.execution_id FROM execution_starts s WHERE s.args_json LIKE '%sub-broken%' AND s.agent_id LIKE "
      "'sub_%'");
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(Rows("SELECT json_extract(detail_json, '$.how') FROM gate_events WHERE kind = 'compaction' AND "
                 "agent_id LIKE 'sub_%'"),
            std::vector<std::string>{"summarized"});
  EXPECT_EQ(Rows("SELECT COUNT(*) FROM llm_calls WHERE role = 'utility' AND agent_id LIKE 'sub_%'"),
            std::vector<std::string>{"1"});
  // The subagent's request after the compaction carries the handoff with its
  // failed attempt's id.
  std::vector<json> answered = Answered(llm);
  auto after = std::find_if(answered.begin(), answered.end(), [](const json& q) {
    return q["n"].get<int64_t>() >= 1000000 && q["n"].get<int64_t>() < 2000000 &&
           q["body"].dump().find("Context compacted") != std::string::npos;
  });
  ASSERT_NE(after, answered.end());
  EXPECT_NE((*after)["body"].dump().find(failed[0]), std::string::npos);
  EXPECT_NE((*after)["body"].dump().find("helper task: run four commands"), std::string::npos);
}

class OdinFailedSummaryTest : public OdinCompactionTest, public ::testing::WithParamInterface<bool> {};

TEST_P(OdinFailedSummaryTest, TheHandoffReplacesTheOlderTurnsAndTheirReadsMustBeReadAgain) {
  bool prose = GetParam();
  ASSERT_TRUE(WriteFileAtomic(ws_.Join("a.txt"), "alpha\n").ok());
  json edit = Call("EditTool", {{"file_path", "a.txt"}, {"old_string", "alpha"}, {"new_string", "beta"}});
  json responses = {Turn({Call("Read", {{"file_path", "a.txt"}})}),
                    Turn({Call("ExecuteCommand", {{"command", "echo one"}})}),
                    Turn({Call("ExecuteCommand", {{"command", "echo two"}})}),
                    Turn({Call("ExecuteCommand", {{"command", "echo three"}})}),
                    Turn({Call("ContextSummarizer", {{"focus", "the edit of a.txt"}})}),
                    Turn({edit}),
                    Turn({Call("Read", {{"file_path", "a.txt"}})}),
                    Turn({edit}),
                    Text("Changed alpha to beta.")};
  // Prose, or a refusal of the request itself.
  json summary = prose ? json{{"text", "I would rather not."}}
                       : json{{"status", 400}, {"body", R"({"error":{"message":"bad request"}})"}};
  FakeLlm llm(json({{"responses", responses}, {"by_system", {{"handoff note", summary}}}}).dump());
  json r = Prompt(llm, "change alpha to beta in a.txt");
  ASSERT_FALSE(r.is_discarded()) << last_.out << last_.err;
  EXPECT_EQ(r["status"], "done") << last_.err;
  EXPECT_EQ(*ReadFileToString(ws_.Join("a.txt")), "beta\n");
  std::vector<std::string> rows = Rows(
      "SELECT json_extract(detail_json, '$.trigger') || '|' || json_extract(detail_json, '$.how') || '|' || "
      "json_extract(detail_json, '$.focus') || '|' || (json_extract(detail_json, '$.failure') IS NOT NULL) FROM "
      "gate_events WHERE kind = 'compaction'");
  EXPECT_EQ(rows, std::vector<std::string>({prose ? "tool|summarized|the edit of a.txt|0"
                                                  : "tool|handoff_without_summary|the edit of a.txt|1"}));
  std::vector<json> answered = Answered(llm);
  // The planner's requests: the script's 9, plus the one summary request.
  std::vector<json> planner;
  for (const json& q : answered) {
    if (q["n"].get<int64_t>() < 1000000) planner.push_back(q);
  }
  ASSERT_EQ(planner.size(), 9u);
  // After the compaction the Read is gone: the handoff stands for it.
  std::string handoff = FirstUserText(planner[5]);
  EXPECT_NE(handoff.find("Context compacted"), std::string::npos) << handoff;
  EXPECT_NE(handoff.find(prose ? "I would rather not." : "No summary of the replaced turns"), std::string::npos)
      << handoff;
  for (const json& result : ToolResultsOf(planner[5])) EXPECT_NE(result.value("tool", ""), "Read") << result.dump();
  // The first edit was refused: the bytes it was based on were masked.
  json refused = ToolResultsOf(planner[6]).back();
  EXPECT_EQ(refused["status"], "rejected") << refused.dump();
  json landed = ToolResultsOf(planner[8]).back();
  EXPECT_EQ(landed["status"], "ok") << landed.dump();
}

INSTANTIATE_TEST_SUITE_P(ProseOrError, OdinFailedSummaryTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& p) { return p.param ? "Prose" : "Error"; });

// The summary is asked for in the provider's structured-output form: OpenAI's
// response_format with the note's JSON schema, Anthropic's forced call of a
// handoff_note tool, whose input is the summary. A server that refuses the
// field (vLLM, llama.cpp and proxies that do not know it) is asked again at
// once without it, and never sent it again in the session.
class OdinStructuredSummaryTest : public OdinCompactionTest, public ::testing::WithParamInterface<std::string> {};

TEST_P(OdinStructuredSummaryTest, TheSummaryIsAskedForInTheProvidersForm) {
  const std::string kind = GetParam();
  bool anthropic = kind == "Anthropic";
  json turns = {Turn({Call("ExecuteCommand", {{"command", "echo one"}})}),
                Turn({Call("ExecuteCommand", {{"command", "echo two"}})}),
                Turn({Call("ExecuteCommand", {{"command", "echo three"}})}),
                Turn({Call("ExecuteCommand", {{"command", "echo four"}})}),
                Turn({Call("ContextSummarizer", json::object())}),
                Turn({Call("ExecuteCommand", {{"command", "echo five"}})}),
                Turn({Call("ExecuteCommand", {{"command", "echo six"}})}),
                Turn({Call("ExecuteCommand", {{"command", "echo seven"}})}),
                Turn({Call("ContextSummarizer", json::object())}),
                Text("Done.")};
  json summary = anthropic ? Turn({Call("handoff_note", json::parse(kSummary))}) : json{{"text", kSummary}};
  json script = {{"responses", turns}, {"by_system", {{"handoff note", summary}}}};
  if (kind == "RefusedField") script["refuse_fields"] = {"response_format"};
  FakeLlm llm(script.dump());
  std::map<std::string, std::string> env = Env(llm);
  std::vector<std::string> args = {"-p", "run the commands", "--output-format", "json"};
  if (anthropic) {
    env["ANTHROPIC_BASE_URL"] = llm.AnthropicUrl();
    env["ANTHROPIC_API_KEY"] = "test-key";
    args.insert(args.end(), {"--provider", "anthropic"});
  }
  last_ = RunOdin(ws_.path(), args, env);
  json r = json::parse(last_.out, nullptr, false);
  ASSERT_FALSE(r.is_discarded()) << last_.out << last_.err;
  EXPECT_EQ(r["status"], "done") << last_.err;
  EXPECT_EQ(Rows("SELECT json_extract(detail_json, '$.how') || '|' || json_extract(detail_json, '$.summary_form') "
                 "FROM gate_events WHERE kind = 'compaction' ORDER BY seq"),
            (std::vector<std::string>{"summarized|json", "summarized|json"}));
  std::vector<json> asked, refused;
  for (const json& q : RequestsOf(llm)) {
    if (q.contains("refused_field")) refused.push_back(q);
    if (q.value("n", int64_t{0}) >= 2000000) asked.push_back(q["body"]);
  }
  ASSERT_EQ(asked.size(), 2u);
  for (size_t i = 0; i < asked.size(); ++i) {
    SCOPED_TRACE(i);
    const json& body = asked[i];
    if (anthropic) {
      EXPECT_EQ(body["tool_choice"], json({{"type", "tool"}, {"name", "handoff_note"}})) << body.dump();
      ASSERT_EQ(body["tools"].size(), 1u);
      EXPECT_EQ(body["tools"][0]["input_schema"]["required"], json({"done", "pending", "current_state"}));
    } else if (kind == "OpenAi") {
      EXPECT_EQ(body["response_format"]["type"], "json_schema") << body.dump();
      EXPECT_EQ(body["response_format"]["json_schema"]["name"], "handoff_note");
    } else {
      EXPECT_FALSE(body.contains("response_format")) << "asked again without it, and not sent it again";
    }
  }
  EXPECT_EQ(refused.size(), kind == "RefusedField" ? 1u : 0u);
  // The summary reached the model, from the tool's input on Anthropic.
  bool seen = false;
  for (const json& q : Answered(llm)) {
    if (q.value("n", int64_t{0}) < 1000000 &&
        q["body"].dump().find("current state: running batch commands") != std::string::npos) {
      seen = true;
    }
  }
  EXPECT_TRUE(seen);
}

INSTANTIATE_TEST_SUITE_P(Providers, OdinStructuredSummaryTest, ::testing::Values("OpenAi", "Anthropic", "RefusedField"),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

// Lines Grep showed count as read (the control: the edit lands on them);
// once that Grep's output is masked, they no longer do.
TEST_F(OdinCompactionTest, AMaskedGrepLeavesTheFileCacheToo) {
  for (bool compact : {false, true}) {
    SCOPED_TRACE(compact ? "compacted" : "control");
    ASSERT_TRUE(WriteFileAtomic(ws_.Join("g.txt"), "alpha\n").ok());
    json edit = Call("EditTool", {{"file_path", "g.txt"}, {"old_string", "alpha"}, {"new_string", "beta"}});
    json responses = {Turn({Call("Grep", {{"pattern", "alpha"}, {"path", "g.txt"}, {"output_mode", "content"}})}),
                      Turn({Call("ExecuteCommand", {{"command", "echo one"}})}),
                      Turn({Call("ExecuteCommand", {{"command", "echo two"}})}),
                      Turn({Call("ExecuteCommand", {{"command", "echo three"}})})};
    if (compact) responses.push_back(Turn({Call("ContextSummarizer", json::object())}));
    responses.push_back(Turn({edit}));
    responses.push_back(Text("Done."));
    FakeLlm llm(json({{"responses", responses}, {"by_system", {{"handoff note", {{"text", kSummary}}}}}}).dump());
    json r = Prompt(llm, "change alpha to beta in g.txt");
    ASSERT_FALSE(r.is_discarded()) << last_.out << last_.err;
    EXPECT_EQ(*ReadFileToString(ws_.Join("g.txt")), compact ? "alpha\n" : "beta\n");
  }
}

}  // namespace
}  // namespace odin::testing
