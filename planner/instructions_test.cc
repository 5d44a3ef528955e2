#include "planner/instructions.h"

#include <gtest/gtest.h>

#include "base/file_util.h"

namespace odin {
namespace {

TEST(InstructionsTest, RootToWorkingDirectoryInOrder) {
  std::string root = *RealPath(*MakeTempDir("odin-instr"));
  ASSERT_TRUE(MakeDirs(root + "/src/lib").ok());
  ASSERT_TRUE(WriteFileAtomic(root + "/ODIN.md", "root rules\n").ok());
  ASSERT_TRUE(WriteFileAtomic(root + "/src/AGENTS.md", "src rules\n").ok());
  ASSERT_TRUE(WriteFileAtomic(root + "/src/lib/ODIN.md", "lib rules\n").ok());
  std::string text = LoadInstructions(root, root + "/src/lib");
  EXPECT_EQ(text, "## ODIN.md\nroot rules\n\n## src/AGENTS.md\nsrc rules\n\n## src/lib/ODIN.md\nlib rules\n\n");
  // From the root, only the root's.
  EXPECT_EQ(LoadInstructions(root, root), "## ODIN.md\nroot rules\n\n");
  RemoveTree(root);
}

TEST(InstructionsTest, CappedAt32KiB) {
  std::string root = *RealPath(*MakeTempDir("odin-instr"));
  std::string big;
  for (int i = 0; i < 5000; ++i) big += "a line of instructions\n";
  ASSERT_TRUE(WriteFileAtomic(root + "/AGENTS.md", big).ok());
  std::string text = LoadInstructions(root, root);
  EXPECT_LE(text.size(), kMaxInstructionBytes + 64);
  EXPECT_NE(text.find("[instructions cut at 32 KiB]"), std::string::npos);
  RemoveTree(root);
}

}  // namespace
}  // namespace odin
