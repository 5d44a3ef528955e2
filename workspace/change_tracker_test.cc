#include "workspace/change_tracker.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>

#include "base/file_util.h"
#include "base/sha256.h"
#include "base/secrets.h"
#include "base/subprocess.h"
#include "workspace/git_ignore.h"
#include "tests/test_util.h"

namespace odin {
namespace {

class ChangeTrackerTest : public ::testing::Test {
 protected:
  void SetUp() override { root_ = *MakeTempDir("odin-tracker-test"); }
  void TearDown() override { RemoveTree(root_); }

  void Write(const std::string& rel, const std::string& content) {
    std::ofstream(root_ + "/" + rel, std::ios::binary | std::ios::trunc) << content;
  }
  // A change whose metadata the first look cannot tell from the earlier
  // one: same size, and a clock that may not have moved.
  void Rewrite(const std::string& rel, const std::string& content) {
    Write(rel, content);
    struct timespec later[2] = {{0, UTIME_OMIT}, {2000000000, 0}};
    utimensat(AT_FDCWD, (root_ + "/" + rel).c_str(), later, AT_SYMLINK_NOFOLLOW);
  }
  const PathChange* Find(const ChangeSet& cs, const std::string& path) {
    for (const PathChange& c : cs.changes) {
      if (c.path == path) return &c;
    }
    return nullptr;
  }

  std::string root_;
};

TEST_F(ChangeTrackerTest, FirstLookIsTheReferenceThenCreatedModifiedDeleted) {
  Write("a.c", "int a;\n");
  Write("gone.c", "int g;\n");
  ChangeTracker t(root_, nullptr);
  EXPECT_TRUE(t.Rescan().empty());

  Write("new.c", "int n;\n");
  Rewrite("a.c", "int b;\n");
  unlink((root_ + "/gone.c").c_str());
  ChangeSet cs = t.Rescan();
  ASSERT_EQ(cs.changes.size(), 3u);
  EXPECT_EQ(cs.changes[0].path, "a.c");  // sorted by path
  EXPECT_EQ(cs.changes[0].kind, ChangeKind::kModified);
  EXPECT_EQ(cs.changes[0].after->sha256, Sha256Hex("int b;\n"));
  EXPECT_TRUE(cs.changes[0].before->sha256.empty());  // never read: not known
  EXPECT_FALSE(cs.changes[0].before_content.has_value());
  EXPECT_EQ(cs.changes[1].path, "gone.c");
  EXPECT_EQ(cs.changes[1].kind, ChangeKind::kDeleted);
  EXPECT_FALSE(cs.changes[1].after.has_value());
  EXPECT_EQ(cs.changes[2].path, "new.c");
  EXPECT_EQ(cs.changes[2].kind, ChangeKind::kCreated);
  EXPECT_EQ(cs.changes[2].after->size, 7);
  EXPECT_EQ(cs.changes[2].after->type, EntryType::kFile);

  EXPECT_TRUE(t.Rescan().empty());  // the new reference
}

// A look no longer wanted (the session ends during its first look, taken
// on a thread of its own) stops at the next directory and says it is
// incomplete; nothing is taken for deleted.
TEST_F(ChangeTrackerTest, AStoppedLookEndsIncomplete) {
  Write("a.c", "int a;\n");
  ASSERT_TRUE(MakeDirs(root_ + "/d").ok());
  Write("d/b.c", "int b;\n");
  ChangeTracker t(root_, nullptr);
  t.Stop();
  ChangeSet cs = t.Rescan();
  EXPECT_TRUE(cs.truncated);
  EXPECT_EQ(t.entries(), 0u);
  unlink((root_ + "/a.c").c_str());
  cs = t.Rescan();
  EXPECT_TRUE(cs.truncated);
  EXPECT_TRUE(cs.changes.empty());
}

// The attack pass on the safe file layer: a directory a command swapped for
// a symlink to outside was looked through (hashed, kept as a before-image,
// and so written back by undo).
TEST_F(ChangeTrackerTest, NothingIsLookedAtThroughADirectorySwappedForASymlink) {
  std::string outside = *MakeTempDir("odin-tracker-outside");
  ASSERT_TRUE(WriteFileAtomic(outside + "/secret", "OUTSIDE-SECRET\n").ok());
  ASSERT_TRUE(MakeDirs(root_ + "/sub").ok());
  Write("sub/secret", "inside\n");
  ChangeTracker t(root_, nullptr);
  t.Rescan();
  RemoveTree(root_ + "/sub");
  ASSERT_EQ(symlink(outside.c_str(), (root_ + "/sub").c_str()), 0);
  ChangeSet swapped = t.Rescan();
  ASSERT_EQ(unlink((root_ + "/sub").c_str()), 0);
  ASSERT_TRUE(MakeDirs(root_ + "/sub").ok());
  Write("sub/secret", "x\n");
  ChangeSet after = t.Rescan();
  for (const ChangeSet* cs : {&swapped, &after}) {
    for (const PathChange& c : cs->changes) {
      for (const std::optional<EntryState>* s : {&c.before, &c.after}) {
        if (*s) {
          EXPECT_NE((*s)->sha256, Sha256Hex("OUTSIDE-SECRET\n")) << c.path;
        }
      }
      for (const std::optional<std::string>* content : {&c.before_content, &c.after_content}) {
        if (*content) {
          EXPECT_EQ((*content)->find("OUTSIDE-SECRET"), std::string::npos) << c.path;
        }
      }
    }
  }
  RemoveTree(outside);
}

TEST_F(ChangeTrackerTest, ASecondChangeHasTheBeforeImageOfTheFirst) {
  Write("a.c", "one\n");
  ChangeTracker t(root_, nullptr);
  t.Rescan();
  Rewrite("a.c", "two\n");
  t.Rescan();
  Write("a.c", "three\n");
  ChangeSet cs = t.Rescan();
  ASSERT_EQ(cs.changes.size(), 1u);
  EXPECT_EQ(cs.changes[0].before->sha256, Sha256Hex("two\n"));
  ASSERT_TRUE(cs.changes[0].before_content.has_value());
  EXPECT_EQ(*cs.changes[0].before_content, "two\n");
  unlink((root_ + "/a.c").c_str());
  cs = t.Rescan();
  ASSERT_EQ(cs.changes.size(), 1u);
  EXPECT_EQ(cs.changes[0].kind, ChangeKind::kDeleted);
  EXPECT_EQ(*cs.changes[0].before_content, "three\n");
}

TEST_F(ChangeTrackerTest, TouchingAKnownFileIsNotAChangeButChmodIs) {
  Write("a.sh", "echo hi\n");
  ChangeTracker t(root_, nullptr);
  t.Rescan();
  std::string content = "echo hi\n";
  t.NoteRead("a.sh", Sha256Hex(content), &content);
  Rewrite("a.sh", "echo hi\n");  // new mtime, same bytes
  EXPECT_TRUE(t.Rescan().empty());
  chmod((root_ + "/a.sh").c_str(), 0755);
  ChangeSet cs = t.Rescan();
  ASSERT_EQ(cs.changes.size(), 1u);
  EXPECT_NE(cs.changes[0].before->mode, 0755u);
  EXPECT_EQ(cs.changes[0].after->mode, 0755u);
}

TEST_F(ChangeTrackerTest, AWriteItWasToldOfIsNotSeenAgain) {
  Write("a.c", "old\n");
  ChangeTracker t(root_, nullptr);
  t.Rescan();
  std::string now = "new content\n";
  Write("a.c", now);
  t.NoteWrite("a.c", Sha256Hex(now), &now);
  EXPECT_TRUE(t.Rescan().empty());
  Write("a.c", "by a command\n");
  ChangeSet cs = t.Rescan();
  ASSERT_EQ(cs.changes.size(), 1u);
  EXPECT_EQ(cs.changes[0].before->sha256, Sha256Hex(now));
  EXPECT_EQ(*cs.changes[0].before_content, now);
}

// A writer's hash is paired with the file only while the file looks as the
// writer saw it: a write in the instant between the writer's and the
// tracker's look is someone else's, and comes back as a change from the
// writer's content.
TEST_F(ChangeTrackerTest, AWriteSinceTheWritersIsNotTakenForTheWriters) {
  Write("a.c", "old\n");
  Write("b.c", "old\n");
  ChangeTracker t(root_, nullptr);
  t.Rescan();
  auto seen = [&](const std::string& rel) {
    struct stat st;
    EXPECT_EQ(lstat((root_ + "/" + rel).c_str(), &st), 0);
    return ChangeTracker::Written{st.st_size, st.st_mtim.tv_sec * 1'000'000'000LL + st.st_mtim.tv_nsec,
                                  static_cast<uint64_t>(st.st_ino)};
  };
  std::string mine = "the writer's content\n";
  Write("a.c", mine);
  ChangeTracker::Written a = seen("a.c");
  Rewrite("a.c", "someone else's, at once\n");  // another size and mtime
  EXPECT_FALSE(t.NoteWrite("a.c", Sha256Hex(mine), &mine, a));
  Write("b.c", mine);
  EXPECT_TRUE(t.NoteWrite("b.c", Sha256Hex(mine), &mine, seen("b.c")));
  ChangeSet cs = t.Rescan();
  ASSERT_EQ(cs.changes.size(), 1u) << "b.c is as its writer saw it";
  EXPECT_EQ(cs.changes[0].path, "a.c");
  EXPECT_EQ(*cs.changes[0].before_content, mine);
  EXPECT_EQ(cs.changes[0].after->sha256, Sha256Hex("someone else's, at once\n"));

  // Removed since: a deletion, from the writer's content.
  Write("b.c", mine + mine);
  ChangeTracker::Written b = seen("b.c");
  ASSERT_EQ(unlink((root_ + "/b.c").c_str()), 0);
  std::string both = mine + mine;
  EXPECT_FALSE(t.NoteWrite("b.c", Sha256Hex(both), &both, b));
  cs = t.Rescan();
  ASSERT_EQ(cs.changes.size(), 1u);
  EXPECT_EQ(cs.changes[0].kind, ChangeKind::kDeleted);
  EXPECT_EQ(*cs.changes[0].before_content, both);
}
TEST_F(ChangeTrackerTest, SymlinksAreComparedByTargetAndNeverFollowed) {
  ASSERT_EQ(symlink("/etc/passwd", (root_ + "/l").c_str()), 0);
  ChangeTracker t(root_, nullptr);
  t.Rescan();
  unlink((root_ + "/l").c_str());
  ASSERT_EQ(symlink("/etc/hostname", (root_ + "/l").c_str()), 0);
  ChangeSet cs = t.Rescan();
  ASSERT_EQ(cs.changes.size(), 1u);
  EXPECT_EQ(cs.changes[0].kind, ChangeKind::kModified);
  EXPECT_EQ(cs.changes[0].after->type, EntryType::kSymlink);
  EXPECT_EQ(cs.changes[0].after->link_target, "/etc/hostname");
  EXPECT_TRUE(cs.changes[0].after->sha256.empty());  // not the target's bytes
}

TEST_F(ChangeTrackerTest, ADirectoryReplacedByAFileIsADeletionAndACreation) {
  ASSERT_EQ(mkdir((root_ + "/d").c_str(), 0755), 0);
  Write("d/x", "x\n");
  ChangeTracker t(root_, nullptr);
  t.Rescan();
  RemoveTree(root_ + "/d");
  Write("d", "now a file\n");
  ChangeSet cs = t.Rescan();
  ASSERT_EQ(cs.changes.size(), 3u);
  EXPECT_EQ(cs.changes[0].path, "d");
  EXPECT_EQ(cs.changes[0].kind, ChangeKind::kDeleted);
  EXPECT_EQ(cs.changes[0].before->type, EntryType::kDirectory);
  EXPECT_EQ(cs.changes[1].path, "d");
  EXPECT_EQ(cs.changes[1].kind, ChangeKind::kCreated);
  EXPECT_EQ(cs.changes[1].after->type, EntryType::kFile);
  EXPECT_EQ(cs.changes[2].path, "d/x");
  EXPECT_EQ(cs.changes[2].kind, ChangeKind::kDeleted);
}

TEST_F(ChangeTrackerTest, GitDirectoriesAndOdinStateAreNotContent) {
  ASSERT_EQ(mkdir((root_ + "/.git").c_str(), 0755), 0);
  ASSERT_EQ(mkdir((root_ + "/.odin").c_str(), 0755), 0);
  ASSERT_EQ(mkdir((root_ + "/sub").c_str(), 0755), 0);
  ASSERT_EQ(mkdir((root_ + "/sub/.git").c_str(), 0755), 0);
  ChangeTracker t(root_, nullptr);
  t.Rescan();
  Write(".git/index", "x");
  Write(".odin/odin.db", "x");
  Write("sub/.git/HEAD", "x");
  EXPECT_TRUE(t.Rescan().empty());
}

TEST_F(ChangeTrackerTest, IgnoredPathsAreCountedPerOutermostIgnoredDirectory) {
  StatusOr<CommandOutput> init = RunCommand({.argv = {"git", "init", "-q", root_}, .env = CurrentEnvironment()});
  ASSERT_TRUE(init.ok() && init->exit_code == 0) << (init.ok() ? init->output : init.status().message());
  Write(".gitignore", "node_modules/\n*.log\n");
  std::unique_ptr<GitIgnore> ignore = GitIgnore::Open(root_);
  if (!ignore->unavailable().empty()) GTEST_SKIP() << "git's ignore rules unavailable: " << ignore->unavailable();
  ChangeTracker t(root_, std::move(ignore));
  t.Rescan();
  ASSERT_EQ(mkdir((root_ + "/node_modules").c_str(), 0755), 0);
  ASSERT_EQ(mkdir((root_ + "/node_modules/pkg").c_str(), 0755), 0);
  Write("node_modules/pkg/index.js", "x");
  Write("build.log", "x");
  Write("main.c", "int main;\n");
  ChangeSet cs = t.Rescan();
  ASSERT_EQ(cs.changes.size(), 1u);
  EXPECT_EQ(cs.changes[0].path, "main.c");
  EXPECT_EQ(cs.ignored["node_modules"], 3);
  EXPECT_EQ(cs.ignored["build.log"], 1);
}

TEST_F(ChangeTrackerTest, OutsideARepositoryNothingIsIgnored) {
  std::unique_ptr<GitIgnore> ignore = GitIgnore::Open(root_);
  EXPECT_FALSE(ignore->unavailable().empty());
  EXPECT_EQ(ignore->IgnoredRoot("node_modules/x"), "");
}

TEST_F(ChangeTrackerTest, ALookCutShortReportsNoDeletions) {
  for (int i = 0; i < 10; ++i) Write("f" + std::to_string(i), "x");
  ChangeTrackerOptions o;
  o.max_entries = 5;
  ChangeTracker t(root_, nullptr, o);
  t.Rescan();
  ChangeSet cs = t.Rescan();
  EXPECT_TRUE(cs.truncated);
  for (const PathChange& c : cs.changes) EXPECT_NE(c.kind, ChangeKind::kDeleted) << c.path;
  // Not watched, and it says why.
  EXPECT_FALSE(t.watching());
  EXPECT_EQ(t.unwatched(), "the tree has more than 5 entries");
  // A look at named paths never takes an entry the cut-short look did not
  // reach for a new one; one it reached is looked at.
  std::vector<std::string> all;
  for (int i = 0; i < 10; ++i) all.push_back("f" + std::to_string(i));
  size_t known = t.entries();
  Rewrite("f0", "y");
  Rewrite("f9", "y");
  ChangeSet named = t.LookAtPaths(all);
  for (const PathChange& c : named.changes) EXPECT_NE(c.kind, ChangeKind::kCreated) << c.path;
  EXPECT_EQ(t.entries(), known);
}

// A look at a large tree takes seconds: it says how it goes, so that the
// coordinator's loop can keep its workers hearing from it meanwhile.
TEST_F(ChangeTrackerTest, ALongLookSaysHowItGoes) {
  for (int i = 0; i < 200; ++i) {
    ASSERT_TRUE(MakeDirs(root_ + "/d" + std::to_string(i)).ok());
    Write("d" + std::to_string(i) + "/f", "x");
  }
  ChangeTracker t(root_, nullptr);
  int told = 0;
  t.OnProgress([&] { ++told; });
  t.Rescan();
  EXPECT_EQ(told, 201 / 64);  // every 64 directories read (the root is one)
  EXPECT_EQ(t.entries(), 400u);
  EXPECT_TRUE(t.watching());
  EXPECT_EQ(t.unwatched(), "");
}

// What the tracker knows of a file's hash, it gives only while stat says
// what it said when it learnt it.
TEST_F(ChangeTrackerTest, AKnownHashHoldsOnlyWhileTheFileIsAsItWas) {
  Write("a.txt", "one");
  ChangeTracker t(root_, nullptr);
  t.Rescan();
  struct stat st;
  ASSERT_EQ(lstat((root_ + "/a.txt").c_str(), &st), 0);
  EXPECT_EQ(t.KnownSha256("a.txt", st), "") << "the first look reads no file";
  Write("a.txt", "two!");
  t.Rescan();  // a change: hashed
  ASSERT_EQ(lstat((root_ + "/a.txt").c_str(), &st), 0);
  EXPECT_EQ(t.KnownSha256("a.txt", st), Sha256Hex("two!"));
  struct stat moved = st;
  moved.st_mtim.tv_nsec += 1;
  EXPECT_EQ(t.KnownSha256("a.txt", moved), "");
  EXPECT_EQ(t.KnownSha256("missing.txt", st), "");
}

// A write the coordinator made in a directory new to the tracker: the write
// is not seen again, but whatever else is in that directory is (it was not
// read when the write was noted). And a write inside .git is nothing to it.
TEST_F(ChangeTrackerTest, ANewDirectoryAWriteMadeIsStillReadWhole) {
  ChangeTracker t(root_, nullptr);
  t.Rescan();
  ASSERT_TRUE(MakeDirs(root_ + "/gen").ok());
  Write("gen/other.txt", "made by someone else");
  Write("gen/x.txt", "written by a file tool");
  t.NoteWrite("gen/x.txt", Sha256Hex("written by a file tool"), nullptr);
  ASSERT_TRUE(MakeDirs(root_ + "/.git").ok());
  Write(".git/config", "[core]\n");
  t.NoteWrite(".git/config", Sha256Hex("[core]\n"), nullptr);
  ChangeSet cs = t.Rescan();
  std::vector<std::string> paths;
  for (const PathChange& c : cs.changes) paths.push_back(c.path + " " + ChangeKindName(c.kind));
  EXPECT_EQ(paths, std::vector<std::string>({"gen/other.txt created"}));
  EXPECT_TRUE(t.Rescan(/*full=*/true).empty()) << "nothing in .git, nothing seen twice";
}

TEST_F(ChangeTrackerTest, LargeFilesAreHashedButNotKept) {
  ChangeTrackerOptions o;
  o.image_cap_bytes = 16;
  Write("big", std::string(100, 'a'));
  ChangeTracker t(root_, nullptr, o);
  t.Rescan();
  Write("big", std::string(101, 'b'));
  ChangeSet cs = t.Rescan();
  ASSERT_EQ(cs.changes.size(), 1u);
  EXPECT_EQ(cs.changes[0].after->sha256, Sha256Hex(std::string(101, 'b')));
  Write("big", std::string(102, 'c'));
  cs = t.Rescan();
  ASSERT_EQ(cs.changes.size(), 1u);
  EXPECT_EQ(cs.changes[0].before->sha256, Sha256Hex(std::string(101, 'b')));
  EXPECT_FALSE(cs.changes[0].before_content.has_value());
}

TEST_F(ChangeTrackerTest, LaterLooksFollowTheKernelsWordOnlyAndMissNothing) {
  ASSERT_EQ(mkdir((root_ + "/a").c_str(), 0755), 0);
  ASSERT_EQ(mkdir((root_ + "/a/sub").c_str(), 0755), 0);
  Write("a/sub/x.c", "x\n");
  Write("top.c", "t\n");
  ChangeTracker t(root_, nullptr);
  t.Rescan();
  ASSERT_TRUE(t.watching());
  // A tree made at once, a file appended to in place, a directory moved.
  ASSERT_EQ(mkdir((root_ + "/n").c_str(), 0755), 0);
  ASSERT_EQ(mkdir((root_ + "/n/m").c_str(), 0755), 0);
  Write("n/m/deep.c", "d\n");
  std::ofstream(root_ + "/top.c", std::ios::app) << "more\n";
  ASSERT_EQ(rename((root_ + "/a").c_str(), (root_ + "/b").c_str()), 0);
  ChangeSet cs = t.Rescan();
  std::vector<std::string> seen;
  for (const PathChange& c : cs.changes) seen.push_back(std::string(ChangeKindName(c.kind)) + " " + c.path);
  EXPECT_EQ(seen, (std::vector<std::string>{"deleted a", "deleted a/sub", "deleted a/sub/x.c", "created b",
                                            "created b/sub", "created b/sub/x.c", "created n", "created n/m",
                                            "created n/m/deep.c", "modified top.c"}));
  // The moved directory is watched under its new name.
  Write("b/sub/x.c", "changed\n");
  cs = t.Rescan();
  ASSERT_EQ(cs.changes.size(), 1u);
  EXPECT_EQ(cs.changes[0].path, "b/sub/x.c");
  EXPECT_EQ(cs.changes[0].kind, ChangeKind::kModified);
  EXPECT_EQ(*cs.changes[0].before_content, "x\n");  // hashed and kept when it was created under b
}

TEST_F(ChangeTrackerTest, ASmallTreeIsNotWatchedWhenOnlyLargeOnesShouldBe) {
  for (int i = 0; i < 10; ++i) Write("f" + std::to_string(i), "x");
  ChangeTrackerOptions small;
  small.watch_from_entries = 100;
  ChangeTracker t(root_, nullptr, small);
  t.Rescan();
  EXPECT_FALSE(t.watching());
  Write("f0", "changed");
  EXPECT_EQ(t.Rescan().changes.size(), 1u);  // a full look finds it
  ChangeTrackerOptions large;
  large.watch_from_entries = 5;
  ChangeTracker u(root_, nullptr, large);
  u.Rescan();
  EXPECT_TRUE(u.watching());
  Write("f1", "changed too");
  ChangeSet cs = u.Rescan();
  ASSERT_EQ(cs.changes.size(), 1u);
  EXPECT_EQ(cs.changes[0].path, "f1");
}

}  // namespace
}  // namespace odin

namespace odin {
namespace {

// Files git committed: a change of one nobody read has its bytes before
// from git's index, when git's recorded stat vouches for them.
class ChangeTrackerGitTest : public ChangeTrackerTest {
 protected:
  void Git(std::vector<std::string> args) {
    std::vector<std::string> argv = {"git", "-C", root_, "-c", "user.name=t", "-c", "user.email=t@t"};
    argv.insert(argv.end(), args.begin(), args.end());
    StatusOr<CommandOutput> out = RunCommand({.argv = argv, .env = CurrentEnvironment()});
    ASSERT_TRUE(out.ok() && out->exit_code == 0) << (out.ok() ? out->output : out.status().message());
  }
};

TEST_F(ChangeTrackerGitTest, GitsIndexGivesBeforeImagesOfCommittedFiles) {
  Git({"init", "-q"});
  Write("committed.c", "int a;\n");
  Write("touched.c", "int t;\n");
  Write("dirty.c", "int d;\n");
  Write("gone.c", "int g;\n");
  Git({"add", "."});
  Git({"commit", "-q", "-m", "one"});
  // Older than the index (else racily clean, and git's stat would not vouch).
  struct timespec past[2] = {{time(nullptr) - 60, 0}, {time(nullptr) - 60, 0}};
  for (const char* f : {"committed.c", "touched.c", "dirty.c", "gone.c"}) {
    ASSERT_EQ(utimensat(AT_FDCWD, (root_ + "/" + f).c_str(), past, 0), 0);
  }
  Git({"update-index", "-q", "--refresh"});
  Rewrite("dirty.c", "int D;\n");  // changed since git recorded it: git cannot vouch
  ChangeTracker t(root_, GitIgnore::Open(root_));
  ASSERT_TRUE(t.Rescan().empty());
  Rewrite("committed.c", "int b;\n");
  Rewrite("touched.c", "int t;\n");  // the same bytes written again
  Rewrite("dirty.c", "int E;\n");
  ASSERT_EQ(unlink((root_ + "/gone.c").c_str()), 0);
  ChangeSet cs = t.Rescan();
  const PathChange* committed = Find(cs, "committed.c");
  ASSERT_NE(committed, nullptr);
  ASSERT_TRUE(committed->before_content.has_value());
  EXPECT_EQ(*committed->before_content, "int a;\n");
  EXPECT_EQ(committed->before->sha256, Sha256Hex("int a;\n"));
  EXPECT_EQ(Find(cs, "touched.c"), nullptr) << "rewritten with the same bytes: not a change";
  const PathChange* gone = Find(cs, "gone.c");
  ASSERT_NE(gone, nullptr);
  ASSERT_TRUE(gone->before_content.has_value());
  EXPECT_EQ(*gone->before_content, "int g;\n");
  const PathChange* dirty = Find(cs, "dirty.c");
  ASSERT_NE(dirty, nullptr);
  EXPECT_FALSE(dirty->before_content.has_value()) << "git's blob is not what the file held";
}

// A tree nested deeper than any real one (a command can make one level by
// level): the look stops there and says it is incomplete, rather than
// recursing until the stack runs out.
TEST_F(ChangeTrackerTest, ATreeNestedWithoutEndIsNotWalkedToTheBottom) {
  ChangeTracker t(root_, nullptr, {.watch_from_entries = 1u << 30});
  t.Rescan();
  ASSERT_TRUE(testing::MakeNestedDirs(root_, "d", 1500)) << strerror(errno);
  ChangeSet cs = t.Rescan();
  EXPECT_TRUE(cs.truncated);
  EXPECT_EQ(cs.changes.size(), 257u);  // the entries of the 256 levels it read
}

// A look at named paths only (the tree without watches, before a command
// lands): what changed there is found, and is the reference there from
// then; what changed elsewhere waits for the next whole look.
TEST_F(ChangeTrackerTest, ALookAtNamedPathsFindsWhatChangedThereOnly) {
  Write("a.c", "int a;\n");
  Write("b.c", "int b;\n");
  mkdir((root_ + "/d").c_str(), 0755);
  ChangeTracker t(root_, nullptr);
  EXPECT_TRUE(t.LookAtPaths({"a.c"}).empty());  // no reference yet: nothing
  t.Rescan();
  Rewrite("a.c", "int A;\n");
  Rewrite("b.c", "int B;\n");
  mkdir((root_ + "/d/new").c_str(), 0755);
  Write("d/new/x.c", "x\n");
  ChangeSet named = t.LookAtPaths({"a.c", "d", "d/new"});
  ASSERT_NE(Find(named, "a.c"), nullptr);
  EXPECT_EQ(Find(named, "a.c")->kind, ChangeKind::kModified);
  ASSERT_NE(Find(named, "d/new/x.c"), nullptr);  // a directory new here: looked at whole
  EXPECT_EQ(Find(named, "b.c"), nullptr);
  ChangeSet rest = t.Rescan();
  ASSERT_EQ(rest.changes.size(), 1u);
  EXPECT_EQ(rest.changes[0].path, "b.c");
}

}  // namespace
}  // namespace odin
