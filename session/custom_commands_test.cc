#include "session/custom_commands.h"

#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/file_util.h"
#include "tools/check_output.h"

namespace odin {
namespace {

using ::testing::ElementsAre;

TEST(CustomCommandsTest, ArgumentsAsClaudeCodeSubstitutesThem) {
  EXPECT_EQ(SubstituteArguments("Review PR #$1 with priority $2: $ARGUMENTS.", "12 high", false),
            "Review PR #12 with priority high: 12 high.");
  EXPECT_EQ(SubstituteArguments("$ARGUMENTS[0] and $ARGUMENTS[1]", "\"a b\" c", false), "a b and c");
  EXPECT_EQ(SubstituteArguments("missing: [$3] cost: $5.00 $0", "x", false), "missing: [] cost: .00 $0");
  EXPECT_THAT(SplitCommandLine(" one 'two three'  \"four\" "), ElementsAre("one", "two three", "four"));
  // In a shell line, variables the line sets first: arguments are data.
  EXPECT_EQ(SubstituteArguments("gh pr view \"$1\" '$2' $ARGUMENTS[2]", "12; rm -rf /", true),
            "gh pr view \"${ODIN_ARG_1}\" '${ODIN_ARG_2}' ${ODIN_ARG_3}");
  EXPECT_EQ(SubstituteArguments("echo $ARGUMENTS", "$(id) 'x'", true), "echo ${ODIN_ARGUMENTS}");
}

TEST(CustomCommandsTest, FindsACommandByItsNameOnly) {
  ClaudeDefs defs;
  defs.commands.push_back({.name = "review-pr", .body = "x"});
  std::string args;
  ASSERT_NE(FindCustomCommand(defs, "/review-pr 12  high", &args), nullptr);
  EXPECT_EQ(args, "12  high");
  EXPECT_NE(FindCustomCommand(defs, "/review-pr", &args), nullptr);
  EXPECT_EQ(args, "");
  EXPECT_EQ(FindCustomCommand(defs, "/review", &args), nullptr);
  EXPECT_EQ(FindCustomCommand(defs, "review-pr", &args), nullptr);
}

TEST(CustomCommandsTest, AttachmentsLeaveOutWhatReadMayNotRead) {
  std::string root = *RealPath(*MakeTempDir("odin-attach-test"));
  ASSERT_TRUE(WriteFileAtomic(root + "/.env", "TOKEN=hunter2\n").ok());
  ASSERT_TRUE(WriteFileAtomic(root + "/notes.md", "plain notes\n").ok());
  ASSERT_TRUE(MakeDirs(root + "/.odin").ok());
  ASSERT_TRUE(WriteFileAtomic(root + "/.odin/x", "state\n").ok());
  ASSERT_EQ(symlink("/etc/passwd", (root + "/out").c_str()), 0);
  std::vector<std::string> notes;
  std::string text =
      AttachFiles("see @.env and @notes.md, @.odin/x @out @/etc/hostname", root, {root + "/**/.env"}, &notes);
  EXPECT_EQ(text.find("hunter2"), std::string::npos) << text;
  EXPECT_EQ(text.find("state"), std::string::npos) << text;
  EXPECT_EQ(text.find("root:"), std::string::npos) << text;
  EXPECT_NE(text.find("plain notes"), std::string::npos) << text;
  ASSERT_EQ(notes.size(), 5u);
  EXPECT_EQ(notes[0], "@.env: not attached (a Read deny rule covers it)");
  EXPECT_EQ(notes[1], "attached notes.md (12 bytes)");
}

}  // namespace
}  // namespace odin
