#include "workspace/workspace.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "base/file_util.h"
#include "workspace/isolated_views.h"

namespace odin {
namespace {

class WorkspaceTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = *RealPath(*MakeTempDir("odin-ws-test")); }
  void TearDown() override { RemoveTree(dir_); }
  std::string dir_;
};

TEST_F(WorkspaceTest, GitTopLevelIsTheWorkspace) {
  ASSERT_TRUE(MakeDirs(dir_ + "/repo/.git").ok());
  ASSERT_TRUE(MakeDirs(dir_ + "/repo/src/deep").ok());
  auto ws = FindWorkspace(dir_ + "/repo/src/deep");
  ASSERT_TRUE(ws.ok());
  EXPECT_EQ(ws->root, dir_ + "/repo");
  EXPECT_EQ(ws->cwd, dir_ + "/repo/src/deep");
  EXPECT_EQ(ws->ledger_path, dir_ + "/repo/.odin/odin.db");
}

TEST_F(WorkspaceTest, WithoutGitTheDirectoryItself) {
  ASSERT_TRUE(MakeDirs(dir_ + "/plain").ok());
  EXPECT_EQ(FindWorkspace(dir_ + "/plain")->root, dir_ + "/plain");
}

TEST_F(WorkspaceTest, MissingDirectoryIsNotFound) {
  auto ws = FindWorkspace(dir_ + "/nope");
  ASSERT_FALSE(ws.ok());
  EXPECT_EQ(ws.status().code(), StatusCode::kNotFound);
  EXPECT_NE(ws.status().message().find(dir_ + "/nope"), std::string::npos);
}

// .odin is private state only (DESIGN.md §9): one Odin did not make is
// never used; the state goes to the user's state directory, and says so.
TEST_F(WorkspaceTest, AStateDirThatIsAFileIsNotUsedTheStateGoesElsewhere) {
  ASSERT_TRUE(WriteFileAtomic(dir_ + "/.odin", "not a directory").ok());
  auto ws = FindWorkspace(dir_);
  ASSERT_TRUE(ws.ok());
  EXPECT_EQ(ws->state_dir, StateDirElsewhere(dir_));
  EXPECT_NE(ws->state_elsewhere.find(".odin is not a directory"), std::string::npos) << ws->state_elsewhere;
  EXPECT_EQ(ws->ledger_path, ws->state_dir + "/odin.db");
  ASSERT_TRUE(PrepareStateDir(*ws).ok());
  EXPECT_TRUE(IsDirectory(ws->state_dir));
  EXPECT_EQ(*ReadFileToString(dir_ + "/.odin"), "not a directory");
}

TEST_F(WorkspaceTest, OdinsOwnStateDirIsMarkedAndUsedAgain) {
  auto ws = FindWorkspace(dir_);
  ASSERT_TRUE(ws.ok());
  EXPECT_EQ(ws->state_dir, dir_ + "/.odin");
  ASSERT_TRUE(PrepareStateDir(*ws).ok());
  struct stat st;
  ASSERT_EQ(lstat((dir_ + "/.odin").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_EQ(*ReadFileToString(dir_ + "/.odin/.gitignore"), "*\n");
  EXPECT_TRUE(PathExists(dir_ + "/.odin/" + kStateMarkerFile));
  auto again = FindWorkspace(dir_);
  EXPECT_EQ(again->state_dir, dir_ + "/.odin");
  EXPECT_EQ(again->state_elsewhere, "");
}

TEST_F(WorkspaceTest, AShippedStateDirIsNotUsedEvenWithAMarkerCopiedFromElsewhere) {
  // What a repository could ship: a directory (git gives it the umask's
  // mode), and a marker copied from another workspace of this user.
  ASSERT_TRUE(MakeDirs(dir_ + "/other").ok());
  auto other = FindWorkspace(dir_ + "/other");
  ASSERT_TRUE(PrepareStateDir(*other).ok());
  ASSERT_TRUE(MakeDirs(dir_ + "/repo/.git").ok());
  ASSERT_TRUE(MakeDirs(dir_ + "/repo/.odin", 0755).ok());
  ASSERT_EQ(chmod((dir_ + "/repo/.odin").c_str(), 0755), 0);
  EXPECT_NE(FindWorkspace(dir_ + "/repo")->state_elsewhere.find("has mode 0755"), std::string::npos);
  ASSERT_EQ(chmod((dir_ + "/repo/.odin").c_str(), 0700), 0);
  EXPECT_NE(FindWorkspace(dir_ + "/repo")->state_elsewhere.find("has no marker"), std::string::npos);
  ASSERT_TRUE(WriteFileAtomic(dir_ + "/repo/.odin/" + kStateMarkerFile,
                              *ReadFileToString(dir_ + "/other/.odin/" + kStateMarkerFile))
                  .ok());
  auto ws = FindWorkspace(dir_ + "/repo");
  EXPECT_NE(ws->state_elsewhere.find("a marker Odin did not make for it"), std::string::npos) << ws->state_elsewhere;
  EXPECT_EQ(ws->state_dir, StateDirElsewhere(dir_ + "/repo"));
  // A symlink.
  ASSERT_TRUE(MakeDirs(dir_ + "/linked").ok());
  ASSERT_EQ(symlink("/tmp", (dir_ + "/linked/.odin").c_str()), 0);
  EXPECT_NE(FindWorkspace(dir_ + "/linked")->state_elsewhere.find("is a symlink"), std::string::npos);
}

// A host agent is named a view by id: only a view's name, whose tree is a
// directory under the workspace's own state directory now, is taken.
TEST_F(WorkspaceTest, AHostTakesOnlyAViewOfItsOwnWorkspace) {
  ASSERT_TRUE(MakeDirs(dir_ + "/repo/.git").ok());
  StatusOr<Workspace> ws = FindWorkspace(dir_ + "/repo");
  ASSERT_TRUE(ws.ok());
  ASSERT_TRUE(MakeDirs(ws->state_dir + "/views/view_abc/tree").ok());
  StatusOr<Workspace> view = ExistingViewWorkspace(*ws, "view_abc");
  ASSERT_TRUE(view.ok()) << view.status().message();
  EXPECT_EQ(view->root, ws->state_dir + "/views/view_abc/tree");
  EXPECT_EQ(view->view_of, ws->root);
  EXPECT_EQ(ViewedWorkspace(*view).root, ws->root);
  EXPECT_EQ(ViewedWorkspace(*view).view, "");
  for (const char* bad : {"", "view_", "../views/view_abc", "view_abc/../../x", "/tmp", "view_a/b", "other"}) {
    EXPECT_EQ(ExistingViewWorkspace(*ws, bad).status().code(), StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(ExistingViewWorkspace(*ws, "view_gone").status().code(), StatusCode::kNotFound);
  // A view whose tree is a symlink (to anywhere) is no view.
  ASSERT_TRUE(MakeDirs(dir_ + "/elsewhere").ok());
  ASSERT_TRUE(MakeDirs(ws->state_dir + "/views/view_link").ok());
  ASSERT_EQ(symlink((dir_ + "/elsewhere").c_str(), (ws->state_dir + "/views/view_link/tree").c_str()), 0);
  EXPECT_EQ(ExistingViewWorkspace(*ws, "view_link").status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace odin
