#include "config/claude_defs.h"

#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/file_util.h"
#include "workspace/workspace_files.h"

namespace odin {
namespace {

using ::testing::ElementsAre;

TEST(ClaudeDefsTest, FrontmatterAsClaudeCodesOwnExamplesWriteIt) {
  Frontmatter fm = ParseFrontmatter(
      "---\n"
      "allowed-tools: Bash(git add:*), Bash(git status:*), Bash(git commit:*)\n"
      "argument-hint: [pr-number] [priority] [assignee]\n"
      "description: \"Review a pull request\"\n"
      "model: claude-3-5-haiku-20241022\n"
      "tools:\n"
      "  - Read\n"
      "  - 'Grep'\n"
      "long: |\n"
      "  one\n"
      "  two\n"
      "---\n"
      "\n"
      "Review PR #$1 with priority $2.\n");
  EXPECT_EQ(fm.Get("allowed-tools"), "Bash(git add:*), Bash(git status:*), Bash(git commit:*)");
  EXPECT_EQ(fm.Get("argument-hint"), "[pr-number] [priority] [assignee]");
  EXPECT_EQ(fm.Get("description"), "Review a pull request");
  EXPECT_EQ(fm.Get("tools"), "Read, Grep");
  EXPECT_EQ(fm.Get("long"), "one two");
  EXPECT_EQ(fm.body, "Review PR #$1 with priority $2.\n");
  EXPECT_THAT(SplitToolList(fm.Get("allowed-tools")),
              ElementsAre("Bash(git add:*)", "Bash(git status:*)", "Bash(git commit:*)"));
  EXPECT_THAT(SplitToolList("[Read, \"Bash(echo a, b)\", mcp__x]"), ElementsAre("Read", "Bash(echo a, b)", "mcp__x"));
  // No frontmatter, or one never closed: all body.
  EXPECT_EQ(ParseFrontmatter("just text\n").body, "just text\n");
  EXPECT_EQ(ParseFrontmatter("---\nname: x\nno end\n").body, "---\nname: x\nno end\n");
  EXPECT_FALSE(ParseFrontmatter("---\nname: x\nno end\n").Has("name"));
}

TEST(ClaudeDefsTest, ReadsCommandsAgentsAndSkillsAndSaysWhatItSkips) {
  std::string root = *RealPath(*MakeTempDir("odin-claude-defs-test"));
  ASSERT_TRUE(MakeDirs(root + "/.claude/commands/git").ok());
  ASSERT_TRUE(MakeDirs(root + "/.claude/agents").ok());
  ASSERT_TRUE(MakeDirs(root + "/.claude/skills/pdf/scripts").ok());
  ASSERT_TRUE(WriteFileAtomic(root + "/.claude/commands/review-pr.md", "---\ndescription: Review\n---\nPR $1\n").ok());
  ASSERT_TRUE(WriteFileAtomic(root + "/.claude/commands/git/commit.md", "Commit it\n").ok());
  ASSERT_TRUE(WriteFileAtomic(root + "/.claude/commands/bad name.md", "x\n").ok());
  ASSERT_TRUE(MakeDirs(root + "/.claude/commands/hg").ok());
  ASSERT_TRUE(WriteFileAtomic(root + "/.claude/commands/hg/commit.md", "# Commit with hg\n").ok());
  ASSERT_TRUE(WriteFileAtomic(root + "/.claude/agents/rev.md",
                              "---\nname: code-reviewer\ndescription: Reviews\ntools: Read, Grep\n---\nYou review.\n")
                  .ok());
  ASSERT_TRUE(
      WriteFileAtomic(root + "/.claude/skills/pdf/SKILL.md", "---\nname: pdf\ndescription: PDFs\n---\nUse it\n").ok());
  ASSERT_TRUE(WriteFileAtomic(root + "/.claude/skills/pdf/scripts/fill.py", "print(1)\n").ok());
  ASSERT_EQ(symlink("/etc/passwd", (root + "/.claude/commands/leak.md").c_str()), 0);
  // A name that would paint the terminal is shown, never sent to it raw.
  ASSERT_TRUE(WriteFileAtomic(root + "/.claude/agents/\x1b[2Jx\nodin: ok.md", "---\nname: bad name\n---\nx\n").ok());
  StatusOr<WorkspaceFiles> files = WorkspaceFiles::Open(root);
  ASSERT_TRUE(files.ok());
  DefsDigest digest;
  ClaudeDefs defs = ReadClaudeDefs(*files, ".claude", ".claude/", "project", &digest);
  ASSERT_EQ(defs.commands.size(), 3u);
  EXPECT_EQ(defs.commands[0].name, "commit");
  EXPECT_EQ(defs.commands[0].group, "git");
  EXPECT_EQ(defs.commands[0].description, "Commit it");  // the body's first line
  // The same name in another subdirectory is reachable as /group:name.
  EXPECT_EQ(defs.commands[1].name, "hg:commit");
  EXPECT_EQ(defs.commands[1].description, "Commit with hg");
  std::swap(defs.commands[1], defs.commands[2]);
  EXPECT_EQ(defs.commands[1].name, "review-pr");
  EXPECT_EQ(defs.commands[1].description, "Review");
  EXPECT_FALSE(defs.commands[1].tools.has_value());
  ASSERT_EQ(defs.agents.size(), 1u);
  EXPECT_EQ(defs.agents[0].name, "code-reviewer");
  EXPECT_THAT(*defs.agents[0].tools, ElementsAre("Read", "Grep"));
  EXPECT_EQ(defs.agents[0].body, "You review.\n");
  ASSERT_EQ(defs.skills.size(), 1u);
  EXPECT_THAT(defs.skills[0].files, ElementsAre("scripts/fill.py"));
  EXPECT_EQ(defs.skills[0].dir, root + "/.claude/skills/pdf");
  ASSERT_EQ(defs.problems.size(), 2u);
  EXPECT_NE(defs.problems[0].find("bad name.md: not taken"), std::string::npos) << defs.problems[0];
  EXPECT_EQ(defs.problems[1].find_first_of("\x1b\n"), std::string::npos) << defs.problems[1];
  EXPECT_NE(defs.problems[1].find("not taken"), std::string::npos) << defs.problems[1];
  // The link is neither followed nor hashed; the digest changes with a byte.
  EXPECT_EQ(digest.text.find("leak"), std::string::npos);
  std::string before = digest.text;
  ASSERT_TRUE(WriteFileAtomic(root + "/.claude/agents/rev.md", "---\nname: code-reviewer\n---\nYou approve.\n").ok());
  DefsDigest again;
  ReadClaudeDefs(*files, ".claude", ".claude/", "project", &again);
  EXPECT_NE(again.text, before);
  // The workspace's over the user's, said.
  ClaudeDefs user;
  user.commands.push_back({.name = "review-pr", .source = "~/.claude/commands/review-pr.md"});
  ClaudeDefs merged = MergeDefs(std::move(user), std::move(defs));
  EXPECT_EQ(merged.FindCommand("review-pr")->source, ".claude/commands/review-pr.md");
  EXPECT_NE(merged.problems.back().find("is shadowed by .claude/commands/review-pr.md"), std::string::npos);
}

}  // namespace
}  // namespace odin
