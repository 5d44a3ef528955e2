#include "workspace/git_head.h"

#include <gtest/gtest.h>

#include "base/file_util.h"
#include "base/secrets.h"
#include "base/subprocess.h"

namespace odin {
namespace {

class GitHeadTest : public ::testing::Test {
 protected:
  void Git(std::vector<std::string> args, const std::string& dir = "") {
    std::vector<std::string> argv = {"git",           "-C", dir.empty() ? ws_.path() : dir, "-c", "user.name=t", "-c",
                                     "user.email=t@t"};
    argv.insert(argv.end(), args.begin(), args.end());
    StatusOr<CommandOutput> out = RunCommand({.argv = argv, .env = CurrentEnvironment()});
    ASSERT_TRUE(out.ok() && out->exit_code == 0)
        << args[0] << ": " << (out.ok() ? out->output : out.status().message());
  }
  std::string RevParse(const std::string& what, const std::string& dir = "") {
    StatusOr<CommandOutput> out = RunCommand(
        {.argv = {"git", "-C", dir.empty() ? ws_.path() : dir, "rev-parse", what}, .env = CurrentEnvironment()});
    EXPECT_TRUE(out.ok() && out->exit_code == 0);
    std::string s = out.ok() ? out->output : "";
    while (!s.empty() && s.back() == '\n') s.pop_back();
    return s;
  }
  void SetUp() override { root_ = *MakeTempDir("odin-git-head-test"); }
  void TearDown() override { RemoveTree(root_); }
  struct Root {
    GitHeadTest* t;
    const std::string& path() const { return t->root_; }
    std::string Join(const std::string& rel) const { return t->root_ + "/" + rel; }
  };
  std::string root_;
  Root ws_{this};
};

TEST_F(GitHeadTest, OutsideARepositoryThereIsNone) {
  GitHead head = ReadGitHead(ws_.path());
  EXPECT_EQ(head.commit, "");
  EXPECT_EQ(head.ref, "");
}

TEST_F(GitHeadTest, ABranchADetachedHeadAndPackedRefs) {
  Git({"init", "-q", "-b", "main"});
  EXPECT_EQ(ReadGitHead(ws_.path()).Describe(), "refs/heads/main (no commit yet)");
  ASSERT_TRUE(WriteFileAtomic(ws_.Join("a.txt"), "a\n").ok());
  Git({"add", "a.txt"});
  Git({"commit", "-q", "-m", "one"});
  std::string one = RevParse("HEAD");
  GitHead head = ReadGitHead(ws_.path());
  EXPECT_EQ(head.commit, one);
  EXPECT_EQ(head.ref, "refs/heads/main");
  EXPECT_EQ(head.Describe(), "main at " + one.substr(0, 12));
  // From a subdirectory of the work tree, too.
  ASSERT_TRUE(MakeDirs(ws_.Join("sub/dir")).ok());
  EXPECT_EQ(ReadGitHead(ws_.Join("sub/dir")), head);

  Git({"pack-refs", "--all"});  // the loose ref is gone: packed-refs names it
  EXPECT_EQ(ReadGitHead(ws_.path()).commit, one);

  Git({"commit", "-q", "--allow-empty", "-m", "two"});
  EXPECT_NE(ReadGitHead(ws_.path()).commit, one);
  Git({"checkout", "-q", one});
  head = ReadGitHead(ws_.path());
  EXPECT_EQ(head.commit, one);
  EXPECT_EQ(head.ref, "");
  EXPECT_EQ(head.Describe(), "detached at " + one.substr(0, 12));
}

TEST_F(GitHeadTest, AHeadNamingNoRefGitWouldMakeIsNotShownAsItIs) {
  Git({"init", "-q", "-b", "main"});
  ASSERT_TRUE(WriteFileAtomic(ws_.Join(".git/HEAD"), "ref: refs/heads/\x1b]0;pwned\x07\n").ok());
  GitHead head = ReadGitHead(ws_.path());
  EXPECT_EQ(head.ref, "(an unreadable ref)");
  EXPECT_EQ(head.commit, "");
  ASSERT_TRUE(WriteFileAtomic(ws_.Join(".git/HEAD"), "ref: " + std::string(10000, 'a') + "\n").ok());
  EXPECT_EQ(ReadGitHead(ws_.path()).ref, "(an unreadable ref)");
}

TEST_F(GitHeadTest, AWorktreeReadsItsOwnHead) {
  Git({"init", "-q", "-b", "main"});
  Git({"commit", "-q", "--allow-empty", "-m", "one"});
  std::string tree = ws_.Join("wt");
  Git({"worktree", "add", "-q", "-b", "other", tree});
  Git({"commit", "-q", "--allow-empty", "-m", "on other"}, tree);
  GitHead head = ReadGitHead(tree);
  EXPECT_EQ(head.ref, "refs/heads/other");
  EXPECT_EQ(head.commit, RevParse("HEAD", tree));
  EXPECT_NE(head.commit, ReadGitHead(ws_.path()).commit);
}

}  // namespace
}  // namespace odin
