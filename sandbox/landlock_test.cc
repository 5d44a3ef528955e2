// The Landlock fallback, applied for real in a child process: writes land
// only below the directories given, reads go on everywhere.

#include "sandbox/landlock.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <gtest/gtest.h>

#include "base/file_util.h"
#include "tests/in_child.h"

namespace odin {
namespace {

using testing::RunInChild;

class LandlockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (LandlockAbi() <= 0) GTEST_SKIP() << "this kernel offers no Landlock";
    top_ = *MakeTempDir("odin-landlock");
    ASSERT_TRUE(MakeDirs(top_ + "/inside").ok());
    ASSERT_TRUE(MakeDirs(top_ + "/outside").ok());
    ASSERT_TRUE(WriteFileAtomic(top_ + "/outside/existing", "before\n").ok());
  }
  void TearDown() override {
    if (!top_.empty()) RemoveTree(top_);
  }
  std::string top_;
};

// "" if creating path (a file) gives errno `want` (0: succeeds).
std::string Create(const std::string& path, int want) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  int err = fd < 0 ? errno : 0;
  if (fd >= 0) close(fd);
  if (err == want) return "";
  return "create " + path + ": " + (err == 0 ? "succeeded" : strerror(err)) + "\n";
}

TEST_F(LandlockTest, WritesLandOnlyBelowTheWritableDirectories) {
  std::string top = top_;
  std::string failed = RunInChild([top] {
    Status s = RestrictWritesTo({top + "/inside", "/dev/null", top + "/not-there"});
    if (!s.ok()) return "restrict: " + s.ToString() + "\n";
    std::string f;
    f += Create(top + "/inside/new", 0);
    f += mkdir((top + "/inside/sub").c_str(), 0755) == 0 ? "" : "mkdir inside: " + std::string(strerror(errno)) + "\n";
    f += Create(top + "/inside/sub/deeper", 0);
    f += Create(top + "/outside/new", EACCES);
    f += Create(top + "/outside/existing", EACCES);  // changing counts as writing
    f += unlink((top + "/outside/existing").c_str()) == -1 && errno == EACCES ? "" : "unlink outside was not refused\n";
    f += mkdir((top + "/outside/sub").c_str(), 0755) == -1 && errno == EACCES ? "" : "mkdir outside was not refused\n";
    f += rename((top + "/inside/new").c_str(), (top + "/outside/moved").c_str()) == -1 ? ""
                                                                                       : "a rename out of it worked\n";
    // A device file given by name stays writable; reads are untouched.
    int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    f += null >= 0 ? "" : "/dev/null: " + std::string(strerror(errno)) + "\n";
    if (null >= 0) close(null);
    StatusOr<std::string> read_back = ReadFileToString(top + "/outside/existing");
    f += read_back.ok() && *read_back == "before\n" ? "" : "reading outside failed\n";
    return f;
  });
  EXPECT_EQ(failed, "");
  EXPECT_TRUE(PathExists(top_ + "/inside/sub/deeper"));
  EXPECT_FALSE(PathExists(top_ + "/outside/new"));
  EXPECT_EQ(*ReadFileToString(top_ + "/outside/existing"), "before\n");
}

TEST_F(LandlockTest, WhatTheChildStartsInheritsTheRestriction) {
  std::string top = top_;
  std::string failed = RunInChild([top] {
    Status s = RestrictWritesTo({top + "/inside"});
    if (!s.ok()) return "restrict: " + s.ToString() + "\n";
    pid_t pid = fork();
    if (pid == 0) {
      int fd = open((top + "/outside/from-grandchild").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
      _exit(fd < 0 && errno == EACCES ? 0 : 1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? std::string() : std::string("the grandchild could write\n");
  });
  EXPECT_EQ(failed, "");
  EXPECT_FALSE(PathExists(top_ + "/outside/from-grandchild"));
}

}  // namespace
}  // namespace odin
