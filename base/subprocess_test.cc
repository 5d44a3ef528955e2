#include "base/subprocess.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "base/file_util.h"
#include "base/secrets.h"
#include "base/unique_fd.h"

namespace odin {
namespace {

std::string ReadAll(int fd) {
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  return out;
}

struct Ran {
  int exit_code;
  std::string output;
};

Ran RunSpawn(SpawnOptions o) {
  StatusOr<Pipe> p = MakePipe(O_CLOEXEC);
  if (!p.ok()) {
    ADD_FAILURE() << p.status().ToString();
    return {-1, ""};
  }
  o.stdout_fd = p->write_end.get();
  o.stderr_fd = p->write_end.get();
  if (o.env.empty()) o.env = {"PATH=/usr/bin:/bin"};
  auto pid = Spawn(o);
  p->write_end.reset();
  EXPECT_TRUE(pid.ok()) << pid.status().ToString();
  std::string out = ReadAll(p->read_end.get());
  int status = 0;
  if (pid.ok()) WaitPid(*pid, &status, 0);
  return {ExitCodeFromWaitStatus(status), out};
}

TEST(SubprocessTest, ExitStatusPassesThrough) { EXPECT_EQ(RunSpawn({.argv = {"sh", "-c", "exit 71"}}).exit_code, 71); }

TEST(SubprocessTest, DeathBySignalIs128PlusN) {
  EXPECT_EQ(RunSpawn({.argv = {"sh", "-c", "kill -ABRT $$"}}).exit_code, 134);
  EXPECT_EQ(RunSpawn({.argv = {"sh", "-c", "kill -9 $$"}}).exit_code, 137);
}

TEST(SubprocessTest, ChildHasOwnProcessGroupAndNullStdin) {
  Ran r = RunSpawn({.argv = {"sh", "-c", "test $(ps -o pgid= $$) = $$ && echo own; cat; echo eof"}});
  EXPECT_EQ(r.output, "own\neof\n");
}

TEST(SubprocessTest, OnlyGivenFdsAreInherited) {
  int leak = open("/dev/null", O_RDONLY);  // not close-on-exec on purpose
  ASSERT_GE(leak, 3);
  Ran r = RunSpawn({.argv = {"sh", "-c", "ls /proc/self/fd | wc -l"}});
  close(leak);
  // 0, 1, 2 and the fd ls uses to read the directory.
  EXPECT_EQ(r.output, "4\n");
}

TEST(SubprocessTest, MissingProgramIsNotFound) {
  auto pid = Spawn({.argv = {"no-such-program-odin"}, .env = {"PATH=/usr/bin:/bin"}});
  ASSERT_FALSE(pid.ok());
  EXPECT_EQ(pid.status().code(), StatusCode::kNotFound);
}

TEST(SubprocessTest, BadCwdIsReportedNotHidden) {
  auto pid = Spawn({.argv = {"true"}, .env = {"PATH=/usr/bin:/bin"}, .cwd = "/no/such/dir"});
  ASSERT_FALSE(pid.ok());
  EXPECT_EQ(pid.status().code(), StatusCode::kNotFound);
  EXPECT_NE(pid.status().message().find("chdir"), std::string::npos);
}

TEST(SubprocessTest, EnvironmentIsExactlyTheGivenOne) {
  Ran r = RunSpawn({.argv = {"/usr/bin/env"}, .env = {"A=1", "PATH=/bin"}});
  EXPECT_EQ(r.output, "A=1\nPATH=/bin\n");
}

TEST(SubprocessTest, ResourceLimitsApply) {
  SpawnOptions o{.argv = {"sh", "-c", "ulimit -n"}};
  o.limits.open_files = 37;
  EXPECT_EQ(RunSpawn(o).output, "37\n");
}

TEST(SubprocessTest, PathSearchSkipsDirectoriesAndRelativeEntries) {
  // A directory named like the program comes first in PATH; it is not it.
  auto dir = MakeTempDir("odin-path-test");
  ASSERT_TRUE(dir.ok());
  ASSERT_TRUE(MakeDirs(*dir + "/true").ok());
  EXPECT_EQ(SearchPath("true", *dir + ":/usr/bin:/bin"), "/usr/bin/true");
  EXPECT_EQ(SearchPath("true", ".:bin"), "");
  RemoveTree(*dir);
}

// A helper thread that keeps its children (the tool worker's overlay
// keeper) does not lose them to a command's clean-up, which kills every
// other child.
TEST(SubprocessTest, KillAllDescendantsPassesByTheChildrenOfAThreadThatKeepsThem) {
  ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  StatusOr<pid_t> mine = Spawn({.argv = {"sleep", "30"}, .env = {"PATH=/usr/bin:/bin"}});
  ASSERT_TRUE(mine.ok()) << mine.status().ToString();
  // The thread lives while we look: a thread's children go to another one
  // of the process when it ends.
  StatusOr<pid_t> kept = Status::Internal("not started");
  StatusOr<Pipe> spawned = MakePipe(O_CLOEXEC), done = MakePipe(O_CLOEXEC);
  ASSERT_TRUE(spawned.ok() && done.ok());
  bool keeps = false;
  pid_t keeper_tid = 0;
  std::thread keeper([&] {
    keeps = KeepOwnChildren();
    keeper_tid = static_cast<pid_t>(syscall(SYS_gettid));
    kept = Spawn({.argv = {"sleep", "30"}, .env = {"PATH=/usr/bin:/bin"}});
    spawned->write_end.reset();
    char c;
    (void)!read(done->read_end.get(), &c, 1);
    KeepOwnChildren(false);
  });
  char c;
  (void)!read(spawned->read_end.get(), &c, 1);
  EXPECT_TRUE(keeps);
  EXPECT_TRUE(kept.ok()) << kept.status().ToString();
  EXPECT_EQ(ListChildren(), std::vector<pid_t>{*mine});
  if (kept.ok()) {
    EXPECT_EQ(ListChildrenOfThread(keeper_tid), std::vector<pid_t>{*kept});
  }
  EXPECT_EQ(KillAllDescendants(), 1);
  int status = 0;
  if (kept.ok()) {
    EXPECT_EQ(WaitPid(*kept, &status, WNOHANG), 0) << "the kept child died";
    kill(*kept, SIGKILL);
    EXPECT_EQ(WaitPid(*kept, &status, 0), *kept);
  }
  EXPECT_EQ(WaitPid(*mine, &status, WNOHANG), -1) << "the other child was not killed and reaped";
  done->write_end.reset();
  keeper.join();
}

// Nine threads cannot all keep their children: the ninth is told so, and
// its children stay the process's (KillAllDescendants reaches them).
TEST(SubprocessTest, KeepOwnChildrenSaysSoWhenEightThreadsKeepTheirsAlready) {
  std::mutex mu;
  std::condition_variable cv;
  int keeping = 0;
  bool release = false;
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      bool kept = KeepOwnChildren();
      std::unique_lock<std::mutex> lock(mu);
      if (kept) ++keeping;
      cv.notify_all();
      cv.wait(lock, [&] { return release; });
      lock.unlock();
      KeepOwnChildren(false);
    });
  }
  {
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(30), [&] { return keeping == 8; }));
  }
  bool ninth = true;
  std::thread([&] { ninth = KeepOwnChildren(); }).join();
  EXPECT_FALSE(ninth);
  {
    std::lock_guard<std::mutex> lock(mu);
    release = true;
  }
  cv.notify_all();
  for (std::thread& t : threads) t.join();
  // The slots are free again.
  bool again = false;
  std::thread([&] {
    again = KeepOwnChildren();
    KeepOwnChildren(false);
  }).join();
  EXPECT_TRUE(again);
}

TEST(SubprocessTest, DescribesWaitStatus) {
  EXPECT_EQ(DescribeWaitStatus(3 << 8), "exited with status 3");
  EXPECT_EQ(DescribeWaitStatus(SIGKILL), "killed by signal 9 (Killed)");
}

}  // namespace
}  // namespace odin
