#include "sandbox/bwrap_args.h"

#include <algorithm>

#include "base/file_util.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace odin {
namespace {

using ::testing::ElementsAre;

// Returns true iff args holds the three tokens [flag, a, b] in a row.
bool HasTriple(const std::vector<std::string>& args, const std::string& flag, const std::string& a,
               const std::string& b) {
  for (size_t i = 0; i + 2 < args.size(); ++i) {
    if (args[i] == flag && args[i + 1] == a && args[i + 2] == b) return true;
  }
  return false;
}

size_t IndexOf(const std::vector<std::string>& args, const std::string& token) {
  return static_cast<size_t>(std::find(args.begin(), args.end(), token) - args.begin());
}

SandboxOptions Options() {
  SandboxOptions o;
  o.workspace = "/tmp/ws";
  o.masked_paths = {"/usr/share"};  // a directory that exists: the state directory's stand-in
  o.readonly_paths = {"/tmp/ws/.git/config"};
  o.socket_path = "/tmp/odin-sock/1.sock";
  o.writable_paths = {"/tmp/ws/.git"};
  o.program = {"/opt/odin/odin-worker", "--connect", "ipc:///tmp/odin-sock/1.sock"};
  return o;
}

BwrapInvocation Inv(bool privileged = true) { return {"/usr/bin/bwrap", 5, 6, {7, 8}, privileged}; }

// Index of the triple [flag, a, b], or args.size().
size_t IndexOfTriple(const std::vector<std::string>& args, const std::string& flag, const std::string& a,
                     const std::string& b) {
  for (size_t i = 0; i + 2 < args.size(); ++i) {
    if (args[i] == flag && args[i + 1] == a && args[i + 2] == b) return i;
  }
  return args.size();
}

// An isolated session's workspace is a view inside Odin's state, which is
// masked: the mask comes first, the view is bound into it, and the mask is
// made read-only only after (else it would cover the view, or refuse the
// bind's mount point).
TEST(BwrapArgsTest, AMaskAboveTheWorkspaceComesBeforeItsBind) {
  SandboxOptions o = Options();
  o.masked_paths = {"/tmp"};
  auto a = BuildBwrapArgs(o, Inv());
  size_t mask = IndexOfTriple(a, "0555", "--tmpfs", "/tmp");
  size_t ws = IndexOfTriple(a, "--bind", "/tmp/ws", "/tmp/ws");
  ASSERT_LT(mask, a.size());
  ASSERT_LT(ws, a.size());
  EXPECT_LT(mask, ws);
  size_t ro = ws;
  while (ro < a.size() && !(a[ro] == "--remount-ro" && ro + 1 < a.size() && a[ro + 1] == "/tmp")) ++ro;
  EXPECT_LT(ro, a.size()) << "the mask is never made read-only";
  EXPECT_EQ(std::count(a.begin(), a.end(), "/tmp") - std::count(a.begin(), a.begin() + 1, "/tmp"), 3)
      << "the mask is made twice (the private /tmp, the mask and its remount)";
}

TEST(BwrapArgsTest, RootReadOnlyWorkspaceWritableProtectedPathsReadOnlyStateMasked) {
  auto a = BuildBwrapArgs(Options(), Inv());
  EXPECT_EQ(a[0], "/usr/bin/bwrap");
  EXPECT_TRUE(HasTriple(a, "--ro-bind", "/", "/"));
  size_t tmp = IndexOfTriple(a, "--tmpfs", "/tmp", "--tmpfs");
  size_t ws = IndexOfTriple(a, "--bind", "/tmp/ws", "/tmp/ws");
  size_t git = IndexOfTriple(a, "--bind", "/tmp/ws/.git", "/tmp/ws/.git");
  size_t config = IndexOfTriple(a, "--ro-bind-try", "/tmp/ws/.git/config", "/tmp/ws/.git/config");
  size_t socket = IndexOfTriple(a, "--ro-bind", "/tmp/odin-sock/1.sock", "/tmp/odin-sock/1.sock");
  size_t mask = IndexOfTriple(a, "--tmpfs", "/usr/share", "--remount-ro");
  for (size_t i : {tmp, ws, git, config, socket, mask}) ASSERT_LT(i, a.size());
  // Later mounts win: the workspace over the private /tmp, .git bound onto
  // itself inside it, its control files read-only on top, the masks last
  // (empty and read-only).
  EXPECT_LT(tmp, ws);
  EXPECT_LT(ws, git);
  EXPECT_LT(git, config);
  EXPECT_LT(config, mask);
  EXPECT_EQ(a[mask - 2], "--perms");
  EXPECT_EQ(a[mask - 1], "0555");
  // The worker's socket is read-only (connect(2) works on it, nothing else),
  // alone in a read-only directory of its own (security review 3, finding
  // 9: a command could unlink or replace it).
  EXPECT_FALSE(HasTriple(a, "--bind", "/tmp/odin-sock/1.sock", "/tmp/odin-sock/1.sock"));
  size_t dir = IndexOfTriple(a, "--perms", "0555", "--tmpfs");
  ASSERT_LT(dir, a.size());
  EXPECT_EQ(a[dir + 3], "/tmp/odin-sock");
  EXPECT_LT(dir, socket);
  EXPECT_LT(tmp, dir);
  EXPECT_TRUE(HasTriple(a, "--ro-bind", "/tmp/odin-sock/1.sock", "/tmp/odin-sock/1.sock"));
  EXPECT_LT(socket, IndexOfTriple(a, "--remount-ro", "/tmp/odin-sock", a[socket + 3]));
}

TEST(BwrapArgsTest, ANewUserNamespaceWithoutCapabilitiesAndTheKernelsKnobsReadOnly) {
  auto a = BuildBwrapArgs(Options(), Inv(/*privileged=*/true));
  EXPECT_LT(IndexOf(a, "--unshare-user"), a.size());
  EXPECT_TRUE(HasTriple(a, "--cap-drop", "ALL", "--die-with-parent"));
  EXPECT_TRUE(HasTriple(a, "--ro-bind", "/proc/sys", "/proc/sys"));
  EXPECT_TRUE(HasTriple(a, "--ro-bind-try", "/proc/sysrq-trigger", "/proc/sysrq-trigger"));
  EXPECT_LT(IndexOf(a, "--proc"), IndexOf(a, "/proc/sys"));  // over the fresh /proc
  // Run by another user, bubblewrap gives the sandbox no capability itself.
  auto unprivileged = BuildBwrapArgs(Options(), Inv(/*privileged=*/false));
  EXPECT_LT(IndexOf(unprivileged, "--unshare-user"), unprivileged.size());
  EXPECT_EQ(IndexOf(unprivileged, "--cap-drop"), unprivileged.size());
}

TEST(BwrapArgsTest, BinariesStayVisibleUnderPrivateTmp) {
  SandboxOptions o = Options();
  o.program[0] = "/tmp/build/bin/odin-worker";
  auto a = BuildBwrapArgs(o, Inv());
  EXPECT_TRUE(HasTriple(a, "--ro-bind", "/tmp/build/bin", "/tmp/build/bin"));
  EXPECT_LT(IndexOf(a, "--tmpfs"), IndexOf(a, "/tmp/build/bin"));
}

TEST(BwrapArgsTest, ReadOnlyWorkspacePolicy) {
  SandboxOptions o = Options();
  o.workspace_readonly = true;
  auto a = BuildBwrapArgs(o, Inv());
  EXPECT_TRUE(HasTriple(a, "--ro-bind", "/tmp/ws", "/tmp/ws"));
  EXPECT_FALSE(HasTriple(a, "--bind", "/tmp/ws", "/tmp/ws"));
}

TEST(BwrapArgsTest, IsolatesNetworkPidsAndDiesWithParent) {
  auto a = BuildBwrapArgs(Options(), Inv());
  for (const char* flag :
       {"--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--die-with-parent", "--new-session"}) {
    EXPECT_LT(IndexOf(a, flag), a.size()) << flag;
  }
  EXPECT_TRUE(HasTriple(a, "--proc", "/proc", "--tmpfs"));
}

// No stage of Odin's own inside: bubblewrap reports, waits for the launcher,
// loads the exported filters and execs the program itself.
TEST(BwrapArgsTest, BubblewrapReportsWaitsLoadsTheFiltersAndRunsTheProgram) {
  auto a = BuildBwrapArgs(Options(), Inv());
  size_t sep = IndexOf(a, "--");
  ASSERT_LT(sep, a.size());
  std::vector<std::string> tail(a.begin() + static_cast<long>(sep) + 1, a.end());
  EXPECT_THAT(tail, ElementsAre("/opt/odin/odin-worker", "--connect", "ipc:///tmp/odin-sock/1.sock"));
  EXPECT_TRUE(HasTriple(a, "--setenv", "ODIN_SANDBOX", "bwrap"));
  std::vector<std::string> head(a.begin(), a.begin() + static_cast<long>(sep));
  for (const auto& [flag, fd] : std::vector<std::pair<std::string, std::string>>{
           {"--json-status-fd", "5"}, {"--block-fd", "6"}, {"--add-seccomp-fd", "7"}}) {
    size_t at = IndexOf(head, flag);
    ASSERT_LT(at + 1, head.size()) << flag;
    EXPECT_EQ(head[at + 1], fd) << flag;
  }
  // Both filters, in order.
  EXPECT_EQ(std::count(head.begin(), head.end(), "--add-seccomp-fd"), 2);
  EXPECT_EQ(head[IndexOf(head, "8") - 1], "--add-seccomp-fd");
  EXPECT_LT(IndexOf(head, "7"), IndexOf(head, "8"));
}

TEST(BwrapArgsTest, HiddenDirectoriesComeBeforeTheWorkspaceAndBinaries) {
  SandboxOptions o = Options();
  std::string home = *MakeTempDir("odin-home");
  o.hidden_paths = {home, "/", "/nonexistent-odin-dir"};
  auto a = BuildBwrapArgs(o, Inv());
  size_t hidden = IndexOf(a, home);
  ASSERT_LT(hidden, a.size());
  EXPECT_EQ(a[hidden - 1], "--tmpfs");
  EXPECT_LT(hidden, IndexOf(a, "/tmp/ws"));                  // the workspace is bound again after
  EXPECT_EQ(IndexOf(a, "/nonexistent-odin-dir"), a.size());  // only directories that exist
  EXPECT_FALSE(HasTriple(a, "--tmpfs", "/", "--bind"));
  RemoveTree(home);
}

TEST(BwrapArgsTest, HidingTmpOrRunAddsNoSecondTmpfs) {
  SandboxOptions o = Options();
  o.masked_paths.clear();
  o.hidden_paths = {"/run", "/tmp"};
  auto a = BuildBwrapArgs(o, Inv());
  for (const char* dir : {"/run", "/tmp"}) {
    int tmpfs = 0;
    for (size_t i = 0; i + 1 < a.size(); ++i) tmpfs += a[i] == "--tmpfs" && a[i + 1] == dir;
    EXPECT_EQ(tmpfs, 1) << dir;
  }
}

// --no-seccomp: the launcher exports no filter, and bubblewrap is given none.
TEST(BwrapArgsTest, WithoutFiltersBubblewrapLoadsNone) {
  BwrapInvocation inv = Inv();
  inv.seccomp_fds.clear();
  auto a = BuildBwrapArgs(Options(), inv);
  EXPECT_EQ(IndexOf(a, "--add-seccomp-fd"), a.size());
  EXPECT_EQ(IndexOf(a, "--seccomp"), a.size());
}

// The values given to flag, in order.
std::vector<std::string> ValuesOf(const std::vector<std::string>& args, const std::string& flag) {
  std::vector<std::string> out;
  for (size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == flag) out.push_back(args[i + 1]);
  }
  return out;
}

TEST(BwrapArgsTest, OnlyTheWorkspaceAndTheWritablePathsAreBoundWritable) {
  auto a = BuildBwrapArgs(Options(), Inv());
  EXPECT_THAT(ValuesOf(a, "--bind"), ElementsAre("/tmp/ws", "/tmp/ws/.git"));
  // A read-only policy's options carry no writable path: nothing is.
  SandboxOptions o = Options();
  o.workspace_readonly = true;
  o.writable_paths.clear();
  EXPECT_TRUE(ValuesOf(BuildBwrapArgs(o, Inv()), "--bind").empty());
}

TEST(BwrapArgsTest, TheNetworkNamespaceStaysWhenSocketsOfEveryFamilyAreAllowed) {
  // --network lifts the seccomp layer's socket rule only; inside bubblewrap
  // there is still no network to reach.
  SandboxOptions o = Options();
  o.network = true;
  auto a = BuildBwrapArgs(o, Inv());
  EXPECT_LT(IndexOf(a, "--unshare-net"), IndexOf(a, "--"));
}

TEST(BwrapArgsTest, OnlyAJoinedSharedNetworkReplacesTheSandboxsOwn) {
  SandboxOptions o = Options();
  o.join_net_fd = 7;  // given, not yet joined: a network of its own
  EXPECT_LT(IndexOf(BuildBwrapArgs(o, Inv()), "--unshare-net"), IndexOf(BuildBwrapArgs(o, Inv()), "--"));
  o.net_joined = true;
  auto a = BuildBwrapArgs(o, Inv());
  EXPECT_EQ(IndexOf(a, "--unshare-net"), a.size());
  EXPECT_LT(IndexOf(a, "--unshare-user"), a.size());  // the rest stays
}

TEST(BwrapArgsTest, TheHostsServiceSocketsAndKernelLeaksAreOutOfSight) {
  auto a = BuildBwrapArgs(Options(), Inv());
  EXPECT_TRUE(HasTriple(a, "--tmpfs", "/run", "--ro-bind"));
  for (const char* leak : {"/proc/kcore", "/proc/keys", "/proc/timer_list", "/proc/sched_debug"}) {
    if (PathExists(leak)) {
      EXPECT_TRUE(HasTriple(a, "--ro-bind", "/dev/null", leak)) << leak;
    }
  }
}

TEST(BwrapArgsTest, AMaskedFileShowsEmptyAfterTheBindsAndAMissingOneIsSkipped) {
  std::string dir = *MakeTempDir("odin-mask");
  ASSERT_TRUE(WriteFileAtomic(dir + "/credentials", "secret").ok());
  SandboxOptions o = Options();
  o.masked_paths = {dir + "/credentials", dir + "/absent"};
  o.readonly_paths.push_back(dir);
  auto a = BuildBwrapArgs(o, Inv());
  size_t mask = IndexOfTriple(a, "--ro-bind", "/dev/null", dir + "/credentials");
  ASSERT_LT(mask, a.size());
  EXPECT_LT(IndexOfTriple(a, "--ro-bind-try", dir, dir), mask);  // what it is in is bound first
  EXPECT_EQ(IndexOf(a, dir + "/absent"), a.size());
  RemoveTree(dir);
}

}  // namespace
}  // namespace odin
