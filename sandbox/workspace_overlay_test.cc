#include "sandbox/workspace_overlay.h"

#include <filesystem>
#include <sched.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "base/file_util.h"
#include "base/subprocess.h"

namespace odin {
namespace {

// Runs script as the worker runs a command (before_exec as given), then
// exits with its status (94: it did not start).
[[noreturn]] void RunScript(const char* script, const char* cwd, int (*before_exec)(const void*), const void* arg,
                            std::vector<int> keep_fds = {}) {
  SpawnOptions o;
  o.argv = {"/bin/sh", "-c", script};
  o.env = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin"};
  o.cwd = cwd;
  o.stdout_fd = 1;
  o.stderr_fd = 2;
  o.before_exec = before_exec;
  o.before_exec_arg = arg;
  o.keep_fds = std::move(keep_fds);
  StatusOr<pid_t> pid = Spawn(o);
  if (!pid.ok()) {
    fprintf(stderr, "%s\n", pid.status().ToString().c_str());
    _exit(94);
  }
  int status = 0;
  WaitPid(*pid, &status, 0);
  _exit(ExitCodeFromWaitStatus(status));
}

// Started by the tests below as the program inside odin-sandbox (this same
// binary, told so by ODIN_OVERLAY_TEST_SCRIPT): does what a worker does for
// one command, the script, in the workspace overlay, and exits with its
// status. 91: the sandbox gave no overlay.
int RunAsWorkerIfAsked() {
  const char* script = getenv("ODIN_OVERLAY_TEST_SCRIPT");
  if (script == nullptr) return 0;
  const char* masks = getenv(kOverlayEnv);
  if (masks == nullptr) _exit(91);
  char cwd[4096];
  if (getcwd(cwd, sizeof cwd) == nullptr) _exit(92);
  if (std::string(script) == "probe") {  // what the worker asks at its start
    Status probe = ProbeWorkspaceOverlay(cwd, masks);
    printf("%s\n", probe.ok() ? "overlay" : probe.ToString().c_str());
    fflush(stdout);
    _exit(0);
  }
  if (getenv("ODIN_OVERLAY_TEST_VIEW") != nullptr) {  // a command judged to only read
    StatusOr<std::unique_ptr<PreparedOverlay>> view = PreparedOverlay::MakeReadOnlyView(cwd, masks);
    if (!view.ok()) {
      fprintf(stderr, "prepare to run: %s\n", view.status().ToString().c_str());
      _exit(94);
    }
    if (getenv("ODIN_OVERLAY_TEST_WAIT") != nullptr) {  // the test changes the workspace meanwhile
      std::ofstream(std::string(cwd) + "/ready").flush();
      for (int i = 0; i < 1000 && !PathExists(std::string(cwd) + "/go"); ++i) usleep(10000);
    }
    if (!(*view)->Fresh()) {  // as the worker does: made again
      printf("stale\n");
      fflush(stdout);
      view = PreparedOverlay::MakeReadOnlyView(cwd, masks);
      if (!view.ok()) _exit(94);
    }
    RunScript(script, cwd, PreparedOverlay::Join, view->get(), (*view)->fds());
  }
  if (getenv("ODIN_OVERLAY_TEST_PREPARED") != nullptr) {  // as a writable worker does
    StatusOr<std::unique_ptr<PreparedOverlay>> prepared = PreparedOverlay::Make(cwd, masks);
    if (!prepared.ok()) {
      fprintf(stderr, "prepare to run: %s\n", prepared.status().ToString().c_str());
      _exit(94);
    }
    if (Status joined = (*prepared)->Check(); !joined.ok()) {
      fprintf(stderr, "prepare to run: %s\n", joined.ToString().c_str());
      _exit(94);
    }
    if (std::string(script) == "unclaimed") {
      prepared->reset();  // what its destructor leaves
      _exit(0);
    }
    if (getenv("ODIN_OVERLAY_TEST_WAIT") != nullptr) {  // the test changes the workspace meanwhile
      std::ofstream(std::string(cwd) + "/ready").flush();
      for (int i = 0; i < 1000 && !PathExists(std::string(cwd) + "/go"); ++i) usleep(10000);
    }
    if (Status claimed = (*prepared)->Claim("ex_test-1"); !claimed.ok()) {
      printf("claim: %s\n", claimed.ToString().c_str());
      fflush(stdout);
      _exit(0);
    }
    RunScript(script, cwd, PreparedOverlay::Join, prepared->get(), (*prepared)->fds());
  }
  StatusOr<WorkspaceOverlayPlan> plan = PlanWorkspaceOverlay(cwd, "ex_test-1", masks);
  if (!plan.ok()) {
    fprintf(stderr, "%s\n", plan.status().ToString().c_str());
    _exit(93);
  }
  if (getenv("ODIN_OVERLAY_TEST_WAIT") != nullptr) {  // the test looks at its directory meanwhile
    std::ofstream(std::string(cwd) + "/ready").flush();
    for (int i = 0; i < 1000 && !PathExists(std::string(cwd) + "/go"); ++i) usleep(10000);
  }
  // What the worker starts without the overlay: with the no-mount filter
  // ("deny"), or, to show what it stops, with nothing ("bare").
  const char* plain = getenv("ODIN_OVERLAY_TEST_PLAIN");
  if (plain != nullptr) RunScript(script, cwd, std::string(plain) == "deny" ? DenyMountsBeforeExec : nullptr, nullptr);
  RunScript(script, cwd, EnterWorkspaceOverlay, &*plan);
}
[[maybe_unused]] const int kRanAsWorker = RunAsWorkerIfAsked();

class WorkspaceOverlayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = *MakeTempDir("odin-ws-overlay-test");
    ws_ = root_ + "/ws";
    ASSERT_TRUE(MakeDirs(ws_ + "/.odin/overlay").ok());
    Write(ws_ + "/.odin/odin.db", "ledger\n");
    Write(ws_ + "/a.txt", "a\n");
    Write(ws_ + "/gone.txt", "g\n");
    Write(ws_ + "/secret.env", "TOKEN=1\n");
  }
  void TearDown() override { RemoveTree(root_); }

  static void Write(const std::string& path, const std::string& content) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
  }
  static std::string Read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  // Runs script as a command of a worker in odin-sandbox; with_overlay
  // passes --overlay-root. Returns the sandbox's exit code and output.
  CommandOutput RunCommand(const std::string& script, bool with_overlay = true,
                           const std::vector<std::string>& more = {}) {
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = '\0';
    SpawnOptions o;
    o.argv = {JoinPath(ExecutableDir(), "odin-sandbox"),
              "--workspace",
              ws_,
              "--policy",
              "require",
              "--mask",
              ws_ + "/.odin",
              "--mask",
              ws_ + "/secret.env"};
    if (with_overlay) o.argv.insert(o.argv.end(), {"--overlay-root", ws_ + "/.odin/overlay"});
    o.argv.insert(o.argv.end(), more.begin(), more.end());
    o.argv.insert(o.argv.end(), {"--", self});
    o.env = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "ODIN_OVERLAY_TEST_SCRIPT=" + script};
    if (!plain_.empty()) o.env.push_back("ODIN_OVERLAY_TEST_PLAIN=" + plain_);
    if (prepared_) o.env.push_back("ODIN_OVERLAY_TEST_PREPARED=1");
    if (view_) o.env.push_back("ODIN_OVERLAY_TEST_VIEW=1");
    if (wait_) o.env.push_back("ODIN_OVERLAY_TEST_WAIT=1");
    o.cwd = ws_;
    StatusOr<CommandOutput> out = odin::RunCommand(o);
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    return out.ok() ? *out : CommandOutput{};
  }

  // `cat .git/config` with git's config bound read-only, joining an
  // overlay prepared before `replaced` is replaced (as git config writes).
  CommandOutput CatGitConfigReplacingMeanwhile(const std::string& replaced) {
    prepared_ = true;
    wait_ = true;
    std::thread editor([&] {
      for (int i = 0; i < 1000 && !PathExists(ws_ + "/ready"); ++i) usleep(10000);
      Write(replaced + ".lock", "[core]\n\tbare = false\n");
      rename((replaced + ".lock").c_str(), replaced.c_str());
      Write(ws_ + "/go", "");
    });
    CommandOutput out =
        RunCommand("cat .git/config", true, {"--writable", ws_ + "/.git", "--readonly", ws_ + "/.git/config"});
    editor.join();
    return out;
  }

  // Runs script in the read-only view, made before rel is replaced (by a
  // rename, as editors save) with content and later.txt is made.
  CommandOutput RunInViewReplacingMeanwhile(const std::string& script, const std::string& rel,
                                            const std::string& content) {
    view_ = true;
    wait_ = true;
    std::thread editor([&] {
      for (int i = 0; i < 1000 && !PathExists(ws_ + "/ready"); ++i) usleep(10000);
      Write(ws_ + "/" + rel + ".new", content);
      rename((ws_ + "/" + rel + ".new").c_str(), (ws_ + "/" + rel).c_str());
      Write(ws_ + "/later.txt", "later\n");
      Write(ws_ + "/go", "");
    });
    CommandOutput out = RunCommand(script);
    editor.join();
    return out;
  }

  std::string root_, ws_;
  std::string plain_;      // ODIN_OVERLAY_TEST_PLAIN for the worker
  bool prepared_ = false;  // the command joins a PreparedOverlay
  bool view_ = false;      // the command joins the read-only view
  bool wait_ = false;      // between preparing and claiming, for ready and go
};

#define SKIP_WITHOUT_OVERLAY(out)                                                              \
  do {                                                                                         \
    if ((out).exit_code == 94 && (out).output.find("prepare to run") != std::string::npos) {   \
      GTEST_SKIP() << "this kernel does not let a sandbox mount an overlay: " << (out).output; \
    }                                                                                          \
    if ((out).exit_code == 71) GTEST_SKIP() << "no usable bubblewrap here: " << (out).output;  \
  } while (0)

// The worker did not use the prepared overlay, and said why; the command
// ran all the same.
#define EXPECT_THE_CLAIM_FAILED(out)                                                                            \
  do {                                                                                                          \
    ASSERT_EQ((out).exit_code, 0) << (out).output;                                                              \
    EXPECT_NE((out).output.find("claim: "), std::string::npos) << (out).output;                                 \
    EXPECT_NE((out).output.find("replaced since the overlay was prepared"), std::string::npos) << (out).output; \
  } while (0)

TEST_F(WorkspaceOverlayTest, ACommandsWritesLandInItsUpperDirectoryOnly) {
  CommandOutput out = RunCommand("echo B >> a.txt && echo n > new.txt && rm gone.txt && cat a.txt");
  SKIP_WITHOUT_OVERLAY(out);
  ASSERT_EQ(out.exit_code, 0) << out.output;
  EXPECT_EQ(out.output, "a\nB\n");  // the command sees its own writes
  // The workspace is untouched...
  EXPECT_EQ(Read(ws_ + "/a.txt"), "a\n");
  EXPECT_FALSE(PathExists(ws_ + "/new.txt"));
  EXPECT_TRUE(PathExists(ws_ + "/gone.txt"));
  // ...and the upper directory is the command's change set.
  std::string upper = ws_ + "/.odin/overlay/ex_test-1/u";
  EXPECT_EQ(Read(upper + "/a.txt"), "a\nB\n");
  EXPECT_EQ(Read(upper + "/new.txt"), "n\n");
  struct stat st;
  ASSERT_EQ(lstat((upper + "/gone.txt").c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode) && st.st_rdev == makedev(0, 0)) << "a whiteout";
}

TEST_F(WorkspaceOverlayTest, TheCommandReachesNeitherMasksNorLayersAndCannotUndoThem) {
  CommandOutput out = RunCommand(
      "ls -A .odin | wc -l; wc -c < secret.env; ls -A /run/odin-overlay | wc -l; "
      "umount \"$PWD\" 2>/dev/null && echo UMOUNTED; umount \"$PWD/.odin\" 2>/dev/null && echo UNMASKED; "
      "unshare -Ur true 2>/dev/null && echo UNSHARED; (echo x > .odin/planted) 2>/dev/null && echo PLANTED; "
      "grep CapEff /proc/self/status; id -u");
  SKIP_WITHOUT_OVERLAY(out);
  ASSERT_EQ(out.exit_code, 0) << out.output;
  // The command is who it would be without the overlay: the workspace's
  // user (root here when the test runs as root), with no capability.
  EXPECT_EQ(out.output, "0\n0\n0\nCapEff:\t0000000000000000\n" + std::to_string(getuid()) + "\n");
  EXPECT_FALSE(PathExists(ws_ + "/.odin/planted"));
  EXPECT_EQ(Read(ws_ + "/.odin/odin.db"), "ledger\n");
}

TEST_F(WorkspaceOverlayTest, ProtectedMountsHoldOverTheOverlayToo) {
  ASSERT_TRUE(MakeDirs(ws_ + "/.git/hooks").ok());
  Write(ws_ + "/.git/config", "[core]\n");
  CommandOutput out = RunCommand(
      "(echo evil > .git/config) 2>/dev/null || echo RO; mv .git .g 2>/dev/null || echo BUSY; "
      "echo obj > .git/objects-ok && echo RW",
      true, {"--writable", ws_ + "/.git", "--readonly", ws_ + "/.git/config"});
  SKIP_WITHOUT_OVERLAY(out);
  ASSERT_EQ(out.exit_code, 0) << out.output;
  EXPECT_EQ(out.output, "RO\nBUSY\nRW\n");
  EXPECT_EQ(Read(ws_ + "/.git/config"), "[core]\n");
  EXPECT_EQ(Read(ws_ + "/.odin/overlay/ex_test-1/u/.git/objects-ok"), "obj\n");
}

// The worker's probe at its start: yes where commands get the overlay (and
// it leaves nothing behind), no, with the reason, where they cannot.
TEST_F(WorkspaceOverlayTest, TheProbeSaysWhetherCommandsGetTheOverlay) {
  CommandOutput works = RunCommand("true");
  SKIP_WITHOUT_OVERLAY(works);
  CommandOutput yes = RunCommand("probe");
  ASSERT_EQ(yes.exit_code, 0) << yes.output;
  EXPECT_EQ(yes.output, "overlay\n");
  RemoveTree(ws_ + "/.odin/overlay/ex_test-1");
  EXPECT_TRUE(std::filesystem::is_empty(ws_ + "/.odin/overlay"))
      << "the probe's directories are removed: " << std::filesystem::directory_iterator(ws_ + "/.odin/overlay")->path();
  // Not writable to the worker (which holds no capability, even as root).
  ASSERT_EQ(chmod((ws_ + "/.odin/overlay").c_str(), 0500), 0);
  CommandOutput no = RunCommand("probe");
  chmod((ws_ + "/.odin/overlay").c_str(), 0700);
  ASSERT_EQ(no.exit_code, 0) << no.output;
  EXPECT_NE(no.output.find("overlay: mkdir"), std::string::npos) << no.output;
  EXPECT_NE(no.output.find("Permission denied"), std::string::npos) << no.output;
}

// The overlay's unmount, as the command exits, must not sync the whole file
// system the workspace is on (docs/validation.md): it is mounted volatile.
TEST_F(WorkspaceOverlayTest, TheOverlayIsVolatileSoItsUnmountSyncsNothing) {
  CommandOutput out = RunCommand("awk -v ws=\"$PWD\" '$5 == ws && / - overlay / {print $NF}' /proc/self/mountinfo");
  SKIP_WITHOUT_OVERLAY(out);
  ASSERT_EQ(out.exit_code, 0) << out.output;
  EXPECT_NE(out.output.find("userxattr"), std::string::npos) << out.output;
  EXPECT_NE(out.output.find("volatile"), std::string::npos) << out.output;
}

// The worker's filter lets mount and unshare through, for the overlay; what
// it starts without one (a search's rg, a command once the kernel refused
// the overlay) must not keep that leave.
TEST_F(WorkspaceOverlayTest, WhatTheWorkerStartsWithoutTheOverlayCannotMountEither) {
  const std::string script = "unshare -Ur true 2>/dev/null && echo UNSHARED; echo done";
  plain_ = "bare";
  CommandOutput bare = RunCommand(script);
  if (bare.exit_code == 71) GTEST_SKIP() << "no usable bubblewrap here: " << bare.output;
  ASSERT_EQ(bare.exit_code, 0) << bare.output;
  if (bare.output != "UNSHARED\ndone\n") GTEST_SKIP() << "no user namespaces inside the sandbox here";
  plain_ = "deny";
  RemoveTree(ws_ + "/.odin/overlay/ex_test-1");  // the helper plans one either way
  CommandOutput denied = RunCommand(script);
  ASSERT_EQ(denied.exit_code, 0) << denied.output;
  EXPECT_EQ(denied.output, "done\n");
}

// A writable worker makes the next command's namespaces ahead of it; the
// command that joins them sees and writes exactly what one that made its
// own would, holds none of their fds, and its directories go by its id.
TEST_F(WorkspaceOverlayTest, ACommandJoiningAPreparedOverlayIsConfinedTheSame) {
  prepared_ = true;
  CommandOutput out = RunCommand(
      "echo B >> a.txt && echo n > new.txt && rm gone.txt; "
      "ls -A .odin | wc -l; wc -c < secret.env; ls -A /run/odin-overlay | wc -l; "
      "umount \"$PWD\" 2>/dev/null && echo UMOUNTED; unshare -Ur true 2>/dev/null && echo UNSHARED; "
      "for f in /proc/self/fd/*; do readlink $f; done | grep -c 'user:\\|mnt:'; "
      "awk -v ws=\"$PWD\" '$5 == ws && / - overlay / {print \"volatile:\" index($NF, \"volatile\")}' "
      "/proc/self/mountinfo | sed 's/:[1-9][0-9]*/:yes/'; "
      "grep CapEff /proc/self/status; id -u");
  SKIP_WITHOUT_OVERLAY(out);
  ASSERT_EQ(out.exit_code, 0) << out.output;
  EXPECT_EQ(out.output, "0\n0\n0\n0\nvolatile:yes\nCapEff:\t0000000000000000\n" + std::to_string(getuid()) + "\n");
  EXPECT_EQ(Read(ws_ + "/a.txt"), "a\n");
  EXPECT_FALSE(PathExists(ws_ + "/new.txt"));
  EXPECT_TRUE(PathExists(ws_ + "/gone.txt"));
  std::string upper = ws_ + "/.odin/overlay/ex_test-1/u";
  EXPECT_EQ(Read(upper + "/a.txt"), "a\nB\n");
  EXPECT_EQ(Read(upper + "/new.txt"), "n\n");
  // Claimed: nothing is left under the name it was made with.
  for (const auto& e : std::filesystem::directory_iterator(ws_ + "/.odin/overlay")) {
    EXPECT_EQ(e.path().filename().string().rfind("next-", 0), std::string::npos) << e.path();
  }
}

// A file bound again on top (git's config here) that is replaced between
// preparing and the command must not reach the command as it was: the
// claim fails, and the worker makes the command an overlay of its own.
TEST_F(WorkspaceOverlayTest, APreparedOverlayIsNotUsedOnceABoundFileWasReplaced) {
  ASSERT_TRUE(MakeDirs(ws_ + "/.git").ok());
  Write(ws_ + "/.git/config", "[core]\n");
  CommandOutput out = CatGitConfigReplacingMeanwhile(ws_ + "/.git/config");
  SKIP_WITHOUT_OVERLAY(out);
  EXPECT_THE_CLAIM_FAILED(out);
}

// A bound file that is a symlink (a repository may make .git/config one):
// mounting follows it, so the prepared overlay holds its target, and a
// target replaced before the command fails the claim as the file would.
TEST_F(WorkspaceOverlayTest, APreparedOverlayIsNotUsedOnceABoundSymlinksTargetWasReplaced) {
  ASSERT_TRUE(MakeDirs(ws_ + "/.git").ok());
  Write(ws_ + "/.git/config.real", "[core]\n");
  ASSERT_EQ(symlink("config.real", (ws_ + "/.git/config").c_str()), 0);
  CommandOutput out = CatGitConfigReplacingMeanwhile(ws_ + "/.git/config.real");
  SKIP_WITHOUT_OVERLAY(out);
  EXPECT_THE_CLAIM_FAILED(out);
}

// Mounting again what the sandbox masks looks up the directories above
// it, so the prepared overlay holds them as they were: one replaced before
// the command (a command before it ran `rm -rf sub; mkdir sub`, which
// landed meanwhile) fails the claim too, rather than show the old one.
TEST_F(WorkspaceOverlayTest, APreparedOverlayIsNotUsedOnceADirectoryAboveAMaskWasReplaced) {
  ASSERT_TRUE(MakeDirs(ws_ + "/sub").ok());
  Write(ws_ + "/sub/secret.env", "TOKEN=2\n");
  Write(ws_ + "/sub/old.txt", "old\n");
  prepared_ = true;
  wait_ = true;
  std::thread command_before([&] {
    for (int i = 0; i < 1000 && !PathExists(ws_ + "/ready"); ++i) usleep(10000);
    rename((ws_ + "/sub").c_str(), (ws_ + "/sub.was").c_str());
    ASSERT_TRUE(MakeDirs(ws_ + "/sub").ok());
    Write(ws_ + "/sub/secret.env", "TOKEN=3\n");
    Write(ws_ + "/sub/new.txt", "new\n");
    Write(ws_ + "/go", "");
  });
  CommandOutput out = RunCommand("ls sub", true, {"--mask", ws_ + "/sub/secret.env"});
  command_before.join();
  SKIP_WITHOUT_OVERLAY(out);
  EXPECT_THE_CLAIM_FAILED(out);
}

// A masked path not there when the overlay was prepared has no mask in it:
// made since, it would show. Its absence is pinned like a file.
TEST_F(WorkspaceOverlayTest, APreparedOverlayIsNotUsedOnceAMaskedPathThatWasAbsentWasMade) {
  prepared_ = true;
  wait_ = true;
  std::thread command_before([&] {
    for (int i = 0; i < 1000 && !PathExists(ws_ + "/ready"); ++i) usleep(10000);
    Write(ws_ + "/late.env", "TOKEN=4\n");
    Write(ws_ + "/go", "");
  });
  CommandOutput out = RunCommand("cat late.env", true, {"--mask", ws_ + "/late.env"});
  command_before.join();
  SKIP_WITHOUT_OVERLAY(out);
  EXPECT_THE_CLAIM_FAILED(out);
  EXPECT_EQ(out.output.find("TOKEN=4"), std::string::npos) << out.output;
}

TEST_F(WorkspaceOverlayTest, APreparedOverlayNeverUsedLeavesNothing) {
  prepared_ = true;
  CommandOutput out = RunCommand("unclaimed");
  SKIP_WITHOUT_OVERLAY(out);
  ASSERT_EQ(out.exit_code, 0) << out.output;
  EXPECT_TRUE(std::filesystem::is_empty(ws_ + "/.odin/overlay"))
      << std::filesystem::directory_iterator(ws_ + "/.odin/overlay")->path();
}

// What a killed worker left (an overlay prepared and never used, a probe
// cut short) goes at the next sweep; what a live maker holds, a command's
// directories (its work, not yet applied) and what a symlink points at
// stay.
TEST_F(WorkspaceOverlayTest, TheSweepRemovesOnlyWhatNoLiveMakerHolds) {
  const std::string root = ws_ + "/.odin/overlay";
  for (const char* id : {"next-00000000000000aa", "probe-00000000000000bb", "next-00000000000000cc", "ex_test-9"}) {
    ASSERT_TRUE(MakeDirs(root + "/" + id + "/u").ok());
    ASSERT_TRUE(MakeDirs(root + "/" + id + "/w/work").ok());
    Write(root + "/" + id + "/u/f.txt", "f\n");
    ASSERT_EQ(chmod((root + "/" + id + "/w/work").c_str(), 0), 0);  // as the overlay leaves it
  }
  ASSERT_TRUE(MakeDirs(root_ + "/outside").ok());
  Write(root_ + "/outside/keep.txt", "keep\n");
  ASSERT_EQ(symlink((root_ + "/outside").c_str(), (root + "/next-00000000000000dd").c_str()), 0);
  int held = open((root + "/next-00000000000000cc").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(held, 0);
  ASSERT_EQ(flock(held, LOCK_SH), 0);  // its maker is alive

  EXPECT_EQ(SweepWorkspaceOverlayDirs(root), 2);
  close(held);
  EXPECT_FALSE(PathExists(root + "/next-00000000000000aa"));
  EXPECT_FALSE(PathExists(root + "/probe-00000000000000bb"));
  EXPECT_EQ(Read(root + "/next-00000000000000cc/u/f.txt"), "f\n");
  EXPECT_EQ(Read(root + "/ex_test-9/u/f.txt"), "f\n");
  EXPECT_EQ(Read(root_ + "/outside/keep.txt"), "keep\n");
  // Once its maker is gone, so is it.
  EXPECT_EQ(SweepWorkspaceOverlayDirs(root), 1);
  EXPECT_FALSE(PathExists(root + "/next-00000000000000cc"));
}

// A host agent killed outright leaves its overlay root in $TMPDIR: the
// next agent removes the ones no live agent holds, older than a minute,
// and nothing else.
TEST_F(WorkspaceOverlayTest, AKilledHostAgentsOverlayRootIsSweptByTheNext) {
  const std::string tmp = root_ + "/tmp";
  auto make = [&](const std::string& name, bool old) {
    ASSERT_TRUE(MakeDirs(tmp + "/" + name + "/ex_1/w/work").ok());
    Write(tmp + "/" + name + "/ex_1/u.txt", "u\n");
    ASSERT_EQ(chmod((tmp + "/" + name + "/ex_1/w/work").c_str(), 0), 0);  // as the overlay leaves it
    timeval then[2] = {{time(nullptr) - (old ? 3600 : 0), 0}, {time(nullptr) - (old ? 3600 : 0), 0}};
    ASSERT_EQ(utimes((tmp + "/" + name).c_str(), then), 0);
  };
  make("odin-host-overlays-dead", true);
  make("odin-host-overlays-live", true);
  make("odin-host-overlays-new", false);
  make("someone-elses", true);
  int held = open((tmp + "/odin-host-overlays-live").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(held, 0);
  ASSERT_EQ(flock(held, LOCK_SH), 0);  // its agent is alive
  EXPECT_EQ(SweepUnheldDirs(tmp, "odin-host-overlays-"), 1);
  close(held);
  EXPECT_FALSE(PathExists(tmp + "/odin-host-overlays-dead"));
  EXPECT_EQ(Read(tmp + "/odin-host-overlays-live/ex_1/u.txt"), "u\n");
  EXPECT_EQ(Read(tmp + "/odin-host-overlays-new/ex_1/u.txt"), "u\n");
  EXPECT_EQ(Read(tmp + "/someone-elses/ex_1/u.txt"), "u\n");
}

// Security review 3, finding 5: a planted ".odin/overlay/next-*/w ->
// /some/dir" made the sweep chmod /some/dir and every directory below it
// to 0700 before removing. Now nothing below the swept directory is
// followed: the link goes, what it pointed at keeps its modes and files.
TEST_F(WorkspaceOverlayTest, Finding5TheSweepNeverChmodsOrRemovesThroughASymlinkBelowIt) {
  const std::string root = ws_ + "/.odin/overlay";
  const std::string victim = root_ + "/victim";
  ASSERT_TRUE(MakeDirs(victim + "/deep").ok());
  Write(victim + "/deep/keep.txt", "keep\n");
  ASSERT_EQ(chmod(victim.c_str(), 0755), 0);
  ASSERT_EQ(chmod((victim + "/deep").c_str(), 0751), 0);
  ASSERT_TRUE(MakeDirs(root + "/next-00000000000000ee").ok());
  ASSERT_EQ(symlink(victim.c_str(), (root + "/next-00000000000000ee/w").c_str()), 0);
  ASSERT_TRUE(MakeDirs(root + "/next-00000000000000ef/w").ok());
  ASSERT_EQ(symlink(victim.c_str(), (root + "/next-00000000000000ef/w/work").c_str()), 0);
  EXPECT_EQ(SweepWorkspaceOverlayDirs(root), 2);
  EXPECT_FALSE(PathExists(root + "/next-00000000000000ee"));
  EXPECT_FALSE(PathExists(root + "/next-00000000000000ef"));
  struct stat st;
  ASSERT_EQ(stat(victim.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0755u);
  ASSERT_EQ(stat((victim + "/deep").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0751u);
  EXPECT_EQ(Read(victim + "/deep/keep.txt"), "keep\n");
}

// A worker's prepared overlay is locked from the moment it is made: a
// sweep (another session starting) while it waits for its command leaves
// it, and the command runs in it.
TEST_F(WorkspaceOverlayTest, AnOverlayPreparedByALiveWorkerIsNotSwept) {
  prepared_ = true;
  wait_ = true;
  int swept = -1;
  bool was_there = false;
  std::thread sweeper([&] {
    for (int i = 0; i < 1000 && !PathExists(ws_ + "/ready"); ++i) usleep(10000);
    swept = SweepWorkspaceOverlayDirs(ws_ + "/.odin/overlay");
    for (const auto& e : std::filesystem::directory_iterator(ws_ + "/.odin/overlay")) {
      was_there = was_there || e.path().filename().string().starts_with("next-");
    }
    Write(ws_ + "/go", "");
  });
  CommandOutput out = RunCommand("echo n > new.txt");
  sweeper.join();
  SKIP_WITHOUT_OVERLAY(out);
  ASSERT_EQ(out.exit_code, 0) << out.output;
  EXPECT_EQ(swept, 0);
  EXPECT_TRUE(was_there);
  EXPECT_EQ(Read(ws_ + "/.odin/overlay/ex_test-1/u/new.txt"), "n\n");
}

// A command that makes its overlay as it starts (no prepared one) holds
// its directory from the moment it is made: a resume, looking for what a
// crash left, does not take a live command's writes for one's.
TEST_F(WorkspaceOverlayTest, ACommandsOwnDirectoryIsLockedWhileItsWorkerLives) {
  wait_ = true;
  bool locked_by_us = true;
  std::thread resume([&] {
    for (int i = 0; i < 1000 && !PathExists(ws_ + "/ready"); ++i) usleep(10000);
    locked_by_us = LockOverlayDir(ws_ + "/.odin/overlay/ex_test-1", /*exclusive=*/true).ok();
    Write(ws_ + "/go", "");
  });
  CommandOutput out = RunCommand("echo n > new.txt");
  resume.join();
  SKIP_WITHOUT_OVERLAY(out);
  ASSERT_EQ(out.exit_code, 0) << out.output;
  EXPECT_FALSE(locked_by_us) << "a live worker's command directory could be locked exclusively";
  EXPECT_EQ(Read(ws_ + "/.odin/overlay/ex_test-1/u/new.txt"), "n\n");
  // Its worker gone, it is free.
  EXPECT_TRUE(LockOverlayDir(ws_ + "/.odin/overlay/ex_test-1", /*exclusive=*/true).ok());
}

TEST_F(WorkspaceOverlayTest, WithoutOverlayRootTheWorkerIsToldNothing) {
  CommandOutput out = RunCommand("true", /*with_overlay=*/false);
  if (out.exit_code == 71) GTEST_SKIP() << "no usable bubblewrap here: " << out.output;
  EXPECT_EQ(out.exit_code, 91) << out.output;
}

TEST_F(WorkspaceOverlayTest, TheReadOnlyViewShowsTheWorkspaceAndNoCommandCanWriteIt) {
  view_ = true;
  CommandOutput out = RunCommand(
      "cat a.txt; echo b > a.txt || echo refused-write; touch new.txt || echo refused-create; "
      "rm gone.txt || echo refused-remove; mkdir d || echo refused-mkdir; "
      "printf 'secret[%s]\\n' \"$(cat secret.env)\"; echo odin: $(ls -A .odin | wc -l); "
      "echo layers: $(ls -A /run/odin-overlay | wc -l); "
      "mount -o remount,rw . 2>/dev/null || echo refused-remount; "
      "umount . 2>/dev/null || echo refused-umount; unshare -rm true 2>/dev/null || echo refused-unshare; "
      "chmod 0666 secret.env 2>/dev/null || echo refused-chmod-mask; "
      "chmod 0666 /dev/null 2>/dev/null || echo refused-chmod-devnull");
  SKIP_WITHOUT_OVERLAY(out);
  ASSERT_EQ(out.exit_code, 0) << out.output;
  for (const char* line :
       {"a\n", "refused-write", "refused-create", "refused-remove", "refused-mkdir", "secret[]", "odin: 0", "layers: 0",
        "refused-remount", "refused-umount", "refused-unshare", "refused-chmod-mask", "refused-chmod-devnull"}) {
    EXPECT_NE(out.output.find(line), std::string::npos) << line << " in:\n" << out.output;
  }
  EXPECT_NE(out.output.find("Read-only file system"), std::string::npos) << out.output;
  EXPECT_EQ(Read(ws_ + "/a.txt"), "a\n");
  EXPECT_TRUE(PathExists(ws_ + "/gone.txt"));
  EXPECT_FALSE(PathExists(ws_ + "/new.txt"));
  EXPECT_FALSE(PathExists(ws_ + "/d"));
  // Nothing made for it in the overlays' directory: no upper, no work.
  EXPECT_EQ(
      std::distance(std::filesystem::directory_iterator(ws_ + "/.odin/overlay"), std::filesystem::directory_iterator()),
      0);
}

TEST_F(WorkspaceOverlayTest, TheReadOnlyViewShowsWhatChangedAfterItWasMade) {
  // A bind, not a copy: unlike an overlay, one view serves every command.
  CommandOutput out = RunInViewReplacingMeanwhile("cat a.txt later.txt", "a.txt", "changed\n");
  SKIP_WITHOUT_OVERLAY(out);
  ASSERT_EQ(out.exit_code, 0) << out.output;
  EXPECT_EQ(out.output, "changed\nlater\n");
}

TEST_F(WorkspaceOverlayTest, AReadOnlyViewWhoseMaskedFileWasReplacedIsMadeAgain) {
  // A mask sits on the file itself: replaced, the kernel takes the mask
  // away with it, so the view is stale and made again.
  CommandOutput out =
      RunInViewReplacingMeanwhile("printf 'secret[%s]\\n' \"$(cat secret.env)\"", "secret.env", "TOKEN=2\n");
  SKIP_WITHOUT_OVERLAY(out);
  ASSERT_EQ(out.exit_code, 0) << out.output;
  EXPECT_EQ(out.output, "stale\nsecret[]\n");
}

TEST(WorkspaceOverlayPlanTest, TheReadOnlyViewIsOfferedOnlyWhereOdinsStateIsTheOneMaskInTheWorkspace) {
  EXPECT_TRUE(ReadOnlyViewKeepsMasks("/ws", "rw /ws/.git\nro /ws/.git/config\nmask /ws/.odin\n"));
  EXPECT_TRUE(ReadOnlyViewKeepsMasks("/ws", "mask /ws/.odin\nmask /home/u/.cargo/credentials.toml\n"));
  EXPECT_FALSE(ReadOnlyViewKeepsMasks("/ws", "mask /ws/.odin\nmask /ws/secrets\n"));
  EXPECT_FALSE(ReadOnlyViewKeepsMasks("/ws", "mask /ws/sub/.odin\n"));
}

TEST(WorkspaceOverlayPlanTest, RefusesAnIdThatCouldNameAnotherPath) {
  for (const char* id : {"", "../x", "a/b", "a,lowerdir=/", "a b"}) {
    EXPECT_FALSE(PlanWorkspaceOverlay("/ws", id, "").ok()) << id;
  }
}

TEST(WorkspaceOverlayPlanTest, TheMountListHoldsOnlyPathsInsideTheWorkspace) {
  EXPECT_EQ(OverlayMountList("/ws", {"/ws/.git", "/run/sock"}, {"/ws/.git/config", "/usr/lib"},
                             {"/ws/.odin", "/etc/shadow", "/ws"}, {"/root", "/ws/secrets"}),
            "rw /ws/.git\nro /ws/.git/config\nmask /ws/.odin\nmask /ws/secrets\n");
}

TEST(NoMountFilterTest, DeniesNamespacesAndMounts) {
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (InstallNoMountFilter() != 0) _exit(10);
    if (unshare(CLONE_NEWUSER) == 0 || errno != EPERM) _exit(11);
    if (unshare(CLONE_NEWNS) == 0 || errno != EPERM) _exit(12);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace odin
