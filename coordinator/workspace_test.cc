#include "coordinator/workspace.h"

#include <gtest/gtest.h>

#include "base/file_util.h"

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

TEST_F(WorkspaceTest, StateDirThatIsAFileIsAnError) {
  ASSERT_TRUE(WriteFileAtomic(dir_ + "/.odin", "not a directory").ok());
  auto ws = FindWorkspace(dir_);
  Status s = PrepareStateDir(*ws);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find(dir_ + "/.odin"), std::string::npos);
}

}  // namespace
}  // namespace odin
