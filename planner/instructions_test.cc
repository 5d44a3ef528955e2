#include "planner/instructions.h"

#include <unistd.h>

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

// Claude Code's files: only when the workspace is trusted; their @imports
// from the importing file's directory, inside the workspace, each once.
TEST(InstructionsTest, ClaudeFilesAndTheirImportsWhenTrusted) {
  std::string root = *RealPath(*MakeTempDir("odin-instr"));
  ASSERT_TRUE(MakeDirs(root + "/docs/deep").ok());
  ASSERT_TRUE(WriteFileAtomic(root + "/CLAUDE.md",
                              "Follow @docs/style.md and see @README.\n"
                              "Not `@docs/secret.md`, nor user@example.com, nor @../outside.md\n"
                              "```\n@docs/secret.md\n```\n")
                  .ok());
  ASSERT_TRUE(WriteFileAtomic(root + "/CLAUDE.local.md", "my local notes\n").ok());
  ASSERT_TRUE(WriteFileAtomic(root + "/docs/style.md", "tabs, never spaces; @deep/more.md\n").ok());
  ASSERT_TRUE(WriteFileAtomic(root + "/docs/deep/more.md", "and more @../style.md\n").ok());
  ASSERT_TRUE(WriteFileAtomic(root + "/docs/secret.md", "not imported\n").ok());
  ASSERT_EQ(symlink("CLAUDE.md", (root + "/AGENTS.md").c_str()), 0);
  // Untrusted: AGENTS.md (a link to CLAUDE.md) is read, as always, but no
  // CLAUDE file and no import.
  EXPECT_EQ(LoadInstructions(root, root),
            "## AGENTS.md\nFollow @docs/style.md and see @README.\nNot `@docs/secret.md`, "
            "nor user@example.com, nor @../outside.md\n```\n@docs/secret.md\n```\n\n");
  std::vector<std::string> refused;
  std::string text = LoadInstructions(root, root, &refused, {ClaudeFilesSha256(root, {}), "the user's own\n", {}});
  // Trusted: CLAUDE.md with its imports (AGENTS.md, the same text, once).
  EXPECT_EQ(text,
            "## ~/.claude/CLAUDE.md\nthe user's own\n\n"
            "## CLAUDE.md\nFollow @docs/style.md and see @README.\nNot `@docs/secret.md`, nor user@example.com, nor "
            "@../outside.md\n```\n@docs/secret.md\n```\n\n"
            "## docs/style.md (imported by CLAUDE.md)\ntabs, never spaces; @deep/more.md\n\n"
            "## docs/deep/more.md (imported by docs/style.md)\nand more @../style.md\n\n"
            "## CLAUDE.local.md\nmy local notes\n\n")
      << text;
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_EQ(refused[0], "CLAUDE.md: @../outside.md: outside the workspace");
  RemoveTree(root);
}

// Imports stop kMaxImportDepth hops from the file.
TEST(InstructionsTest, ImportsStopAtTheirDepth) {
  std::string root = *RealPath(*MakeTempDir("odin-instr"));
  ASSERT_TRUE(WriteFileAtomic(root + "/CLAUDE.md", "@a1.md\n").ok());
  for (int i = 1; i <= 6; ++i) {
    ASSERT_TRUE(WriteFileAtomic(root + "/a" + std::to_string(i) + ".md",
                                "level " + std::to_string(i) + " @a" + std::to_string(i + 1) + ".md\n")
                    .ok());
  }
  std::string text = LoadInstructions(root, root, nullptr, {ClaudeFilesSha256(root, {}), "", {}});
  EXPECT_NE(text.find("level 4"), std::string::npos) << text;
  EXPECT_EQ(text.find("level 5"), std::string::npos) << text;
  RemoveTree(root);
}

// What Read may not read, git's and Odin's files, never become
// instructions: not as an import, not through a link.
TEST(InstructionsTest, NothingReadMayNotReadBecomesAnInstruction) {
  std::string root = *RealPath(*MakeTempDir("odin-instr"));
  ASSERT_TRUE(MakeDirs(root + "/.git").ok());
  ASSERT_TRUE(WriteFileAtomic(root + "/.env", "SECRET=hunter2\n").ok());
  ASSERT_TRUE(WriteFileAtomic(root + "/.git/config", "url = https://token@host/x\n").ok());
  ASSERT_TRUE(WriteFileAtomic(root + "/CLAUDE.md", "see @.env and @.git/config and @link.md\n").ok());
  ASSERT_EQ(symlink(".env", (root + "/link.md").c_str()), 0);
  ASSERT_EQ(symlink(".env", (root + "/AGENTS.md").c_str()), 0);
  std::vector<std::string> unreadable = {root + "/.env"};
  std::vector<std::string> refused;
  std::string text = LoadInstructions(root, root, &refused, {ClaudeFilesSha256(root, unreadable), "", unreadable});
  EXPECT_EQ(text.find("hunter2"), std::string::npos) << text;
  EXPECT_EQ(text.find("token@"), std::string::npos) << text;
  EXPECT_NE(text.find("see @.env"), std::string::npos) << text;
  EXPECT_EQ(refused,
            (std::vector<std::string>{".env: a Read deny rule covers it",
                                      ".git/config: git's and Odin's own files are not instructions",
                                      "link.md: a Read deny rule covers it", "AGENTS.md: a Read deny rule covers it"}));
  RemoveTree(root);
}

// Trust pins the CLAUDE files and their imports: an import changed, or one
// that appears, since keeps them all out.
TEST(InstructionsTest, ClaudeFilesAreReadOnlyAsTrusted) {
  std::string root = *RealPath(*MakeTempDir("odin-instr"));
  ASSERT_TRUE(WriteFileAtomic(root + "/CLAUDE.md", "rules; @TODO.md\n").ok());
  std::string trusted = ClaudeFilesSha256(root, {});
  EXPECT_NE(LoadInstructions(root, root, nullptr, {trusted, "", {}}).find("rules;"), std::string::npos);
  ASSERT_TRUE(WriteFileAtomic(root + "/TODO.md", "planted by the agent\n").ok());
  EXPECT_NE(ClaudeFilesSha256(root, {}), trusted);
  std::vector<std::string> refused;
  std::string text = LoadInstructions(root, root, &refused, {trusted, "", {}});
  EXPECT_EQ(text, "");
  EXPECT_EQ(refused,
            (std::vector<std::string>{"CLAUDE.md, CLAUDE.local.md or an import changed since `odin trust`: not read"}));
  EXPECT_EQ(ClaudeFilesSha256(*RealPath(*MakeTempDir("odin-instr")), {}), "");
  RemoveTree(root);
}

TEST(InstructionsTest, NestedClaudeFilesOncePerDirectoryAndNeverWhatReadMayNotRead) {
  std::string root = *RealPath(*MakeTempDir("odin-instr"));
  ASSERT_TRUE(MakeDirs(root + "/a/b/secret").ok());
  ASSERT_TRUE(WriteFileAtomic(root + "/CLAUDE.md", "root\n").ok());
  ASSERT_TRUE(WriteFileAtomic(root + "/a/CLAUDE.md", "outer-a\n").ok());
  ASSERT_TRUE(WriteFileAtomic(root + "/a/b/CLAUDE.local.md", "inner-b\n").ok());
  ASSERT_TRUE(WriteFileAtomic(root + "/a/b/secret/CLAUDE.md", "hidden\n").ok());
  std::set<std::string> given;
  std::string text = NestedInstructions(root, root + "/a/b/x.py", {}, &given);
  EXPECT_EQ(text.find("root"), std::string::npos) << text;  // the system prompt's
  ASSERT_NE(text.find("outer-a"), std::string::npos) << text;
  EXPECT_LT(text.find("outer-a"), text.find("inner-b")) << text;
  EXPECT_EQ(NestedInstructions(root, root + "/a/y.py", {}, &given), "");  // once
  EXPECT_EQ(NestedInstructions(root, root + "/a/b/secret/z", {root + "/a/b/secret/**"}, &given), "");
  EXPECT_EQ(NestedInstructions(root, "/etc/passwd", {}, &given), "");
}

}  // namespace
}  // namespace odin
