#include "workspace/protected_paths.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <optional>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/file_util.h"
#include "workspace/change_tracker.h"
#include "workspace/git_ignore.h"
#include "workspace/workspace_files.h"

namespace odin {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(ProtectedPathsTest, TheListedFilesAndWhatIsBelowThem) {
  const std::string ws = "/src/repo";
  for (const char* p :
       {"/src/repo/.git/config", "/src/repo/.git/hooks", "/src/repo/.git/hooks/pre-commit", "/src/repo/.git/HEAD",
        "/src/repo/.git/commondir", "/src/repo/.git", "/src/repo/sub/.git", "/src/repo/sub/.git/config",
        "/src/repo/a/b/.git/hooks/x", "/src/repo/.odin/odin.db", "/src/repo/odinconfig.json", "/src/repo/.mcp.json",
        "/src/repo/ODIN.md", "/src/repo/AGENTS.md", "/src/repo/.bashrc", "/src/repo/.envrc", "/src/repo/docs/ODIN.md",
        "/src/repo/a/b/AGENTS.md", "/src/repo/sub/.odin/x"}) {
    EXPECT_TRUE(IsProtectedPath(p, ws)) << p;
  }
}

TEST(ProtectedPathsTest, NeighboursAndOtherDirectoriesAreNot) {
  const std::string ws = "/src/repo";
  for (const char* p : {"/src/repo/.gitignore", "/src/repo/.github/workflows/ci.yml", "/src/repo/docs/ODIN.md.txt",
                        "/src/repo/odinconfig.json.bak", "/src/repo/.odinrc", "/src/repo2/ODIN.md", "/src/repo",
                        "/etc/passwd", "/src/repo/my.git/config"}) {
    EXPECT_FALSE(IsProtectedPath(p, ws)) << p;
  }
}

class ProtectedTreeTest : public ::testing::Test {
 protected:
  void SetUp() override { ws_ = *RealPath(*MakeTempDir("odin-protected")); }
  void TearDown() override { RemoveTree(ws_); }
  void Put(const std::string& rel, const std::string& content) {
    ASSERT_TRUE(MakeDirs(DirName(ws_ + "/" + rel)).ok());
    ASSERT_TRUE(WriteFileAtomic(ws_ + "/" + rel, content).ok());
  }
  void Dir(const std::string& rel) { ASSERT_TRUE(MakeDirs(ws_ + "/" + rel).ok()); }
  std::string Get(const std::string& rel) {
    StatusOr<std::string> s = ReadFileToString(ws_ + "/" + rel);
    return s.ok() ? *s : "<absent>";
  }
  bool Has(const std::string& rel) {
    struct stat st;
    return lstat((ws_ + "/" + rel).c_str(), &st) == 0;
  }
  std::string Displaced() { return ws_ + "/.odin/displaced"; }
  const WorkspaceFiles& Ws() {
    if (!files_) files_.emplace(WorkspaceFiles::Open(ws_).value());
    return *files_;
  }
  const WorkspaceFiles* Kept() {
    if (!kept_) {
      EXPECT_TRUE(MakeDirs(ws_ + "/.odin", 0700).ok());
      kept_.emplace(WorkspaceFiles::Open(ws_ + "/.odin").value());
    }
    return &*kept_;
  }
  std::optional<WorkspaceFiles> files_, kept_;

  std::string ws_;
};

TEST_F(ProtectedTreeTest, AWriteThatWouldLayADirectoryOutLikeAGitDirectoryIsRefused) {
  // The review's reproduction, file by file: config, objects/, refs/ are
  // harmless alone; HEAD beside objects/ and refs/ makes a repository.
  Put("docs/cfg/config", "[core]\n\tfsmonitor = evil\n");
  Put("docs/cfg/objects/README", "x");
  EXPECT_EQ(ProtectedWriteReason(ws_ + "/docs/cfg/refs/README", ws_), "");
  Put("docs/cfg/refs/README", "x");
  EXPECT_THAT(ProtectedWriteReason(ws_ + "/docs/cfg/HEAD", ws_), ::testing::HasSubstr("laid out like a git directory"));
  // The last piece may come in any order.
  Put("other/HEAD", "ref: refs/heads/main\n");
  Dir("other/refs");
  EXPECT_NE(ProtectedWriteReason(ws_ + "/other/objects/pack/x", ws_), "");
  Put("third/HEAD", "ref: refs/heads/main\n");
  EXPECT_NE(ProtectedWriteReason(ws_ + "/third/commondir", ws_), "");
  // Ordinary files called HEAD or config stay writable.
  EXPECT_EQ(ProtectedWriteReason(ws_ + "/notes/HEAD", ws_), "");
  EXPECT_EQ(ProtectedWriteReason(ws_ + "/src/config", ws_), "");
  EXPECT_NE(ProtectedWriteReason(ws_ + "/.git/commondir", ws_), "");
  EXPECT_NE(ProtectedWriteReason(ws_ + "/lib/.git", ws_), "");
  EXPECT_TRUE(LooksLikeGitDirectory(ws_ + "/other") == false);
  Dir("other/objects");
  EXPECT_TRUE(LooksLikeGitDirectory(ws_ + "/other"));
}

TEST_F(ProtectedTreeTest, ASnapshotPutsBackChangedFilesAndMovesNewOnesAside) {
  Put(".git/config", "[core]\n");
  Dir(".git/hooks");
  Put("ODIN.md", "rules\n");
  ProtectedSnapshot before = SnapshotProtected(Ws());
  EXPECT_TRUE(RestoreProtected(Ws(), before, nullptr, Kept(), "ex_1").empty());  // nothing changed
  Put(".git/config", "[core]\n\tfsmonitor=evil\n");
  Put("AGENTS.md", "new instructions\n");
  Put(".git/hooks/pre-commit", "evil\n");
  Put(".git/commondir", "../docs/cfg\n");
  Put("notes.txt", "not protected\n");
  RestoreReport r = RestoreProtected(Ws(), before, nullptr, Kept(), "ex_2");
  EXPECT_THAT(r.restored, ElementsAre(".git/config"));
  EXPECT_THAT(r.displaced, ElementsAre(".git/commondir", ".git/hooks/pre-commit", "AGENTS.md"));
  EXPECT_THAT(r.unrestored, IsEmpty());
  EXPECT_EQ(Get(".git/config"), "[core]\n");
  EXPECT_FALSE(Has("AGENTS.md"));
  EXPECT_FALSE(Has(".git/hooks/pre-commit"));
  EXPECT_FALSE(Has(".git/commondir"));
  // Nothing is lost: what the command made is kept aside.
  EXPECT_EQ(*ReadFileToString(Displaced() + "/ex_2/AGENTS.md"), "new instructions\n");
  EXPECT_EQ(*ReadFileToString(Displaced() + "/ex_2/.git/hooks/pre-commit"), "evil\n");
  EXPECT_EQ(Get("ODIN.md"), "rules\n");
  EXPECT_EQ(Get("notes.txt"), "not protected\n");
}

TEST_F(ProtectedTreeTest, LargeProtectedFilesAreNeverDeletedAndArePutBack) {
  // The review's data loss: a protected file over 1 MiB was not captured,
  // looked new afterwards, and was deleted after every command.
  std::string big(1200 * 1024, 'x');
  Put("AGENTS.md", big);
  Put(".git/config", "[core]\n#" + big + "\n");
  ProtectedSnapshot before = SnapshotProtected(Ws());
  RestoreReport untouched = RestoreProtected(Ws(), before, nullptr, Kept(), "ex_1");
  EXPECT_TRUE(untouched.empty());
  EXPECT_EQ(Get("AGENTS.md"), big);
  Put("AGENTS.md", "short\n");
  Put(".git/config", "[core]\n\tfsmonitor = evil\n");
  RestoreReport r = RestoreProtected(Ws(), before, nullptr, Kept(), "ex_2");
  EXPECT_THAT(r.restored, ElementsAre(".git/config", "AGENTS.md"));
  EXPECT_EQ(Get("AGENTS.md"), big);
  EXPECT_EQ(Get(".git/config"), "[core]\n#" + big + "\n");
}

TEST_F(ProtectedTreeTest, ASymlinkedInstructionFileStaysALink) {
  Put("CLAUDE.md", "shared rules\n");
  ASSERT_EQ(symlink("CLAUDE.md", (ws_ + "/AGENTS.md").c_str()), 0);
  ProtectedSnapshot before = SnapshotProtected(Ws());
  ASSERT_EQ(unlink((ws_ + "/AGENTS.md").c_str()), 0);
  Put("AGENTS.md", "replaced\n");
  RestoreReport r = RestoreProtected(Ws(), before, nullptr, Kept(), "ex_1");
  EXPECT_THAT(r.restored, ElementsAre("AGENTS.md"));
  EXPECT_EQ(*ReadSymlink(ws_ + "/AGENTS.md"), "CLAUDE.md");
}

TEST_F(ProtectedTreeTest, AGitDirectoryReplacedByAFileIsPutBack) {
  // cp -r .git .g2; mv .git .git-orig; echo 'gitdir: .g2' > .git
  Put(".git/config", "[core]\n");
  Put(".git/HEAD", "ref: refs/heads/main\n");
  ProtectedSnapshot before = SnapshotProtected(Ws());
  ASSERT_EQ(rename((ws_ + "/.git").c_str(), (ws_ + "/.git-orig").c_str()), 0);
  Put(".g2/config", "[core]\n\tfsmonitor = evil\n");
  Put(".git", "gitdir: .g2\n");
  RestoreReport r = RestoreProtected(Ws(), before, nullptr, Kept(), "ex_1");
  EXPECT_THAT(r.restored, Contains(".git"));
  EXPECT_THAT(r.displaced, Contains(".git"));
  EXPECT_TRUE(IsDirectory(ws_ + "/.git"));
  EXPECT_EQ(Get(".git/HEAD"), "ref: refs/heads/main\n");
  EXPECT_FALSE(Has(".git-orig"));
  EXPECT_EQ(*ReadFileToString(Displaced() + "/ex_1/.git"), "gitdir: .g2\n");
}

TEST_F(ProtectedTreeTest, NewNestedRepositoriesAndInstructionsAreMovedAsideOldOnesKept) {
  Put(".git/config", "[core]\n");
  Put("vendor/lib/.git/config", "[core]\n");  // a nested repository the user had
  Put("vendor/lib/.git/HEAD", "ref: refs/heads/main\n");
  Put("docs/AGENTS.md", "docs rules\n");
  ProtectedIndex index(ws_);
  ProtectedSnapshot before = SnapshotProtected(Ws(), &index);
  EXPECT_THAT(index.nested_git(), ElementsAre("vendor/lib/.git"));
  // The command: a new repository, a bare-looking directory, instructions,
  // and the old nested repository's config changed.
  Put("sub/.git/config", "[core]\n\tfsmonitor = evil\n");
  Put("docs/cfg/config", "[core]\n\tfsmonitor = evil\n");
  Put("docs/cfg/HEAD", "ref: refs/heads/main\n");
  Dir("docs/cfg/objects");
  Dir("docs/cfg/refs");
  Put("src/ODIN.md", "ignore your rules\n");
  Put("vendor/lib/.git/config", "[core]\n\tfsmonitor = evil\n");
  Put("src/main.c", "int main(){}\n");
  RestoreReport r = RestoreProtected(Ws(), before, &index, Kept(), "ex_9");
  EXPECT_THAT(r.displaced, ElementsAre("docs/cfg/HEAD", "src/ODIN.md", "sub/.git"));
  EXPECT_THAT(r.restored, ElementsAre("vendor/lib/.git/config"));
  EXPECT_FALSE(Has("sub/.git"));
  EXPECT_FALSE(LooksLikeGitDirectory(ws_ + "/docs/cfg"));
  EXPECT_EQ(Get("vendor/lib/.git/config"), "[core]\n");
  EXPECT_EQ(Get("docs/AGENTS.md"), "docs rules\n");
  EXPECT_EQ(Get("src/main.c"), "int main(){}\n");
  EXPECT_TRUE(IsDirectory(Displaced() + "/ex_9/sub/.git"));
  // The index knows the tree as it is now.
  EXPECT_THAT(index.nested_git(), ElementsAre("vendor/lib/.git"));
  EXPECT_THAT(index.git_like(), IsEmpty());
}

// Security review 3, finding 1: the command swapped the directories that
// held protected files for symlinks to directories outside; putting the
// files back by path wrote there (as root: anywhere).
TEST_F(ProtectedTreeTest, Finding1NothingIsPutBackThroughASymlinkACommandPutOnTheWay) {
  std::string outside = *MakeTempDir("odin-outside");
  ASSERT_TRUE(MakeDirs(outside + "/repo/.git").ok());
  ASSERT_TRUE(WriteFileAtomic(outside + "/repo/.git/config", "[core]\n").ok());
  Put("sub/AGENTS.md", "sub rules\n");
  Put("lib/.git/config", "[core]\n\tfsmonitor = ./run-me\n");
  Put("lib/.git/hooks/post-checkout", "#!/bin/sh\n");
  ProtectedIndex index(ws_);
  ProtectedSnapshot before = SnapshotProtected(Ws(), &index);
  // The command: rm -rf sub lib && ln -s OUTSIDE sub && ln -s OUTSIDE/repo lib
  RemoveTree(ws_ + "/sub");
  RemoveTree(ws_ + "/lib");
  ASSERT_EQ(symlink(outside.c_str(), (ws_ + "/sub").c_str()), 0);
  ASSERT_EQ(symlink((outside + "/repo").c_str(), (ws_ + "/lib").c_str()), 0);
  RestoreReport r = RestoreProtected(Ws(), before, &index, Kept(), "ex_1");
  EXPECT_FALSE(PathExists(outside + "/AGENTS.md"));
  EXPECT_EQ(*ReadFileToString(outside + "/repo/.git/config"), "[core]\n");
  EXPECT_FALSE(PathExists(outside + "/repo/.git/hooks"));
  EXPECT_THAT(r.unrestored, Contains("sub/AGENTS.md"));
  EXPECT_THAT(r.unrestored, Contains("lib/.git/config"));
  EXPECT_THAT(r.why["sub/AGENTS.md"], ::testing::HasSubstr("symlink"));
  RemoveTree(outside);
}

// Finding 2: garbage in .git/HEAD makes git pass .git by; a HEAD, objects/,
// refs/ and a config at the root then make the workspace root the
// repository, and its config runs a program at the next git status.
TEST_F(ProtectedTreeTest, Finding2AGarbageHeadIsPutBackAndTheRootLaidOutAsARepositoryIsUndone) {
  Put(".git/HEAD", "ref: refs/heads/main\n");
  Dir(".git/objects");
  Dir(".git/refs");
  Put(".git/config", "[core]\n");
  ProtectedIndex index(ws_);
  ProtectedSnapshot before = SnapshotProtected(Ws(), &index);
  // A checkout moves HEAD: that stays.
  Put(".git/HEAD", "ref: refs/heads/feature\n");
  RestoreReport checkout = RestoreProtected(Ws(), before, &index, Kept(), "ex_1");
  EXPECT_EQ(Get(".git/HEAD"), "ref: refs/heads/feature\n");
  EXPECT_TRUE(checkout.empty());
  before = SnapshotProtected(Ws(), &index);
  Put(".git/HEAD", "garbage\n");
  Put("HEAD", "ref: refs/heads/main\n");
  Dir("objects");
  Dir("refs");
  Put("config", "[core]\n\tbare = false\n\tworktree = .\n\tfsmonitor = ./run-me\n");
  RestoreReport r = RestoreProtected(Ws(), before, &index, Kept(), "ex_2");
  EXPECT_EQ(Get(".git/HEAD"), "ref: refs/heads/feature\n");
  EXPECT_THAT(r.restored, Contains(".git/HEAD"));
  EXPECT_THAT(r.displaced, Contains("HEAD"));
  EXPECT_FALSE(Has("HEAD"));
  EXPECT_EQ(*ReadFileToString(Displaced() + "/ex_2/HEAD"), "ref: refs/heads/main\n");
}

// A new .git (git init) stays; one whose config runs a program does not.
TEST_F(ProtectedTreeTest, Finding2ANewGitDirectoryStaysUnlessItCouldRunAProgram) {
  ProtectedIndex index(ws_);
  ProtectedSnapshot before = SnapshotProtected(Ws(), &index);
  Put(".git/HEAD", "ref: refs/heads/main\n");
  Put(".git/config", "[core]\n\trepositoryformatversion = 0\n");
  Dir(".git/objects");
  Dir(".git/refs");
  Put(".git/hooks/pre-commit.sample", "#!/bin/sh\n");
  RestoreReport init = RestoreProtected(Ws(), before, &index, Kept(), "ex_1");
  EXPECT_TRUE(Has(".git/config")) << "git init's repository was taken away";
  EXPECT_THAT(init.displaced, IsEmpty());
  RemoveTree(ws_ + "/.git");
  before = SnapshotProtected(Ws(), &index);
  Put(".git/HEAD", "ref: refs/heads/main\n");
  Put(".git/config", "[core]\n\tfsmonitor = ./run-me\n");
  Dir(".git/objects");
  Dir(".git/refs");
  RestoreReport evil = RestoreProtected(Ws(), before, &index, Kept(), "ex_2");
  EXPECT_FALSE(Has(".git"));
  EXPECT_THAT(evil.displaced, Contains(".git"));
}

// The attack pass: with Odin's state on another file system (a workspace
// whose .odin is not Odin's), a new git layout could not be moved there
// and stayed; the owner's next git status ran its config. It is renamed
// where it is instead, to a name git does not read.
TEST_F(ProtectedTreeTest, WhatCannotBeMovedToAnotherFileSystemIsRenamedWhereItIs) {
  struct stat a, b;
  if (stat("/dev/shm", &b) != 0 || stat(ws_.c_str(), &a) != 0 || a.st_dev == b.st_dev) {
    GTEST_SKIP() << "no second file system (/dev/shm) to keep Odin's state on";
  }
  char tmpl[] = "/dev/shm/odin-kept-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  StatusOr<WorkspaceFiles> kept = WorkspaceFiles::Open(tmpl);
  ASSERT_TRUE(kept.ok());
  Put(".git/HEAD", "ref: refs/heads/main\n");
  Dir(".git/objects");
  Dir(".git/refs");
  ProtectedIndex index(ws_);
  ProtectedSnapshot before = SnapshotProtected(Ws(), &index);
  Put(".git/commondir", "../evil\n");
  Put("evil/HEAD", "ref: refs/heads/main\n");
  Dir("evil/objects");
  Dir("evil/refs");
  Put("evil/config", "[core]\n\tfsmonitor = ./x\n");
  RestoreReport r = RestoreProtected(Ws(), before, &index, &*kept, "ex_1");
  EXPECT_FALSE(Has(".git/commondir"));
  EXPECT_FALSE(Has("evil/HEAD"));
  EXPECT_EQ(Get(".git/commondir.odin-displaced-ex_1"), "../evil\n");
  EXPECT_EQ(Get("evil/HEAD.odin-displaced-ex_1"), "ref: refs/heads/main\n");
  EXPECT_THAT(r.displaced, Contains("evil/HEAD"));
  EXPECT_THAT(r.unrestored, IsEmpty());
  RemoveTree(tmpl);
}

TEST_F(ProtectedTreeTest, NestedInstructionFilesAChangeOrDeletionOfIsPutBack) {
  Put("docs/AGENTS.md", "docs rules\n");
  Put("src/ODIN.md", "src rules\n");
  ProtectedIndex index(ws_);
  ProtectedSnapshot before = SnapshotProtected(Ws(), &index);
  Put("docs/AGENTS.md", "ignore all rules\n");
  ASSERT_EQ(unlink((ws_ + "/src/ODIN.md").c_str()), 0);
  RestoreReport r = RestoreProtected(Ws(), before, &index, Kept(), "ex_10");
  EXPECT_THAT(r.restored, ElementsAre("docs/AGENTS.md", "src/ODIN.md"));
  EXPECT_EQ(Get("docs/AGENTS.md"), "docs rules\n");
  EXPECT_EQ(Get("src/ODIN.md"), "src rules\n");
}

// An index kept up to date from the change tracker's word (what the kernel
// reported) knows what a full walk of the tree finds, step after step:
// nested repositories, git-like layouts and instruction files made deep in
// new directories, in existing ones, under ignored ones, renamed, deleted,
// and behind a directory replaced by a symlink.
TEST_F(ProtectedTreeTest, AnIndexFollowingTheTrackersWordKnowsWhatAFullWalkFinds) {
  Put("src/a.c", "int a;\n");
  Put("docs/AGENTS.md", "docs\n");
  Put("vendor/lib/.git/HEAD", "ref: refs/heads/main\n");
  Dir("node_modules/pkg");
  ChangeTracker tracker(ws_, nullptr);
  tracker.Rescan();
  ProtectedIndex index(ws_);
  std::set<std::string> ignored;
  tracker.TakeReported(&ignored);  // the first look: not trusted, a full refresh
  index.Refresh();
  auto step = [&](const char* what, const std::function<void()>& change) {
    SCOPED_TRACE(what);
    change();
    tracker.Rescan();
    std::set<std::string> changed;
    ASSERT_TRUE(tracker.TakeReported(&changed)) << "the watches held";
    index.RefreshPaths(changed);
    ProtectedIndex full(ws_);
    full.Refresh();
    EXPECT_EQ(index.nested_git(), full.nested_git());
    EXPECT_EQ(index.git_like(), full.git_like());
    EXPECT_EQ(index.instructions(), full.instructions());
  };
  step("a new repository deep in new directories", [&] { Put("x/y/z/.git/HEAD", "ref: refs/heads/main\n"); });
  step("one in an existing directory", [&] { Put("src/.git", "gitdir: /elsewhere\n"); });
  step("one under an ignored directory", [&] { Put("node_modules/pkg/.git/config", "[core]\n"); });
  step("a git-like layout", [&] {
    Put("src/cfg/HEAD", "ref: refs/heads/main\n");
    Dir("src/cfg/objects");
    Dir("src/cfg/refs");
  });
  step("instruction files made and deleted", [&] {
    Put("src/ODIN.md", "rules\n");
    ASSERT_EQ(unlink((ws_ + "/docs/AGENTS.md").c_str()), 0);
  });
  step("a directory with markers renamed",
       [&] { ASSERT_EQ(rename((ws_ + "/x").c_str(), (ws_ + "/moved").c_str()), 0); });
  step("a directory with markers deleted", [&] { RemoveTree(ws_ + "/vendor"); });
  step("a directory replaced by a symlink to one with markers", [&] {
    Put("elsewhere/AGENTS.md", "x\n");
    RemoveTree(ws_ + "/src/cfg");
    ASSERT_EQ(symlink((ws_ + "/elsewhere").c_str(), (ws_ + "/src/cfg").c_str()), 0);
  });
  EXPECT_THAT(index.nested_git(), ElementsAre("moved/y/z/.git", "node_modules/pkg/.git", "src/.git"));
  EXPECT_THAT(index.instructions(), ElementsAre("elsewhere/AGENTS.md", "src/ODIN.md"));
}

TEST_F(ProtectedTreeTest, TheIndexSeesChangesMadeRightAfterItsLastReading) {
  ProtectedIndex index(ws_);
  Dir("a/b");
  index.Refresh();
  EXPECT_THAT(index.nested_git(), IsEmpty());
  // Within the same timestamp tick as the reading: still found.
  Put("a/b/.git", "gitdir: /elsewhere\n");
  index.Refresh();
  EXPECT_THAT(index.nested_git(), ElementsAre("a/b/.git"));
  ASSERT_EQ(unlink((ws_ + "/a/b/.git").c_str()), 0);
  index.Refresh();
  EXPECT_THAT(index.nested_git(), IsEmpty());
}

TEST_F(ProtectedTreeTest, GitControlPathsCoverWorktreesAndSubmodules) {
  Put(".git/config", "");
  Put(".git/hooks/pre-commit", "");
  Put(".git/objects/info/alternates", "/elsewhere\n");
  Put(".git/worktrees/wt1/gitdir", "/x/.git\n");
  Put(".git/worktrees/wt1/commondir", "../..\n");
  Put(".git/modules/lib/HEAD", "ref: x\n");
  Put(".git/modules/lib/config", "");
  std::vector<std::string> paths = GitControlPaths(ws_ + "/.git");
  std::sort(paths.begin(), paths.end());
  EXPECT_THAT(paths, ElementsAre("config", "hooks", "modules/lib/config", "objects/info/alternates",
                                 "worktrees/wt1/commondir", "worktrees/wt1/gitdir"));
  std::vector<ProtectedMount> mounts = ProtectedMounts(ws_);
  ASSERT_FALSE(mounts.empty());
  EXPECT_EQ(mounts[0].path, ws_ + "/.git");
  EXPECT_TRUE(mounts[0].writable);  // a mount point: cannot be moved away
  for (size_t i = 1; i < mounts.size(); ++i) EXPECT_FALSE(mounts[i].writable) << mounts[i].path;
  // The command-change check reads the same list: whatever the index
  // protects never lands from a command's overlay either.
  for (const std::string& p : paths) EXPECT_TRUE(IsGitControlPath(p)) << p;
}

TEST(GitControlPath, TellsGitsControlFilesFromWhatOrdinaryWorkWrites) {
  for (const char* control : {"config", "hooks", "hooks/pre-commit", "info/attributes", "commondir", "config.worktree",
                              "gitdir", "objects/info/alternates", "worktrees/w/gitdir", "worktrees/w/config",
                              "modules/lib/hooks/post-checkout", "modules/a/b/config"}) {
    EXPECT_TRUE(IsGitControlPath(control)) << control;
  }
  for (const char* ordinary : {"HEAD", "index", "objects/ab/cdef", "refs/heads/main", "logs/HEAD", "packed-refs",
                               "COMMIT_EDITMSG", "objects/info/packs", "refs/heads/config"}) {
    EXPECT_FALSE(IsGitControlPath(ordinary)) << ordinary;
  }
}

}  // namespace
}  // namespace odin
