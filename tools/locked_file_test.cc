#include "tools/locked_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/file_util.h"
#include "base/unique_fd.h"

namespace odin {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Lock = LockedFile::Lock;

constexpr uint64_t kMax = 1 << 20;

class LockedFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = *RealPath(*MakeTempDir("odin-locked-file"));
    ws_ = root_ + "/ws";
    ASSERT_TRUE(MakeDirs(ws_).ok());
  }
  void TearDown() override { RemoveTree(root_); }

  std::string Path(const std::string& rel) const { return ws_ + "/" + rel; }
  void Put(const std::string& rel, const std::string& content) {
    ASSERT_TRUE(MakeDirs(DirName(Path(rel))).ok());
    ASSERT_TRUE(WriteFileAtomic(Path(rel), content).ok());
  }
  std::string Get(const std::string& rel) const {
    StatusOr<std::string> text = ReadFileToString(Path(rel));
    return text.ok() ? *text : "(missing)";
  }
  mode_t Mode(const std::string& path) const {
    struct stat st {};
    stat(path.c_str(), &st);
    return st.st_mode & 07777;
  }
  std::unique_ptr<LockedFile> Open(const std::string& rel, Lock lock) {
    StatusOr<std::unique_ptr<LockedFile>> f = LockedFile::Open(ws_, Path(rel), kMax, lock);
    EXPECT_TRUE(f.ok()) << f.status().ToString();
    return f.ok() ? std::move(*f) : nullptr;
  }
  Status OpenError(const std::string& path, uint64_t max_bytes = kMax) {
    StatusOr<std::unique_ptr<LockedFile>> f = LockedFile::Open(ws_, path, max_bytes, Lock::kShared);
    return f.status();
  }
  // Whether another open file description of rel could take this flock now.
  bool CouldLock(const std::string& rel, int operation) {
    UniqueFd fd(open(Path(rel).c_str(), O_RDONLY | O_CLOEXEC));
    EXPECT_TRUE(fd.valid());
    return flock(fd.get(), operation | LOCK_NB) == 0;  // released with fd
  }
  std::vector<std::string> List(const std::string& rel_dir) const {
    std::vector<std::string> names;
    DIR* d = opendir(Path(rel_dir).c_str());
    if (d == nullptr) return names;
    while (dirent* e = readdir(d)) {
      if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") names.push_back(e->d_name);
    }
    closedir(d);
    return names;
  }

  std::string root_;  // holds the workspace and what lies outside it
  std::string ws_;
};

// ---- opening ----------------------------------------------------------------

TEST_F(LockedFileTest, OpenReadsTheContentAndTheState) {
  Put("a.txt", "hello\n");
  chmod(Path("a.txt").c_str(), 0640);
  std::unique_ptr<LockedFile> f = Open("a.txt", Lock::kShared);
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(f->exists());
  EXPECT_EQ(f->content(), "hello\n");
  EXPECT_EQ(f->stat().size, 6u);
  EXPECT_EQ(f->stat().mode, 0640u);
  struct stat st {};
  stat(Path("a.txt").c_str(), &st);
  EXPECT_EQ(f->stat().mtime_ns, static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec);
}

TEST_F(LockedFileTest, AMissingFileOpensAsNotExisting) {
  std::unique_ptr<LockedFile> f = Open("new.txt", Lock::kExclusive);
  ASSERT_NE(f, nullptr);
  EXPECT_FALSE(f->exists());
  EXPECT_EQ(f->content(), "");
}

TEST_F(LockedFileTest, AFileInAMissingDirectoryOpensAsNotExisting) {
  std::unique_ptr<LockedFile> f = Open("no/such/dir/new.txt", Lock::kExclusive);
  ASSERT_NE(f, nullptr);
  EXPECT_FALSE(f->exists());
}

TEST_F(LockedFileTest, RefusesWhatIsNotARegularFileInsideTheWorkspace) {
  ASSERT_TRUE(MakeDirs(Path("dir")).ok());
  ASSERT_EQ(mkfifo(Path("fifo").c_str(), 0600), 0);  // refused without waiting for a writer
  Put("target.txt", "x");
  ASSERT_EQ(symlink("target.txt", Path("link").c_str()), 0);

  EXPECT_EQ(OpenError(ws_), Status::InvalidArgument(ws_, "is a directory, not a file"));
  EXPECT_EQ(OpenError(Path("dir")), Status::InvalidArgument(Path("dir"), "is a directory, not a file"));
  EXPECT_EQ(OpenError(Path("fifo")), Status::InvalidArgument(Path("fifo"), "is not a regular file"));
  EXPECT_EQ(OpenError(Path("link")), Status::InvalidArgument(Path("link"), "is a symbolic link"));
  EXPECT_EQ(OpenError(root_ + "/outside.txt"),
            Status::InvalidArgument(root_ + "/outside.txt", "is outside the workspace"));
}

TEST_F(LockedFileTest, RefusesAPathThroughASymlinkedDirectory) {
  ASSERT_TRUE(MakeDirs(root_ + "/elsewhere").ok());
  ASSERT_TRUE(WriteFileAtomic(root_ + "/elsewhere/secret.txt", "secret").ok());
  ASSERT_EQ(symlink((root_ + "/elsewhere").c_str(), Path("sub").c_str()), 0);
  Status s = OpenError(Path("sub/secret.txt"));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("symbolic link"));
}

TEST_F(LockedFileTest, RefusesAFileOverTheLimitBeforeReadingIt) {
  Put("big.txt", std::string(101, 'x'));
  Status s = OpenError(Path("big.txt"), 100);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(s.message(), HasSubstr("is 101 bytes, over the limit of 100 bytes"));
  EXPECT_TRUE(OpenError(Path("big.txt"), 101).ok());
}

// ---- locking ----------------------------------------------------------------

TEST_F(LockedFileTest, AReaderHoldsASharedLockUntilItIsDestroyed) {
  Put("a.txt", "x");
  std::unique_ptr<LockedFile> reader = Open("a.txt", Lock::kShared);
  ASSERT_NE(reader, nullptr);
  EXPECT_TRUE(CouldLock("a.txt", LOCK_SH));   // other readers are welcome
  EXPECT_FALSE(CouldLock("a.txt", LOCK_EX));  // writers wait
  std::unique_ptr<LockedFile> second_reader = Open("a.txt", Lock::kShared);
  EXPECT_NE(second_reader, nullptr);
  reader.reset();
  second_reader.reset();
  EXPECT_TRUE(CouldLock("a.txt", LOCK_EX));
}

TEST_F(LockedFileTest, AWriterHoldsAnExclusiveLockUntilItIsDestroyed) {
  Put("a.txt", "x");
  std::unique_ptr<LockedFile> writer = Open("a.txt", Lock::kExclusive);
  ASSERT_NE(writer, nullptr);
  EXPECT_FALSE(CouldLock("a.txt", LOCK_SH));
  EXPECT_FALSE(CouldLock("a.txt", LOCK_EX));
  writer.reset();
  EXPECT_TRUE(CouldLock("a.txt", LOCK_EX));
}

TEST_F(LockedFileTest, AMissingFileHoldsNoLock) {
  std::unique_ptr<LockedFile> f = Open("new.txt", Lock::kExclusive);
  ASSERT_NE(f, nullptr);
  Put("new.txt", "made meanwhile");
  EXPECT_TRUE(CouldLock("new.txt", LOCK_EX));
}

// True once /proc/locks shows a process waiting for a flock on inode.
bool SomeoneWaitsForALockOn(ino_t inode) {
  std::ifstream locks("/proc/locks");
  std::string line;
  std::string suffix = ":" + std::to_string(inode) + " ";
  while (std::getline(locks, line)) {
    if (line.find("->") != std::string::npos && line.find(suffix) != std::string::npos) return true;
  }
  return false;
}

TEST_F(LockedFileTest, AWriterThatWaitedWhileTheFileWasReplacedReadsTheNewContent) {
  Put("a.txt", "old");
  struct stat st {};
  ASSERT_EQ(stat(Path("a.txt").c_str(), &st), 0);
  std::unique_ptr<LockedFile> first = Open("a.txt", Lock::kExclusive);
  ASSERT_NE(first, nullptr);

  std::string second_saw;
  std::atomic<bool> second_done{false};
  std::thread second([&] {
    std::unique_ptr<LockedFile> f = Open("a.txt", Lock::kExclusive);  // waits for first
    if (f != nullptr) second_saw = f->content();
    second_done = true;
  });
  // The event: the second writer is queued on the old file's lock (or, if
  // it never waits, done, and the expectation below says so).
  while (!SomeoneWaitsForALockOn(st.st_ino) && !second_done) std::this_thread::yield();
  ASSERT_TRUE(first->Replace("new").ok());
  first.reset();  // releases the old file's lock; the name holds another inode now
  second.join();
  EXPECT_EQ(second_saw, "new");
}

// ---- replacing --------------------------------------------------------------

TEST_F(LockedFileTest, ReplaceKeepsTheModeAndLeavesNoTemporaryFile) {
  Put("a.txt", "old");
  chmod(Path("a.txt").c_str(), 0750);
  std::unique_ptr<LockedFile> f = Open("a.txt", Lock::kExclusive);
  ASSERT_NE(f, nullptr);
  ASSERT_TRUE(f->Replace("brand new").ok());
  EXPECT_EQ(Get("a.txt"), "brand new");
  EXPECT_EQ(Mode(Path("a.txt")), 0750u);
  EXPECT_THAT(List("."), ElementsAre("a.txt"));
  StatusOr<FileStat> now = f->StatNow();
  ASSERT_TRUE(now.ok());
  EXPECT_EQ(now->size, 9u);
  EXPECT_EQ(now->mode, 0750u);
}

TEST_F(LockedFileTest, ReplaceCreatesAMissingFileAndItsDirectories) {
  std::unique_ptr<LockedFile> f = Open("x/y/new.txt", Lock::kExclusive);
  ASSERT_NE(f, nullptr);
  ASSERT_TRUE(f->Replace("hi\n").ok());
  EXPECT_EQ(Get("x/y/new.txt"), "hi\n");
  EXPECT_EQ(Mode(Path("x/y/new.txt")), 0644u);
  EXPECT_TRUE(IsDirectory(Path("x/y")));
  EXPECT_THAT(List("x/y"), ElementsAre("new.txt"));
}

TEST_F(LockedFileTest, CreatingAFileSomeoneElseCreatedMeanwhileIsAConflict) {
  std::unique_ptr<LockedFile> f = Open("new.txt", Lock::kExclusive);
  ASSERT_NE(f, nullptr);
  Put("new.txt", "theirs");
  Status s = f->Replace("mine");
  EXPECT_EQ(s, Status::AlreadyExists(Path("new.txt"), "was created by someone else meanwhile"));
  EXPECT_EQ(Get("new.txt"), "theirs");
  EXPECT_THAT(List("."), ElementsAre("new.txt"));
}

TEST_F(LockedFileTest, ADirectorySwappedForASymlinkAfterOpeningCannotRedirectTheWrite) {
  Put("sub/a.txt", "old");
  ASSERT_TRUE(MakeDirs(root_ + "/elsewhere").ok());
  std::unique_ptr<LockedFile> f = Open("sub/a.txt", Lock::kExclusive);
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(rename(Path("sub").c_str(), Path("moved").c_str()), 0);
  ASSERT_EQ(symlink((root_ + "/elsewhere").c_str(), Path("sub").c_str()), 0);
  ASSERT_TRUE(f->Replace("new").ok());
  EXPECT_EQ(Get("moved/a.txt"), "new");  // the directory opened, wherever it went
  EXPECT_FALSE(PathExists(root_ + "/elsewhere/a.txt"));
}

}  // namespace
}  // namespace odin
