#include "planner/hook_payloads.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace odin {
namespace {

using nlohmann::json;

// The shapes below are Claude Code 2.1.197's, captured by
// tests/claude_code/side_by_side.sh.
TEST(HookPayloadsTest, ACommandIsToldAsBashsStdoutAndStderr) {
  HookToolFacts f;
  f.status = "ok";
  f.exit_code = 0;
  f.output = "hi\n";
  json r = HookToolResponse("ExecuteCommand", {{"command", "echo hi"}}, f);
  EXPECT_EQ(
      r,
      json(
          {{"stdout", "hi"}, {"stderr", ""}, {"interrupted", false}, {"isImage", false}, {"noOutputExpected", false}}));
  f.changes = {{"/w/a", "created"}};
  EXPECT_EQ(HookToolResponse("ExecuteCommand", json::object(), f)["changes"],
            json::parse(R"([{"path": "/w/a", "change": "created"}])"));
}

TEST(HookPayloadsTest, WritesAndEditsCarryTheirPatch) {
  HookToolFacts f;
  f.wrote = true;
  f.created = false;
  f.content_before = "one\n";
  f.content_after = "two\n";
  f.diff = "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,1 +1,1 @@\n-one\n+two\n";
  json edit = HookToolResponse(
      "EditTool", {{"file_path", "/w/notes.txt"}, {"old_string", "one"}, {"new_string", "two"}, {"replace_all", false}},
      f);
  EXPECT_EQ(edit, json::parse(R"({"filePath": "/w/notes.txt", "oldString": "one", "newString": "two",
      "originalFile": "one\n", "userModified": false, "replaceAll": false,
      "structuredPatch": [{"oldStart": 1, "oldLines": 1, "newStart": 1, "newLines": 1, "lines": ["-one", "+two"]}]})"));
  f.created = true;
  json write = HookToolResponse("WriteFile", {{"file_path", "/w/new.txt"}, {"content", "two\n"}}, f);
  EXPECT_EQ(write, json::parse(R"({"type": "create", "filePath": "/w/new.txt", "content": "two\n",
      "structuredPatch": [], "originalFile": null, "userModified": false})"));
}

// Every hook's stdin is recorded: a file's text in it is cut at 64 KiB.
TEST(HookPayloadsTest, AFilesTextIsCutAt64KiB) {
  HookToolFacts f;
  f.wrote = true;
  f.created = true;
  f.content_after = std::string(1 << 20, 'x');
  std::string content = HookToolResponse("WriteFile", {{"file_path", "/w/big"}}, f)["content"];
  EXPECT_LT(content.size(), 70u * 1024);
  EXPECT_NE(content.find("[cut at 64 KiB of 1048576 bytes]"), std::string::npos);
}

TEST(HookPayloadsTest, AReadIsToldAsTheLinesItRead) {
  HookToolFacts f;
  f.read = f.read_full = true;
  f.read_content = "a\nb\nc\n";
  json r = HookToolResponse("Read", {{"file_path", "/w/x"}, {"offset", 2}, {"limit", 1}}, f);
  // Lines counted as Claude Code's split on "\n" counts them.
  EXPECT_EQ(r, json::parse(R"({"type": "text", "file": {"filePath": "/w/x", "content": "b\n", "numLines": 2,
      "startLine": 2, "totalLines": 4}})"));
}

TEST(HookPayloadsTest, APatchWithoutCountsAndOtherToolsOdinsShape) {
  EXPECT_EQ(
      StructuredPatch("@@ -3 +3,2 @@\n-x\n+y\n+z\n\\ No newline at end of file\n"),
      json::parse(R"([{"oldStart": 3, "oldLines": 1, "newStart": 3, "newLines": 2, "lines": ["-x", "+y", "+z"]}])"));
  HookToolFacts f;
  f.status = "ok";
  f.output = "3 symbols";
  EXPECT_EQ(HookToolResponse("symbols", json::object(), f), json({{"status", "ok"}, {"output", "3 symbols"}}));
}

}  // namespace
}  // namespace odin
