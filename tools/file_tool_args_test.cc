#include "tools/file_tool_args.h"

#include <gtest/gtest.h>

namespace odin {
namespace {

TEST(FileToolArgsTest, ReadDefaultsAndFields) {
  auto a = ParseReadArgs(R"({"file_path":"x","offset":5,"limit":10})");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->offset, 5u);
  EXPECT_EQ(a->limit, 10u);
  EXPECT_EQ(ParseReadArgs(R"({"file_path":"x"})")->offset, 1u);
}

TEST(FileToolArgsTest, ClearErrors) {
  EXPECT_EQ(ParseReadArgs("{").status().message(), "Read: arguments are not valid JSON");
  EXPECT_EQ(ParseReadArgs("[]").status().message(), "Read: arguments must be a JSON object");
  EXPECT_EQ(ParseReadArgs("{}").status().message(), "Read: missing required field 'file_path'");
  EXPECT_EQ(ParseReadArgs(R"({"file_path":1})").status().message(), "Read: 'file_path' must be a string");
  EXPECT_EQ(ParseReadArgs(R"({"file_path":"x","offset":0})").status().message(),
            "Read: 'offset' must be an integer of at least 1");
  EXPECT_EQ(ParseReadArgs(R"({"file_path":"x","bogus":1})").status().message(), "Read: unknown field 'bogus'");
  EXPECT_EQ(ParseEditArgs(kEditTool, R"({"file_path":"x","old_string":"a"})").status().message(),
            "EditTool: missing required field 'new_string'");
}

TEST(FileToolArgsTest, MultiEditEdits) {
  auto a = ParseEditArgs(kMultiEditTool,
                         R"({"file_path":"f","edits":[{"old_string":"a","new_string":"b"},
                                                      {"old_string":"c","new_string":"d","replace_all":true}]})");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_EQ(a->edits.size(), 2u);
  EXPECT_TRUE(a->edits[1].replace_all);
  EXPECT_EQ(ParseEditArgs(kMultiEditTool, R"({"file_path":"f","edits":[]})").status().message(),
            "MultiEditTool: 'edits' must hold at least one edit");
  EXPECT_EQ(ParseEditArgs(kMultiEditTool, R"({"file_path":"f","edits":[{"old_string":"a"}]})").status().message(),
            "MultiEditTool: missing required field edits[0].'new_string'");
}

TEST(FileToolArgsTest, GrepModesAndContextRules) {
  auto g = ParseGrepArgs(R"({"pattern":"x","output_mode":"content","-n":true,"-C":2})");
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->context, 2);
  EXPECT_FALSE(ParseGrepArgs(R"({"pattern":"x","-n":true})").ok());  // needs content mode
  EXPECT_FALSE(ParseGrepArgs(R"({"pattern":"x","output_mode":"lines"})").ok());
  EXPECT_FALSE(ParseGrepArgs(R"({"pattern":"x","-A":1.5,"output_mode":"content"})").ok());
}

TEST(FileToolArgsTest, TodoStatusesAndIds) {
  EXPECT_TRUE(ParseTodoArgs(R"({"todos":[{"id":"1","content":"a","status":"pending"}]})").ok());
  EXPECT_FALSE(ParseTodoArgs(R"({"todos":[{"id":"1","content":"a","status":"done"}]})").ok());
  EXPECT_FALSE(ParseTodoArgs(R"({"todos":[{"id":"1","content":"a","status":"pending"},
                                          {"id":"1","content":"b","status":"pending"}]})")
                   .ok());
}

}  // namespace
}  // namespace odin
