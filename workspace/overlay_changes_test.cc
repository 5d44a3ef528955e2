#include "workspace/overlay_changes.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include <gmock/gmock.h>
#include <functional>
#include <vector>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>

#include "base/file_util.h"
#include "base/sha256.h"
#include "base/subprocess.h"
#include "workspace/git_ignore.h"
#include "tests/test_util.h"

namespace odin {
namespace {

// Runs a shell script with the workspace seen through a real overlay (in a
// user and mount namespace of its own: the kernel writes the upper
// directory, whiteouts and opaque directories included), as a command in
// Odin's sandbox would. Tests that need one skip, saying why, where the
// kernel does not let an unprivileged overlay be mounted.
class OverlayChangesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = *MakeTempDir("odin-overlay-test");
    ws_ = root_ + "/ws";
    upper_ = root_ + "/upper";
    ASSERT_TRUE(MakeDirs(ws_).ok());
    ASSERT_TRUE(MakeDirs(upper_).ok());
    ASSERT_TRUE(MakeDirs(root_ + "/work").ok());
  }
  void TearDown() override { RemoveTree(root_); }

  // Makes the workspace a git repository: its .gitignore counts.
  bool GitInit() {
    SpawnOptions init;
    const char* path = getenv("PATH");
    init.argv = {SearchPath("git", path != nullptr ? path : "/usr/bin:/bin"), "init", "-q", ws_};
    StatusOr<CommandOutput> g = RunCommand(init);
    return g.ok() && g->exit_code == 0;
  }

  void Write(const std::string& path, const std::string& content) {
    ASSERT_TRUE(MakeDirs(DirName(path)).ok());
    std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
  }
  std::string Read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  // Runs script in ws_ over the overlay; the command's start time is taken
  // first. Sets *why and returns false where no overlay can be mounted.
  bool RunInOverlay(const std::string& script, std::string* why) {
    started_ = CoarseRealtimeNs();
    SpawnOptions o;
    const char* path = getenv("PATH");
    o.argv = {SearchPath("unshare", path != nullptr ? path : "/usr/bin:/bin"),
              "--user",
              "--map-current-user",
              "--mount",
              "sh",
              "-c",
              "mount -t overlay overlay -o lowerdir=\"$1\",upperdir=\"$2\",workdir=\"$3\",userxattr \"$1\" || exit 90\n"
              "cd \"$1\" && " +
                  script,
              "sh",
              ws_,
              upper_,
              root_ + "/work"};
    StatusOr<CommandOutput> out = RunCommand(o);
    if (!out.ok()) {
      *why = out.status().ToString();
      return false;
    }
    if (out->exit_code == 90 || (out->exit_code != 0 && out->output.find("unshare") != std::string::npos)) {
      *why = "no unprivileged overlay here: " + out->output;
      return false;
    }
    EXPECT_EQ(out->exit_code, 0) << out->output;
    return true;
  }

  OverlayApplied Apply(std::function<bool(const std::string&)> must_not_land = nullptr, GitIgnore* ignore = nullptr,
                       std::function<bool(const std::string&)> changed_meanwhile = nullptr) {
    OverlayApplyOptions o;
    // As the coordinator does: its record of what changed meanwhile (here
    // nothing, unless a test says so), not the ctime fallback.
    if (!changed_meanwhile && !ctime_rule_) changed_meanwhile = [](const std::string&) { return false; };
    o.changed_meanwhile = std::move(changed_meanwhile);
    o.gone_meanwhile = gone_meanwhile_;
    o.started_ns = started_;
    o.ctime_too = ctime_too_;
    o.must_not_land = std::move(must_not_land);
    o.ignore = ignore;
    o.conflicts_dir = root_ + "/conflicts";
    o.known_sha256 = known_sha256_;
    o.image_cap_bytes = image_cap_;
    return ApplyOverlayUpper(ws_, upper_, o);
  }

  static const PathChange* Find(const OverlayApplied& a, const std::string& path, ChangeKind kind) {
    for (const PathChange& c : a.changes.changes) {
      if (c.path == path && c.kind == kind) return &c;
    }
    return nullptr;
  }

  std::string root_, ws_, upper_;
  int64_t started_ = 0;
  std::function<std::string(const std::string&, const struct stat&)> known_sha256_;
  int64_t image_cap_ = 1 << 20;
  bool ctime_rule_ = false;
  bool ctime_too_ = false;                                  // the ctime rule beside the record
  std::function<bool(const std::string&)> gone_meanwhile_;  // null: nothing deleted meanwhile
};

#define OVERLAY_OR_SKIP(script)                  \
  do {                                           \
    std::string why;                             \
    if (!RunInOverlay(script, &why)) {           \
      if (::testing::Test::HasFailure()) return; \
      GTEST_SKIP() << why;                       \
    }                                            \
  } while (0)

TEST_F(OverlayChangesTest, ACommandsWritesLandWithTheirBeforeImages) {
  Write(ws_ + "/a.txt", "a\n");
  Write(ws_ + "/del.txt", "d\n");
  Write(ws_ + "/keep.txt", "k\n");
  Write(ws_ + "/sub/b.txt", "b\n");
  OVERLAY_OR_SKIP(
      "echo A >> a.txt && rm del.txt && echo n > new.txt && mkdir -p d/e && echo x > d/e/f.txt && "
      "rm -r sub && mkdir sub && echo c > sub/c.txt && touch keep.txt && ln -s a.txt link && chmod 0755 new.txt");
  // Nothing has reached the workspace yet.
  EXPECT_EQ(Read(ws_ + "/a.txt"), "a\n");
  EXPECT_TRUE(PathExists(ws_ + "/del.txt"));

  OverlayApplied a = Apply();
  EXPECT_TRUE(a.conflicts.empty());
  EXPECT_TRUE(a.discarded.empty());
  EXPECT_TRUE(a.failed.empty()) << a.failed[0];

  const PathChange* m = Find(a, "a.txt", ChangeKind::kModified);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->before->sha256, Sha256Hex("a\n"));
  EXPECT_EQ(*m->before_content, "a\n");  // the workspace held the before-image
  EXPECT_EQ(m->after->sha256, Sha256Hex("a\nA\n"));
  const PathChange* del = Find(a, "del.txt", ChangeKind::kDeleted);
  ASSERT_NE(del, nullptr);
  EXPECT_EQ(*del->before_content, "d\n");
  const PathChange* made = Find(a, "new.txt", ChangeKind::kCreated);
  ASSERT_NE(made, nullptr);
  EXPECT_EQ(made->after->mode, 0755u);
  EXPECT_NE(Find(a, "d", ChangeKind::kCreated), nullptr);
  EXPECT_NE(Find(a, "d/e", ChangeKind::kCreated), nullptr);
  EXPECT_NE(Find(a, "d/e/f.txt", ChangeKind::kCreated), nullptr);
  // rm -r then mkdir: an opaque directory; what it no longer holds is gone.
  EXPECT_NE(Find(a, "sub/b.txt", ChangeKind::kDeleted), nullptr);
  EXPECT_NE(Find(a, "sub/c.txt", ChangeKind::kCreated), nullptr);
  const PathChange* link = Find(a, "link", ChangeKind::kCreated);
  ASSERT_NE(link, nullptr);
  EXPECT_EQ(link->after->link_target, "a.txt");
  // touch: times, not bytes: no change.
  for (const PathChange& c : a.changes.changes) EXPECT_NE(c.path, "keep.txt");

  EXPECT_EQ(Read(ws_ + "/a.txt"), "a\nA\n");
  EXPECT_FALSE(PathExists(ws_ + "/del.txt"));
  EXPECT_FALSE(PathExists(ws_ + "/sub/b.txt"));
  EXPECT_EQ(Read(ws_ + "/sub/c.txt"), "c\n");
  EXPECT_EQ(Read(ws_ + "/d/e/f.txt"), "x\n");
  EXPECT_EQ(Read(ws_ + "/keep.txt"), "k\n");
  // Sorted by path.
  for (size_t i = 1; i < a.changes.changes.size(); ++i) {
    EXPECT_LE(a.changes.changes[i - 1].path, a.changes.changes[i].path);
  }
}

// The attack pass: "mkfifo .gitignore" landed, and libgit2's open of it on
// the host blocked the coordinator for good. Nothing special lands; nor does
// a symlink inside a .git (libgit2 reads the index and objects on the
// host).
// A file too big for a before-image whose hash the tracker already knows
// (stat unchanged since) is not read again: a 100 MB rewrite costs one hash,
// not two. Where the hash is not known, the file is read.
TEST_F(OverlayChangesTest, ABigFilesKnownHashBeforeIsNotReadAgain) {
  Write(ws_ + "/big.bin", std::string(64, 'a'));
  Write(ws_ + "/other.bin", std::string(64, 'o'));
  image_cap_ = 16;
  std::vector<std::string> asked;
  known_sha256_ = [&](const std::string& rel, const struct stat& st) -> std::string {
    asked.push_back(rel);
    EXPECT_EQ(st.st_size, 64);
    return rel == "big.bin" ? "known-hash-of-big" : "";
  };
  OVERLAY_OR_SKIP("printf b > big.bin && printf p > other.bin");
  OverlayApplied a = Apply();
  EXPECT_EQ(asked, std::vector<std::string>({"big.bin", "other.bin"}));
  const PathChange* big = Find(a, "big.bin", ChangeKind::kModified);
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(big->before->sha256, "known-hash-of-big");  // taken, not read
  EXPECT_FALSE(big->before_content.has_value());
  EXPECT_EQ(big->after->sha256, Sha256Hex("b"));
  const PathChange* other = Find(a, "other.bin", ChangeKind::kModified);
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(other->before->sha256, Sha256Hex(std::string(64, 'o')));  // not known: read
}

TEST_F(OverlayChangesTest, FifosDevicesAndSymlinksInsideAGitDirectoryNeverLand) {
  std::string why;
  if (!RunInOverlay("mkdir -p .git/objects/ab newdir && mkfifo .gitignore newdir/pipe && "
                    "ln -s /dev/zero .git/objects/ab/cdef && echo ok > newdir/f",
                    &why)) {
    GTEST_SKIP() << why;
  }
  OverlayApplied a = Apply();
  struct stat st;
  EXPECT_NE(lstat((ws_ + "/.gitignore").c_str(), &st), 0) << "a FIFO landed";
  EXPECT_NE(lstat((ws_ + "/newdir/pipe").c_str(), &st), 0) << "a FIFO in a new directory landed";
  EXPECT_NE(lstat((ws_ + "/.git/objects/ab/cdef").c_str(), &st), 0) << "a symlink inside .git landed";
  EXPECT_EQ(*ReadFileToString(ws_ + "/newdir/f"), "ok\n");
  EXPECT_THAT(a.discarded, ::testing::IsSupersetOf({".gitignore", "newdir/pipe", ".git/objects/ab/cdef"}));
}

TEST_F(OverlayChangesTest, WhatChangedMeanwhileIsAConflictAndNothingIsLost) {
  Write(ws_ + "/a.txt", "a\n");
  Write(ws_ + "/b.txt", "b\n");
  Write(ws_ + "/c.txt", "c\n");
  OVERLAY_OR_SKIP("echo mine > a.txt && rm b.txt && echo mine > c.txt");
  // Another writer, while the command ran (the coordinator hears of it from
  // the kernel).
  Write(ws_ + "/a.txt", "theirs\n");
  Write(ws_ + "/b.txt", "theirs\n");
  std::set<std::string> meanwhile = {"a.txt", "b.txt"};

  OverlayApplied a = Apply(nullptr, nullptr, [&meanwhile](const std::string& rel) { return meanwhile.count(rel) > 0; });
  EXPECT_EQ(a.conflicts, (std::vector<std::string>{"a.txt", "b.txt"}));
  EXPECT_EQ(Read(ws_ + "/a.txt"), "theirs\n");
  EXPECT_EQ(Read(ws_ + "/b.txt"), "theirs\n");
  // The command's version is kept aside.
  EXPECT_EQ(Read(root_ + "/conflicts/a.txt"), "mine\n");
  // What nobody else touched lands.
  EXPECT_EQ(Read(ws_ + "/c.txt"), "mine\n");
  ASSERT_EQ(a.changes.changes.size(), 1u);
  EXPECT_EQ(a.changes.changes[0].path, "c.txt");
}

// A path another command deleted while this one ran, which this one
// changed: its version is a conflict, not the file brought back.
TEST_F(OverlayChangesTest, APathDeletedMeanwhileIsAConflictNotBroughtBack) {
  Write(ws_ + "/d.txt", "d\n");
  OVERLAY_OR_SKIP("echo mine >> d.txt && echo new > n.txt");
  ASSERT_EQ(unlink((ws_ + "/d.txt").c_str()), 0);  // the other command's deletion landed
  gone_meanwhile_ = [](const std::string& rel) { return rel == "d.txt"; };
  OverlayApplied a = Apply();
  EXPECT_EQ(a.conflicts, (std::vector<std::string>{"d.txt"}));
  EXPECT_FALSE(PathExists(ws_ + "/d.txt"));
  EXPECT_EQ(Read(root_ + "/conflicts/d.txt"), "d\nmine\n");
  // A path nobody had is a creation, as ever.
  EXPECT_EQ(Read(ws_ + "/n.txt"), "new\n");
  ASSERT_EQ(a.changes.changes.size(), 1u);
  EXPECT_EQ(a.changes.changes[0].path, "n.txt");
}

// A git operation lands whole or not at all: the index changed meanwhile
// (another command's commit landed first), so neither this command's index
// nor its ref lands; its objects, which only add, do.
TEST_F(OverlayChangesTest, AGitOperationPartlyChangedMeanwhileLandsOnlyItsObjects) {
  Write(ws_ + "/sub/.git/HEAD", "ref: refs/heads/main\n");
  Write(ws_ + "/sub/.git/index", "old\n");
  Write(ws_ + "/sub/.git/refs/heads/main", "a\n");
  OVERLAY_OR_SKIP(
      "echo new > sub/.git/index && echo b > sub/.git/refs/heads/main && mkdir -p sub/.git/objects/ab && "
      "echo o > sub/.git/objects/ab/cd");
  OverlayApplied a = Apply(nullptr, nullptr, [](const std::string& rel) { return rel == "sub/.git/index"; });
  std::set<std::string> conflicts(a.conflicts.begin(), a.conflicts.end());
  EXPECT_EQ(conflicts, (std::set<std::string>{"sub/.git/index", "sub/.git/refs"}));
  EXPECT_EQ(Read(ws_ + "/sub/.git/index"), "old\n");
  EXPECT_EQ(Read(ws_ + "/sub/.git/refs/heads/main"), "a\n");
  EXPECT_EQ(Read(ws_ + "/sub/.git/objects/ab/cd"), "o\n");
  EXPECT_EQ(Read(root_ + "/conflicts/sub/.git/refs/heads/main"), "b\n");
  // Nothing changed meanwhile: all of it lands.
}

// A directory's mode another command changed while this one ran is not put
// back by this one's copy of the directory (made as it wrote in it).
TEST_F(OverlayChangesTest, ADirectorysModeChangedMeanwhileIsNotPutBack) {
  Write(ws_ + "/d/keep", "k\n");
  ASSERT_EQ(chmod((ws_ + "/d").c_str(), 0755), 0);
  OVERLAY_OR_SKIP("echo x > d/x");
  ASSERT_EQ(chmod((ws_ + "/d").c_str(), 0700), 0);  // the other command's, landed
  OverlayApplied a = Apply(nullptr, nullptr, [](const std::string& rel) { return rel == "d"; });
  struct stat st;
  ASSERT_EQ(stat((ws_ + "/d").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  EXPECT_EQ(a.conflicts, (std::vector<std::string>{"d"}));
  EXPECT_EQ(Read(ws_ + "/d/x"), "x\n");  // what it wrote in it still lands
}

// A file written back with the same bytes (a formatter that changed
// nothing) lands as a new inode, no change, and is listed as such, so the
// coordinator does not take it for a change from outside.
TEST_F(OverlayChangesTest, AFileWrittenBackUnchangedIsListedApart) {
  Write(ws_ + "/f.py", "x = 1\n");
  OVERLAY_OR_SKIP("cp f.py f.tmp && mv f.tmp f.py");
  OverlayApplied a = Apply();
  EXPECT_TRUE(a.changes.changes.empty());
  EXPECT_EQ(a.unchanged, (std::vector<std::string>{"f.py"}));
}

// What is counted rather than recorded (.git entries, ignored paths) is
// listed for the coordinator's numbering: each path applied on its own,
// and a tree that landed whole by its root only.
TEST_F(OverlayChangesTest, WhatIsCountedIsListedForTheCommandsBesideIt) {
  Write(ws_ + "/.gitignore", "build/\nnode_modules/\n");
  Write(ws_ + "/build/x.o", "0\n");
  Write(ws_ + "/sub/.git/HEAD", "ref: refs/heads/main\n");
  if (!GitInit()) GTEST_SKIP() << "git init failed";
  OVERLAY_OR_SKIP(
      "echo 1 > build/x.o && mkdir -p node_modules/p && echo > node_modules/p/a.js && echo f > sub/.git/FETCH_HEAD");
  std::unique_ptr<GitIgnore> ignore = GitIgnore::Open(ws_);
  OverlayApplied a = Apply(nullptr, ignore.get());
  std::set<std::string> paths(a.counted_paths.begin(), a.counted_paths.end());
  EXPECT_EQ(paths, (std::set<std::string>{"build/x.o", "sub/.git/FETCH_HEAD"}));
  EXPECT_EQ(a.counted_trees, (std::vector<std::string>{"node_modules"}));
  EXPECT_TRUE(a.changes.changes.empty());
}

TEST_F(OverlayChangesTest, WithoutTheCoordinatorsRecordAChangedCtimeIsAConflict) {
  Write(ws_ + "/a.txt", "a\n");
  OVERLAY_OR_SKIP("echo mine > a.txt");
  ctime_rule_ = true;
  started_ = 0;  // every ctime is after it
  OverlayApplied a = Apply();
  EXPECT_EQ(a.conflicts, (std::vector<std::string>{"a.txt"}));
  EXPECT_EQ(Read(ws_ + "/a.txt"), "a\n");
  started_ = CoarseRealtimeNs() + 1'000'000'000;  // none is
  ASSERT_TRUE(MakeDirs(upper_).ok());
  Write(upper_ + "/a.txt", "mine\n");
  a = Apply();
  EXPECT_TRUE(a.conflicts.empty());
  EXPECT_EQ(Read(ws_ + "/a.txt"), "mine\n");
}

TEST_F(OverlayChangesTest, ProtectedPathsNeverLand) {
  Write(ws_ + "/docs/AGENTS.md", "be nice\n");
  Write(ws_ + "/docs/guide.txt", "g\n");
  Write(ws_ + "/.git/HEAD", "ref: refs/heads/main\n");
  Write(ws_ + "/.git/config", "[core]\n");
  Write(ws_ + "/src.c", "int a;\n");
  OVERLAY_OR_SKIP(
      "mkdir -p sub && echo evil > sub/AGENTS.md && echo '{}' > odinconfig.json && rm -rf docs && "
      "echo '[core] fsmonitor=evil' > .git/config && mkdir -p .git/objects/ab && echo o > .git/objects/ab/cd && "
      "echo 'int b;' > src.c");
  auto must_not_land = [](const std::string& rel) {
    return (rel.size() >= 9 && rel.compare(rel.size() - 9, 9, "AGENTS.md") == 0) || rel == "odinconfig.json" ||
           rel == ".git" || rel == ".git/config";
  };
  OverlayApplied a = Apply(must_not_land);
  std::vector<std::string> discarded = a.discarded;
  std::sort(discarded.begin(), discarded.end());
  EXPECT_EQ(discarded, (std::vector<std::string>{".git/config", "docs", "odinconfig.json", "sub/AGENTS.md"}));
  EXPECT_FALSE(PathExists(ws_ + "/sub/AGENTS.md"));
  EXPECT_FALSE(PathExists(ws_ + "/odinconfig.json"));
  // Deleting docs/ would take a protected file with it: none of it goes.
  EXPECT_EQ(Read(ws_ + "/docs/AGENTS.md"), "be nice\n");
  EXPECT_EQ(Read(ws_ + "/.git/config"), "[core]\n");
  // git's own work lands, and is not a mutation.
  EXPECT_EQ(Read(ws_ + "/.git/objects/ab/cd"), "o\n");
  EXPECT_GE(a.git_entries, 1);
  for (const PathChange& c : a.changes.changes) EXPECT_EQ(c.path.rfind(".git", 0), std::string::npos) << c.path;
  EXPECT_EQ(Read(ws_ + "/src.c"), "int b;\n");
  EXPECT_NE(Find(a, "src.c", ChangeKind::kModified), nullptr);
}

TEST_F(OverlayChangesTest, AGitDirectoryReplacedByAFileNeverLands) {
  Write(ws_ + "/.git/HEAD", "ref: refs/heads/main\n");
  OVERLAY_OR_SKIP("rm -rf .git && echo 'gitdir: /elsewhere' > .git");
  OverlayApplied a = Apply([](const std::string& rel) { return rel == ".git"; });
  EXPECT_EQ(a.discarded, (std::vector<std::string>{".git"}));
  EXPECT_EQ(Read(ws_ + "/.git/HEAD"), "ref: refs/heads/main\n");
}

TEST_F(OverlayChangesTest, TypeChangesAreADeletionAndACreation) {
  Write(ws_ + "/d/x.txt", "x\n");
  Write(ws_ + "/f", "f\n");
  OVERLAY_OR_SKIP("rm -r d && echo now-a-file > d && rm f && mkdir f && echo y > f/y.txt");
  OverlayApplied a = Apply();
  EXPECT_TRUE(a.failed.empty());
  EXPECT_NE(Find(a, "d/x.txt", ChangeKind::kDeleted), nullptr);
  EXPECT_NE(Find(a, "d", ChangeKind::kDeleted), nullptr);
  EXPECT_NE(Find(a, "d", ChangeKind::kCreated), nullptr);
  EXPECT_NE(Find(a, "f", ChangeKind::kDeleted), nullptr);
  EXPECT_NE(Find(a, "f/y.txt", ChangeKind::kCreated), nullptr);
  EXPECT_EQ(Read(ws_ + "/d"), "now-a-file\n");
  EXPECT_EQ(Read(ws_ + "/f/y.txt"), "y\n");
}

TEST_F(OverlayChangesTest, AnIgnoredDirectoryLandsWholeAndIsOnlyCounted) {
  Write(ws_ + "/.gitignore", "node_modules/\n");
  if (!GitInit()) GTEST_SKIP() << "git init failed";
  OVERLAY_OR_SKIP(
      "mkdir -p node_modules && for p in $(seq 1 20); do mkdir -p node_modules/p$p && for f in $(seq 1 25); do "
      ": > node_modules/p$p/f$f.js; done; done && echo 'x' > index.js");
  struct stat before;
  ASSERT_EQ(stat((upper_ + "/node_modules").c_str(), &before), 0);
  std::unique_ptr<GitIgnore> ignore = GitIgnore::Open(ws_);
  OverlayApplied a = Apply(nullptr, ignore.get());
  ASSERT_EQ(a.changes.ignored.count("node_modules"), 1u);
  EXPECT_EQ(a.changes.ignored.at("node_modules"), 1 + 20 + 20 * 25);
  ASSERT_EQ(a.changes.changes.size(), 1u);
  EXPECT_EQ(a.changes.changes[0].path, "index.js");
  // One rename, not 520 copies: the same directory inode.
  struct stat after;
  ASSERT_EQ(stat((ws_ + "/node_modules").c_str(), &after), 0);
  EXPECT_EQ(after.st_ino, before.st_ino);
  EXPECT_TRUE(PathExists(ws_ + "/node_modules/p20/f25.js"));
}

// A repository cloned under an ignored directory: its .git's entries are
// counted as such (not mutations), the rest as the ignored directory's.
TEST_F(OverlayChangesTest, ANestedGitInsideAnIgnoredTreeIsCountedApart) {
  Write(ws_ + "/.gitignore", "node_modules/\n");
  if (!GitInit()) GTEST_SKIP() << "git init failed";
  OVERLAY_OR_SKIP(
      "mkdir -p node_modules/dep/.git/refs && echo 'ref: refs/heads/main' > node_modules/dep/.git/HEAD && "
      "echo 1 > node_modules/dep/i.js");
  std::unique_ptr<GitIgnore> ignore = GitIgnore::Open(ws_);
  OverlayApplied a = Apply(nullptr, ignore.get());
  ASSERT_EQ(a.changes.ignored.count("node_modules"), 1u);
  EXPECT_EQ(a.changes.ignored.at("node_modules"), 3);  // node_modules, dep, i.js
  EXPECT_EQ(a.git_entries, 3);                         // .git, refs, HEAD
  EXPECT_TRUE(a.changes.changes.empty());
  EXPECT_EQ(Read(ws_ + "/node_modules/dep/i.js"), "1\n");
}

// Upper directories written by hand: what the kernel may leave that the
// tests above do not make it leave.
TEST_F(OverlayChangesTest, NothingIsFollowedThroughASymlinkInTheWorkspace) {
  std::string outside = root_ + "/outside";
  ASSERT_TRUE(MakeDirs(outside).ok());
  ASSERT_EQ(symlink(outside.c_str(), (ws_ + "/link").c_str()), 0);
  Write(upper_ + "/link/evil.txt", "evil\n");
  OverlayApplied a = Apply();
  EXPECT_FALSE(PathExists(outside + "/evil.txt"));
  EXPECT_TRUE(IsDirectory(ws_ + "/link"));
  EXPECT_EQ(Read(ws_ + "/link/evil.txt"), "evil\n");
  EXPECT_NE(Find(a, "link", ChangeKind::kDeleted), nullptr);
}

// The worker that made a command's directory (ROOT/ID, holding u) could
// replace ID with a link to anywhere its lander reads (a secret of the
// host's): neither ID nor u is followed, and nothing lands.
TEST_F(OverlayChangesTest, ACommandsDirectoryReplacedByASymlinkLandsNothing) {
  std::string secret = root_ + "/secret";
  Write(secret + "/u/key.pem", "private\n");
  ASSERT_TRUE(MakeDirs(root_ + "/overlay").ok());
  ASSERT_EQ(symlink(secret.c_str(), (root_ + "/overlay/ex_1").c_str()), 0);
  OverlayApplied a = ApplyOverlayUpper(ws_, root_ + "/overlay/ex_1/u", {});
  EXPECT_FALSE(PathExists(ws_ + "/key.pem"));
  EXPECT_TRUE(a.changes.empty());
  EXPECT_EQ(a.failed.size(), 1u);
  EXPECT_TRUE(UpperPaths(ws_, root_ + "/overlay/ex_1/u", nullptr).empty());
  EXPECT_EQ(Read(secret + "/u/key.pem"), "private\n");
}

TEST_F(OverlayChangesTest, AWhiteoutInANewDirectoryDoesNotLandAsADevice) {
  Write(upper_ + "/fresh/real.txt", "r\n");
  if (mknod((upper_ + "/fresh/ghost").c_str(), S_IFCHR | 0000, makedev(0, 0)) != 0) {
    GTEST_SKIP() << "cannot make a whiteout here: " << strerror(errno);
  }
  OverlayApplied a = Apply();
  EXPECT_TRUE(a.failed.empty());
  EXPECT_EQ(Read(ws_ + "/fresh/real.txt"), "r\n");
  EXPECT_FALSE(PathExists(ws_ + "/fresh/ghost"));
  EXPECT_NE(Find(a, "fresh/real.txt", ChangeKind::kCreated), nullptr);
}

// An empty file carrying overlay.whiteout in the upper directory is no
// whiteout: the kernel honours that kind in lower layers only, so the
// command saw an empty file, and an empty file lands (new or replacing).
TEST_F(OverlayChangesTest, AnEmptyFileWithAWhiteoutXattrIsAnEmptyFile) {
  Write(ws_ + "/old.txt", "old\n");
  Write(upper_ + "/fresh/empty.txt", "");
  Write(upper_ + "/old.txt", "");
  for (const std::string& f : {upper_ + "/fresh/empty.txt", upper_ + "/old.txt"}) {
    if (setxattr(f.c_str(), "user.overlay.whiteout", "y", 1, 0) != 0) {
      GTEST_SKIP() << "no user xattrs here: " << strerror(errno);
    }
  }
  OverlayApplied a = Apply();
  EXPECT_TRUE(a.failed.empty());
  EXPECT_EQ(Read(ws_ + "/fresh/empty.txt"), "");
  EXPECT_EQ(Read(ws_ + "/old.txt"), "");
  EXPECT_NE(Find(a, "fresh/empty.txt", ChangeKind::kCreated), nullptr);
  EXPECT_NE(Find(a, "old.txt", ChangeKind::kModified), nullptr);
}

TEST_F(OverlayChangesTest, NoSetIdProgramLands) {
  Write(upper_ + "/tool", "#!/bin/sh\n");
  Write(upper_ + "/bin/helper", "#!/bin/sh\n");
  ASSERT_EQ(chmod((upper_ + "/tool").c_str(), 04755), 0);
  ASSERT_EQ(chmod((upper_ + "/bin/helper").c_str(), 02755), 0);
  OverlayApplied a = Apply();
  EXPECT_TRUE(a.failed.empty());
  for (const char* rel : {"/tool", "/bin/helper"}) {
    struct stat st;
    ASSERT_EQ(stat((ws_ + rel).c_str(), &st), 0) << rel;
    EXPECT_EQ(st.st_mode & 07777, 0755u) << rel;
  }
}

TEST_F(OverlayChangesTest, ATreeNestedWithoutEndIsNotWalkedToTheBottom) {
  // Deeper than any real tree, and deeper than a path may be: made level by
  // level, as a command can.
  ASSERT_TRUE(testing::MakeNestedDirs(upper_, "d", 1500)) << strerror(errno);
  OverlayApplied a = Apply();  // returns, without a crash
  ASSERT_FALSE(a.failed.empty());
  EXPECT_NE(a.failed[0].find("nested too deep"), std::string::npos) << a.failed[0];
}

TEST_F(OverlayChangesTest, OdinsStateNeverLands) {
  Write(ws_ + "/.odin/odin.db", "ledger\n");
  Write(upper_ + "/.odin/odin.db", "forged\n");
  OverlayApplied a = Apply();
  EXPECT_EQ(Read(ws_ + "/.odin/odin.db"), "ledger\n");
  EXPECT_TRUE(a.changes.empty());
}

// The paths a look before landing needs: what the upper directory
// changes, down to where the workspace has the directory; a new tree is
// named by its root only, and .git is named, not entered.
TEST_F(OverlayChangesTest, UpperPathsNameWhatLandsDownToWhereTheWorkspaceHasIt) {
  Write(ws_ + "/a.txt", "a\n");
  Write(ws_ + "/sub/b.txt", "b\n");
  Write(ws_ + "/gone.txt", "g\n");
  Write(ws_ + "/.gitignore", "node_modules/\n");
  Write(ws_ + "/node_modules/p/i.js", "i\n");
  if (!GitInit()) GTEST_SKIP() << "git init failed";
  OVERLAY_OR_SKIP(
      "echo A >> a.txt && echo c > sub/c.txt && rm gone.txt && mkdir -p new/deep && touch new/deep/x new/y && "
      "touch .git/z node_modules/p/j.js");
  std::unique_ptr<GitIgnore> ignore = GitIgnore::Open(ws_);
  std::vector<std::string> paths = UpperPaths(ws_, upper_, ignore.get());
  std::sort(paths.begin(), paths.end());
  EXPECT_EQ(paths, std::vector<std::string>({".git", "a.txt", "gone.txt", "new", "node_modules", "sub", "sub/c.txt"}));
  // And the ctime rule beside the coordinator's record: a file changed
  // after the command started is a conflict though the record says nothing.
  // (The start taken anew once the file clock is past what was written
  // before, which multigrain timestamps may put ahead of the coarse clock.)
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const int64_t start = CoarseRealtimeNs();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  Write(ws_ + "/a.txt", "theirs\n");
  started_ = start;
  ctime_too_ = true;
  OverlayApplied applied = Apply();
  EXPECT_EQ(applied.conflicts, std::vector<std::string>({"a.txt"}));
  EXPECT_EQ(Read(ws_ + "/a.txt"), "theirs\n");
  EXPECT_EQ(Read(ws_ + "/sub/c.txt"), "c\n");
}

}  // namespace
}  // namespace odin
