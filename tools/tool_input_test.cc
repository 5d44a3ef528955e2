#include "tools/tool_input.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "base/json_input.h"
#include "odin/v1/worker.pb.h"

namespace odin {
namespace {

StatusOr<v1::ToolInput> Parse(const std::string& tool, const std::string& args) {
  return ParseToolInput(tool, ParseJson(args));
}

TEST(ToolInputTest, EachWorkerToolGetsItsOwnTypedInputWithDefaultsFilledIn) {
  StatusOr<v1::ToolInput> read = Parse("Read", R"({"file_path":"a.c","limit":5})");
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  ASSERT_TRUE(read->has_read());
  EXPECT_EQ(read->read().file_path(), "a.c");
  EXPECT_EQ(read->read().offset(), 1u);  // the default, filled in
  EXPECT_EQ(read->read().limit(), 5u);

  StatusOr<v1::ToolInput> edit =
      Parse("MultiEditTool", R"({"file_path":"a.c","edits":[{"old_string":"x","new_string":"y","replace_all":true}]})");
  ASSERT_TRUE(edit.ok()) << edit.status().ToString();
  ASSERT_EQ(edit->edit().edits_size(), 1);
  EXPECT_TRUE(edit->edit().edits(0).replace_all());

  StatusOr<v1::ToolInput> grep = Parse("Grep", R"({"pattern":"x","output_mode":"content","-C":2})");
  ASSERT_TRUE(grep.ok()) << grep.status().ToString();
  GrepArgs g = ArgsOf(grep->grep());
  EXPECT_EQ(g.context, 2);
  EXPECT_EQ(g.after, -1);  // unset stays unset through the proto
  EXPECT_EQ(g.output_mode, "content");

  StatusOr<v1::ToolInput> command = Parse("ExecuteCommand", R"({"argv":["ls","-l"],"cwd":"sub"})");
  ASSERT_TRUE(command.ok()) << command.status().ToString();
  CommandArgs c = ArgsOf(command->command());
  EXPECT_EQ(c.argv, (std::vector<std::string>{"ls", "-l"}));
  EXPECT_EQ(c.cwd, "sub");

  StatusOr<v1::ToolInput> init = Parse("InitTool", R"({"content":"# x\n"})");
  ASSERT_TRUE(init.ok()) << init.status().ToString();
  EXPECT_EQ(init->write().file_path(), "ODIN.md");  // never the model's choice
  EXPECT_EQ(WritePathOf(*init), "ODIN.md");

  StatusOr<v1::ToolInput> ls = Parse("LS", R"({"path":"/etc","ignore":["*.o"]})");
  ASSERT_TRUE(ls.ok());
  EXPECT_EQ(ReadPathOf(*ls), "/etc");
  EXPECT_EQ(ArgsOf(ls->ls()).ignore, std::vector<std::string>{"*.o"});
}

TEST(ToolInputTest, BadArgumentsAreRefusedNamingTheToolAndTheProblem) {
  StatusOr<v1::ToolInput> unknown = Parse("Read", R"({"file_path":"a","bogus":1})");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.status().ToString().find("Read"), std::string::npos) << unknown.status().ToString();
  EXPECT_NE(unknown.status().ToString().find("bogus"), std::string::npos) << unknown.status().ToString();

  StatusOr<v1::ToolInput> both = Parse("ExecuteCommand", R"({"command":"ls","argv":["ls"]})");
  ASSERT_FALSE(both.ok());
  EXPECT_NE(both.status().ToString().find("exactly one"), std::string::npos) << both.status().ToString();

  // The model never names the span EditSymbol splices: the coordinator does.
  std::string sha(64, 'a');
  StatusOr<v1::ToolInput> spanned = Parse("EditSymbol", R"({"symbol_id":"s","span_sha256":")" + sha +
                                                            R"(","operation":"delete","file_path":"/etc/passwd"})");
  ASSERT_FALSE(spanned.ok());
  EXPECT_NE(spanned.status().ToString().find("file_path"), std::string::npos) << spanned.status().ToString();

  StatusOr<v1::ToolInput> not_object = Parse("WebFetch", R"(["https://example.com"])");
  EXPECT_FALSE(not_object.ok());
}

TEST(ToolInputTest, CoordinatorHandlersAndMcpToolsGetNoTypedInput) {
  for (const char* tool : {"TodoWrite", "memory_query", "plan_update", "symbols", "AgentTool", "mcp__srv__do"}) {
    StatusOr<v1::ToolInput> in = Parse(tool, R"({"anything":1})");
    ASSERT_TRUE(in.ok()) << tool;
    EXPECT_EQ(in->kind_case(), v1::ToolInput::KIND_NOT_SET) << tool;
    EXPECT_EQ(ReadPathOf(*in), "") << tool;
    EXPECT_EQ(WritePathOf(*in), "") << tool;
  }
}

TEST(ToolInputTest, EditSymbolRoundTripsThroughTheProtoWithItsResolvedSpan) {
  EditSymbolArgs a;
  a.symbol_id = "sym";
  a.span_sha256 = std::string(64, 'b');
  a.operation = SpanOperation::kInsertAfter;
  a.content = "x";
  a.file_path = "src/a.c";
  a.start_byte = 3;
  a.end_byte = 9;
  v1::ToolInput in;
  SetInput(a, &in);
  EditSymbolArgs back = ArgsOf(in.edit_symbol());
  EXPECT_EQ(back.operation, SpanOperation::kInsertAfter);
  EXPECT_EQ(back.file_path, "src/a.c");
  EXPECT_EQ(back.start_byte, 3u);
  EXPECT_EQ(back.end_byte, 9u);
  EXPECT_EQ(WritePathOf(in), "src/a.c");
}

}  // namespace
}  // namespace odin
