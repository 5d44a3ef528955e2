#include "planner/compaction.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "planner/context_window.h"

namespace odin {
namespace {

using nlohmann::json;

ChatMessage User(const std::string& text) { return {ChatMessage::Role::kUser, text, {}, {}}; }
ChatMessage Calls(std::vector<ToolCallRequest> calls) { return {ChatMessage::Role::kAssistant, "", calls, {}}; }
ChatMessage Results(std::vector<ToolResultMessage> results) {
  return {ChatMessage::Role::kToolResults, "", {}, results};
}
std::string Record(const std::string& id, const std::string& tool, const std::string& output) {
  return json({{"execution_id", id},
               {"tool", tool},
               {"status", "ok"},
               {"authority", "ground_truth"},
               {"output", output}})
      .dump();
}

// A conversation of n turns, each reading a file and getting 1 KB back.
std::vector<ChatMessage> Conversation(int n) {
  std::vector<ChatMessage> h = {User("fix the parser")};
  for (int i = 0; i < n; ++i) {
    std::string id = "ex_" + std::to_string(i), call = "c" + std::to_string(i);
    h.push_back(Calls({{call, "Read", json({{"file_path", "src/f" + std::to_string(i) + ".c"}}).dump()}}));
    h.push_back(Results({{call, Record(id, "Read", std::string(1000, 'x')), false}}));
  }
  return h;
}

TEST(ContextWindowTest, KnownFamiliesAndTheDefault) {
  EXPECT_EQ(DefaultContextWindow("claude-sonnet-4-5"), 200000);
  EXPECT_EQ(DefaultContextWindow("anthropic/claude-opus-4"), 200000);
  EXPECT_EQ(DefaultContextWindow("gpt-4o-mini"), 128000);
  EXPECT_EQ(DefaultContextWindow("gpt-4.1"), 1047576);
  EXPECT_EQ(DefaultContextWindow("GPT-4"), 8192);
  EXPECT_EQ(DefaultContextWindow("o1-mini"), 128000);
  EXPECT_EQ(DefaultContextWindow("o1-preview"), 200000);
  EXPECT_EQ(DefaultContextWindow("some-local-model"), kDefaultContextWindow);
  EXPECT_EQ(DefaultContextWindow(""), kDefaultContextWindow);
}

TEST(ContextWindowTest, TheEstimateFollowsWhatTheProviderReports) {
  TokenEstimator e;
  EXPECT_EQ(e.Tokens(0), 0);
  EXPECT_EQ(e.Tokens(1), 1);
  EXPECT_EQ(e.Tokens(3500), 1000);
  // The provider counted 4 bytes a token: the rate moves halfway there.
  e.Calibrate(4000, 1000);
  EXPECT_DOUBLE_EQ(e.bytes_per_token(), 3.75);
  for (int i = 0; i < 20; ++i) e.Calibrate(4000, 1000);
  EXPECT_NEAR(e.bytes_per_token(), 4.0, 1e-3);
  // A server that counts nothing changes nothing; absurd reports are bounded.
  e.Calibrate(4000, 0);
  EXPECT_NEAR(e.bytes_per_token(), 4.0, 1e-3);
  for (int i = 0; i < 40; ++i) e.Calibrate(1000000, 1);
  EXPECT_NEAR(e.bytes_per_token(), 8.0, 1e-3);
}

TEST(ContextWindowTest, RequestBytesCountEveryPart) {
  ChatRequest r;
  r.system = std::string(100, 's');
  int64_t empty = RequestBytes(r);
  EXPECT_EQ(empty, 100);
  r.messages = Conversation(1);
  int64_t with = RequestBytes(r);
  EXPECT_GT(with, empty + 1000);  // the 1 KB result at least
  r.tools.push_back({"Read", std::string(50, 'd'), std::string(200, 'j')});
  EXPECT_GE(RequestBytes(r), with + 250);
}

TEST(CompactionTest, RecentTurnsStartAtTheNthAssistantMessageFromTheEnd) {
  std::vector<ChatMessage> h = Conversation(5);  // user, then 5 x (assistant, results)
  EXPECT_EQ(RecentTurnsStart(h, 1), 9u);
  EXPECT_EQ(RecentTurnsStart(h, 3), 5u);
  EXPECT_EQ(RecentTurnsStart(h, 5), 1u);
  EXPECT_EQ(RecentTurnsStart(h, 6), 0u);  // fewer turns than asked
  EXPECT_EQ(RecentTurnsStart({}, 3), 0u);
}

TEST(CompactionTest, MaskingKeepsTheIdsAndTheRecentTurnsAndNamesTheFiles) {
  std::vector<ChatMessage> h = Conversation(5);
  size_t keep = RecentTurnsStart(h, 3);
  MaskResult m = MaskToolResults(&h, keep);
  EXPECT_EQ(m.masked, (std::vector<std::string>{"ex_0", "ex_1"}));
  EXPECT_EQ(m.files, (std::set<std::string>{"src/f0.c", "src/f1.c"}));
  EXPECT_LT(m.bytes_after + 1500, m.bytes_before);
  json stub = json::parse(h[2].results[0].content);
  EXPECT_EQ(stub["execution_id"], "ex_0");
  EXPECT_EQ(stub["tool"], "Read");
  EXPECT_EQ(stub["status"], "ok");
  EXPECT_NE(stub["masked"].get<std::string>().find("ex_0"), std::string::npos);
  EXPECT_FALSE(stub.contains("output"));
  EXPECT_TRUE(IsMaskedResult(h[2].results[0].content));
  // The recent turns are untouched.
  EXPECT_EQ(h[6].results[0].content, Record("ex_2", "Read", std::string(1000, 'x')));
  EXPECT_FALSE(IsMaskedResult(h[6].results[0].content));
  // Masking again masks nothing new.
  MaskResult again = MaskToolResults(&h, keep);
  EXPECT_TRUE(again.masked.empty());
  EXPECT_EQ(again.bytes_before, again.bytes_after);
}

TEST(CompactionTest, AResultThatIsNotARecordIsMaskedToo) {
  std::vector<ChatMessage> h = {
      User("go"), Calls({{"c1", "Grep", "{}"}}), Results({{"c1", std::string(5000, 'y'), false}}), Calls({}), Calls({}),
      Calls({})};
  MaskResult m = MaskToolResults(&h, RecentTurnsStart(h, 3));
  EXPECT_TRUE(m.masked.empty());  // no id to name
  EXPECT_TRUE(IsMaskedResult(h[2].results[0].content));
  EXPECT_TRUE(m.files.empty());  // Grep names no one file
}

TEST(CompactionTest, TheSummaryAnswerIsChecked) {
  StatusOr<HandoffSummary> ok =
      ParseHandoffSummary(R"({"done": ["parsed"], "pending": ["tests"], "current_state": "halfway"})");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->done, std::vector<std::string>{"parsed"});
  EXPECT_EQ(ok->pending, std::vector<std::string>{"tests"});
  EXPECT_EQ(ok->current_state, "halfway");
  StatusOr<HandoffSummary> fenced =
      ParseHandoffSummary("Here it is:\n```json\n{\"done\": [], \"pending\": [], \"current_state\": \"\"}\n```\n");
  EXPECT_TRUE(fenced.ok()) << fenced.status().message();
  EXPECT_EQ(fenced->form, "json");
  for (const char* bad : {"", " \n\t", "[]", "42", R"({"foo": 1})", R"({"done": [], "pending": []})"}) {
    EXPECT_EQ(ParseHandoffSummary(bad).status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

// Models answer a format request loosely: what can be repaired is, and prose
// is a summary all the same.
TEST(CompactionTest, ALooseSummaryIsRepairedOrKeptAsProse) {
  StatusOr<HandoffSummary> typed = ParseHandoffSummary(R"({"done": "one thing", "pending": [1, "two"]})");
  ASSERT_TRUE(typed.ok()) << typed.status().message();
  EXPECT_EQ(typed->form, "repaired");
  EXPECT_EQ(typed->done, std::vector<std::string>{"one thing"});
  EXPECT_EQ(typed->pending, (std::vector<std::string>{"1", "two"}));
  StatusOr<HandoffSummary> inside = ParseHandoffSummary(
      "Sure! Here is the note: {\"done\": [\"parsed\"], \"pending\": [], \"state\": \"halfway\"} Hope it helps {:}");
  ASSERT_TRUE(inside.ok()) << inside.status().message();
  EXPECT_EQ(inside->form, "repaired");
  EXPECT_EQ(inside->done, std::vector<std::string>{"parsed"});
  EXPECT_EQ(inside->current_state, "halfway");
  std::string words = "The agent ran the batch commands; the last one failed with exit 3 and is being retried.";
  for (const std::string& text : {words, json(words).dump()}) {
    StatusOr<HandoffSummary> prose = ParseHandoffSummary(text);
    ASSERT_TRUE(prose.ok()) << prose.status().message();
    EXPECT_EQ(prose->form, "prose");
    EXPECT_EQ(prose->current_state, words);
    EXPECT_TRUE(prose->done.empty());
  }
  // Braces everywhere cost a bounded number of parses, and still end in prose.
  std::string braces;
  for (int i = 0; i < 20000; ++i) braces += "{ }x";
  StatusOr<HandoffSummary> many = ParseHandoffSummary(braces);
  ASSERT_TRUE(many.ok());
  EXPECT_EQ(many->form, "prose");
  // A huge answer is not searched at all, only kept as prose (clipped in the
  // handoff).
  std::string huge = "{\"done\": [" + std::string(4 << 20, ' ') + "]} and more {";
  StatusOr<HandoffSummary> big = ParseHandoffSummary(huge);
  ASSERT_TRUE(big.ok());
  EXPECT_EQ(big->form, "prose");
  // In the handoff, prose says it is not in the form asked for.
  Handoff h;
  h.compaction_id = "cmp_p";
  StatusOr<HandoffSummary> prose = ParseHandoffSummary(words);
  ASSERT_TRUE(prose.ok());
  h.summary = &*prose;
  std::string text = RenderHandoff(h);
  EXPECT_NE(text.find("not in the form asked for"), std::string::npos) << text;
  EXPECT_NE(text.find(words), std::string::npos) << text;
}

TEST(CompactionTest, TheSummaryRequestKeepsTheNewestPartWhenItMustCut) {
  std::vector<ChatMessage> h = Conversation(50);
  ChatRequest all = SummaryRequest("util", h, "the parser", 1 << 20);
  EXPECT_EQ(all.model, "util");
  ASSERT_EQ(all.messages.size(), 1u);
  EXPECT_NE(all.messages[0].text.find("src/f0.c"), std::string::npos);
  EXPECT_NE(all.messages[0].text.find("keep in particular: the parser"), std::string::npos);
  ChatRequest cut = SummaryRequest("util", h, "", 4000);
  EXPECT_LT(cut.messages[0].text.size(), 5000u);
  EXPECT_EQ(cut.messages[0].text.find("src/f0.c"), std::string::npos);
  EXPECT_NE(cut.messages[0].text.find("src/f49.c"), std::string::npos);
  EXPECT_NE(cut.messages[0].text.find("earlier entries omitted"), std::string::npos);
}

TEST(CompactionTest, TheHandoffHoldsTheFactsAndTheRebuiltHistoryIsWellFormed) {
  HandoffSummary summary{{"read the parser"}, {"fix the bug"}, "about to edit"};
  Handoff h;
  h.compaction_id = "cmp_1";
  h.replaced_messages = 5;
  h.user_requests = {"fix the parser, keep the API"};
  h.todos = "[ ] t1 fix the bug\n";
  h.facts = "Failed attempts (from the ledger):\n- ex_9 ExecuteCommand error: make -> exit code 2\n";
  h.blocked = "src/p.c (errors, ex_10)";
  h.summary = &summary;
  std::string text = RenderHandoff(h);
  for (const char* want :
       {"cmp_1", "fix the parser, keep the API", "t1 fix the bug", "ex_9", "src/p.c", "done: read the parser",
        "pending: fix the bug", "current state: about to edit", "read again before you edit"}) {
    EXPECT_NE(text.find(want), std::string::npos) << want << "\n" << text;
  }
  h.summary = nullptr;
  h.summary_failure = "bad request";
  std::string bare = RenderHandoff(h);
  EXPECT_EQ(bare.find("Summary of the replaced turns"), std::string::npos);
  EXPECT_NE(bare.find("No summary of the replaced turns: the utility model's summary failed (bad request)"),
            std::string::npos)
      << bare;
  EXPECT_NE(bare.find("ex_9"), std::string::npos);  // the records stay

  std::vector<ChatMessage> history = Conversation(5);
  size_t keep = RecentTurnsStart(history, 3);
  std::vector<ChatMessage> rebuilt = RebuildHistory(text, history, keep);
  ASSERT_EQ(rebuilt.size(), 1 + history.size() - keep);
  EXPECT_EQ(rebuilt[0].role, ChatMessage::Role::kUser);
  EXPECT_EQ(rebuilt[0].text, text);
  EXPECT_EQ(rebuilt[1].role, ChatMessage::Role::kAssistant);
  // A kept part that opens with a user message takes the handoff in front.
  history.insert(history.begin() + static_cast<std::ptrdiff_t>(keep), User("[runtime] loop detected"));
  rebuilt = RebuildHistory(text, history, keep);
  EXPECT_EQ(rebuilt[0].role, ChatMessage::Role::kUser);
  EXPECT_EQ(rebuilt[0].text, text + "\n\n[runtime] loop detected");
  EXPECT_EQ(rebuilt[1].role, ChatMessage::Role::kAssistant);
}

TEST(CompactionTest, AHugeSummaryIsCutDownInTheHandoff) {
  HandoffSummary summary{std::vector<std::string>(100, std::string(5000, 'd')), {}, std::string(1 << 20, 's')};
  Handoff h;
  h.compaction_id = "cmp_3";
  h.summary = &summary;
  std::string text = RenderHandoff(h);
  EXPECT_LT(text.size(), 30000u);
  EXPECT_NE(text.find("(80 more)"), std::string::npos);
}

TEST(CompactionTest, ManyRequestsKeepTheFirstAndTheLatest) {
  Handoff h;
  h.compaction_id = "cmp_2";
  for (int i = 1; i <= 20; ++i) h.user_requests.push_back("request " + std::to_string(i) + ".");
  std::string text = RenderHandoff(h);
  for (int i : {1, 2, 13, 20}) EXPECT_NE(text.find("request " + std::to_string(i) + "."), std::string::npos) << i;
  for (int i : {3, 12}) EXPECT_EQ(text.find("request " + std::to_string(i) + "."), std::string::npos) << i;
  EXPECT_NE(text.find("(10 more)"), std::string::npos);
}

}  // namespace
}  // namespace odin
