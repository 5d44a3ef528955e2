#include "cli/acp_updates.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace odin {
namespace {

using nlohmann::json;

v1::SessionEvent Started(const std::string& id, const std::string& tool, const json& args) {
  v1::SessionEvent e;
  e.mutable_tool_call_started()->set_execution_id(id);
  e.mutable_tool_call_started()->set_tool(tool);
  e.mutable_tool_call_started()->set_arguments_json(args.dump());
  return e;
}

std::vector<json> Parsed(const std::vector<std::string>& texts) {
  std::vector<json> out;
  for (const std::string& t : texts) out.push_back(json::parse(t));
  return out;
}

TEST(AcpUpdatesTest, AHunkIsItsOldAndNewLinesWithTheirContext) {
  std::string diff =
      "--- a/x.py\n+++ b/x.py\n@@ -1,3 +1,3 @@\n def f():\n-    return 1\n+    return 2\n \n"
      "@@ -10,2 +10,3 @@\n a\n+b\n c\n\\ No newline at end of file\n";
  std::vector<AcpHunk> hunks = HunksOfDiff(diff);
  ASSERT_EQ(hunks.size(), 2u);
  EXPECT_EQ(hunks[0].old_text, "def f():\n    return 1\n\n");
  EXPECT_EQ(hunks[0].new_text, "def f():\n    return 2\n\n");
  EXPECT_FALSE(hunks[0].new_file);
  EXPECT_EQ(hunks[1].old_text, "a\nc\n");
  EXPECT_EQ(hunks[1].new_text, "a\nb\nc\n");
  // A removed line that reads like a header is still a line of the hunk.
  hunks = HunksOfDiff("--- a/y\n+++ b/y\n@@ -1 +1 @@\n---- x\n++++ y\n");
  ASSERT_EQ(hunks.size(), 1u);
  EXPECT_EQ(hunks[0].old_text, "--- x\n");
  EXPECT_EQ(hunks[0].new_text, "+++ y\n");
  EXPECT_TRUE(HunksOfDiff("--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n+new\n").at(0).new_file);
}

TEST(AcpUpdatesTest, ACallIsAToolCallWithItsKindAndAbsoluteLocation) {
  AcpUpdates updates("/ws");
  std::vector<json> out = Parsed(updates.Of(Started("ex1", "Read", {{"file_path", "src/a.cc"}})));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0]["sessionUpdate"], "tool_call");
  EXPECT_EQ(out[0]["toolCallId"], "ex1");
  EXPECT_EQ(out[0]["kind"], "read");
  EXPECT_EQ(out[0]["title"], "Read src/a.cc");
  EXPECT_EQ(out[0]["status"], "in_progress");
  EXPECT_EQ(out[0]["locations"][0]["path"], "/ws/src/a.cc");
  // A path outside the workspace is no location an editor should open.
  EXPECT_TRUE(Parsed(updates.Of(Started("ex6", "Read", {{"file_path", "../etc/passwd"}})))[0]["locations"].empty());
  EXPECT_TRUE(Parsed(updates.Of(Started("ex7", "Read", {{"file_path", "/etc/passwd"}})))[0]["locations"].empty());
  EXPECT_EQ(Parsed(updates.Of(Started("ex2", "ExecuteCommand", {{"command", "make"}})))[0]["kind"], "execute");
  EXPECT_EQ(Parsed(updates.Of(Started("ex3", "MultiEditTool", {{"file_path", "/abs"}})))[0]["kind"], "edit");
  EXPECT_EQ(Parsed(updates.Of(Started("ex4", "mcp__s__t", json::object())))[0]["kind"], "other");
  // Arguments that are not JSON are no reason to fail.
  v1::SessionEvent broken = Started("ex5", "Grep", json());
  broken.mutable_tool_call_started()->set_arguments_json("{not json");
  EXPECT_EQ(Parsed(updates.Of(broken))[0]["title"], "Grep");
}

TEST(AcpUpdatesTest, TodoWriteIsThePlan) {
  AcpUpdates updates("/ws");
  json todos = {{"todos",
                 {{{"id", "1"}, {"content", "one"}, {"status", "completed"}},
                  {{"id", "2"}, {"content", "two"}, {"status", "bogus"}}}}};
  std::vector<json> out = Parsed(updates.Of(Started("ex1", "TodoWrite", todos)));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0]["sessionUpdate"], "plan");
  EXPECT_EQ(out[0]["entries"], json::parse(R"([{"content":"one","priority":"medium","status":"completed"},
                            {"content":"two","priority":"medium","status":"pending"}])"));
}

TEST(AcpUpdatesTest, AWritesEndCarriesItsDiffAndTheVerdict) {
  AcpUpdates updates("/ws");
  v1::SessionEvent e;
  v1::ToolCallFinished* f = e.mutable_tool_call_finished();
  f->set_execution_id("ex1");
  f->set_tool("EditTool");
  f->set_status("ok");
  f->set_summary("ok · a.py +1 -1");
  f->set_validation("errors");
  f->set_new_diagnostics("a.py:2: undefined name m");
  f->set_diff("--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = m\n");
  f->add_changed_paths("a.py");
  std::vector<json> out = Parsed(updates.Of(e));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0]["sessionUpdate"], "tool_call_update");
  EXPECT_EQ(out[0]["status"], "completed");
  EXPECT_EQ(out[0]["content"][0],
            json::parse(R"({"type":"diff","path":"/ws/a.py","oldText":"x = 1\n","newText":"x = m\n"})"));
  EXPECT_NE(out[0]["content"][1]["content"]["text"].get<std::string>().find("validation: errors\na.py:2"),
            std::string::npos);
  EXPECT_EQ(out[0]["rawOutput"]["validation"], "errors");
  EXPECT_EQ(out[0]["locations"][0]["path"], "/ws/a.py");
  f->set_status("rejected");
  EXPECT_EQ(Parsed(updates.Of(e))[0]["status"], "failed");
}

TEST(AcpUpdatesTest, PermissionsOfferAlwaysOnlyWhereAnApprovalMayBeSaved) {
  v1::ApprovalRequested a;
  a.set_execution_id("ex1");
  a.set_what("touch x");
  a.set_reason("ask rule 'touch'");
  json p = json::parse(AcpPermissionParams("s1", a));
  EXPECT_EQ(p["sessionId"], "s1");
  EXPECT_EQ(p["toolCall"]["toolCallId"], "ex1");
  EXPECT_EQ(p["options"].size(), 2u);
  a.set_saved_key("command:touch x");
  p = json::parse(AcpPermissionParams("s1", a));
  ASSERT_EQ(p["options"].size(), 3u);
  EXPECT_EQ(p["options"][1]["kind"], "allow_always");
  EXPECT_EQ(AcpApprovalAnswer("allow_once"), "once");
  EXPECT_EQ(AcpApprovalAnswer("allow_always"), "workspace");
  EXPECT_EQ(AcpApprovalAnswer("reject_once"), "deny");
  EXPECT_EQ(AcpApprovalAnswer("anything"), "deny");
}

TEST(AcpUpdatesTest, APromptIsItsTextAndTheEditorsResources) {
  StatusOr<std::string> text = AcpPromptText(json::parse(R"([
      {"type":"text","text":"fix "},
      {"type":"resource_link","uri":"file:///ws/a.py","name":"a.py"},
      {"type":"resource","resource":{"uri":"file:///ws/b.py","text":"x = 1 # unsaved"}}])"));
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_EQ(*text, "fix /ws/a.py\n\n<context name=\"/ws/b.py\">\nx = 1 # unsaved\n</context>\n");
  EXPECT_FALSE(AcpPromptText(json::parse(R"([{"type":"image","data":"AAAA","mimeType":"image/png"}])")).ok());
  EXPECT_FALSE(AcpPromptText(json::parse(R"([{"type":"text","text":"  "}])")).ok());
  EXPECT_FALSE(AcpPromptText(json::parse(R"({"type":"text"})")).ok());
  // Fields of the wrong type are no crash.
  EXPECT_FALSE(AcpPromptText(json::parse(R"([{"type":3}, 7, null])")).ok());
}

TEST(AcpUpdatesTest, AReplayIsTheConversationsWordsAndCalls) {
  std::vector<ChatMessage> history(3);
  history[0].text = "fix it";
  history[1].role = ChatMessage::Role::kAssistant;
  history[1].text = "looking";
  history[1].tool_calls.push_back({"call_1", "Read", "{}"});
  history[2].role = ChatMessage::Role::kToolResults;
  history[2].results.push_back({"call_1", "{}", true});
  std::vector<json> out = Parsed(AcpReplayUpdates(history));
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0]["sessionUpdate"], "user_message_chunk");
  EXPECT_EQ(out[1]["content"]["text"], "looking");
  EXPECT_EQ(out[2]["kind"], "read");
  EXPECT_EQ(out[3]["status"], "failed");
}

TEST(AcpUpdatesTest, StopReasons) {
  EXPECT_EQ(AcpStopReason("done"), "end_turn");
  EXPECT_EQ(AcpStopReason("not_converged"), "end_turn");
  EXPECT_EQ(AcpStopReason("cancelled"), "cancelled");
  EXPECT_EQ(AcpStopReason("budget_exceeded"), "max_turn_requests");
}

}  // namespace
}  // namespace odin
