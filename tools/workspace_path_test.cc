#include "tools/workspace_path.h"

#include <algorithm>

#include <unistd.h>

#include <gtest/gtest.h>

#include "base/file_util.h"

namespace odin {
namespace {

class WorkspacePathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = *RealPath(*MakeTempDir("odin-path"));
    ws_ = root_ + "/ws";
    ASSERT_TRUE(MakeDirs(ws_ + "/src").ok());
  }
  void TearDown() override { RemoveTree(root_); }
  std::string root_, ws_;
};

TEST_F(WorkspacePathTest, RelativeAndAbsolutePathsResolveInside) {
  EXPECT_EQ(*ResolveWorkspacePath("src/a.cc", ws_), ws_ + "/src/a.cc");
  EXPECT_EQ(*ResolveWorkspacePath(ws_ + "/src/./b/../a.cc", ws_), ws_ + "/src/a.cc");
  EXPECT_EQ(*ResolveWorkspacePath("new/dir/file", ws_), ws_ + "/new/dir/file");
}

TEST_F(WorkspacePathTest, DotDotOutIsRefused) {
  auto p = ResolveWorkspacePath("../outside.txt", ws_);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("outside the workspace"), std::string::npos);
  EXPECT_FALSE(ResolveWorkspacePath("/etc/passwd", ws_).ok());
}

TEST_F(WorkspacePathTest, SymlinkThatEscapesIsRefused) {
  ASSERT_EQ(symlink(root_.c_str(), (ws_ + "/escape").c_str()), 0);
  auto p = ResolveWorkspacePath("escape/secret", ws_);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("resolves to " + root_ + "/secret"), std::string::npos) << p.status().message();
  // A symlink that stays inside is followed.
  ASSERT_EQ(symlink((ws_ + "/src").c_str(), (ws_ + "/link").c_str()), 0);
  EXPECT_EQ(*ResolveWorkspacePath("link/x", ws_), ws_ + "/src/x");
}

TEST_F(WorkspacePathTest, AnApprovedPathOutsideLetsThroughItselfAndWhatIsBelowIt) {
  ASSERT_TRUE(MakeDirs(root_ + "/other/sub").ok());
  std::string approved = root_ + "/other";
  EXPECT_EQ(*ResolveToolPath(root_ + "/other/sub/f", ws_, approved), root_ + "/other/sub/f");
  EXPECT_EQ(*ResolveToolPath("../other", ws_, approved), root_ + "/other");
  EXPECT_EQ(*ResolveToolPath("src/x", ws_, approved), ws_ + "/src/x");
  // Beside it, or out of it through "..", stays refused.
  EXPECT_FALSE(ResolveToolPath(root_ + "/otherwise", ws_, approved).ok());
  EXPECT_FALSE(ResolveToolPath(root_ + "/other/../secret", ws_, approved).ok());
  EXPECT_FALSE(ResolveToolPath(root_ + "/other/f", ws_, "").ok());
  // A symlink inside the approved directory is judged by where it leads.
  ASSERT_EQ(symlink("/etc", (root_ + "/other/etc").c_str()), 0);
  EXPECT_FALSE(ResolveToolPath(root_ + "/other/etc/passwd", ws_, approved).ok());
}

TEST_F(WorkspacePathTest, IsOutsideWorkspaceAnswersWithoutReadingAMessage) {
  EXPECT_TRUE(IsOutsideWorkspace("../outside.txt", ws_));
  EXPECT_TRUE(IsOutsideWorkspace("/etc/passwd", ws_));
  ASSERT_EQ(symlink(root_.c_str(), (ws_ + "/up").c_str()), 0);
  EXPECT_TRUE(IsOutsideWorkspace("up/x", ws_));
  EXPECT_FALSE(IsOutsideWorkspace("src/a.cc", ws_));
  EXPECT_FALSE(IsOutsideWorkspace("new/dir/file", ws_));
  EXPECT_FALSE(IsOutsideWorkspace("", ws_));  // malformed, not outside
}

TEST_F(WorkspacePathTest, DisplayPathIsRelative) {
  EXPECT_EQ(DisplayPath(ws_ + "/src/a.cc", ws_), "src/a.cc");
  EXPECT_EQ(DisplayPath(ws_, ws_), ".");
  EXPECT_EQ(DisplayPath("/etc/x", ws_), "/etc/x");
}

TEST(PathPatternTest, CoversThePathOrADirectoryAboveItAndSaysWhereAWalkNeedNotGo) {
  EXPECT_TRUE(PathPatternCovers("/w/**/.env", "/w/.env"));
  EXPECT_TRUE(PathPatternCovers("/w/**/.env", "/w/a/b/.env"));
  EXPECT_TRUE(PathPatternCovers("/w/secrets", "/w/secrets/k/key.pem"));
  EXPECT_FALSE(PathPatternCovers("/w/secrets", "/w/secretsx"));
  EXPECT_TRUE(PathPatternCovers("/w/*.pem", "/w/a.pem"));
  EXPECT_FALSE(PathPatternCovers("/w/*.pem", "/w/sub/a.pem"));
  // A walk for /w/src/**/*.key enters src and below, nothing else.
  auto PathPatternMayCoverBelow = [](const std::string& pattern, const std::string& dir) {
    return PathPatternState(pattern).EnterPath(dir).MayCoverBelow();
  };
  EXPECT_TRUE(PathPatternMayCoverBelow("/w/src/**/*.key", "/w"));
  EXPECT_TRUE(PathPatternMayCoverBelow("/w/src/**/*.key", "/w/src"));
  EXPECT_TRUE(PathPatternMayCoverBelow("/w/src/**/*.key", "/w/src/a/b"));
  EXPECT_FALSE(PathPatternMayCoverBelow("/w/src/**/*.key", "/w/node_modules"));
  EXPECT_FALSE(PathPatternMayCoverBelow("/w/*.pem", "/w/sub"));
  EXPECT_TRUE(PathPatternMayCoverBelow("/w/**/.env", "/w/node_modules/x"));
  EXPECT_FALSE(PathPatternMayCoverBelow("/w/a/b", "/w/c"));
  EXPECT_FALSE(PathPatternMayCoverBelow("/w/a/b", "/w/a/b"));  // covered itself: nothing more below
  PathPatternState at_w = PathPatternState("/w/**/.env").Enter("w");
  EXPECT_TRUE(at_w.Enter(".env").Covers());
  EXPECT_FALSE(at_w.Enter("x").Covers());
  EXPECT_TRUE(at_w.Enter("x").Enter(".env").Covers());
}

}  // namespace
}  // namespace odin
