#include "daemon/socket_location.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <optional>

#include <gtest/gtest.h>

#include "base/file_util.h"

namespace odin {
namespace {

// Sets environment variables for a test, restoring them afterwards.
class ScopedEnv {
 public:
  void Set(const char* name, const std::string& value) {
    Save(name);
    setenv(name, value.c_str(), 1);
  }
  void Unset(const char* name) {
    Save(name);
    unsetenv(name);
  }
  ~ScopedEnv() {
    for (auto& [name, value] : saved_) {
      if (value)
        setenv(name.c_str(), value->c_str(), 1);
      else
        unsetenv(name.c_str());
    }
  }

 private:
  void Save(const char* name) {
    if (saved_.count(name)) return;
    const char* v = getenv(name);
    saved_[name] = v ? std::optional<std::string>(v) : std::nullopt;
  }
  std::map<std::string, std::optional<std::string>> saved_;
};

class SocketLocationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = *MakeTempDir("odin-sock");
    env_.Set("XDG_STATE_HOME", dir_ + "/state");
    env_.Set("TMPDIR", dir_ + "/tmp");
    ASSERT_TRUE(MakeDirs(dir_ + "/tmp").ok());
  }
  void TearDown() override { RemoveTree(dir_); }
  std::string dir_;
  ScopedEnv env_;
};

TEST_F(SocketLocationTest, InTheRuntimeDirectoryNamedByTheWorkspace) {
  ASSERT_TRUE(MakeDirs(dir_ + "/run", 0700).ok());
  env_.Set("XDG_RUNTIME_DIR", dir_ + "/run");
  StatusOr<std::string> a = DaemonSocketPath("/src/one");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(DirName(*a), dir_ + "/run/odin");
  EXPECT_EQ(a->substr(a->size() - 5), ".sock");
  EXPECT_EQ(*DaemonSocketPath("/src/one"), *a);
  EXPECT_NE(*DaemonSocketPath("/src/two"), *a);
  struct stat st;
  ASSERT_EQ(stat((dir_ + "/run/odin").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

TEST_F(SocketLocationTest, WithoutAUsableRuntimeDirectoryInTheStateDirectory) {
  env_.Unset("XDG_RUNTIME_DIR");
  EXPECT_EQ(DirName(*DaemonSocketPath("/src/one")), dir_ + "/state/odin/run");
  // A runtime directory open to others is not one (the spec says 0700).
  ASSERT_TRUE(MakeDirs(dir_ + "/shared", 0777).ok());
  chmod((dir_ + "/shared").c_str(), 0777);
  env_.Set("XDG_RUNTIME_DIR", dir_ + "/shared");
  EXPECT_EQ(DirName(*DaemonSocketPath("/src/one")), dir_ + "/state/odin/run");
}

TEST_F(SocketLocationTest, APathTooLongForASocketFallsBackToAPrivateTemporaryDirectory) {
  env_.Unset("XDG_RUNTIME_DIR");
  env_.Set("XDG_STATE_HOME", dir_ + "/" + std::string(100, 's'));
  StatusOr<std::string> p = DaemonSocketPath("/src/one");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(DirName(*p), dir_ + "/tmp/odin-" + std::to_string(geteuid()));
  EXPECT_LE(p->size(), kMaxUnixSocketPath);
}

TEST_F(SocketLocationTest, ADirectoryOfAnotherUserOrASymlinkIsNotUsed) {
  env_.Unset("XDG_RUNTIME_DIR");
  env_.Set("XDG_STATE_HOME", dir_ + "/" + std::string(100, 's'));  // straight to the temporary directory
  std::string mine = dir_ + "/tmp/odin-" + std::to_string(geteuid());
  ASSERT_EQ(symlink("/", mine.c_str()), 0);
  StatusOr<std::string> p = DaemonSocketPath("/src/one");
  ASSERT_FALSE(p.ok()) << *p;
  EXPECT_NE(p.status().message().find("symlink"), std::string::npos) << p.status().message();
  unlink(mine.c_str());
  if (geteuid() == 0) {
    ASSERT_TRUE(MakeDirs(mine, 0700).ok());
    ASSERT_EQ(chown(mine.c_str(), 65534, 65534), 0);
    StatusOr<std::string> q = DaemonSocketPath("/src/one");
    ASSERT_FALSE(q.ok()) << *q;
    EXPECT_NE(q.status().message().find("belongs to uid 65534"), std::string::npos) << q.status().message();
  }
}

}  // namespace
}  // namespace odin
