#include "sandbox/bwrap_args.h"

#include "base/file_util.h"

#include <algorithm>

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
  o.readonly_paths = {"/tmp/ws/.odin"};
  o.writable_paths = {"/tmp/odin-sock"};
  o.program = {"/opt/odin/odin-worker", "--id", "w1"};
  return o;
}

BwrapInvocation Inv() { return {"/usr/bin/bwrap", "/opt/odin/odin-sandbox", 5, 6}; }

TEST(BwrapArgsTest, RootReadOnlyWorkspaceWritableStateReadOnly) {
  auto a = BuildBwrapArgs(Options(), Inv());
  EXPECT_EQ(a[0], "/usr/bin/bwrap");
  EXPECT_TRUE(HasTriple(a, "--ro-bind", "/", "/"));
  EXPECT_TRUE(HasTriple(a, "--bind", "/tmp/ws", "/tmp/ws"));
  EXPECT_TRUE(HasTriple(a, "--ro-bind-try", "/tmp/ws/.odin", "/tmp/ws/.odin"));
  EXPECT_TRUE(HasTriple(a, "--bind", "/tmp/odin-sock", "/tmp/odin-sock"));
  // Later mounts win: .odin must be made read-only after the workspace bind,
  // and the workspace bound after the private /tmp.
  EXPECT_LT(IndexOf(a, "--tmpfs"), IndexOf(a, "--bind"));
  EXPECT_LT(IndexOf(a, "--bind"), IndexOf(a, "--ro-bind-try"));
}

TEST(BwrapArgsTest, BinariesStayVisibleUnderPrivateTmp) {
  SandboxOptions o = Options();
  o.program[0] = "/tmp/build/bin/odin-worker";
  BwrapInvocation inv = Inv();
  inv.self = "/tmp/build/bin/odin-sandbox";
  auto a = BuildBwrapArgs(o, inv);
  EXPECT_TRUE(HasTriple(a, "--ro-bind", "/tmp/build/bin", "/tmp/build/bin"));
  EXPECT_LT(IndexOf(a, "--tmpfs"), IndexOf(a, "/tmp/build/bin"));
  // Bound once, not twice.
  EXPECT_EQ(std::count(a.begin(), a.end(), "/tmp/build/bin"), 2);
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
  for (const char* flag : {"--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
                           "--die-with-parent", "--new-session"}) {
    EXPECT_LT(IndexOf(a, flag), a.size()) << flag;
  }
  EXPECT_TRUE(HasTriple(a, "--proc", "/proc", "--tmpfs"));
}

TEST(BwrapArgsTest, RunsInnerStageThenProgram) {
  auto a = BuildBwrapArgs(Options(), Inv());
  size_t sep = IndexOf(a, "--");
  ASSERT_LT(sep, a.size());
  std::vector<std::string> tail(a.begin() + static_cast<long>(sep) + 1, a.end());
  EXPECT_THAT(tail, ElementsAre("/opt/odin/odin-sandbox", "--inner", "--workspace", "/tmp/ws",
                                "--ready-fd", "5", "--stderr-fd", "6", "--description", "bwrap", "--policy",
                                "auto", "--", "/opt/odin/odin-worker", "--id", "w1"));
}

TEST(BwrapArgsTest, HiddenDirectoriesComeBeforeTheWorkspaceAndBinaries) {
  SandboxOptions o = Options();
  std::string home = *MakeTempDir("odin-home");
  o.hidden_paths = {home, "/", "/nonexistent-odin-dir"};
  auto a = BuildBwrapArgs(o, Inv());
  size_t hidden = IndexOf(a, home);
  ASSERT_LT(hidden, a.size());
  EXPECT_EQ(a[hidden - 1], "--tmpfs");
  EXPECT_LT(hidden, IndexOf(a, "/tmp/ws"));  // the workspace is bound again after
  EXPECT_EQ(IndexOf(a, "/nonexistent-odin-dir"), a.size());  // only directories that exist
  EXPECT_FALSE(HasTriple(a, "--tmpfs", "/", "--bind"));
  RemoveTree(home);
}

TEST(BwrapArgsTest, TheInnerStageHearsOfSeccompAndNetwork) {
  SandboxOptions o = Options();
  o.seccomp = false;
  o.network = true;
  auto a = BuildBwrapArgs(o, Inv());
  size_t sep = IndexOf(a, "--no-seccomp");
  ASSERT_LT(sep, a.size());
  EXPECT_LT(IndexOf(a, "--network"), a.size());
}

}  // namespace
}  // namespace odin
