#include "tools/tool_catalog.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "tools/exec_command.h"
#include "tools/file_tool_args.h"

namespace odin {
namespace {

TEST(ToolRegistry, EveryToolAModeOffersHasAHandlerAndNoOtherToolShares) {
  for (const std::string& name : ToolsForMode(Mode::kEdit)) {
    const ToolInfo* info = FindTool(name);
    ASSERT_NE(info, nullptr) << name;
    EXPECT_NE(info->handler, ToolHandler::kUnknown) << name;
    EXPECT_EQ(HandlerOf(name), info->handler) << name;
    EXPECT_EQ(info->writes_files(), info->write_form != WriteForm::kNone) << name;
  }
  EXPECT_EQ(HandlerOf(kExecuteCommandTool), ToolHandler::kCommand);
  EXPECT_EQ(HandlerOf(kWriteFileTool), ToolHandler::kFileWrite);
  EXPECT_EQ(WriteFormOf(kWriteFileTool), WriteForm::kWhole);
  EXPECT_EQ(WriteFormOf(kEditTool), WriteForm::kEdits);
  EXPECT_EQ(WriteFormOf(kInitTool), WriteForm::kInit);
  EXPECT_EQ(WriteFormOf(kReadTool), WriteForm::kNone);
  EXPECT_EQ(HandlerOf("symbols"), ToolHandler::kIndexQuery);
  EXPECT_EQ(HandlerOf("NoSuchTool"), ToolHandler::kUnknown);
}

TEST(ToolRegistry, AnMcpServersToolsShareOneEntryKnownByTheirPrefix) {
  EXPECT_EQ(HandlerOf("mcp__everything__get-sum"), ToolHandler::kMcp);
  EXPECT_EQ(FindToolOrMcp("mcp__x__y"), &McpToolEntry());
  EXPECT_FALSE(McpToolEntry().writes_files());
  // The mode table's own lookup knows only the built-in tools.
  EXPECT_EQ(FindTool("mcp__x__y"), nullptr);
  EXPECT_EQ(HandlerOf("mcp_x"), ToolHandler::kUnknown);
}

TEST(ToolRegistry, OdinsOwnCallsHaveHandlersButNoModeOffersThemAndNoLookupByAModelFindsThem) {
  for (const char* internal : {kHookTool, kIndexParseTool, kLspReferencesTool, kMcpListToolsTool}) {
    EXPECT_NE(HandlerOf(internal), ToolHandler::kUnknown) << internal;
    EXPECT_EQ(FindTool(internal), nullptr) << internal;  // the mode gate refuses what FindTool does not know
    for (Mode m : {Mode::kAsk, Mode::kPlan, Mode::kEdit}) {
      std::vector<std::string> offered = ToolsForMode(m);
      EXPECT_EQ(std::find(offered.begin(), offered.end(), internal), offered.end()) << internal;
    }
  }
}

TEST(ToolRegistry, BackgroundCommandsToolsAreOfferedInEditModeOnly) {
  for (const char* tool : {kCommandOutputTool, kStopCommandTool}) {
    for (Mode m : {Mode::kAsk, Mode::kPlan, Mode::kEdit}) {
      std::vector<std::string> offered = ToolsForMode(m);
      EXPECT_EQ(std::find(offered.begin(), offered.end(), tool) != offered.end(), m == Mode::kEdit)
          << tool << " in " << ModeName(m);
    }
    EXPECT_FALSE(FindTool(tool)->writes_files()) << tool;
  }
  EXPECT_EQ(HandlerOf(kCommandOutputTool), ToolHandler::kCommandOutput);
  EXPECT_EQ(HandlerOf(kStopCommandTool), ToolHandler::kStopCommand);
}

TEST(ToolRegistry, ClaudeCodeNamesAreTheOnesItsHooksMatch) {
  EXPECT_STREQ(FindTool(kCommandOutputTool)->claude_code_name, "BashOutput");
  EXPECT_STREQ(FindTool(kStopCommandTool)->claude_code_name, "KillShell");
  EXPECT_STREQ(FindTool(kExecuteCommandTool)->claude_code_name, "Bash");
  EXPECT_STREQ(FindTool(kWriteFileTool)->claude_code_name, "Write");
  EXPECT_STREQ(FindTool(kEditTool)->claude_code_name, "Edit");
  EXPECT_STREQ(FindTool(kMultiEditTool)->claude_code_name, "MultiEdit");
  EXPECT_STREQ(FindTool(kAgentTool)->claude_code_name, "Agent");
  EXPECT_STREQ(FindTool(kReadTool)->claude_code_name, "Read");
  EXPECT_EQ(FindTool(kInitTool)->claude_code_name, nullptr);
}

}  // namespace
}  // namespace odin
