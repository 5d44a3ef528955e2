#include "workspace/workspace_fingerprint.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ctime>

#include <gtest/gtest.h>

#include "base/file_util.h"

namespace odin {
namespace {

class WorkspaceFingerprintTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StatusOr<std::string> dir = MakeTempDir("odin-fp");
    ASSERT_TRUE(dir.ok());
    root_ = *dir;
    Put("a.txt", "alpha\n");
    Put("src/b.cc", "int b;\n");
  }
  void TearDown() override { RemoveTree(root_); }
  void Put(const std::string& rel, const std::string& text) {
    ASSERT_TRUE(MakeDirs(DirName(JoinPath(root_, rel))).ok());
    ASSERT_TRUE(WriteFileAtomic(JoinPath(root_, rel), text).ok());
  }
  // Sets a file's mtime to an explicit value, as a touch would.
  void Touch(const std::string& rel, time_t sec) {
    timespec times[2] = {{sec, 0}, {sec, 0}};
    ASSERT_EQ(utimensat(AT_FDCWD, JoinPath(root_, rel).c_str(), times, 0), 0);
  }
  std::string root_;
};

TEST_F(WorkspaceFingerprintTest, NothingChangedGivesTheSameDigest) {
  WorkspaceFingerprint fp(root_);
  std::string first = fp.Compute();
  EXPECT_EQ(fp.Compute(), first);
  EXPECT_EQ(fp.files(), 2u);
}

TEST_F(WorkspaceFingerprintTest, ChangedContentChangesIt) {
  WorkspaceFingerprint fp(root_);
  std::string first = fp.Compute();
  Put("src/b.cc", "int b = 1;\n");
  EXPECT_NE(fp.Compute(), first);
}

TEST_F(WorkspaceFingerprintTest, ANewOrDeletedFileChangesIt) {
  WorkspaceFingerprint fp(root_);
  std::string first = fp.Compute();
  Put("c.txt", "new\n");
  std::string second = fp.Compute();
  EXPECT_NE(second, first);
  ASSERT_EQ(unlink(JoinPath(root_, "c.txt").c_str()), 0);
  EXPECT_NE(fp.Compute(), second);
}

TEST_F(WorkspaceFingerprintTest, TouchingAFileWithoutChangingItChangesNothingOnceHashed) {
  WorkspaceFingerprint fp(root_);
  fp.Compute();
  Touch("a.txt", 1'600'000'000);
  std::string hashed = fp.Compute();  // the file is hashed from now on
  Touch("a.txt", 1'600'000'100);
  EXPECT_EQ(fp.Compute(), hashed);
  Put("a.txt", "alpha\n");  // rewritten, same bytes
  EXPECT_EQ(fp.Compute(), hashed);
}

TEST_F(WorkspaceFingerprintTest, GitAndOdinDirectoriesAreIgnored) {
  WorkspaceFingerprint fp(root_);
  std::string first = fp.Compute();
  Put(".git/index", "x");
  Put(".odin/ledger.db", "y");
  EXPECT_EQ(fp.Compute(), first);
}

TEST_F(WorkspaceFingerprintTest, UpdatingTheWrittenFilesAgreesWithAFullScan) {
  WorkspaceFingerprint full(root_), partial(root_);
  full.Compute();
  partial.Compute();
  Put("src/b.cc", "int b = 2;\n");
  Put("new.txt", "n\n");
  ASSERT_EQ(unlink(JoinPath(root_, "a.txt").c_str()), 0);
  std::string updated = partial.Update({"src/b.cc", "new.txt", "a.txt"});
  EXPECT_EQ(updated, full.Compute());
  EXPECT_EQ(partial.files(), 2u);
  // Writing the same bytes back changes nothing.
  Put("new.txt", "n\n");
  EXPECT_EQ(partial.Update({"new.txt"}), updated);
}

}  // namespace
}  // namespace odin
