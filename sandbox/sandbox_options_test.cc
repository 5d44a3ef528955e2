// odin-sandbox's command line: every flag lands in its field, the program's
// own arguments stay the program's, and bad input is an InvalidArgument
// naming it.

#include "sandbox/sandbox_options.h"

#include <algorithm>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace odin {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

StatusOr<SandboxOptions> Parse(std::vector<std::string> argv) {
  argv.insert(argv.begin(), "odin-sandbox");
  std::vector<char*> c;
  for (std::string& a : argv) c.push_back(a.data());
  return ParseSandboxOptions(static_cast<int>(c.size()), c.data());
}

TEST(SandboxOptionsTest, DefaultsAreTheStrictOnes) {
  StatusOr<SandboxOptions> o = Parse({"--workspace", "/w", "--", "true"});
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->workspace, "/w");
  EXPECT_FALSE(o->workspace_readonly);
  EXPECT_EQ(o->policy, SandboxPolicy::kAuto);
  EXPECT_TRUE(o->seccomp);
  EXPECT_FALSE(o->network);
  EXPECT_EQ(o->run_uid, -1);
  EXPECT_EQ(o->run_gid, -1);
  EXPECT_EQ(o->pids_max, 0u);
  EXPECT_EQ(o->memory_max_bytes, 0u);
  EXPECT_TRUE(o->cgroup_parent.empty());
  EXPECT_TRUE(o->pass_fds.empty());
  EXPECT_THAT(o->program, ElementsAre("true"));
}

TEST(SandboxOptionsTest, EveryFlagLandsInItsFieldAndRepeatedOnesAccumulate) {
  StatusOr<SandboxOptions> o = Parse({"--workspace",
                                      "/w",
                                      "--workspace-readonly",
                                      "--readonly",
                                      "/w/.git/config",
                                      "--readonly",
                                      "/s/1.sock",
                                      "--writable",
                                      "/w/.git",
                                      "--policy",
                                      "require",
                                      "--bwrap",
                                      "/opt/bwrap",
                                      "--no-seccomp",
                                      "--network",
                                      "--hide",
                                      "/home/u",
                                      "--hide",
                                      "/root",
                                      "--mask",
                                      "/w/.odin",
                                      "--user",
                                      "1000:100",
                                      "--pass-fd",
                                      "7",
                                      "--pass-fd",
                                      "8",
                                      "--pids-max",
                                      "64",
                                      "--memory-max",
                                      "1048576",
                                      "--cgroup-parent",
                                      "/sys/fs/cgroup/odin",
                                      "--",
                                      "/bin/worker",
                                      "--connect",
                                      "ipc:///s/1.sock"});
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_TRUE(o->workspace_readonly);
  EXPECT_THAT(o->readonly_paths, ElementsAre("/w/.git/config", "/s/1.sock"));
  EXPECT_THAT(o->writable_paths, ElementsAre("/w/.git"));
  EXPECT_EQ(o->policy, SandboxPolicy::kRequire);
  EXPECT_EQ(o->bwrap, "/opt/bwrap");
  EXPECT_FALSE(o->seccomp);
  EXPECT_TRUE(o->network);
  EXPECT_THAT(o->hidden_paths, ElementsAre("/home/u", "/root"));
  EXPECT_THAT(o->masked_paths, ElementsAre("/w/.odin"));
  EXPECT_EQ(o->run_uid, 1000);
  EXPECT_EQ(o->run_gid, 100);
  EXPECT_THAT(o->pass_fds, ElementsAre(7, 8));
  EXPECT_EQ(o->pids_max, 64u);
  EXPECT_EQ(o->memory_max_bytes, 1048576u);
  EXPECT_EQ(o->cgroup_parent, "/sys/fs/cgroup/odin");
  EXPECT_THAT(o->program, ElementsAre("/bin/worker", "--connect", "ipc:///s/1.sock"));
}

TEST(SandboxOptionsTest, TheProgramsOwnFlagsAreNotTakenForOdinSandboxs) {
  StatusOr<SandboxOptions> o =
      Parse({"--workspace", "/w", "--", "sh", "-c", "x", "--workspace", "/elsewhere", "--network", "--writable", "/"});
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->workspace, "/w");
  EXPECT_FALSE(o->network);
  EXPECT_TRUE(o->writable_paths.empty());
  EXPECT_THAT(o->program, ElementsAre("sh", "-c", "x", "--workspace", "/elsewhere", "--network", "--writable", "/"));
}

TEST(SandboxOptionsTest, BadInputIsAnInvalidArgumentNamingIt) {
  struct Case {
    std::vector<std::string> argv;
    std::string says;
  };
  for (const Case& c : std::vector<Case>{
           {{"--", "true"}, "--workspace"},
           {{"--workspace", "/w"}, "program"},
           {{"--workspace", "/w", "--policy", "sometimes", "--", "true"}, "sandbox policy 'sometimes'"},
           {{"--workspace", "/w", "--user", "1000", "--", "true"}, "--user 1000: expected UID:GID"},
           {{"--workspace", "/w", "--user", "a:b", "--", "true"}, "expected UID:GID"},
           {{"--workspace", "/w", "--user", "1000:100x", "--", "true"}, "expected UID:GID"},
           {{"--workspace", "/w", "--user", "-1:5", "--", "true"}, "expected UID:GID"},
           {{"--workspace", "/w", "--pids-max", "many", "--", "true"}, "--pids-max"},
           {{"--workspace", "/w", "--no-such-flag", "--", "true"}, "--no-such-flag"},
       }) {
    StatusOr<SandboxOptions> o = Parse(c.argv);
    ASSERT_FALSE(o.ok()) << c.says;
    EXPECT_EQ(o.status().code(), StatusCode::kInvalidArgument) << c.says;
    EXPECT_THAT(o.status().ToString(), HasSubstr(c.says));
  }
}

TEST(SandboxOptionsTest, PolicyNamesRoundTrip) {
  for (SandboxPolicy p :
       {SandboxPolicy::kAuto, SandboxPolicy::kRequire, SandboxPolicy::kFallback, SandboxPolicy::kOff}) {
    StatusOr<SandboxPolicy> back = ParseSandboxPolicy(SandboxPolicyName(p));
    ASSERT_TRUE(back.ok()) << SandboxPolicyName(p);
    EXPECT_EQ(*back, p);
  }
  EXPECT_EQ(ParseSandboxPolicy("Require").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseSandboxPolicy("").status().code(), StatusCode::kInvalidArgument);
}

TEST(SandboxOptionsTest, WhatOnlyRootMayReadIsHiddenByDefault) {
  const std::vector<std::string>& paths = DefaultRootHiddenPaths();
  for (const char* p : {"/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/sudoers.d", "/etc/ssh/ssh_host_*_key",
                        "/root", "/home", "/var/lib/docker", "/run"}) {
    EXPECT_NE(std::find(paths.begin(), paths.end(), p), paths.end()) << p;
  }
}

}  // namespace
}  // namespace odin
