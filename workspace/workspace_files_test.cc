#include "workspace/workspace_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <map>
#include <random>

#include <gtest/gtest.h>

#include "base/file_util.h"
#include "base/sha256.h"

namespace odin {
namespace {

// Every test runs twice: with openat2, and resolving one component at a
// time as on kernels without it.
class WorkspaceFilesTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    WorkspaceFiles::SetNoOpenat2ForTesting(GetParam());
    StatusOr<std::string> top = MakeTempDir("odin-wsfiles");
    ASSERT_TRUE(top.ok());
    top_ = *top;
    ws_ = top_ + "/ws";
    out_ = top_ + "/outside";
    ASSERT_EQ(mkdir(ws_.c_str(), 0755), 0);
    ASSERT_EQ(mkdir(out_.c_str(), 0755), 0);
    ASSERT_TRUE(WriteFileAtomic(out_ + "/secret", "SECRET").ok());
    StatusOr<WorkspaceFiles> files = WorkspaceFiles::Open(ws_);
    ASSERT_TRUE(files.ok()) << files.status().ToString();
    files_.emplace(std::move(*files));
  }
  void TearDown() override {
    WorkspaceFiles::SetRaceHookForTesting(nullptr);
    WorkspaceFiles::SetNoOpenat2ForTesting(false);
    RemoveTree(top_);
  }
  void Put(const std::string& rel, const std::string& text) {
    ASSERT_TRUE(MakeDirs(DirName(ws_ + "/" + rel)).ok());
    ASSERT_TRUE(WriteFileAtomic(ws_ + "/" + rel, text).ok());
  }
  void Link(const std::string& target, const std::string& rel) {
    ASSERT_EQ(symlink(target.c_str(), (ws_ + "/" + rel).c_str()), 0) << rel;
  }
  const WorkspaceFiles& files() { return *files_; }

  std::string top_, ws_, out_;
  std::optional<WorkspaceFiles> files_;
};

TEST_P(WorkspaceFilesTest, ReadsARegularFileAndOneARelativeSymlinkInsideLeadsTo) {
  Put("docs/agents.md", "rules\n");
  Link("docs/agents.md", "AGENTS.md");
  ASSERT_EQ(mkdir((ws_ + "/sub").c_str(), 0755), 0);
  Link("../docs/agents.md", "sub/ODIN.md");
  EXPECT_EQ(*files().ReadFile("docs/agents.md", 100), "rules\n");
  EXPECT_EQ(*files().ReadFile("AGENTS.md", 100), "rules\n");
  EXPECT_EQ(*files().ReadFile(ws_ + "/sub/ODIN.md", 100), "rules\n");
  // A relative symlink to a directory on the way is followed too.
  Link("docs", "d");
  EXPECT_EQ(*files().ReadFile("d/agents.md", 100), "rules\n");
}

TEST_P(WorkspaceFilesTest, ReadsNothingASymlinkLeadsOutsideTo) {
  Link(out_ + "/secret", "abs");
  Link("../outside/secret", "rel");
  ASSERT_EQ(mkdir((ws_ + "/a").c_str(), 0755), 0);
  Link("../../outside/secret", "a/deep");
  Link("/proc/self/environ", "environ");
  Link(out_, "dir");
  for (const char* rel : {"abs", "rel", "a/deep", "environ", "dir/secret"}) {
    StatusOr<std::string> r = files().ReadFile(rel, 100);
    EXPECT_FALSE(r.ok()) << rel;
    EXPECT_EQ(r.status().code(), StatusCode::kPermissionDenied) << rel << ": " << r.status().ToString();
  }
}

TEST_P(WorkspaceFilesTest, RefusesDevicesFifosDirectoriesAndLargeFilesWithoutReadingThem) {
  ASSERT_EQ(mkfifo((ws_ + "/fifo").c_str(), 0644), 0);
  ASSERT_EQ(mkdir((ws_ + "/dir").c_str(), 0755), 0);
  Put("big", std::string(1000, 'x'));
  // Returns at once: a FIFO with no writer would block a plain open.
  StatusOr<std::string> fifo = files().ReadFile("fifo", 100);
  EXPECT_EQ(fifo.status().code(), StatusCode::kPermissionDenied) << fifo.status().ToString();
  EXPECT_NE(fifo.status().message().find("FIFO"), std::string::npos);
  EXPECT_FALSE(files().ReadFile("dir", 100).ok());
  StatusOr<std::string> big = files().ReadFile("big", 999);
  EXPECT_EQ(big.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(big.status().message().find("larger than 999 bytes"), std::string::npos);
  EXPECT_TRUE(files().ReadFile("big", 1000).ok());
  if (geteuid() == 0) {
    ASSERT_EQ(mknod((ws_ + "/zero").c_str(), S_IFCHR | 0666, makedev(1, 5)), 0);
    StatusOr<std::string> zero = files().ReadFile("zero", 100);
    EXPECT_EQ(zero.status().code(), StatusCode::kPermissionDenied);
    EXPECT_NE(zero.status().message().find("device"), std::string::npos);
  }
}

TEST_P(WorkspaceFilesTest, WritesNothingThroughASymlinkOnTheWay) {
  Link(out_, "sub");
  Status s = files().WriteFile("sub/AGENTS.md", "x");
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied) << s.ToString();
  EXPECT_NE(s.message().find("symlink"), std::string::npos);
  EXPECT_FALSE(PathExists(out_ + "/AGENTS.md"));
  EXPECT_FALSE(files().MakeDirs("sub/hooks").ok());
  EXPECT_FALSE(PathExists(out_ + "/hooks"));
  EXPECT_FALSE(files().Remove("sub/secret").ok());
  EXPECT_FALSE(files().Chmod("sub/secret", 0777).ok());
  EXPECT_FALSE(files().Symlink("x", "sub/link").ok());
  EXPECT_FALSE(files().RemoveTree("sub/secret").ok());
  EXPECT_EQ(*ReadFileToString(out_ + "/secret"), "SECRET");
  struct stat st;
  ASSERT_EQ(stat((out_ + "/secret").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_P(WorkspaceFilesTest, ReplacesASymlinkItselfNeverWhatItPointsTo) {
  Link(out_ + "/secret", "config");
  ASSERT_TRUE(files().WriteFile("config", "mine", 0640).ok());
  EXPECT_EQ(*ReadFileToString(out_ + "/secret"), "SECRET");
  EXPECT_EQ(*ReadFileToString(ws_ + "/config"), "mine");
  EXPECT_EQ(files().Look("config").type, FileEntry::Type::kFile);
  EXPECT_EQ(files().Look("config").mode & 07777, 0640u);
  Link(out_ + "/secret", "gone");
  ASSERT_TRUE(files().Remove("gone").ok());
  EXPECT_TRUE(PathExists(out_ + "/secret"));
  Link(out_, "tree");
  ASSERT_TRUE(files().RemoveTree("tree").ok());
  EXPECT_TRUE(PathExists(out_ + "/secret"));
  Link(out_ + "/secret", "mode");
  EXPECT_EQ(files().Chmod("mode", 0777).code(), StatusCode::kPermissionDenied);
}

TEST_P(WorkspaceFilesTest, RefusesToChmodAFileWithMoreThanOneLink) {
  ASSERT_EQ(link((out_ + "/secret").c_str(), (ws_ + "/hard").c_str()), 0);
  Status s = files().Chmod("hard", 0777);
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(s.message().find("more than one link"), std::string::npos);
  // A write replaces the name; the other link keeps its contents.
  ASSERT_TRUE(files().WriteFile("hard", "new").ok());
  EXPECT_EQ(*ReadFileToString(out_ + "/secret"), "SECRET");
}

// The attack pass: a mode a command gave a file (04755, recorded in the
// ledger) came back from undo as root's setuid binary.
TEST_P(WorkspaceFilesTest, NothingItWritesMakesOrChmodsIsSetuidOrSetgid) {
  ASSERT_TRUE(files().WriteFile("tool", "#!/bin/sh\n", 04755).ok());
  EXPECT_EQ(files().Look("tool").mode & 07777, 0755u);
  ASSERT_TRUE(files().MakeDirs("shared", 02775).ok());
  EXPECT_EQ(files().Look("shared").mode & 07000, 0u);
  ASSERT_TRUE(files().Chmod("tool", 06755).ok());
  EXPECT_EQ(files().Look("tool").mode & 07777, 0755u);
}

// Run as root on a workspace another user owns, what it makes there is that
// user's (kParents), as what it replaces keeps its owner.
TEST_P(WorkspaceFilesTest, AsRootWhatItMakesInAnotherUsersDirectoryIsTheirs) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give files away";
  ASSERT_EQ(mkdir((ws_ + "/theirs").c_str(), 0755), 0);
  ASSERT_EQ(chown((ws_ + "/theirs").c_str(), 65534, 65534), 0);
  StatusOr<WorkspaceFiles> theirs = WorkspaceFiles::Open(ws_, WorkspaceFiles::Ownership::kParents);
  ASSERT_TRUE(theirs.ok());
  ASSERT_TRUE(theirs->WriteFile("theirs/put-back", "x").ok());
  ASSERT_TRUE(theirs->MakeDirs("theirs/made/deeper").ok());
  ASSERT_TRUE(theirs->Symlink("put-back", "theirs/link").ok());
  for (const char* rel : {"theirs/put-back", "theirs/made", "theirs/made/deeper", "theirs/link"}) {
    EXPECT_EQ(theirs->Look(rel).uid, 65534u) << rel;
  }
  // Odin's own state (kOurs) stays root's.
  ASSERT_TRUE(files().WriteFile("theirs/ours", "x").ok());
  EXPECT_EQ(files().Look("theirs/ours").uid, 0u);
}

TEST_P(WorkspaceFilesTest, MakesDirectoriesRemovesTreesRenamesAndMoves) {
  ASSERT_TRUE(files().MakeDirs("a/b/c", 0750).ok());
  EXPECT_TRUE(files().Look("a/b/c").is_dir());
  EXPECT_EQ(files().Look("a/b/c").mode & 0777, 0750u);
  ASSERT_TRUE(files().WriteFile("a/b/c/f", "1").ok());
  ASSERT_TRUE(files().Symlink("../../b", "a/b/c/l").ok());
  EXPECT_EQ(*files().ReadLink("a/b/c/l"), "../../b");
  ASSERT_TRUE(files().Rename("a/b/c/f", "a/f").ok());
  EXPECT_EQ(files().Rename("a/b", "a/f", /*no_replace=*/true).code(), StatusCode::kAlreadyExists);
  StatusOr<std::vector<std::string>> names = files().List("a");
  ASSERT_TRUE(names.ok());
  std::sort(names->begin(), names->end());
  EXPECT_EQ(*names, (std::vector<std::string>{"b", "f"}));
  // A directory no one may read is still removed (overlayfs leaves such).
  ASSERT_EQ(chmod((ws_ + "/a/b/c").c_str(), 0), 0);
  ASSERT_TRUE(files().RemoveTree("a/b").ok());
  EXPECT_FALSE(files().Look("a/b").exists());
  StatusOr<WorkspaceFiles> other = WorkspaceFiles::Open(out_);
  ASSERT_TRUE(other.ok());
  ASSERT_TRUE(files().MoveTo("a/f", *other, "kept/1/f").ok());
  EXPECT_EQ(*ReadFileToString(out_ + "/kept/1/f"), "1");
  EXPECT_FALSE(files().Relative("../x").ok());
  EXPECT_FALSE(files().Relative("/elsewhere").ok());
  EXPECT_EQ(*files().Relative(ws_ + "/./a//b/"), "a/b");
}

// ---------------------------------------------------------------------------
// The property: whatever is swapped in between the layer's look and its
// act (a symlink to outside for a directory on the way or for the entry
// itself, a hard link to an outside file, a FIFO, a device), nothing
// outside the workspace changes and nothing outside is read.

struct OutsideState {
  std::map<std::string, std::string> entries;  // path -> type, mode, content
  bool operator==(const OutsideState&) const = default;
};

OutsideState Snapshot(const std::string& dir) {
  OutsideState s;
  std::vector<std::string> todo = {""};
  while (!todo.empty()) {
    std::string rel = todo.back();
    todo.pop_back();
    std::string path = rel.empty() ? dir : dir + "/" + rel;
    DIR* d = opendir(path.c_str());
    if (d == nullptr) continue;
    while (dirent* e = readdir(d)) {
      std::string n = e->d_name;
      if (n == "." || n == "..") continue;
      std::string r = rel.empty() ? n : rel + "/" + n;
      struct stat st;
      if (lstat((dir + "/" + r).c_str(), &st) != 0) continue;
      std::string v = std::to_string(st.st_mode);
      if (S_ISREG(st.st_mode)) {
        StatusOr<std::string> text = ReadFileToString(dir + "/" + r);
        v += ":" + (text.ok() ? *text : std::string("?"));
      }
      if (S_ISDIR(st.st_mode)) todo.push_back(r);
      s.entries[r] = v;
    }
    closedir(d);
  }
  return s;
}

TEST_P(WorkspaceFilesTest, NothingSwappedInBetweenLookAndActReachesOutside) {
  // The outside tree: what a hostile swap points at.
  ASSERT_EQ(mkdir((out_ + "/d").c_str(), 0755), 0);
  ASSERT_TRUE(WriteFileAtomic(out_ + "/d/f", "SECRET-F").ok());
  ASSERT_TRUE(WriteFileAtomic(out_ + "/d/AGENTS.md", "SECRET-A").ok());
  ASSERT_EQ(chmod((out_ + "/d/f").c_str(), 0600), 0);
  const OutsideState before = Snapshot(out_);
  std::mt19937 rng(46);  // fixed: a failure reproduces
  const std::vector<std::string> names = {"f", "AGENTS.md", "new"};
  enum Swap { kDirToLink, kEntryToLink, kEntryToHardLink, kEntryToFifo, kEntryToDevice, kSwapCount };
  int acted = 0;
  for (int round = 0; round < 600; ++round) {
    // A small tree: x/y/{f,AGENTS.md} and a file at the root.
    RemoveTree(ws_);
    ASSERT_EQ(mkdir(ws_.c_str(), 0755), 0);
    StatusOr<WorkspaceFiles> opened = WorkspaceFiles::Open(ws_);
    ASSERT_TRUE(opened.ok());
    files_.emplace(std::move(*opened));
    Put("x/y/f", "inside-f");
    Put("x/y/AGENTS.md", "inside-a");
    Put("f", "root-f");
    bool deep = rng() % 2 == 0;
    std::string dir = deep ? "x/y" : "x";
    std::string name = names[rng() % names.size()];
    std::string rel = dir + "/" + name;
    Swap swap = static_cast<Swap>(rng() % kSwapCount);
    if (swap == kEntryToDevice && geteuid() != 0) swap = kEntryToFifo;  // mknod needs root
    int op = static_cast<int>(rng() % 10);
    bool swapped = false;
    WorkspaceFiles::SetRaceHookForTesting([&](std::string_view, std::string_view hooked) {
      if (swapped) return;
      swapped = true;
      std::string target = ws_ + "/" + rel;
      switch (swap) {
        case kDirToLink: {
          // The directory the op opened goes elsewhere inside; a symlink to
          // outside takes its name.
          std::string d = ws_ + "/" + dir;
          ASSERT_EQ(rename(d.c_str(), (ws_ + "/moved-" + std::to_string(round)).c_str()), 0);
          ASSERT_EQ(symlink((out_ + "/d").c_str(), d.c_str()), 0);
          break;
        }
        case kEntryToLink:
          RemoveTree(target);
          ASSERT_EQ(symlink((out_ + "/d/" + (name == "new" ? "f" : name)).c_str(), target.c_str()), 0);
          break;
        case kEntryToHardLink:
          RemoveTree(target);
          ASSERT_EQ(link((out_ + "/d/f").c_str(), target.c_str()), 0);
          break;
        case kEntryToFifo:
          RemoveTree(target);
          ASSERT_EQ(mkfifo(target.c_str(), 0644), 0);
          break;
        case kEntryToDevice:
          RemoveTree(target);
          ASSERT_EQ(mknod(target.c_str(), S_IFCHR | 0666, makedev(1, 3)), 0);  // /dev/null
          break;
        case kSwapCount: break;
      }
      (void)hooked;
    });
    StatusOr<std::string> read = Status::NotFound("not read");
    switch (op) {
      case 0: (void)files().WriteFile(rel, "WRITTEN", 0777); break;
      case 1: (void)files().MakeDirs(rel + "/hooks"); break;
      case 2: (void)files().Remove(rel); break;
      case 3: (void)files().RemoveTree(dir); break;
      case 4: (void)files().Symlink("/etc/passwd", rel); break;
      case 5: (void)files().Chmod(rel, 0777); break;
      case 6: (void)files().Rename(rel, "f"); break;
      case 7: read = files().ReadFile(rel, 1 << 20); break;
      case 8: (void)files().RemoveTree(rel); break;
      case 9: (void)files().MakeDirs(rel); break;
    }
    WorkspaceFiles::SetRaceHookForTesting(nullptr);
    acted += swapped;
    if (read.ok()) {
      EXPECT_EQ(read->find("SECRET"), std::string::npos) << "round " << round << " read outside";
    }
    // Undo the test's own hard link before comparing: the link count is
    // ours, the contents and modes are what the op may not touch.
    OutsideState after = Snapshot(out_);
    ASSERT_EQ(after, before) << "round " << round << ": op " << op << " on " << rel << " with swap " << swap
                             << " changed something outside the workspace";
  }
  EXPECT_GT(acted, 400) << "the hook ran in too few rounds to prove anything";
}

INSTANTIATE_TEST_SUITE_P(Resolution, WorkspaceFilesTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "OneComponentAtATime" : "Openat2";
                         });

}  // namespace
}  // namespace odin
