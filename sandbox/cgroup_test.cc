#include "sandbox/cgroup.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/file_util.h"

namespace odin {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A fake cgroup v2 tree in a temporary directory: directories with the
// control files the logic reads. It cannot enforce the kernel's rules; the
// tests check what the logic decides and writes.
class FakeCgroupTree : public ::testing::Test {
 protected:
  void SetUp() override { root_ = *MakeTempDir("odin-cgroup"); }
  void TearDown() override { RemoveTree(root_); }
  void Group(const std::string& rel, const std::string& controllers, const std::string& subtree_control,
             const std::string& procs) {
    std::string dir = rel == "/" ? root_ : root_ + rel;
    ASSERT_TRUE(MakeDirs(dir).ok());
    ASSERT_TRUE(WriteFileAtomic(dir + "/cgroup.controllers", controllers + "\n").ok());
    ASSERT_TRUE(WriteFileAtomic(dir + "/cgroup.subtree_control", subtree_control + "\n").ok());
    ASSERT_TRUE(WriteFileAtomic(dir + "/cgroup.procs", procs).ok());
  }
  std::string Read(const std::string& rel) {
    StatusOr<std::string> s = ReadFileToString(root_ + rel);
    return s.ok() ? *s : "<absent>";
  }
  CgroupHost Host(const std::string& own, int64_t uid = 1000, pid_t pid = 4242) {
    return CgroupHost{root_, "0::" + own + "\n", pid, uid};
  }
  CgroupLimits Limits() { return CgroupLimits{1024, 256u << 20}; }

  std::string root_;
};

TEST_F(FakeCgroupTree, AloneInADelegatedGroupOdinMovesIntoALeafAndDelegates) {
  // A systemd service or scope with Delegate=yes: the group is ours, we are
  // its only process, its controllers are available but not enabled yet.
  Group("/", "cpu memory pids", "cpu memory pids", "1\n");
  Group("/user.slice/odin.scope", "memory pids", "", "4242\n");
  CgroupV2Plan plan = PlanCgroupV2(Host("/user.slice/odin.scope"), Limits());
  ASSERT_TRUE(plan.possible) << plan.reason;
  EXPECT_EQ(plan.parent, root_ + "/user.slice/odin.scope");
  EXPECT_EQ(plan.move_self_to, root_ + "/user.slice/odin.scope/odin-leaf-4242");
  EXPECT_TRUE(plan.enable);
  EXPECT_THAT(plan.controllers, ElementsAre("pids", "memory"));
  ASSERT_TRUE(ApplyCgroupV2Plan(plan, Host("/user.slice/odin.scope")).ok());
  // First out of the group (no internal processes), then the controllers on.
  EXPECT_EQ(Read("/user.slice/odin.scope/odin-leaf-4242/cgroup.procs"), "4242");
  EXPECT_EQ(Read("/user.slice/odin.scope/cgroup.subtree_control"), "+pids +memory");
}

TEST_F(FakeCgroupTree, ASandboxGroupGoesBelowThePreparedParentAndComesBack) {
  Group("/", "cpu memory pids", "cpu memory pids", "1\n");
  Group("/user.slice/odin.scope", "memory pids", "memory pids", "");
  Group("/user.slice/odin.scope/odin-leaf-4242", "memory pids", "", "4242\n5000\n");
  // The launcher (pid 5000) starts in the coordinator's leaf.
  CgroupHost launcher = Host("/user.slice/odin.scope/odin-leaf-4242", 1000, 5000);
  StatusOr<std::unique_ptr<SandboxCgroup>> g =
      SandboxCgroup::Enter(Limits(), root_ + "/user.slice/odin.scope", launcher);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ((*g)->description(), "cgroup v2");
  std::string dir = "/user.slice/odin.scope/odin-sandbox-5000";
  EXPECT_EQ(Read(dir + "/pids.max"), "1024");
  EXPECT_EQ(Read(dir + "/memory.max"), std::to_string(256u << 20));
  EXPECT_EQ(Read(dir + "/cgroup.procs"), "5000");
  (*g)->Leave();
  EXPECT_EQ(Read("/user.slice/odin.scope/odin-leaf-4242/cgroup.procs"), "5000");
}

TEST_F(FakeCgroupTree, AGroupSharedWithOtherProcessesCannotDelegateForAUser) {
  // A login session's scope: the user's shell is in it too.
  Group("/", "cpu memory pids", "cpu memory pids", "1\n");
  Group("/user.slice/user-1000.slice/session-3.scope", "memory pids", "", "900\n4242\n");
  CgroupV2Plan plan = PlanCgroupV2(Host("/user.slice/user-1000.slice/session-3.scope"), Limits());
  // Writable or not, shared it stays: the shell cannot be moved for us.
  EXPECT_FALSE(plan.possible);
  EXPECT_THAT(plan.reason, HasSubstr("systemd-run --user --scope -p Delegate=yes"));
  EXPECT_EQ(Read("/user.slice/user-1000.slice/session-3.scope/cgroup.subtree_control"), "\n");  // untouched
}

TEST_F(FakeCgroupTree, RootUsesAGroupOfItsOwnAtTheTopWhenItsGroupIsShared) {
  Group("/", "cpu memory pids", "cpu memory pids", "1\n");
  Group("/user.slice/user-0.slice/session-3.scope", "memory pids", "", "900\n4242\n");
  CgroupHost host = Host("/user.slice/user-0.slice/session-3.scope", /*uid=*/0);
  CgroupV2Plan plan = PlanCgroupV2(host, Limits());
  ASSERT_TRUE(plan.possible) << plan.reason;
  EXPECT_EQ(plan.parent, root_ + "/odin");
  EXPECT_EQ(plan.move_self_to, "");
  EXPECT_THAT(plan.description, HasSubstr("other process"));
  ASSERT_TRUE(ApplyCgroupV2Plan(plan, host).ok());
  EXPECT_TRUE(IsDirectory(root_ + "/odin"));
  EXPECT_EQ(Read("/odin/cgroup.subtree_control"), "+pids +memory");
}

TEST_F(FakeCgroupTree, ControllersNotDelegatedAreNamed) {
  Group("/", "cpu memory pids", "cpu", "1\n");
  Group("/system.slice/odin.service", "cpu", "", "4242\n");
  CgroupV2Plan plan = PlanCgroupV2(Host("/system.slice/odin.service"), Limits());
  EXPECT_FALSE(plan.possible);
  EXPECT_THAT(plan.reason, HasSubstr("has not been delegated pids, memory"));
}

TEST_F(FakeCgroupTree, TheRootGroupDelegatesAsItIs) {
  // A container whose namespace root is the whole hierarchy.
  Group("/", "memory pids", "memory pids", "1\n4242\n");
  CgroupV2Plan plan = PlanCgroupV2(Host("/"), Limits());
  ASSERT_TRUE(plan.possible) << plan.reason;
  EXPECT_EQ(plan.parent, root_);
  EXPECT_EQ(plan.move_self_to, "");
  EXPECT_FALSE(plan.enable);
}

TEST_F(FakeCgroupTree, OnlyTheLimitsAskedForAreNeeded) {
  Group("/", "memory pids", "memory pids", "1\n");
  Group("/svc", "pids", "", "4242\n");
  CgroupV2Plan plan = PlanCgroupV2(Host("/svc"), CgroupLimits{64, 0});
  ASSERT_TRUE(plan.possible) << plan.reason;
  EXPECT_THAT(plan.controllers, ElementsAre("pids"));
}

TEST_F(FakeCgroupTree, NoV2HierarchyIsSaid) {
  CgroupV2Plan plan = PlanCgroupV2(CgroupHost{root_ + "/none", "0::/\n", 1, 0}, Limits());
  EXPECT_FALSE(plan.possible);
  EXPECT_THAT(plan.reason, HasSubstr("no cgroup v2 hierarchy"));
}

TEST_F(FakeCgroupTree, CgroupV1GroupsAreMadeBelowTheLaunchersOwn) {
  ASSERT_TRUE(MakeDirs(root_ + "/pids/user/odin").ok());
  ASSERT_TRUE(MakeDirs(root_ + "/memory/user/odin").ok());
  CgroupHost host{root_, "12:pids:/user/odin\n9:memory:/user/odin\n0::/\n", 5000, 0};
  StatusOr<std::unique_ptr<SandboxCgroup>> g = SandboxCgroup::Enter(Limits(), "", host);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ((*g)->description(), "cgroup v1 (pids, memory)");
  EXPECT_EQ(Read("/pids/user/odin/odin-sandbox-5000/pids.max"), "1024");
  EXPECT_EQ(Read("/memory/user/odin/odin-sandbox-5000/memory.limit_in_bytes"), std::to_string(256u << 20));
  (*g)->Leave();
  EXPECT_EQ(Read("/pids/user/odin/cgroup.procs"), "5000");
}

TEST_F(FakeCgroupTree, GroupsOfLaunchersThatAreGoneAreRemovedByTheNextOne) {
  Group("/", "memory pids", "memory pids", "1\n");
  Group("/svc", "memory pids", "memory pids", "");
  // A killed launcher's group (its pid beyond pid_max: gone for sure), a
  // live one's (this test's own pid) and something else.
  ASSERT_TRUE(MakeDirs(root_ + "/svc/odin-sandbox-999999999").ok());
  std::string live = "/svc/odin-sandbox-" + std::to_string(getpid());
  ASSERT_TRUE(MakeDirs(root_ + live).ok());
  ASSERT_TRUE(MakeDirs(root_ + "/svc/other").ok());
  StatusOr<std::unique_ptr<SandboxCgroup>> g = SandboxCgroup::Enter(Limits(), root_ + "/svc", Host("/svc", 0, 5000));
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_FALSE(IsDirectory(root_ + "/svc/odin-sandbox-999999999"));
  EXPECT_TRUE(IsDirectory(root_ + live));
  EXPECT_TRUE(IsDirectory(root_ + "/svc/other"));
}

TEST_F(FakeCgroupTree, WithoutLimitsOrAV2GroupThereIsNoPlan) {
  Group("/", "memory pids", "memory pids", "1\n");
  CgroupV2Plan none = PlanCgroupV2(Host("/"), CgroupLimits{});
  EXPECT_FALSE(none.possible);
  EXPECT_THAT(none.reason, HasSubstr("no limits asked for"));
  // Only v1 lines in /proc/self/cgroup: this process is in no v2 group.
  CgroupV2Plan v1_only = PlanCgroupV2(CgroupHost{root_, "12:pids:/user\n", 4242, 0}, Limits());
  EXPECT_FALSE(v1_only.possible);
  EXPECT_THAT(v1_only.reason, HasSubstr("in no cgroup v2 group"));
}

TEST_F(FakeCgroupTree, ALimitThatCannotBeWrittenSaysItWasNotDelegated) {
  Group("/", "memory pids", "memory pids", "1\n");
  Group("/svc", "memory", "memory", "");
  // pids.max cannot be written there (here: a directory in its place).
  ASSERT_TRUE(MakeDirs(root_ + "/svc/odin-sandbox-5000/pids.max").ok());
  StatusOr<std::unique_ptr<SandboxCgroup>> g = SandboxCgroup::Enter(Limits(), root_ + "/svc", Host("/svc", 0, 5000));
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(g.status().message(), HasSubstr("pids not delegated here"));
}

TEST_F(FakeCgroupTree, AParentThatIsNotThereIsRefused) {
  Group("/", "memory pids", "memory pids", "1\n");
  StatusOr<std::unique_ptr<SandboxCgroup>> g =
      SandboxCgroup::Enter(Limits(), root_ + "/never-prepared", Host("/", 0, 5000));
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(g.status().message(), HasSubstr("is not there"));
}

TEST_F(FakeCgroupTree, CgroupV1WithoutThePidsControllerSaysSo) {
  ASSERT_TRUE(MakeDirs(root_ + "/memory/user").ok());
  CgroupHost host{root_, "9:memory:/user\n0::/\n", 5000, 0};
  StatusOr<std::unique_ptr<SandboxCgroup>> g = SandboxCgroup::Enter(Limits(), "", host);
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.status().message(), HasSubstr("no pids controller"));
  // Asked for memory alone, it makes the memory group only.
  g = SandboxCgroup::Enter(CgroupLimits{0, 1 << 20}, "", host);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ((*g)->description(), "cgroup v1 (memory)");
  EXPECT_EQ(Read("/memory/user/odin-sandbox-5000/memory.limit_in_bytes"), std::to_string(1 << 20));
}

TEST_F(FakeCgroupTree, CreateMovesNoProcessAddMovesTheOneGivenAndLeaveBringsNoOneBack) {
  ASSERT_TRUE(MakeDirs(root_ + "/pids/user/odin").ok());
  ASSERT_TRUE(MakeDirs(root_ + "/memory/user/odin").ok());
  CgroupHost host{root_, "12:pids:/user/odin\n9:memory:/user/odin\n0::/\n", 5000, 0};
  StatusOr<std::unique_ptr<SandboxCgroup>> g = SandboxCgroup::Create(Limits(), "", host);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(Read("/pids/user/odin/odin-sandbox-5000/pids.max"), "1024");
  EXPECT_EQ(Read("/pids/user/odin/odin-sandbox-5000/cgroup.procs"), "<absent>");
  ASSERT_TRUE((*g)->Add(7000).ok());  // bubblewrap, say
  EXPECT_EQ(Read("/pids/user/odin/odin-sandbox-5000/cgroup.procs"), "7000");
  EXPECT_EQ(Read("/memory/user/odin/odin-sandbox-5000/cgroup.procs"), "7000");
  (*g)->Leave();
  EXPECT_EQ(Read("/pids/user/odin/cgroup.procs"), "<absent>");  // the launcher never went in
}

}  // namespace
}  // namespace odin
