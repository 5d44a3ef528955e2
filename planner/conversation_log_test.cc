#include "planner/conversation_log.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "planner/compaction.h"

namespace odin {
namespace {

using nlohmann::json;

ConversationEntry Entry(const std::string& kind, const std::string& content) {
  static int n = 0;
  return {"conv_" + std::to_string(++n), "ses_1", "main", kind, content, 0};
}
ConversationEntry Message(const ChatMessage& m) { return Entry(ConversationKind(m), ChatMessageJson(m)); }

TEST(ConversationLogTest, MessagesRoundTripExactly) {
  ChatMessage calls{ChatMessage::Role::kAssistant, "let me look", {{"c1", "Read", R"({"file_path":"a"})"}}, {}};
  ChatMessage results{ChatMessage::Role::kToolResults, "", {}, {{"c1", "{\"x\":1}", true}}};
  for (const ChatMessage& m : {calls, results}) {
    StatusOr<ChatMessage> back = ChatMessageFromJson(ChatMessageJson(m));
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(back->text, m.text);
    ASSERT_EQ(back->tool_calls.size(), m.tool_calls.size());
    for (size_t i = 0; i < m.tool_calls.size(); ++i) {
      EXPECT_EQ(back->tool_calls[i].arguments_json, m.tool_calls[i].arguments_json);
    }
    ASSERT_EQ(back->results.size(), m.results.size());
    for (size_t i = 0; i < m.results.size(); ++i) EXPECT_EQ(back->results[i].is_error, m.results[i].is_error);
  }
  EXPECT_EQ(ChatMessageFromJson("[1]").status().code(), StatusCode::kCorruption);
  EXPECT_EQ(ChatMessageFromJson(R"({"tool_calls":[{"id":1}]})").status().code(), StatusCode::kCorruption);
}

TEST(ConversationLogTest, ReplayAppliesCompactionsAndClears) {
  std::vector<ConversationEntry> entries = {Entry("request", R"({"text":"fix it"})"), Entry("owner", R"({"pid":1})")};
  std::vector<ChatMessage> live = {{ChatMessage::Role::kUser, "fix it", {}, {}}};
  for (int i = 0; i < 5; ++i) {
    std::string id = "c" + std::to_string(i);
    live.push_back({ChatMessage::Role::kAssistant, "", {{id, "Read", "{}"}}, {}});
    live.push_back({ChatMessage::Role::kToolResults,
                    "",
                    {},
                    {{id, json({{"execution_id", "ex_" + std::to_string(i)}, {"output", "bytes"}}).dump(), false}}});
  }
  for (const ChatMessage& m : live) entries.push_back(Message(m));
  size_t keep = RecentTurnsStart(live, 3);
  MaskToolResults(&live, keep);
  live = RebuildHistory("HANDOFF", live, keep);
  entries.push_back(
      Entry("compaction", json({{"keep_from", keep}, {"how", "summarized"}, {"handoff", "HANDOFF"}}).dump()));
  StatusOr<ReplayedConversation> r = ReplayConversation(entries);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->user_requests, std::vector<std::string>{"fix it"});
  EXPECT_EQ(r->compactions, 1);
  ASSERT_EQ(r->history.size(), live.size());
  for (size_t i = 0; i < live.size(); ++i) EXPECT_EQ(ChatMessageJson(r->history[i]), ChatMessageJson(live[i])) << i;
  entries.push_back(Entry("clear", "{}"));
  EXPECT_TRUE(ReplayConversation(entries)->history.empty());
  entries.push_back(Entry("user", "not json"));
  EXPECT_EQ(ReplayConversation(entries).status().code(), StatusCode::kCorruption);
}

TEST(ConversationLogTest, ACutOffTurnIsClosed) {
  std::vector<ChatMessage> h = {
      {ChatMessage::Role::kUser, "go", {}, {}},
      {ChatMessage::Role::kAssistant, "", {{"c1", "ExecuteCommand", "{}"}, {"c2", "Read", "{}"}}, {}}};
  std::vector<ChatMessage> added = CloseInterrupted(&h);
  ASSERT_EQ(added.size(), 1u);
  ASSERT_EQ(h.back().results.size(), 2u);
  EXPECT_EQ(h.back().results[1].call_id, "c2");
  EXPECT_EQ(json::parse(h.back().results[0].content)["status"], "interrupted");
  // Closed already: nothing more.
  h.push_back({ChatMessage::Role::kAssistant, "done", {}, {}});
  EXPECT_TRUE(CloseInterrupted(&h).empty());
  // A user message without an answer gets a placeholder answer.
  h.push_back({ChatMessage::Role::kUser, "more", {}, {}});
  ASSERT_EQ(CloseInterrupted(&h).size(), 1u);
  EXPECT_EQ(h.back().role, ChatMessage::Role::kAssistant);
}

}  // namespace
}  // namespace odin
