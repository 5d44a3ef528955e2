#include "daemon/peer_credentials.h"

#include <sched.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <functional>

#include <gtest/gtest.h>

#include "base/file_util.h"

namespace odin {
namespace {

// A listening socket in a directory anyone may enter, so that a client of
// another uid can reach it and be judged by its credentials alone.
class PeerCredentialsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = *MakeTempDir("odin-peer");
    chmod(dir_.c_str(), 0777);
    path_ = dir_ + "/s";
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    strcpy(addr.sun_path, path_.c_str());
    listener_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_EQ(bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    chmod(path_.c_str(), 0777);
    ASSERT_EQ(listen(listener_, 4), 0);
  }
  void TearDown() override {
    close(listener_);
    RemoveTree(dir_);
  }
  // Forks a client that runs prepare (then connects and waits to be read);
  // returns what CheckPeer says of it. *ran is false if prepare failed (the
  // test then skips).
  Status JudgeClient(const std::function<bool()>& prepare, bool* ran) {
    int ready[2], hold[2];
    if (pipe(ready) != 0 || pipe(hold) != 0) abort();
    pid_t pid = fork();
    if (pid == 0) {
      close(ready[0]);
      close(hold[1]);
      char ok = prepare() ? 1 : 0;
      if (ok) {
        int fd = socket(AF_UNIX, SOCK_STREAM, 0);
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        strcpy(addr.sun_path, path_.c_str());
        ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
      }
      (void)!write(ready[1], &ok, 1);
      char wait_for_close;
      (void)!read(hold[0], &wait_for_close, 1);  // stay alive until judged (EOF)
      _exit(0);
    }
    close(ready[1]);
    close(hold[0]);
    char ok = 0;
    (void)!read(ready[0], &ok, 1);
    *ran = ok == 1;
    Status s = Status::OK();
    if (*ran) {
      int conn = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
      s = CheckPeer(conn);
      close(conn);
    }
    close(ready[0]);
    close(hold[1]);
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    return s;
  }
  std::string dir_, path_;
  int listener_ = -1;
};

TEST_F(PeerCredentialsTest, OurOwnProcessIsServed) {
  bool ran = false;
  Status s = JudgeClient([] { return true; }, &ran);
  ASSERT_TRUE(ran);
  EXPECT_TRUE(s.ok()) << s.ToString();
  int pair[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
  StatusOr<PeerCredentials> me = PeerOf(pair[0]);
  ASSERT_TRUE(me.ok());
  EXPECT_EQ(me->uid, geteuid());
  EXPECT_EQ(me->pid, getpid());
  close(pair[0]);
  close(pair[1]);
}

TEST_F(PeerCredentialsTest, AnotherUserIsRefusedSayingWho) {
  if (geteuid() != 0) GTEST_SKIP() << "switching to another uid needs root";
  bool ran = false;
  Status s = JudgeClient([] { return setgid(65534) == 0 && setuid(65534) == 0; }, &ran);
  if (!ran) GTEST_SKIP() << "could not switch to uid 65534";
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(s.message().find("uid 65534"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("another user"), std::string::npos) << s.message();
}

TEST_F(PeerCredentialsTest, AProcessInAnotherPidNamespaceIsRefusedEvenAsTheSameUser) {
  // As a sandbox does: the client is the first process of a new pid namespace
  // (its uid unchanged, as root inside a sandbox can be root outside it).
  bool ran = false;
  Status s = JudgeClient(
      [] {
        if (unshare(CLONE_NEWPID) != 0) return false;
        pid_t child = fork();  // the first process of the new namespace
        if (child < 0) return false;
        if (child > 0) {
          waitpid(child, nullptr, 0);
          _exit(0);
        }
        return true;
      },
      &ran);
  if (!ran) GTEST_SKIP() << "cannot create a pid namespace here (unshare(CLONE_NEWPID) needs privileges)";
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(s.message().find("another pid namespace"), std::string::npos) << s.message();
}

TEST_F(PeerCredentialsTest, ASandboxedCommandWithoutNamespacesIsRefused) {
  // The Landlock fallback: same uid, same namespaces, but under the seccomp
  // filter and no_new_privs odin-sandbox always sets.
  bool ran = false;
  Status s = JudgeClient([] { return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0; }, &ran);
  ASSERT_TRUE(ran);
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(s.message().find("no_new_privs (a sandboxed command)"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace odin
