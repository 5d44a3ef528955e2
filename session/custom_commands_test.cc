#include "session/custom_commands.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace odin {
namespace {

using ::testing::ElementsAre;

TEST(CustomCommandsTest, ArgumentsAsClaudeCodeSubstitutesThem) {
  EXPECT_EQ(SubstituteArguments("Review PR #$1 with priority $2: $ARGUMENTS.", "12 high", false),
            "Review PR #12 with priority high: 12 high.");
  EXPECT_EQ(SubstituteArguments("$ARGUMENTS[0] and $ARGUMENTS[1]", "\"a b\" c", false), "a b and c");
  EXPECT_EQ(SubstituteArguments("missing: [$3] cost: $5.00 $0", "x", false), "missing: [] cost: .00 $0");
  EXPECT_THAT(CommandArguments(" one 'two three'  \"four\" "), ElementsAre("one", "two three", "four"));
  // In a shell line, each is one quoted word: arguments cannot add commands.
  EXPECT_EQ(SubstituteArguments("gh pr view $1", "12; rm -rf /", true), "gh pr view '12;'");
  EXPECT_EQ(SubstituteArguments("echo $ARGUMENTS", "$(id) 'x'", true), "echo '$(id) '\\''x'\\'''");
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

}  // namespace
}  // namespace odin
